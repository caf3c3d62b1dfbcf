'use strict'

// The public API of context-compact. All logic is in Rust (crates/core); this layer
// - passes messages to the addon as one JSON string (the cheapest crossing we measured),
// - builds results from the caller's own message objects, so retained messages are the very
//   objects that were passed in (same identity, same key order, nothing copied),
// - turns invalid input into TypeError, wires AbortSignal and the JS callbacks.
// Types and documentation: index.d.ts.

const native = loadBinding()

// The addon is loaded by the generated loader (binding.js): the `.node` built beside this file
// (a clone after `npm install`), else the platform package (`context-compact-<platform>`, an
// optional dependency of the published package). When neither loads, say which platform this is,
// which ones have prebuilt binaries, and how to build from source.
function loadBinding() {
  try {
    return require('./binding.js')
  } catch (error) {
    throw noBindingError(error)
  }
}

function libcOf() {
  if (process.platform !== 'linux') return null
  try {
    if (process.report && typeof process.report.getReport === 'function') {
      process.report.excludeNetwork = true
      const header = process.report.getReport().header
      return header && header.glibcVersionRuntime ? 'glibc' : 'musl'
    }
  } catch {
    // unknown
  }
  return null
}

function noBindingError(cause) {
  const libc = libcOf()
  const platform = [process.platform, process.arch, libc].filter(Boolean).join(' ')
  const abi = process.platform === 'linux' ? (libc === 'musl' ? '-musl' : '-gnu') : process.platform === 'win32' ? '-msvc' : ''
  const expected = `context-compact-${process.platform}-${process.arch}${abi}`
  let supported = []
  try {
    supported = Object.keys(require('./package.json').optionalDependencies || {})
  } catch {
    // a copy without its package.json: list nothing rather than fail here
  }
  const isSupported = supported.includes(expected)
  const error = new Error(
    [
      `context-compact: no native binary could be loaded for this platform (${platform}).`,
      isSupported
        ? `Its prebuilt binary comes in the optional dependency ${expected}, which is missing or failed to load: reinstall without --omit=optional / --no-optional (npm has a bug with optional dependencies and lockfiles made on another platform, https://github.com/npm/cli/issues/4828: remove node_modules and package-lock.json and run npm install again).`
        : `There is no prebuilt binary for this platform (the package would be ${expected}).`,
      `Prebuilt binaries: ${supported.length > 0 ? supported.map((name) => name.replace(/^context-compact-/, '')).join(', ') : 'see the README'}.`,
      'To build from source (Node.js >= 18, npm and a Rust toolchain from https://rustup.rs): clone the repository, run `npm install` in it (it builds the addon), then depend on that directory.',
      `Cause: ${cause && cause.message ? cause.message.split('\n')[0] : String(cause)}`,
    ].join('\n'),
  )
  error.code = 'ERR_CONTEXT_COMPACT_NO_BINARY'
  error.cause = cause
  return error
}

const CONTEXT_TOKEN_LIMIT = 200_000
const COMPACT_THRESHOLD_RATIO = 0.92
const TAIL_RETENTION_RATIO = 0.1
const COMPACT_MAX_RETRIES = 2

const ZERO_STATS = Object.freeze({
  originalTokenCount: 0,
  compactedTokenCount: 0,
  compactionRatio: 0,
  compactedMessageCount: 0,
  retainedMessageCount: 0,
  removedMessageCount: 0,
})

// Options that are functions or objects the addon cannot read; everything else is passed on.
// `archiveStoreId` is set by optionsJson alone (it names a store registered for the call).
const JS_ONLY_OPTIONS = new Set(['summarizer', 'signal', 'onEvent', 'onBeforeCompact', 'onLog', 'logger', 'overflow', 'archiveStore', 'archiveStoreId'])

function describe(value) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

function invalidArgument(message) {
  const error = new TypeError(message)
  error.code = 'ERR_CONTEXT_COMPACT_INVALID_ARGUMENT'
  return error
}

// Native InvalidArg errors are the caller's mistakes: rethrow them as TypeError.
function translateError(error, indexMap) {
  if (error && error.code === 'InvalidArg') {
    let message = error.message
    if (indexMap) {
      message = message.replace(/^messages\[(\d+)\]/, (_, i) => `messages[${indexMap[Number(i)]}]`)
    }
    return invalidArgument(message)
  }
  return error
}

function callNative(fn, indexMap) {
  try {
    return fn()
  } catch (error) {
    throw translateError(error, indexMap)
  }
}

// Messages cross into the addon as the objects themselves: the addon reads them with
// JSON.stringify's rules (src/js_json.rs), so no JSON text of the conversation is built on
// either side. Only the array itself is checked here, for a clear error.
function checkedMessages(messages, name = 'messages') {
  if (!Array.isArray(messages)) {
    throw invalidArgument(`${name} must be an array of message objects, got ${describe(messages)}`)
  }
  return messages
}

function checkOptions(options, name = 'options') {
  if (options === undefined || options === null) return {}
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw invalidArgument(`${name} must be an object, got ${describe(options)}`)
  }
  return options
}

// A custom strategy (an object with a `compress` method, type seed) runs in JS.
function isCustomStrategy(strategy) {
  return strategy !== null && typeof strategy === 'object' && typeof strategy.compress === 'function'
}

// `archiveStoreId`: the id of the caller's `archiveStore` registered for this call (see
// withArchiveStore), which the addon uses instead of `outputDir`.
function optionsJson(options, archiveStoreId = null) {
  const plain = {}
  for (const [key, value] of Object.entries(options)) {
    if (key === 'strategy' && isCustomStrategy(value)) continue
    if (!JS_ONLY_OPTIONS.has(key) && value !== undefined) plain[key] = value
  }
  if (archiveStoreId != null) plain.archiveStoreId = archiveStoreId
  try {
    return JSON.stringify(plain)
  } catch (error) {
    throw invalidArgument(`options cannot be serialized as JSON: ${error.message}`)
  }
}

// `format` (SPEC "Message formats"): which API's messages the list holds; detected when absent.
function formatOf(options) {
  return options.format === undefined || options.format === null ? undefined : String(options.format)
}

function encodingOf(options) {
  return options.encoding === undefined || options.encoding === null ? undefined : String(options.encoding)
}

function checkFunction(options, key) {
  const value = options[key]
  if (value !== undefined && value !== null && typeof value !== 'function') {
    throw invalidArgument(`options.${key} must be a function, got ${describe(value)}`)
  }
  return value ?? undefined
}

function checkSignal(options) {
  const signal = options.signal
  if (signal === undefined || signal === null) return undefined
  if (typeof signal !== 'object' || typeof signal.aborted !== 'boolean' || typeof signal.addEventListener !== 'function') {
    throw invalidArgument('options.signal must be an AbortSignal')
  }
  return signal
}

function abortError(signal) {
  const reason = signal && signal.reason
  if (reason instanceof Error && reason.name === 'AbortError') return reason
  const error = new Error('This operation was aborted')
  error.name = 'AbortError'
  error.code = 'ABORT_ERR'
  if (reason !== undefined) error.cause = reason
  return error
}

// ------------------------------------------------------------------------------------------
// F-001 … F-003, F-005

function countTokens(messages, options) {
  const opts = checkOptions(options)
  const list = checkedMessages(messages)
  return callNative(() => native.countTokensJson(list, encodingOf(opts), formatOf(opts)))
}

// What the model wrote, in every format: an assistant message (Anthropic, OpenAI Chat, AI SDK,
// Bedrock, a Responses message), a Gemini `model` content, a Responses output item (reasoning,
// a call), or a LangChain AI message (an instance, its serialized or its stored form).
const RESPONSES_OUTPUT_ITEMS = /_call$|^reasoning$|^compaction$|^mcp_list_tools$|^mcp_approval_request$/

function isModelMessage(m) {
  if (m === null || typeof m !== 'object') return false
  if (m.role === 'assistant' || m.role === 'model') return true
  if (m.role === undefined && typeof m.type === 'string') {
    if (RESPONSES_OUTPUT_ITEMS.test(m.type)) return true
    if (m.type === 'ai') return true
    if (m.type === 'constructor' && Array.isArray(m.id)) return /^AIMessage(Chunk)?$/.test(m.id[m.id.length - 1])
  }
  if (typeof m._getType === 'function') {
    try {
      return m._getType() === 'ai'
    } catch {
      return false
    }
  }
  return false
}

function lastAssistantIndex(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (isModelMessage(messages[i])) return i
  }
  return -1
}

// The trigger's estimate (SPEC §4.2): usage, calibration, model factor or raw count; and
// what fires a compaction (tokens, maxMessages, maxToolOutputBytes, force). `toolBytes` is the
// tool output of the list, needed only when `maxToolOutputBytes` is set.
function measureCounts(messages, counts, opts, calibration, toolBytes = 0) {
  let total = 0
  for (const n of counts) total += n
  const last = lastAssistantIndex(messages)
  let after = null
  if (last >= 0) {
    after = 0
    for (let i = last + 1; i < counts.length; i++) after += counts[i]
  }
  const json = callNative(() =>
    native.measureJson(
      total,
      after,
      optionsJson(opts),
      calibration ? JSON.stringify(calibration) : null,
      messages.length,
      toolBytes,
    ),
  )
  const measure = JSON.parse(json)
  const trigger = measure.trigger ?? null
  return {
    messageTokens: total,
    rawTokens: measure.rawTokens,
    tokens: measure.tokens,
    source: measure.source,
    factor: measure.factor,
    threshold: measure.threshold,
    // `force` is about compact(), not about whether the conversation needs it.
    shouldCompact: trigger !== null && trigger !== 'force',
    trigger: trigger === 'force' ? null : trigger,
    tokensAfterLastAssistant: after,
  }
}

function needsToolBytes(opts) {
  return opts.maxToolOutputBytes !== undefined && opts.maxToolOutputBytes !== null
}

function toolOutputBytes(messages, opts) {
  if (!needsToolBytes(opts)) return 0
  const list = checkedMessages(messages)
  return callNative(() => native.toolOutputBytesJson(list, formatOf(opts))).reduce((a, b) => a + b, 0)
}

function countEach(messages, opts) {
  const list = checkedMessages(messages)
  return callNative(() => native.countEachJson(list, encodingOf(opts), formatOf(opts)))
}

function measureTokens(messages, options) {
  const opts = checkOptions(options)
  const counts = countEach(messages, opts)
  const { tokensAfterLastAssistant, ...measure } = measureCounts(messages, counts, opts, null, toolOutputBytes(messages, opts))
  return measure
}

function shouldCompact(messages, options) {
  return measureTokens(messages, options).shouldCompact
}

function partitionMessages(messages, tailRetentionTokens, options) {
  const opts = checkOptions(options)
  if (typeof tailRetentionTokens !== 'number' || !(tailRetentionTokens >= 0)) {
    throw invalidArgument(`tailRetentionTokens must be a non-negative number, got ${describe(tailRetentionTokens)}`)
  }
  const list = checkedMessages(messages)
  const cut = callNative(() => native.partitionJson(list, tailRetentionTokens, optionsJson(opts)))
  return {
    head: messages.slice(0, cut.headLen),
    middle: messages.slice(cut.headLen, cut.tailStart),
    tail: messages.slice(cut.tailStart),
  }
}

// The summary is a user message in the format of head and tail (detected, or `options.format`):
// `{role: 'user', content}` for Anthropic, OpenAI Chat and the AI SDK, `{role: 'user', parts}`
// for Gemini, and so on.
function assembleMessages(head, summary, tail, options) {
  if (!Array.isArray(head)) throw invalidArgument(`head must be an array of message objects, got ${describe(head)}`)
  if (!Array.isArray(tail)) throw invalidArgument(`tail must be an array of message objects, got ${describe(tail)}`)
  if (typeof summary !== 'string') throw invalidArgument(`summary must be a string, got ${describe(summary)}`)
  const opts = checkOptions(options)
  if (summary.trim() === '') {
    process.emitWarning('assembleMessages: the summary is empty', { code: 'CONTEXT_COMPACT_EMPTY_SUMMARY' })
  }
  const around = [...head, ...tail]
  const written = JSON.parse(callNative(() => native.summaryMessageJson(summary, around, formatOf(opts))))
  return [...head, ...piecesToMessages(written, around), ...tail]
}

// ------------------------------------------------------------------------------------------
// Validity report (what the APIs would reject with a 400). Logic in crates/core/src/check.rs.

function checkMessages(messages, options) {
  const opts = checkOptions(options)
  const list = checkedMessages(messages)
  return JSON.parse(callNative(() => native.checkJson(list, formatOf(opts))))
}

// ------------------------------------------------------------------------------------------
// F-004, F-006 and the pipeline

// Wraps the caller's summarizer so the addon always gets a Promise of a string, and the
// caller gets its own message objects.
// The request a JS summarizer receives. `messages` are the caller's own objects (and, in a
// later round, the summary the library made); `prompt` is rendered when it is first read, since
// many summarizers never read it (see `SummarizeCall` in src/lib.rs).
function summaryRequest(call, messages, format) {
  let made = 0
  const chunk = call.origins.map((origin) => (origin === null ? JSON.parse(call.made[made++]) : messages[origin]))
  let prompt
  const request = {
    messages: chunk,
    previousSummary: call.previousSummary ?? null,
    model: call.model ?? null,
    customInstructions: call.customInstructions ?? null,
    maxTokens: call.maxTokens,
    attempt: call.attempt,
  }
  Object.defineProperty(request, 'prompt', {
    enumerable: true,
    configurable: true,
    get() {
      if (prompt === undefined) {
        prompt = callNative(() =>
          native.renderSummaryPromptJson(
            checkedMessages(chunk),
            call.instructions,
            call.previousSummary ?? null,
            call.maxToolResultChars ?? null,
            format,
          ),
        )
      }
      return prompt
    },
    set(value) {
      prompt = value
    },
  })
  return request
}

function wrapSummarizer(summarizer, messages, format) {
  if (!summarizer) return undefined
  return async (call) => {
    const text = await summarizer(summaryRequest(call, messages, format))
    if (typeof text !== 'string') {
      throw new TypeError(`the summarizer must resolve with a string, got ${describe(text)}`)
    }
    return text
  }
}

const LOG_LEVELS = new Set(['error', 'warn', 'info', 'debug'])

// `onLog(entry)` and/or `logger` (an object with error/warn/info/debug methods, e.g. console)
// receive the log entries of one call; the addon then does not print them to stderr.
function wrapLog(opts) {
  const onLog = checkFunction(opts, 'onLog')
  const logger = opts.logger ?? undefined
  if (logger !== undefined && (typeof logger !== 'object' || Array.isArray(logger))) {
    throw invalidArgument(`options.logger must be an object with error/warn/info/debug methods, got ${describe(logger)}`)
  }
  if (!onLog && !logger) return undefined
  return (entryJson) => {
    try {
      const raw = JSON.parse(entryJson)
      const entry = { level: LOG_LEVELS.has(raw.level) ? raw.level : 'debug', message: String(raw.message ?? '') }
      if (raw.fields && typeof raw.fields === 'object') entry.fields = raw.fields
      if (raw.target) entry.target = raw.target
      if (onLog) onLog(entry)
      if (logger) {
        const method = [entry.level, 'log'].map((name) => logger[name]).find((fn) => typeof fn === 'function')
        if (method) {
          if (entry.fields) method.call(logger, `context-compact: ${entry.message}`, entry.fields)
          else method.call(logger, `context-compact: ${entry.message}`)
        }
      }
    } catch (error) {
      // A logger's bug must not break compaction.
      process.emitWarning(`onLog listener threw: ${error && error.message}`, { code: 'CONTEXT_COMPACT_LISTENER' })
    }
  }
}

function wrapEvents(onEvent) {
  if (!onEvent) return undefined
  return (eventJson) => {
    try {
      onEvent(JSON.parse(eventJson))
    } catch (error) {
      // A listener's bug must not break compaction.
      process.emitWarning(`onEvent listener threw: ${error && error.message}`, { code: 'CONTEXT_COMPACT_LISTENER' })
    }
  }
}

// Runs a native async call with an AbortSignal: rejects with AbortError as soon as the signal
// fires, and cancels the native work (in-flight HTTP requests, retry waits) at the same time.
async function withSignal(signal, run) {
  if (signal && signal.aborted) throw abortError(signal)
  const cancelId = native.createCancelToken()
  let onAbort
  try {
    const work = run(cancelId)
    if (!signal) return await work
    work.catch(() => {}) // settled later, after the abort won the race
    const aborted = new Promise((_, reject) => {
      onAbort = () => {
        native.cancelToken(cancelId)
        reject(abortError(signal))
      }
      signal.addEventListener('abort', onAbort, { once: true })
    })
    return await Promise.race([work, aborted])
  } catch (error) {
    if (error && error.code === 'Cancelled') throw abortError(signal)
    throw translateError(error)
  } finally {
    if (signal && onAbort) signal.removeEventListener('abort', onAbort)
    native.releaseCancelToken(cancelId)
  }
}

async function generateSummary(middle, options) {
  const opts = checkOptions(options)
  const list = checkedMessages(middle, 'middle')
  const summarizer = wrapSummarizer(checkFunction(opts, 'summarizer'), middle, formatOf(opts))
  const signal = checkSignal(opts)
  const onLog = wrapLog(opts)
  const optsJson = optionsJson(opts)
  try {
    return await withSignal(signal, (cancelId) => native.generateSummaryJson(list, optsJson, summarizer, cancelId, onLog))
  } catch (error) {
    // "OVERLOADED: … (after 3 attempt(s))": expose the stable code like CompactResult.error does.
    const match = error && error.name !== 'AbortError' && /^([A-Z_]+): /.exec(error.message)
    if (match) error.code = match[1]
    throw error
  }
}

async function persistMessages(middle, outputDir, sessionId, options) {
  const opts = checkOptions(options)
  const store = checkArchiveStore(opts.archiveStore)
  const list = checkedMessages(middle, 'middle')
  if (typeof outputDir !== 'string' || outputDir === '') {
    throw invalidArgument(`outputDir must be a non-empty string, got ${describe(outputDir)}`)
  }
  if (typeof sessionId !== 'string') throw invalidArgument(`sessionId must be a string, got ${describe(sessionId)}`)
  callNative(() => native.validateSessionId(sessionId))
  try {
    return await withArchiveStore(store, (id) =>
      native.persistMessagesJson(list, outputDir, sessionId, formatOf(opts), storeJson(opts, id)),
    )
  } catch (error) {
    throw translateError(error)
  }
}

// ------------------------------------------------------------------------------------------
// Context offload on its own (PRD UC-004). Logic in crates/core/src/offload.rs.

const OFFLOAD_SCOPES = new Set(['tool-results', 'all'])

async function offloadToolResults(messages, options) {
  const opts = checkOptions(options)
  const list = checkedMessages(messages)
  const maxTokens = opts.maxTokens
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens <= 0 || maxTokens > 0xffffffff) {
    throw invalidArgument(`options.maxTokens must be a positive integer, got ${describe(maxTokens)}`)
  }
  const scope = opts.scope ?? 'tool-results'
  if (!OFFLOAD_SCOPES.has(scope)) {
    throw invalidArgument(`options.scope must be 'tool-results' or 'all', got ${describe(scope)}`)
  }
  if (opts.outputDir != null) checkOutputDir(opts.outputDir, 'options.outputDir')
  if (opts.sessionId != null) checkSessionId(opts.sessionId, 'options.sessionId')
  const store = checkArchiveStore(opts.archiveStore)
  const plain = {
    outputDir: opts.outputDir,
    sessionId: opts.sessionId,
    encoding: opts.encoding,
    offload: scope,
    format: opts.format,
    storeOptions: opts.storeOptions,
  }
  const out = JSON.parse(
    await withArchiveStore(store, (id) => nativeAsync(() => native.offloadToolResultsJson(list, maxTokens, optionsJson(plain, id)))),
  )
  const changed = out.pieces.some((piece) => typeof piece !== 'number')
  return {
    messages: changed ? piecesToMessages(out.pieces, messages) : messages,
    offloaded: out.offloaded,
    archivePath: out.archivePath ?? null,
    error: out.error ?? null,
  }
}

// ------------------------------------------------------------------------------------------
// History (SanBot): list, restore (rollback), prune (retention). Logic in crates/core.

function checkOutputDir(outputDir, name = 'outputDir') {
  if (typeof outputDir !== 'string' || outputDir === '') {
    throw invalidArgument(`${name} must be a non-empty string, got ${describe(outputDir)}`)
  }
  return outputDir
}

function checkSessionId(sessionId, name = 'sessionId') {
  if (typeof sessionId !== 'string') throw invalidArgument(`${name} must be a string, got ${describe(sessionId)}`)
  callNative(() => native.validateSessionId(sessionId))
  return sessionId
}

async function nativeAsync(run) {
  try {
    return await run()
  } catch (error) {
    throw translateError(error)
  }
}

// ------------------------------------------------------------------------------------------
// Archive stores (issue 14): `outputDir` may be an object-store URL configured by
// `storeOptions`, or the caller passes its own store as `archiveStore` (index.d.ts:
// `ArchiveStore`). The store's functions are registered with the addon for one call.

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

async function listArchives(outputDir, sessionId, options) {
  checkOutputDir(outputDir)
  checkSessionId(sessionId)
  const opts = checkOptions(options)
  const store = checkArchiveStore(opts.archiveStore)
  return JSON.parse(
    await withArchiveStore(store, (id) => nativeAsync(() => native.listArchivesJson(outputDir, sessionId, storeJson(opts, id)))),
  )
}

async function restoreMessages(messages, options) {
  const opts = checkOptions(options)
  const list = checkedMessages(messages)
  const outputDir = opts.outputDir == null ? null : checkOutputDir(opts.outputDir, 'options.outputDir')
  const sessionId = opts.sessionId == null ? null : checkSessionId(opts.sessionId, 'options.sessionId')
  const store = checkArchiveStore(opts.archiveStore)
  const out = JSON.parse(
    await withArchiveStore(store, (id) =>
      nativeAsync(() => native.restoreMessagesJson(list, outputDir, sessionId, formatOf(opts), storeJson(opts, id))),
    ),
  )
  if (out.error) {
    // Not the caller's mistake but a missing or unusable archive: a plain Error with a code.
    const error = new Error(out.error.message)
    error.code = out.error.code
    throw error
  }
  // Messages that were never compacted are the caller's own objects.
  return piecesToMessages(out.pieces, messages)
}

async function pruneArchives(outputDir, options) {
  checkOutputDir(outputDir)
  const opts = checkOptions(options)
  const days = opts.olderThanDays
  if (days != null && (typeof days !== 'number' || !Number.isFinite(days) || days < 0)) {
    throw invalidArgument(`options.olderThanDays must be a non-negative number, got ${describe(days)}`)
  }
  const sessionId = opts.sessionId == null ? null : checkSessionId(opts.sessionId, 'options.sessionId')
  const store = checkArchiveStore(opts.archiveStore)
  return JSON.parse(
    await withArchiveStore(store, (id) =>
      nativeAsync(() => native.pruneArchivesJson(outputDir, days ?? null, sessionId, storeJson(opts, id))),
    ),
  )
}

// A result's pieces: an index is the caller's own message object; anything else is a message
// the library wrote (the summary, a shortened result), in the list's format. LangChain
// messages the library writes arrive in their serialized form and are made instances (or the
// stored form) when the list holds those.
function piecesToMessages(pieces, messages) {
  let langChain
  return pieces.map((piece) => {
    if (typeof piece === 'number') return messages[piece]
    if (piece !== null && typeof piece === 'object' && piece.lc === 1 && piece.type === 'constructor') {
      langChain ??= langChainForms(messages)
      return langChain(piece)
    }
    return piece
  })
}

function langChainClassName(message) {
  const ctor = message && typeof message === 'object' ? message.constructor : undefined
  if (!ctor || ctor === Object) return undefined
  try {
    if (typeof ctor.lc_name === 'function') return ctor.lc_name()
  } catch {
    // fall through to the constructor's own name
  }
  return ctor.name
}

function langChainForms(messages) {
  const classes = new Map()
  let stored = false
  for (const message of messages) {
    const name = langChainClassName(message)
    if (name && /Message(Chunk)?$/.test(name) && !classes.has(name)) classes.set(name, message.constructor)
    if (message && typeof message === 'object' && message.lc === undefined && message.data && typeof message.type === 'string') stored = true
  }
  let library
  const fromLibrary = (name) => {
    if (library === undefined) {
      try {
        const { createRequire } = require('node:module')
        const path = require('node:path')
        library = createRequire(path.join(process.cwd(), 'index.js'))('@langchain/core/messages')
      } catch {
        library = null
      }
    }
    return library ? library[name] : undefined
  }
  const STORED_TYPES = { HumanMessage: 'human', AIMessage: 'ai', SystemMessage: 'system', ToolMessage: 'tool' }
  return (serialized) => {
    const name = serialized.id[serialized.id.length - 1]
    if (classes.size > 0) {
      const Ctor = classes.get(name) ?? fromLibrary(name)
      if (typeof Ctor === 'function') return new Ctor(serialized.kwargs)
    }
    if (stored) return { type: STORED_TYPES[name] ?? 'human', data: { ...serialized.kwargs } }
    return serialized
  }
}

function buildResult(messages, outcome) {
  const base = {
    provider: outcome.provider ?? null,
    model: outcome.model ?? null,
    attempts: outcome.attempts ?? 0,
    warnings: outcome.warnings ?? [],
    tokens: outcome.triggerTokens,
    threshold: outcome.thresholdTokens,
    measure: outcome.measure ?? null,
    strategy: outcome.strategy ?? 'summary',
    trigger: outcome.trigger ?? null,
    rounds: outcome.rounds ?? 0,
    removed: outcome.removed ?? null,
    fallback: outcome.fallback ?? false,
    extracted: outcome.extracted ?? null,
    offloaded: outcome.offloaded ?? [],
    offloadArchivePath: outcome.offloadArchivePath ?? null,
    transformations: outcome.transformations ?? [],
    thinkingArchivePath: outcome.thinkingArchivePath ?? null,
    compactionUnavailable: outcome.compactionUnavailable ?? null,
  }
  if (!outcome.compacted) {
    return {
      messages,
      compacted: false,
      summary: null,
      archivePath: null,
      stats: { ...ZERO_STATS },
      error: outcome.error ?? null,
      ...base,
    }
  }
  return {
    messages: piecesToMessages(outcome.pieces, messages),
    compacted: true,
    summary: outcome.summary,
    archivePath: outcome.archivePath ?? null,
    stats: outcome.stats,
    // A compacted result still over the threshold says so (STILL_OVER_LIMIT).
    error: outcome.error ?? null,
    ...base,
  }
}

// `onBeforeCompact(info)` may return false, or a Promise of false, to decline. The addon awaits
// this wrapper before anything is summarized or written.
function wrapBeforeCompact(onBeforeCompact) {
  if (!onBeforeCompact) return undefined
  return async (infoJson) => (await onBeforeCompact(JSON.parse(infoJson))) !== false
}

async function runCompaction(messages, opts, counts, calibration, markMap) {
  if (isCustomStrategy(opts.strategy)) return runCustomStrategy(messages, opts, counts, calibration, markMap)
  checkedMessages(messages)
  const summarizer = wrapSummarizer(checkFunction(opts, 'summarizer'), messages, formatOf(opts))
  const onEvent = wrapEvents(checkFunction(opts, 'onEvent'))
  const onBeforeCompact = wrapBeforeCompact(checkFunction(opts, 'onBeforeCompact'))
  const onLog = wrapLog(opts)
  const signal = checkSignal(opts)
  const store = checkArchiveStore(opts.archiveStore)
  const outcomeJson = await withArchiveStore(store, (storeId) => {
    const optsJson = optionsJson(opts, storeId)
    return withSignal(signal, (cancelId) =>
      native.compactJson(
        messages,
        optsJson,
        counts ?? null,
        summarizer,
        onEvent,
        cancelId,
        calibration ? JSON.stringify(calibration) : null,
        onLog,
        onBeforeCompact,
      ),
    )
  })
  return buildResult(messages, JSON.parse(outcomeJson))
}

async function compactMessages(messages, options) {
  const opts = checkOptions(options)
  if (opts.overflow === undefined || opts.overflow === null) return runCompaction(messages, opts)
  const counts = countEach(messages, opts)
  const calibration = overflowCalibration(messages, counts, opts, null)
  return runCompaction(messages, { ...opts, force: true }, counts, calibration)
}

// `overflow`: the agent's API refused the last request as too long (see isContextOverflow), so
// the estimate was low. The calibration is raised so that no estimate is below what that
// request must have been billed — the prompt size the error names, else more than the window
// (SPEC §4.8) — and the compaction runs whatever the estimate says.
function overflowCalibration(messages, counts, opts, calibration) {
  const raw = measureCounts(messages, counts, { ...opts, usage: undefined }, null).rawTokens
  const { messages: texts } = gatherErrorSignals(opts.overflow)
  const json = callNative(() =>
    native.calibrateOverflowJson(calibration ? JSON.stringify(calibration) : null, raw, texts, optionsJson(opts)),
  )
  return JSON.parse(json)
}

// ------------------------------------------------------------------------------------------
// Custom strategies (type seed's `CompressionStrategy`): `strategy: { compress(messages,
// markMap, config) }`. The trigger, the confirmation hook, the events, the archive of what the
// strategy removed and the tool-pair check are the library's; the strategy only decides what
// to keep.

const PAIRING_KINDS = new Set(['orphan_tool_result', 'missing_tool_result'])

function pairingProblemsOf(messages, opts) {
  return checkMessages(messages, { format: opts?.format }).filter((problem) => PAIRING_KINDS.has(problem.kind))
}

function strategyFailure(message) {
  return { code: 'STRATEGY_FAILED', message, attempts: 0 }
}

function isMarkMap(value) {
  return (
    value !== null &&
    typeof value === 'object' &&
    Array.isArray(value.originalIndices) &&
    Array.isArray(value.batchBoundaries) &&
    Array.isArray(value.boundaryToBatch) &&
    value.batchBoundaries.length === value.boundaryToBatch.length &&
    value.boundaryToBatch.includes(value.currentBatch)
  )
}

async function runCustomStrategy(messages, opts, counts, calibration, markMap) {
  const strategy = opts.strategy
  const signal = checkSignal(opts)
  const onEvent = checkFunction(opts, 'onEvent')
  const onBeforeCompact = checkFunction(opts, 'onBeforeCompact')
  const emit = (event) => {
    if (!onEvent) return
    try {
      onEvent(event)
    } catch (error) {
      process.emitWarning(`onEvent listener threw: ${error && error.message}`, { code: 'CONTEXT_COMPACT_LISTENER' })
    }
  }
  const abortIfNeeded = () => {
    if (signal && signal.aborted) throw abortError(signal)
  }
  abortIfNeeded()
  counts = counts ?? countEach(messages, opts)
  const m = measureCounts(messages, counts, opts, calibration, toolOutputBytes(messages, opts))
  const trigger = m.trigger ?? (opts.force && messages.length > 0 && opts.compression?.enabled !== false ? 'force' : null)
  const { tokensAfterLastAssistant, shouldCompact: _, trigger: __, ...measure } = m
  const base = {
    provider: null,
    model: null,
    attempts: 0,
    warnings: [],
    tokens: m.tokens,
    threshold: m.threshold,
    measure,
    strategy: 'custom',
    trigger,
    rounds: 0,
    removed: null,
    fallback: false,
    extracted: null,
    offloaded: [],
    offloadArchivePath: null,
    transformations: [],
    thinkingArchivePath: null,
    compactionUnavailable: null,
  }
  const unchanged = (error) => ({
    messages,
    compacted: false,
    summary: null,
    archivePath: null,
    stats: { ...ZERO_STATS },
    error,
    ...base,
  })
  if (trigger === null) return unchanged(null)
  if (m.tokens >= m.threshold) emit({ type: 'token_limit_exceeded', tokensUsed: m.tokens, tokenLimit: m.threshold })
  if (onBeforeCompact) {
    const info = {
      tokens: m.tokens,
      threshold: m.threshold,
      messageCount: messages.length,
      middleCount: null,
      headLength: null,
      tailStart: null,
      trigger,
      strategy: 'custom',
      fallback: false,
    }
    let answer
    try {
      answer = await onBeforeCompact(info)
    } catch (error) {
      return unchanged({ code: 'DECLINED', message: `onBeforeCompact failed: ${error && error.message}`, attempts: 0 })
    }
    if (answer === false) {
      return unchanged({ code: 'DECLINED', message: 'onBeforeCompact declined the compaction', attempts: 0 })
    }
  }
  abortIfNeeded()
  emit({ type: 'started', tokens: m.tokens, threshold: m.threshold, messageCount: messages.length, middleCount: null, trigger, strategy: 'custom' })
  const fail = async (error) => {
    emit({ type: 'failed', error })
    const result = unchanged(error)
    // The audit log records failed attempts too.
    try {
      const record = { compacted: false, tokens: m.tokens, threshold: m.threshold, error, warnings: [] }
      await withArchiveStore(checkArchiveStore(opts.archiveStore), (id) =>
        native.recordCustomCompactionJson([], optionsJson(opts, id), JSON.stringify(record)),
      )
    } catch (recordError) {
      result.warnings = [...result.warnings, `could not record the compaction: ${recordError && recordError.message}`]
    }
    return result
  }
  const compression = opts.compression && typeof opts.compression === 'object' ? opts.compression : {}
  const config = {
    enabled: compression.enabled ?? true,
    threshold: m.threshold,
    targetTokens: compression.targetTokens ?? callNative(() => native.tailRetentionTokensJson(optionsJson(opts))),
  }
  const given = markMap ? structuredClone(markMap) : createMarkMap(messages.length)
  let out
  try {
    out = await strategy.compress(messages.slice(), structuredClone(given), config)
  } catch (error) {
    return fail(strategyFailure(`the strategy's compress() failed: ${error && error.message}`))
  }
  abortIfNeeded()
  if (!out || !Array.isArray(out.messages)) {
    return fail(strategyFailure(`compress() must resolve with { messages, markMap }, got ${describe(out)}`))
  }
  const output = out.messages
  try {
    callNative(() => native.validateJson(checkedMessages(output, 'compress().messages'), formatOf(opts)))
  } catch (error) {
    return fail(strategyFailure(`compress() returned invalid messages: ${error.message}`))
  }
  // The output must keep the pairing rules whenever the input did (SPEC §4.1).
  const problems = pairingProblemsOf(output, opts)
  if (problems.length > 0 && pairingProblemsOf(messages, opts).length === 0) {
    return fail(
      strategyFailure(`compress() broke tool-call pairing: messages[${problems[0].index}]: ${problems[0].message}`),
    )
  }
  const kept = new Set(output)
  const removed = messages.filter((message) => !kept.has(message))
  const same = output.length === messages.length && output.every((message, i) => message === messages[i])
  if (same) return unchanged(null)
  // The post-condition holds for custom strategies too (SPEC §4.7): never a larger list, and a
  // result over the threshold says so.
  const original = counts.reduce((a, b) => a + b, 0)
  const compactedTokens = output.length === 0 ? 0 : countTokens(output, opts)
  const estimate = Math.ceil(m.tokens - (original - compactedTokens) * Math.max(1, m.factor))
  const numbers = { tokens: estimate, originalTokens: m.tokens, threshold: m.threshold }
  if (compactedTokens >= original) {
    return fail({
      code: 'NOT_SMALLER',
      message: `the strategy's result has ${compactedTokens} tokens, not fewer than the ${original} of the input; the input is returned unchanged`,
      attempts: 0,
      ...numbers,
    })
  }
  let archivePath = null
  if (removed.length > 0) {
    try {
      archivePath = await withArchiveStore(checkArchiveStore(opts.archiveStore), (id) =>
        native.persistMessagesJson(
          checkedMessages(removed),
          opts.outputDir ?? './.context-compact',
          opts.sessionId ?? 'default',
          formatOf(opts),
          storeJson(opts, id),
        ),
      )
    } catch (error) {
      const warning = `could not archive the ${removed.length} removed messages: ${error.message}`
      if (opts.requireArchive) return fail({ code: 'ARCHIVE_FAILED', message: warning, attempts: 0 })
      base.warnings.push(warning)
    }
  }
  // The library adds no message that stands for what a custom strategy dropped (whatever the
  // strategy wrote in its place is its own): the caller's objects it returned are retained, the
  // rest removed, none compacted.
  const retained = messages.length - removed.length
  const stats = {
    originalTokenCount: original,
    compactedTokenCount: compactedTokens,
    compactionRatio: original === 0 ? 0 : compactedTokens / original,
    compactedMessageCount: 0,
    retainedMessageCount: retained,
    removedMessageCount: removed.length,
  }
  let error = null
  if (estimate >= m.threshold) {
    const message = `the compacted list is still over the threshold: about ${estimate} tokens (from ${m.tokens}), threshold ${m.threshold}; the custom strategy kept too much`
    error = { code: 'STILL_OVER_LIMIT', message, attempts: 0, ...numbers }
    base.warnings.push(message)
  }
  // The audit line and extracted memory, as for the built-in strategies.
  try {
    const record = { compacted: true, archivePath, stats, tokens: m.tokens, threshold: m.threshold, error, warnings: base.warnings }
    const recorded = JSON.parse(
      await withArchiveStore(checkArchiveStore(opts.archiveStore), (id) =>
        native.recordCustomCompactionJson(checkedMessages(removed), optionsJson(opts, id), JSON.stringify(record)),
      ),
    )
    base.warnings = recorded.warnings
    base.extracted = recorded.extracted ?? null
  } catch (recordError) {
    base.warnings.push(`could not record the compaction: ${recordError && recordError.message}`)
  }
  emit({
    type: 'completed',
    originalTokens: original,
    newTokens: compactedTokens,
    savedRatio: original === 0 ? 0 : 1 - compactedTokens / original,
    summary: null,
    strategy: 'custom',
    rounds: 0,
    archivePath,
    error,
  })
  const result = {
    messages: output,
    compacted: true,
    summary: null,
    archivePath,
    stats,
    error,
    ...base,
    removed: {
      messagesRemoved: removed.length,
      toolResultsCleared: 0,
      skillMessagesDropped: 0,
      turnsRemoved: 0,
      steps: [],
    },
  }
  // The mark map the strategy returned, when it is a valid one.
  result.markMap = isMarkMap(out.markMap) ? out.markMap : null
  return result
}

// ------------------------------------------------------------------------------------------
// MessageMarkMap (type seed §二): batches of compacted messages, by original index. The three
// helpers are the seed's code, unchanged.

function getCurrentBatchIndices(markMap) {
  const currentBoundaryIndex = markMap.boundaryToBatch.indexOf(markMap.currentBatch)
  const boundary = markMap.batchBoundaries[currentBoundaryIndex]

  return markMap.originalIndices.filter((index) => index >= boundary)
}

function isModified(originalIndex, markMap) {
  const currentBoundaryIndex = markMap.boundaryToBatch.indexOf(markMap.currentBatch)
  const boundary = markMap.batchBoundaries[currentBoundaryIndex]
  return originalIndex < boundary
}

function getBatchIndex(originalIndex, markMap) {
  const currentBoundaryIndex = markMap.boundaryToBatch.indexOf(markMap.currentBatch)
  const boundary = markMap.batchBoundaries[currentBoundaryIndex]
  return originalIndex - boundary
}

/** A mark map for `length` messages in one batch (seed §八.1, with the indices added). */
function createMarkMap(length = 0) {
  if (!Number.isInteger(length) || length < 0) {
    throw invalidArgument(`length must be a non-negative integer, got ${describe(length)}`)
  }
  return {
    originalIndices: Array.from({ length }, (_, i) => i),
    batchBoundaries: [0],
    boundaryToBatch: [0],
    currentBatch: 0,
  }
}

// ------------------------------------------------------------------------------------------
// The stateful form

// A Compactor caches, per message object, what the addon computed from it (token count, tool
// output bytes) together with a snapshot: the message as the addon read it, flattened into a
// tape. A cached value is used only when the message, read again now, gives the same tape, so
// a message changed in place in any way (text appended, content replaced, blocks pushed or
// spliced, a nested tool input edited, a key added or deleted, `tool_calls` pushed ...) is
// counted again; nothing about messages has to be immutable.
//
// The tape is written by `snapshotOf` and checked by `matchesSnapshot`, two walks in the same
// order with the same rules as the addon's reader (src/js_json.rs, JSON.stringify's rules):
//   - a primitive (string, number, boolean, null, undefined, symbol, bigint) or a function is
//     one item, the value itself;
//   - an object with a `toJSON` method is TO_JSON, then what `toJSON(key)` returns (walked
//     without looking for `toJSON` again, as the reader does);
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

const ARRAY = Symbol('array')
const OBJECT = Symbol('object')
const TO_JSON = Symbol('toJSON')
// The reader's MAX_DEPTH: a deeper (or circular) message is an error there, a mismatch here.
const SNAPSHOT_MAX_DEPTH = 128

// `toJSON`'s argument, made only when it is called (indices are carried as numbers).
const jsonKey = (key) => (typeof key === 'number' ? String(key) : key)

// Appends the tape of `value` (property `key`) to `tape`; false when nested too deep.
function snapshotOf(value, key, tape, depth) {
  if (typeof value !== 'object' || value === null) {
    tape.push(value)
    return true
  }
  if (depth >= SNAPSHOT_MAX_DEPTH) return false
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

class Compactor {
  #options
  // Message object → { tape, tokens, bytes } (bytes: -1 until maxToolOutputBytes needs it).
  #cache = new WeakMap()
  #calibration = null
  // MessageMarkMap bookkeeping: the original index of every message object seen (counted
  // across the whole session), the messages this compactor made (summaries, notices, cleared
  // tool results: not originals), and for each batch after the first, the list its compaction
  // returned and how many originals existed then (for rollback).
  #origin = new WeakMap()
  #generated = new WeakSet()
  #nextOriginal = 0
  #markMap = createMarkMap(0)
  #batches = []
  #lastMessages = null
  // Models on which provider 'anthropic-compaction' turned out to be unavailable.
  #compactionUnavailable = new Set()
  // The list shouldCompact last reported as over the limit (token_limit_exceeded), so that
  // compact() on the same list does not report it again.
  #limitReported = null

  constructor(options) {
    this.#options = { ...checkOptions(options) }
    // Fail early on invalid options rather than on the first turn.
    measureCounts([], [], this.#options, null)
    checkFunction(this.#options, 'summarizer')
    checkFunction(this.#options, 'onEvent')
    checkFunction(this.#options, 'onBeforeCompact')
    checkArchiveStore(this.#options.archiveStore)
    wrapLog(this.#options)
  }

  /** The options this compactor was created with (a copy). */
  get options() {
    return { ...this.#options }
  }

  /** The session's MessageMarkMap (a copy): one batch per compaction, rollback removes batches. */
  get markMap() {
    return structuredClone(this.#markMap)
  }

  // Gives every message object not seen before the next original index.
  #track(messages) {
    for (const message of messages) {
      if (message === null || typeof message !== 'object') continue
      if (this.#origin.has(message) || this.#generated.has(message)) continue
      this.#origin.set(message, this.#nextOriginal)
      this.#markMap.originalIndices.push(this.#nextOriginal)
      this.#nextOriginal += 1
    }
  }

  // The cache entry of every message of `messages` that is unchanged since it was cached, and
  // new entries (counted now, snapshot taken) for the others; a non-object is never cached
  // (the addon reports it). Each message is compared with its snapshot once per call.
  #entries(messages) {
    checkedMessages(messages)
    const entries = new Array(messages.length)
    const missing = []
    const missingIndex = []
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i]
      const entry = message !== null && typeof message === 'object' ? this.#cache.get(message) : undefined
      if (entry !== undefined && unchangedSince(message, i, entry.tape)) {
        entries[i] = entry
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
    entries.format = this.#readInListFormat(messages, entries)
    return entries
  }

  // Messages counted apart (on different calls, or alone) were read in the format their batch
  // said; the list's format is the one its first message that says one names (or the
  // option's). Those read otherwise are counted again in it, as the stateless countTokens reads
  // them — including when that refuses them.
  #readInListFormat(messages, entries) {
    let format = formatOf(this.#options)
    if (format === undefined) {
      format = 'anthropic'
      let first = -1
      for (let i = 0; i < entries.length; i++) {
        const signature = entries[i].signature
        if (!signature) continue
        if (first < 0) {
          first = i
          format = signature
        } else if (signature !== format) {
          // Mixed: the stateless reading says so, naming the messages.
          callNative(() => native.countEachJson(messages, encodingOf(this.#options)))
        }
      }
    }
    const stale = []
    for (let i = 0; i < entries.length; i++) if (entries[i].readAs !== format) stale.push(i)
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

  // Token counts per message.
  #countEach(messages) {
    return this.#entries(messages).map((entry) => entry.tokens)
  }

  // The tool output of a list (maxToolOutputBytes), from entries of the same call.
  #toolOutputBytes(messages, entries, opts) {
    if (!needsToolBytes(opts)) return 0
    const missing = []
    const missingEntries = []
    for (let i = 0; i < entries.length; i++) {
      if (entries[i].bytes < 0) {
        missing.push(messages[i])
        missingEntries.push(entries[i])
      }
    }
    if (missing.length > 0) {
      const bytes = callNative(() => native.toolOutputBytesJson(missing, entries.format ?? formatOf(this.#options)))
      for (let j = 0; j < missing.length; j++) missingEntries[j].bytes = bytes[j]
    }
    let total = 0
    for (const entry of entries) total += entry.bytes
    return total
  }

  countTokens(messages) {
    let total = 0
    for (const entry of this.#entries(messages)) total += entry.tokens
    return total
  }

  /**
   * What this compactor learned from usage reports: the billed-per-raw-token slope (null until
   * enough growth was seen), the latest billed/raw ratio, and how many reports it saw.
   */
  get calibration() {
    const c = this.#calibration
    if (!c || !c.latest) return null
    const [firstRaw, firstBilled] = c.first
    const [raw, billed] = c.latest
    const slope = raw - firstRaw >= 2000 && billed > firstBilled ? (billed - firstBilled) / (raw - firstRaw) : null
    return { slope, ratio: billed / raw, samples: c.samples }
  }

  // Learns from a usage report (before measuring with it).
  #observe(messages, counts, opts) {
    if (opts.usage === undefined || opts.usage === null) return
    const m = measureCounts(messages, counts, { ...opts, usage: undefined }, null)
    if (m.tokensAfterLastAssistant === null) return
    const covered = m.rawTokens - m.tokensAfterLastAssistant
    const json = callNative(() =>
      native.calibrateJson(this.#calibration ? JSON.stringify(this.#calibration) : null, covered, JSON.stringify(opts.usage)),
    )
    this.#calibration = JSON.parse(json)
  }

  /**
   * The numbers behind the trigger: the raw count, the estimate it compares with the threshold,
   * and where the estimate came from ('usage', 'calibration', 'model' or 'raw').
   */
  measure(messages, overrides) {
    const opts = { ...this.#options, ...checkOptions(overrides, 'overrides') }
    const entries = this.#entries(messages)
    const counts = entries.map((entry) => entry.tokens)
    this.#track(messages)
    this.#observe(messages, counts, opts)
    const { tokensAfterLastAssistant, ...measure } = measureCounts(
      messages,
      counts,
      opts,
      this.#calibration,
      this.#toolOutputBytes(messages, entries, opts),
    )
    return measure
  }

  /** Also emits `token_limit_exceeded` through `onEvent` when the estimate reaches the threshold. */
  shouldCompact(messages, overrides) {
    const measure = this.measure(messages, overrides)
    this.#limitReported = null
    if (messages.length > 0 && measure.tokens >= measure.threshold) {
      const onEvent = { ...this.#options, ...(overrides ?? {}) }.onEvent
      if (typeof onEvent === 'function') {
        this.#limitReported = { messages, length: messages.length }
        try {
          onEvent({ type: 'token_limit_exceeded', tokensUsed: measure.tokens, tokenLimit: measure.threshold })
        } catch (error) {
          process.emitWarning(`onEvent listener threw: ${error && error.message}`, { code: 'CONTEXT_COMPACT_LISTENER' })
        }
      }
    }
    return measure.shouldCompact
  }

  async compact(messages, overrides) {
    let opts = { ...this.#options, ...checkOptions(overrides, 'overrides') }
    const counts = this.#countEach(messages)
    this.#track(messages)
    this.#observe(messages, counts, opts)
    if (opts.overflow !== undefined && opts.overflow !== null) {
      this.#calibration = overflowCalibration(messages, counts, opts, this.#calibration)
      opts = { ...opts, force: true }
    }
    // shouldCompact already told onEvent that this very list is over the limit: once is enough.
    const reported = this.#limitReported
    this.#limitReported = null
    if (reported && reported.messages === messages && reported.length === messages.length && typeof opts.onEvent === 'function') {
      const onEvent = opts.onEvent
      let skipped = false
      opts = {
        ...opts,
        onEvent: (event) => {
          if (!skipped && event && event.type === 'token_limit_exceeded') {
            skipped = true
            return
          }
          return onEvent(event)
        },
      }
    }
    // Models on which Anthropic's on-demand compaction was unavailable are not tried again.
    if (this.#compactionUnavailable.size > 0) {
      opts = { ...opts, compactionUnavailableModels: [...this.#compactionUnavailable, ...(opts.compactionUnavailableModels ?? [])] }
    }
    const result = await runCompaction(messages, opts, counts, this.#calibration, this.#markMap)
    if (result.compactionUnavailable) this.#compactionUnavailable.add(result.compactionUnavailable)
    if (result.compacted) {
      // New messages (summary, notice, cleared tool results) are counted now, so the next turn
      // only counts what it adds, and are never taken for originals.
      const fresh = result.messages.filter((m) => m !== null && typeof m === 'object' && !this.#origin.has(m))
      for (const m of fresh) this.#generated.add(m)
      if (fresh.length > 0) this.#countEach(fresh)
      this.#startBatch(messages, result)
      this.#lastMessages = result.messages
    }
    return result
  }

  // A compaction starts a new batch at the first original index of the unchanged suffix (the
  // messages after the last one it removed or changed); a custom strategy may return its own
  // mark map instead.
  #startBatch(messages, result) {
    const map = this.#markMap
    const own = result.markMap
    if (own && JSON.stringify(own) !== JSON.stringify(map)) {
      // The strategy kept its own books: adopt them; its current batch is this compaction.
      this.#markMap = structuredClone(own)
      const later = this.#markMap.batchBoundaries.length - 1
      this.#batches = this.#batches.slice(0, Math.max(0, later - 1))
      if (later > 0) this.#batches.push({ snapshot: result.messages.slice(), seen: this.#nextOriginal })
      return
    }
    const kept = new Set(result.messages)
    let boundary = this.#nextOriginal
    for (let i = messages.length - 1; i >= 0 && kept.has(messages[i]); i--) {
      const origin = this.#origin.get(messages[i])
      if (origin !== undefined) boundary = origin
    }
    boundary = Math.max(boundary, map.batchBoundaries[map.batchBoundaries.length - 1])
    const batch = Math.max(...map.boundaryToBatch) + 1
    map.batchBoundaries.push(boundary)
    map.boundaryToBatch.push(batch)
    map.currentBatch = batch
    this.#batches.push({ snapshot: result.messages.slice(), seen: this.#nextOriginal })
  }

  /**
   * Rolls the conversation back to an earlier batch of the mark map (seed §八.4): batch 0 is the
   * whole original conversation, read back from the archives with {@link restoreMessages};
   * batch k is the list compaction k returned, followed by every message added since (restored
   * from later archives where needed). The later batches leave the mark map.
   */
  async rollback(batch, messages) {
    const map = this.#markMap
    const position = map.boundaryToBatch.indexOf(batch)
    if (!Number.isInteger(batch) || position < 0) {
      throw invalidArgument(`batch ${describe(batch) === 'number' ? batch : describe(batch)} is not in the mark map (batches ${map.boundaryToBatch.join(', ')})`)
    }
    const current = messages ?? this.#lastMessages ?? []
    if (!Array.isArray(current)) {
      throw invalidArgument(`messages must be an array of message objects, got ${describe(current)}`)
    }
    this.#track(current)
    const full = await restoreMessages(current, {
      outputDir: this.#options.outputDir,
      sessionId: this.#options.sessionId,
      storeOptions: this.#options.storeOptions,
      archiveStore: this.#options.archiveStore,
    })
    if (full.length !== this.#nextOriginal) {
      const error = new Error(
        `cannot roll back: the archives give back ${full.length} messages, but this compactor saw ${this.#nextOriginal} (messages removed without a restorable notice, e.g. by a custom strategy, or archives missing)`,
      )
      error.code = 'ROLLBACK_FAILED'
      throw error
    }
    // Messages read back from the archives are the originals of their indices.
    full.forEach((message, index) => {
      if (!this.#origin.has(message)) this.#origin.set(message, index)
    })
    const restored = position === 0 ? full : [...this.#batches[position - 1].snapshot, ...full.slice(this.#batches[position - 1].seen)]
    map.batchBoundaries.length = position + 1
    map.boundaryToBatch.length = position + 1
    map.currentBatch = batch
    this.#batches.length = position
    this.#lastMessages = restored
    return restored
  }

  partitionMessages(messages, tailRetentionTokens) {
    return partitionMessages(messages, tailRetentionTokens, this.#options)
  }

  generateSummary(middle, overrides) {
    return generateSummary(middle, { ...this.#options, ...checkOptions(overrides, 'overrides') })
  }
}

// ------------------------------------------------------------------------------------------
// Overflow recovery (SPEC §4.8): isContextOverflow
//
// The decision — which providers' texts and codes mean "the request did not fit the context
// window" — is made in Rust (crates/core/src/overflow.rs). This part only gathers what an error
// says about itself (statuses, codes, messages) from whatever was given: an SDK's error object,
// a raw body, a message string, a cause chain. It reads a fixed set of property names, bounded
// in depth and count, and never throws.

const OVERFLOW_MAX_DEPTH = 8
const OVERFLOW_MAX_NODES = 200
const OVERFLOW_MAX_TEXTS = 64
const OVERFLOW_MAX_TEXT_LENGTH = 64 * 1024
const OVERFLOW_MAX_JSON_LENGTH = 1024 * 1024
const OVERFLOW_MAX_ARRAY_ITEMS = 16

// Human texts: Error#message, Bedrock logs' `errorMessage`, FastAPI-style `detail`.
const MESSAGE_KEYS = ['message', 'errorMessage', 'detail', 'msg']
// Machine codes: OpenAI `.code`/`.type`, Anthropic `.type`/`.errorCode`, Bedrock `.name`
// (`ValidationException`), Google `status: 'INVALID_ARGUMENT'`, AWS `__type`.
const CODE_KEYS = ['code', 'type', 'name', 'error_code', 'errorCode', 'reason', '__type', 'status']
// HTTP statuses: SDKs `.status`, Vercel AI SDK `.statusCode`, AWS `$metadata.httpStatusCode`.
const STATUS_KEYS = ['status', 'statusCode', 'status_code', 'httpStatusCode']
// Where the rest is nested: the body (Anthropic and OpenAI `.error`, AI SDK `.responseBody`
// (a JSON string) and `.data`, axios `.response.data`), details, AWS `$metadata`, and the causes
// (`cause`, the AI SDK RetryError's `lastError`, AggregateError `errors`). Nothing else is read:
// in particular not `requestBodyValues` or `headers`, which hold the prompt and credentials.
const NESTED_KEYS = ['error', 'body', 'responseBody', 'data', 'details', 'response', '$metadata', 'cause', 'lastError', 'errors']

function gatherErrorSignals(input) {
  const statuses = []
  const codes = []
  const messages = []
  const seen = new Set()
  let nodes = 0

  const addText = (list, text) => {
    if (list.length < OVERFLOW_MAX_TEXTS && text.trim() !== '') {
      list.push(text.length > OVERFLOW_MAX_TEXT_LENGTH ? text.slice(0, OVERFLOW_MAX_TEXT_LENGTH) : text)
    }
  }
  const addStatus = (value) => {
    if (Number.isInteger(value) && value >= 100 && value <= 599 && statuses.length < OVERFLOW_MAX_TEXTS) statuses.push(value)
  }
  // A getter or a Proxy may throw; such a property simply says nothing.
  const read = (object, key) => {
    try {
      return object[key]
    } catch {
      return undefined
    }
  }

  // A text, and the JSON it is or ends with: a body string, Google's ApiError message (the body
  // as JSON), the SDKs' "400 {...}" messages.
  const visitText = (text, depth) => {
    addText(messages, text)
    const start = text.search(/[[{]/)
    if (start === -1 || text.length - start > OVERFLOW_MAX_JSON_LENGTH || depth >= OVERFLOW_MAX_DEPTH) return
    let parsed
    try {
      parsed = JSON.parse(text.slice(start))
    } catch {
      return
    }
    visit(parsed, depth + 1)
  }

  const visit = (value, depth) => {
    if (depth > OVERFLOW_MAX_DEPTH || nodes >= OVERFLOW_MAX_NODES) return
    nodes += 1
    if (typeof value === 'string') return visitText(value, depth)
    if (value === null || typeof value !== 'object' || seen.has(value)) return
    seen.add(value)
    try {
      if (Array.isArray(value)) {
        const length = Math.min(Number(read(value, 'length')) || 0, OVERFLOW_MAX_ARRAY_ITEMS)
        for (let i = 0; i < length; i += 1) visit(read(value, i), depth + 1)
        return
      }
      for (const key of MESSAGE_KEYS) {
        const text = read(value, key)
        if (typeof text === 'string') visitText(text, depth)
      }
      for (const key of STATUS_KEYS) addStatus(read(value, key))
      for (const key of CODE_KEYS) {
        const code = read(value, key)
        if (typeof code === 'string') addText(codes, code)
        else addStatus(code)
      }
      for (const key of NESTED_KEYS) {
        const nested = read(value, key)
        if (nested !== undefined && nested !== null) visit(nested, depth + 1)
      }
    } catch {
      // A revoked Proxy and the like: keep what was gathered so far.
    }
  }

  visit(input, 0)
  return { statuses, codes, messages }
}

function isContextOverflow(error) {
  try {
    const { statuses, codes, messages } = gatherErrorSignals(error)
    if (codes.length === 0 && messages.length === 0) return false
    return native.isContextOverflowSignals(statuses, codes, messages) === true
  } catch {
    return false
  }
}

module.exports = {
  CONTEXT_TOKEN_LIMIT,
  COMPACT_THRESHOLD_RATIO,
  TAIL_RETENTION_RATIO,
  COMPACT_MAX_RETRIES,
  countTokens,
  shouldCompact,
  measureTokens,
  partitionMessages,
  generateSummary,
  assembleMessages,
  persistMessages,
  compactMessages,
  offloadToolResults,
  listArchives,
  restoreMessages,
  pruneArchives,
  checkMessages,
  getCurrentBatchIndices,
  isModified,
  getBatchIndex,
  createMarkMap,
  Compactor,
  isContextOverflow,
}
