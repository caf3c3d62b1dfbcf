// One case of the fidelity benchmark: a session compacted once or several times in a row (more
// turns appended after each result, as an agent loop does), with a given summary writer, and the
// probes of probes.mjs asked of the final result.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { answer, isRequest, recallLines, sectionsOf, strings, truthOf } from './probes.mjs'

const require = createRequire(import.meta.url)
const { compactMessages, countTokens, createRecallTool, restoreMessages } = require('../../index.js')

export const SUMMARIZERS = {
  // Writes nothing useful: what is left is what the library guarantees on its own.
  nothing: { summarizer: async () => 'Nothing to report.' },
  extractive: { provider: 'extractive' },
}

const MARK = '[context-compact]'
const isOurs = (item) => strings(item).some((s) => s.startsWith(MARK))

/** Where a list may be cut to append the rest later: before a user turn or an assistant turn. */
function cutNear(session, target) {
  const { messages, events } = session
  const ok = (i) => {
    if (i <= 0 || i >= messages.length) return false
    if ((events[i] ?? []).some((e) => e.kind === 'user')) return true
    const m = messages[i]
    const prev = messages[i - 1]
    const assistant = (x) => x.role === 'assistant' || x.role === 'model' || (x.type === 'message' && x.role === 'assistant')
    return assistant(m) && !assistant(prev) && !(prev.type && prev.type.endsWith('_call'))
  }
  for (let d = 0; d < messages.length; d++) {
    if (ok(target - d)) return target - d
    if (ok(target + d)) return target + d
  }
  return target
}

/**
 * Compacts `session` in `rounds` steps with the summary writer `kind`, then asks the probes.
 * Returns `{result, probes, files, coverage, restoreExact, sections, compacted, text}`.
 */
export async function runCase(session, { rounds = 1, kind = 'nothing', options = {} } = {}) {
  const { messages, events, format } = session
  const outputDir = mkdtempSync(join(tmpdir(), 'cc-fidelity-'))
  const sessionId = 'fidelity'
  const fmt = format === 'anthropic' || format === 'openai' ? {} : { format }
  const total = countTokens(messages, fmt)
  const base = { ...fmt, outputDir, sessionId, planTools: session.planTools ?? [], ...SUMMARIZERS[kind], ...options }
  const cuts = rounds === 1 ? [messages.length] : Array.from({ length: rounds }, (_, k) => (k + 1 === rounds ? messages.length : cutNear(session, Math.round((messages.length * (k + 1)) / rounds))))
  let list = []
  let origins = []
  let from = 0
  let result = null
  for (const cut of cuts) {
    list = [...list, ...messages.slice(from, cut)]
    origins = [...origins, ...Array.from({ length: cut - from }, (_, k) => from + k)]
    from = cut
    // Each compaction at 90 % of the list's size, as an agent loop meets its threshold.
    const limit = Math.max(2_000, Math.floor(countTokens(list, fmt) * 0.9))
    result = await compactMessages(list, { ...base, contextTokenLimit: limit, force: rounds > 1 })
    if (!result.compacted) return { result, skipped: result.error?.code ?? 'not compacted' }
    // Where the summary is, and which of the list's messages the result keeps after it.
    const at = result.messages.findIndex((m) => !list.includes(m) && isOurs(m))
    const after = result.messages.slice(at + 1).filter((m) => !isOurs(m)).length
    origins = [...origins.slice(0, at), null, ...origins.slice(origins.length - after)]
    const acks = result.messages.slice(at + 1).filter(isOurs).length
    origins.splice(at + 1, 0, ...Array(acks).fill(null))
    list = result.messages
  }
  const kept = new Set(origins.filter((o) => o !== null))
  const compacted = []
  for (let i = 0; i < messages.length; i++) if (!kept.has(i)) compacted.push(i)
  const truth = truthOf(events, compacted)
  // The task: the session's first request, else its first user message.
  const asks = (evs) => evs.some((e) => e.kind === 'user' && isRequest(e.text))
  const firstUser = events.findIndex((evs) => evs.some((e) => e.kind === 'user'))
  const firstRequest = events.findIndex(asks)
  const taskAt = firstRequest >= 0 ? firstRequest : firstUser
  const taskEvent = taskAt >= 0 ? events[taskAt].find((e) => e.kind === 'user' && (firstRequest < 0 || isRequest(e.text))) : null
  const task = taskEvent && !kept.has(taskAt) ? taskEvent.text : null
  const text = strings(result.messages).join('\n')
  const { probes, files } = answer({ text, summary: result.summary, truth, task })

  // Everything compacted is reachable: restore gives the list back, and the recall lines cover
  // each compacted message in the archives.
  const restored = await restoreMessages(result.messages, { ...fmt, outputDir, sessionId })
  const restoreExact = JSON.stringify(restored) === JSON.stringify(messages)
  const lines = recallLines(text)
  const covered = new Set()
  const key = (item) => JSON.stringify(item)
  // Items equal to each other (two identical outputs) are the same text to recall.
  const wanted = new Map()
  for (const i of compacted) wanted.set(key(messages[i]), [...(wanted.get(key(messages[i])) ?? []), i])
  const read = (name) => {
    try {
      return JSON.parse(readFileSync(join(outputDir, sessionId, name), 'utf8'))
    } catch {
      return null
    }
  }
  const cover = (m) => {
    const items = m['x-context-compact-source']?.items ?? [m]
    for (const item of items) for (const i of wanted.get(key(item)) ?? []) covered.add(i)
  }
  let seen = text
  for (const line of lines) {
    const archive = read(line.archive)
    if (!archive) continue
    const archived = Array.isArray(archive) ? archive : archive.messages
    for (const m of archived.slice(line.from ?? 0, line.to ?? archived.length)) {
      cover(m)
      seen += `\n${strings(m).join('\n')}`
    }
  }
  // A kept message a compaction shortened (or stripped of its thinking) and a later one
  // compacted is archived as changed; its marker names the archive holding the original.
  for (const name of readdirSync(join(outputDir, sessionId)).filter((n) => n.endsWith('.json') && seen.includes(n))) {
    const kept = read(name)?.keptOriginals ?? {}
    for (const m of [...(kept.shortened ?? []), ...(kept.thinkingRemoved ?? [])]) cover(m)
  }
  const coverage = compacted.length === 0 ? 1 : compacted.filter((i) => covered.has(i)).length / compacted.length
  probes.push({ kind: 'recall', name: 'every compacted message reachable', ok: restoreExact && coverage === 1 })
  if (truth.facts.length > 0) {
    // What the recall tool answers for the ranges the recall lines name, page by page.
    const recall = createRecallTool({ outputDir, sessionId, maxTokens: 200_000 })
    let answers = ''
    for (const line of lines) {
      let input = line.from === null ? { archive: line.archive } : { archive: line.archive, from: line.from, to: line.to }
      for (let page = 0; page < 20 && input; page++) {
        const out = await recall.run(input)
        answers += out
        const more = /Ask again with archive=(\S+) from=(\d+) to=(\d+)/.exec(out)
        input = more ? { archive: more[1], from: Number(more[2]), to: Number(more[3]) } : null
      }
    }
    for (const fact of truth.facts) probes.push({ kind: 'fact via recall', name: fact, ok: answers.includes(fact) })
  }
  const sections = {}
  for (const s of sectionsOf(result.summary ?? '')) sections[s.header] = countTokens([{ role: 'user', content: s.text }])
  return { result, probes, files, coverage, restoreExact, sections, compacted, truth, task, text, total, outputDir }
}

/** The probes a summary text of another system answers on the same compacted part. */
export function answerText(run, summaryText) {
  const { probes } = answer({ text: summaryText, summary: null, truth: run.truth, task: run.task })
  return probes
}
