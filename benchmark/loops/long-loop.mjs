// `npm run bench:long-loop` — is a step at step 1,000 as cheap as at step 100? (issue 39)
//
// The loop of benchmark/loops/long-run.mjs (a tool call and a 2–20K-character result per step, some
// failing, a new user request now and then; window 100,000, the extractive summarizer, so that
// no LLM latency hides what the library costs), driven the way an agent's loop drives it: every
// step appends its messages and calls `compact()`, which compacts only at the threshold. It
// reports:
//   - the median and p90 step (`compact()` on the list with the step appended) per hundred steps,
//     with the list's median size in tokens (the compactions bound it);
//   - `compact()` on an unchanged list below the threshold (median of 25 calls) at step 100 and
//     step 1,000;
//   - `shouldCompact()` after the step's append, per hundred steps;
//   - the process's RSS and the JS heap after each hundred steps (after a GC).
// And the same with `checkpoints: false` (nothing kept between compactions) for comparison.
//
// Usage: node --expose-gc benchmark/loops/long-loop.mjs [--steps N] [--window N] [--lib path/to/root]
// (`--lib` runs the same loop against another build, e.g. a checkout before a change.)
import { createRequire } from 'node:module'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'

import { step } from './long-run.mjs'
import { mulberry32 } from '../generate-texts.mjs'
import { gc, median, quantile } from '../timing.mjs'

const arg = (name, fallback) => {
  const at = process.argv.indexOf(name)
  return at >= 0 ? process.argv[at + 1] : fallback
}
const STEPS = Number(arg('--steps', 1_000))
const WINDOW = Number(arg('--window', 100_000))
if (!Number.isInteger(STEPS) || STEPS < 100 || !(WINDOW > 0)) {
  // The report compares hundreds of steps.
  console.error('usage: node benchmark/loops/long-loop.mjs [--steps N (100 or more)] [--window TOKENS] [--lib DIR]')
  process.exit(2)
}
const root = resolve(arg('--lib', new URL('../..', import.meta.url).pathname))
const lib = createRequire(import.meta.url)(resolve(root, 'index.js'))
const UNCHANGED_CALLS = 25

const p90 = (xs) => quantile(xs, 0.9)
const mb = (bytes) => Math.round(bytes / 1e6)

async function unchangedCost(compactor, list) {
  const times = []
  for (let k = 0; k < UNCHANGED_CALLS; k++) {
    const started = performance.now()
    const result = await compactor.compact(list)
    times.push(performance.now() - started)
    if (result.compacted) throw new Error('the list measured unchanged was compacted: it is not below the threshold')
  }
  return median(times)
}

async function runLoop(options) {
  const outputDir = mkdtempSync(join(tmpdir(), 'cc-long-loop-'))
  const compactor = new lib.Compactor({ contextTokenLimit: WINDOW, outputDir, sessionId: 'long-loop', provider: 'extractive', ...options })
  const rand = mulberry32(1)
  let list = [{ role: 'user', content: 'Port the parser of this repository to the new engine, case by case. Always run the tests after each change.' }]
  const hundreds = []
  let current = { steps: [], should: [], tokens: [] }
  const unchanged = {}
  let compactions = 0
  // The encoding's tables are loaded before the RSS at the start is read (they are not the loop's).
  compactor.countTokens(list)
  gc()
  const rssStart = process.memoryUsage().rss
  for (let i = 0; i < STEPS; i++) {
    list = [...list, ...step(rand, i)]
    let started = performance.now()
    compactor.shouldCompact(list)
    current.should.push(performance.now() - started)
    started = performance.now()
    const result = await compactor.compact(list)
    current.steps.push(performance.now() - started)
    if (result.compacted) {
      compactions += 1
      list = result.messages
    }
    current.tokens.push(compactor.countTokens(list))
    if ((i + 1) % 100 === 0) {
      if (i + 1 === 100 || i + 1 === STEPS) unchanged[i + 1] = await unchangedCost(compactor, list)
      gc()
      const memory = process.memoryUsage()
      hundreds.push({ ...current, rss: memory.rss, heap: memory.heapUsed, compactions })
      current = { steps: [], should: [], tokens: [] }
    }
  }
  await compactor.close()
  rmSync(outputDir, { recursive: true, force: true })
  return { hundreds, unchanged, compactions, rssStart }
}

function report(label, run) {
  console.log(`\n### ${label}\n`)
  console.log('| steps | median step | p90 step | median `shouldCompact` | median list tokens | compactions so far | RSS | JS heap |')
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|')
  run.hundreds.forEach((h, k) => {
    console.log(
      `| ${k * 100 + 1}–${(k + 1) * 100} | ${median(h.steps).toFixed(2)} ms | ${p90(h.steps).toFixed(2)} ms | ${median(h.should).toFixed(3)} ms | ${Math.round(median(h.tokens)).toLocaleString('en-US')} | ${h.compactions} | ${mb(h.rss)} MB | ${mb(h.heap)} MB |`,
    )
  })
  const first = run.hundreds[0]
  const last = run.hundreds.at(-1)
  const ratio = median(last.steps) / median(first.steps)
  const unchangedSteps = Object.keys(run.unchanged)
  console.log('')
  console.log(`- last hundred's median step / first hundred's: ${ratio.toFixed(2)}× (target ≤ 1.5×)`)
  console.log(`- \`compact()\` on an unchanged list below the threshold: ${unchangedSteps.map((s) => `${run.unchanged[s].toFixed(2)} ms at step ${s}`).join(', ')}`)
  console.log(`- RSS: ${mb(run.rssStart)} MB at the start, ${mb(last.rss)} MB after ${run.hundreds.length * 100} steps (+${mb(last.rss - run.rssStart)} MB; target ≤ 50 MB); ${run.compactions} compactions`)
}

console.log(`Long loop: ${STEPS} steps, window ${WINDOW.toLocaleString('en-US')}, extractive summarizer; Node ${process.version}, ${process.platform}-${process.arch}`)
report('checkpoints on (the default)', await runLoop({}))
report('`checkpoints: false`', await runLoop({ checkpoints: false }))
