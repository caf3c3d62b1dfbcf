'use strict'

// What the CLI prints: stdout/stderr lines, numbers and percentages, small tables, JSON files,
// and the statistics of a compaction (shared by compact and demo).

const fs = require('node:fs')

const { CliError, oneLine } = require('./errors.js')

// The program's name in help texts and error lines.
const NAME = 'context-compact'

const stdout = (text = '') => process.stdout.write(text + '\n')
const stderr = (text = '') => process.stderr.write(text + '\n')

const fmt = (n) => (typeof n === 'number' && Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : String(n))
const pct = (x) => `${(x * 100).toFixed(1)} %`
const plural = (n, word) => `${fmt(n)} ${word}${n === 1 ? '' : 's'}`

/** Left column padded, right column right-aligned: a small two-column table. */
function table(rows, indent = '  ', { header = false } = {}) {
  // Numbers are right-aligned in their column; other values (paths, names) left-aligned. A
  // header row is aligned like the numbers below it.
  const numeric = (cell, i) => (header && i === 0) || /^[\d,.\s%×→-]+$/.test(String(cell))
  const w0 = Math.max(...rows.map((r) => String(r[0]).length))
  const w1 = Math.max(0, ...rows.filter((r, i) => numeric(r[1], i)).map((r) => String(r[1]).length))
  return rows
    .map((r, i) => {
      const rest = r.slice(2).filter((x) => x !== undefined && x !== '')
      const right = String(r[1])
      const cell = numeric(right, i) ? right.padStart(w1) : right
      return `${indent}${String(r[0]).padEnd(w0)}  ${cell}${rest.length ? '  ' + rest.join('  ') : ''}`.trimEnd()
    })
    .join('\n')
}

// Indented JSON to a file, or to stdout when there is no file or it is "-".
function writeJson(file, value) {
  const text = JSON.stringify(value, null, 2) + '\n'
  if (file === undefined || file === '-') {
    process.stdout.write(text)
    return
  }
  try {
    fs.writeFileSync(file, text)
  } catch (error) {
    throw new CliError(`cannot write ${file}: ${oneLine(error.message)}`)
  }
}

// What the summary calls cost (result.summaryUsage), as the provider billed them.
function summaryUsageRows(result) {
  const u = result.summaryUsage
  if (!u) return []
  const input = u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens
  const share = input > 0 ? ` (${pct(u.cacheReadTokens / input)} of the input read from the cache)` : ''
  return [
    ['summary request', `${result.summaryRequest ?? '-'}, ${plural(u.requests, 'request')}`],
    ['summary input', `${fmt(u.cacheReadTokens)} cache read, ${fmt(u.cacheWriteTokens)} cache write, ${fmt(u.inputTokens)} full price${share}`],
    ['summary output', `${fmt(u.outputTokens)} tokens`],
  ]
}

// The statistics of a compacted result, as table rows; `before` is the input's length.
function statsRows(result, before) {
  const s = result.stats
  return [
    ['original tokens', fmt(s.originalTokenCount)],
    ['compacted tokens', fmt(s.compactedTokenCount)],
    ['compaction ratio', pct(s.compactionRatio), `(${pct(1 - s.compactionRatio)} saved)`],
    ['messages', `${fmt(before)} → ${fmt(result.messages.length)}`],
    ['compacted messages', fmt(s.compactedMessageCount)],
    ['retained messages', fmt(s.retainedMessageCount)],
    ['removed messages', fmt(s.removedMessageCount ?? 0)],
    ['provider', `${result.provider ?? '-'}${result.model ? ' ' + result.model : ''}`],
    ...summaryUsageRows(result),
    ['attempts', fmt(result.attempts)],
    ['archive', result.archivePath ?? '(none)'],
  ]
}

module.exports = { NAME, stdout, stderr, fmt, pct, plural, table, writeJson, statsRows }
