// npm run bench:ai-sdk — what context-compact/ai-sdk's `prepareStep` costs an AI SDK agent per
// step, on a 400K-token history, side by side with what it stands on and with the SDK's own step.
//
// Interleaved rounds (every measurement once per round), medians reported:
//   1. below the threshold, one step later (an assistant message with a tool call and its tool
//      result added, as new objects, and the previous step's usage): the step, `compactionStep`,
//      against a bare `Compactor.shouldCompact` on the same list (its floor);
//   2. the same inside the SDK: one `generateText` step (AI SDK 7, its mock model answering at
//      once) on the whole history, with and without `prepareStep: step`;
//   3. after a compaction: the next step (AI SDK 5 and 6 hand it the whole history again; the
//      step carries its compaction forward), and the same history read back as new objects (the
//      next call of a chat loading it from a database: the checkpoint gives the summary again,
//      no LLM call);
//   4. for reference, the compaction itself (an instant summarizer).
//
// Environment:
//   BENCH_SAMPLES        rounds (default 21)
//   BENCH_STEPS          steps timed per round for rows 1 and 3a (default 20)
//   NAPI_RS_NATIVE_LIBRARY_PATH  the .node file to measure (a release build!)

import { createRequire } from 'node:module'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir, cpus, totalmem, platform, release, arch } from 'node:os'
import { join } from 'node:path'

import { generateText, stepCountIs } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'

import { generateConversation } from '../generate.mjs'
import { env, fmt, gc, median, timeAsync } from '../timing.mjs'

const require = createRequire(import.meta.url)
const library = require('../../index.js')
const { compactionStep } = require('../../adapters/ai-sdk/index.js')

const ROUNDS = env('BENCH_SAMPLES', 21)
const STEPS = env('BENCH_STEPS', 20)
const TOKENS = 400_000

const log = (...args) => console.error(...args)
const now = () => performance.now()

const machine = `${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}, ${(totalmem() / 2 ** 30).toFixed(1)} GB, ${platform()} ${release()} ${arch()}, Node ${process.version}`
const aiVersion = require('ai/package.json').version
log('# context-compact/ai-sdk step benchmark')
log(`machine: ${machine}`)
log(`ai:      ${aiVersion}`)
log(`addon:   ${process.env.NAPI_RS_NATIVE_LIBRARY_PATH || "(the working tree's .node file, via lib/addon/native.js)"}`)
log(`rounds:  ${ROUNDS}, steps timed per round: ${STEPS}`)

// ---------------------------------------------------------------------------------------------
// The history: a generated coding-agent conversation (benchmark/generate.mjs) in the AI SDK's
// ModelMessage form, its system prompt apart (as `system` of generateText).

function toModelMessages(messages) {
  const names = new Map()
  const out = []
  for (const m of messages) {
    if (typeof m.content === 'string') {
      out.push({ role: m.role, content: m.content })
      continue
    }
    if (m.role === 'assistant') {
      const parts = []
      for (const b of m.content) {
        if (b.type === 'text') parts.push({ type: 'text', text: b.text })
        else if (b.type === 'thinking') parts.push({ type: 'reasoning', text: b.thinking, providerOptions: { anthropic: { signature: b.signature } } })
        else if (b.type === 'tool_use') {
          names.set(b.id, b.name)
          parts.push({ type: 'tool-call', toolCallId: b.id, toolName: b.name, input: b.input })
        }
      }
      out.push({ role: 'assistant', content: parts })
      continue
    }
    const results = m.content.filter((b) => b.type === 'tool_result')
    const texts = m.content.filter((b) => b.type === 'text')
    if (results.length > 0) {
      out.push({
        role: 'tool',
        content: results.map((b) => {
          const value = typeof b.content === 'string' ? b.content : b.content.map((c) => c.text ?? '').join('\n')
          return { type: 'tool-result', toolCallId: b.tool_use_id, toolName: names.get(b.tool_use_id), output: { type: b.is_error ? 'error-text' : 'text', value } }
        }),
      })
    }
    if (texts.length > 0) out.push({ role: 'user', content: texts.map((b) => ({ type: 'text', text: b.text })) })
  }
  return out
}

log('\ngenerating the history …')
const generated = generateConversation({ targetTokens: TOKENS, seed: 4242 })
const system = generated[0].content
const history = toModelMessages(generated.slice(1))
// More steps to append: another conversation's tool steps (assistant + tool message pairs).
const pool = toModelMessages(generateConversation({ targetTokens: 200_000, seed: 4243 }).slice(1))
const pairs = []
for (let i = 0; i + 1 < pool.length; i++) {
  if (pool[i].role === 'assistant' && Array.isArray(pool[i].content) && pool[i].content.some((p) => p.type === 'tool-call') && pool[i + 1].role === 'tool') pairs.push([pool[i], pool[i + 1]])
}
const historyTokens = library.countTokens(history, { format: 'ai-sdk' })
log(`  ${history.length} messages, ${historyTokens} tokens (o200k), ${(JSON.stringify(history).length / 1e6).toFixed(1)} M JSON characters; ${pairs.length} steps to append`)
let pairIndex = 0
/** The next step's messages, as new objects (the Compactor has never seen them). */
const nextStep = () => structuredClone(pairs[pairIndex++ % pairs.length])

const dir = mkdtempSync(join(tmpdir(), 'context-compact-ai-sdk-bench-'))
const tools = {
  read_file: { description: 'Reads a file of the repository.', inputSchema: { [Symbol.for('vercel.ai.schema')]: true, jsonSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }, validate: undefined } },
  bash: { description: 'Runs a shell command in the repository.', inputSchema: { [Symbol.for('vercel.ai.schema')]: true, jsonSchema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] }, validate: undefined } },
}
const instant = async () => '## Goal\nThe summary.'

// ---------------------------------------------------------------------------------------------
// Below the threshold (a 1M window): the step and its floor, each on its own list and state.

const below = { step: compactionStep({ contextTokenLimit: 1_000_000, system, tools, outputDir: dir, sessionId: 'below', summarizer: instant }), list: history.slice() }
// The floor counts the same system prompt and tools (as definitions: what the step makes of the tool set).
const definitions = Object.entries(tools).map(([name, t]) => ({ name, description: t.description, input_schema: t.inputSchema.jsonSchema }))
const floor = { compactor: new library.Compactor({ format: 'ai-sdk', contextTokenLimit: 1_000_000, system, tools: definitions, outputDir: dir, sessionId: 'floor', summarizer: instant }), list: history.slice() }
// The first step counts the whole history once (untimed): what a loop pays on its first step.
const [firstStepMs] = await timeAsync(() => below.step({ messages: below.list.slice(), steps: [] }))
floor.compactor.shouldCompact(floor.list)
// What the provider bills for a list: its count × 1.1 (counted apart, outside the timings).
const billed = (tokens) => ({ inputTokens: Math.round(tokens * 1.1), outputTokens: 200, inputTokenDetails: { noCacheTokens: 1000, cacheReadTokens: Math.round(tokens * 1.1) - 1000, cacheWriteTokens: 0 } })

// After a compaction (a 400K window: the history is over its threshold of 368K).
const after = { step: compactionStep({ contextTokenLimit: 400_000, system, tools, outputDir: dir, sessionId: 'after', summarizer: instant }), list: history.slice() }
const [compactionMs, first] = await timeAsync(() => after.step({ messages: after.list.slice(), steps: [] }))
if (!after.step.lastResult?.compacted) throw new Error(`no compaction: ${JSON.stringify(after.step.lastResult?.error)}`)
log(`  first step: ${fmt(firstStepMs)} ms below the threshold; ${fmt(compactionMs)} ms for the compaction (${after.step.lastResult.stats.originalTokenCount} → ${after.step.lastResult.stats.compactedTokenCount} tokens)`)
let afterSent = first.messages

// The SDK's own step (AI SDK 7), with its mock model answering at once.
const model = new MockLanguageModelV4({
  doGenerate: async () => ({
    content: [{ type: 'text', text: 'ok' }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
    warnings: [],
  }),
})
const sdkStep = compactionStep({ contextTokenLimit: 1_000_000, system, tools, outputDir: dir, sessionId: 'sdk', summarizer: instant })
await generateText({ model, system, messages: history, stopWhen: stepCountIs(1), prepareStep: sdkStep })

// ---------------------------------------------------------------------------------------------

const s = { step: [], floor: [], sdkBare: [], sdkWith: [], afterStep: [], checkpoint: [], compaction: [], stepCpu: [], floorCpu: [], afterStepCpu: [] }
log('\nrounds …')
for (let round = 0; round < ROUNDS; round++) {
  gc()
  // 1. One step later, below the threshold: the previous step's usage is what its list was billed.
  let tokens = historyTokens
  for (let i = 0; i < STEPS; i++) {
    const steps = [{ usage: billed(tokens) }]
    const added = nextStep()
    tokens += library.countTokens(added, { format: 'ai-sdk' })
    below.list.push(...added)
    const messages = below.list.slice() // a new array every step, as the SDK builds it
    const [ms, out, cpu] = await timeAsync(() => below.step({ messages, steps }))
    if (out !== undefined) throw new Error('a step below the threshold changed the messages')
    s.step.push(ms)
    s.stepCpu.push(cpu)

    floor.list.push(...structuredClone(added))
    const [floorMs, , floorCpu] = await timeAsync(() => floor.compactor.shouldCompact(floor.list, { usage: steps[0].usage }))
    s.floor.push(floorMs)
    s.floorCpu.push(floorCpu)
  }
  // Keep the lists at 400K: drop what this round added (the caches keep the older messages).
  below.list.length = history.length
  floor.list.length = history.length

  // 2. Inside the SDK: a generateText step on the whole history, with and without the step.
  const order = round % 2 === 0 ? ['sdkBare', 'sdkWith'] : ['sdkWith', 'sdkBare']
  for (const key of order) {
    const [ms] = await timeAsync(() =>
      generateText({ model, system, messages: history, stopWhen: stepCountIs(1), ...(key === 'sdkWith' ? { prepareStep: sdkStep } : {}) }),
    )
    s[key].push(ms)
  }

  // 3a. The step after a compaction: the SDK (5, 6) hands it the whole history plus one step.
  for (let i = 0; i < STEPS; i++) {
    const steps = [{ usage: billed(library.countTokens(afterSent, { format: 'ai-sdk' })) }]
    after.list.push(...nextStep())
    const messages = after.list.slice()
    const [ms, out, cpu] = await timeAsync(() => after.step({ messages, steps }))
    if (!out || out.messages[0] !== first.messages[0]) throw new Error('the compaction was not carried forward')
    afterSent = out.messages
    s.afterStep.push(ms)
    s.afterStepCpu.push(cpu)
  }
  after.list.length = history.length

  // 3b. The same history read back as new objects: the checkpoint (no LLM call).
  if (round < Math.min(ROUNDS, 7)) {
    const stored = JSON.parse(JSON.stringify(history))
    const fresh = compactionStep({ contextTokenLimit: 400_000, system, tools, outputDir: dir, sessionId: 'after', summarizer: async () => {
      throw new Error('a summary call: the checkpoint was not used')
    } })
    gc()
    const [ms] = await timeAsync(() => fresh({ messages: stored, steps: [] }))
    if (!fresh.lastResult?.checkpoint?.reused) throw new Error(`checkpoint not reused: ${JSON.stringify(fresh.lastResult?.error)}`)
    s.checkpoint.push(ms)

    // 4. The compaction itself, on new objects (a session of its own: no checkpoint).
    const again = compactionStep({ contextTokenLimit: 400_000, system, tools, outputDir: dir, sessionId: `compaction-${round}`, summarizer: instant })
    const list = JSON.parse(JSON.stringify(history))
    gc()
    const [cms] = await timeAsync(() => again({ messages: list, steps: [] }))
    s.compaction.push(cms)
  }
  process.stderr.write('.')
}
log('')
rmSync(dir, { recursive: true, force: true })

// ---------------------------------------------------------------------------------------------

const med = (key) => median(s[key])
const mark = (ok) => (ok ? '✅' : '❌')
const command = `${Object.entries(process.env).filter(([k]) => k.startsWith('BENCH_')).map(([k, v]) => `${k}=${v} `).join('')}npm run bench:ai-sdk`
const lines = []
const out = (line = '') => lines.push(line)
out(`### AI SDK step benchmark (\`${command}\`)`)
out()
out(`${machine}; ai ${aiVersion}. A ${historyTokens}-token history (${history.length} ModelMessages from \`benchmark/generate.mjs\`, its system prompt and two tools apart); `
  + `medians of ${ROUNDS} interleaved rounds (${ROUNDS * STEPS} steps for the per-step rows).`)
out()
out('| 400K-token history | time | side by side | target |')
out('|---|---:|---|---|')
out(`| \`compactionStep\`, a step below the threshold (two new messages, the previous step's usage) | ${fmt(med('step'))} ms (CPU ${fmt(med('stepCpu'))} ms) | \`Compactor.shouldCompact\` on the same list: ${fmt(med('floor'))} ms (CPU ${fmt(med('floorCpu'))} ms) | < 1 ms ${mark(med('step') < 1)} |`)
out(`| \`compactionStep\` − \`Compactor.shouldCompact\` (the adapter's own share of the step) | ${fmt(med('step') - med('floor'))} ms (CPU ${fmt(med('stepCpu') - med('floorCpu'))} ms) | | ≤ 0.1 ms ${mark(med('stepCpu') - med('floorCpu') <= 0.1)} |`)
out(`| one \`generateText\` step (AI SDK 7, mock model), with \`prepareStep: compactionStep(…)\` | ${fmt(med('sdkWith'))} ms | without: ${fmt(med('sdkBare'))} ms | |`)
out(`| the step after a compaction (AI SDK 5/6 hand it the whole history; carried forward) | ${fmt(med('afterStep'))} ms (CPU ${fmt(med('afterStepCpu'))} ms) | | |`)
out(`| the history read back as new objects after a compaction (checkpoint, no LLM call) | ${fmt(med('checkpoint'))} ms | the compaction itself (instant summarizer): ${fmt(med('compaction'))} ms | |`)
out()
out(`Wall time, with the process's CPU time over the same span in parentheses (the steadier figure on a busy machine). The first step of a loop counts the whole history once: ${fmt(firstStepMs)} ms here. Rows 1 and 3: \`BENCH_STEPS\` steps per round, each adding a tool call and its result; `
  + 'row 2: the SDK converts the whole history into its prompt on every step, which is what the step adds to.')
console.log(lines.join('\n'))
