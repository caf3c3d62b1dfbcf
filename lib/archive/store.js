'use strict'

// The bridge to archive stores (issue 14): `outputDir` may be an object-store URL configured by
// `storeOptions`, or the caller passes its own store as `archiveStore` (index.d.ts:
// `ArchiveStore`). The store's functions are registered with the addon for one call.

const native = require('../addon/native.js')
const { describe, invalidArgument } = require('../addon/validate.js')

const ARCHIVE_STORE_METHODS = ['put', 'get', 'list', 'delete']

function checkArchiveStore(store, name = 'options.archiveStore') {
  if (store === undefined || store === null) return null
  if (typeof store !== 'object' && typeof store !== 'function') {
    throw invalidArgument(`${name} must be an object with put, get, list and delete, got ${describe(store)}`)
  }
  for (const method of ARCHIVE_STORE_METHODS) {
    if (typeof store[method] !== 'function') {
      throw invalidArgument(`${name}.${method} must be a function, got ${describe(store[method])}`)
    }
  }
  return store
}

function bytesOf(value, key) {
  if (value === undefined || value === null) return null
  if (Buffer.isBuffer(value)) return value
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  if (value instanceof ArrayBuffer) return Buffer.from(value)
  if (typeof value === 'string') return Buffer.from(value, 'utf8')
  throw new TypeError(`archiveStore.get(${JSON.stringify(key)}) must resolve to a Uint8Array, a string or null, got ${describe(value)}`)
}

function listEntry(entry) {
  if (typeof entry === 'string') return { key: entry, size: 0, lastModified: null }
  if (entry === null || typeof entry !== 'object' || typeof entry.key !== 'string') {
    throw new TypeError(`archiveStore.list must resolve to an array of { key, size?, lastModified? } or of keys, got an entry ${describe(entry)}`)
  }
  const modified = entry.lastModified
  const lastModified =
    modified instanceof Date ? modified.getTime() : typeof modified === 'number' ? modified : typeof modified === 'string' ? Date.parse(modified) : null
  return { key: entry.key, size: typeof entry.size === 'number' ? entry.size : 0, lastModified: Number.isFinite(lastModified) ? lastModified : null }
}

// Runs `run(id)` with `store` registered (id null without a store), releasing it after.
async function withArchiveStore(store, run) {
  if (!store) return run(null)
  const id = native.registerArchiveStore(
    async ({ key, bytes, ifNotExists }) => (await store.put(key, bytes, { ifNotExists })) !== false,
    async (key) => bytesOf(await store.get(key), key),
    async (prefix) => {
      const entries = await store.list(prefix)
      if (!Array.isArray(entries)) throw new TypeError(`archiveStore.list must resolve to an array, got ${describe(entries)}`)
      return JSON.stringify(entries.map(listEntry))
    },
    async (key) => {
      await store.delete(key)
    },
  )
  try {
    return await run(id)
  } finally {
    native.releaseArchiveStore(id)
  }
}

// The store part of a history call's options, for the addon.
function storeJson(opts, archiveStoreId) {
  if (archiveStoreId == null && opts.storeOptions == null) return null
  try {
    return JSON.stringify({ storeOptions: opts.storeOptions ?? null, archiveStoreId })
  } catch (error) {
    throw invalidArgument(`options.storeOptions cannot be serialized as JSON: ${error.message}`)
  }
}

module.exports = {
  checkArchiveStore,
  withArchiveStore,
  storeJson,
}
