// npm run bench:pi — what context-compact/pi's `prepareRequest` costs a pi agent per request
// below the threshold, on a real pi session (../shared/data/pi-session-large.jsonl, read at run
// time) repeated to about 400K tokens, as pi-agent-core hands it: its transcript, a system
// message declaring the prompt and tools first, then pi's own messages.
//
// Rows (medians; the steps of every round together):
//   1. the first request of a `compactionRequest` on that transcript (every message converted);
//   2. the request of a running loop: one reply and its tool results appended (the session's
//      next ones, as new objects), then `prepareRequest`;
//   3. its floor: `Compactor.shouldCompact` on the same messages in the Anthropic shape, after the
//      same reply and results were appended, with the same usage, system prompt and tools (a
//      Compactor that was shown the list before, as the loop's earlier steps did); the request
//      over it is the adapter's own share (issue 39: at most 0.1 ms).
//
// Environment:
//   BENCH_SAMPLES   rounds (default 7)
//   BENCH_STEPS     requests timed per round (default 30)
//   BENCH_TOKENS    the transcript's size (default 400,000)

import { createRequire } from 'node:module'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { DATA } from '../fidelity/sessions.mjs'
import { env, gc, median, timeAsync } from '../timing.mjs'

const require = createRequire(import.meta.url)
const { compactionRequest } = require('../../adapters/pi/index.js')
const { Compactor, countTokens } = require('../../index.js')

const SAMPLES = env('BENCH_SAMPLES', 7)
const STEPS = env('BENCH_STEPS', 30)
const TOKENS = env('BENCH_TOKENS', 400_000)
const LIMIT = 1_000_000_000 // no transcript here reaches it: the rows measure the step below the threshold

const SYSTEM = 'You are a careful coding agent working in a repository.'
const TOOLS = ['read', 'bash', 'edit', 'write'].map((name) => ({
  name,
  description: `The ${name} tool`,
  parameters: { type: 'object', properties: { path: { type: 'string' }, command: { type: 'string' } } },
}))
const systemMessage = () => ({ role: 'system', content: SYSTEM, toolsAdded: structuredClone(TOOLS), timestamp: 0 })

// pi's messages of the session, as its file holds them (the roles sent to the model).
function sessionMessages(path) {
  const out = []
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue
    const entry = JSON.parse(line)
    if (entry.type !== 'message') continue
    const m = entry.message
    if (m.role === 'user' || m.role === 'toolResult' || (m.role === 'assistant' && Array.isArray(m.content) && m.content.length > 0)) out.push(m)
  }
  return out
}

// The floor's list: pi's messages in the Anthropic shape (the results of one reply in one user
// message), written here independently of the adapter.
function blocksOf(content) {
  if (typeof content === 'string') return content
  return content.map((b) => {
    if (b.type === 'toolCall') return { type: 'tool_use', id: b.id, name: b.name, input: b.arguments ?? {} }
    if (b.type === 'thinking') return { type: 'thinking', thinking: b.thinking ?? '', signature: b.thinkingSignature ?? '' }
    if (b.type === 'image') return { type: 'image', source: { type: 'base64', media_type: b.mimeType, data: b.data } }
    return { type: 'text', text: b.text ?? '' }
  })
}
function appendAnthropic(list, messages) {
  for (const m of messages) {
    if (m.role === 'toolResult') {
      const block = { type: 'tool_result', tool_use_id: m.toolCallId, content: blocksOf(m.content), is_error: Boolean(m.isError) }
      const last = list[list.length - 1]
      if (last && last.role === 'user' && Array.isArray(last.content) && last.content.every((b) => b.type === 'tool_result')) {
        // A new object for the grown message, as the adapter makes one.
        list[list.length - 1] = { role: 'user', content: [...last.content, block] }
      } else list.push({ role: 'user', content: [block] })
    } else if (m.role !== 'system') {
      list.push({ role: m.role, content: blocksOf(m.content) })
    }
  }
  return list
}
const usageOf = (messages) => {
  for (let i = messages.length - 1; i >= 0; i--) {
    const u = messages[i].role === 'assistant' ? messages[i].usage : undefined
    if (messages[i].role === 'assistant') return u && u.input + u.cacheRead + u.cacheWrite > 0 ? { input: u.input, cacheRead: u.cacheRead ?? 0, cacheWrite: u.cacheWrite ?? 0, output: u.output ?? 0 } : undefined
  }
  return undefined
}

const session = sessionMessages(join(DATA, 'pi-session-large.jsonl'))
// The transcript: the session's messages again and again (new objects) until TOKENS.
const transcript = [systemMessage()]
let at = 0
for (let tokens = 0; tokens < TOKENS; at++) {
  const m = structuredClone(session[at % session.length])
  transcript.push(m)
  tokens += countTokens(appendAnthropic([], [m]))
}
// What each step appends: the next reply of the session and the tool results after it.
function nextTurn() {
  const turn = []
  do turn.push(structuredClone(session[at++ % session.length]))
  while (session[at % session.length].role === 'toolResult')
  return turn
}
while (session[at % session.length].role !== 'assistant') transcript.push(structuredClone(session[at++ % session.length]))

// Wall time, and the process's CPU time over the same span (timing.mjs), of each measurement.
async function timed(rows, name, fn) {
  const [wall, value, cpu] = await timeAsync(fn)
  rows[name].push(wall)
  rows[`${name}Cpu`].push(cpu)
  return value
}
const dir = mkdtempSync(join(tmpdir(), 'cc-bench-pi-'))
const rows = { first: [], firstCpu: [], step: [], stepCpu: [], floor: [], floorCpu: [] }
const floorCall = { system: SYSTEM, tools: TOOLS.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })) }
const tokens = countTokens(appendAnthropic([], transcript))
const belowThreshold = (update) => {
  if (update !== undefined) throw new Error('the benchmark compacted: it measures the step below the threshold')
}
try {
  for (let round = 0; round < SAMPLES; round++) {
    const messages = structuredClone(transcript)
    const prepare = compactionRequest({ contextTokenLimit: LIMIT, outputDir: dir })
    const floor = new Compactor({ contextTokenLimit: LIMIT, format: 'anthropic' })
    const anthropic = appendAnthropic([], messages)
    floor.shouldCompact(anthropic, { ...floorCall, usage: usageOf(messages) })
    const request = () => ({ context: { messages, tools: [] }, model: { id: 'claude-sonnet-4-5', provider: 'anthropic' }, thinkingLevel: 'off' })
    gc()
    belowThreshold(await timed(rows, 'first', () => prepare(request())))
    for (let k = 0; k < STEPS; k++) {
      const turn = nextTurn()
      messages.push(...turn)
      belowThreshold(await timed(rows, 'step', () => prepare(request())))
      appendAnthropic(anthropic, turn)
      const call = { ...floorCall, usage: usageOf(messages) }
      await timed(rows, 'floor', () => floor.shouldCompact(anthropic, call))
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
const ms = (name) => `${median(rows[name]).toFixed(3)} ms (CPU ${median(rows[`${name}Cpu`]).toFixed(3)} ms)`
const over = median(rows.step) - median(rows.floor)
const overCpu = median(rows.stepCpu) - median(rows.floorCpu)
console.log(`context-compact/pi prepareRequest, a real pi session repeated to ${tokens.toLocaleString('en-US')} tokens (${transcript.length} messages), medians of ${SAMPLES} rounds × ${STEPS} requests, wall (CPU)`)
console.log(`  first request (every message converted)      ${ms('first')}`)
console.log(`  request of a running loop (a reply appended)  ${ms('step')}`)
console.log(`  Compactor.shouldCompact, reply appended       ${ms('floor')}`)
console.log(`  request − shouldCompact                       ${over.toFixed(3)} ms (CPU ${overCpu.toFixed(3)} ms; target ≤ 0.1 ms: ${overCpu <= 0.1 ? 'met' : 'not met'})`)
