'use strict'

// Numbers, times and the small pieces every part of the report page writes: counts as people
// read them, clipped text, links to a compaction's card or a message's row, a table.

const { html } = require('./html.js')

/** 12,345 */
const fmt = (n) => (typeof n === 'number' && Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–')

/** 12.3K, 1.2M: for the chart's ticks and labels. */
function short(n) {
  if (!Number.isFinite(n)) return '–'
  const abs = Math.abs(n)
  const scaled = (value, unit) => `${Number(value.toFixed(value < 10 ? 1 : 0))}${unit}`
  if (abs >= 1e6) return scaled(n / 1e6, 'M')
  if (abs >= 1e3) return scaled(n / 1e3, 'K')
  return String(Math.round(n))
}

const pct = (part, whole) => (whole > 0 ? `${((part / whole) * 100).toFixed(1)}%` : '–')
const plural = (n, word, many = `${word}s`) => `${fmt(n)} ${n === 1 ? word : many}`

function bytes(n) {
  if (!Number.isFinite(n)) return '–'
  if (n < 1024) return `${n} B`
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`
  return `${(n / 1024 / 1024).toFixed(1)} MB`
}

/** An RFC 3339 time as "2026-02-17 09:30:00 UTC" (the text as given when it is not one). */
function when(text) {
  const t = Date.parse(text)
  if (!Number.isFinite(t)) return String(text ?? '–')
  return new Date(t).toISOString().replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')
}

/** At most `max` characters, and a note of what was left out. */
function clip(text, max) {
  const s = String(text ?? '')
  if (s.length <= max) return { text: s, left: 0 }
  return { text: s.slice(0, max), left: s.length - max }
}

const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : 0)

// Where the trigger's estimate came from (index.d.ts `EstimateSource`).
const ESTIMATES = { usage: 'the billed usage', calibration: 'the calibration', model: "the model's factor", raw: 'the raw count' }

const anchorOfCompaction = (n) => `compaction-${n}`
const compactionLink = (n) => html`<a href="#${anchorOfCompaction(n)}">#${n}</a>`
const messageLink = (i) => html`<a href="#m-${i}">${fmt(i)}</a>`

/** A table: `head` and `rows` are fragments. */
const table = (head, rows, cls = '') => html`<div class="scroll"><table${cls && html` class="${cls}"`}><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table></div>`
const th = (label, num = false) => html`<th${num && html` class="num"`}>${label}</th>`
const bar = (part, whole) => html`<span class="bar" style="width:${whole > 0 ? Math.max(1, Math.round((part / whole) * 100)) : 0}%"></span>`

module.exports = { fmt, short, pct, plural, bytes, when, clip, num, ESTIMATES, anchorOfCompaction, compactionLink, messageLink, table, th, bar }
