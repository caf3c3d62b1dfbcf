'use strict'

// Progress on stderr while the summary is written (a spinner on a terminal, a heartbeat line
// in logs), retries and warnings as one line each, and Ctrl-C; and compacting with it.

const { oneLine } = require('./errors.js')
const { NAME, stderr } = require('./output.js')
const { call } = require('./library.js')

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']

function progress({ quiet, label }) {
  const start = Date.now()
  const tty = Boolean(process.stderr.isTTY)
  const state = { attempt: 1, provider: null, note: '', noteUntil: 0 }
  const elapsed = () => `${((Date.now() - start) / 1000).toFixed(1)}s`
  let timer = null
  let frame = 0
  const render = () => {
    const who = state.provider ? ` (${state.provider})` : ''
    const line = `${SPINNER[frame++ % SPINNER.length]} ${label}${who} ${elapsed()} · attempt ${state.attempt}${state.note && Date.now() < state.noteUntil ? ' · ' + state.note : ''}`
    process.stderr.write(`\r${line.slice(0, (process.stderr.columns || 120) - 1)}\x1b[K`)
  }
  const clear = () => tty && process.stderr.write('\r\x1b[K')
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
  if (!quiet) {
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
      if (!event || event.type !== 'retry') return
      state.attempt = event.attempt + 1
      const why = event.error ? `${event.error.code}${event.error.status ? ` (HTTP ${event.error.status})` : ''}` : 'failed'
      state.note = `attempt ${event.attempt} failed: ${why}, retrying in ${(event.delayMs / 1000).toFixed(1)}s`
      state.noteUntil = Date.now() + event.delayMs
      if (!tty) line(`  attempt ${event.attempt} failed: ${why}${event.error?.message ? ` — ${oneLine(event.error.message)}` : ''}; attempt ${state.attempt} in ${(event.delayMs / 1000).toFixed(1)}s`)
    },
    onLog(entry) {
      const provider = entry.fields && entry.fields.provider
      if (provider && !state.provider) state.provider = entry.fields.model ? `${provider} ${entry.fields.model}` : provider
      if (entry.level !== 'warn' && entry.level !== 'error') return
      // Shown elsewhere: retries (onEvent), the final failure (result.error), the zero-config
      // fallback (the provider in the statistics).
      if (entry.fields && entry.fields.delay_ms !== undefined) return
      if (/^(summary failed:|neither ANTHROPIC_API_KEY)/.test(entry.message)) return
      line(`warning: ${oneLine(entry.message)}`)
    },
    stop(result) {
      process.removeListener('SIGINT', onSigint)
      if (timer) clearInterval(timer)
      timer = null
      if (quiet) return
      clear()
      if (!tty || result) {
        const how = result && result.compacted ? 'summary written' : 'finished'
        stderr(`${how} in ${elapsed()} (${result ? result.attempts : state.attempt} attempt${(result ? result.attempts : state.attempt) === 1 ? '' : 's'})`)
      }
    },
  }
}

/**
 * Compacts with progress on stderr. A `Compactor` counts each message once: validating,
 * measuring and compacting share its per-message cache.
 */
async function compactWithProgress(compactor, messages, overrides, { quiet, label }) {
  const measure = await call(() => compactor.measure(messages, overrides))
  const willRun = measure.shouldCompact || compactor.options.force || overrides.force
  const p = willRun ? progress({ quiet, label }) : null
  let result
  try {
    result = await call(() =>
      compactor.compact(messages, {
        ...overrides,
        onEvent: p ? p.onEvent : undefined,
        // Log entries are shown as one-line warnings (or not at all with --quiet), so they
        // never break the spinner's line.
        onLog: p ? p.onLog : () => {},
      }),
    )
  } finally {
    if (p) p.stop(result)
  }
  return { measure, result }
}

module.exports = { compactWithProgress }
