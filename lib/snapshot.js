'use strict'

// The Compactor's snapshots: when a cached count of a message may be used again.
//
// A Compactor caches, per message object, what the addon computed from it (token count, tool
// output bytes) together with a snapshot: the message as the addon read it, flattened into a
// tape. A cached value is used only when the message, read again now, gives the same tape, so
// a message changed in place in any way (text appended, content replaced, blocks pushed or
// spliced, a nested tool input edited, a key added or deleted, `tool_calls` pushed ...) is
// counted again; nothing about messages has to be immutable.
//
// The tape is written by `snapshotOf` and checked by `matchesSnapshot`, two walks in the same
// order with the same rules as the addon's reader (crates/js-values, JSON.stringify's rules):
//   - a primitive (string, number, boolean, null, undefined, symbol, bigint) or a function is
//     one item, the value itself;
//   - an object with a `toJSON` method is TO_JSON, then what `toJSON(key)` returns (walked
//     without looking for `toJSON` again, as the reader does);
//   - bytes (a typed array, a Buffer, an ArrayBuffer: the reader keeps them as bytes) are
//     BYTES, the constructor, the length and two hashes of the bytes (see `bytesItems`);
//   - an array is ARRAY, its length, then every element (a hole is read as `undefined`);
//   - any other object is OBJECT, the number of its own enumerable string keys
//     (`Object.keys`, the reader's key list), then each key followed by its value.
// Why a match proves the cached value right: the markers are private symbols that no message
// can hold, and every item's kind follows from the items before it, so a tape is a prefix-free
// code and decodes to exactly one tree. `matchesSnapshot` is `snapshotOf` with each push
// replaced by a comparison, so it succeeds (and ends at the tape's end) only when the message
// now would give an identical tape: the same tree of keys, lengths and leaves. Equal leaves
// (`===`; NaN taken as equal to NaN, both read as null) serialize identically, so the addon
// reads the same JSON value now as when it computed the cached value, and its result, a
// function of that value, is the same. Conversely any difference in what the reader sees
// (a string, a number, a key, an order of keys, a length, a type) fails the comparison and
// the message is read and counted again. Some differences the reader would not see also fail
// (`undefined` vs. a missing key, one function for another): a recount, never a stale value.
//
// Cost: a message that did not change costs one walk over its objects, arrays and keys; its
// strings are compared by `===`, which V8 answers from the pointer when it is the same string
// (the usual case), and from the length when text was appended; the walk stops at the first
// difference. No string is copied: the tape refers to the message's own strings, so it costs
// a few slots per JSON value, lives as long as the message object (WeakMap) and is replaced
// when the message is counted again.
//
// Covered beyond plain data: getters and `toJSON` are called by both walks, so their results
// are compared; the cache is right as long as reading them twice with nothing changed in
// between gives the same JSON (a getter or `toJSON` that returns something different on every
// call makes any cache meaningless: such a message is recounted, or counted from a read that
// differs from the snapshot's). A message's own `toJSON` is called with its index, as the
// reader calls it; one whose result depends on that index is not supported.
// Proxies are read through their traps like any object. Nesting deeper than the reader allows
// (or a cycle) fails the comparison, and the recount reports the error.

const BYTES = Symbol('bytes')
const ARRAY = Symbol('array')
const OBJECT = Symbol('object')
const TO_JSON = Symbol('toJSON')
// The reader's MAX_DEPTH: a deeper (or circular) message is an error there, a mismatch here.
const SNAPSHOT_MAX_DEPTH = 128

// Bytes (a typed array, a Buffer, an ArrayBuffer), which the reader keeps as bytes with their
// type (crates/core/src/model/binary.rs): BYTES, the constructor, the length in bytes, then two
// 32-bit hashes of the bytes (FNV-1a and a multiplicative one). Hashing reads each byte once
// and keeps no copy of an image in the tape; a change in place that keeps both hashes equal
// would need a 64-bit collision.
function bytesView(value) {
  if (ArrayBuffer.isView(value)) return value instanceof DataView ? null : new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
  if (value instanceof ArrayBuffer) return new Uint8Array(value)
  return null
}

function bytesItems(value, view) {
  let a = 0x811c9dc5
  let b = 0
  for (let i = 0; i < view.length; i++) {
    a = Math.imul(a ^ view[i], 0x01000193)
    b = (Math.imul(b, 31) + view[i]) | 0
  }
  return [BYTES, value.constructor, view.length, a, b]
}

// `toJSON`'s argument, made only when it is called (indices are carried as numbers).
const jsonKey = (key) => (typeof key === 'number' ? String(key) : key)

// Appends the tape of `value` (property `key`) to `tape`; false when nested too deep.
function snapshotOf(value, key, tape, depth) {
  if (typeof value !== 'object' || value === null) {
    tape.push(value)
    return true
  }
  if (depth >= SNAPSHOT_MAX_DEPTH) return false
  const view = bytesView(value)
  if (view !== null) {
    tape.push(...bytesItems(value, view))
    return true
  }
  if (typeof value.toJSON === 'function') {
    tape.push(TO_JSON)
    value = value.toJSON(jsonKey(key))
    if (typeof value !== 'object' || value === null) {
      tape.push(value)
      return true
    }
  }
  if (Array.isArray(value)) {
    const length = value.length
    tape.push(ARRAY, length)
    for (let i = 0; i < length; i++) {
      if (!snapshotOf(value[i], i, tape, depth + 1)) return false
    }
    return true
  }
  const keys = Object.keys(value)
  tape.push(OBJECT, keys.length)
  for (let i = 0; i < keys.length; i++) {
    const name = keys[i]
    tape.push(name)
    if (!snapshotOf(value[name], name, tape, depth + 1)) return false
  }
  return true
}

// Compares `value` with the tape from position `at`: the position after it, or -1 at the
// first difference.
function matchesSnapshot(value, key, tape, at, depth) {
  if (typeof value !== 'object' || value === null) {
    const item = tape[at]
    // NaN !== NaN, but every NaN is read as null.
    return item === value || (item !== item && value !== value) ? at + 1 : -1
  }
  if (depth >= SNAPSHOT_MAX_DEPTH) return -1
  const view = bytesView(value)
  if (view !== null) {
    if (tape[at] !== BYTES || tape[at + 1] !== value.constructor || tape[at + 2] !== view.length) return -1
    const items = bytesItems(value, view)
    return tape[at + 3] === items[3] && tape[at + 4] === items[4] ? at + 5 : -1
  }
  if (typeof value.toJSON === 'function') {
    if (tape[at] !== TO_JSON) return -1
    at += 1
    value = value.toJSON(jsonKey(key))
    if (typeof value !== 'object' || value === null) {
      const item = tape[at]
      return item === value || (item !== item && value !== value) ? at + 1 : -1
    }
  }
  if (Array.isArray(value)) {
    const length = value.length
    if (tape[at] !== ARRAY || tape[at + 1] !== length) return -1
    at += 2
    for (let i = 0; i < length; i++) {
      at = matchesSnapshot(value[i], i, tape, at, depth + 1)
      if (at < 0) return -1
    }
    return at
  }
  const keys = Object.keys(value)
  if (tape[at] !== OBJECT || tape[at + 1] !== keys.length) return -1
  at += 2
  for (let i = 0; i < keys.length; i++) {
    const name = keys[i]
    if (tape[at] !== name) return -1
    at = matchesSnapshot(value[name], name, tape, at + 1, depth + 1)
    if (at < 0) return -1
  }
  return at
}

// The snapshot of message `index` (null when it cannot be taken: then it is not cached).
function takeSnapshot(message, index) {
  const tape = []
  try {
    return snapshotOf(message, index, tape, 0) ? tape : null
  } catch {
    return null // a getter or toJSON that threw this time
  }
}

// Whether `message` still gives `tape`. A getter or toJSON that throws counts as a change: the
// recount reports the error, naming the message.
function unchangedSince(message, index, tape) {
  try {
    return matchesSnapshot(message, index, tape, 0, 0) === tape.length
  } catch {
    return false
  }
}

module.exports = {
  takeSnapshot,
  unchangedSince,
}
