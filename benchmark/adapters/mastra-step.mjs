// npm run bench:mastra — what context-compact/mastra's `processInputStep` costs a Mastra agent per
// step below the threshold, on a history of N turns (each a user message and an assistant message
// of two steps: a tool call with its result, then text), in Mastra's own MessageList.
//
// Rows (medians over the rounds):
//   1. the first step of a processor on that list (every message converted to model messages);
//   2. a later step, one new turn added (the unchanged messages' conversions are reused);
//   3. for reference, Mastra's own conversion of the whole list (`get.all.aiV5.model()`), which
//      it does before each model call anyway;
//   4. ten more steps of the same processor, a turn each (the loop running, code warm);
//   5. the floor: `Compactor.shouldCompact` on the same model messages after the same turn was
//      appended (what the step costs over it is the adapter's own share, issue 39: ≤ 0.1 ms).
//
// Environment:
//   BENCH_SAMPLES   rounds (default 11)
//   BENCH_TURNS     turns in the history (default 200: 400 messages, 600 model-visible pieces)

import { createRequire } from 'node:module'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { MessageList } from '@mastra/core/agent/message-list'

const require = createRequire(import.meta.url)
const { ContextCompactProcessor } = require('../../adapters/mastra/index.js')
const { Compactor } = require('../../index.js')

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 11)
const TURNS = Number(process.env.BENCH_TURNS ?? 200)
const RESULT = 'hello '.repeat(300)
const T0 = Date.now() - 10_000_000

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

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const dir = mkdtempSync(join(tmpdir(), 'cc-bench-mastra-'))
const rows = { first: [], later: [], mastra: [], floor: [], steady: [] }
try {
  for (let round = 0; round < SAMPLES; round++) {
    const list = new MessageList({ threadId: 't', resourceId: 'r' })
    for (let i = 0; i < TURNS; i++) list.add(turn(i), 'memory')
    // A window no history here reaches: the rows measure the step below the threshold.
    const processor = new ContextCompactProcessor({ contextTokenLimit: 1_000_000_000, outputDir: dir })
    const args = () => ({ messageList: list, messages: list.get.all.db(), systemMessages: [], stepNumber: 0, steps: [], state: {}, retryCount: 0 })
    let t = performance.now()
    await processor.processInputStep(args())
    rows.first.push(performance.now() - t)
    list.add(turn(TURNS), 'input')
    t = performance.now()
    await processor.processInputStep(args())
    rows.later.push(performance.now() - t)
    t = performance.now()
    const model = list.get.all.aiV5.model()
    rows.mastra.push(performance.now() - t)
    // The floor: a Compactor that counted the list before the turn, shown it with the turn.
    const floor = new Compactor({ contextTokenLimit: 1_000_000_000, format: 'ai-sdk' })
    const added = new MessageList({ threadId: 't', resourceId: 'r' }).add(turn(TURNS), 'memory').get.all.aiV5.model().length
    const before = model.slice(0, model.length - added)
    floor.shouldCompact(before)
    floor.shouldCompact([...before])
    t = performance.now()
    floor.shouldCompact(model)
    rows.floor.push(performance.now() - t)
    // Ten more turns, one a step: the step of a loop that has been running for a while.
    for (let k = 1; k <= 10; k++) {
      list.add(turn(TURNS + k), 'input')
      t = performance.now()
      await processor.processInputStep(args())
      rows.steady.push(performance.now() - t)
    }
    if (processor.lastResult !== null) throw new Error('the benchmark compacted: it measures the step below the threshold')
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
console.log(`context-compact/mastra processInputStep, ${TURNS} turns (${TURNS * 2} messages), medians of ${SAMPLES} rounds`)
console.log(`  first step (every message converted)   ${median(rows.first).toFixed(1)} ms`)
console.log(`  later step (one turn added)            ${median(rows.later).toFixed(1)} ms`)
console.log(`  Mastra's own aiV5.model() of the list  ${median(rows.mastra).toFixed(1)} ms`)
console.log(`  Compactor.shouldCompact, turn appended ${median(rows.floor).toFixed(3)} ms`)
console.log(`  later step − shouldCompact             ${(median(rows.later) - median(rows.floor)).toFixed(3)} ms (target ≤ 0.1 ms)`)
console.log(`  steps 2–11 of a running loop           ${median(rows.steady).toFixed(2)} ms (− shouldCompact: ${(median(rows.steady) - median(rows.floor)).toFixed(3)} ms)`)
