// npm run bench:mastra — what context-compact/mastra's `processInputStep` costs a Mastra agent per
// step below the threshold, in Mastra's own MessageList, on a history of about 400K tokens (turns
// of a user message and an assistant message of two steps: a tool call with its result, then text).
//
// Rows (medians; the steps of every round together):
//   1. the first step of a processor on that list (every message converted to model messages);
//   2. the step of a running loop: one turn added, then `processInputStep`;
//   3. its floor: `Compactor.shouldCompact` on the same model messages after the same turn was
//      appended (a Compactor that was shown the list before, as the loop's earlier steps did);
//      the step over it is the adapter's own share (issue 39: at most 0.1 ms);
//   4. for reference, Mastra's own conversion of the whole list (`get.all.aiV5.model()`), which
//      it does before each model call anyway;
//   5. the first step of the thread's next run: the same messages read back from memory as new
//      objects in a new MessageList (compared with what the last run read, not converted again).
//
// Environment:
//   BENCH_SAMPLES   rounds (default 7)
//   BENCH_STEPS     steps timed per round (default 30)
//   BENCH_TURNS     turns in the history (default 1,300: 2,600 messages, about 400K tokens)

import { createRequire } from 'node:module'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { MessageList } from '@mastra/core/agent/message-list'
import { env, gc, median, timeAsync } from '../timing.mjs'

const require = createRequire(import.meta.url)
const { ContextCompactProcessor } = require('../../adapters/mastra/index.js')
const { Compactor, countTokens } = require('../../index.js')

const SAMPLES = env('BENCH_SAMPLES', 7)
const STEPS = env('BENCH_STEPS', 30)
const TURNS = env('BENCH_TURNS', 1_300)
const RESULT = 'hello '.repeat(300)
const T0 = Date.now() - 100_000_000

function turn(i) {
  return [
    { id: `u${i}`, role: 'user', createdAt: new Date(T0 + i * 2000), content: { format: 2, parts: [{ type: 'text', text: `Question ${i}` }] } },
    {
      id: `a${i}`,
      role: 'assistant',
      createdAt: new Date(T0 + i * 2000 + 1000),
      content: {
        format: 2,
        parts: [
          { type: 'step-start' },
          { type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: `c${i}`, toolName: 'read', args: { i }, result: { text: RESULT } } },
          { type: 'step-start' },
          { type: 'text', text: `Answer ${i}` },
        ],
      },
    },
  ]
}
// A turn's model messages, as Mastra converts them (for the floor's list).
const modelOf = (messages) => new MessageList({ threadId: 't', resourceId: 'r' }).add(messages, 'memory').get.all.aiV5.model()

// Wall time, and the process's CPU time over the same span (timing.mjs), of each measurement.
async function timed(rows, name, fn) {
  const [wall, value, cpu] = await timeAsync(fn)
  rows[name].push(wall)
  rows[`${name}Cpu`].push(cpu)
  return value
}
const dir = mkdtempSync(join(tmpdir(), 'cc-bench-mastra-'))
const rows = { first: [], firstCpu: [], step: [], stepCpu: [], floor: [], floorCpu: [], mastra: [], mastraCpu: [], nextRun: [], nextRunCpu: [] }
let tokens = 0
let messages = 0
try {
  for (let round = 0; round < SAMPLES; round++) {
    const list = new MessageList({ threadId: 't', resourceId: 'r' })
    for (let i = 0; i < TURNS; i++) list.add(turn(i), 'memory')
    // A window no history here reaches: the rows measure the step below the threshold.
    const processor = new ContextCompactProcessor({ contextTokenLimit: 1_000_000_000, outputDir: dir })
    const floor = new Compactor({ contextTokenLimit: 1_000_000_000, format: 'ai-sdk' })
    const args = () => ({ messageList: list, messages: list.get.all.db(), systemMessages: [], stepNumber: 0, steps: [], state: {}, retryCount: 0 })
    let model = list.get.all.aiV5.model()
    if (round === 0) {
      tokens = countTokens(model, { format: 'ai-sdk' })
      messages = list.get.all.db().length
    }
    floor.shouldCompact(model)
    gc()
    await timed(rows, 'first', () => processor.processInputStep(args()))
    for (let k = 0; k < STEPS; k++) {
      const added = turn(TURNS + k)
      list.add(added, 'input')
      await timed(rows, 'step', () => processor.processInputStep(args()))
      model = [...model, ...modelOf(added)]
      await timed(rows, 'floor', () => floor.shouldCompact(model))
    }
    await timed(rows, 'mastra', () => list.get.all.aiV5.model())
    // The thread's next run: its messages read back from memory as new objects, in a new list.
    const next = new MessageList({ threadId: 't', resourceId: 'r' })
    next.add(structuredClone(list.get.all.db()), 'memory')
    const nextArgs = { messageList: next, messages: next.get.all.db(), systemMessages: [], stepNumber: 0, steps: [], state: {}, retryCount: 0 }
    gc()
    await timed(rows, 'nextRun', () => processor.processInputStep(nextArgs))
    if (processor.lastResult !== null) throw new Error('the benchmark compacted: it measures the step below the threshold')
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
const ms = (name) => `${median(rows[name]).toFixed(3)} ms (CPU ${median(rows[`${name}Cpu`]).toFixed(3)} ms)`
const over = median(rows.step) - median(rows.floor)
const overCpu = median(rows.stepCpu) - median(rows.floorCpu)
console.log(`context-compact/mastra processInputStep, ${TURNS} turns (${messages} messages, ${tokens.toLocaleString('en-US')} tokens), medians of ${SAMPLES} rounds × ${STEPS} steps, wall (CPU)`)
console.log(`  first step (every message converted)    ${ms('first')}`)
console.log(`  step of a running loop (a turn added)   ${ms('step')}`)
console.log(`  Compactor.shouldCompact, turn appended  ${ms('floor')}`)
console.log(`  step − shouldCompact                    ${over.toFixed(3)} ms (CPU ${overCpu.toFixed(3)} ms; target ≤ 0.1 ms: ${overCpu <= 0.1 ? 'met' : 'not met'})`)
console.log(`  Mastra's own aiV5.model() of the list   ${ms('mastra')}`)
console.log(`  first step of the thread's next run     ${ms('nextRun')} (its messages read back as new objects: compared, not converted)`)
