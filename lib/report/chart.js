'use strict'

// The report's chart: tokens message by message, as inline SVG, with its legend and the numbers
// behind it as a table. It is readable without colour: each line has its own dash pattern,
// compactions are labelled triangles, billed requests open circles.

const { html, join } = require('./html.js')
const { fmt, short, compactionLink, anchorOfCompaction } = require('./format.js')

const CHART_POINTS = 1200
const CHART_CIRCLES = 600

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
    html`<svg viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="chart-title chart-desc" xmlns="http://www.w3.org/2000/svg" font-size="${FONT}">`,
    html`<title id="chart-title">Tokens message by message</title>`,
    html`<desc id="chart-desc">${chartDescription(data)}</desc>`,
    html`<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#0b63c5" stroke-opacity="0.35" stroke-width="2"/></pattern>`,
    html`<clipPath id="plot"><rect x="${M.left}" y="${M.top}" width="${PLOT_W}" height="${PLOT_H}"/></clipPath></defs>`,
  )
  // Axes and grid: as many ticks as their labels leave room for at phone width.
  for (const v of ticks(yMax, 5, true)) {
    out.push(
      html`<line x1="${M.left}" x2="${M.left + PLOT_W}" y1="${f(y(v))}" y2="${f(y(v))}" stroke="#d0d7de" stroke-width="1"/>`,
      html`<text class="tick" x="${M.left - 6}" y="${f(y(v))}" text-anchor="end" dominant-baseline="middle" fill="#57606a">${short(v)}</text>`,
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
      html`<line x1="${f(x(v))}" x2="${f(x(v))}" y1="${M.top + PLOT_H}" y2="${M.top + PLOT_H + 4}" stroke="#57606a"/>`,
      // Low enough that "0" clears the y axis's "0" at phone width.
      html`<text class="tick" x="${f(anchor === 'end' ? W - 1 : x(v))}" y="${M.top + PLOT_H + 13}" text-anchor="${anchor}" dominant-baseline="hanging" fill="#57606a">${fmt(v)}</text>`,
    )
  }
  out.push(
    html`<line x1="${M.left}" x2="${M.left + PLOT_W}" y1="${M.top + PLOT_H}" y2="${M.top + PLOT_H}" stroke="#57606a"/>`,
    html`<text class="xtitle" x="${M.left + PLOT_W / 2}" y="${H - 6}" text-anchor="middle" fill="#1b1f24">messages (full conversation)</text>`,
    html`<text class="ytitle" x="14" y="${M.top + PLOT_H / 2}" text-anchor="middle" fill="#1b1f24" transform="rotate(-90 14 ${M.top + PLOT_H / 2})">tokens</text>`,
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
  out.push(html`<g clip-path="url(#plot)">`)
  out.push(html`<path d="${path(shown)}L${f(x(n))} ${f(y(0))}L${f(x(0))} ${f(y(0))}Z" fill="url(#hatch)" stroke="none"/>`)
  if (data.drops.length > 0 || data.full.restored) {
    // The conversation never compacted outgrows the scale, which is the context's: it is drawn
    // up to the compactions' band and leaves the plot there (the text says where it ends).
    const parts = below(at(thin(cumulative, CHART_POINTS, new Set())), M.top + band)
    obstacles.lines.push(...parts)
    const d = parts.map((part) => part.map(([px, py], k) => `${k === 0 ? 'M' : 'L'}${f(px)} ${f(py)}`).join('')).join('')
    if (d) out.push(html`<path class="curve" d="${d}" fill="none" stroke="#6f42c1" stroke-width="2" stroke-dasharray="7 5"/>`)
  }
  if (factor !== 1) {
    const scaled = shown.map(([i, v]) => [i, v * factor])
    obstacles.lines.push(at(scaled))
    out.push(html`<path class="curve" d="${path(scaled)}" fill="none" stroke="#bc4c00" stroke-width="2" stroke-dasharray="2 3"/>`)
  }
  out.push(html`<path class="curve" d="${path(shown)}" fill="none" stroke="#0b63c5" stroke-width="2.2" stroke-linejoin="round"/>`)
  out.push(html`</g>`)

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
    html`<line class="window" data-tokens="${window}" x1="${M.left}" x2="${M.left + PLOT_W}" y1="${f(yw)}" y2="${f(yw)}" stroke="#24292f" stroke-width="2.5"/>`,
    html`<line class="threshold" data-tokens="${threshold}" x1="${M.left}" x2="${M.left + PLOT_W}" y1="${f(yt)}" y2="${f(yt)}" stroke="#b3261e" stroke-width="1.8" stroke-dasharray="10 3 2 3"/>`,
  )
  const windowText = `window ${short(window)}`
  const thresholdText = `threshold ${short(threshold)}`
  const wl = lineLabel(window, windowText, 'above')
  const tl = lineLabel(threshold, thresholdText, 'below')
  const lineText = (l, text, colour) =>
    html`<text class="halo label" x="${f(l.x)}" y="${f(l.y)}" text-anchor="${l.anchor}"${l.baseline === 'hanging' && html` dominant-baseline="hanging"`} fill="${colour}">${text}</text>`
  if (wl) out.push(lineText(wl, windowText, '#24292f'))
  if (tl) out.push(lineText(tl, thresholdText, '#b3261e'))

  // Billed requests: open circles.
  for (const b of circles) {
    out.push(
      html`<circle class="billed" cx="${f(x(b.index + 1))}" cy="${f(y(b.prompt))}" r="3.2" fill="#fff" stroke="#1a7f37" stroke-width="1.6"><title>request after message ${fmt(b.index)}: ${fmt(b.prompt)} tokens billed, ${fmt(b.estimate)} counted</title></circle>`,
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
        ? html`<path d="M${f(cx)} ${f(y(d.estimate) - 5)}L${f(cx + 5)} ${f(y(d.estimate))}L${f(cx)} ${f(y(d.estimate) + 5)}L${f(cx - 5)} ${f(y(d.estimate))}Z" fill="#fff" stroke="#bc4c00" stroke-width="1.6"/>`
        : ''
    const title = `compaction #${d.number} at message ${fmt(d.x)}: ${fmt(d.before)} → ${fmt(d.after)} tokens${typeof d.estimate === 'number' ? `; the trigger's estimate was ${fmt(d.estimate)}` : ''}`
    out.push(
      html`<a href="#${anchorOfCompaction(d.number)}"><title>${title}</title>`,
      html`<line x1="${f(cx)}" x2="${f(cx)}" y1="${f(label.box.y1 + 1)}" y2="${f(Math.min(yb, y(d.estimate ?? d.before)) - 10)}" stroke="#57606a" stroke-width="1" stroke-dasharray="1 3"/>`,
      html`<line x1="${f(cx)}" x2="${f(cx)}" y1="${f(yb)}" y2="${f(ya)}" stroke="#24292f" stroke-width="1.4" stroke-dasharray="2 3"/>`,
      estimate,
      html`<path d="M${f(cx - 6)} ${f(yb - 10)}L${f(cx + 6)} ${f(yb - 10)}L${f(cx)} ${f(yb)}Z" fill="#f0b400" stroke="#24292f" stroke-width="1.2"/>`,
      html`<rect x="${f(cx - 3)}" y="${f(ya - 1.5)}" width="6" height="3" fill="#24292f"/>`,
      html`<text class="halo label" x="${f(label.x)}" y="${f(label.y)}" text-anchor="middle" font-weight="600" fill="#24292f">#${d.number}${labels.numbers ? html`<tspan class="nums"> ${short(d.before)}→${short(d.after)}</tspan>` : ''}</text>`,
      html`</a>`,
    )
  }
  out.push(html`</svg>`)
  return html`${out}`
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

const swatch = (inner) => html`<svg viewBox="0 0 34 14" width="34" height="14" aria-hidden="true">${inner}</svg>`

// Short entries, so that at phone width the legend (two columns) stays shorter than the chart;
// what each line means in full is said in the paragraph above the chart and in the table below.
function legend(data) {
  const items = [
    html`${swatch(html`<rect x="0" y="4" width="34" height="10" fill="url(#hatch)"/><line x1="0" y1="4" x2="34" y2="4" stroke="#0b63c5" stroke-width="2.2"/>`)} context held`,
  ]
  if (data.drops.length > 0 || data.full.restored) {
    items.push(html`${swatch(html`<line x1="0" y1="7" x2="34" y2="7" stroke="#6f42c1" stroke-width="2" stroke-dasharray="7 5"/>`)} never compacted`)
  }
  const factor = estimateFactor(data)
  if (factor !== 1) {
    items.push(html`${swatch(html`<line x1="0" y1="7" x2="34" y2="7" stroke="#bc4c00" stroke-width="2" stroke-dasharray="2 3"/>`)} estimate (×${factor.toFixed(2)})`)
  }
  items.push(
    html`${swatch(html`<line x1="0" y1="7" x2="34" y2="7" stroke="#24292f" stroke-width="2.5"/>`)} window <span class="legend-window">${fmt(data.lines.window)}</span>`,
    html`${swatch(html`<line x1="0" y1="7" x2="34" y2="7" stroke="#b3261e" stroke-width="1.8" stroke-dasharray="10 3 2 3"/>`)} threshold <span class="legend-threshold">${fmt(data.lines.threshold)}</span>`,
  )
  if (data.drops.length > 0) {
    items.push(html`${swatch(html`<path d="M11 1L23 1L17 11Z" fill="#f0b400" stroke="#24292f"/><rect x="14" y="11" width="6" height="3" fill="#24292f"/>`)} compaction: before → after`)
    if (data.drops.some((d) => typeof d.estimate === 'number')) {
      items.push(html`${swatch(html`<path d="M17 2L22 7L17 12L12 7Z" fill="#fff" stroke="#bc4c00" stroke-width="1.6"/>`)} estimate when it fired`)
    }
  }
  if (data.billed.length > 0) {
    items.push(html`${swatch(html`<circle cx="17" cy="7" r="4" fill="#fff" stroke="#1a7f37" stroke-width="1.6"/>`)} billed prompt`)
  }
  return html`<ul class="legend">${items.map((i) => html`<li>${i}</li>`)}</ul>`
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
  for (const d of data.drops) add(d.x, html`compaction ${compactionLink(d.number)}: ${fmt(d.before)} → ${fmt(d.after)}`)
  const billedAt = new Map(data.billed.map((b) => [b.index + 1, b]))
  const rows = [...marks.keys()]
    .sort((a, b) => a - b)
    .map((i) => {
      const b = billedAt.get(i) ?? nearestBilled(data.billed, i)
      return html`<tr><td class="num">${fmt(i)}</td><td class="num">${fmt(data.full.cumulative[i - 1])}</td><td class="num">${fmt(data.full.context[i - 1])}</td><td class="num">${b ? fmt(b.prompt) : '–'}</td><td>${join(marks.get(i).filter(Boolean), '; ')}</td></tr>`
    })
  return html`<details><summary>The curve as a table</summary><div class="scroll"><table class="curve"><thead><tr><th class="num">after message</th><th class="num">full conversation</th><th class="num">context held</th><th class="num">billed (last request before)</th><th>event</th></tr></thead><tbody>${rows}</tbody></table></div></details>`
}

function nearestBilled(billed, i) {
  let found = null
  for (const b of billed) {
    if (b.index + 1 <= i) found = b
    else break
  }
  return found
}

module.exports = { chart, legend, curveTable, estimateFactor, FONT_NARROW }
