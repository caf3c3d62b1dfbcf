'use strict'

// A Compactor's per-message counts: what the addon counted of each message object, kept with a
// snapshot of what it read (addon/snapshot.js says when a cached count is still right), and what a
// call compares with its snapshot so that a step below the threshold costs what was appended,
// not the whole history (issue 39; docs/counting.md gives users the same table).
//
// The guarantee. `entries(messages, true)` (compact, countTokens) compares every message with its
// snapshot. `entries(messages, false)` (shouldCompact, measure: the per-step calls) takes the last
// list it verified as known: a message object found at the same position (after the oldest
// dropped, if the list starts further along) is trusted with the entry verified there, and only
// these are compared: the last TAIL_CHECKED, and older ones in rotation, about ROTATION_ITEMS
// snapshot items a call, so that each is compared again within (trusted items ÷ ROTATION_ITEMS)
// calls; all of them when at most FULL_CHECK_MESSAGES are trusted. Anything else (a message
// added, moved or replaced by another object, one said `changed`) is looked up and compared as
// before — and one in place of another object that reads the same as its snapshot takes over
// its entry (a list rebuilt as new objects costs a comparison, not a count). The positions cost
// a pointer comparison a message (one pass, no WeakMap look-up), and the list's format is
// re-checked only where entries are new.

const native = require('../addon/native.js')
const { callNative, checkedMessages } = require('../addon/validate.js')
const { formatOf, encodingOf } = require('../options/options.js')
const { takeSnapshot, unchangedSince } = require('../addon/snapshot.js')

// What a step re-checks (see the module docs and docs/counting.md). A message object at the position
// where the last call saw it is trusted by identity; of those, every call compares with its
// snapshot the last TAIL_CHECKED (where a loop edits: a streamed reply, the latest tool result)
// and, in rotation, older ones worth about ROTATION_ITEMS snapshot items (a few dozen messages);
// a list of at most FULL_CHECK_MESSAGES trusted messages is compared in full. compact() and
// countTokens() always compare every message.
const TAIL_CHECKED = 8
const ROTATION_ITEMS = 1_024
const FULL_CHECK_MESSAGES = 256
// Put in place of a message said to be changed (changed()): no message is this object.
const CHANGED = Object.freeze({})

class MessageCounts {
  #options
  // Message object → { tape, tokens, bytes, signature, readAs } (bytes: -1 until
  // maxToolOutputBytes needs it).
  #cache = new WeakMap()
  // The last list verified: its message objects (a copy: the caller may edit the array), their
  // entries, whether the Compactor tracked them all (mark map), and where the rotation is.
  #verified = null
  #rotation = 0

  constructor(options) {
    this.#options = options
  }

  // The cache entry of every message of `messages` that is unchanged since it was cached, and
  // new entries (counted now, snapshot taken) for the others; a non-object is never cached
  // (the addon reports it). `exact`: every message is compared with its snapshot; otherwise (a
  // step: shouldCompact, measure) a message object at the very position where the last call
  // verified it is trusted, and only some of those are compared (TAIL_CHECKED, ROTATION_ITEMS),
  // so that a step costs what was appended, not the whole history.
  entries(messages, exact = true) {
    checkedMessages(messages)
    const n = messages.length
    const entries = new Array(n)
    const prev = this.#verified
    const items = prev?.items
    // Where the last list starts in this one: at 0 when messages were appended, further when the
    // oldest were dropped (a list kept to a size). A first message the last list does not hold
    // is a list rebuilt as new objects (read back from a store): position for position, so that
    // each new object is compared with the one it replaces.
    let shift = 0
    if (prev !== null && n > 0 && items.length > 0 && items[0] !== messages[0]) {
      shift = Math.max(0, items.indexOf(messages[0]))
    }
    const known = prev === null ? 0 : Math.min(items.length - shift, n)
    // The objects verified at their position are trusted (entries[i] set), the others unknown.
    const unknown = []
    let trustedCount = 0
    for (let i = 0; i < n; i++) {
      if (i < known && items[i + shift] === messages[i]) {
        const entry = prev.entries[i + shift]
        if (entry.tape !== null) {
          entries[i] = entry
          trustedCount += 1
          continue
        }
      }
      unknown.push(i)
    }
    const missing = []
    const missingIndex = []
    const recheck = (i) => {
      if (!unchangedSince(messages[i], i, entries[i].tape)) {
        entries[i] = undefined
        missing.push(messages[i])
        missingIndex.push(i)
      }
    }
    if (exact || trustedCount <= FULL_CHECK_MESSAGES) {
      for (let i = 0; i < n; i++) if (entries[i] !== undefined) recheck(i)
    } else {
      // The tail, every call; the rest in rotation, from where the last step stopped.
      const tail = Math.max(0, n - TAIL_CHECKED)
      for (let i = tail; i < n; i++) if (entries[i] !== undefined) recheck(i)
      if (tail > 0) {
        let at = this.#rotation % tail
        let budget = ROTATION_ITEMS
        for (let visited = 0; visited < tail && budget > 0; visited++) {
          if (entries[at] !== undefined) {
            budget -= entries[at].tape.length
            recheck(at)
          }
          at = at + 1 === tail ? 0 : at + 1
        }
        this.#rotation = at
      }
    }
    for (const i of unknown) {
      const message = messages[i]
      if (message === null || typeof message !== 'object') {
        missing.push(message)
        missingIndex.push(i)
        continue
      }
      const entry = this.#cache.get(message)
      // A new object where the last list had another (the state read back from a store, a
      // message rebuilt by a framework): when it reads the same as the one verified there
      // (its snapshot), it takes over its count, without counting again.
      const there = entry === undefined && i + shift < items?.length ? prev.entries[i + shift] : undefined
      if (entry !== undefined && unchangedSince(message, i, entry.tape)) {
        entries[i] = entry
      } else if (there !== undefined && there.tape !== null && unchangedSince(message, i, there.tape)) {
        entries[i] = there
        this.#cache.set(message, there)
      } else {
        missing.push(message)
        missingIndex.push(i)
      }
    }
    if (missing.length > 0) {
      // Counted first (the addon reports unreadable messages with their index), snapshots
      // after: nothing runs in between that could change a message.
      const read = callNative(
        () => native.countItemsJson(missing, encodingOf(this.#options), formatOf(this.#options)),
        missingIndex,
      )
      for (let j = 0; j < missing.length; j++) {
        const message = missing[j]
        const index = missingIndex[j]
        const entry = { tape: null, tokens: read.counts[j], bytes: -1, signature: read.signatures[j], readAs: read.format }
        entries[index] = entry
        if (message === null || typeof message !== 'object') continue
        entry.tape = takeSnapshot(message, index)
        if (entry.tape !== null) this.#cache.set(message, entry)
        else this.#cache.delete(message)
      }
    }
    // Entries trusted from the last list were read in its format; when the list's format is the
    // same, only the others need a look.
    const fresh = prev !== null && missing.length + unknown.length < n ? [...unknown, ...missingIndex] : null
    entries.format = this.#readInListFormat(messages, entries, fresh, prev?.entries.format)
    // #track needs to look only at the positions not trusted when the last list was tracked.
    // (A message's toJSON is called with its index; one whose result depends on it is not
    // supported, see addon/snapshot.js.)
    entries.untracked = prev !== null && prev.tracked ? unknown : null
    this.#verified = { items: messages.slice(), entries, tracked: false }
    return entries
  }

  // The message objects of `list` were changed in place: not trusted, not cached.
  changed(list) {
    const items = this.#verified?.items
    for (const message of list) {
      if (message === null || typeof message !== 'object') continue
      this.#cache.delete(message)
      if (!items) continue
      for (let at = items.lastIndexOf(message); at >= 0; at = at > 0 ? items.lastIndexOf(message, at - 1) : -1) items[at] = CHANGED
    }
  }

  // #track saw every message of the list these entries are of.
  tracked(entries) {
    if (this.#verified !== null && entries === this.#verified.entries) this.#verified.tracked = true
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
