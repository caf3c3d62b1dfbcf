'use strict'

// The custom-strategy runner (type seed's `CompressionStrategy`): `strategy: { compress(messages,
// markMap, config) }`. The trigger, the confirmation hook, the events, the archive of what the
// strategy removed and the tool-pair check are the library's; the strategy only decides what
// to keep.

const native = require('../addon/native.js')
const { describe, callNative, checkedMessages, checkFunction, checkSignal } = require('../addon/validate.js')
const { optionsJson, formatOf } = require('../options/options.js')
const { abortError, emitEvent } = require('../addon/callbacks.js')
const { checkArchiveStore, withArchiveStore, storeJson } = require('../archive/store.js')
const { resultFields, notCompactedResult } = require('../messages/result.js')
const { countTokens, measureCounts, countEach, toolOutputBytes } = require('../counting/counting.js')
const { checkMessages } = require('./steps.js')
const { createMarkMap } = require('./mark-map.js')

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
  const emit = (event) => emitEvent(onEvent, event)
  const abortIfNeeded = () => {
    if (signal && signal.aborted) throw abortError(signal)
  }
  abortIfNeeded()
  counts = counts ?? countEach(messages, opts)
  const m = measureCounts(messages, counts, opts, calibration, toolOutputBytes(messages, opts))
  const trigger = m.trigger ?? (opts.force && messages.length > 0 && opts.compression?.enabled !== false ? 'force' : null)
  const { tokensAfterLastAssistant, shouldCompact: _, trigger: __, ...measure } = m
  const base = resultFields({ tokens: m.tokens, threshold: m.threshold, measure, strategy: 'custom', trigger })
  const unchanged = (error) => notCompactedResult(messages, { ...base, error })
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

module.exports = {
  runCustomStrategy,
}
