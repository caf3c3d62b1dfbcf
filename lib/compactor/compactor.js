'use strict'

// The stateful form: a Compactor holds a session's options, its per-message counts
// (message-counts.js: what a call re-checks, so that a step costs what was appended), what it
// learned from usage reports,
// and the session's MessageMarkMap with the batches it can roll back to.

const native = require('../addon/native.js')
const { describe, invalidArgument, callNative, checkOptions, checkFunction } = require('../addon/validate.js')
const { formatOf, needsToolBytes, unknownOptionWarnings, withNonFinite, isCustomStrategy, HeldOptions, changesJson } = require('../options/options.js')
const { wrapLog, reportWarnings, emitEvent } = require('../addon/callbacks.js')
const { checkArchiveStore } = require('../archive/store.js')
const { measureCounts } = require('../counting/counting.js')
const { partitionMessages, generateSummary } = require('../compaction/steps.js')
const { restoreMessages } = require('../archive/archives.js')
const { createMarkMap } = require('../compaction/mark-map.js')
const { runCompaction, overflowCalibration, summaryModelLearnt } = require('../compaction/compaction.js')
const { learntModelOf, readLearntSync, readLearnt, withLearnt, learntUpdates, recordLearnt, slopeOf } = require('../counting/learnt.js')
const { MessageCounts } = require('./message-counts.js')
const { Background } = require('./background.js')

// No death spiral: after a compaction that left the list over the threshold (STILL_OVER_LIMIT),
// another summary is paid for only once the list has grown by a tenth of the window; after this
// many in a row, not until the list changes by that much (what it held before, removed or
// edited: the message that keeps it over is gone or shorter).
const OVER_LIMIT_STREAK = 3
const MEANINGFUL_CHANGE = 0.1
// Rollback to one of the last this many compactions gives back the very message objects it
// returned; to an older one, equal copies from the archives (see #keepBatch).
const ROLLBACK_OBJECTS = 8

// Not part of the API: an adapter that builds the list it hands a Compactor (its framework's
// messages converted, objects no one else holds) says so, and the Compactor's steps stop
// re-comparing those objects, which the adapter does for the framework's own (message-counts.js).
const BUILT_BY_ADAPTER = Symbol('context-compact: messages built by an adapter')


class Compactor {
  #options
  // The options as the addon holds them (options.js HeldOptions): a call hands over their id
  // and what it changes (its overrides), never the options again.
  #held
  // The per-message counts and what a step re-checks (message-counts.js).
  #counts
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
  // The checkpoints of this session's compactions: a later compact() on a list that starts with
  // what one covers reuses its summary message without a summary call, even when the archive
  // location cannot be read. They stay in the addon (src/checkpoints.rs; made at the first
  // compact()): handing them over on every call, below the threshold too, would cost more with
  // every compaction.
  #checkpoints = null
  // `background`: the summary prepared before the threshold (background.js).
  #background
  // After STILL_OVER_LIMIT: the cache entries of the list the last compaction returned (a
  // message unchanged since keeps its entry), their tokens, the tokens added since the last
  // summary paid for, and how many compactions in a row ended over the threshold. null: none.
  #overLimit = null
  // What the store learnt about the agent's model (learnt.js), read once: `saved` is what the
  // store holds (so that only what is new is written), `warnings` what reading it said (given
  // with the next result), `pending` the read of a JS archiveStore, which is asynchronous.
  #learnt = { loaded: false, saved: {}, models: {}, warnings: [], pending: null }


  constructor(options) {
    this.#options = { ...checkOptions(options) }
    this.#counts = new MessageCounts(this.#options)
    // With strict: true an unknown option name fails here; otherwise each result says it.
    unknownOptionWarnings(this.#options)
    // Read by the addon once; invalid options fail here rather than on the first turn.
    this.#held = new HeldOptions(this.#options)
    checkFunction(this.#options, 'summarizer')
    checkFunction(this.#options, 'onEvent')
    checkFunction(this.#options, 'onBeforeCompact')
    checkArchiveStore(this.#options.archiveStore)
    wrapLog(this.#options)
    this.#background = new Background(this.#options.background)
    // A JS archiveStore can only be read asynchronously: started now, used once it answered
    // (compact() waits for it). A directory or an object-store URL is read at the first use.
    if (this.#options.archiveStore) {
      this.#learnt.pending = readLearnt(this.#options).then((read) => this.#applyLearnt(read))
    }
  }

  // Reads what the store learnt, once (synchronously where the store allows it).
  #loadLearnt() {
    if (this.#learnt.loaded || this.#learnt.pending) return
    const read = readLearntSync(this.#options)
    if (read !== null) this.#applyLearnt(read)
  }

  #applyLearnt(read) {
    this.#learnt.loaded = true
    this.#learnt.pending = null
    this.#learnt.saved = { ...read.entry }
    this.#learnt.models = { ...read.models }
    this.#learnt.warnings.push(...read.warnings)
    reportWarnings(this.#options, read.warnings)
    this.#calibration = withLearnt(this.#calibration, read.entry)
  }

  // Keeps in the store what this compactor learnt that the store does not hold yet; returns
  // the warnings (of reading it before, and of writing it).
  async #keepLearnt(opts, result) {
    const c = this.#calibration
    const learnt = { window: c?.window, factor: slopeOf(c) }
    const updates = learntUpdates(opts, learnt, this.#learnt.saved, summaryModelLearnt(result))
    const warnings = this.#learnt.warnings.splice(0)
    const failed = await recordLearnt(opts, updates)
    // The summary model's later parts in this session are sized with what it taught, kept or not.
    for (const u of updates) {
      const key = u.model.trim().toLowerCase()
      const known = this.#learnt.models[key] ?? {}
      this.#learnt.models[key] = { window: u.window ?? known.window ?? null, factor: u.factor ?? known.factor ?? null }
    }
    if (failed.length === 0) {
      for (const u of updates) {
        if (u.model !== learntModelOf(opts)) continue
        if (u.window !== undefined) this.#learnt.saved.window = u.window
        if (u.factor !== undefined) this.#learnt.saved.factor = u.factor
      }
    } else {
      reportWarnings(opts, failed)
    }
    return [...warnings, ...failed]
  }

  /** The options this compactor was created with (a copy). */
  get options() {
    return { ...this.#options }
  }

  /** The session's MessageMarkMap (a copy): one batch per compaction, rollback removes batches. */
  get markMap() {
    return structuredClone(this.#markMap)
  }

  // Gives every message object not seen before the next original index (`entries`: those of
  // the same list, which say which positions an earlier call tracked already).
  #track(messages, entries) {
    const untracked = entries?.untracked
    const count = untracked ? untracked.length : messages.length
    this.#counts.tracked(entries)
    for (let k = 0; k < count; k++) {
      const message = messages[untracked ? untracked[k] : k]
      if (message === null || typeof message !== 'object') continue
      if (this.#origin.has(message) || this.#generated.has(message)) continue
      this.#origin.set(message, this.#nextOriginal)
      this.#markMap.originalIndices.push(this.#nextOriginal)
      this.#nextOriginal += 1
    }
  }

  /**
   * Says that these message objects were changed in place (edited, streamed into): the next
   * call reads them again, whatever it re-checks (see message-counts.js).
   */
  changed(messages) {
    this.#counts.changed(Array.isArray(messages) ? messages : [messages])
  }

  [BUILT_BY_ADAPTER]() {
    this.#counts.builtByAdapter()
  }

  // Token counts per message (a step's check: see #entries).
  #countEach(messages) {
    return this.#counts.entries(messages, false).map((entry) => entry.tokens)
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
    for (const entry of this.#counts.entries(messages)) total += entry.tokens
    return total
  }

  /**
   * What this compactor learned from usage reports: the billed-per-raw-token slope (null until
   * enough growth was seen), the latest billed/raw ratio, and how many reports it saw.
   */
  get calibration() {
    this.#loadLearnt()
    const c = this.#calibration
    if (!c) return null
    if (!c.latest) {
      if (c.window == null && c.factor == null) return null
      return { slope: null, ratio: null, samples: 0, window: c.window ?? null, factor: c.factor ?? null }
    }
    const [firstRaw, firstBilled] = c.first
    const [raw, billed] = c.latest
    const slope = raw - firstRaw >= 2000 && billed > firstBilled ? (billed - firstBilled) / (raw - firstRaw) : null
    return { slope, ratio: billed / raw, samples: c.samples, window: c.window ?? null, factor: c.factor ?? null }
  }

  // The held options for a call with `given` overrides (`{ id, handle, rest, changes }`: the
  // reading, the overrides it does not hold and their JSON), for measureCounts and runCompaction.
  #heldFor(given) {
    const { handle, rest } = this.#held.current(given)
    return { id: handle.id, handle, rest, changes: changesJson(rest) }
  }

  // `held` with `rest` (what the call changes beyond the reading) instead of its own.
  #heldWith(held, rest) {
    return { ...held, rest, changes: changesJson(rest) }
  }

  // Learns from a usage report (before measuring with it). `held`: the call's (#heldFor).
  #observe(messages, counts, opts, held) {
    if (opts.usage === undefined || opts.usage === null) return
    // Measured without the usage: unset where the Compactor holds one, else just not given.
    const without = { ...held.rest }
    if (this.#options.usage === undefined || this.#options.usage === null) delete without.usage
    else without.usage = undefined
    const m = measureCounts(messages, counts, { ...opts, usage: undefined }, null, 0, this.#heldWith(held, without))
    if (m.tokensAfterLastAssistant === null) return
    const covered = m.rawTokens - m.tokensAfterLastAssistant
    const json = callNative(() =>
      native.calibrateJson(this.#calibration ? JSON.stringify(this.#calibration) : null, covered, JSON.stringify(opts.usage, withNonFinite)),
    )
    this.#calibration = JSON.parse(json)
  }

  /**
   * The numbers behind the trigger: the raw count, the estimate it compares with the threshold,
   * and where the estimate came from ('usage', 'calibration', 'model' or 'raw').
   */
  measure(messages, overrides) {
    const given = checkOptions(overrides, 'overrides')
    const opts = { ...this.#options, ...given }
    // The constructor's options are said in each compaction's warnings; a call's own, here.
    if (overrides) reportWarnings(opts, unknownOptionWarnings({ ...given, strict: opts.strict }, 'overrides'))
    const entries = this.#counts.entries(messages, false)
    const counts = entries.map((entry) => entry.tokens)
    this.#track(messages, entries)
    this.#loadLearnt()
    const held = this.#heldFor(given)
    this.#observe(messages, counts, opts, held)
    const { tokensAfterLastAssistant, ...measure } = measureCounts(
      messages,
      counts,
      opts,
      this.#calibration,
      this.#toolOutputBytes(messages, entries, opts),
      held,
    )
    return measure
  }

  /**
   * Also emits `token_limit_exceeded` through `onEvent` when the estimate reaches the threshold,
   * and with `background`, starts the summary when the list is past its start point.
   */
  shouldCompact(messages, overrides) {
    const measure = this.measure(messages, overrides)
    if (this.#background.enabled && !measure.shouldCompact) {
      const opts = { ...this.#options, ...checkOptions(overrides, 'overrides') }
      this.#background.maybeStart(messages, this.#countEach(messages), measure, opts, this.#calibration)
    }
    this.#limitReported = null
    if (messages.length > 0 && measure.tokens >= measure.threshold) {
      const onEvent = { ...this.#options, ...(overrides ?? {}) }.onEvent
      if (typeof onEvent === 'function') {
        this.#limitReported = { messages, length: messages.length }
        emitEvent(onEvent, { type: 'token_limit_exceeded', tokensUsed: measure.tokens, tokenLimit: measure.threshold })
      }
    }
    return measure.shouldCompact
  }

  async compact(messages, overrides) {
    const given = checkOptions(overrides, 'overrides')
    let opts = { ...this.#options, ...given }
    let held = this.#heldFor(given)
    // What this call changes beyond the held reading (its overrides, and what is set below).
    const changes = { ...held.rest }
    const entries = this.#counts.entries(messages)
    const counts = entries.map((entry) => entry.tokens)
    this.#track(messages, entries)
    if (this.#learnt.pending) await this.#learnt.pending
    this.#loadLearnt()
    this.#observe(messages, counts, opts, held)
    if (opts.overflow !== undefined && opts.overflow !== null) {
      this.#calibration = overflowCalibration(messages, counts, opts, this.#calibration)
      opts = { ...opts, force: true }
      changes.force = true
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
      changes.compactionUnavailableModels = opts.compactionUnavailableModels
    }
    held = this.#heldWith(held, changes)
    if (this.#checkpoints === null && !isCustomStrategy(opts.strategy)) this.#checkpoints = new native.CheckpointShelf()
    const hold = {
      options: { id: held.id, handle: held.handle, changes: held.rest },
      checkpoints: this.#checkpoints?.id ?? null,
      precomputed: null,
      onBackground: null,
      learntModels: this.#learnt.models,
    }
    // `background`: below the threshold, maybe start the summary; at it, the prepared one (a
    // running one awaited) goes to the addon, which uses it if what it covers is unchanged.
    let background = null
    let taken = null
    if (this.#background.enabled) {
      const measure = measureCounts(messages, counts, opts, this.#calibration, this.#toolOutputBytes(messages, entries, opts), held)
      if (measure.shouldCompact || opts.force === true) {
        taken = await this.#background.take(opts)
        hold.precomputed = taken.precomputed
        hold.onBackground = (fromAddon) => {
          background = this.#background.settle(taken, fromAddon, opts)
        }
      } else {
        background = this.#background.maybeStart(messages, counts, measure, opts, this.#calibration)
      }
    }
    // No death spiral (see OVER_LIMIT_STREAK). A Compactor told of an overflow pays: the API
    // has just refused the list.
    const backoff = opts.overflow === undefined || opts.overflow === null ? this.#backoff(entries, opts, held) : null
    if (backoff !== null) hold.declined = backoff.declined
    const result = await runCompaction(messages, opts, counts, this.#calibration, this.#markMap, hold)
    this.#afterCompaction(messages, result, backoff)
    if (this.#background.enabled) result.background = background
    const learntWarnings = await this.#keepLearnt(opts, result)
    if (learntWarnings.length > 0) result.warnings = [...result.warnings, ...learntWarnings]
    if (result.compactionUnavailable) this.#compactionUnavailable.add(result.compactionUnavailable)
    if (result.compacted) {
      // New messages (summary, notice, cleared tool results) are counted now, so the next turn
      // only counts what it adds, and are never taken for originals.
      const fresh = result.messages.filter((m) => m !== null && typeof m === 'object' && !this.#origin.has(m))
      for (const m of fresh) this.#generated.add(m)
      // The whole returned list, so that the next step finds its messages where it left them
      // (every one of them is an original tracked above or one of these).
      this.#counts.tracked(this.#counts.entries(result.messages))
      this.#startBatch(messages, result)
      this.#lastMessages = result.messages
    }
    return result
  }

  // Whether this call declines to pay for a summary (null: it pays), after STILL_OVER_LIMIT.
  // Measured against the list the last compaction returned: what the caller added since (on
  // top of what was added since the last summary paid for) and what it removed or changed.
  #backoff(entries, opts, held) {
    const last = this.#overLimit
    if (last === null || isCustomStrategy(opts.strategy)) return null
    let kept = 0
    let added = 0
    for (const entry of entries) {
      if (last.entries.has(entry)) kept += entry.tokens
      else added += entry.tokens
    }
    const window = measureCounts([], [], opts, null, 0, held).window
    const step = Math.max(1, Math.ceil(window * MEANINGFUL_CHANGE))
    if (last.tokens - kept >= step) {
      // The caller changed the list: the message that kept it over may be gone.
      this.#overLimit = null
      return null
    }
    const grown = last.grown + added
    if (last.streak < OVER_LIMIT_STREAK && grown >= step) return null
    const message =
      last.streak < OVER_LIMIT_STREAK
        ? `no summary was paid for: the last compaction of this session left the list over the threshold (STILL_OVER_LIMIT), and it has grown by ${grown} tokens since; another summary is made once it grows by ${step} (a tenth of the ${window}-token window)`
        : `no summary was paid for: the last ${last.streak} compactions of this session in a row left the list over the threshold (STILL_OVER_LIMIT); summaries stop until ${step} tokens (a tenth of the ${window}-token window) of what the list held are removed or shortened, e.g. the message that keeps it over (offload: 'all' shortens user and assistant text)`
    return { grown, declined: { code: 'SUMMARY_SKIPPED', message } }
  }

  // What the backoff remembers of a compaction (`backoff`: the call declined to pay).
  #afterCompaction(messages, result, backoff) {
    const code = result.error?.code ?? null
    const streak = this.#overLimit?.streak ?? 0
    if (backoff === null) {
      // A summary could be paid for: over the threshold again is one more in a row (a list that
      // would not get smaller after one counts too); under it, the backoff ends.
      if (code === 'STILL_OVER_LIMIT' || (code === 'NOT_SMALLER' && streak > 0)) {
        this.#overLimit = { ...this.#entriesOf(result.compacted ? result.messages : messages), grown: 0, streak: streak + 1 }
      } else if (result.compacted) {
        this.#overLimit = null
      }
      return
    }
    if (!result.compacted) {
      // Declined, and the list stands (below the threshold nothing was due: no error). Over it,
      // the result says why no summary was paid for, with what the summary written without an
      // LLM met when it was tried (the list reached the window).
      if (code !== null && code !== 'SUMMARY_SKIPPED') {
        const why = `; written without an LLM instead, it was not compacted: ${code}: ${result.error.message}`
        result.error = { code: 'SUMMARY_SKIPPED', message: backoff.declined.message + why, attempts: result.error.attempts ?? 0 }
      }
      return
    }
    // Declined, and the summary written without an LLM replaced part of the list: what was
    // added since the last paid summary still counts toward the next one.
    if (code === 'STILL_OVER_LIMIT') {
      this.#overLimit = { ...this.#entriesOf(result.messages), grown: backoff.grown, streak }
    } else {
      this.#overLimit = null
    }
  }

  // The cache entries of a list and their tokens (for the backoff).
  #entriesOf(list) {
    const entries = new WeakSet()
    let tokens = 0
    for (const entry of this.#counts.entries(list)) {
      entries.add(entry)
      tokens += entry.tokens
    }
    return { entries, tokens }
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
      if (later > 0) this.#keepBatch(result.messages)
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
    this.#keepBatch(result.messages)
  }

  // What rollback needs of a batch: the list its compaction returned, and how many originals
  // existed then. The last ROLLBACK_OBJECTS batches keep the list's message objects; an older one
  // keeps, for each of its originals, only its original index (rollback reads it back from the
  // archives), and the messages this compactor made (summaries, notices) as they are: a long
  // session does not hold every compaction's kept messages alive.
  #keepBatch(list) {
    this.#batches.push({ snapshot: list.slice(), originals: null, seen: this.#nextOriginal })
    const old = this.#batches[this.#batches.length - 1 - ROLLBACK_OBJECTS]
    if (old === undefined || old.originals !== null) return
    old.originals = Int32Array.from(old.snapshot, (m) => (this.#generated.has(m) ? -1 : (this.#origin.get(m) ?? -1)))
    old.snapshot = old.snapshot.map((m, i) => (old.originals[i] < 0 ? m : null))
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
    const base = this.#batches[position - 1]
    const kept = position === 0 ? [] : base.originals === null ? base.snapshot : base.snapshot.map((m, i) => (base.originals[i] < 0 ? m : full[base.originals[i]]))
    const restored = position === 0 ? full : [...kept, ...full.slice(base.seen)]
    map.batchBoundaries.length = position + 1
    map.boundaryToBatch.length = position + 1
    map.currentBatch = batch
    this.#batches.length = position
    this.#lastMessages = restored
    return restored
  }

  /**
   * Stops the compactor's background work: a summary being prepared is cancelled and awaited
   * (no request, timer or promise is left behind), and none starts again. What it learnt about
   * the model and has not kept in the store yet is kept (a warning in the log when it cannot
   * be). The compactor stays usable for foreground compactions.
   */
  async close() {
    await this.#background.close()
    // What this conversation learnt and has not kept yet (a loop that never compacted).
    if (this.#learnt.pending) await this.#learnt.pending
    this.#loadLearnt()
    await this.#keepLearnt(this.#options, {})
  }

  partitionMessages(messages, tailRetentionTokens) {
    return partitionMessages(messages, tailRetentionTokens, this.#options)
  }

  generateSummary(middle, overrides) {
    return generateSummary(middle, { ...this.#options, ...checkOptions(overrides, 'overrides') })
  }
}

module.exports = {
  Compactor,
  BUILT_BY_ADAPTER,
}
