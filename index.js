'use strict'

// The public API of context-compact. All logic is in Rust (crates/core); this layer
// - passes messages to the addon as one JSON string (the cheapest crossing we measured),
// - builds results from the caller's own message objects, so retained messages are the very
//   objects that were passed in (same identity, same key order, nothing copied),
// - turns invalid input into TypeError, wires AbortSignal and the JS callbacks.
// Types and documentation: index.d.ts.

const native = require('./binding.js')

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
})

// Options that are functions or objects the addon cannot read; everything else is passed on.
const JS_ONLY_OPTIONS = new Set(['summarizer', 'signal', 'onEvent', 'onBeforeCompact', 'onLog', 'logger'])

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

function messagesJson(messages, name = 'messages') {
  if (!Array.isArray(messages)) {
    throw invalidArgument(`${name} must be an array of message objects, got ${describe(messages)}`)
  }
  try {
    return JSON.stringify(messages)
  } catch (error) {
    // Circular structures, BigInt values, nesting too deep for the JS stack.
    throw invalidArgument(`${name} cannot be serialized as JSON: ${error.message}`)
  }
}

function checkOptions(options, name = 'options') {
  if (options === undefined || options === null) return {}
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw invalidArgument(`${name} must be an object, got ${describe(options)}`)
  }
  return options
}

function optionsJson(options) {
  const plain = {}
  for (const [key, value] of Object.entries(options)) {
    if (!JS_ONLY_OPTIONS.has(key) && value !== undefined) plain[key] = value
  }
  try {
    return JSON.stringify(plain)
  } catch (error) {
    throw invalidArgument(`options cannot be serialized as JSON: ${error.message}`)
  }
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
  const json = messagesJson(messages)
  return callNative(() => native.countTokensJson(json, encodingOf(opts)))
}

function measureTokens(messageTokens, opts) {
  return callNative(() => native.measureJson(messageTokens, optionsJson(opts)))
}

function shouldCompact(messages, options) {
  const opts = checkOptions(options)
  const total = countTokens(messages, opts)
  if (messages.length === 0) return false
  const measure = measureTokens(total, opts)
  return measure.tokens >= measure.threshold
}

function partitionMessages(messages, tailRetentionTokens, options) {
  const opts = checkOptions(options)
  if (typeof tailRetentionTokens !== 'number' || !(tailRetentionTokens >= 0)) {
    throw invalidArgument(`tailRetentionTokens must be a non-negative number, got ${describe(tailRetentionTokens)}`)
  }
  const json = messagesJson(messages)
  const cut = callNative(() => native.partitionJson(json, tailRetentionTokens, optionsJson(opts)))
  return {
    head: messages.slice(0, cut.headLen),
    middle: messages.slice(cut.headLen, cut.tailStart),
    tail: messages.slice(cut.tailStart),
  }
}

function assembleMessages(head, summary, tail) {
  if (!Array.isArray(head)) throw invalidArgument(`head must be an array of message objects, got ${describe(head)}`)
  if (!Array.isArray(tail)) throw invalidArgument(`tail must be an array of message objects, got ${describe(tail)}`)
  if (typeof summary !== 'string') throw invalidArgument(`summary must be a string, got ${describe(summary)}`)
  if (summary.trim() === '') {
    process.emitWarning('assembleMessages: the summary is empty', { code: 'CONTEXT_COMPACT_EMPTY_SUMMARY' })
  }
  return [...head, { role: 'user', content: summary }, ...tail]
}

// ------------------------------------------------------------------------------------------
// F-004, F-006 and the pipeline

// Wraps the caller's summarizer so the addon always gets a Promise of a string, and the
// caller gets its own message objects.
function wrapSummarizer(summarizer, messages) {
  if (!summarizer) return undefined
  return async (call) => {
    const request = {
      messages: messages.slice(call.start, call.end),
      prompt: call.prompt,
      previousSummary: call.previousSummary ?? null,
      model: call.model ?? null,
      customInstructions: call.customInstructions ?? null,
      maxTokens: call.maxTokens,
      attempt: call.attempt,
    }
    const text = await summarizer(request)
    if (typeof text !== 'string') {
      throw new TypeError(`the summarizer must resolve with a string, got ${describe(text)}`)
    }
    return text
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
  const json = messagesJson(middle, 'middle')
  const summarizer = wrapSummarizer(checkFunction(opts, 'summarizer'), middle)
  const signal = checkSignal(opts)
  const optsJson = optionsJson(opts)
  return withSignal(signal, (cancelId) => native.generateSummaryJson(json, optsJson, summarizer, cancelId))
}

async function persistMessages(middle, outputDir, sessionId) {
  const json = messagesJson(middle, 'middle')
  if (typeof outputDir !== 'string' || outputDir === '') {
    throw invalidArgument(`outputDir must be a non-empty string, got ${describe(outputDir)}`)
  }
  if (typeof sessionId !== 'string') throw invalidArgument(`sessionId must be a string, got ${describe(sessionId)}`)
  callNative(() => native.validateSessionId(sessionId))
  try {
    return await native.persistMessagesJson(json, outputDir, sessionId)
  } catch (error) {
    throw translateError(error)
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
    messages: outcome.pieces.map((piece) => (typeof piece === 'number' ? messages[piece] : piece)),
    compacted: true,
    summary: outcome.summary,
    archivePath: outcome.archivePath ?? null,
    stats: outcome.stats,
    error: null,
    ...base,
  }
}

async function runCompaction(messages, opts, counts) {
  const json = messagesJson(messages)
  const summarizer = wrapSummarizer(checkFunction(opts, 'summarizer'), messages)
  const onEvent = wrapEvents(checkFunction(opts, 'onEvent'))
  const signal = checkSignal(opts)
  const optsJson = optionsJson(opts)
  const outcomeJson = await withSignal(signal, (cancelId) =>
    native.compactJson(json, optsJson, counts ?? null, summarizer, onEvent, cancelId),
  )
  return buildResult(messages, JSON.parse(outcomeJson))
}

async function compactMessages(messages, options) {
  return runCompaction(messages, checkOptions(options))
}

// ------------------------------------------------------------------------------------------
// The stateful form

class Compactor {
  #options
  #counts = new WeakMap()

  constructor(options) {
    this.#options = { ...checkOptions(options) }
    // Fail early on invalid options rather than on the first turn.
    measureTokens(0, this.#options)
    checkFunction(this.#options, 'summarizer')
    checkFunction(this.#options, 'onEvent')
  }

  /** The options this compactor was created with (a copy). */
  get options() {
    return { ...this.#options }
  }

  // Token counts per message, from the cache where the message object was seen before.
  // Messages are treated as immutable once counted (as agent loops treat their history).
  #countEach(messages) {
    if (!Array.isArray(messages)) {
      throw invalidArgument(`messages must be an array of message objects, got ${describe(messages)}`)
    }
    const counts = new Array(messages.length)
    const missing = []
    const missingIndex = []
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i]
      const cached = message !== null && typeof message === 'object' ? this.#counts.get(message) : undefined
      if (cached === undefined) {
        missing.push(message)
        missingIndex.push(i)
      } else {
        counts[i] = cached
      }
    }
    if (missing.length > 0) {
      const json = messagesJson(missing)
      const fresh = callNative(() => native.countEachJson(json, encodingOf(this.#options)), missingIndex)
      for (let j = 0; j < missing.length; j++) {
        counts[missingIndex[j]] = fresh[j]
        this.#counts.set(missing[j], fresh[j])
      }
    }
    return counts
  }

  countTokens(messages) {
    return this.#countEach(messages).reduce((a, b) => a + b, 0)
  }

  /** The numbers behind the trigger: tokens (with system and tools) and the threshold. */
  measure(messages) {
    const total = this.countTokens(messages)
    const measure = measureTokens(total, this.#options)
    return {
      messageTokens: total,
      tokens: measure.tokens,
      threshold: measure.threshold,
      shouldCompact: messages.length > 0 && measure.tokens >= measure.threshold,
    }
  }

  shouldCompact(messages) {
    return this.measure(messages).shouldCompact
  }

  async compact(messages, overrides) {
    const opts = { ...this.#options, ...checkOptions(overrides, 'overrides') }
    const counts = this.#countEach(messages)
    const result = await runCompaction(messages, opts, counts)
    if (result.compacted) {
      // The summary message is new; count it now so the next turn only counts what it adds.
      const summaryIndex = result.messages.findIndex((m, i) => m !== messages[i] && !this.#counts.has(m))
      if (summaryIndex >= 0) this.#countEach([result.messages[summaryIndex]])
    }
    return result
  }

  partitionMessages(messages, tailRetentionTokens) {
    return partitionMessages(messages, tailRetentionTokens, this.#options)
  }

  generateSummary(middle, overrides) {
    return generateSummary(middle, { ...this.#options, ...checkOptions(overrides, 'overrides') })
  }
}

module.exports = {
  CONTEXT_TOKEN_LIMIT,
  COMPACT_THRESHOLD_RATIO,
  TAIL_RETENTION_RATIO,
  COMPACT_MAX_RETRIES,
  countTokens,
  shouldCompact,
  partitionMessages,
  generateSummary,
  assembleMessages,
  persistMessages,
  compactMessages,
  Compactor,
}
