'use strict'

// A Compactor's `background` (SPEC §4.11): the summary of the middle is prepared while the agent
// works, before the threshold, so that the call that crosses it does not wait for an LLM.
//
// - Start: a call that finds the list between the start point (`atRatio` × the threshold, or
//   `atTokens`) and the threshold asks the addon for the summary of the middle as the trigger
//   would cut it now (`precomputeSummaryJson`: nothing archived, no sequence number taken) and
//   returns at once.
// - Swap: the call that compacts passes the prepared summary to the addon, which uses it in
//   place of the summary call when every message it covers is unchanged (by content: the same
//   hash chain as checkpoints), archiving them then under that compaction's sequence number.
//   A summary still running is awaited: never a second request for the same range.
// - Stale: covered messages changed or gone, the head changed (the addon's check), or the
//   options, the summarizer, the agent model or the summary model changed (checked here, from
//   what the summary was asked with): it is dropped — never archived — and the compaction runs
//   in the foreground.
// - Failed: reported; the compaction runs as without it. No new one starts before that
//   compaction, so a failing provider is not asked again on every turn.
// - Cleanup: the job's promise never rejects (its failures are states), its cancel token is
//   released when it settles, the caller's `signal` cancels it, and `close()` cancels it and
//   waits for it.

const native = require('../addon/native.js')
const { describe, invalidArgument, translateError, checkFunction, checkInteger, checkRatio } = require('../addon/validate.js')
const { isCustomStrategy, optionsJson, formatOf } = require('../options/options.js')
const { abortError, wrapSummarizer, wrapLog, wrapEvents, emitEvent } = require('../addon/callbacks.js')

// Where a background summary starts by default: 80 % of the threshold (Mastra activates its
// buffered observations at 80 %; Cline's double buffer starts at 60 % and swaps at 85 %).
const DEFAULT_AT_RATIO = 0.8

// `background`: `true`, `{}`, `{ atRatio }` or `{ atTokens }`; `false`/absent: off.
function checkBackground(value) {
  if (value === undefined || value === null || value === false) return null
  if (value === true) return { atRatio: DEFAULT_AT_RATIO, atTokens: null }
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalidArgument(`options.background must be an object { atRatio } or { atTokens }, or a boolean, got ${describe(value)}`)
  }
  const { atRatio, atTokens } = value
  if (atRatio !== undefined && atTokens !== undefined) {
    throw invalidArgument('options.background takes atRatio or atTokens, not both')
  }
  if (atTokens !== undefined) {
    return { atRatio: null, atTokens: checkInteger(atTokens, 'options.background.atTokens', 1, 1_000_000_000) }
  }
  // A fraction of the threshold: 1 starts it at the threshold itself, i.e. never before.
  const ratio = checkRatio(atRatio, 'options.background.atRatio', DEFAULT_AT_RATIO)
  return { atRatio: ratio, atTokens: null }
}

// Options that change from call to call without changing what a summary says.
const VOLATILE = ['usage', 'force', 'overflow', 'checkpoints', 'compactionUnavailableModels', 'background']

// What the summary was asked with: a summary made with other options (instructions, model,
// provider, tail budget, agent model, format, …) is not the one the compaction would write now.
function fingerprintOf(opts) {
  const plain = { ...opts }
  for (const key of VOLATILE) delete plain[key]
  return optionsJson(plain)
}

// What the result says of a job (`result.background`).
function reportOf(job, state = job.state) {
  const report = { state, coveredMessages: job.covered }
  if (job.error) report.error = job.error
  return report
}

class Background {
  #config
  #job = null
  #closed = false

  constructor(value) {
    this.#config = checkBackground(value)
  }

  get enabled() {
    return this.#config !== null
  }

  /**
   * A call below the threshold: starts a summary when the list is past the start point and
   * none is prepared or running. Returns what `result.background` says.
   */
  maybeStart(messages, counts, measure, opts, calibration) {
    if (this.#closed) return { state: 'closed', coveredMessages: null }
    const current = this.#job
    if (current && (fingerprintOf(opts) !== current.fingerprint || opts.summarizer !== current.summarizer)) {
      // Asked with other options (another model, other instructions, …): not what this list
      // will be compacted with. Dropped, and a new one may start below.
      this.#job = null
      this.#cancel(current, 'stale')
      emitEvent(opts.onEvent, { type: 'background_stale', reason: 'options_changed', coveredMessages: current.covered })
    } else if (current) {
      return reportOf(current)
    }
    const strategy = opts.strategy ?? 'summary'
    const startAt = this.#config.atTokens ?? Math.ceil(this.#config.atRatio * measure.threshold)
    // Only the summary strategy writes a summary to prepare; nothing to do for an empty list.
    if (isCustomStrategy(strategy) || strategy !== 'summary' || measure.tokens < startAt || messages.length === 0) {
      return { state: 'idle', coveredMessages: null }
    }
    if (opts.signal && opts.signal.aborted) return { state: 'idle', coveredMessages: null }
    this.#job = this.#start(messages, counts, measure, startAt, opts, calibration)
    return reportOf(this.#job, 'started')
  }

  #start(messages, counts, measure, startAt, opts, calibration) {
    // The list as it is now: later pushes to the caller's array do not shift what the
    // summarizer is given.
    const list = messages.slice()
    const onEvent = opts.onEvent
    const cancelId = native.createCancelToken()
    const job = {
      state: 'running',
      fingerprint: fingerprintOf(opts),
      summarizer: opts.summarizer,
      cancelId,
      cancelled: null,
      startedAt: Date.now(),
      covered: null,
      precomputed: null,
      error: null,
      settled: null,
    }
    const signal = opts.signal
    const onAbort = () => this.#cancel(job, 'aborted')
    if (signal) signal.addEventListener('abort', onAbort, { once: true })
    let work
    try {
      work = native.precomputeSummaryJson(list, {
        optionsJson: optionsJson(opts),
        counts: counts ?? undefined,
        summarizer: wrapSummarizer(checkFunction(opts, 'summarizer'), list, formatOf(opts)),
        onEvent: wrapEvents(checkFunction(opts, 'onEvent')),
        cancelId,
        calibrationJson: calibration ? JSON.stringify(calibration) : undefined,
        onLog: wrapLog(opts),
      })
    } catch (error) {
      work = Promise.reject(error)
    }
    job.settled = work
      .then(
        (json) => {
          const answer = JSON.parse(json)
          if (answer.precomputed) {
            job.state = 'ready'
            job.precomputed = JSON.stringify(answer.precomputed)
            job.covered = answer.coveredItems
            emitEvent(onEvent, { type: 'background_ready', coveredMessages: job.covered, durationMs: Date.now() - job.startedAt })
          } else {
            job.state = 'failed'
            job.error = answer.error
            emitEvent(onEvent, { type: 'background_failed', error: job.error })
          }
        },
        (error) => {
          job.state = 'failed'
          if (error && error.code === 'Cancelled') {
            job.error = { code: 'ABORTED', message: `the background summary was cancelled (${job.cancelled ?? 'aborted'})` }
            // Dropped by the compactor itself (stale, close): said where it was dropped.
            if (job.cancelled !== 'aborted') return
          } else {
            const translated = translateError(error)
            job.error = { code: translated && translated.code ? String(translated.code) : 'SUMMARIZER_ERROR', message: String((translated && translated.message) || translated) }
          }
          emitEvent(onEvent, { type: 'background_failed', error: job.error })
        },
      )
      .finally(() => {
        if (signal) signal.removeEventListener('abort', onAbort)
        native.releaseCancelToken(cancelId)
      })
    emitEvent(onEvent, { type: 'background_started', tokens: measure.tokens, threshold: measure.threshold, startAt })
    return job
  }

  #cancel(job, why) {
    if (job.state !== 'running') return
    job.cancelled = why
    native.cancelToken(job.cancelId)
  }

  /**
   * A call that compacts: the prepared summary to pass to the addon (JSON), awaited when it is
   * still running (the caller's `signal` aborts the wait and drops it), or `null` with what the
   * result says of it. The job is this call's from now on.
   */
  async take(opts) {
    const job = this.#job
    this.#job = null
    if (!job) return { precomputed: null, job: null, report: null, waitedMs: 0 }
    if (fingerprintOf(opts) !== job.fingerprint || opts.summarizer !== job.summarizer) {
      this.#cancel(job, 'stale')
      const report = { ...reportOf(job, 'stale'), reason: 'options_changed' }
      delete report.error
      emitEvent(opts.onEvent, { type: 'background_stale', reason: 'options_changed', coveredMessages: job.covered })
      return { precomputed: null, job, report, waitedMs: 0 }
    }
    const started = Date.now()
    if (job.state === 'running') {
      const signal = opts.signal
      if (!signal) await job.settled
      else {
        let onAbort
        const aborted = new Promise((resolve) => {
          onAbort = () => resolve('aborted')
          if (signal.aborted) resolve('aborted')
          else signal.addEventListener('abort', onAbort, { once: true })
        })
        const first = await Promise.race([job.settled.then(() => 'settled'), aborted])
        signal.removeEventListener('abort', onAbort)
        if (first === 'aborted') {
          this.#cancel(job, 'aborted')
          throw abortError(signal)
        }
      }
    }
    const waitedMs = Date.now() - started
    if (job.state === 'ready') return { precomputed: job.precomputed, job, report: null, waitedMs }
    return { precomputed: null, job, report: reportOf(job, 'failed'), waitedMs }
  }

  /**
   * What `result.background` says after a compaction that took `taken`, from what the addon
   * reported (`outcome.background`); emits `background_applied` / `background_stale`.
   */
  settle(taken, fromAddon, opts) {
    if (!taken.job) return { state: 'idle', coveredMessages: null }
    if (taken.report) return taken.report
    const job = taken.job
    if (fromAddon && fromAddon.state === 'applied') {
      emitEvent(opts.onEvent, { type: 'background_applied', coveredMessages: job.covered, waitedMs: taken.waitedMs })
      return { state: 'applied', coveredMessages: job.covered, waitedMs: taken.waitedMs }
    }
    if (fromAddon && fromAddon.state === 'stale') {
      emitEvent(opts.onEvent, { type: 'background_stale', reason: fromAddon.reason, coveredMessages: job.covered })
      return { state: 'stale', reason: fromAddon.reason, coveredMessages: job.covered }
    }
    // Not used: the compaction did not go through (declined, not smaller, …).
    return { state: 'unused', coveredMessages: job.covered }
  }

  /** Stops: a running summary is cancelled and awaited; none starts again. */
  async close() {
    this.#closed = true
    const job = this.#job
    this.#job = null
    if (!job) return
    this.#cancel(job, 'closed')
    await job.settled
  }
}

module.exports = {
  Background,
  checkBackground,
}
