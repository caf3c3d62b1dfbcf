// The step below the threshold (issue 39): `Compactor.shouldCompact` after appending k messages
// to a real session of 400K and of 2M tokens, against what a loop would otherwise do, count the
// whole list again with gpt-tokenizer. Part of `npm run bench` (its own section), and runnable
// alone: `node benchmark/counting/step.mjs` (BENCH_STEP_SAMPLES samples per size, default 200).
//
// The lists are the real pi sessions of ../shared/data (Anthropic Messages, read at run time),
// repeated as new objects (structuredClone) until they hold the size; the messages appended
// are further copies, so the Compactor has never seen them.
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'

import { realSessions } from '../fidelity/sessions.mjs'
import { median } from '../timing.mjs'

const require = createRequire(import.meta.url)
const reference = require('./reference-count.cjs')


/** Real Anthropic messages, as new objects, until `tokens` are reached. */
function realList(library, sessions, tokens) {
  const list = []
  let total = 0
  for (let round = 0; total < tokens; round++) {
    const session = sessions[round % sessions.length]
    for (const message of session) {
      const copy = structuredClone(message)
      list.push(copy)
      total += library.countTokens([copy])
      if (total >= tokens) break
    }
  }
  // A list the APIs accept ends with a tool result or a user message: cut after the last one.
  while (list.length > 0 && list[list.length - 1].role === 'assistant') list.pop()
  return list
}

/**
 * Measures the step at each size; returns `{ rows, markdown }`. `library`: the package's
 * exports (index.js).
 */
export function stepBench(library, { sizes = [400_000, 2_000_000], samples = 200, appended = [1, 8] } = {}) {
  const sessions = realSessions()
    .filter((s) => s.name.startsWith('pi-session'))
    .map((s) => s.messages)
  const gptTokenizer = reference.makeMessageCounter(reference.loadGptTokenizer())
  const rows = []
  for (const size of sizes) {
    const list = realList(library, sessions, size)
    const pool = realList(library, sessions, 200_000)
    const tokens = library.countTokens(list)
    const row = { size, tokens, messages: list.length, step: {}, fullCount: null, gpt: null }
    for (const k of appended) {
      // A window far away: the step stays below the threshold however long the loop runs.
      const compactor = new library.Compactor({ contextTokenLimit: 1_000_000_000 })
      let current = list.slice()
      compactor.shouldCompact(current) // counted once, as the loop's earlier steps did
      let next = 0
      const times = []
      for (let i = 0; i < samples; i++) {
        const added = []
        for (let j = 0; j < k; j++) added.push(structuredClone(pool[next++ % pool.length]))
        current = [...current, ...added]
        const started = performance.now()
        compactor.shouldCompact(current)
        times.push(performance.now() - started)
        // The list stays at its size: the oldest messages go as the new ones come (a loop whose
        // compactions keep it bounded), so every sample is taken at the same size.
        current = current.slice(k)
      }
      row.step[k] = median(times)
    }
    // What the loop would otherwise pay each step: the whole list counted again.
    const full = []
    const gpt = []
    for (let i = 0; i < Math.max(3, Math.floor(samples / 40)); i++) {
      let started = performance.now()
      library.countTokens(list)
      full.push(performance.now() - started)
      started = performance.now()
      gptTokenizer(list)
      gpt.push(performance.now() - started)
    }
    row.fullCount = median(full)
    row.gpt = median(gpt)
    rows.push(row)
  }
  const fmt = (ms) => (ms < 1 ? ms.toFixed(3) : ms.toFixed(1))
  const lines = []
  lines.push(`| The step below the threshold (real pi sessions, o200k_base) | messages | \`shouldCompact\` after appending 1 | … 8 | \`countTokens\` of the whole list | gpt-tokenizer, the whole list |`)
  lines.push('|---|---:|---:|---:|---:|---:|')
  for (const r of rows) {
    lines.push(
      `| ${Math.round(r.tokens / 1000).toLocaleString('en-US')}K tokens | ${r.messages.toLocaleString('en-US')} | ${fmt(r.step[1])} ms | ${r.step[8] === undefined ? '—' : `${fmt(r.step[8])} ms`} | ${fmt(r.fullCount)} ms | ${fmt(r.gpt)} ms |`,
    )
  }
  if (rows.length >= 2) {
    const [small, big] = rows
    lines.push('')
    lines.push(`Step at ${Math.round(big.tokens / 1e6)}M ÷ at ${Math.round(small.tokens / 1000)}K: ${(big.step[1] / small.step[1]).toFixed(2)}× (target ≤ 1.5×; the step at 400K: ≤ 0.15 ms).`)
  }
  return { rows, markdown: lines.join('\n') }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const library = require('../../index.js')
  const samples = Number(process.env.BENCH_STEP_SAMPLES) > 0 ? Math.floor(Number(process.env.BENCH_STEP_SAMPLES)) : 200
  console.log(stepBench(library, { samples }).markdown)
}
