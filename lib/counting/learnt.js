'use strict'

// What was learnt about the agent's model (issue 35), kept in the store so that a new
// conversation on the same model starts with it: the window its API stated when it refused a
// request as too long, and the factor between what it bills and what we count, learnt from
// usage. One record per store (crates/core/src/archive/learnt.rs: `learnt-models.json` in
// `outputDir`, or under the object store's prefix, or the caller's `archiveStore`), read once
// per Compactor or compactMessages call, written only when something new was learnt.

const native = require('../addon/native.js')
const { withArchiveStore, storeJson } = require('../archive/store.js')

const DEFAULT_OUTPUT_DIR = './.context-compact'

// A factor that moved less than this is not written again.
const FACTOR_CHANGE = 0.02
// Below this many counted tokens covered by a usage report, a compactMessages call does not
// learn a factor from it: early in a session the ratio is dominated by the system prompt and
// tools the caller may not pass (17× on the first request of a real session).
const MIN_RATIO_TOKENS = 32_000

// The model whose billing the trigger estimates (the core's `trigger_model`): agentModel, the
// loop's request's model, else the summary model.
function learntModelOf(opts) {
  for (const name of [opts.agentModel, opts.agentRequest && typeof opts.agentRequest === 'object' ? opts.agentRequest.model : undefined, opts.model]) {
    if (typeof name === 'string' && name.trim() !== '') return name
  }
  return null
}

function outputDirOf(opts) {
  return typeof opts.outputDir === 'string' ? opts.outputDir : DEFAULT_OUTPUT_DIR
}

function parseRead(json) {
  const read = JSON.parse(json)
  const entry = {}
  if (Number.isInteger(read.window)) entry.window = read.window
  if (typeof read.factor === 'number') entry.factor = read.factor
  // Every model's window and factor: the core looks the summary model up in it once it has
  // chosen one (a provider's default included).
  const models = read.models !== null && typeof read.models === 'object' ? read.models : {}
  return { entry, models, warnings: Array.isArray(read.warnings) ? read.warnings : [] }
}

function failedRead(opts, error) {
  return { entry: {}, models: {}, warnings: [`what was learnt about models could not be read from ${outputDirOf(opts)}: ${error && error.message}`] }
}

// Synchronously, for a Compactor's first measure (a directory or an object-store URL). `null`
// with a JS archiveStore, which is read with readLearnt.
function readLearntSync(opts) {
  // Without a model named, the record is still read: the summary model (a provider's default)
  // looks itself up in `models`.
  const model = learntModelOf(opts) ?? ''
  if (opts.archiveStore) return null
  try {
    return parseRead(native.readLearntModelsSyncJson(outputDirOf(opts), storeJson(opts, null), model))
  } catch (error) {
    return failedRead(opts, error)
  }
}

async function readLearnt(opts) {
  const model = learntModelOf(opts) ?? ''
  try {
    const json = await withArchiveStore(opts.archiveStore, (id) => native.readLearntModelsJson(outputDirOf(opts), storeJson(opts, id), model))
    return parseRead(json)
  } catch (error) {
    return failedRead(opts, error)
  }
}

// A calibration (the core's Calibration as JSON) with what the store learnt: its window unless
// this conversation was told one since, its factor.
function withLearnt(calibration, entry) {
  if (entry.window === undefined && entry.factor === undefined) return calibration
  const merged = { ...(calibration ?? { first: null, latest: null, samples: 0 }) }
  if (entry.window !== undefined && merged.window == null) merged.window = entry.window
  if (entry.factor !== undefined) merged.factor = entry.factor
  return merged
}

// Below this much counted growth between a Compactor's first and latest usage reports, its
// slope is not kept for other conversations (single calls range 0.9–3.5 billed per counted token
// on the real sessions; the slope over a longer stretch is the session's).
const MIN_KEPT_SLOPE_SPAN = 10_000

// The billed-per-counted slope a Compactor's calibration learnt (the core's Calibration::slope),
// over at least `minSpan` counted tokens.
function slopeOf(calibration, minSpan = MIN_KEPT_SLOPE_SPAN) {
  if (!calibration || !calibration.first || !calibration.latest) return null
  const [firstRaw, firstBilled] = calibration.first
  const [raw, billed] = calibration.latest
  if (raw - firstRaw < minSpan || billed <= firstBilled) return null
  return Math.min(3, Math.max(0.8, (billed - firstBilled) / (raw - firstRaw)))
}

// What to write: `learnt` ({ window, factor }: what this conversation learnt) where it differs
// from what the store holds (`saved`), for the agent's model; plus the summary model's, when the
// outcome carries one (`summaryModelLearnt`: `{ model, window?, factor? }`).
function learntUpdates(opts, learnt, saved, extra = []) {
  const updates = []
  const model = learntModelOf(opts)
  if (model !== null) {
    const update = { model }
    if (Number.isInteger(learnt.window) && learnt.window !== saved.window) update.window = learnt.window
    const factor = learnt.factor ?? null
    if (factor !== null && (saved.factor === undefined || Math.abs(factor - saved.factor) > FACTOR_CHANGE * saved.factor)) {
      update.factor = factor
    }
    if (update.window !== undefined || update.factor !== undefined) updates.push(update)
  }
  for (const item of extra) {
    if (item && typeof item.model === 'string' && (Number.isInteger(item.window) || typeof item.factor === 'number')) {
      updates.push({ model: item.model, window: item.window ?? null, factor: item.factor ?? null })
    }
  }
  return updates
}

// Keeps `updates` in the store. Resolves with warnings (never rejects: what could not be kept is
// said, and the compaction's result stands).
async function recordLearnt(opts, updates) {
  if (updates.length === 0) return []
  try {
    const json = await withArchiveStore(opts.archiveStore, (id) =>
      native.recordLearntModelsJson(outputDirOf(opts), storeJson(opts, id), JSON.stringify(updates)),
    )
    return JSON.parse(json)
  } catch (error) {
    const models = updates.map((u) => u.model).join(', ')
    return [`what was learnt about ${models} could not be kept in ${outputDirOf(opts)}: ${error && error.message}`]
  }
}

// The factor a stateless call learns from one usage report: the billed/counted ratio of what the
// usage covers, when that is large enough to mean something.
function ratioFactor(coveredRaw, usageTokens) {
  if (!(coveredRaw >= MIN_RATIO_TOKENS) || !(usageTokens > 0)) return null
  const ratio = usageTokens / coveredRaw
  return ratio >= 0.8 && ratio <= 3 ? ratio : null
}

module.exports = {
  learntModelOf,
  readLearntSync,
  readLearnt,
  withLearnt,
  learntUpdates,
  recordLearnt,
  ratioFactor,
  slopeOf,
}
