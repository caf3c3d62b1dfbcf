'use strict'

// A compaction's card on the report page: when, why and how it ran, what it replaced, the ledger
// of files and commands it carried, what it cost, where its archive is, and its summary (clipped).

const { html, join } = require('./html.js')
const { fmt, pct, plural, bytes, when, clip, num, ESTIMATES, anchorOfCompaction, table, th } = require('./format.js')

const SUMMARY_CHARS = 6000
const REASON_CHARS = 300
const LEDGER_ITEMS = 40

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
      ? html`<li><code title="${full}" data-path="${full}">${join(shownPath(full, shared).split('/'), html`/<wbr>`)}</code></li>`
      : html`<li class="clip"><code title="${full}">${full}</code></li>`
  }
  return html`<div class="ledger-group"><h4>${title} (${fmt(items.length)})</h4><ul class="ledger${files ? ' paths' : ''}" data-ledger="${title}">${shown.map(entry)}${more > 0 ? html`<li class="note">and ${fmt(more)} more</li>` : ''}</ul></div>`
}

function ledgerHtml(ledger) {
  const paths = Object.entries(ledger).flatMap(([title, items]) => (FILE_GROUPS.has(title) ? items.slice(0, LEDGER_ITEMS).map((i) => clip(i, 300).text) : []))
  const shared = sharedDirectory(paths)
  const groups = Object.entries(ledger)
    .map(([title, items]) => ledgerList(title, items, shared))
    .filter((group) => group !== '')
  if (groups.length === 0) return 'no file operations, commands or failures'
  const under = shared ? html`<p class="note">Paths under <code class="shared">${shared}</code></p>` : ''
  const full =
    paths.length > 0
      ? html`<details class="full-paths"><summary>Full paths (${fmt(paths.length)})</summary><ul>${paths.map((p) => html`<li><code>${p}</code></li>`)}</ul></details>`
      : ''
  return html`<div class="ledger-groups">${under}${groups}${full}</div>`
}

function compactionCard(c, lines, data) {
  const s = c.stats
  const facts = []
  const fact = (label, body) => facts.push(html`<dt>${label}</dt><dd>${body}</dd>`)
  fact(
    'From',
    c.origin === 'list'
      ? 'this list: its summaries lead to this archive'
      : html`the audit log of session <code>${data.sessionId}</code> in <code>${data.outputDir}</code> only: no summary in this list leads to it (another run under the same session id)`,
  )
  const why = []
  if (c.trigger) why.push(html`trigger <b>${c.trigger}</b>`)
  if (c.tokens !== null && c.threshold !== null) {
    const then = c.threshold !== lines.threshold ? html` (its threshold then; the chart draws ${fmt(lines.threshold)})` : ''
    why.push(html`${fmt(c.tokens)} tokens ${c.tokens >= c.threshold ? '≥' : '<'} threshold ${fmt(c.threshold)}${then}${c.trigger ? '' : c.tokens >= c.threshold ? ' (the token trigger)' : ' (forced or another trigger)'}`)
  }
  if (c.estimate) why.push(html`estimated from ${ESTIMATES[c.estimate] ?? c.estimate}`)
  fact('When', html`${when(c.time)}${c.position !== null ? html` · after message ${fmt(c.position)} of the full conversation` : ''}`)
  fact('Why', why.length > 0 ? join(why, ' · ') : '–')
  const how = [html`strategy <b>${c.strategy ?? '–'}</b>${c.fallback ? ' (selective fell back to a summary)' : ''}`]
  if (c.provider) how.push(html`provider <b>${c.provider}</b>${c.model ? html` (${c.model})` : ''}`)
  if (c.attempts !== null && c.attempts !== undefined) how.push(plural(c.attempts, 'attempt'))
  if (c.rounds) how.push(plural(c.rounds, 'round'))
  if (c.summaryRequest) how.push(html`${c.summaryRequest} request`)
  fact('How', join(how, ' · '))
  if (s) {
    fact(
      'Tokens',
      html`<b class="before" data-before="${s.originalTokenCount}">${fmt(s.originalTokenCount)}</b> → <b class="after" data-after="${s.compactedTokenCount}">${fmt(s.compactedTokenCount)}</b> (${pct(s.originalTokenCount - s.compactedTokenCount, s.originalTokenCount)} saved)`,
    )
    fact('Messages', html`${fmt(s.compactedMessageCount)} replaced, ${fmt(s.retainedMessageCount)} kept, ${fmt(s.removedMessageCount ?? 0)} removed`)
  }
  const r = c.replaced
  if (r) {
    const roles = Object.entries(r.byRole).sort((a, b) => b[1].tokens - a[1].tokens)
    const tools = Object.entries(r.tools).sort((a, b) => b[1].calls - a[1].calls || b[1].resultTokens - a[1].resultTokens)
    const replaced = [html`${plural(r.items, 'message')}, ${fmt(r.tokens)} tokens: ${roles.length > 0 ? join(roles.map(([role, e]) => html`${role} ${fmt(e.messages)} (${fmt(e.tokens)} tokens)`), ', ') : '–'}`]
    if (r.summaries.length > 0) replaced.push(html`; and ${plural(r.summaries.length, 'earlier summary', 'earlier summaries')}`)
    if (tools.length > 0) {
      replaced.push(
        table(
          [th('tool'), th('calls', true), th('failed', true), th('result tokens', true)],
          tools.slice(0, 20).map(([name, t]) => html`<tr><td><code>${name}</code></td><td class="num">${fmt(t.calls)}</td><td class="num">${fmt(t.failed)}</td><td class="num">${fmt(t.resultTokens)}</td></tr>`),
          'tools',
        ),
      )
      if (tools.length > 20) replaced.push(html`<p class="note">and ${fmt(tools.length - 20)} more tools</p>`)
    }
    fact('Replaced', replaced)
  }
  if (c.ledger) fact('Ledger', ledgerHtml(c.ledger))
  if (c.offloaded !== null || c.offloadArchive) {
    const held = c.offloadHeld
    fact(
      'Offloaded',
      html`${plural(c.offloaded ?? 0, 'text')} shortened to fit${held ? html`; the originals (${plural(held.items, 'message')}, ${fmt(held.tokens)} tokens) are in <code>${c.offloadArchive}</code>` : c.offloadArchive ? html` (originals: <code>${c.offloadArchive}</code>)` : ''}`,
    )
  }
  if (c.transformations !== null || c.thinkingArchive) {
    const held = c.thinkingHeld
    fact(
      'Thinking',
      html`${plural(c.transformations ?? 0, 'thinking block')} removed from kept turns${held ? html`; the originals (${plural(held.items, 'message')}, ${fmt(held.thinkingTokens)} tokens of thinking) are in <code>${c.thinkingArchive}</code>` : c.thinkingArchive ? html` (originals: <code>${c.thinkingArchive}</code>)` : ''}`,
    )
  }
  const u = c.summaryUsage
  if (u) {
    const input = num(u.inputTokens) + num(u.cacheReadTokens) + num(u.cacheWriteTokens)
    fact(
      'Summary cost',
      html`${plural(num(u.requests), 'request')} · input ${fmt(input)} tokens (${fmt(u.inputTokens)} full price, ${fmt(u.cacheReadTokens)} cache read, ${fmt(u.cacheWriteTokens)} cache write) · <b>${pct(num(u.cacheReadTokens), input)}</b> read from the cache · output ${fmt(u.outputTokens)} tokens`,
    )
  } else if (c.provider === 'extractive' || c.provider === 'custom') {
    fact('Summary cost', html`no LLM call (${c.provider} summarizer)`)
  }
  if (c.code) fact('Note', html`<span class="warn">${c.code}</span> ${clip(c.reason, REASON_CHARS).text}`)
  if (c.warnings.length > 0) fact('Warnings', html`<ul>${c.warnings.slice(0, 10).map((w) => html`<li>${clip(w, REASON_CHARS).text}</li>`)}</ul>`)
  fact(
    'Archive',
    c.archivePath
      ? html`<code>${c.archivePath}</code> (${bytes(c.archiveBytes)})${c.metaPath ? html`<br><span class="note">metadata: <code>${c.metaPath}</code></span>` : ''}`
      : c.archive
        ? html`<code>${c.archive}</code> <span class="warn">(not found in the session)</span>`
        : 'not archived',
  )
  let summary = ''
  if (c.summary) {
    const { text, left } = clip(c.summary, SUMMARY_CHARS)
    summary = html`<details><summary>Summary text (${fmt(c.summary.length)} characters)</summary><pre>${text}</pre>${left > 0 ? html`<p class="note">Clipped here: ${fmt(left)} more characters are in the metadata file.</p>` : ''}</details>`
  }
  return html`<article class="card" id="${anchorOfCompaction(c.number)}" data-compaction="${c.number}" data-origin="${c.origin === 'list' ? 'list' : 'log'}"><h3>Compaction #${c.number}${c.sequence !== null ? html` <span class="note">(archive sequence ${fmt(c.sequence)})</span>` : ''}</h3><dl class="facts">${facts}</dl>${summary}</article>`
}

function compactionsSection(data) {
  if (data.compactions.length === 0) {
    return html`<section id="compactions"><h2>Compactions</h2><p>No compaction recorded for session <code>${data.sessionId}</code> in <code>${data.outputDir}</code>: the report shows the list alone.</p></section>`
  }
  return html`<section id="compactions"><h2>Compactions (${fmt(data.compactions.length)})</h2>${data.compactions.map((c) => compactionCard(c, data.lines, data))}</section>`
}

module.exports = { compactionsSection, REASON_CHARS }
