// npm run bench:openai-agents — what a CompactingSession (context-compact/openai-agents) costs
// the OpenAI Agents SDK's runner below the threshold, on a 400K-token history (SPEC §10: under
// 1 ms per step).
//
// A step is what the runner does with a session at the end of every run (the SDK's
// runner/sessionPersistence): append the run's new items (addItems), then call runCompaction()
// with the run's context, whose usage holds the model's last request. Measured on the history
// of benchmark/generate.mjs (400K tokens, the SDK's items via agents-items.mjs), below the
// threshold (contextTokenLimit 1M), each step appending a fresh function call and its result:
//   1. runCompaction() after the append: the trigger's decision (counts from the cache);
//   2. the whole step through the CompactingSession, against the same step on the wrapped
//      session alone (an array-backed session that copies nothing, so the difference is the
//      adapter's own cost); with MemorySession (which clones every item it returns) for scale;
//   3. getItems() through the CompactingSession (the runner's read at the start of a run: the
//      wrapped session's read plus the check that the session's copy is still the list);
//   4. once: the first runCompaction() of a fresh session (the history read and counted);
//   5. the floor: a bare `Compactor.shouldCompact` on the same items after the same append, with
//      the same usage; the step through the CompactingSession minus it is the adapter's own
//      share (issue 39: at most 0.1 ms).
//
// Environment:
//   BENCH_AGENTS_STEPS   steps measured (default 200; the first 10 are warm-up)
//   BENCH_AGENTS_TOKENS  the history's size (default 400000)
//   NAPI_RS_NATIVE_LIBRARY_PATH  the .node file to measure (a release build!)

import { createRequire } from 'node:module'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir, cpus, totalmem, platform, release, arch, loadavg } from 'node:os'
import { join } from 'node:path'

import { generateConversation } from '../generate.mjs'
import { cpuNow, env, fmt, median, quantile } from '../timing.mjs'
import { toAgentItems } from './agents-items.mjs'

const require = createRequire(import.meta.url)
const library = require('../../index.js')
const { CompactingSession } = require('../../adapters/openai-agents/index.js')
const { MemorySession, RunContext, Usage } = require('@openai/agents')

const STEPS = env('BENCH_AGENTS_STEPS', 200)
const WARMUP = 10
const TOKENS = env('BENCH_AGENTS_TOKENS', 400_000)

const log = (...args) => console.error(...args)
const now = () => performance.now()

log('# context-compact/openai-agents benchmark')
log(`machine: ${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}, ${(totalmem() / 2 ** 30).toFixed(1)} GB, ${platform()} ${release()} ${arch()}, Node ${process.version}`)
log(`addon:   ${process.env.NAPI_RS_NATIVE_LIBRARY_PATH || "(the working tree's .node file, via lib/addon/native.js)"}`)
// Other processes' load inflates wall-time medians (a step is shorter than a scheduler slice):
// the step's CPU time and the minimum are reported beside them.
const load = () => loadavg().map((x) => x.toFixed(1)).join(' ')
log(`load:    ${load()} (1, 5, 15 min)`)

// A session that holds the items and copies nothing: what is measured over it is the adapter.
class ArraySession {
  items = []
  constructor(items) {
    this.items = items.slice()
  }
  async getSessionId() {
    return 'bench'
  }
  async getItems(limit) {
    return limit === undefined ? this.items.slice() : this.items.slice(-limit)
  }
  async addItems(items) {
    this.items.push(...items)
  }
  async popItem() {
    return this.items.pop()
  }
  async clearSession() {
    this.items = []
  }
}

log(`\ngenerating a ${TOKENS}-token history …`)
const history = toAgentItems(generateConversation({ targetTokens: TOKENS, seed: 7 }))
const historyTokens = library.countTokens(history, { format: 'openai-responses' })
log(`  ${history.length} items, ${historyTokens} tokens (o200k_base)`)

// The items a run appends: a function call and its result, fresh objects each time.
const pool = toAgentItems(generateConversation({ targetTokens: 60_000, seed: 8 })).filter((item) => item.type === 'function_call_result')
let next = 0
function runItems() {
  const result = structuredClone(pool[next++ % pool.length])
  const callId = `bench_${next}`
  return [
    { type: 'function_call', callId, name: result.name, arguments: '{"path":"src/lib.rs"}', status: 'completed' },
    { ...result, callId },
  ]
}

// The run context the runner passes: its usage holds the last request's (what the model
// reported), a little above the history's count, as a real API's is.
function runContextFor(tokens) {
  const context = new RunContext({})
  context.usage.add(new Usage({ requests: 1, inputTokens: Math.round(tokens * 1.02), outputTokens: 200, totalTokens: Math.round(tokens * 1.02) + 200 }))
  return context
}

const dir = mkdtempSync(join(tmpdir(), 'cc-bench-agents-'))
const options = { contextTokenLimit: 1_000_000, outputDir: join(dir, 'archives'), summarizer: async () => 'summary' }

// 4. The first runCompaction of a fresh session: it reads the history and counts it once.
const fresh = new CompactingSession(new ArraySession(history), options)
let t0 = now()
await fresh.runCompaction(undefined, runContextFor(historyTokens))
const firstMs = now() - t0

// CPU time of this process (user + system), in ms: unlike wall time, not inflated when other
// processes take the CPU in the middle of a step.
const cpu = cpuNow

async function measureSteps(session, withContext) {
  let tokens = historyTokens
  await session.getItems() // the runner's read at the start of a run
  await session.runCompaction(undefined, withContext ? runContextFor(tokens) : undefined)
  const decision = []
  const step = []
  const stepCpu = []
  for (let i = 0; i < STEPS + WARMUP; i++) {
    const items = runItems()
    tokens += 400
    const context = withContext ? runContextFor(tokens) : undefined
    const c1 = cpu()
    const t1 = now()
    await session.addItems(items, context)
    const t2 = now()
    const outcome = await session.runCompaction(undefined, context)
    const t3 = now()
    const c3 = cpu()
    if (outcome !== null) throw new Error('the benchmark compacted: it must stay below the threshold')
    if (i >= WARMUP) {
      decision.push(t3 - t2)
      step.push(t3 - t1)
      stepCpu.push(c3 - c1)
    }
  }
  return { decision, step, stepCpu }
}

// 5. The floor: the Compactor's decision alone on a list the loop appends to.
function measureFloor() {
  const compactor = new library.Compactor({ ...options, format: 'openai-responses' })
  const list = history.slice()
  let tokens = historyTokens
  compactor.shouldCompact(list)
  const times = []
  const cpuTimes = []
  for (let i = 0; i < STEPS + WARMUP; i++) {
    list.push(...runItems())
    tokens += 400
    const usage = { input_tokens: Math.round(tokens * 1.02), output_tokens: 200 }
    const c1 = cpu()
    const t1 = now()
    if (compactor.shouldCompact(list, { usage })) throw new Error('the benchmark compacted: it must stay below the threshold')
    const t2 = now()
    if (i >= WARMUP) {
      times.push(t2 - t1)
      cpuTimes.push(cpu() - c1)
    }
  }
  return { times, cpuTimes }
}

log(`\nmeasuring ${STEPS} steps each …`)
// The wrapped session alone (the runner's calls without the adapter).
const bare = new ArraySession(history)
const bareSteps = []
for (let i = 0; i < STEPS + WARMUP; i++) {
  const items = runItems()
  const t1 = now()
  await bare.addItems(items)
  if (i >= WARMUP) bareSteps.push(now() - t1)
}
const wrapped = await measureSteps(new CompactingSession(new ArraySession(history), options), true)
const withoutUsage = await measureSteps(new CompactingSession(new ArraySession(history), options), false)
const floor = measureFloor()
const memory = await measureSteps(new CompactingSession(new MemorySession({ initialItems: history }), options), true)

// 3. getItems through the adapter: the wrapped read plus the check of the adapter's copy.
const reads = { wrapped: [], bare: [] }
const readSession = new CompactingSession(new ArraySession(history), options)
await readSession.runCompaction()
const readInner = new ArraySession(history)
for (let i = 0; i < 50; i++) {
  let t = now()
  await readSession.getItems()
  reads.wrapped.push(now() - t)
  t = now()
  await readInner.getItems()
  reads.bare.push(now() - t)
}
rmSync(dir, { recursive: true, force: true })

const row = (label, xs, cpuTimes, target = '') =>
  `| ${label} | ${fmt(median(xs))} ms | ${cpuTimes ? `${fmt(median(cpuTimes))} ms` : ''} | ${fmt(Math.min(...xs))} ms | ${fmt(quantile(xs, 0.9))} ms | ${target} |`
const out = (line) => console.log(line)
const under = (ms) => `< 1 ms ${ms < 1 ? '✓' : '✗'}`
out(`\n## CompactingSession below the threshold, ${history.length} items / ${historyTokens} tokens\n`)
out(`| per step (${STEPS} steps; load ${load()}) | median | median CPU | min | p90 | target |`)
out('|---|---|---|---|---|---|')
out(row('`runCompaction()` after the run appended 2 items (the run’s usage given)', wrapped.decision, null, under(median(wrapped.decision))))
out(row('`runCompaction()`, no usage (counts only)', withoutUsage.decision))
out(row('the step through the CompactingSession: `addItems` + `runCompaction` (array-backed session)', wrapped.step, wrapped.stepCpu, under(median(wrapped.stepCpu))))
out(row('the same `addItems` on the array-backed session alone', bareSteps))
out(row('the step over a `MemorySession` (it clones what it stores)', memory.step, memory.stepCpu))
out(row('the floor: `Compactor.shouldCompact` on the same items after the same append (the same usage)', floor.times, floor.cpuTimes))
out(row('`getItems()` through the CompactingSession (array-backed)', reads.wrapped))
out(row('`getItems()` on the array-backed session alone', reads.bare))
const over = median(wrapped.step) - median(floor.times)
const overCpu = median(wrapped.stepCpu) - median(floor.cpuTimes)
out(`\nThe step through the CompactingSession − \`shouldCompact\`: ${fmt(over)} ms (CPU ${fmt(overCpu)} ms; target ≤ 0.1 ms ${overCpu <= 0.1 ? '✓' : '✗'}).`)
out(`\nOnce: the first \`runCompaction()\` of a fresh session (reads and counts the ${historyTokens}-token history): ${fmt(firstMs)} ms.`)
