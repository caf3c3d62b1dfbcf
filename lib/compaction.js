'use strict'

// compactMessages (F-007, the whole pipeline in one call): one native call with the caller's
// functions wired in, or the custom-strategy runner; and the calibration an `overflow` error
// raises (SPEC §4.8). The Compactor runs its compactions through here too.

const native = require('./native.js')
const { callNative, checkedMessages, checkOptions, checkFunction, checkSignal } = require('./validate.js')
const { isCustomStrategy, optionsJson, formatOf, unknownOptionWarnings } = require('./options.js')
const { wrapSummarizer, wrapRead, wrapLog, wrapEvents, wrapBeforeCompact, withSignal } = require('./callbacks.js')
const { checkArchiveStore, withArchiveStore } = require('./store.js')
const { buildResult } = require('./result.js')
const { measureCounts, countEach } = require('./counting.js')
const { gatherErrorSignals } = require('./overflow.js')
const { runCustomStrategy } = require('./custom-strategy.js')

// `held`: what a Compactor holds for this call — `checkpoints` (the JSON of the checkpoint
// records it keeps), `onCheckpoint` (receives the record the call made or reused),
// `precomputed` (the JSON of a summary prepared in the background), `onBackground`
// (receives what the addon did with it) and `declined` (`{ code, message }`: no summary is paid
// for this call, see compactor.js).
async function runCompaction(messages, opts, counts, calibration, markMap, held) {
  // Unknown option names: warnings in the result (a TypeError with strict: true), before anything runs.
  const unknown = unknownOptionWarnings(opts)
  const result = await compactWith(messages, opts, counts, calibration, markMap, held)
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
    const optsJson = optionsJson(opts, storeId, held?.declined ?? null)
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
        held?.checkpoints ?? null,
        held?.precomputed ?? null,
        read,
      ),
    )
  })
  const outcome = JSON.parse(outcomeJson)
  if (outcome.checkpointRecord && held?.onCheckpoint) held.onCheckpoint(outcome.checkpointRecord)
  if (held?.onBackground) held.onBackground(outcome.background ?? null)
  return buildResult(messages, outcome)
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

module.exports = {
  runCompaction,
  compactMessages,
  overflowCalibration,
}
