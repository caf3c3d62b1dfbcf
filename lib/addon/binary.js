'use strict'

// Binary values back from the addon's JSON (crates/core/src/model/binary.rs). The addon's
// reader (crates/js-values) writes bytes as `{"$bytes": "<base64>", "$type": "<JS type>"}` and a
// URL object as `{"$url": "<href>"}`, and gives a key of the caller's that a tag uses (`$bytes`,
// `$url`, or those with more `$` before them) one more `$`. Messages that come back from the
// addon as JSON (restored from an archive, a kept message the library changed) are turned back
// here: the same type, the same bytes, the caller's own keys.

const TYPED_ARRAYS = new Set([
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float16Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
])

const ESCAPED_KEY = /^\${2,}(bytes|url)$/

// The bytes of a tag as the JS type it names (a Uint8Array when that type is unknown here).
function bytesOf(base64, type) {
  const buffer = Buffer.from(base64, 'base64')
  if (type === 'Buffer') return buffer
  // A copy of exactly these bytes, in an ArrayBuffer of their own.
  const own = buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength)
  if (type === 'ArrayBuffer') return own
  if (TYPED_ARRAYS.has(type) && typeof globalThis[type] === 'function') {
    const Ctor = globalThis[type]
    if (own.byteLength % Ctor.BYTES_PER_ELEMENT === 0) return new Ctor(own)
  }
  return new Uint8Array(own)
}

// `value` (parsed from the addon's JSON, owned by us) with its tags turned back into bytes and
// URLs and the caller's escaped keys restored; the same object when nothing in it is tagged.
function fromArchived(value) {
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = fromArchived(value[i])
    return value
  }
  if (typeof value.$bytes === 'string' && Object.prototype.hasOwnProperty.call(value, '$bytes')) return bytesOf(value.$bytes, value.$type)
  if (typeof value.$url === 'string' && Object.prototype.hasOwnProperty.call(value, '$url')) {
    try {
      return new URL(value.$url)
    } catch {
      return value.$url
    }
  }
  let escaped = false
  for (const key of Object.keys(value)) {
    value[key] = fromArchived(value[key])
    if (ESCAPED_KEY.test(key)) escaped = true
  }
  if (!escaped) return value
  // Rebuilt, so that the keys keep their order.
  const out = {}
  for (const key of Object.keys(value)) out[ESCAPED_KEY.test(key) ? key.slice(1) : key] = value[key]
  return out
}

module.exports = { fromArchived }
