'use strict'

// The page of a session report (lib/report/report.js computes what it shows): one self-contained HTML
// file — inline CSS (style.js), the chart as inline SVG (chart.js), no script, no font, nothing
// fetched (a Content Security Policy says so to the browser too), so it opens from disk or an
// e-mail attachment.
//
// Every text from the conversation or the session's files is untrusted: the page is written
// with the `html` tag (html.js), which escapes every value unless it is a fragment the tag built,
// and long texts are clipped (previews, summaries, ledger lists), so a 1 MB tool result or a
// 2,000-message session keeps the page small. The compactions' cards are in compaction.js.

const { html, join } = require('./html.js')
const { fmt, pct, plural, bytes, when, clip, ESTIMATES, compactionLink, messageLink, table, th, bar } = require('./format.js')
const { chart, legend, curveTable, estimateFactor } = require('./chart.js')
const { compactionsSection, REASON_CHARS } = require('./compaction.js')
const { STYLE } = require('./style.js')

const TOP = 10

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

function header(data) {
  const c = data.compactions.length
  const now = data.now.items
  const nowTokens = now.reduce((s, m) => s + m.tokens, 0)
  const m = data.now.measure
  const kpis = [
    ['messages now', fmt(now.length), html`${fmt(nowTokens)} tokens`],
    ['full conversation', fmt(data.full.count), html`${fmt(data.full.total)} tokens${data.full.restored ? ', restored from the archives' : ''}`],
    ['compactions', fmt(c), c > 0 ? html`${plural(data.archives.length, 'archive')}` : 'none recorded'],
    ['trigger estimate now', fmt(m.tokens), html`${pct(m.tokens, data.lines.window)} of the window, threshold ${fmt(data.lines.threshold)}`],
  ]
  if (data.billed.length > 0) {
    const last = data.billed[data.billed.length - 1]
    kpis.push(['last billed prompt', fmt(last.prompt), html`after message ${fmt(last.index)} (${data.usageGiven ? 'usage given' : 'recorded usage'})`])
  }
  const notes = data.notes.length > 0 && html`<ul class="notes">${data.notes.map((n) => html`<li>${n}</li>`)}</ul>`
  return html`<header><h1>${data.title}</h1><p class="note">context-compact ${data.version} report · session <code>${data.sessionId}</code> in <code>${data.outputDir}</code> · ${FORMAT_NAMES[data.format] ?? data.format} messages · ${data.encoding}</p><div class="kpis">${kpis.map(([label, value, note]) => html`<div class="kpi"><span>${label}</span><b>${value}</b><small>${note}</small></div>`)}</div>${notes}</header><nav aria-label="sections"><ul><li><a href="#curve">Token curve</a></li><li><a href="#compactions">Compactions (${fmt(c)})</a></li><li><a href="#now">The list now</a></li><li><a href="#messages">Messages</a></li><li><a href="#log">Audit log</a></li><li><a href="#archives">Archives</a></li></ul></nav>`
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
  return html`<section id="curve"><h2>Token curve</h2><p class="note">Tokens counted with ${data.encoding}, message by message, of the full conversation${data.full.restored ? ' restored through the archives' : ''}. Window <span class="text-window">${fmt(data.lines.window)}</span>, threshold <span class="text-threshold">${fmt(data.lines.threshold)}</span>: ${lines}</p><div class="chart">${chart(data)}</div>${legend(data)}<details><summary>How to read the chart</summary><p>${read.join('; ')}.${extra}${billed}</p></details>${curveTable(data)}${data.billed.length > 0 && billedTable(data)}</section>`
}

function billedTable(data) {
  const rows = data.billed
  const every = Math.max(1, Math.ceil(rows.length / 30))
  const shown = rows.filter((_, i) => i % every === 0 || i === rows.length - 1)
  const ratio = (b) => (b.estimate > 0 ? `${(b.prompt / b.estimate).toFixed(2)}×` : '–')
  const body = shown.map(
    (b) =>
      html`<tr><td class="num">${fmt(b.index)}</td><td class="num">${fmt(b.prompt)}</td><td class="num">${fmt(b.cacheRead)}</td><td class="num">${fmt(b.estimate)}</td><td class="num">${ratio(b)}</td></tr>`,
  )
  return html`<details><summary>Billed usage beside the count (${plural(rows.length, 'request')}${every > 1 ? html`, one in ${fmt(every)} shown` : ''})</summary><div class="scroll"><table><thead><tr><th class="num">after message</th><th class="num">billed prompt</th><th class="num">of it cache read</th><th class="num">counted here</th><th class="num">billed / counted</th></tr></thead><tbody>${body}</tbody></table></div></details>`
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
    html`<p>${plural(items.length, 'message')}, <b>${fmt(total)}</b> tokens${data.now.extraTokens > 0 ? html` (+ ${fmt(data.now.extraTokens)} of system prompt and tools)` : ''}. The trigger's estimate: <b>${fmt(m.tokens)}</b> tokens (${m.source}${m.factor !== 1 ? html`, ×${m.factor.toFixed(2)}` : ''}), ${pct(m.tokens, data.lines.window)} of the window; ${m.tokens >= data.lines.threshold ? html`<b class="warn">at or over the threshold (${fmt(data.lines.threshold)}): the next call compacts</b>` : html`${fmt(data.lines.threshold - m.tokens)} tokens below the threshold (${fmt(data.lines.threshold)})`}.</p>`
  const roleTable = table(
    [th('role'), th('messages', true), th('tokens', true), th('share', true), th('')],
    sorted(byRole).map(([role, e]) => html`<tr><td>${role}</td><td class="num">${fmt(e.messages)}</td><td class="num">${fmt(e.tokens)}</td><td class="num">${pct(e.tokens, total)}</td><td class="barcell">${bar(e.tokens, total)}</td></tr>`),
    'shares',
  )
  const typeTable = table(
    [th('block type'), th('blocks', true), th('tokens', true), th('share', true), th('')],
    sorted(byType).map(([type, e]) => html`<tr><td><code>${type}</code></td><td class="num">${fmt(e.blocks)}</td><td class="num">${fmt(e.tokens)}</td><td class="num">${pct(e.tokens, total)}</td><td class="barcell">${bar(e.tokens, total)}</td></tr>`),
    'shares',
  )
  const largest = [...items].sort((a, b) => b.tokens - a.tokens || a.index - b.index).slice(0, TOP)
  const largestTable = table(
    [th('message'), th('role'), th('tokens', true), th('share', true), th('starts with')],
    largest.map((item) => html`<tr><td>${messageLink(item.index)}</td><td>${item.role}</td><td class="num">${fmt(item.tokens)}</td><td class="num">${pct(item.tokens, total)}</td><td class="pv">${item.preview}</td></tr>`),
    'largest',
  )
  const topResults = results.sort((a, b) => b.tokens - a.tokens || a.index - b.index).slice(0, TOP)
  const resultsTable =
    topResults.length === 0
      ? html`<p class="note">No tool results in the list.</p>`
      : table(
          [th('message'), th('tool'), th('tokens', true), th('share', true), th('starts with')],
          topResults.map(
            (r) =>
              html`<tr><td>${messageLink(r.index)}</td><td><code>${r.name || '?'}</code>${r.error && html` <span class="warn">error</span>`}</td><td class="num">${fmt(r.tokens)}</td><td class="num">${pct(r.tokens, total)}</td><td class="pv">${r.preview}</td></tr>`,
          ),
          'largest',
        )
  const toolTable =
    Object.keys(byTool).length === 0
      ? ''
      : html`<h3>Tool results by tool</h3>${table(
          [th('tool'), th('results', true), th('tokens', true), th('share', true), th('')],
          sorted(byTool)
            .slice(0, 30)
            .map(([name, e]) => html`<tr><td><code>${name}</code></td><td class="num">${fmt(e.results)}</td><td class="num">${fmt(e.tokens)}</td><td class="num">${pct(e.tokens, total)}</td><td class="barcell">${bar(e.tokens, total)}</td></tr>`),
          'shares',
        )}`
  return html`<section id="now"><h2>The list now</h2>${intro}<div class="grid2"><div><h3>Tokens by role</h3>${roleTable}</div><div><h3>Tokens by block type</h3>${typeTable}</div></div><h3>Largest messages</h3>${largestTable}<h3>Largest tool results</h3>${resultsTable}${toolTable}</section>`
}

function messagesSection(data) {
  const items = data.now.items
  // Lean rows (end tags omitted where HTML allows it): a 2,000-message list stays small.
  const rows = items.map((item) => {
    const what =
      item.summary !== undefined
        ? html`<b>summary</b>${item.compaction ? html` of compaction ${compactionLink(item.compaction)}` : ''} · ${item.preview}`
        : item.preview
    return html`<tr id="m-${item.index}"><td class="num">${item.index}<td>${item.role}<td class="num">${fmt(item.tokens)}<td class="pv">${what}`
  })
  return html`<section id="messages"><h2>Messages (${fmt(items.length)})</h2><p class="note">The list as given, one row per message: index, role, tokens and how it starts.</p><div class="scroll"><table class="messages"><colgroup><col class="c-i"><col class="c-r"><col class="c-t"><col></colgroup><thead><tr>${th('#', true)}${th('role')}${th('tokens', true)}${th('starts with')}</tr></thead><tbody>${rows}</tbody></table></div></section>`
}

function logSection(data) {
  if (data.events.length === 0) return html`<section id="log"><h2>Audit log</h2><p>No events recorded.</p></section>`
  const byArchive = new Map(data.compactions.filter((c) => c.archive).map((c) => [c.archive, c.number]))
  const rows = data.events.slice(-500).map((e) => {
    const detail = []
    if (e.event === 'compacted' && byArchive.has(e.archive)) detail.push(html`compaction ${compactionLink(byArchive.get(e.archive))}`)
    if (e.code) detail.push(html`<span class="warn">${e.code}</span>`)
    if (e.reason) detail.push(clip(e.reason, REASON_CHARS).text)
    if (Array.isArray(e.removed)) detail.push(html`${plural(e.removed.length, 'file')} removed`)
    return html`<tr><td>${when(e.time)}</td><td>${e.event}</td><td>${e.trigger ?? ''}</td><td class="num">${typeof e.tokens === 'number' ? fmt(e.tokens) : ''}</td><td class="num">${typeof e.threshold === 'number' ? fmt(e.threshold) : ''}</td><td>${join(detail, ' · ')}</td></tr>`
  })
  const more = data.events.length > 500 ? html`<p class="note">The last 500 of ${fmt(data.events.length)} events.</p>` : ''
  return html`<section id="log"><h2>Audit log (${plural(data.events.length, 'event')})</h2>${more}${table([th('time'), th('event'), th('trigger'), th('tokens', true), th('threshold', true), th('detail')], rows, 'log')}</section>`
}

function archivesSection(data) {
  if (data.archives.length === 0) return html`<section id="archives"><h2>Archives</h2><p>None.</p></section>`
  const rows = data.archives.map(
    (a) =>
      html`<tr><td class="num">${fmt(a.sequence)}</td><td><code>${a.fileName}</code></td><td>${when(a.createdAt)}</td><td class="num">${a.messageCount === null ? '?' : fmt(a.messageCount)}</td><td class="num">${bytes(a.sizeBytes)}</td><td>${a.compaction ? html`${compactionLink(a.compaction)} ` : ''}${a.role}</td></tr>`,
  )
  return html`<section id="archives"><h2>Archives (${fmt(data.archives.length)})</h2>${table([th('#', true), th('file'), th('written'), th('messages', true), th('size', true), th('holds')], rows, 'archives')}</section>`
}

/** The page, from what reportData computed. */
function renderHtml(data) {
  const head = html`<meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"><title>${data.title} · context-compact report</title><style>${STYLE}</style>`
  const main = html`<main>${curveSection(data)}${compactionsSection(data)}${nowSection(data)}${messagesSection(data)}${logSection(data)}${archivesSection(data)}</main>`
  const footer = html`<footer>Written by context-compact ${data.version}. Counts are exact ${data.encoding} tokenizer counts; the API bills with its own tokenizer.</footer>`
  return `${html`<!doctype html><html lang="en"><head>${head}</head><body>${header(data)}${main}${footer}</body></html>`}\n`
}

module.exports = { renderHtml }
