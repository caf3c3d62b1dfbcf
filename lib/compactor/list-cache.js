'use strict'

// What was read of each object of a list that a loop hands over again at every step, kept while
// the object is unchanged, so that a step costs what was appended, not the whole history
// (issue 39). The Compactor's per-message counts (message-counts.js) and the adapters that
// convert a framework's messages before the Compactor reads them (Mastra, pi) share it, so all
// of them trust and re-check the same way (docs/counting.md gives users the same table).
//
// The guarantee. `lookup(list, true)` compares every object with its snapshot (addon/snapshot.js).
// `lookup(list, false)`, a step, takes the last list stored as known: an object found at the same
// position (after the oldest dropped, if the list starts further along) is trusted with the entry
// stored there, and only these are compared: the last TAIL_CHECKED, and older ones in rotation,
// about ROTATION_ITEMS snapshot items a call, so that each is compared again within (trusted
// items ÷ ROTATION_ITEMS) calls; all of them when at most FULL_CHECK_ITEMS are trusted. Anything
// else (an object added, moved or replaced by another object, one said `changed`) is looked up
// and compared; one in place of another object that reads the same as its snapshot takes over
// its entry (a list rebuilt as new objects costs a comparison, not a new read). The positions
// cost a pointer comparison an object (one pass, no WeakMap look-up).

const { takeSnapshot, unchangedSince } = require('../addon/snapshot.js')

// Every call compares the last TAIL_CHECKED trusted objects (where a loop edits: a streamed
// reply, the latest tool result) and, in rotation, older ones worth about ROTATION_ITEMS snapshot
// items (a few dozen messages); a list of at most FULL_CHECK_ITEMS trusted objects is compared
// in full.
const TAIL_CHECKED = 8
const ROTATION_ITEMS = 1_024
const FULL_CHECK_ITEMS = 256
// Put in place of an object said to be changed (changed()): no object of a list is this one.
const CHANGED = Object.freeze({})

class ListCache {
  // Whether a step compares trusted objects at all: not for a list whose objects only their
  // builder holds (an adapter's conversions: it compares the framework's messages instead).
  #recheck
  // Object → its entry: `{ tape, ... }`, the snapshot taken when it was read and what the owner
  // read of it.
  #cache = new WeakMap()
  // The last list stored: its objects (a copy: the caller may edit the array) and their entries.
  #verified = null
  #rotation = 0

  constructor({ recheck = true } = {}) {
    this.#recheck = recheck
  }

  /**
   * The entries of `list` whose objects are unchanged since they were read, at their indices.
   * `missing`: the indices to read (changed, new, or not objects; in no particular order); `previous[i]`, for
   * such an index, the entry its object had before it changed (when known: what can be reused
   * of it); `unknown`: the indices not trusted by position (new since the last list).
   * `prefix`: how many of the first entries are the stored list's first entries, in place (the
   * last list's objects, unchanged, at the same positions).
   * The caller puts an entry (a fresh object) at every missing index and calls `store`.
   */
  lookup(list, exact = true) {
    const n = list.length
    const prev = this.#verified
    const items = prev?.items
    // Where the last list starts in this one: at 0 when objects were appended, further when the
    // oldest were dropped (a list kept to a size). A first object the last list does not hold
    // is a list rebuilt as new objects (read back from a store): position for position, so that
    // each new object is compared with the one it replaces.
    let shift = 0
    if (prev !== null && n > 0 && items.length > 0 && items[0] !== list[0]) {
      shift = Math.max(0, items.indexOf(list[0]))
    }
    const known = prev === null ? 0 : Math.min(items.length - shift, n)
    const unknown = []
    let trustedCount = 0
    let entries
    let i = 0
    if (prev !== null && prev.unread === 0) {
      // The usual step: the last list's objects, then what was appended. Its entries are all
      // trusted (none without a snapshot): the prefix found at its place is one copy.
      while (i < known && items[i + shift] === list[i]) i++
      entries = prev.entries.slice(shift, shift + i)
      entries.length = n
      trustedCount = i
    } else {
      entries = new Array(n)
    }
    for (; i < n; i++) {
      if (i < known && items[i + shift] === list[i]) {
        const entry = prev.entries[i + shift]
        if (entry.tape !== null) {
          entries[i] = entry
          trustedCount += 1
          continue
        }
      }
      unknown.push(i)
    }
    // Up to the first position not trusted (then not compared equal, below).
    let prefix = shift !== 0 ? 0 : unknown.length > 0 ? unknown[0] : n
    const missing = []
    const previous = []
    const recheck = (i) => {
      if (!unchangedSince(list[i], i, entries[i].tape)) {
        previous[i] = entries[i]
        entries[i] = undefined
        missing.push(i)
      }
    }
    if (!exact && !this.#recheck) {
      // Objects only their builder holds: a step trusts them at their positions.
    } else if (exact || trustedCount <= FULL_CHECK_ITEMS) {
      for (let i = 0; i < n; i++) if (entries[i] !== undefined) recheck(i)
    } else {
      // The tail, every call; the rest in rotation, from where the last step stopped.
      const tail = Math.max(0, n - TAIL_CHECKED)
      for (let i = tail; i < n; i++) if (entries[i] !== undefined) recheck(i)
      if (tail > 0) {
        let at = this.#rotation % tail
        let budget = globalThis.__ROT ?? ROTATION_ITEMS
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
      const object = list[i]
      if (object === null || typeof object !== 'object') {
        missing.push(i)
        continue
      }
      const entry = this.#cache.get(object)
      // A new object where the last list had another (the state read back from a store, a
      // message rebuilt by a framework): when it reads the same as the one stored there (its
      // snapshot), it takes over its entry, without a new read.
      const there = entry === undefined && i + shift < items?.length ? prev.entries[i + shift] : undefined
      if (entry !== undefined && unchangedSince(object, i, entry.tape)) {
        entries[i] = entry
      } else if (there !== undefined && there.tape !== null && unchangedSince(object, i, there.tape)) {
        entries[i] = there
        this.#cache.set(object, there)
      } else {
        if (entry !== undefined) previous[i] = entry
        missing.push(i)
      }
    }
    for (const at of missing) if (at < prefix) prefix = at
    return { entries, missing, previous, unknown, prefix }
  }

  /**
   * Takes the snapshots of the objects at `missing` (the caller filled their entries) and keeps
   * `list` as the one the next step starts from. Nothing may change the objects between the
   * caller's read and this call.
   */
  store(list, entries, missing) {
    // Entries without a snapshot (not objects, or not readable): never trusted at a position.
    let unread = 0
    for (const i of missing) {
      const object = list[i]
      const entry = entries[i]
      entry.tape = null
      if (object !== null && typeof object === 'object') entry.tape = takeSnapshot(object, i)
      if (entry.tape !== null) this.#cache.set(object, entry)
      else {
        unread += 1
        if (object !== null && typeof object === 'object') this.#cache.delete(object)
      }
    }
    this.#verified = { items: list.slice(), entries, unread }
  }

  /**
   * A cache for another list that starts from what this one stored last: a list rebuilt as new
   * objects (a conversation read back from storage for its next run) is compared with it, position
   * by position, instead of read again. Entries are not changed once stored: both share them.
   */
  fork() {
    const copy = new ListCache({ recheck: this.#recheck })
    copy.#cache = this.#cache
    copy.#verified = this.#verified === null ? null : { ...this.#verified, items: this.#verified.items.slice() }
    return copy
  }

  /** The entries of the list stored last (null before the first). */
  get stored() {
    return this.#verified?.entries ?? null
  }

  /** The objects of `list` were changed in place: not trusted, not cached. */
  changed(list) {
    const items = this.#verified?.items
    for (const object of list) {
      if (object === null || typeof object !== 'object') continue
      this.#cache.delete(object)
      if (!items) continue
      for (let at = items.lastIndexOf(object); at >= 0; at = at > 0 ? items.lastIndexOf(object, at - 1) : -1) items[at] = CHANGED
    }
  }
}

module.exports = {
  ListCache,
}
