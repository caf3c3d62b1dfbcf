// The fidelity benchmark: does what an agent needs for its next step survive a compaction?
// Every real session in ../shared/data (pi's .jsonl sessions and real/*.json) and long synthetic
// sessions of five agents (sessions.mjs) are compacted once and three times in a row,
// with a summary writer that writes nothing useful (what the library guarantees on its own) and
// with the built-in extractive summarizer; the probes of probes.mjs are asked of each
// result, by string and structure (no LLM scores them). For the Claude Code sessions, Claude
// Code's own summary of the same session (real/*.claude-code-summary.txt) is asked the same
// probes, probe by probe. The results are written into docs/fidelity.md (between its markers)
// and printed.
//
// Usage: npm run bench:fidelity [-- --quick] [-- --no-write]
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { tally } from './probes.mjs'
import { answerText, runCase } from './run.mjs'
import { AGENT_NAMES, realSessions, syntheticSession } from './sessions.mjs'

const quick = process.argv.includes('--quick')
const write = !process.argv.includes('--no-write')
const ROOT = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..')
const DOC = join(ROOT, 'docs', 'fidelity.md')

const KINDS = ['task', 'user message', 'constraint', 'value', 'plan', 'error', 'files modified', 'files read', 'recall', 'fact via recall']

const pct = (a, b) => (b === 0 ? '—' : `${Math.round((100 * a) / b)} %`)
const cell = (t) => (t ? `${t[0]}/${t[1]}` : '—')

function add(into, t) {
  for (const [kind, [a, b]] of Object.entries(t)) {
    into[kind] ??= [0, 0]
    into[kind][0] += a
    into[kind][1] += b
  }
}

const sessions = [...realSessions().map((s) => ({ ...s, group: 'real' })), ...AGENT_NAMES.flatMap((agent) => (quick ? [1] : [1, 2]).map((seed) => ({ ...syntheticSession(agent, { seed }), group: 'synthetic' })))]

// The summary writers, and the library's guarantees with an ample budget for the user's words.
const WRITERS = [
  { kind: 'nothing', label: 'nothing' },
  { kind: 'extractive', label: 'extractive' },
  // The user's messages take at most a quarter of the summary budget: it is raised with them.
  { kind: 'nothing', label: 'nothing, userMessagesMaxTokens 100 000', options: { userMessagesMaxTokens: 100_000, summaryBudgetTokens: 400_000 } },
]

const rows = []
const leftOutTotals = {}
const totals = {}
const fileStats = {}
const sectionCost = {}
const comparisons = []
for (const session of sessions) {
  for (const rounds of quick ? [1] : [1, 3]) {
    for (const { kind, label, options } of WRITERS) {
      const started = Date.now()
      const run = await runCase(session, { rounds, kind, options })
      if (run.skipped) {
        rows.push({ session: session.name, group: session.group, rounds, kind: label, skipped: run.skipped })
        continue
      }
      const t = tally(run.probes)
      const key = `${session.group} · ${rounds} · ${label}`
      totals[key] ??= {}
      add(totals[key], t)
      fileStats[key] ??= []
      for (const which of ['modified', 'read']) if (run.files[which]) fileStats[key].push(...run.files[which].extra.map((p) => `${session.name}: ${p} (listed as ${which})`))
      sectionCost[key] ??= { runs: 0, tokens: {} }
      sectionCost[key].runs++
      for (const [h, n] of Object.entries(run.sections)) sectionCost[key].tokens[h] = (sectionCost[key].tokens[h] ?? 0) + n
      // How many user messages the section says it left out for its budget.
      const leftOut = Number(/^\((\d+) user messages? left out to stay within/m.exec(run.result.summary ?? '')?.[1] ?? 0)
      leftOutTotals[key] = (leftOutTotals[key] ?? 0) + leftOut
      rows.push({ session: session.name, group: session.group, rounds, kind: label, tally: t, files: run.files, coverage: run.coverage, restoreExact: run.restoreExact, compacted: run.compacted.length, total: run.total, after: run.result.stats.compactedTokenCount, ms: Date.now() - started, warnings: run.result.warnings, leftOut, sections: run.sections })
      if (session.claudeCodeSummary && rounds === 1 && label === 'extractive') {
        const theirs = answerText(run, session.claudeCodeSummary)
        comparisons.push({ session: session.name, ours: run.probes, theirs })
      }
      process.stderr.write(`${session.name} ×${rounds} ${label}: ${Object.entries(t).map(([k, v]) => `${k} ${cell(v)}`).join(', ')}\n`)
    }
  }
}

// Recall and precision of the ledger's file lists over the runs of one kind.
function filePrecision(group, rounds, kind, which) {
  let found = 0
  let truth = 0
  let hits = 0
  let claimed = 0
  for (const r of rows.filter((r) => r.group === group && r.rounds === rounds && r.kind === kind && r.files?.[which])) {
    const f = r.files[which]
    found += f.found
    truth += f.truth
    hits += f.hits
    claimed += f.claimed
  }
  return { recall: pct(found, truth), precision: pct(hits, claimed), found, truth }
}

let out = ''
const line = (s = '') => (out += `${s}\n`)
line(`Measured on ${new Date().toISOString().slice(0, 10)} with \`npm run bench:fidelity\`${quick ? ' (--quick)' : ''}: ${sessions.filter((s) => s.group === 'real').length} real sessions and ${sessions.filter((s) => s.group === 'synthetic').length} synthetic ones.`)
line()
line('### Probes answered')
line()
line(`| sessions · compactions · summary writer | ${KINDS.join(' | ')} | user messages left out for the budget |`)
line(`|---|${KINDS.map(() => '---:').join('|')}|---:|`)
for (const [key, t] of Object.entries(totals)) line(`| ${key} | ${KINDS.map((k) => cell(t[k])).join(' | ')} | ${leftOutTotals[key] ?? 0} |`)
line()
line('"a/b": a of b probes answered; "—": no session asked it. The last column: the user messages the section says it left out to stay within `userMessagesMaxTokens` (the archive holds them, and a warning says so).')
line()
line('### Files: the ledger against the compacted tool calls')
line()
line('| sessions · compactions · summary writer | modified: recall | modified: precision | read: recall | read: precision |')
line('|---|---:|---:|---:|---:|')
for (const key of Object.keys(totals)) {
  const [group, rounds, kind] = key.split(' · ')
  if (kind.includes('userMessagesMaxTokens')) continue
  const m = filePrecision(group, Number(rounds), kind, 'modified')
  const r = filePrecision(group, Number(rounds), kind, 'read')
  line(`| ${key} | ${m.recall} (${m.found}/${m.truth}) | ${m.precision} | ${r.recall} (${r.found}/${r.truth}) | ${r.precision} |`)
}
const extras = [...new Set(Object.values(fileStats).flat())]
if (extras.length) {
  line()
  line(`Files the ledger lists that the benchmark's own reading of the calls does not (${extras.length}):`)
  for (const e of extras.slice(0, 40)) line(`- ${e}`)
}
line()
line('### Against Claude Code\'s own summaries (one compaction, the extractive summarizer)')
line()
line('The same probes, on the same compacted part, asked of Claude Code\'s summary of that session (the recall probes left out: Claude Code\'s summary names no archive).')
line()
line(`| session | ${KINDS.filter((k) => !k.includes('recall')).join(' | ')} | all |`)
line(`|---|${KINDS.filter((k) => !k.includes('recall')).map(() => '---:').join('|')}|---:|`)
for (const c of comparisons) {
  const ours = tally(c.ours.filter((p) => !p.kind.includes('recall')))
  const theirs = tally(c.theirs)
  const all = (t) => Object.values(t).reduce((n, [a]) => n + a, 0)
  const asked = Object.values(theirs).reduce((n, [, b]) => n + b, 0)
  line(`| ${c.session}: context-compact | ${KINDS.filter((k) => !k.includes('recall')).map((k) => cell(ours[k])).join(' | ')} | ${all(ours)}/${asked} |`)
  line(`| ${c.session}: Claude Code | ${KINDS.filter((k) => !k.includes('recall')).map((k) => cell(theirs[k])).join(' | ')} | ${all(theirs)}/${asked} |`)
}
for (const c of comparisons) {
  const differ = c.theirs.filter((p, i) => p.ok !== c.ours.filter((q) => !q.kind.includes('recall'))[i]?.ok)
  if (differ.length === 0) continue
  line()
  line(`Probes of ${c.session} where the two differ:`)
  const oursByKey = new Map(c.ours.map((p) => [`${p.kind}|${p.name}`, p.ok]))
  for (const p of c.theirs) {
    const o = oursByKey.get(`${p.kind}|${p.name}`)
    if (o !== p.ok) line(`- ${p.kind} \`${p.name.replace(/`/g, "'").replace(/\n/g, ' ')}\`: context-compact ${o ? 'yes' : 'no'}, Claude Code ${p.ok ? 'yes' : 'no'}`)
  }
}
line()
line('### What the sections cost')
line()
const headers = [...new Set(Object.values(sectionCost).flatMap((c) => Object.keys(c.tokens)))]
line(`| sessions · compactions · summary writer | ${headers.map((h) => h.replace('## ', '')).join(' | ')} |`)
line(`|---|${headers.map(() => '---:').join('|')}|`)
for (const [key, c] of Object.entries(sectionCost)) line(`| ${key} | ${headers.map((h) => (c.tokens[h] ? Math.round(c.tokens[h] / c.runs).toLocaleString('en-US') : '—')).join(' | ')} |`)
line()
line('Tokens (o200k_base) of each section, averaged over all the runs of a row (a run without the section counts 0); "—": no run had it.')
line()
line('Beside what they keep, with the summary writer that writes nothing (every session, one and three compactions):')
line()
line('| section | tokens per summary that has it | probes it answers |')
line('|---|---:|---|')
const KEEPS = {
  '## Ledger (extracted from tool calls)': ['files modified', 'files read'],
  '## Task list (as the agent last set it)': ['plan'],
  '## User messages (verbatim)': ['task', 'user message', 'constraint', 'value'],
  '## Latest failure': ['error'],
  '## Archived originals (recall)': ['recall', 'fact via recall'],
}
for (const [header, kinds] of Object.entries(KEEPS)) {
  let tokens = 0
  let runs = 0
  const answered = {}
  for (const r of rows.filter((r) => r.kind === 'nothing' && r.tally)) {
    if (r.sections?.[header]) {
      tokens += r.sections[header]
      runs++
    }
    add(answered, Object.fromEntries(Object.entries(r.tally).filter(([k]) => kinds.includes(k))))
  }
  line(`| ${header.replace('## ', '')} | ${runs ? Math.round(tokens / runs).toLocaleString('en-US') : '—'} (${runs} runs) | ${kinds.map((k) => `${k} ${cell(answered[k])}`).join(', ')} |`)
}
line()
line('### Each run')
line()
line('| session | compactions | writer | tokens before → after | compacted messages | probes answered | coverage | restore |')
line('|---|---:|---|---|---:|---|---:|---|')
for (const r of rows) {
  if (r.skipped) {
    line(`| ${r.session} | ${r.rounds} | ${r.kind} | not compacted: ${r.skipped} | | | | |`)
    continue
  }
  const answered = Object.values(r.tally).reduce((n, [a]) => n + a, 0)
  const asked = Object.values(r.tally).reduce((n, [, b]) => n + b, 0)
  line(`| ${r.session} | ${r.rounds} | ${r.kind} | ${r.total.toLocaleString('en-US')} → ${r.after.toLocaleString('en-US')} | ${r.compacted} | ${answered}/${asked} | ${pct(r.coverage, 1)} | ${r.restoreExact ? 'exact' : 'NOT EXACT'} |`)
}

process.stdout.write(out)
if (write) {
  const doc = readFileSync(DOC, 'utf8')
  const begin = '<!-- fidelity:begin -->'
  const end = '<!-- fidelity:end -->'
  const a = doc.indexOf(begin)
  const b = doc.indexOf(end)
  if (a >= 0 && b > a) writeFileSync(DOC, `${doc.slice(0, a + begin.length)}\n${out}${doc.slice(b)}`)
}
