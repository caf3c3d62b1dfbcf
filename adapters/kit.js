'use strict'

// The adapters' kit: what more than one framework adapter needs besides its framework. Checking
// its options, reading a step's billed usage and an AI SDK tool set, logging, comparing and
// copying data, naming archive sessions, a bounded pool of sessions, loading an optional peer,
// the recall tool per session, and the result of a compaction that did not get to an answer.
// Each adapter file keeps only what its framework alone needs. Nothing here loads a framework; everything stands on the public API
// (index.js) and lib/'s argument checks and results.

const { createHash } = require('node:crypto')

const { createRecallTool } = require('../index.js')
const { describe, invalidArgument } = require('../lib/addon/validate.js')
const { notCompactedResult } = require('../lib/messages/result.js')

// ---------------------------------------------------------------------------------------------
// Options

const given = (value) => value !== undefined && value !== null

/** `options` when it is an object, `{}` when left out; else a TypeError naming it. */
function objectOptions(options, name = 'options', prefix = '') {
  if (given(options) && (typeof options !== 'object' || Array.isArray(options))) {
    throw invalidArgument(`${prefix}${name} must be an object, got ${describe(options)}`)
  }
  return options ?? {}
}

/**
 * A TypeError for the first option of `table` (name → why it cannot be given) that `options`
 * gives, worded by `say(name, why)`. `isGiven`: what counts as given (by default neither
 * `undefined` nor `null`).
 */
function rejectOptions(options, table, say, isGiven = given) {
  for (const [name, why] of Object.entries(table)) {
    if (isGiven(options[name])) throw invalidArgument(say(name, why))
  }
}

function isAbortSignal(value) {
  return typeof value === 'object' && value !== null && typeof value.aborted === 'boolean' && typeof value.addEventListener === 'function'
}

// ---------------------------------------------------------------------------------------------
// Usage

const count = (value) => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined)

/**
 * A finished AI SDK step's usage (the AI SDK, and Mastra, whose steps carry it) as the trigger
 * reads it: the input tokens its request was billed, including what was read from or written to
 * the prompt cache, and the output tokens (the reply, which the next request carries).
 * - AI SDK 6 and 7 (`inputTokenDetails` present): `inputTokens` is that total.
 * - AI SDK 5: providers disagree. OpenAI and Google count cached tokens in `inputTokens`
 *   (`cachedInputTokens` is a part of it); Anthropic leaves the cache out, so its raw usage
 *   (which the Anthropic provider puts in `providerMetadata.anthropic.usage`) is read instead.
 *   Other providers that leave the cache out are recognised when `cachedInputTokens` exceeds
 *   `inputTokens`.
 * `undefined` when the step has no usable usage (e.g. a provider that reports none).
 */
function aiSdkUsage(step) {
  const usage = step !== null && typeof step === 'object' ? step.usage : undefined
  if (usage === null || typeof usage !== 'object') return undefined
  const output = count(usage.outputTokens) ?? 0
  const details = usage.inputTokenDetails
  if (details !== null && typeof details === 'object') {
    let input = count(usage.inputTokens)
    if (input === undefined) {
      const parts = [details.noCacheTokens, details.cacheReadTokens, details.cacheWriteTokens].map(count).filter((n) => n !== undefined)
      if (parts.length > 0) input = parts.reduce((a, b) => a + b, 0)
    }
    return input === undefined ? undefined : { inputTokens: input, outputTokens: output }
  }
  const raw = step.providerMetadata?.anthropic?.usage
  if (raw !== null && typeof raw === 'object' && count(raw.input_tokens) !== undefined) {
    return {
      input_tokens: raw.input_tokens,
      cache_read_input_tokens: count(raw.cache_read_input_tokens) ?? 0,
      cache_creation_input_tokens: count(raw.cache_creation_input_tokens) ?? 0,
      output_tokens: count(raw.output_tokens) ?? output,
    }
  }
  let input = count(usage.inputTokens)
  if (input === undefined) return undefined
  const cached = count(usage.cachedInputTokens)
  if (cached !== undefined && cached > input) input += cached
  return { inputTokens: input, outputTokens: output }
}

// ---------------------------------------------------------------------------------------------
// AI SDK tools (the AI SDK's tool sets, and Mastra's, converted for the model)

// The AI SDK's marker of its schema wrapper (`jsonSchema()`, `zodSchema()`), a global symbol.
const SCHEMA = Symbol.for('vercel.ai.schema')

/**
 * A tool set (`{ name: tool }`) as the provider receives it (name, description, JSON schema),
 * which is what every request is billed for: counted into the trigger like the Compactor's
 * `tools`. A provider's own tool (web search, code execution, …) is its id and args.
 * `schemaOf(tool, name)`: the tool's JSON schema, or `undefined` (counted without it).
 */
async function aiSdkToolDefinitions(tools, schemaOf) {
  const definitions = []
  for (const [name, tool] of Object.entries(tools)) {
    if (tool === null || typeof tool !== 'object') continue
    const definition = { name }
    if (typeof tool.description === 'string') definition.description = tool.description
    if ((tool.type === 'provider-defined' || tool.type === 'provider') && typeof tool.id === 'string') {
      definition.type = tool.id
      if (tool.args !== undefined) definition.args = tool.args
    } else {
      const schema = await schemaOf(tool, name)
      if (schema !== undefined) definition.input_schema = schema
    }
    definitions.push(definition)
  }
  return definitions
}

/**
 * A tool schema's JSON schema where it can be read without the AI SDK: the SDK's wrapper (or an
 * object carrying `jsonSchema`, as Mastra's converted tools do), a Standard JSON Schema (Zod 4,
 * ArkType, Valibot, …) as the SDK converts it, or a JSON schema as it is; else `undefined`.
 */
async function readJsonSchema(schema) {
  if (schema === null || typeof schema !== 'object') return undefined
  if (schema[SCHEMA] === true || (schema.jsonSchema !== null && typeof schema.jsonSchema === 'object')) {
    const json = await schema.jsonSchema
    return json !== null && typeof json === 'object' ? json : undefined
  }
  const standard = schema['~standard']
  if (standard && standard.jsonSchema && typeof standard.jsonSchema.input === 'function') return standard.jsonSchema.input({ target: 'draft-07' })
  if (standard === undefined && (typeof schema.type === 'string' || (schema.properties !== null && typeof schema.properties === 'object'))) return schema
  return undefined
}

// ---------------------------------------------------------------------------------------------
// Logging

/**
 * What an adapter reports itself, through the caller's `onLog` and/or `logger` as the Compactor
 * reports (lib/addon/callbacks.js): `onLog({ level, message, target })`, and the logger's method for the
 * level (else its `log`) with the message after `context-compact: `. Quiet without them: nothing
 * goes to stderr unasked. `target`: the adapter's (`context_compact::langchain`).
 */
function logger(options, target) {
  const onLog = typeof options.onLog === 'function' ? options.onLog : null
  const sink = options.logger !== null && typeof options.logger === 'object' ? options.logger : null
  return (level, message) => {
    try {
      if (onLog) onLog({ level, message, target })
      const method = sink && (typeof sink[level] === 'function' ? sink[level] : sink.log)
      if (typeof method === 'function') method.call(sink, `context-compact: ${message}`)
    } catch {
      // A logger's bug must not break the agent.
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Equality

function isPlainObject(value) {
  if (value === null || typeof value !== 'object') return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

// Deeper than this, two values are taken as different (only ever slower, and it stops a circle).
const MAX_DEPTH = 1000

/**
 * Whether two values hold the same data, as JSON would write them: the same keys with the same
 * values in any order (a store may give keys back in another order), a key holding `undefined`
 * being no key, NaN equal to NaN, bytes compared by content. `plain`: objects of a class (whose
 * JSON their class decides) are equal only when they are the same object; otherwise any object
 * is compared by its own keys (an item read back from a store may come as another class).
 */
function sameData(a, b, plain = false, depth = 0) {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return Number.isNaN(a) && Number.isNaN(b)
  }
  if (depth > MAX_DEPTH) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!sameData(a[i], b[i], plain, depth + 1)) return false
    return true
  }
  if (Array.isArray(b)) return false
  // Plain objects, the usual case, first (this runs for every field of every message compared).
  if (!isPlainObject(a) || !isPlainObject(b)) {
    if (ArrayBuffer.isView(a) || ArrayBuffer.isView(b)) {
      if (!ArrayBuffer.isView(a) || !ArrayBuffer.isView(b) || a.byteLength !== b.byteLength) return false
      const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength)
      const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength)
      for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false
      return true
    }
    if (plain) return false
  }
  let defined = 0
  for (const key of Object.keys(a)) {
    const value = a[key]
    if (value === undefined) continue
    defined++
    if (!Object.hasOwn(b, key) || !sameData(value, b[key], plain, depth + 1)) return false
  }
  // Each of those keys is one of b's, with a value: b has no other unless it has more keys.
  const keysB = Object.keys(b)
  if (keysB.length === defined) return true
  for (const key of keysB) if (b[key] !== undefined) defined--
  return defined === 0
}

/** A copy of `item` to keep (structuredClone); an item it refuses (a function inside) as it is. */
function clone(item) {
  try {
    return structuredClone(item)
  } catch {
    // The Compactor still notices a change made to it in place.
    return item
  }
}

/** Whether `list` starts with exactly the objects of `prefix`. */
function startsWith(list, prefix) {
  if (prefix.length > list.length) return false
  for (let i = 0; i < prefix.length; i++) if (list[i] !== prefix[i]) return false
  return true
}

// ---------------------------------------------------------------------------------------------
// Sessions

const SESSION_ID = /^[A-Za-z0-9._-]{1,128}$/

/**
 * The archive session id for a framework's own id (a thread, a session): the id itself when the
 * archive accepts it, else `<prefix>-` and a stable digest of it, so that the same thread always
 * finds its own archives and never another's.
 */
function archiveSessionId(id, prefix) {
  const text = String(id)
  if (SESSION_ID.test(text) && text !== '.' && text !== '..') return text
  return `${prefix}-${createHash('sha256').update(text).digest('hex').slice(0, 32)}`
}

/**
 * Open sessions by id, most recently used last: `get` opens one (`open(id)`) when it is not
 * there, and the least recently used beyond `max` is dropped (`drop(session)`, e.g. closing its
 * Compactor).
 */
class SessionPool {
  #entries = new Map()
  #max
  #open
  #drop

  constructor(max, open, drop = null) {
    this.#max = max
    this.#open = open
    this.#drop = drop
  }

  get(id) {
    const entries = this.#entries
    let session = entries.get(id)
    if (session !== undefined) {
      entries.delete(id)
      entries.set(id, session)
      return session
    }
    session = this.#open(id)
    entries.set(id, session)
    if (entries.size > this.#max) {
      const [oldestId, oldest] = entries.entries().next().value
      entries.delete(oldestId)
      if (this.#drop) this.#drop(oldest)
    }
    return session
  }

  /** The session of `id` if it is open, without opening it or counting it as used. */
  peek(id) {
    return this.#entries.get(id)
  }

  values() {
    return [...this.#entries.values()]
  }
}

// ---------------------------------------------------------------------------------------------
// Peers

/**
 * A framework the adapter needs (an optional peer dependency of the package): `load()`'s answer,
 * or an Error with code ERR_CONTEXT_COMPACT_MISSING_PEER saying what to install (`message`).
 */
function requirePeer(load, message) {
  try {
    return load()
  } catch (error) {
    const missing = new Error(message)
    missing.code = 'ERR_CONTEXT_COMPACT_MISSING_PEER'
    missing.cause = error
    throw missing
  }
}

/** A part of a framework the adapter can do without: `load()`'s answer, or `fallback`. */
function optionalPeer(load, fallback = null) {
  try {
    return load()
  } catch {
    return fallback
  }
}

// ---------------------------------------------------------------------------------------------
// Recall

/**
 * The recall tool (createRecallTool) of each archive session, made on first use with `options`
 * and `format`; at most `max` are kept. Invalid options throw on the first call.
 */
function recallPool(options, format, max) {
  const pool = new SessionPool(max, (sessionId) => createRecallTool({ ...options, sessionId, format }))
  return (sessionId) => pool.get(sessionId)
}

// ---------------------------------------------------------------------------------------------
// Results

function messageOf(error) {
  return error && error.message ? String(error.message) : String(error)
}

function isAbort(error, signal) {
  return (signal !== undefined && signal !== null && signal.aborted) || (error !== null && typeof error === 'object' && error.name === 'AbortError')
}

// The fields of a Compactor's result that a failed result keeps (what it measured and tried;
// what it changed is not kept: the messages are as they were).
const MEASURED_FIELDS = [
  'provider', 'model', 'warnings', 'tokens', 'threshold', 'measure', 'strategy', 'trigger', 'rounds', 'removed',
  'fallback', 'extracted', 'compactionUnavailable', 'summaryUsage', 'summaryModelLearnt', 'summaryRequest', 'checkpoint',
  'background',
]

/**
 * The result of a compaction that did not get to an answer, or whose answer did not reach the
 * conversation: the CompactResult's fields, the messages unchanged, and `error` ({ code,
 * message, attempts? }). `from`: the Compactor's result, when there was one.
 */
function failedResult(messages, error, from = null) {
  const base = from ?? {}
  const measured = {}
  for (const key of MEASURED_FIELDS) if (base[key] !== undefined && base[key] !== null) measured[key] = base[key]
  return notCompactedResult(messages, { ...measured, attempts: base.attempts ?? error.attempts ?? 0, error })
}

/**
 * An adapter's function with what its users read from it: `lastResult` (the last compaction's
 * result, read through `lastResult()`), the `compactor` it runs on, `more` (its own properties),
 * and `close()`, which ends the Compactor's background work (not enumerable, as a method is).
 */
function withCompactor(fn, compactor, lastResult, more = {}) {
  return Object.defineProperties(fn, {
    lastResult: { get: lastResult, enumerable: true },
    compactor: { value: compactor, enumerable: true },
    ...more,
    close: { value: () => compactor.close(), enumerable: false },
  })
}

module.exports = {
  objectOptions,
  rejectOptions,
  isAbortSignal,
  count,
  aiSdkUsage,
  aiSdkToolDefinitions,
  readJsonSchema,
  logger,
  isPlainObject,
  sameData,
  clone,
  startsWith,
  archiveSessionId,
  SessionPool,
  requirePeer,
  optionalPeer,
  recallPool,
  messageOf,
  isAbort,
  failedResult,
  withCompactor,
}
