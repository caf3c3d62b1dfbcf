'use strict'

// Progress on stderr while the summary is written (a spinner on a terminal, a heartbeat line
// in logs), retries and warnings as one line each, and Ctrl-C; and compacting with it.

const { oneLine } = require('./errors.js')
const { NAME, stderr } = require('./output.js')
const { call } = require('./library.js')

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']

function progress({ quiet, label }) {
  let start = Date.now()
  const tty = Boolean(process.stderr.isTTY)
  const state = { attempt: 1, provider: null, note: '', noteUntil: 0, started: false }
  const elapsed = () => `${((Date.now() - start) / 1000).toFixed(1)}s`
  let timer = null
  let frame = 0
  const render = () => {
    const who = state.provider ? ` (${state.provider})` : ''
    const line = `${SPINNER[frame++ % SPINNER.length]} ${label}${who} ${elapsed()} · attempt ${state.attempt}${state.note && Date.now() < state.noteUntil ? ' · ' + state.note : ''}`
    process.stderr.write(`\r${line.slice(0, (process.stderr.columns || 120) - 1)}\x1b[K`)
  }
  const clear = () => tty && state.started && process.stderr.write('\r\x1b[K')
  const line = (text) => {
    if (quiet) return
    clear()
    stderr(text)
    if (timer && tty) render()
  }
  // Ctrl-C while the summary is written: leave a clean line, exit 130 like a shell would.
  const onSigint = () => {
    if (timer) clearInterval(timer)
    clear()
    stderr(`${NAME}: interrupted after ${elapsed()}`)
    process.exit(130)
  }
  process.once('SIGINT', onSigint)
  // Shown once the library has planned a compaction (its `started` event): a compaction with
  // nothing to summarize shows no progress for nothing.
  const begin = () => {
    if (state.started) return
    state.started = true
    start = Date.now()
    if (quiet) return
    if (tty) {
      render()
      timer = setInterval(render, 80)
    } else {
      stderr(`${label}…`)
      // A heartbeat every 15 s so logs show the process is alive.
      timer = setInterval(() => stderr(`  still writing the summary: ${elapsed()}, attempt ${state.attempt}`), 15_000)
    }
  }
  return {
    line,
    onEvent(event) {
      if (!event) return
      if (event.type === 'started') return begin()
      if (event.type !== 'retry') return
      state.attempt = event.attempt + 1
      const why = event.error ? `${event.error.code}${event.error.status ? ` (HTTP ${event.error.status})` : ''}` : 'failed'
      state.note = `attempt ${event.attempt} failed: ${why}, retrying in ${(event.delayMs / 1000).toFixed(1)}s`
      state.noteUntil = Date.now() + event.delayMs
      if (!tty) line(`  attempt ${event.attempt} failed: ${why}${event.error?.message ? ` — ${oneLine(event.error.message)}` : ''}; attempt ${state.attempt} in ${(event.delayMs / 1000).toFixed(1)}s`)
    },
    // The provider and model, for the progress line. Warnings are not printed from the log:
    // the command prints the result's warnings, which say all a user needs.
    onLog(entry) {
      const provider = entry.fields && entry.fields.provider
      if (provider && !state.provider) state.provider = entry.fields.model ? `${provider} ${entry.fields.model}` : provider
    },
    stop(result) {
      process.removeListener('SIGINT', onSigint)
      if (timer) clearInterval(timer)
      timer = null
      if (quiet || !state.started) return
      clear()
      if (!tty || result) {
        const attempts = result ? result.attempts : state.attempt
        const how = result && result.compacted ? 'summary written' : 'finished'
        stderr(`${how} in ${elapsed()} (${attempts} attempt${attempts === 1 ? '' : 's'})`)
      }
    },
  }
}

// CONTEXT_COMPACT_LOG asks for the library's log on stderr; the CLI routes each compaction's log
// through its progress line, so it passes the level on.
function logLevelFromEnvironment() {
  const level = String(process.env.CONTEXT_COMPACT_LOG ?? '').trim().toLowerCase()
  if (['off', 'error', 'warn', 'info', 'debug'].includes(level)) return level
  return level === '' ? undefined : 'debug'
}

/**
 * Compacts with progress on stderr. A `Compactor` counts each message once: validating,
 * measuring and compacting share its per-message cache.
 */
async function compactWithProgress(compactor, messages, overrides, { quiet, label }) {
  const measure = await call(() => compactor.measure(messages, overrides))
  const p = progress({ quiet, label })
  const logLevel = logLevelFromEnvironment()
  let result
  try {
    result = await call(() =>
      compactor.compact(messages, {
        ...overrides,
        onEvent: p.onEvent,
        onLog: p.onLog,
        ...(logLevel === undefined ? {} : { logLevel }),
      }),
    )
  } finally {
    p.stop(result)
  }
  return { measure, result }
}

module.exports = { compactWithProgress }
