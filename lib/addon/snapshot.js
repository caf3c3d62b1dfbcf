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
//     without looking for `toJSON` again, as the reader does); except a Date whose `toJSON`,
//     `toISOString`, `valueOf` and `Symbol.toPrimitive` are the built-ins: DATE and its time
//     value, of which that `toJSON` is a function (`toISOString()` of it, null when invalid),
//     without the string `toJSON` allocates at every call (Mastra stamps every message);
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
// LangChain's message instances (any Serializable of @langchain/core whose `toJSON` is
// Serializable's own) are not read through `toJSON`, which copies the whole message on every
// call (escaping every value, renaming keys): several times the cost of the walk. That toJSON
// gives `{ lc, type, id: [...lc_namespace, the class's name], kwargs }` where `kwargs` is, for
// each key of `lc_kwargs`, the instance's own field when it has one (`key in message`) else
// lc_kwargs', keys renamed by the class's `lc_aliases`, `lc_secrets` and `lc_attributes` written
// over it, every value escaped by a function of the value alone (`escapeIfNeeded`). So for a
// class without secrets or attributes the tape holds LC_FIELDS, the toJSON function itself, the
// constructor, `lc_serializable`, `lc_namespace` (walked), the number of keys of `lc_kwargs`,
// and each key with the field toJSON reads for it (walked): what toJSON's result is a function
// of, so the same tape means the same JSON. (Assumed: a class's `lc_aliases`, `lc_secrets` and
// `lc_attributes` are the class's, not the instance's — LangChain's getters return constants.
// A class with secrets or attributes, or its own toJSON, is read through toJSON.)
// Proxies are read through their traps like any object. Nesting deeper than the reader allows
// (or a cycle) fails the comparison, and the recount reports the error.

const BYTES = Symbol('bytes')
const ARRAY = Symbol('array')
const OBJECT = Symbol('object')
const TO_JSON = Symbol('toJSON')
const LC_FIELDS = Symbol('langchain fields')
const DATE = Symbol('date')
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

// Whether `fn`, the toJSON of `value`, is @langchain/core's Serializable.toJSON: the method of
// the prototype that also has its own `toJSONNotImplemented` (no import of LangChain, an
// optional peer: the caller's copy, its ES module build too). Found once per function.
const serializableToJson = new WeakMap()
function isSerializableToJson(fn, value) {
  let known = serializableToJson.get(fn)
  if (known === undefined) {
    known = false
    for (let proto = Object.getPrototypeOf(value); proto !== null; proto = Object.getPrototypeOf(proto)) {
      if (!Object.hasOwn(proto, 'toJSON')) continue
      known = proto.toJSON === fn && Object.hasOwn(proto, 'toJSONNotImplemented') && typeof proto.toJSONNotImplemented === 'function'
      break
    }
    serializableToJson.set(fn, known)
  }
  return known
}

// Constructor → whether its instances are read by their fields: toJSON is Serializable's, and
// the class has no `lc_secrets` or `lc_attributes` (which toJSON writes over the fields). Read
// once per class: LangChain's classes return constants from these getters (and from
// `lc_aliases`, which only renames keys).
const readByFields = new WeakMap()
const isEmpty = (value) => value === undefined || value === null || (typeof value === 'object' && Object.keys(value).length === 0)

// Whether `value` (with a `toJSON` method) is a LangChain Serializable read by its fields.
function isLangChainSerializable(value) {
  const kwargs = value.lc_kwargs
  if (kwargs === null || typeof kwargs !== 'object' || Array.isArray(kwargs) || !Array.isArray(value.lc_namespace) || Object.hasOwn(value, 'toJSON')) {
    return false
  }
  if (!isSerializableToJson(value.toJSON, value)) return false
  const ctor = value.constructor
  if (typeof ctor !== 'function') return false
  let known = readByFields.get(ctor)
  if (known === undefined) {
    known = isEmpty(value.lc_secrets) && isEmpty(value.lc_attributes)
    readByFields.set(ctor, known)
  }
  return known
}

// The field toJSON reads for `key` of `lc_kwargs`.
const fieldOf = (value, kwargs, key) => (key in value ? value[key] : kwargs[key])

// Appends the LC_FIELDS tape of a LangChain Serializable (see the module docs).
function fieldsSnapshotOf(value, tape, depth) {
  tape.push(LC_FIELDS, value.toJSON, value.constructor, value.lc_serializable)
  if (!snapshotOf(value.lc_namespace, 'lc_namespace', tape, depth + 1)) return false
  const kwargs = value.lc_kwargs
  const keys = Object.keys(kwargs)
  tape.push(keys.length)
  for (let i = 0; i < keys.length; i++) {
    const name = keys[i]
    tape.push(name)
    if (!snapshotOf(fieldOf(value, kwargs, name), name, tape, depth + 1)) return false
  }
  return true
}

// matchesSnapshot for the LC_FIELDS tape at `at`.
function fieldsMatch(value, tape, at, depth) {
  if (tape[at] !== LC_FIELDS || tape[at + 1] !== value.toJSON || tape[at + 2] !== value.constructor || tape[at + 3] !== value.lc_serializable) return -1
  at = matchesSnapshot(value.lc_namespace, 'lc_namespace', tape, at + 4, depth + 1)
  if (at < 0) return -1
  const kwargs = value.lc_kwargs
  const keys = Object.keys(kwargs)
  if (tape[at] !== keys.length) return -1
  at += 1
  for (let i = 0; i < keys.length; i++) {
    const name = keys[i]
    if (tape[at] !== name) return -1
    at = matchesSnapshot(fieldOf(value, kwargs, name), name, tape, at + 1, depth + 1)
    if (at < 0) return -1
  }
  return at
}

// The time value of a Date read through the built-in methods (see the module docs), else
// undefined. Checked only for objects with a `toJSON`.
const { toJSON: dateToJson, toISOString: dateToIso, valueOf: dateValueOf, getTime: dateGetTime } = Date.prototype
const dateToPrimitive = Date.prototype[Symbol.toPrimitive]
function plainDateTime(value) {
  if (value.toJSON !== dateToJson || !(value instanceof Date)) return undefined
  if (value.toISOString !== dateToIso || value.valueOf !== dateValueOf || value[Symbol.toPrimitive] !== dateToPrimitive) return undefined
  return dateGetTime.call(value)
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
    const time = plainDateTime(value)
    if (time !== undefined) {
      tape.push(DATE, time)
      return true
    }
    if (isLangChainSerializable(value)) return fieldsSnapshotOf(value, tape, depth)
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
    const time = plainDateTime(value)
    if (time !== undefined) {
      const item = tape[at + 1]
      // An invalid Date's time is NaN, read as null like any other.
      return tape[at] === DATE && (item === time || (item !== item && time !== time)) ? at + 2 : -1
    }
    if (isLangChainSerializable(value)) return fieldsMatch(value, tape, at, depth)
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
