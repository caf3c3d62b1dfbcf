'use strict'

// OpenTelemetry spans for compactions (docs/observability.md). `@opentelemetry/api` is an
// optional peer: it is looked for once, at the first compaction, and never again when absent,
// so a user without it pays one failed `require` per process and nothing per call. With it but
// no tracer provider registered, the API's no-op tracer answers and its span does not record:
// nothing more is done. The spans are made here, around the addon call, from what the result
// and the call's events say; the Rust core knows nothing of tracing.

const { version: VERSION } = require('../../package.json')

const SPAN_NAME = 'context_compact.compact'
// The library's own summarizer: no model is asked, so there is no summary span.
const EXTRACTIVE = 'extractive'
// `gen_ai.provider.name` for the library's provider names (OpenTelemetry's well-known values).
const GEN_AI_PROVIDER = { anthropic: 'anthropic', 'anthropic-compaction': 'anthropic', openai: 'openai' }

// `undefined`: not looked for yet; `null`: not installed (or unusable).
let cachedApi

// The API module, or null. `req` is the `require` to use (tests hand another one in).
function loadOtelApi(req = require) {
  try {
    const api = req('@opentelemetry/api')
    return api && api.trace && api.context && typeof api.trace.getTracer === 'function' ? api : null
  } catch {
    return null
  }
}

function otelApi() {
  if (cachedApi === undefined) cachedApi = loadOtelApi()
  return cachedApi
}

// Runs `run(opts)` — one compaction — inside a `context_compact.compact` span when a tracer
// records, and returns (or throws) what it does. `messages` is the caller's list (its length is
// `messages_before`).
async function tracedCompaction(messages, opts, run) {
  const api = otelApi()
  if (api === null) return run(opts)
  const tracer = api.trace.getTracer('context-compact', VERSION)
  const parent = api.context.active()
  const span = tracer.startSpan(SPAN_NAME, { kind: api.SpanKind.INTERNAL }, parent)
  if (!span.isRecording()) {
    span.end()
    return run(opts)
  }
  const seen = []
  const watched = watchEvents(opts, seen)
  let result
  try {
    result = await api.context.with(api.trace.setSpan(parent, span), () => run(watched))
  } catch (error) {
    span.setAttribute('context_compact.status', 'failed')
    span.setAttribute('context_compact.messages_before', Array.isArray(messages) ? messages.length : 0)
    if (error && typeof error === 'object' && typeof error.name === 'string') span.setAttribute('error.type', error.name)
    span.recordException(error instanceof Error ? error : new Error(String(error)))
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) })
    span.end()
    throw error
  }
  try {
    describeCompaction(api, span, messages, result)
    summarySpan(api, tracer, span, parent, result, opts, seen)
  } finally {
    span.end()
  }
  return result
}

// The options with an `onEvent` that also notes when each event came (the summary span's times),
// the caller's own `onEvent` called as before. An `onEvent` that is not a function is left for
// the options check to refuse.
function watchEvents(opts, seen) {
  const own = opts.onEvent
  if (own !== undefined && own !== null && typeof own !== 'function') return opts
  const onEvent = (event) => {
    if (event && typeof event === 'object' && typeof event.type === 'string') seen.push({ type: event.type, event, at: Date.now() })
    if (typeof own === 'function') return own(event)
  }
  return { ...opts, onEvent }
}

function statusOf(result) {
  if (result.compacted) return result.error && result.error.code === 'STILL_OVER_LIMIT' ? 'still_over_limit' : 'compacted'
  return result.error ? 'failed' : 'below_threshold'
}

function checkpointOf(result) {
  const checkpoint = result.checkpoint
  if (!checkpoint) return 'none'
  if (checkpoint.reused) return 'reused'
  return checkpoint.recorded ? 'written' : 'none'
}

// What one compaction did, in plain values: the span's attributes, and what the adapters send
// on their framework's own channel (LangChain's custom events). `messages` is the caller's list.
function compactionFacts(messages, result) {
  const stats = result.stats ?? {}
  // Nothing compacted: the list is unchanged, and the trigger's estimate is its size.
  const before = result.compacted ? stats.originalTokenCount : result.tokens
  const after = result.compacted ? stats.compactedTokenCount : result.tokens
  return {
    trigger: result.trigger ?? null,
    strategy: result.strategy,
    status: statusOf(result),
    tokensBefore: before ?? 0,
    tokensAfter: after ?? 0,
    messagesBefore: Array.isArray(messages) ? messages.length : 0,
    messagesAfter: Array.isArray(result.messages) ? result.messages.length : 0,
    summaryRequest: result.summaryRequest ?? null,
    checkpoint: checkpointOf(result),
    archive: result.archivePath ?? null,
    compacted: result.compacted === true,
    error: result.error ? result.error.code : null,
  }
}

function describeCompaction(api, span, messages, result) {
  const facts = compactionFacts(messages, result)
  const attributes = {
    'context_compact.strategy': facts.strategy,
    'context_compact.status': facts.status,
    'context_compact.tokens_before': facts.tokensBefore,
    'context_compact.tokens_after': facts.tokensAfter,
    'context_compact.messages_before': facts.messagesBefore,
    'context_compact.messages_after': facts.messagesAfter,
    'context_compact.checkpoint': facts.checkpoint,
  }
  if (facts.trigger) attributes['context_compact.trigger'] = facts.trigger
  if (facts.summaryRequest) attributes['context_compact.summary_request'] = facts.summaryRequest
  if (facts.archive) attributes['context_compact.archive'] = facts.archive
  if (facts.compacted) attributes['gen_ai.conversation.compacted'] = true
  span.setAttributes(attributes)
  if (facts.status === 'failed') {
    span.setAttribute('error.type', result.error.code)
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: `${result.error.code}: ${result.error.message}` })
  }
}

// Whether a model was asked for the summary, and which: the provider the result names, or —
// when every attempt failed (the extractive fallback wrote the summary, or nothing was
// compacted) — the one the options chose, else the one the failure names.
function summaryProvider(result, opts) {
  if (result.provider && result.provider !== EXTRACTIVE) return result.provider
  if (summaryFailure(result) === null || !(result.attempts > 0)) return null
  if (typeof opts.provider === 'string' && opts.provider !== EXTRACTIVE && opts.provider !== 'auto') return opts.provider
  const named = /\b(anthropic|openai)\b/i.exec(summaryFailure(result).message)
  return named ? named[1].toLowerCase() : '_OTHER'
}

// The summary call, a child span in OpenTelemetry's GenAI conventions, made after the fact: it
// runs inside the addon, so its times are those of the events around it (the compaction's
// `started`, or a reused checkpoint's, to its `completed` or `failed`).
function summarySpan(api, tracer, span, parent, result, opts, seen) {
  const provider = summaryProvider(result, opts)
  if (provider === null) return
  const start = seen.find((e) => e.type === 'checkpoint_reused') ?? seen.find((e) => e.type === 'started')
  const end = seen.find((e) => e.type === 'completed' || e.type === 'failed')
  const model = result.model ?? (typeof opts.model === 'string' ? opts.model : null)
  const child = tracer.startSpan(
    model ? `chat ${model}` : 'chat',
    { kind: api.SpanKind.CLIENT, ...(start ? { startTime: start.at } : {}) },
    api.trace.setSpan(parent, span),
  )
  const attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': GEN_AI_PROVIDER[provider] ?? provider,
    'context_compact.attempts': result.attempts ?? 0,
  }
  if (model) attributes['gen_ai.request.model'] = model
  const usage = result.summaryUsage
  if (usage) {
    // The conventions count every input token in input_tokens, cached ones included.
    attributes['gen_ai.usage.input_tokens'] = usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens
    attributes['gen_ai.usage.output_tokens'] = usage.outputTokens
    attributes['gen_ai.usage.cache_read.input_tokens'] = usage.cacheReadTokens
    attributes['gen_ai.usage.cache_creation.input_tokens'] = usage.cacheWriteTokens
  }
  child.setAttributes(attributes)
  for (const retry of seen.filter((e) => e.type === 'retry')) {
    const error = retry.event.error ?? {}
    child.addEvent(
      'context_compact.retry',
      {
        'context_compact.attempt': retry.event.attempt,
        'error.type': String(error.code ?? 'unknown'),
        ...(typeof error.status === 'number' ? { 'http.response.status_code': error.status } : {}),
      },
      retry.at,
    )
  }
  const failure = summaryFailure(result)
  if (failure) {
    child.setAttribute('error.type', failure.code)
    const exception = new Error(failure.message)
    exception.name = failure.code
    child.recordException(exception, end ? end.at : undefined)
    child.setStatus({ code: api.SpanStatusCode.ERROR, message: `${failure.code}: ${failure.message}` })
  }
  child.end(end ? end.at : undefined)
}

// The summary call's failure, when it failed: the result's error (not compacted) or the
// failure the extractive fallback stood in for.
function summaryFailure(result) {
  if (result.summaryFallback && result.summaryFallback.code !== 'SUMMARY_SKIPPED') {
    return { code: result.summaryFallback.code, message: result.summaryFallback.reason }
  }
  if (!result.compacted && result.error && result.error.code !== 'NOT_SMALLER' && result.error.code !== 'NOTHING_TO_COMPACT') {
    return { code: result.error.code, message: result.error.message }
  }
  return null
}

module.exports = {
  compactionFacts,
  loadOtelApi,
  tracedCompaction,
}
