'use strict'

// The caller's functions as the addon calls them: the summarizer (given the caller's own
// message objects, its answer checked), onLog/logger, onEvent and onBeforeCompact (a listener's
// bug never breaks a compaction), and the AbortSignal (cancels the native work).

const native = require('./native.js')
const { fromArchived } = require('./binary.js')
const { describe, invalidArgument, translateError, callNative, checkedMessages, checkFunction } = require('./validate.js')

// What an aborted call rejects with: the signal's reason when it is an AbortError already (as
// fetch does), else an AbortError that carries the reason as its cause.
function abortError(signal) {
  const reason = signal && signal.reason
  if (reason instanceof Error && reason.name === 'AbortError') return reason
  const error = new Error('This operation was aborted')
  error.name = 'AbortError'
  error.code = 'ABORT_ERR'
  if (reason !== undefined) error.cause = reason
  return error
}

// The request a JS summarizer receives. `messages` are the caller's own objects (and, in a
// later round, the summary the library made); `prompt` is rendered when it is first read, since
// many summarizers never read it (see `SummarizeCall` in src/lib.rs).
function summaryRequest(call, messages, format) {
  let made = 0
  const chunk = call.origins.map((origin) => (origin === null ? fromArchived(JSON.parse(call.made[made++])) : messages[origin]))
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
            call.ownSummaries ?? [],
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

// Wraps the caller's summarizer so the addon always gets a Promise of a string, and the
// caller gets its own message objects.
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
// `logLevel`: the least severe entries written to stderr ('off' writes none).
const LOG_RANKS = { off: 0, error: 1, warn: 2, info: 3, debug: 4 }

function checkLogLevel(opts) {
  const level = opts.logLevel
  if (level === undefined || level === null) return undefined
  if (typeof level !== 'string' || !Object.hasOwn(LOG_RANKS, level)) {
    throw invalidArgument(`options.logLevel must be one of 'off', 'error', 'warn', 'info' or 'debug', got ${describe(level)}`)
  }
  return level
}

/** One log entry as one stderr line: `context-compact warn: message {fields}`. */
function stderrLine(entry) {
  const fields = entry.fields && Object.keys(entry.fields).length > 0 ? ` ${JSON.stringify(entry.fields)}` : ''
  return `context-compact ${entry.level}: ${entry.message}${fields}\n`
}

// `onLog(entry)` and/or `logger` (an object with error/warn/info/debug methods, e.g. console)
// receive the log entries of one call, and `logLevel` writes those at or above it to stderr.
// A call with any of the three is routed here, so the addon writes nothing of it to stderr
// itself (not even at the level of CONTEXT_COMPACT_LOG): `logLevel: 'off'` silences it.
// Without any, the addon writes nothing either, unless CONTEXT_COMPACT_LOG asks.
function wrapLog(opts) {
  const onLog = checkFunction(opts, 'onLog')
  const logger = opts.logger ?? undefined
  if (logger !== undefined && (typeof logger !== 'object' || Array.isArray(logger))) {
    throw invalidArgument(`options.logger must be an object with error/warn/info/debug methods, got ${describe(logger)}`)
  }
  const level = checkLogLevel(opts)
  if (!onLog && !logger && level === undefined) return undefined
  const stderrRank = level === undefined ? 0 : LOG_RANKS[level]
  return (entryJson) => {
    try {
      const raw = JSON.parse(entryJson)
      const entry = { level: LOG_LEVELS.has(raw.level) ? raw.level : 'debug', message: String(raw.message ?? '') }
      if (raw.fields && typeof raw.fields === 'object') entry.fields = raw.fields
      if (raw.target) entry.target = raw.target
      if (LOG_RANKS[entry.level] <= stderrRank) process.stderr.write(stderrLine(entry))
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

// Warnings of a call that returns no result (unknown option names, …): to `onLog`/`logger`
// when the caller gave one, else nowhere — nothing goes to stderr unless the caller asks.
function reportWarnings(opts, warnings) {
  if (warnings.length === 0) return
  const log = wrapLog(opts)
  if (!log) return
  for (const message of warnings) log(JSON.stringify({ level: 'warn', message, target: 'context_compact::options' }))
}

// An event to the caller's `onEvent`, when there is one. A listener's bug must not break
// compaction: what it throws is a process warning.
function emitEvent(onEvent, event) {
  if (typeof onEvent !== 'function') return
  try {
    onEvent(event)
  } catch (error) {
    process.emitWarning(`onEvent listener threw: ${error && error.message}`, { code: 'CONTEXT_COMPACT_LISTENER' })
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

// `onBeforeCompact(info)` may return false, or a Promise of false, to decline. The addon awaits
// this wrapper before anything is summarized or written.
function wrapBeforeCompact(onBeforeCompact) {
  if (!onBeforeCompact) return undefined
  return async (infoJson) => (await onBeforeCompact(JSON.parse(infoJson))) !== false
}

// `rehydrate.read(path)`: the loop's own file access, sync or async, returning the text or
// null. The addon gets a function that always resolves with a string or null; anything else is
// a rejection, which the compaction reports as a warning (the file is not shown).
function wrapRead(rehydrate) {
  if (rehydrate === undefined || rehydrate === null || typeof rehydrate !== 'object') return undefined
  const read = rehydrate.read
  if (read === undefined || read === null) return undefined
  if (typeof read !== 'function') {
    throw invalidArgument(`options.rehydrate.read must be a function (path) => string | null, got ${describe(read)}`)
  }
  return async (path) => {
    const text = await read(path)
    if (text === null || text === undefined) return null
    if (typeof text !== 'string') {
      throw new TypeError(`rehydrate.read(${JSON.stringify(path)}) must return a string or null, got ${describe(text)}`)
    }
    return text
  }
}

module.exports = {
  abortError,
  reportWarnings,
  wrapSummarizer,
  wrapRead,
  wrapLog,
  wrapEvents,
  emitEvent,
  wrapBeforeCompact,
  withSignal,
}
