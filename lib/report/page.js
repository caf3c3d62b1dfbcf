'use strict'

// The page of a session report (lib/report.js computes what it shows): one self-contained HTML
// file — inline CSS, the chart as inline SVG, no script, no font, nothing fetched (a Content
// Security Policy says so to the browser too), so it opens from disk or an e-mail attachment.
//
// Every text from the conversation or the session's files is untrusted: it goes through esc()
// and is clipped (previews, summaries, ledger lists), so a 1 MB tool result or a 2,000-message
// session keeps the page small. The chart is readable without colour: each line has its own
// dash pattern, compactions are labelled triangles, billed requests open circles, and the
// numbers behind it are in a table below it.

const SUMMARY_CHARS = 6000
const REASON_CHARS = 300
const LEDGER_ITEMS = 40
const TOP = 10
const CHART_POINTS = 1200
const CHART_CIRCLES = 600

// ---------------------------------------------------------------------------------------------
// Text

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '=': '&#61;' }
const esc = (value) => String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c])
// An attribute's value (a path in `title`): "=" too, so that no text of the session reads as
// an attribute of its own inside the tag, even to a reader that does not parse HTML.
const attr = (value) => String(value ?? '').replace(/[&<>"'=]/g, (c) => ESCAPES[c])

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
  if (!Number.isFinite(t)) return esc(text ?? '–')
  return esc(new Date(t).toISOString().replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC'))
}

/** At most `max` characters, and a note of what was left out. */
function clip(text, max) {
  const s = String(text ?? '')
  if (s.length <= max) return { text: s, left: 0 }
  return { text: s.slice(0, max), left: s.length - max }
}

const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : 0)

// The formats as people name them (the addon says `anthropic` for the native reading, which
// is OpenAI Chat's too).
const FORMAT_NAMES = {
  anthropic: 'Anthropic / OpenAI Chat',
  'openai-responses': 'OpenAI Responses',
  'ai-sdk': 'AI SDK',
  gemini: 'Gemini',
  bedrock: 'Bedrock Converse',
  langchain: 'LangChain',
}

// Where the trigger's estimate came from (index.d.ts `EstimateSource`).
const ESTIMATES = { usage: 'the billed usage', calibration: 'the calibration', model: "the model's factor", raw: 'the raw count' }

const anchorOfCompaction = (n) => `compaction-${n}`
const compactionLink = (n) => `<a href="#${anchorOfCompaction(n)}">#${n}</a>`
const messageLink = (i) => `<a href="#m-${i}">${fmt(i)}</a>`

// ---------------------------------------------------------------------------------------------
// The chart
//
// One SVG for every width: its viewBox is tall enough that at phone width (a 343-px-wide chart)
// it is still about 250 px high, and the CSS draws its text larger in the viewBox's units there
// (FONT_NARROW) than on a wide screen (FONT), so that both read at about 12 px. Every label is
// placed here, before drawing, where neither its wide nor its narrow box meets another label,
// a curve, a marker or the hatched area under the context curve; a label that fits nowhere is
// left out (the legend says its value).

const W = 640
const H = 460
const M = { left: 64, right: 14, top: 22, bottom: 46 }
const PLOT_W = W - M.left - M.right
const PLOT_H = H - M.top - M.bottom
/** Font sizes in viewBox units: wide screens, and phone width (see the CSS). */
const FONT = 12
const FONT_NARROW = 22
/** A label row of the compactions' band at the top of the plot. */
const ROW = FONT_NARROW + 4

function niceStep(span, count) {
  const raw = span / Math.max(1, count)
  const power = 10 ** Math.floor(Math.log10(raw || 1))
  for (const m of [1, 2, 2.5, 5, 10]) if (raw <= m * power) return m * power
  return 10 * power
}

function ticks(max, count, integer) {
  let step = niceStep(max, count)
  if (integer) step = Math.max(1, Math.round(step))
  const out = []
  for (let v = 0; v <= max + step * 1e-9; v += step) out.push(v)
  return out
}

/** Keeps at most `max` points, always the first, the last and those in `keep`. */
function thin(points, max, keep) {
  if (points.length <= max) return points
  const every = Math.ceil(points.length / max)
  return points.filter((p, i) => i === 0 || i === points.length - 1 || i % every === 0 || keep.has(i))
}

/**
 * The box a text takes, in viewBox units, at `font`: an estimate from its length (digits and
 * lower-case letters of a system sans-serif are about 0.6 em wide; bold a little more).
 */
function textBox(text, font, x, y, { anchor = 'start', baseline = 'alphabetic', bold = false } = {}) {
  const width = [...text].length * font * (bold ? 0.66 : 0.6)
  const x0 = anchor === 'end' ? x - width : anchor === 'middle' ? x - width / 2 : x
  const y0 = baseline === 'hanging' ? y : baseline === 'middle' ? y - font * 0.55 : y - font * 0.8
  return { x0, x1: x0 + width, y0, y1: y0 + font * 1.05 }
}

const union = (a, b) => ({ x0: Math.min(a.x0, b.x0), x1: Math.max(a.x1, b.x1), y0: Math.min(a.y0, b.y0), y1: Math.max(a.y1, b.y1) })
const grow = (b, d) => ({ x0: b.x0 - d, x1: b.x1 + d, y0: b.y0 - d, y1: b.y1 + d })
const overlaps = (a, b) => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
const inside = (b, x, y) => x >= b.x0 && x <= b.x1 && y >= b.y0 && y <= b.y1

/** Whether the segment p–q crosses the box (Liang–Barsky clipping). */
function segmentMeets(box, [px, py], [qx, qy]) {
  if (inside(box, px, py) || inside(box, qx, qy)) return true
  let t0 = 0
  let t1 = 1
  const dx = qx - px
  const dy = qy - py
  for (const [p, q] of [[-dx, px - box.x0], [dx, box.x1 - px], [-dy, py - box.y0], [dy, box.y1 - py]]) {
    if (p === 0) {
      if (q < 0) return false
    } else {
      const t = q / p
      if (p < 0) t0 = Math.max(t0, t)
      else t1 = Math.min(t1, t)
      if (t0 > t1) return false
    }
  }
  return true
}

/**
 * What labels must not cover: polylines (in viewBox units), boxes (markers, labels placed),
 * and the area under the context curve (`floor`: a polyline; a box reaching below it is on
 * the hatch).
 */
class Obstacles {
  constructor() {
    this.lines = []
    this.boxes = []
    this.floor = null
  }
  free(box, { hatch = true } = {}) {
    if (box.x0 < M.left || box.x1 > M.left + PLOT_W || box.y0 < M.top || box.y1 > M.top + PLOT_H) return false
    if (this.boxes.some((b) => overlaps(b, box))) return false
    for (const line of this.lines) {
      for (let i = 1; i < line.length; i++) {
        const [a, b] = [line[i - 1], line[i]]
        if (Math.max(a[0], b[0]) < box.x0 || Math.min(a[0], b[0]) > box.x1) continue
        if (segmentMeets(box, a, b)) return false
      }
    }
    if (hatch && this.floor) {
      // The curve's highest point (smallest y) over the box's width.
      for (let i = 1; i < this.floor.length; i++) {
        const [a, b] = [this.floor[i - 1], this.floor[i]]
        if (Math.max(a[0], b[0]) < box.x0 || Math.min(a[0], b[0]) > box.x1) continue
        if (box.y1 > Math.min(a[1], b[1])) return false
      }
    }
    return true
  }
}

/** The parts of a polyline (viewBox units) below `ceiling`, cut where they cross it. */
function below(points, ceiling) {
  const parts = []
  let part = []
  points.forEach(([x, y], i) => {
    const prev = points[i - 1]
    if (y >= ceiling) {
      if (prev && prev[1] < ceiling) part.push([prev[0] + ((x - prev[0]) * (ceiling - prev[1])) / (y - prev[1]), ceiling])
      part.push([x, y])
    } else if (prev && prev[1] >= ceiling) {
      part.push([prev[0] + ((x - prev[0]) * (prev[1] - ceiling)) / (prev[1] - y), ceiling])
      parts.push(part)
      part = []
    }
  })
  if (part.length > 1) parts.push(part)
  return parts.filter((p) => p.length > 1)
}

function chart(data) {
  const n = Math.max(1, data.full.count)
  const { window, threshold } = data.lines
  const factor = estimateFactor(data)
  const contextMax = Math.max(0, ...data.full.context) * factor
  const billedMax = Math.max(0, ...data.billed.map((b) => b.prompt))
  const estimateMax = Math.max(0, ...data.drops.map((d) => (typeof d.estimate === 'number' ? d.estimate : 0)))
  // The compactions' labels sit in a band at the top of the plot, in as many rows as they need
  // not to overlap; the data stays below it.
  const labels = compactionLabels(data, n)
  const band = labels.rows * ROW + (labels.rows > 0 ? 6 : 0)
  const top = (Math.max(window, threshold, contextMax, billedMax, estimateMax, 1) * 1.04) / (1 - band / PLOT_H)
  const yStep = niceStep(top, 5)
  const yMax = Math.ceil(top / yStep) * yStep
  const x = (i) => M.left + (i / n) * PLOT_W
  const y = (v) => M.top + PLOT_H - (Math.min(v, yMax * 1.02) / yMax) * PLOT_H
  const f = (v) => v.toFixed(1)
  const out = []
  out.push(
    `<svg viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="chart-title chart-desc" xmlns="http://www.w3.org/2000/svg" font-size="${FONT}">`,
    `<title id="chart-title">Tokens message by message</title>`,
    `<desc id="chart-desc">${esc(chartDescription(data))}</desc>`,
    '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#0b63c5" stroke-opacity="0.35" stroke-width="2"/></pattern>',
    `<clipPath id="plot"><rect x="${M.left}" y="${M.top}" width="${PLOT_W}" height="${PLOT_H}"/></clipPath></defs>`,
  )
  // Axes and grid: as many ticks as their labels leave room for at phone width.
  for (const v of ticks(yMax, 5, true)) {
    out.push(
      `<line x1="${M.left}" x2="${M.left + PLOT_W}" y1="${f(y(v))}" y2="${f(y(v))}" stroke="#d0d7de" stroke-width="1"/>`,
      `<text class="tick" x="${M.left - 6}" y="${f(y(v))}" text-anchor="end" dominant-baseline="middle" fill="#57606a">${esc(short(v))}</text>`,
    )
  }
  let xCount = 6
  let xTicks = ticks(n, xCount, true)
  const widest = (list) => Math.max(...list.map((v) => textBox(fmt(v), FONT_NARROW, 0, 0).x1))
  while (xCount > 2 && xTicks.length > 1 && (x(xTicks[1]) - x(xTicks[0])) < widest(xTicks) * 1.25) xTicks = ticks(n, --xCount, true)
  // No "0" under the y axis's "0": the messages start at the origin.
  for (const v of xTicks.filter((v) => v > 0)) {
    // The last label ends at the chart's edge rather than past it.
    const half = textBox(fmt(v), FONT_NARROW, 0, 0).x1 / 2
    const anchor = x(v) + half > W - 1 ? 'end' : 'middle'
    out.push(
      `<line x1="${f(x(v))}" x2="${f(x(v))}" y1="${M.top + PLOT_H}" y2="${M.top + PLOT_H + 4}" stroke="#57606a"/>`,
      // Low enough that "0" clears the y axis's "0" at phone width.
      `<text class="tick" x="${f(anchor === 'end' ? W - 1 : x(v))}" y="${M.top + PLOT_H + 13}" text-anchor="${anchor}" dominant-baseline="hanging" fill="#57606a">${esc(fmt(v))}</text>`,
    )
  }
  out.push(
    `<line x1="${M.left}" x2="${M.left + PLOT_W}" y1="${M.top + PLOT_H}" y2="${M.top + PLOT_H}" stroke="#57606a"/>`,
    `<text class="xtitle" x="${M.left + PLOT_W / 2}" y="${H - 6}" text-anchor="middle" fill="#1b1f24">messages (full conversation)</text>`,
    `<text class="ytitle" x="14" y="${M.top + PLOT_H / 2}" text-anchor="middle" fill="#1b1f24" transform="rotate(-90 14 ${M.top + PLOT_H / 2})">tokens</text>`,
  )

  // The context the model held (solid, hatched below) and the conversation never compacted
  // (dashed).
  const extra = data.now.extraTokens
  const context = [[0, extra]]
  const special = new Set()
  const drops = new Map()
  for (const d of data.drops) drops.set(d.x, [...(drops.get(d.x) ?? []), d])
  for (const d of drops.get(0) ?? []) context.push([0, d.after])
  data.full.context.forEach((v, i) => {
    context.push([i + 1, v])
    for (const d of drops.get(i + 1) ?? []) {
      special.add(context.length - 1)
      special.add(context.length)
      context.push([i + 1, d.after])
    }
  })
  const cumulative = [[0, extra], ...data.full.cumulative.map((v, i) => [i + 1, v])]
  const at = (points) => points.map(([i, v]) => [x(i), y(v)])
  const path = (points) => at(points).map(([px, py], k) => `${k === 0 ? 'M' : 'L'}${f(px)} ${f(py)}`).join('')
  const shown = thin(context, CHART_POINTS, special)
  const obstacles = new Obstacles()
  obstacles.floor = at(shown)
  obstacles.lines.push(at(shown))
  out.push('<g clip-path="url(#plot)">')
  out.push(`<path d="${path(shown)}L${f(x(n))} ${f(y(0))}L${f(x(0))} ${f(y(0))}Z" fill="url(#hatch)" stroke="none"/>`)
  if (data.drops.length > 0 || data.full.restored) {
    // The conversation never compacted outgrows the scale, which is the context's: it is drawn
    // up to the compactions' band and leaves the plot there (the text says where it ends).
    const parts = below(at(thin(cumulative, CHART_POINTS, new Set())), M.top + band)
    obstacles.lines.push(...parts)
    const d = parts.map((part) => part.map(([px, py], k) => `${k === 0 ? 'M' : 'L'}${f(px)} ${f(py)}`).join('')).join('')
    if (d) out.push(`<path class="curve" d="${d}" fill="none" stroke="#6f42c1" stroke-width="2" stroke-dasharray="7 5"/>`)
  }
  if (factor !== 1) {
    const scaled = shown.map(([i, v]) => [i, v * factor])
    obstacles.lines.push(at(scaled))
    out.push(`<path class="curve" d="${path(scaled)}" fill="none" stroke="#bc4c00" stroke-width="2" stroke-dasharray="2 3"/>`)
  }
  out.push(`<path class="curve" d="${path(shown)}" fill="none" stroke="#0b63c5" stroke-width="2.2" stroke-linejoin="round"/>`)
  out.push('</g>')

  // Billed requests (open circles) and the compactions' markers are obstacles too.
  const circles = thin(data.billed, CHART_CIRCLES, new Set())
  for (const b of circles) obstacles.boxes.push(grow({ x0: x(b.index + 1), x1: x(b.index + 1), y0: y(b.prompt), y1: y(b.prompt) }, 4))
  for (const d of data.drops) {
    const cx = x(d.x)
    obstacles.lines.push([[cx, y(d.before)], [cx, y(d.after)]])
    obstacles.boxes.push({ x0: cx - 7, x1: cx + 7, y0: y(d.before) - 11, y1: y(d.before) + 1 })
    if (typeof d.estimate === 'number') obstacles.boxes.push(grow({ x0: cx, x1: cx, y0: y(d.estimate), y1: y(d.estimate) }, 6))
  }
  // The compactions' labels hold the band.
  for (const label of labels.placed.values()) obstacles.boxes.push(label.box)

  // Window and threshold, each labelled on its line where the label meets nothing: the right
  // end first (the window's above its line, the threshold's below), then the other side, then
  // further left; a label that fits nowhere is left out.
  const lineLabel = (value, text, prefer) => {
    const yl = y(value)
    const places = [
      [M.left + PLOT_W - 4, 'end'],
      [M.left + 6, 'start'],
      [M.left + PLOT_W * 0.75, 'end'],
      [M.left + PLOT_W * 0.5, 'end'],
    ]
    const sides = prefer === 'above' ? ['above', 'below'] : ['below', 'above']
    for (const hatch of [true, false]) {
      for (const [xl, anchor] of places) {
        for (const side of sides) {
          const ty = side === 'above' ? yl - 5 : yl + 5
          const baseline = side === 'above' ? 'alphabetic' : 'hanging'
          const box = grow(union(textBox(text, FONT, xl, ty, { anchor, baseline }), textBox(text, FONT_NARROW, xl, ty, { anchor, baseline })), 2)
          if (obstacles.free(box, { hatch })) {
            obstacles.boxes.push(box)
            return { x: xl, y: ty, baseline, anchor }
          }
        }
      }
    }
    return null
  }
  const yw = y(window)
  const yt = y(threshold)
  out.push(
    `<line class="window" data-tokens="${window}" x1="${M.left}" x2="${M.left + PLOT_W}" y1="${f(yw)}" y2="${f(yw)}" stroke="#24292f" stroke-width="2.5"/>`,
    `<line class="threshold" data-tokens="${threshold}" x1="${M.left}" x2="${M.left + PLOT_W}" y1="${f(yt)}" y2="${f(yt)}" stroke="#b3261e" stroke-width="1.8" stroke-dasharray="10 3 2 3"/>`,
  )
  const windowText = `window ${short(window)}`
  const thresholdText = `threshold ${short(threshold)}`
  const wl = lineLabel(window, windowText, 'above')
  const tl = lineLabel(threshold, thresholdText, 'below')
  const lineText = (l, text, colour) =>
    `<text class="halo label" x="${f(l.x)}" y="${f(l.y)}" text-anchor="${l.anchor}"${l.baseline === 'hanging' ? ' dominant-baseline="hanging"' : ''} fill="${colour}">${esc(text)}</text>`
  if (wl) out.push(lineText(wl, windowText, '#24292f'))
  if (tl) out.push(lineText(tl, thresholdText, '#b3261e'))

  // Billed requests: open circles.
  for (const b of circles) {
    out.push(
      `<circle class="billed" cx="${f(x(b.index + 1))}" cy="${f(y(b.prompt))}" r="3.2" fill="#fff" stroke="#1a7f37" stroke-width="1.6"><title>request after message ${esc(fmt(b.index))}: ${esc(fmt(b.prompt))} tokens billed, ${esc(fmt(b.estimate))} counted</title></circle>`,
    )
  }

  // Compactions: a triangle at the tokens before, a dotted drop to a bar at the tokens after, a
  // diamond at the trigger's estimate when it fired, and "#n" in the band, linked to the card.
  for (const d of data.drops) {
    const cx = x(d.x)
    const yb = y(d.before)
    const ya = y(d.after)
    const label = labels.placed.get(d.number)
    const estimate =
      typeof d.estimate === 'number'
        ? `<path d="M${f(cx)} ${f(y(d.estimate) - 5)}L${f(cx + 5)} ${f(y(d.estimate))}L${f(cx)} ${f(y(d.estimate) + 5)}L${f(cx - 5)} ${f(y(d.estimate))}Z" fill="#fff" stroke="#bc4c00" stroke-width="1.6"/>`
        : ''
    const title = `compaction #${d.number} at message ${fmt(d.x)}: ${fmt(d.before)} → ${fmt(d.after)} tokens${typeof d.estimate === 'number' ? `; the trigger's estimate was ${fmt(d.estimate)}` : ''}`
    out.push(
      `<a href="#${anchorOfCompaction(d.number)}"><title>${esc(title)}</title>`,
      `<line x1="${f(cx)}" x2="${f(cx)}" y1="${f(label.box.y1 + 1)}" y2="${f(Math.min(yb, y(d.estimate ?? d.before)) - 10)}" stroke="#57606a" stroke-width="1" stroke-dasharray="1 3"/>`,
      `<line x1="${f(cx)}" x2="${f(cx)}" y1="${f(yb)}" y2="${f(ya)}" stroke="#24292f" stroke-width="1.4" stroke-dasharray="2 3"/>`,
      estimate,
      `<path d="M${f(cx - 6)} ${f(yb - 10)}L${f(cx + 6)} ${f(yb - 10)}L${f(cx)} ${f(yb)}Z" fill="#f0b400" stroke="#24292f" stroke-width="1.2"/>`,
      `<rect x="${f(cx - 3)}" y="${f(ya - 1.5)}" width="6" height="3" fill="#24292f"/>`,
      `<text class="halo label" x="${f(label.x)}" y="${f(label.y)}" text-anchor="middle" font-weight="600" fill="#24292f">#${d.number}${labels.numbers ? `<tspan class="nums"> ${esc(short(d.before))}→${esc(short(d.after))}</tspan>` : ''}</text>`,
      '</a>',
    )
  }
  out.push('</svg>')
  return out.join('')
}

/**
 * Where each compaction's label goes: its x (kept inside the plot) and its row in the band (the
 * first where it meets no other label, at the wide size — "#n 120K→40K" — and at phone width,
 * where only "#n" is drawn, larger; at most 3 rows, then the emptiest one). With more than 8
 * compactions the labels are only "#n".
 */
function compactionLabels(data, n) {
  const numbers = data.drops.length <= 8
  const placed = new Map()
  const ends = []
  for (const d of [...data.drops].sort((a, b) => a.x - b.x)) {
    const wide = `#${d.number}${numbers ? ` ${short(d.before)}→${short(d.after)}` : ''}`
    const narrow = `#${d.number}`
    const width = Math.max(textBox(wide, FONT, 0, 0, { bold: true }).x1, textBox(narrow, FONT_NARROW, 0, 0, { bold: true }).x1)
    const cx = M.left + (d.x / n) * PLOT_W
    const mid = Math.min(Math.max(cx, M.left + width / 2 + 2), M.left + PLOT_W - width / 2 - 2)
    let row = ends.findIndex((end) => end + 8 <= mid - width / 2)
    if (row < 0) row = ends.length < 3 ? ends.length : ends.indexOf(Math.min(...ends))
    ends[row] = mid + width / 2
    const ly = M.top + 3 + (row + 1) * ROW - 6
    const box = grow(union(textBox(wide, FONT, mid, ly, { anchor: 'middle', bold: true }), textBox(narrow, FONT_NARROW, mid, ly, { anchor: 'middle', bold: true })), 1)
    placed.set(d.number, { x: mid, y: ly, row, box })
  }
  return { placed, rows: ends.length, numbers }
}

/** The factor the trigger applies to raw counts (a model's billing factor, a calibration). */
function estimateFactor(data) {
  const f = data.now.measure.factor
  return typeof f === 'number' && Number.isFinite(f) && f > 0 ? f : 1
}

function chartDescription(data) {
  const parts = [`${fmt(data.full.count)} messages, ${fmt(data.full.total)} tokens in the full conversation`]
  for (const d of data.drops) parts.push(`compaction #${d.number} at message ${fmt(d.x)}: ${fmt(d.before)} to ${fmt(d.after)} tokens`)
  parts.push(`window ${fmt(data.lines.window)}, threshold ${fmt(data.lines.threshold)}`)
  if (data.billed.length > 0) parts.push(`${fmt(data.billed.length)} billed requests`)
  return parts.join('; ')
}

const swatch = (inner) => `<svg viewBox="0 0 34 14" width="34" height="14" aria-hidden="true">${inner}</svg>`

// Short entries, so that at phone width the legend (two columns) stays shorter than the chart;
// what each line means in full is said in the paragraph above the chart and in the table below.
function legend(data) {
  const items = [
    `${swatch('<rect x="0" y="4" width="34" height="10" fill="url(#hatch)"/><line x1="0" y1="4" x2="34" y2="4" stroke="#0b63c5" stroke-width="2.2"/>')} context held`,
  ]
  if (data.drops.length > 0 || data.full.restored) {
    items.push(`${swatch('<line x1="0" y1="7" x2="34" y2="7" stroke="#6f42c1" stroke-width="2" stroke-dasharray="7 5"/>')} never compacted`)
  }
  const factor = estimateFactor(data)
  if (factor !== 1) {
    items.push(`${swatch('<line x1="0" y1="7" x2="34" y2="7" stroke="#bc4c00" stroke-width="2" stroke-dasharray="2 3"/>')} estimate (×${esc(factor.toFixed(2))})`)
  }
  items.push(
    `${swatch('<line x1="0" y1="7" x2="34" y2="7" stroke="#24292f" stroke-width="2.5"/>')} window <span class="legend-window">${esc(fmt(data.lines.window))}</span>`,
    `${swatch('<line x1="0" y1="7" x2="34" y2="7" stroke="#b3261e" stroke-width="1.8" stroke-dasharray="10 3 2 3"/>')} threshold <span class="legend-threshold">${esc(fmt(data.lines.threshold))}</span>`,
  )
  if (data.drops.length > 0) {
    items.push(`${swatch('<path d="M11 1L23 1L17 11Z" fill="#f0b400" stroke="#24292f"/><rect x="14" y="11" width="6" height="3" fill="#24292f"/>')} compaction: before → after`)
    if (data.drops.some((d) => typeof d.estimate === 'number')) {
      items.push(`${swatch('<path d="M17 2L22 7L17 12L12 7Z" fill="#fff" stroke="#bc4c00" stroke-width="1.6"/>')} estimate when it fired`)
    }
  }
  if (data.billed.length > 0) {
    items.push(`${swatch('<circle cx="17" cy="7" r="4" fill="#fff" stroke="#1a7f37" stroke-width="1.6"/>')} billed prompt`)
  }
  return `<ul class="legend">${items.map((i) => `<li>${i}</li>`).join('')}</ul>`
}

/** The chart's numbers as a table: every compaction, billed request checkpoints and regular steps. */
function curveTable(data) {
  const n = data.full.count
  const marks = new Map()
  const add = (i, what) => {
    if (i < 1 || i > n) return
    marks.set(i, [...(marks.get(i) ?? []), what])
  }
  const step = Math.max(1, Math.ceil(n / 20))
  for (let i = step; i < n; i += step) add(i, '')
  add(n, 'now')
  for (const d of data.drops) add(d.x, `compaction ${compactionLink(d.number)}: ${fmt(d.before)} → ${fmt(d.after)}`)
  const billedAt = new Map(data.billed.map((b) => [b.index + 1, b]))
  const rows = [...marks.keys()]
    .sort((a, b) => a - b)
    .map((i) => {
      const b = billedAt.get(i) ?? nearestBilled(data.billed, i)
      return `<tr><td class="num">${fmt(i)}</td><td class="num">${fmt(data.full.cumulative[i - 1])}</td><td class="num">${fmt(data.full.context[i - 1])}</td><td class="num">${b ? fmt(b.prompt) : '–'}</td><td>${marks.get(i).filter(Boolean).join('; ')}</td></tr>`
    })
  return (
    '<details><summary>The curve as a table</summary><div class="scroll"><table class="curve"><thead><tr><th class="num">after message</th><th class="num">full conversation</th><th class="num">context held</th><th class="num">billed (last request before)</th><th>event</th></tr></thead><tbody>' +
    rows.join('') +
    '</tbody></table></div></details>'
  )
}

function nearestBilled(billed, i) {
  let found = null
  for (const b of billed) {
    if (b.index + 1 <= i) found = b
    else break
  }
  return found
}

// ---------------------------------------------------------------------------------------------
// Sections

function header(data) {
  const c = data.compactions.length
  const now = data.now.items
  const nowTokens = now.reduce((s, m) => s + m.tokens, 0)
  const m = data.now.measure
  const kpis = [
    ['messages now', fmt(now.length), `${fmt(nowTokens)} tokens`],
    ['full conversation', fmt(data.full.count), `${fmt(data.full.total)} tokens${data.full.restored ? ', restored from the archives' : ''}`],
    ['compactions', fmt(c), c > 0 ? `${plural(data.archives.length, 'archive')}` : 'none recorded'],
    ['trigger estimate now', fmt(m.tokens), `${pct(m.tokens, data.lines.window)} of the window, threshold ${fmt(data.lines.threshold)}`],
  ]
  if (data.billed.length > 0) {
    const last = data.billed[data.billed.length - 1]
    kpis.push(['last billed prompt', fmt(last.prompt), `after message ${fmt(last.index)} (${data.usageGiven ? 'usage given' : 'recorded usage'})`])
  }
  return (
    `<header><h1>${esc(data.title)}</h1><p class="note">context-compact ${esc(data.version)} report · session <code>${esc(data.sessionId)}</code> in <code>${esc(data.outputDir)}</code> · ${esc(FORMAT_NAMES[data.format] ?? data.format)} messages · ${esc(data.encoding)}</p>` +
    `<div class="kpis">${kpis.map(([label, value, note]) => `<div class="kpi"><span>${esc(label)}</span><b>${value}</b><small>${note}</small></div>`).join('')}</div>` +
    (data.notes.length ? `<ul class="notes">${data.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>` : '') +
    '</header>' +
    `<nav aria-label="sections"><ul><li><a href="#curve">Token curve</a></li><li><a href="#compactions">Compactions (${fmt(c)})</a></li><li><a href="#now">The list now</a></li><li><a href="#messages">Messages</a></li><li><a href="#log">Audit log</a></li><li><a href="#archives">Archives</a></li></ul></nav>`
  )
}

function curveSection(data) {
  const lines =
    data.lines.from === 'log'
      ? 'The threshold is the one the compactions ran with (the audit log\'s); the window is derived from it.'
      : data.lines.from === 'options'
        ? 'Window and threshold as given.'
        : 'Window and threshold are the defaults (pass contextTokenLimit / agentModel, or --limit / --agent-model, for your model).'
  const extra = data.now.extraTokens > 0 ? ` System prompt and tools (${fmt(data.now.extraTokens)} tokens) are included.` : ''
  const read = [
    'The solid line is the context the model held (hatched below it)',
    data.drops.length > 0 || data.full.restored ? `the dashed one, the conversation had it never been compacted (${fmt(data.full.cumulative[data.full.cumulative.length - 1] ?? 0)} tokens at the end)` : null,
    estimateFactor(data) !== 1 ? `the dotted one, the count × ${estimateFactor(data).toFixed(2)}: the trigger's estimate from ${ESTIMATES[data.now.measure.source] ?? data.now.measure.source}` : null,
    data.drops.length > 0 ? 'each compaction is a triangle at the tokens before over a bar at the tokens after, with a diamond where the trigger\'s estimate stood; its number links to its card' : null,
  ].filter(Boolean)
  const billed =
    data.billed.length > 0
      ? ` Open circles are the prompt tokens the API billed; they include what the transcript does not hold (system prompt, tool definitions), and each API tokenizes its own way.`
      : ' No billed usage is known: pass the usage of each request (usage option, --usage file) to see it beside the estimate.'
  return (
    `<section id="curve"><h2>Token curve</h2>` +
    `<p class="note">Tokens counted with ${esc(data.encoding)}, message by message, of the full conversation${data.full.restored ? ' restored through the archives' : ''}. Window <span class="text-window">${esc(fmt(data.lines.window))}</span>, threshold <span class="text-threshold">${esc(fmt(data.lines.threshold))}</span>: ${esc(lines)}</p>` +
    `<div class="chart">${chart(data)}</div>${legend(data)}` +
    `<details><summary>How to read the chart</summary><p>${esc(read.join('; '))}.${esc(extra)}${esc(billed)}</p></details>${curveTable(data)}` +
    (data.billed.length > 0 ? billedTable(data) : '') +
    '</section>'
  )
}

function billedTable(data) {
  const rows = data.billed
  const every = Math.max(1, Math.ceil(rows.length / 30))
  const shown = rows.filter((_, i) => i % every === 0 || i === rows.length - 1)
  const ratio = (b) => (b.estimate > 0 ? `${(b.prompt / b.estimate).toFixed(2)}×` : '–')
  return (
    `<details><summary>Billed usage beside the count (${plural(rows.length, 'request')}${every > 1 ? `, one in ${fmt(every)} shown` : ''})</summary><div class="scroll"><table><thead><tr><th class="num">after message</th><th class="num">billed prompt</th><th class="num">of it cache read</th><th class="num">counted here</th><th class="num">billed / counted</th></tr></thead><tbody>` +
    shown
      .map(
        (b) =>
          `<tr><td class="num">${fmt(b.index)}</td><td class="num">${fmt(b.prompt)}</td><td class="num">${fmt(b.cacheRead)}</td><td class="num">${fmt(b.estimate)}</td><td class="num">${ratio(b)}</td></tr>`,
      )
      .join('') +
    '</tbody></table></div></details>'
  )
}

function table(head, rows, cls = '') {
  return `<div class="scroll"><table${cls ? ` class="${cls}"` : ''}><thead><tr>${head.join('')}</tr></thead><tbody>${rows.join('')}</tbody></table></div>`
}

const th = (label, num = false) => `<th${num ? ' class="num"' : ''}>${esc(label)}</th>`
const bar = (part, whole) => `<span class="bar" style="width:${whole > 0 ? Math.max(1, Math.round((part / whole) * 100)) : 0}%"></span>`

// The ledger's file paths are long and alike ("/home/me/projects/app/lib/…"): the directory most
// of them share is said once, each path is shown from there (a long one keeps its first and
// last folders around an ellipsis) on one line, and the full path is on hover (title) and in
// the "Full paths" list below. Commands and failed calls are one line each, clipped, complete
// on hover. The lists flow in as many columns as the width allows.
const FILE_GROUPS = new Set(['Files read', 'Files created', 'Files modified', 'Files deleted'])
const SHOWN_PATH = 48

/**
 * The deepest directory (ending in "/") that holds at least four in five of the paths (and two
 * of them), or '': the project's directory, not one of its folders, and not the root that a
 * single file elsewhere (/tmp/…) would leave.
 */
function sharedDirectory(paths) {
  const counts = new Map()
  for (const p of paths) {
    for (let at = p.indexOf('/'); at >= 0; at = p.indexOf('/', at + 1)) {
      const dir = p.slice(0, at + 1)
      counts.set(dir, (counts.get(dir) ?? 0) + 1)
    }
  }
  let best = ''
  for (const [dir, count] of counts) {
    if (count >= 2 && count >= paths.length * 0.8 && dir.length > best.length && dir !== '/') best = dir
  }
  return best
}

/** A path as shown: from the shared directory, a long one with its middle folders elided. */
function shownPath(path, shared) {
  const rel = shared && path.startsWith(shared) ? path.slice(shared.length) : path
  if (rel.length <= SHOWN_PATH) return rel
  const parts = rel.split('/')
  if (parts.length <= 3) return rel
  const head = parts[0] === '' ? `/${parts[1]}` : parts[0]
  let tail = parts[parts.length - 1]
  for (let i = parts.length - 2; i > 1 && head.length + tail.length + parts[i].length + 4 <= SHOWN_PATH; i--) tail = `${parts[i]}/${tail}`
  return `${head}/…/${tail}`
}

function ledgerList(title, items, shared) {
  if (!items || items.length === 0) return ''
  const shown = items.slice(0, LEDGER_ITEMS)
  const more = items.length - shown.length
  const files = FILE_GROUPS.has(title)
  const entry = (item) => {
    const full = clip(item, 300).text
    // A path too long for its column breaks after a "/", never inside a name.
    return files
      ? `<li><code title="${attr(full)}" data-path="${attr(full)}">${esc(shownPath(full, shared)).replace(/\//g, '/<wbr>')}</code></li>`
      : `<li class="clip"><code title="${attr(full)}">${esc(full)}</code></li>`
  }
  return `<div class="ledger-group"><h4>${esc(title)} (${fmt(items.length)})</h4><ul class="ledger${files ? ' paths' : ''}" data-ledger="${esc(title)}">${shown.map(entry).join('')}${more > 0 ? `<li class="note">and ${fmt(more)} more</li>` : ''}</ul></div>`
}

function ledgerHtml(ledger) {
  const paths = Object.entries(ledger).flatMap(([title, items]) => (FILE_GROUPS.has(title) ? items.slice(0, LEDGER_ITEMS).map((i) => clip(i, 300).text) : []))
  const shared = sharedDirectory(paths)
  const groups = Object.entries(ledger).map(([title, items]) => ledgerList(title, items, shared)).join('')
  if (!groups) return 'no file operations, commands or failures'
  const under = shared ? `<p class="note">Paths under <code class="shared">${esc(shared)}</code></p>` : ''
  const full =
    paths.length > 0
      ? `<details class="full-paths"><summary>Full paths (${fmt(paths.length)})</summary><ul>${paths.map((p) => `<li><code>${esc(p)}</code></li>`).join('')}</ul></details>`
      : ''
  return `<div class="ledger-groups">${under}${groups}${full}</div>`
}

function compactionCard(c, lines, data) {
  const s = c.stats
  const facts = []
  const fact = (label, html) => facts.push(`<dt>${esc(label)}</dt><dd>${html}</dd>`)
  fact(
    'From',
    c.origin === 'list'
      ? 'this list: its summaries lead to this archive'
      : `the audit log of session <code>${esc(data.sessionId)}</code> in <code>${esc(data.outputDir)}</code> only: no summary in this list leads to it (another run under the same session id)`,
  )
  const why = []
  if (c.trigger) why.push(`trigger <b>${esc(c.trigger)}</b>`)
  if (c.tokens !== null && c.threshold !== null) {
    const then = c.threshold !== lines.threshold ? ` (its threshold then; the chart draws ${fmt(lines.threshold)})` : ''
    why.push(`${fmt(c.tokens)} tokens ${c.tokens >= c.threshold ? '≥' : '<'} threshold ${fmt(c.threshold)}${then}${c.trigger ? '' : c.tokens >= c.threshold ? ' (the token trigger)' : ' (forced or another trigger)'}`)
  }
  if (c.estimate) why.push(`estimated from ${esc(ESTIMATES[c.estimate] ?? c.estimate)}`)
  fact('When', `${when(c.time)}${c.position !== null ? ` · after message ${fmt(c.position)} of the full conversation` : ''}`)
  fact('Why', why.join(' · ') || '–')
  const how = [`strategy <b>${esc(c.strategy ?? '–')}</b>${c.fallback ? ' (selective fell back to a summary)' : ''}`]
  if (c.provider) how.push(`provider <b>${esc(c.provider)}</b>${c.model ? ` (${esc(c.model)})` : ''}`)
  if (c.attempts !== null && c.attempts !== undefined) how.push(plural(c.attempts, 'attempt'))
  if (c.rounds) how.push(plural(c.rounds, 'round'))
  if (c.summaryRequest) how.push(`${esc(c.summaryRequest)} request`)
  fact('How', how.join(' · '))
  if (s) {
    fact(
      'Tokens',
      `<b class="before" data-before="${s.originalTokenCount}">${fmt(s.originalTokenCount)}</b> → <b class="after" data-after="${s.compactedTokenCount}">${fmt(s.compactedTokenCount)}</b> (${pct(s.originalTokenCount - s.compactedTokenCount, s.originalTokenCount)} saved)`,
    )
    fact('Messages', `${fmt(s.compactedMessageCount)} replaced, ${fmt(s.retainedMessageCount)} kept, ${fmt(s.removedMessageCount ?? 0)} removed`)
  }
  const r = c.replaced
  if (r) {
    const roles = Object.entries(r.byRole).sort((a, b) => b[1].tokens - a[1].tokens)
    const tools = Object.entries(r.tools).sort((a, b) => b[1].calls - a[1].calls || b[1].resultTokens - a[1].resultTokens)
    let html = `${plural(r.items, 'message')}, ${fmt(r.tokens)} tokens: ${roles.map(([role, e]) => `${esc(role)} ${fmt(e.messages)} (${fmt(e.tokens)} tokens)`).join(', ') || '–'}`
    if (r.summaries.length > 0) html += `; and ${plural(r.summaries.length, 'earlier summary', 'earlier summaries')}`
    if (tools.length > 0) {
      html += table(
        [th('tool'), th('calls', true), th('failed', true), th('result tokens', true)],
        tools.slice(0, 20).map(([name, t]) => `<tr><td><code>${esc(name)}</code></td><td class="num">${fmt(t.calls)}</td><td class="num">${fmt(t.failed)}</td><td class="num">${fmt(t.resultTokens)}</td></tr>`),
        'tools',
      )
      if (tools.length > 20) html += `<p class="note">and ${fmt(tools.length - 20)} more tools</p>`
    }
    fact('Replaced', html)
  }
  if (c.ledger) fact('Ledger', ledgerHtml(c.ledger))
  if (c.offloaded !== null || c.offloadArchive) {
    const held = c.offloadHeld
    fact(
      'Offloaded',
      `${plural(c.offloaded ?? 0, 'text')} shortened to fit${held ? `; the originals (${plural(held.items, 'message')}, ${fmt(held.tokens)} tokens) are in <code>${esc(c.offloadArchive)}</code>` : c.offloadArchive ? ` (originals: <code>${esc(c.offloadArchive)}</code>)` : ''}`,
    )
  }
  if (c.transformations !== null || c.thinkingArchive) {
    const held = c.thinkingHeld
    fact(
      'Thinking',
      `${plural(c.transformations ?? 0, 'thinking block')} removed from kept turns${held ? `; the originals (${plural(held.items, 'message')}, ${fmt(held.thinkingTokens)} tokens of thinking) are in <code>${esc(c.thinkingArchive)}</code>` : c.thinkingArchive ? ` (originals: <code>${esc(c.thinkingArchive)}</code>)` : ''}`,
    )
  }
  const u = c.summaryUsage
  if (u) {
    const input = num(u.inputTokens) + num(u.cacheReadTokens) + num(u.cacheWriteTokens)
    fact(
      'Summary cost',
      `${plural(num(u.requests), 'request')} · input ${fmt(input)} tokens (${fmt(u.inputTokens)} full price, ${fmt(u.cacheReadTokens)} cache read, ${fmt(u.cacheWriteTokens)} cache write) · <b>${pct(num(u.cacheReadTokens), input)}</b> read from the cache · output ${fmt(u.outputTokens)} tokens`,
    )
  } else if (c.provider === 'extractive' || c.provider === 'custom') {
    fact('Summary cost', `no LLM call (${esc(c.provider)} summarizer)`)
  }
  if (c.code) fact('Note', `<span class="warn">${esc(c.code)}</span> ${esc(clip(c.reason, REASON_CHARS).text)}`)
  if (c.warnings.length > 0) fact('Warnings', `<ul>${c.warnings.slice(0, 10).map((w) => `<li>${esc(clip(w, REASON_CHARS).text)}</li>`).join('')}</ul>`)
  fact(
    'Archive',
    c.archivePath
      ? `<code>${esc(c.archivePath)}</code> (${bytes(c.archiveBytes)})${c.metaPath ? `<br><span class="note">metadata: <code>${esc(c.metaPath)}</code></span>` : ''}`
      : c.archive
        ? `<code>${esc(c.archive)}</code> <span class="warn">(not found in the session)</span>`
        : 'not archived',
  )
  let summary = ''
  if (c.summary) {
    const { text, left } = clip(c.summary, SUMMARY_CHARS)
    summary = `<details><summary>Summary text (${fmt(c.summary.length)} characters)</summary><pre>${esc(text)}</pre>${left > 0 ? `<p class="note">Clipped here: ${fmt(left)} more characters are in the metadata file.</p>` : ''}</details>`
  }
  return `<article class="card" id="${anchorOfCompaction(c.number)}" data-compaction="${c.number}" data-origin="${c.origin === 'list' ? 'list' : 'log'}"><h3>Compaction #${c.number}${c.sequence !== null ? ` <span class="note">(archive sequence ${fmt(c.sequence)})</span>` : ''}</h3><dl class="facts">${facts.join('')}</dl>${summary}</article>`
}

function compactionsSection(data) {
  if (data.compactions.length === 0) {
    return `<section id="compactions"><h2>Compactions</h2><p>No compaction recorded for session <code>${esc(data.sessionId)}</code> in <code>${esc(data.outputDir)}</code>: the report shows the list alone.</p></section>`
  }
  return `<section id="compactions"><h2>Compactions (${fmt(data.compactions.length)})</h2>${data.compactions.map((c) => compactionCard(c, data.lines, data)).join('')}</section>`
}

function nowSection(data) {
  const items = data.now.items
  const total = items.reduce((s, m) => s + m.tokens, 0)
  const byRole = {}
  const byType = {}
  const byTool = {}
  const results = []
  for (const item of items) {
    const role = (byRole[item.role || '(none)'] ??= { messages: 0, tokens: 0 })
    role.messages += 1
    role.tokens += item.tokens
    for (const part of item.parts) {
      const type = (byType[part.type || '(untyped)'] ??= { blocks: 0, tokens: 0 })
      type.blocks += 1
      type.tokens += part.tokens
      if (part.type.endsWith('tool_result')) {
        results.push({ index: item.index, name: part.name ?? '', tokens: part.tokens, error: part.error === true, preview: part.preview ?? item.preview })
        const tool = (byTool[part.name ?? '(unknown)'] ??= { results: 0, tokens: 0 })
        tool.results += 1
        tool.tokens += part.tokens
      }
    }
  }
  const sorted = (o) => Object.entries(o).sort((a, b) => b[1].tokens - a[1].tokens)
  const m = data.now.measure
  const intro =
    `<p>${plural(items.length, 'message')}, <b>${fmt(total)}</b> tokens${data.now.extraTokens > 0 ? ` (+ ${fmt(data.now.extraTokens)} of system prompt and tools)` : ''}. ` +
    `The trigger's estimate: <b>${fmt(m.tokens)}</b> tokens (${esc(m.source)}${m.factor !== 1 ? `, ×${esc(m.factor.toFixed(2))}` : ''}), ${pct(m.tokens, data.lines.window)} of the window; ` +
    `${m.tokens >= data.lines.threshold ? `<b class="warn">at or over the threshold (${fmt(data.lines.threshold)}): the next call compacts</b>` : `${fmt(data.lines.threshold - m.tokens)} tokens below the threshold (${fmt(data.lines.threshold)})`}.</p>`
  const roleTable = table(
    [th('role'), th('messages', true), th('tokens', true), th('share', true), th('')],
    sorted(byRole).map(([role, e]) => `<tr><td>${esc(role)}</td><td class="num">${fmt(e.messages)}</td><td class="num">${fmt(e.tokens)}</td><td class="num">${pct(e.tokens, total)}</td><td class="barcell">${bar(e.tokens, total)}</td></tr>`),
    'shares',
  )
  const typeTable = table(
    [th('block type'), th('blocks', true), th('tokens', true), th('share', true), th('')],
    sorted(byType).map(([type, e]) => `<tr><td><code>${esc(type)}</code></td><td class="num">${fmt(e.blocks)}</td><td class="num">${fmt(e.tokens)}</td><td class="num">${pct(e.tokens, total)}</td><td class="barcell">${bar(e.tokens, total)}</td></tr>`),
    'shares',
  )
  const largest = [...items].sort((a, b) => b.tokens - a.tokens || a.index - b.index).slice(0, TOP)
  const largestTable = table(
    [th('message'), th('role'), th('tokens', true), th('share', true), th('starts with')],
    largest.map((item) => `<tr><td>${messageLink(item.index)}</td><td>${esc(item.role)}</td><td class="num">${fmt(item.tokens)}</td><td class="num">${pct(item.tokens, total)}</td><td class="pv">${esc(item.preview)}</td></tr>`),
    'largest',
  )
  const topResults = results.sort((a, b) => b.tokens - a.tokens || a.index - b.index).slice(0, TOP)
  const resultsTable =
    topResults.length === 0
      ? '<p class="note">No tool results in the list.</p>'
      : table(
          [th('message'), th('tool'), th('tokens', true), th('share', true), th('starts with')],
          topResults.map(
            (r) =>
              `<tr><td>${messageLink(r.index)}</td><td><code>${esc(r.name || '?')}</code>${r.error ? ' <span class="warn">error</span>' : ''}</td><td class="num">${fmt(r.tokens)}</td><td class="num">${pct(r.tokens, total)}</td><td class="pv">${esc(r.preview)}</td></tr>`,
          ),
          'largest',
        )
  const toolTable =
    Object.keys(byTool).length === 0
      ? ''
      : `<h3>Tool results by tool</h3>` +
        table(
          [th('tool'), th('results', true), th('tokens', true), th('share', true), th('')],
          sorted(byTool)
            .slice(0, 30)
            .map(([name, e]) => `<tr><td><code>${esc(name)}</code></td><td class="num">${fmt(e.results)}</td><td class="num">${fmt(e.tokens)}</td><td class="num">${pct(e.tokens, total)}</td><td class="barcell">${bar(e.tokens, total)}</td></tr>`),
          'shares',
        )
  return (
    `<section id="now"><h2>The list now</h2>${intro}<div class="grid2"><div><h3>Tokens by role</h3>${roleTable}</div><div><h3>Tokens by block type</h3>${typeTable}</div></div>` +
    `<h3>Largest messages</h3>${largestTable}<h3>Largest tool results</h3>${resultsTable}${toolTable}</section>`
  )
}

function messagesSection(data) {
  const items = data.now.items
  // Lean rows (end tags omitted where HTML allows it): a 2,000-message list stays small.
  const rows = items.map((item) => {
    const what =
      item.summary !== undefined
        ? `<b>summary</b>${item.compaction ? ` of compaction ${compactionLink(item.compaction)}` : ''} · ${esc(item.preview)}`
        : esc(item.preview)
    return `<tr id="m-${item.index}"><td class="num">${item.index}<td>${esc(item.role)}<td class="num">${fmt(item.tokens)}<td class="pv">${what}`
  })
  return `<section id="messages"><h2>Messages (${fmt(items.length)})</h2><p class="note">The list as given, one row per message: index, role, tokens and how it starts.</p><div class="scroll"><table class="messages"><colgroup><col class="c-i"><col class="c-r"><col class="c-t"><col></colgroup><thead><tr>${th('#', true)}${th('role')}${th('tokens', true)}${th('starts with')}</tr></thead><tbody>${rows.join('')}</tbody></table></div></section>`
}

function logSection(data) {
  if (data.events.length === 0) return '<section id="log"><h2>Audit log</h2><p>No events recorded.</p></section>'
  const byArchive = new Map(data.compactions.filter((c) => c.archive).map((c) => [c.archive, c.number]))
  const rows = data.events.slice(-500).map((e) => {
    const detail = []
    if (e.event === 'compacted' && byArchive.has(e.archive)) detail.push(`compaction ${compactionLink(byArchive.get(e.archive))}`)
    if (e.code) detail.push(`<span class="warn">${esc(e.code)}</span>`)
    if (e.reason) detail.push(esc(clip(e.reason, REASON_CHARS).text))
    if (Array.isArray(e.removed)) detail.push(`${plural(e.removed.length, 'file')} removed`)
    return `<tr><td>${when(e.time)}</td><td>${esc(e.event)}</td><td>${esc(e.trigger ?? '')}</td><td class="num">${typeof e.tokens === 'number' ? fmt(e.tokens) : ''}</td><td class="num">${typeof e.threshold === 'number' ? fmt(e.threshold) : ''}</td><td>${detail.join(' · ')}</td></tr>`
  })
  const more = data.events.length > 500 ? `<p class="note">The last 500 of ${fmt(data.events.length)} events.</p>` : ''
  return `<section id="log"><h2>Audit log (${plural(data.events.length, 'event')})</h2>${more}${table([th('time'), th('event'), th('trigger'), th('tokens', true), th('threshold', true), th('detail')], rows, 'log')}</section>`
}

function archivesSection(data) {
  if (data.archives.length === 0) return '<section id="archives"><h2>Archives</h2><p>None.</p></section>'
  const rows = data.archives.map(
    (a) =>
      `<tr><td class="num">${fmt(a.sequence)}</td><td><code>${esc(a.fileName)}</code></td><td>${when(a.createdAt)}</td><td class="num">${a.messageCount === null ? '?' : fmt(a.messageCount)}</td><td class="num">${bytes(a.sizeBytes)}</td><td>${a.compaction ? `${compactionLink(a.compaction)} ` : ''}${esc(a.role)}</td></tr>`,
  )
  return `<section id="archives"><h2>Archives (${fmt(data.archives.length)})</h2>${table([th('#', true), th('file'), th('written'), th('messages', true), th('size', true), th('holds')], rows, 'archives')}</section>`
}

const CSS = `
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--soft:#f6f8fa;--accent:#0b63c5;--warn:#b3261e}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:#fff}
header,nav,main,footer{max-width:72rem;margin:0 auto;padding:0 1rem}
h1{font-size:1.5rem;margin:1.2rem 0 .2rem;overflow-wrap:anywhere}
h2{font-size:1.25rem;margin:2rem 0 .6rem;padding-top:.6rem;border-top:1px solid var(--line)}
h3{font-size:1.05rem;margin:1.2rem 0 .4rem}
h4{font-size:.9rem;margin:.4rem 0 .2rem}
a{color:var(--accent)}
code{font:.85em/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
nav ul{display:flex;flex-wrap:wrap;gap:.2rem 1.2rem;list-style:none;padding:.5rem 0;margin:0;border-bottom:1px solid var(--line)}
.kpis{display:grid;grid-template-columns:repeat(auto-fit,minmax(11rem,1fr));gap:.6rem;margin:.8rem 0}
.kpi{border:1px solid var(--line);border-radius:8px;padding:.5rem .7rem;min-width:0}
.kpi span{color:var(--muted);font-size:.85rem}
.kpi b{display:block;font-size:1.4rem;font-variant-numeric:tabular-nums}
.kpi small{display:block;color:var(--muted);overflow-wrap:anywhere}
.notes{color:var(--warn)}
.chart{max-width:52rem}
.chart svg{display:block;width:100%;height:auto}
.chart .halo{paint-order:stroke;stroke:#fff;stroke-width:4px;stroke-linejoin:round}
.legend{list-style:none;padding:0;margin:.5rem 0;display:flex;flex-wrap:wrap;gap:.3rem 1.4rem;font-size:.9rem}
.legend li{display:flex;align-items:center;gap:.35rem}
.legend svg{flex:none}
details{margin:.6rem 0}
summary{cursor:pointer;color:var(--accent)}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{text-align:left;padding:.25rem .5rem;border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:break-word}
th{font-weight:600;color:var(--muted);border-bottom-width:2px;white-space:nowrap}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.pv{color:var(--muted);font-size:.85rem;overflow-wrap:anywhere}
.barcell{width:30%}
.bar{display:inline-block;height:.65rem;background:var(--accent);border-radius:2px;vertical-align:middle}
table.messages{table-layout:fixed}
table.messages .c-i{width:4.5rem}
table.messages .c-r{width:6.5rem}
table.messages .c-t{width:5.5rem}
table.messages tr:target{background:#fff8c5}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--soft);padding:.6rem;border-radius:6px;font-size:.82rem;max-height:32rem;overflow-y:auto}
.card{border:1px solid var(--line);border-radius:8px;padding:.1rem 1rem .6rem;margin:1rem 0}
.card:target{outline:3px solid #f0b400}
dl.facts{display:grid;grid-template-columns:minmax(6rem,9rem) minmax(0,1fr);gap:.35rem 1rem;margin:.5rem 0}
dl.facts dt{font-weight:600;color:var(--muted)}
dl.facts dd{margin:0;min-width:0}
ul.ledger{list-style:none;margin:.1rem 0 .5rem;padding:0;columns:26rem auto;column-gap:1.5rem}
ul.ledger li{break-inside:avoid;line-height:1.45;padding-left:.6em;text-indent:-.6em}
ul.ledger code{font-size:.8em}
ul.ledger li.clip{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
ul.ledger code{overflow-wrap:anywhere}
code.shared{overflow-wrap:anywhere}
.ledger-groups h4{margin:.3rem 0 .1rem}
.ledger-groups p.note{margin:0 0 .2rem;overflow-wrap:anywhere}
.full-paths ul{margin:.2rem 0;padding-left:1.2rem}
.full-paths code{overflow-wrap:anywhere}
table.tools{max-width:40rem}
.grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,20rem),1fr));gap:0 1.5rem}
.note{color:var(--muted);font-size:.85rem}
.warn{color:var(--warn);font-weight:600}
footer{color:var(--muted);font-size:.85rem;margin:2rem auto;border-top:1px solid var(--line);padding-top:.6rem}
@media (max-width:40rem){
  body{font-size:14px}
  dl.facts{grid-template-columns:minmax(0,1fr)}
  dl.facts dt{margin-top:.3rem}
  table.messages .c-i{width:3rem}
  table.messages .c-r{width:4.5rem}
  table.messages .c-t{width:4.5rem}
  .barcell{display:none}
  .kpis{grid-template-columns:repeat(2,minmax(0,1fr))}
  .kpi b{font-size:1.15rem}
  .chart svg text{font-size:${FONT_NARROW}px}
  .chart .xtitle,.chart .ytitle,.chart .nums{display:none}
  .legend{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:.2rem .8rem;font-size:.8rem}
  .legend svg{width:26px}
}
`

/** The page, from what reportData computed. */
function renderHtml(data) {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">' +
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">` +
    `<title>${esc(data.title)} · context-compact report</title><style>${CSS.trim()}</style></head><body>` +
    header(data) +
    `<main>${curveSection(data)}${compactionsSection(data)}${nowSection(data)}${messagesSection(data)}${logSection(data)}${archivesSection(data)}</main>` +
    `<footer>Written by context-compact ${esc(data.version)}. Counts are exact ${esc(data.encoding)} tokenizer counts; the API bills with its own tokenizer.</footer>` +
    '</body></html>\n'
  )
}

module.exports = { renderHtml, esc, fmt, short }
