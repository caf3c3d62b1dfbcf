// context-compact/pi: a full pi-agent-core 1.6 `Agent` run whose model is a stream function test
// double (pi's StreamFn contract: an AssistantMessageEventStream ending in `done`), with real tools,
// compacting through `prepareRequest`.
import { createRequire } from 'node:module'
import { afterEach, describe, expect, it } from 'vitest'

import { startAnthropicServer } from '../../benchmark/servers/anthropic-messages.mjs'
import { countTokens, type Message } from '../../index'
import { compactionRequest, recallTool } from '../../adapters/pi/index'
import { pairingProblems, tempDir, textOfTokens } from '../support/helpers'

type Json = Record<string, any>

const require = createRequire(import.meta.url)
const present = (() => {
  try {
    require.resolve('@earendil-works/pi-agent-core/package.json')
    return true
  } catch {
    return false
  }
})()

const SYSTEM = 'You are a careful coding agent. Read files with read_file, then report.'
const LIMIT = 16_000
const READ_TOOL_SCHEMA = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }

const servers: { close: () => Promise<void> }[] = []
afterEach(async () => {
  while (servers.length > 0) await servers.pop()!.close()
})

// The test's own reading of what a provider is sent: pi's LLM messages in the Anthropic shape.
function anthropicOf(messages: Json[]): { system: string; tools: Json[]; list: Json[] } {
  let system = ''
  const tools: Json[] = []
  const list: Json[] = []
  for (const m of messages) {
    if (m.role === 'system') {
      system += typeof m.content === 'string' ? m.content : m.content.map((b: Json) => b.text).join('')
      for (const t of m.toolsAdded ?? []) tools.push({ name: t.name, description: t.description, input_schema: t.parameters })
    } else if (m.role === 'user') {
      list.push({ role: 'user', content: typeof m.content === 'string' ? m.content : m.content.map((b: Json) => ({ type: 'text', text: b.text })) })
    } else if (m.role === 'assistant') {
      list.push({
        role: 'assistant',
        content: m.content.map((b: Json) => (b.type === 'toolCall' ? { type: 'tool_use', id: b.id, name: b.name, input: b.arguments } : { type: 'text', text: b.text })),
      })
    } else if (m.role === 'toolResult') {
      const block = { type: 'tool_result', tool_use_id: m.toolCallId, content: m.content.map((b: Json) => ({ type: 'text', text: b.text })), is_error: m.isError }
      const last = list[list.length - 1]
      if (last && last.role === 'user' && Array.isArray(last.content) && last.content[0]?.type === 'tool_result') last.content.push(block)
      else list.push({ role: 'user', content: [block] })
    }
  }
  return { system, tools, list }
}

// What the provider adds to every request and bills (its own tool-use instructions): seen only
// through the usage it reports, so a trigger that did not read pi's usage would send requests over.
const HIDDEN = 1500

function billedTokens(messages: Json[]): number {
  const { system, tools, list } = anthropicOf(messages)
  return HIDDEN + countTokens(list as Message[]) + countTokens([{ role: 'user', content: system + JSON.stringify(tools) }])
}

interface Sent {
  messages: Json[]
  billed: number
}

// pi's stream function contract, as a test double: reads the transcript it is sent, bills it
// (10 % fresh input, 90 % read from the cache, as pi reports usage), and answers with a tool call
// until `calls` replies were given, then a final text.
async function piModel(toolCalls: () => number, refuse: (n: number) => boolean = () => false) {
  const { createAssistantMessageEventStream } = await import('@earendil-works/pi-ai')
  const sent: Sent[] = []
  const model = {
    id: 'test-model',
    name: 'test model',
    api: 'test-api',
    provider: 'test',
    baseUrl: 'http://127.0.0.1:1',
    reasoning: false,
    input: ['text'],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: LIMIT,
    maxTokens: 4096,
  }
  const streamFn = (_model: unknown, context: Json) => {
    const messages = context.messages as Json[]
    const billed = billedTokens(messages)
    sent.push({ messages, billed })
    const n = sent.length
    if (refuse(n)) {
      // Anthropic's refusal of a prompt over the window, as pi reports a provider error: an error reply.
      const message = {
        role: 'assistant', content: [], api: 'test-api', provider: 'test', model: 'test-model',
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        stopReason: 'error', errorMessage: `400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: ${billed + 200000} tokens > 200000 maximum"}}`, timestamp: Date.now(),
      }
      const stream = createAssistantMessageEventStream()
      queueMicrotask(() => {
        stream.push({ type: 'error', reason: 'error', error: message } as any)
        stream.end(message as any)
      })
      return stream
    }
    const wantsTool = toolCalls() > 0
    const content = wantsTool ? [{ type: 'toolCall', id: `call_${n}`, name: 'read_file', arguments: { path: `src/file_${n}.rs` } }] : [{ type: 'text', text: `Done after ${n} calls.` }]
    const cacheRead = Math.floor(billed * 0.9)
    const message = {
      role: 'assistant',
      content,
      api: 'test-api',
      provider: 'test',
      model: 'test-model',
      usage: { input: billed - cacheRead, output: 20, cacheRead, cacheWrite: 0, totalTokens: billed + 20, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: wantsTool ? 'toolUse' : 'stop',
      timestamp: Date.now(),
    }
    const stream = createAssistantMessageEventStream()
    queueMicrotask(() => {
      stream.push({ type: 'start', partial: message } as any)
      stream.push({ type: 'done', reason: message.stopReason, message } as any)
      stream.end(message as any)
    })
    return stream
  }
  return { model, streamFn, sent }
}

function readFileTool() {
  let runs = 0
  return {
    tool: {
      name: 'read_file',
      label: 'Read file',
      description: 'Reads a file of the project.',
      parameters: READ_TOOL_SCHEMA,
      execute: async (_id: string, params: { path: string }) => {
        runs++
        return { content: [{ type: 'text', text: `// ${params.path}\n${textOfTokens(1100)}` }], details: undefined }
      },
    },
    runs: () => runs,
  }
}

function summarizerCounting() {
  const requests: Json[] = []
  const summarizer = async (request: Json) => {
    requests.push(request)
    return `## Goal\nSummary ${requests.length} of ${request.messages.length} messages${request.previousSummary ? ', updating the previous one' : ''}.`
  }
  return { requests, summarizer }
}

function checkRequest(messages: Json[]) {
  // The system prompt and the read_file declaration are still the leading system message.
  expect(messages[0].role).toBe('system')
  expect(messages[0].toolsAdded.map((t: Json) => t.name)).toContain('read_file')
  const { list } = anthropicOf(messages)
  expect(list[0].role).toBe('user')
  expect(pairingProblems(list as Message[])).toEqual([])
  for (const m of messages) expect(['system', 'user', 'assistant', 'toolResult']).toContain(m.role)
}

async function newAgent(options: Json, calls: { left: number }, refuse?: (n: number) => boolean) {
  const { Agent } = await import('@earendil-works/pi-agent-core')
  const { model, streamFn, sent } = await piModel(() => calls.left--, refuse)
  const read = readFileTool()
  const prepare = compactionRequest({ contextTokenLimit: LIMIT, ...options })
  // What prepareRequest hands pi: the context of the run from then on.
  const contexts: Json[][] = []
  const prepareRequest = async (request: any, signal?: AbortSignal) => {
    const update = await prepare(request, signal)
    contexts.push(update?.context?.messages ?? request.context.messages)
    return update
  }
  const agent = new Agent({ initialState: { systemPrompt: SYSTEM, model: model as any, tools: [read.tool as any] }, streamFn: streamFn as any, prepareRequest })
  return { agent, prepare, sent, read, contexts, model }
}

describe.runIf(present)('context-compact/pi with pi-agent-core 1.6', () => {
  it('a 34-call tool loop compacts mid-run at each threshold crossing; every later request valid and under it; the next prompt reuses the checkpoint; restore is exact', async () => {
    const outputDir = tempDir('cc-pi-')
    const { requests, summarizer } = summarizerCounting()
    const calls = { left: 33 }
    const { agent, prepare, sent, read, contexts } = await newAgent({ outputDir, sessionId: 'pi-run', summarizer }, calls)
    await agent.prompt('Read the project files one by one, then report.')
    expect(agent.state.errorMessage).toBeUndefined()
    expect(sent.length).toBe(34)
    expect(read.runs()).toBe(33)

    // Where the run compacted: a request much smaller than the one before it.
    const threshold = Math.floor(LIMIT * 0.92)
    const compactedAt = sent.map((s, i) => (i > 0 && s.messages.length < sent[i - 1].messages.length ? i : -1)).filter((i) => i >= 0)
    expect(compactedAt.length).toBeGreaterThanOrEqual(2)
    expect(requests.length).toBe(compactedAt.length)
    // Mid-loop: the request before each compaction ended with a tool result.
    for (const i of compactedAt) expect(sent[i].messages[sent[i].messages.length - 1].role).toBe('toolResult')
    for (const [i, s] of sent.entries()) {
      checkRequest(s.messages)
      expect(s.billed, `request ${i}`).toBeLessThan(threshold)
    }
    // The summary is a user message, which pi's default convertToLlm passes to the model.
    const last = sent[sent.length - 1].messages
    expect(last.some((m) => m.role === 'user' && typeof m.content === 'string' && m.content.includes('Summary'))).toBe(true)
    expect(prepare.lastResult!.compacted).toBe(true)

    // pi keeps the whole transcript: 1 prompt + 34 replies + 33 tool results (+ the system message).
    const full = agent.state.messages as Json[]
    expect(full.filter((m) => m.role !== 'system').length).toBe(1 + 34 + 33)

    // Restore: the run's context (the list prepareRequest returned last, which pi went on appending
    // to) gives back the whole transcript, exactly: the very message objects agent.state.messages holds.
    const restored = await prepare.restore(contexts[contexts.length - 1])
    expect(restored.map((m) => m.role)).toEqual(full.map((m) => m.role))
    restored.forEach((m, i) => expect(m, `message ${i}`).toBe(full[i]))

    // The next prompt starts from the whole transcript again: the summary written before comes back
    // from the checkpoint, so the first request costs no second summary call for that part.
    const before = requests.length
    calls.left = 0
    const sentBefore = sent.length
    await agent.prompt('Now summarize what you found.')
    expect(agent.state.errorMessage).toBeUndefined()
    const first = sent[sentBefore]
    checkRequest(first.messages)
    expect(first.billed).toBeLessThan(threshold)
    // No summary call: the run's compacted context comes back, with the new prompt after it.
    expect(requests.length).toBe(before)
    const runContext = contexts[contexts.length - 2]
    expect(first.messages.slice(0, runContext.length).map((m) => m.content)).toEqual(runContext.map((m) => m.content))
    expect(first.messages.length).toBe(runContext.length + 1)
  }, 120_000)

  it('the summarizer down (a server answering 500): the run still completes, every request valid', async () => {
    const server = await startAnthropicServer({ respond: () => ({ status: 500 }) })
    servers.push(server)
    const calls = { left: 33 }
    const { agent, prepare, sent } = await newAgent(
      { outputDir: tempDir('cc-pi-down-'), sessionId: 'down', provider: 'anthropic', model: 'claude-sonnet-4-5', apiKey: 'test-key', baseUrl: server.url, maxRetries: 1, retryBaseDelayMs: 0 },
      calls,
    )
    await agent.prompt('Read the project files one by one, then report.')
    expect(agent.state.errorMessage).toBeUndefined()
    expect(sent.length).toBe(34)
    for (const s of sent) checkRequest(s.messages)
    expect(prepare.lastResult).not.toBeNull()
    // Every summary call failed (HTTP 500): the list was shortened without an LLM instead.
    expect(prepare.lastResult!.compacted).toBe(true)
    expect((prepare.lastResult as any).summaryFallback).toMatchObject({ used: 'extractive', code: 'SERVER_ERROR' })
    // A failed summary leaves a list under the window as it is; none reached the window.
    for (const s of sent) expect(s.billed).toBeLessThan(LIMIT)
    expect(sent.some((s, i) => i > 0 && s.messages.length < sent[i - 1].messages.length)).toBe(true)
  }, 120_000)

  it('an overflow ends the run with an error reply; compact with `overflow`, then continue: the run completes', async () => {
    const { isContextOverflow } = await import('@earendil-works/pi-ai')
    const { requests, summarizer } = summarizerCounting()
    const calls = { left: 20 }
    // The 8th request is refused as too long, far below the threshold (a provider counting more).
    const { agent, prepare, sent, model } = await newAgent({ outputDir: tempDir('cc-pi-overflow-'), sessionId: 'overflow', summarizer }, calls, (n) => n === 8)
    await agent.prompt('Read the project files one by one, then report.')
    const last = agent.state.messages.at(-1) as Json
    expect(last.stopReason).toBe('error')
    expect(isContextOverflow(last as any, model.contextWindow)).toBe(true)
    expect(requests.length).toBe(0)

    // The guide's recovery.
    const { messages, result } = await prepare.compact(agent.state.messages.slice(0, -1), { overflow: last.errorMessage })
    expect(result?.compacted).toBe(true)
    expect(requests.length).toBe(1)
    agent.state.messages = messages
    const sentBefore = sent.length
    await agent.continue()
    expect(agent.state.errorMessage).toBeUndefined()
    expect(sent.length - sentBefore).toBe(14) // the 13 tool calls left, then the answer
    expect(sent[sentBefore].messages.length).toBeLessThan(sent[7].messages.length)
    for (const s of sent.slice(sentBefore)) checkRequest(s.messages)
    // The overflow raised the calibration: the trigger compacted again before the window was reached.
    expect(requests.length).toBeGreaterThan(1)
  }, 120_000)

  it('the recall tool is a pi AgentTool reading the archives', async () => {
    const outputDir = tempDir('cc-pi-recall-')
    const { summarizer } = summarizerCounting()
    const calls = { left: 33 }
    const { agent } = await newAgent({ outputDir, sessionId: 'recall', summarizer }, calls)
    await agent.prompt('Read the project files one by one, then report.')
    const tool = recallTool({ outputDir, sessionId: 'recall' })
    expect(tool.name).toBe('recall')
    expect(typeof tool.label).toBe('string')
    expect(tool.parameters.type).toBe('object')
    const answer = await tool.execute('call_r', { query: 'src/file_2.rs' })
    expect(answer.content[0].type).toBe('text')
    expect(answer.content[0].text).toContain('src/file_2.rs')
  }, 120_000)

  it('called directly: the given list is not mutated; system messages and messages of other roles are kept, uncounted and unsummarized', async () => {
    const { summarizer } = summarizerCounting()
    const prepare = compactionRequest({ contextTokenLimit: LIMIT, outputDir: tempDir('cc-pi-direct-'), sessionId: 'direct', summarizer })
    const tool = { name: 'read_file', description: 'Reads a file.', parameters: READ_TOOL_SCHEMA }
    const messages: Json[] = [{ role: 'system', content: SYSTEM, toolsAdded: [tool], timestamp: 1 }, { role: 'user', content: 'Read everything.', timestamp: 2 }]
    for (let i = 1; i <= 16; i++) {
      messages.push({ role: 'assistant', content: [{ type: 'toolCall', id: `c${i}`, name: 'read_file', arguments: { path: `f${i}` } }], api: 'a', provider: 'p', model: 'm', usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: 'toolUse', timestamp: 10 + i })
      messages.push({ role: 'toolResult', toolCallId: `c${i}`, toolName: 'read_file', content: [{ type: 'text', text: textOfTokens(1100) }], isError: false, timestamp: 10 + i })
      if (i === 3) messages.push({ role: 'system', content: 'From now on, answer in French.', timestamp: 100 })
      if (i === 4) messages.push({ role: 'notification', text: 'UI only', timestamp: 101 } as Json)
    }
    const before = structuredClone(messages)
    const update = await prepare({ context: { messages: messages as any }, model: {} as any, thinkingLevel: 'off' })
    expect(messages).toEqual(before)
    expect(prepare.lastResult?.compacted).toBe(true)
    const list = update!.context!.messages as Json[]
    expect(list.length).toBeLessThan(messages.length)
    // Every system message and the app's own message are still there, in their order.
    const kept = list.filter((m) => m.role === 'system' || m.role === 'notification')
    expect(kept).toEqual(messages.filter((m) => m.role === 'system' || m.role === 'notification'))
    expect(list[0]).toBe(messages[0])
    // What pi's default convertToLlm sends: all but the app's own roles.
    checkRequest(list.filter((m) => m.role !== 'notification'))
    // The kept tail: the very objects given.
    expect(list[list.length - 1]).toBe(messages[messages.length - 1])
    const restored = await prepare.restore(list as any)
    expect(restored.filter((m: Json) => m.role !== 'system' && m.role !== 'notification')).toEqual(messages.filter((m) => m.role !== 'system' && m.role !== 'notification'))
  })

  it('a long transcript edited in place: seen in the tail at the next request, an older message within the rotation; a compaction reads every message as it is now', async () => {
    // A request compares what was appended, the last messages and older ones in rotation (not
    // every message of a long transcript): an edit anywhere still reaches the estimate, and a
    // compaction compares every message first.
    const transcript = () => {
      const messages: Json[] = [{ role: 'system', content: SYSTEM, toolsAdded: [{ name: 'read_file', description: 'Reads a file', parameters: READ_TOOL_SCHEMA }] }]
      for (let i = 0; i < 300; i++) {
        messages.push({ role: 'user', content: [{ type: 'text', text: `Question ${i}` }], timestamp: i })
        messages.push({ role: 'assistant', content: [{ type: 'text', text: `Answer ${i}` }], api: 'anthropic-messages', provider: 'anthropic', model: 'claude-sonnet-4-5', stopReason: 'stop', timestamp: i })
      }
      return messages
    }
    const request = (messages: Json[]) => ({ context: { messages, tools: [] }, model: { id: 'claude-sonnet-4-5' }, thinkingLevel: 'off' })
    for (const where of ['tail', 'old'] as const) {
      const messages = transcript()
      const { requests, summarizer } = summarizerCounting()
      const prepare = compactionRequest({ contextTokenLimit: 50_000, outputDir: tempDir('cc-pi-edit-'), sessionId: `pi-edit-${where}`, summarizer })
      expect(await prepare(request(messages) as any)).toBeUndefined()
      expect(await prepare(request(messages) as any)).toBeUndefined()
      // Over the threshold (46,000) by an edit in place; for the tail, an old reply edited too, by
      // a few words only, where the rotation has not looked yet.
      messages[where === 'tail' ? messages.length - 1 : 42].content[0].text += ' ' + textOfTokens(45_000)
      if (where === 'tail') messages[402].content[0].text += ' EDITED-IN-PLACE'
      let update: Json | undefined
      let steps = 0
      while (update === undefined && steps < 100) {
        update = await prepare(request(messages) as any)
        steps += 1
      }
      expect(prepare.lastResult).not.toBeNull()
      if (where === 'old') {
        expect(steps).toBeGreaterThan(0)
        continue
      }
      expect(steps).toBe(1)
      // What was compacted (summarized, or kept) is the transcript as it is now.
      expect(JSON.stringify([requests, prepare.lastResult!.messages])).toContain('Answer 200 EDITED-IN-PLACE')
    }
  })

  it('bad input: a clear TypeError naming the option', () => {
    expect(() => compactionRequest({ usage: { input: 1 } } as any)).toThrow(/options\.usage/)
    expect(() => compactionRequest({ system: 'x' } as any)).toThrow(/options\.system/)
    expect(() => compactionRequest('x' as any)).toThrow(TypeError)
    const prepare = compactionRequest({ contextTokenLimit: LIMIT })
    return expect(prepare({ context: { messages: 'no' } } as any)).rejects.toThrow(/request\.context\.messages/)
  })
})
