// npm run bench:langchain — what contextCompactMiddleware (context-compact/langchain) costs a
// LangChain.js agent on each step below the threshold, on a 400K-token history (SPEC §10:
// under 1 ms a step).
//
// The history is a generated coding-agent conversation (benchmark/generate.mjs) as LangChain
// message instances (benchmark/adapters/langchain-history.mjs: AIMessage with tool_calls and
// usage_metadata, ToolMessage, HumanMessage, every one with an id), with a 2K-token system
// prompt and 12 tools on the request. A step is what the agent does around one model call:
// it appends the model's AIMessage (a tool call, its usage) and the tool's ToolMessage — new
// objects — and calls the middleware's wrapModelCall (then afterModel) with the request
// createAgent builds. The model call itself is left out (the handler answers at once), so the
// time is the middleware's own. Measured, interleaved round by round, medians:
//   1. a step below the threshold, the history's messages the same objects as on the previous
//      step (what LangGraph hands a node within one run);
//   2. the first step of a new run of the same thread: every message a new object with the
//      same id and content (what a checkpointer reads back), the middleware warm;
//   3. the first step of a new middleware (nothing counted yet), for comparison;
// and for comparison, on the same conversation: LangChain's own summarizationMiddleware (its
// beforeModel hook, which counts the history with countTokensApproximately on every step), the
// library's own Compactor.shouldCompact after one appended message on the Anthropic form of the
// messages, and on the LangChain instances themselves (what the middleware hands it: the
// adapter's own cost is the difference between the first row and this one).
//
// The target is a median; on a busy machine (other processes on the cores) every row is slower,
// the ratios to the Anthropic-form row much less so, and the minimum is what a step costs when
// it runs undisturbed.
//
// Environment:
//   BENCH_SAMPLES   rounds (default 21)
//   BENCH_STEPS     steps measured per round (default 20)
//   BENCH_TOKENS    the history's size (default 400000)
//   NAPI_RS_NATIVE_LIBRARY_PATH  the .node file to measure (a release build!)

import { createRequire } from 'node:module'
import { cpus, totalmem, platform, release, arch } from 'node:os'

import { generateConversation } from '../generate.mjs'
import { cpuNow, env, fmt, gc, median } from '../timing.mjs'
import { toLangChainMessages } from './langchain-history.mjs'

const require = createRequire(import.meta.url)
const library = require('../../index.js')
const { contextCompactMiddleware } = require('../../adapters/langchain/index.js')
const lc = require('@langchain/core/messages')

const ROUNDS = env('BENCH_SAMPLES', 21)
const STEPS = env('BENCH_STEPS', 20)
const TOKENS = env('BENCH_TOKENS', 400_000)

const log = (...args) => console.error(...args)
const now = () => performance.now()
const versionOf = (name) => require(`${name}/package.json`).version

log(`generating a ${TOKENS}-token conversation …`)
const anthropic = generateConversation({ targetTokens: TOKENS, seed: 42 })
const systemPrompt = anthropic[0].role === 'system' ? anthropic.shift().content : ''
const history = toLangChainMessages(anthropic, lc, { idPrefix: 'h' })
const tokens = library.countTokens(history)
log(`  ${history.length} LangChain messages, ${tokens} tokens (${anthropic.length} Anthropic messages)`)

// The request createAgent builds for the model node: a 2K-token system prompt, 12 tools.
const system = new lc.SystemMessage(`${systemPrompt}\n\n${'Follow the repository conventions; run the tests after every change. '.repeat(160)}`)
const { tool } = require('langchain')
const tools = Array.from({ length: 12 }, (_, i) =>
  tool(async () => 'ok', {
    name: `tool_${i}`,
    description: `Tool ${i}: reads, writes or searches files of the repository and returns the output.`,
    schema: {
      type: 'object',
      properties: { path: { type: 'string', description: 'A path relative to the repository root' }, pattern: { type: 'string' }, content: { type: 'string' } },
      required: ['path'],
    },
  }),
)
const model = { model: 'gpt-4o' } // what the middleware reads of the agent's model: its name
const answer = new lc.AIMessage('ok')
const handler = async () => answer

let callId = 0
// The model's call and the tool's answer, as new objects (the usage: what the model reported).
function step(messages) {
  const id = `call_${++callId}`
  messages.push(
    new lc.AIMessage({
      content: '',
      tool_calls: [{ name: 'tool_3', args: { path: `src/module_${callId}.ts` }, id, type: 'tool_call' }],
      id: `s-ai-${callId}`,
      usage_metadata: { input_tokens: tokens + 3000, output_tokens: 40, total_tokens: tokens + 3040 },
    }),
    new lc.ToolMessage({ content: `export const value${callId} = ${callId}\n`.repeat(8), tool_call_id: id, id: `s-tool-${callId}` }),
  )
}

function request(messages) {
  return {
    model,
    messages,
    systemPrompt: system.text,
    systemMessage: system,
    tools,
    state: { messages },
    runtime: { context: undefined, configurable: { thread_id: 'bench-thread' }, signal: new AbortController().signal },
  }
}

// Wall time and CPU time (this process's user + system time, which does not count the time the
// process waited for a core: the honest number on a busy machine) of one step, in ms.
async function timeStep(middleware, messages, cpu) {
  const c0 = cpuNow()
  const t0 = now()
  await middleware.wrapModelCall(request(messages), handler)
  middleware.afterModel({ messages }, { configurable: { thread_id: 'bench-thread' } })
  const wall = now() - t0
  if (cpu) cpu.push(cpuNow() - c0)
  return wall
}

// What a checkpointer gives back: the same messages (ids, content) as new objects.
const readBack = (messages) => lc.mapStoredMessagesToChatMessages(lc.mapChatMessagesToStoredMessages(messages))

const options = { contextTokenLimit: 2_000_000, summarizer: async () => 'unused' }
const s = { step: [], stepCpu: [], resumed: [], resumedCpu: [], cold: [], compactorAnthropic: [], compactorAnthropicCpu: [], compactorInstances: [], compactorInstancesCpu: [], summarization: [], summarizationCpu: [] }

// Warm-up: the JIT of every path.
{
  const middleware = contextCompactMiddleware(options)
  const messages = history.slice()
  for (let i = 0; i < 5; i++) {
    step(messages)
    await timeStep(middleware, messages)
  }
}

// LangChain's summarizationMiddleware with a trigger the history does not reach: what its
// beforeModel hook costs a step.
const { summarizationMiddleware, fakeModel } = require('langchain')
const summarization = summarizationMiddleware({ model: fakeModel(), trigger: { tokens: 2_000_000 } })
const summarizationList = history.slice()
const summarizationStep = () => summarization.beforeModel({ messages: summarizationList }, { context: {} })

const compactorAnthropic = new library.Compactor({ contextTokenLimit: 2_000_000 })
const anthropicList = anthropic.slice()
compactorAnthropic.shouldCompact(anthropicList)
const compactorInstances = new library.Compactor({ contextTokenLimit: 2_000_000 })
// What the middleware passes the Compactor on each step: the usage of the last AIMessage, the
// model's name.
const stepOverrides = (messages) => {
  const usage = messages[messages.length - 2].usage_metadata
  return { usage: { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens }, agentModel: model.model }
}

log(`measuring ${ROUNDS} rounds of ${STEPS} steps …`)
for (let round = 0; round < ROUNDS; round++) {
  // 3. A new middleware's first step (counts the whole history).
  const middleware = contextCompactMiddleware(options)
  const messages = history.slice()
  gc()
  s.cold.push(await timeStep(middleware, messages))

  // 1. Steps below the threshold.
  for (let i = 0; i < STEPS; i++) {
    step(messages)
    s.step.push(await timeStep(middleware, messages, s.stepCpu))
  }

  // 2. A new run of the thread: every message read back as a new object.
  const resumed = readBack(messages)
  step(resumed)
  gc()
  s.resumed.push(await timeStep(middleware, resumed, s.resumedCpu))

  // For comparison: the Compactor after one appended message, Anthropic form and instances.
  for (let i = 0; i < STEPS; i++) {
    anthropicList.push({ role: 'user', content: `a new message ${round}.${i}` })
    const c0 = cpuNow()
    const t0 = now()
    compactorAnthropic.shouldCompact(anthropicList)
    s.compactorAnthropic.push(now() - t0)
    s.compactorAnthropicCpu.push(cpuNow() - c0)
    anthropicList.pop()
  }
  for (let i = 0; i < STEPS; i++) {
    step(summarizationList)
    const c0 = cpuNow()
    const t0 = now()
    await summarizationStep()
    s.summarization.push(now() - t0)
    s.summarizationCpu.push(cpuNow() - c0)
  }
  // The same step as the middleware's (the model's call and the tool's answer appended, the
  // usage they report), the Compactor alone.
  const instanceList = history.slice()
  compactorInstances.shouldCompact(instanceList, { agentModel: model.model })
  for (let i = 0; i < STEPS; i++) {
    step(instanceList)
    const c0 = cpuNow()
    const t0 = now()
    compactorInstances.shouldCompact(instanceList, stepOverrides(instanceList))
    s.compactorInstances.push(now() - t0)
    s.compactorInstancesCpu.push(cpuNow() - c0)
  }
  await middleware.close()
}

const machine = `${cpus()[0]?.model?.trim() ?? 'unknown CPU'} (${cpus().length} cores), ${(totalmem() / 2 ** 30).toFixed(0)} GB, ${platform()} ${release()} ${arch()}, Node ${process.version}`
const command = `${Object.entries(process.env).filter(([k]) => k.startsWith('BENCH_')).map(([k, v]) => `${k}=${v} `).join('')}npm run bench:langchain`
const mark = (ok) => (ok ? '✅' : '❌')
const step1 = median(s.step)
const lines = []
const out = (line = '') => lines.push(line)
out(`### contextCompactMiddleware below the threshold (\`${command}\`)`)
out()
out(`${machine}. langchain ${versionOf('langchain')}, @langchain/core ${versionOf('@langchain/core')}. `
  + `History: ${history.length} LangChain messages, ${tokens} tokens (o200k_base), a ${library.countTokens([system])}-token system prompt and ${tools.length} tools; medians of ${ROUNDS} rounds × ${STEPS} steps.`)
out()
const anthropicMedian = median(s.compactorAnthropic)
const min = (xs) => Math.min(...xs)
const row = (label, wall, cpu, target = '') =>
  out(`| ${label} | ${fmt(median(wall))} ms | ${fmt(min(wall))} ms | ${cpu ? `${fmt(median(cpu))} ms` : ''} | ${(median(wall) / anthropicMedian).toFixed(1)}× | ${target} |`)
out(`| Each step (the model's call and the tool's answer appended, then the hooks) | median | minimum | CPU time, median | ÷ Anthropic-form Compactor | target |`)
out(`|---|---:|---:|---:|---:|---|`)
row('contextCompactMiddleware, a step within a run (the history\'s objects as on the previous step)', s.step, s.stepCpu, `< 1 ms ${mark(step1 < 1)}`)
row('contextCompactMiddleware, the first step of a new run of the thread (every message a new object, read back from a checkpointer)', s.resumed, s.resumedCpu)
row('contextCompactMiddleware, the first step of a new middleware (the whole history counted)', s.cold)
row('LangChain\'s summarizationMiddleware (beforeModel: countTokensApproximately over the history)', s.summarization, s.summarizationCpu)
row('`Compactor.shouldCompact` after one appended message, the same conversation in Anthropic form', s.compactorAnthropic, s.compactorAnthropicCpu)
row('`Compactor.shouldCompact` alone on the same step: the LangChain instances, the same usage', s.compactorInstances, s.compactorInstancesCpu)
out()
out(`The step within a run − \`Compactor.shouldCompact\` (Anthropic form, no system prompt or tools): ${fmt(median(s.step) - anthropicMedian)} ms `
  + `(CPU ${fmt(median(s.stepCpu) - median(s.compactorAnthropicCpu))} ms; issue 39's target: ≤ 0.1 ms ${mark(median(s.stepCpu) - median(s.compactorAnthropicCpu) <= 0.1)}).`)
out()
out(`CPU time: this process's user + system time during the step, which leaves out the time it waited for a core on a busy machine. `
  + `The ratio column divides each median by the Anthropic-form Compactor's median of the same run.`)
console.log('\n' + lines.join('\n'))
const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)]
log(`step wall: minimum ${fmt(Math.min(...s.step))} ms, 90th percentile ${fmt(p90(s.step))} ms; CPU: minimum ${fmt(Math.min(...s.stepCpu))} ms, 90th percentile ${fmt(p90(s.stepCpu))} ms`)
log(`the middleware's step minus shouldCompact alone on the same step: median ${fmt(step1 - median(s.compactorInstances))} ms (CPU ${fmt(median(s.stepCpu) - median(s.compactorInstancesCpu))} ms), minimum ${fmt(Math.min(...s.step) - Math.min(...s.compactorInstances))} ms`)
log(`Anthropic-form Compactor: wall minimum ${fmt(Math.min(...s.compactorAnthropic))} ms, CPU minimum ${fmt(Math.min(...s.compactorAnthropicCpu))} ms`)
