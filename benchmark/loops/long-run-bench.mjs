// `npm run bench:long-run`: issue 36's long-running loop (benchmark/loops/long-run.mjs) at several
// windows, with the extractive summarizer and with a summarizer that rewrites the previous summary
// in about 150 tokens. Prints, for each run, the summary's size at the first compactions and the
// last, its largest, the budget it is held to, how many compactions were STILL_OVER_LIMIT, whether
// restore was exact, and the time taken.
//
// Usage: node benchmark/loops/long-run-bench.mjs [--steps N] [--lib path/to/library/root]
// (`--lib` runs the same loop against another build, e.g. a checkout before a change.)
import { createRequire } from 'node:module'
import { resolve } from 'node:path'

import { realSessions } from '../fidelity/sessions.mjs'
import { replaySession, runLongLoop } from './long-run.mjs'

const arg = (name, fallback) => {
  const at = process.argv.indexOf(name)
  return at >= 0 ? process.argv[at + 1] : fallback
}
const steps = Number(arg('--steps', 1_000))
const root = resolve(arg('--lib', new URL('../..', import.meta.url).pathname))
const lib = createRequire(import.meta.url)(resolve(root, 'index.js'))

const RUNS = [
  { window: 20_000 },
  { window: 100_000 },
  // Issue 36: a window of 100 000 with a threshold of 18 400.
  { window: 100_000, options: { compression: { threshold: 18_400 } }, label: '100 000, threshold 18 400' },
  // Fewer steps with larger results, so that a 1M window still compacts many times.
  { window: 1_000_000, steps: Math.ceil(steps / 4), minChars: 100_000, maxChars: 300_000 },
]

const fmt = (n) => (n === null || n === undefined ? '—' : n.toLocaleString('en-US'))
console.log('| window | writer | compactions | summary tokens: 1st → 5th → last (largest) | budget | STILL_OVER_LIMIT | restore | seconds |')
console.log('|---|---|---:|---|---:|---:|---|---:|')
for (const run of RUNS) {
  for (const writer of ['extractive', 'fixed']) {
    const started = Date.now()
    const { compactions, restoreExact } = await runLongLoop(lib, { ...run, steps: run.steps ?? steps, writer })
    const sizes = compactions.map((c) => c.tokens).filter((t) => t !== null)
    const over = compactions.filter((c) => c.code === 'STILL_OVER_LIMIT').length
    const threshold = run.options?.compression?.threshold
    const budget = Math.max(Math.floor((Math.min(run.window, threshold ?? Infinity) * 10) / 100), Math.min(4_000, Math.floor((Math.min(run.window, threshold ?? Infinity) * 15) / 100)))
    const last = compactions.at(-1)
    console.log(
      `| ${run.label ?? fmt(run.window)} | ${writer} | ${compactions.length} | ${fmt(sizes[0])} → ${fmt(sizes[4])} → ${fmt(sizes.at(-1))} (${fmt(Math.max(...sizes))}) | ${fmt(budget)} | ${over} | ${restoreExact ? 'exact' : 'DIFFERS'} | ${((Date.now() - started) / 1000).toFixed(1)} |`,
    )
    if (process.argv.includes('--sections') && last?.sections) console.log(`  last summary's sections: ${JSON.stringify(last.sections)}`)
  }
}

// Issue 36: pi-session-large (../shared/data) replayed at a 20K window.
const large = realSessions().find((s) => s.name === 'pi-session-large')
if (large) {
  for (const writer of ['extractive', 'fixed']) {
    const started = Date.now()
    const { compactions, restoreExact } = await replaySession(lib, large.messages, { window: 20_000, writer })
    const sizes = compactions.map((c) => c.tokens).filter((t) => t !== null)
    const over = compactions.filter((c) => c.code === 'STILL_OVER_LIMIT').length
    const repeated = compactions.filter((c) => c.headers && new Set(c.headers).size < c.headers.length).length
    console.log(`| pi-session-large, 20,000 | ${writer} | ${compactions.length} | ${fmt(sizes[0])} → ${fmt(sizes[4])} → ${fmt(sizes.at(-1))} (${fmt(Math.max(...sizes))}) | 3,000 | ${over} | ${restoreExact ? 'exact' : 'DIFFERS'} | ${((Date.now() - started) / 1000).toFixed(1)} |${repeated ? ` (${repeated} summaries with a header twice)` : ''}`)
  }
}
