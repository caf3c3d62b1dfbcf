'use strict'

// A Compactor's per-message counts: what the addon counted of each message object, kept while
// the message is unchanged (list-cache.js says which objects a call trusts and which it compares
// with their snapshots: every message for compact() and countTokens(), what was appended, the
// tail and a rotation of older ones for a step), so that a step below the threshold costs what
// was appended, not the whole history (issue 39). The list's format is re-checked only where
// entries are new.

const native = require('../addon/native.js')
const { callNative, checkedMessages } = require('../addon/validate.js')
const { formatOf, encodingOf } = require('../options/options.js')
const { ListCache } = require('./list-cache.js')

class MessageCounts {
  #options
  // Message object → { tape, tokens, bytes, signature, readAs } (bytes: -1 until
  // maxToolOutputBytes needs it).
  #cache = new ListCache()
  // The entries of the last list, and whether the Compactor tracked all its messages (mark map).
  #last = null
  #tracked = false

  constructor(options) {
    this.#options = options
  }

  // The cache entry of every message of `messages` that is unchanged since it was cached, and
  // new entries (counted now, snapshot taken) for the others; a non-object is never cached
  // (the addon reports it). `exact`: every message is compared with its snapshot; otherwise (a
  // step: shouldCompact, measure) only what list-cache.js re-checks.
  entries(messages, exact = true) {
    checkedMessages(messages)
    const n = messages.length
    const previousFormat = this.#cache.stored?.format
    const hadList = this.#last !== null
    const { entries, missing, unknown } = this.#cache.lookup(messages, exact)
    if (missing.length > 0) {
      // Counted first (the addon reports unreadable messages with their index), snapshots
      // after (store): nothing runs in between that could change a message.
      const read = callNative(
        () => native.countItemsJson(missing.map((i) => messages[i]), encodingOf(this.#options), formatOf(this.#options)),
        missing,
      )
      missing.forEach((i, j) => {
        entries[i] = { tape: null, tokens: read.counts[j], bytes: -1, signature: read.signatures[j], readAs: read.format }
      })
    }
    this.#cache.store(messages, entries, missing)
    // Entries trusted from the last list were read in its format; when the list's format is the
    // same, only the others need a look.
    const fresh = hadList && missing.length + unknown.length < n ? [...unknown, ...missing] : null
    entries.format = this.#readInListFormat(messages, entries, fresh, previousFormat)
    // #track needs to look only at the positions not trusted when the last list was tracked.
    // (A message's toJSON is called with its index; one whose result depends on it is not
    // supported, see addon/snapshot.js.)
    entries.untracked = hadList && this.#tracked ? unknown : null
    this.#last = entries
    this.#tracked = false
    return entries
  }

  // The messages are built by an adapter from its framework's messages, and only it holds them:
  // a step compares none it has seen (compact() and countTokens() still compare every one).
  builtByAdapter() {
    this.#cache = new ListCache({ recheck: false })
    this.#last = null
  }

  // The message objects of `list` were changed in place: not trusted, not cached.
  changed(list) {
    this.#cache.changed(list)
  }

  // #track saw every message of the list these entries are of.
  tracked(entries) {
    if (entries === this.#last) this.#tracked = true
  }

  // `fresh`: when not null, the only positions whose entries may not be in `previous` (the
  // format the last list was read in: its entries were checked then).
  #readInListFormat(messages, entries, fresh = null, previous = undefined) {
    let format = formatOf(this.#options)
    let first = -1
    if (format === undefined) {
      format = 'anthropic'
      for (let i = 0; i < entries.length && first < 0; i++) {
        const signature = entries[i].signature
        if (signature) {
          first = i
          format = signature
        }
      }
    }
    const only = format === previous ? fresh : null
    const count = only === null ? entries.length : only.length
    const stale = []
    for (let k = 0; k < count; k++) {
      const i = only === null ? k : only[k]
      const signature = entries[i].signature
      if (first >= 0 && i !== first && signature && signature !== format) {
        // Mixed: the stateless reading says so, naming the messages.
        callNative(() => native.countEachJson(messages, encodingOf(this.#options)))
      }
      if (entries[i].readAs !== format) stale.push(i)
    }
    if (stale.length > 0) {
      const read = callNative(
        () => native.countItemsJson(stale.map((i) => messages[i]), encodingOf(this.#options), format),
        stale,
      )
      stale.forEach((i, j) => {
        entries[i].tokens = read.counts[j]
        entries[i].readAs = format
        entries[i].bytes = -1
      })
    }
    return format
  }
}

module.exports = {
  MessageCounts,
}
