'use strict'

// compactMessages (F-007, the whole pipeline in one call): one native call with the caller's
// functions wired in, or the custom-strategy runner; and the calibration an `overflow` error
// raises (SPEC §4.8). The Compactor runs its compactions through here too.

const native = require('../addon/native.js')
const { callNative, checkedMessages, checkOptions, checkFunction, checkSignal } = require('../addon/validate.js')
const { isCustomStrategy, optionsJson, changesJson, formatOf, unknownOptionWarnings, withNonFinite } = require('../options/options.js')
const { wrapSummarizer, wrapRead, wrapLog, wrapEvents, wrapBeforeCompact, withSignal, reportWarnings } = require('../addon/callbacks.js')
const { checkArchiveStore, withArchiveStore } = require('../archive/store.js')
const { buildResult } = require('../messages/result.js')
const { measureCounts, countEach } = require('../counting/counting.js')
const { gatherErrorSignals } = require('../counting/overflow.js')
const { learntModelOf, readLearnt, withLearnt, learntUpdates, recordLearnt, ratioFactor } = require('../counting/learnt.js')
const { runCustomStrategy } = require('./custom-strategy.js')
const { tracedCompaction } = require('./otel.js')

// `held`: what a Compactor holds for this call — `options` (`{ id, handle, changes }`: its
// options held in the addon, options.js HeldOptions, kept alive until the addon is done, and
// what this call changes of them: only that crosses), `checkpoints` (the id of its checkpoint shelf,
// src/checkpoints.rs: the records stay in the addon, which keeps the one the call made or reused),
// `precomputed` (the JSON of a summary prepared in the background), `onBackground`
// (receives what the addon did with it), `declined` (`{ code, message }`: no summary is paid
// for this call, see compactor.js) and `learntModels` (what the store's record holds of every
// model, learnt.js: the summary model's window and factor size its request).
async function runCompaction(messages, opts, counts, calibration, markMap, held) {
  // Unknown option names: warnings in the result (a TypeError with strict: true), before anything runs.
  const unknown = unknownOptionWarnings(opts)
  // An OpenTelemetry span around it when `@opentelemetry/api` is installed (lib/compaction/otel.js).
  const result = await tracedCompaction(messages, opts, (traced) => compactWith(messages, traced, counts, calibration, markMap, held))
  if (unknown.length > 0) result.warnings = [...unknown, ...result.warnings]
  return result
}

async function compactWith(messages, opts, counts, calibration, markMap, held) {
  if (isCustomStrategy(opts.strategy)) return runCustomStrategy(messages, opts, counts, calibration, markMap)
  checkedMessages(messages)
  const summarizer = wrapSummarizer(checkFunction(opts, 'summarizer'), messages, formatOf(opts))
  const onEvent = wrapEvents(checkFunction(opts, 'onEvent'))
  const onBeforeCompact = wrapBeforeCompact(checkFunction(opts, 'onBeforeCompact'))
  const read = wrapRead(opts.rehydrate)
  const onLog = wrapLog(opts)
  const signal = checkSignal(opts)
  const store = checkArchiveStore(opts.archiveStore)
  const outcomeJson = await withArchiveStore(store, (storeId) => {
    const declined = held?.declined ?? null
    const learntModels = held?.learntModels != null && Object.keys(held.learntModels).length > 0 ? held.learntModels : null
    const optsJson = held?.options
      ? changesJson(held.options.changes, { archiveStoreId: storeId, summaryDeclined: declined, learntModels })
      : optionsJson(opts, storeId, declined, learntModels)
    return withSignal(signal, (cancelId) =>
      native.compactJson(messages, {
        optionsJson: optsJson ?? undefined,
        optionsHeld: held?.options?.id,
        // Absent fields are undefined: the addon reads a null as a value of the field's type.
        counts: counts ?? undefined,
        summarizer,
        onEvent,
        cancelId,
        calibrationJson: calibration ? JSON.stringify(calibration) : undefined,
        onLog,
        onBeforeCompact,
        checkpointShelf: held?.checkpoints ?? undefined,
        precomputedJson: held?.precomputed ?? undefined,
        onRead: read,
      }),
    )
  })
  const outcome = JSON.parse(outcomeJson)
  if (held?.onBackground) held.onBackground(outcome.background ?? null)
  return buildResult(messages, outcome)
}

async function compactMessages(messages, options) {
  const opts = checkOptions(options)
  checkArchiveStore(opts.archiveStore)
  // What the store learnt about the agent's model (its window, its factor), read once.
  const learnt = await readLearnt(opts)
  let calibration = withLearnt(null, learnt.entry)
  const overflow = opts.overflow !== undefined && opts.overflow !== null
  const usage = opts.usage !== undefined && opts.usage !== null && learntModelOf(opts) !== null
  const counts = overflow || usage ? countEach(messages, opts) : undefined
  if (overflow) calibration = overflowCalibration(messages, counts, opts, calibration)
  const factor = usage ? usageFactor(messages, counts, opts) : null
  const result = await runCompaction(messages, overflow ? { ...opts, force: true } : opts, counts, calibration, undefined, {
    learntModels: learnt.models,
  })
  const updates = learntUpdates(opts, { window: calibration?.window, factor }, learnt.entry, summaryModelLearnt(result))
  const warnings = [...learnt.warnings, ...(await recordLearnt(opts, updates))]
  if (warnings.length > 0) {
    result.warnings = [...result.warnings, ...warnings]
    reportWarnings(opts, warnings)
  }
  return result
}

// What the summary model's own refusals or usage taught, when the compaction says it.
function summaryModelLearnt(result) {
  const learnt = result.summaryModelLearnt
  return learnt && typeof learnt === 'object' ? [learnt] : []
}

// The factor one usage report shows (billed / counted of what it covers), when it covers
// enough to mean something (see ratioFactor).
function usageFactor(messages, counts, opts) {
  const m = measureCounts(messages, counts, { ...opts, usage: undefined }, null)
  if (m.tokensAfterLastAssistant === null) return null
  const covered = m.rawTokens - m.tokensAfterLastAssistant
  const json = callNative(() => native.calibrateJson(null, covered, JSON.stringify(opts.usage, withNonFinite)))
  const [raw, billed] = JSON.parse(json).latest ?? [0, 0]
  return ratioFactor(raw, billed)
}

// `overflow`: the agent's API refused the last request as too long (see isContextOverflow), so
// the estimate was low. The calibration is raised so that no estimate is below what that
// request must have been billed — the prompt size the error names, else more than the window
// (SPEC §4.8) — and the compaction runs whatever the estimate says. When the error states the
// model's maximum, that is the window from now on (less the output the request reserved).
function overflowCalibration(messages, counts, opts, calibration) {
  const raw = measureCounts(messages, counts, { ...opts, usage: undefined }, null).rawTokens
  const { messages: texts, contextSize, promptSize } = gatherErrorSignals(opts.overflow)
  const json = callNative(() =>
    native.calibrateOverflowJson(
      calibration ? JSON.stringify(calibration) : null,
      raw,
      texts,
      optionsJson(opts),
      contextSize ?? null,
      promptSize ?? null,
    ),
  )
  return JSON.parse(json)
}

module.exports = {
  runCompaction,
  compactMessages,
  overflowCalibration,
  summaryModelLearnt,
}
