// An OpenTelemetry span for every compaction (issue 37): with `@opentelemetry/api` installed and
// a tracer provider registered, each compaction is an INTERNAL span `context_compact.compact`
// under the caller's active span, and the summary call a GenAI `chat` span under it. Read with
// the SDK's own in-memory exporter, against the local Anthropic server of benchmark/servers
// (usage and prompt-cache accounting as the API bills them). Without a provider the API's no-op
// tracer answers; without the package nothing is loaded (a child process that cannot see it).
import { AsyncLocalStorage } from 'node:async_hooks'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { AIMessage, HumanMessage } from '@langchain/core/messages'
import { Agent, MemorySession, run as runAgent, setTraceProcessors, setTracingDisabled, tool as agentsTool, Usage } from '@openai/agents'
import { ScriptedModel, assistantMessage, functionCall, modelResponder } from '@openai/agents-core/testing'
import { createAgent, fakeModel, tool } from 'langchain'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { contextCompactMiddleware } from '../../adapters/langchain'
import { CompactingSession } from '../../adapters/openai-agents'

// @ts-ignore: plain ESM JavaScript shared with the node benchmark scripts
import { startAnthropicServer } from '../../benchmark/servers/anthropic-messages.mjs'
// @ts-ignore: plain ESM JavaScript shared with the node benchmark scripts
import { CLAUDE_CODE_SYSTEM, CLAUDE_CODE_TOOLS } from '../../benchmark/economics/synthetic-agent.mjs'

const api = require('@opentelemetry/api')
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base')
const { compactMessages, Compactor } = require('../../index.js')
const { loadOtelApi } = require('../../lib/compaction/otel.js')

const dirs: string[] = []
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'cc-otel-'))
  dirs.push(d)
  return d
}
const servers: any[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

// The context manager an application registers (what @opentelemetry/context-async-hooks does):
// without one, `context.active()` is always the root and no span has a parent.
class AsyncContextManager {
  private storage = new AsyncLocalStorage<any>()
  active() {
    return this.storage.getStore() ?? api.ROOT_CONTEXT
  }
  with(context: any, fn: (...args: any[]) => any, thisArg?: any, ...args: any[]) {
    return this.storage.run(context, () => fn.apply(thisArg, args))
  }
  bind(_context: any, target: any) {
    return target
  }
  enable() {
    return this
  }
  disable() {
    this.storage.disable()
    return this
  }
}

const exporter = new InMemorySpanExporter()
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
beforeAll(() => {
  api.context.setGlobalContextManager(new AsyncContextManager())
  api.trace.setGlobalTracerProvider(provider)
})
afterAll(async () => {
  api.trace.disable()
  api.context.disable()
  await provider.shutdown()
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
})
afterEach(() => exporter.reset())

const tracer = () => api.trace.getTracer('otel-test')
/** Runs `fn` inside an active `agent turn` span, as a traced agent loop would. */
async function inParent<T>(fn: () => Promise<T>): Promise<{ value: T; parent: any }> {
  return tracer().startActiveSpan('agent turn', async (span: any) => {
    try {
      return { value: await fn(), parent: span }
    } finally {
      span.end()
    }
  })
}
const spans = (name: string) => exporter.getFinishedSpans().filter((s: any) => s.name === name)
const only = (name: string) => {
  const found = spans(name)
  expect(found, `spans named ${name}`).toHaveLength(1)
  return found[0]
}
const parentId = (span: any) => (span.parentSpanContext ?? {}).spanId ?? span.parentSpanId
const ms = (t: [number, number]) => t[0] * 1e3 + t[1] / 1e6

/** A conversation of `turns` question/answer pairs, about 150 tokens each. */
function conversation(turns: number) {
  const messages: any[] = []
  for (let i = 0; i < turns; i++) {
    messages.push({ role: 'user', content: `Question ${i}: how does module m${i} parse its input? `.repeat(6) })
    messages.push({ role: 'assistant', content: `Module m${i} reads tokens ${i} at a time and builds a tree. `.repeat(6) })
  }
  return messages
}

describe('a compaction span', () => {
  it('is an INTERNAL child of the active span, with the result in its attributes (extractive: no model call)', async () => {
    const messages = conversation(30)
    const before = structuredClone(messages)
    const outputDir = tmp()
    const events: string[] = []
    const { value: result, parent } = await inParent(() =>
      compactMessages(messages, { contextTokenLimit: 2000, provider: 'extractive', outputDir, onEvent: (e: any) => events.push(e.type) }),
    )
    expect(result.compacted).toBe(true)
    expect(result.error).toBeNull()
    const span = only('context_compact.compact')
    expect(span.kind).toBe(api.SpanKind.INTERNAL)
    expect(parentId(span)).toBe(parent.spanContext().spanId)
    expect(span.spanContext().traceId).toBe(parent.spanContext().traceId)
    expect(span.attributes).toEqual({
      'context_compact.trigger': 'tokens',
      'context_compact.strategy': 'summary',
      'context_compact.status': 'compacted',
      'context_compact.tokens_before': result.stats.originalTokenCount,
      'context_compact.tokens_after': result.stats.compactedTokenCount,
      'context_compact.messages_before': 60,
      'context_compact.messages_after': result.messages.length,
      'context_compact.summary_request': 'transcript',
      'context_compact.checkpoint': 'written',
      'context_compact.archive': result.archivePath,
      'gen_ai.conversation.compacted': true,
    })
    expect(result.stats.compactedTokenCount).toBeLessThan(result.stats.originalTokenCount)
    expect(span.status.code).toBe(api.SpanStatusCode.UNSET)
    // The extractive summary asks no model: no chat span.
    expect(exporter.getFinishedSpans().map((s: any) => s.name).sort()).toEqual(['agent turn', 'context_compact.compact'])
    // The caller's onEvent is called as without tracing; its messages are untouched.
    expect(events).toContain('started')
    expect(events).toContain('completed')
    expect(messages).toEqual(before)
  })

  it('below the threshold: status below_threshold, no trigger, the list unchanged', async () => {
    const messages = conversation(2)
    const result = await compactMessages(messages, { contextTokenLimit: 200_000, provider: 'extractive' })
    expect(result.compacted).toBe(false)
    const span = only('context_compact.compact')
    // No active span: a root span.
    expect(parentId(span)).toBeUndefined()
    expect(span.attributes).toEqual({
      'context_compact.strategy': 'summary',
      'context_compact.status': 'below_threshold',
      'context_compact.tokens_before': result.tokens,
      'context_compact.tokens_after': result.tokens,
      'context_compact.messages_before': 4,
      'context_compact.messages_after': 4,
      'context_compact.checkpoint': 'none',
    })
    expect(result.tokens).toBeGreaterThan(0)
    expect(span.status.code).toBe(api.SpanStatusCode.UNSET)
  })

  it('still over the limit: status still_over_limit, compacted', async () => {
    // The last user message alone is larger than the window: the tail keeps it.
    const messages = [...conversation(10), { role: 'user', content: 'Here is the whole log: ' + 'line of the build log '.repeat(800) }]
    const result = await compactMessages(messages, { contextTokenLimit: 3000, provider: 'extractive', outputDir: tmp() })
    expect(result.compacted).toBe(true)
    expect(result.error?.code).toBe('STILL_OVER_LIMIT')
    const span = only('context_compact.compact')
    expect(span.attributes['context_compact.status']).toBe('still_over_limit')
    expect(span.attributes['gen_ai.conversation.compacted']).toBe(true)
    expect(span.attributes['context_compact.tokens_after']).toBe(result.stats.compactedTokenCount)
    expect(span.attributes['context_compact.messages_after']).toBe(result.messages.length)
  })

  it('a call that throws (bad options) ends its span with the exception, and still throws', async () => {
    await expect(inParent(() => compactMessages(conversation(3), { contextTokenLimit: -5 }))).rejects.toThrow(TypeError)
    const span = only('context_compact.compact')
    expect(span.status.code).toBe(api.SpanStatusCode.ERROR)
    expect(span.attributes['context_compact.status']).toBe('failed')
    expect(span.attributes['error.type']).toBe('TypeError')
    expect(span.events.map((e: any) => e.name)).toEqual(['exception'])
  })

  it('a Compactor makes one span per compaction', async () => {
    const compactor = new Compactor({ contextTokenLimit: 2000, provider: 'extractive', outputDir: tmp() })
    const messages = conversation(30)
    const first = await compactor.compact(messages)
    expect(first.compacted).toBe(true)
    const second = await compactor.compact([...first.messages, { role: 'user', content: 'go on' }])
    expect(second.compacted).toBe(false)
    expect(spans('context_compact.compact').map((s: any) => s.attributes['context_compact.status'])).toEqual(['compacted', 'below_threshold'])
  })
})

describe('the summary call span (GenAI conventions)', () => {
  const ANTHROPIC_BODY = {
    model: 'claude-sonnet-4-5',
    max_tokens: 32000,
    system: [{ type: 'text', text: CLAUDE_CODE_SYSTEM, cache_control: { type: 'ephemeral' } }],
    tools: CLAUDE_CODE_TOOLS,
  }

  it('is a CLIENT child of the compaction span with the model, the usage as billed and the cache tokens', async () => {
    const server = await startAnthropicServer({ delayMs: 40 })
    servers.push(server)
    const messages = conversation(40)
    // The loop's own last request, with a breakpoint on its last block: the summary request
    // (`agentRequest`, shared) reads it from the prompt cache.
    const sent = structuredClone(messages.slice(0, -1))
    sent.at(-1).content = [{ type: 'text', text: sent.at(-1).content, cache_control: { type: 'ephemeral' } }]
    const loop = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'test-key', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ ...ANTHROPIC_BODY, messages: sent }),
    })
    expect(loop.status).toBe(200)
    exporter.reset()
    const { value: result, parent } = await inParent(() =>
      compactMessages(messages, {
        provider: 'anthropic', apiKey: 'test-key', baseUrl: server.url, agentRequest: ANTHROPIC_BODY,
        force: true, contextTokenLimit: 20_000, outputDir: tmp(), maxRetries: 1, retryBaseDelayMs: 0,
      }),
    )
    expect(result.error).toBeNull()
    expect(result.compacted).toBe(true)
    expect(result.summaryRequest).toBe('shared')
    const compact = only('context_compact.compact')
    expect(parentId(compact)).toBe(parent.spanContext().spanId)
    expect(compact.attributes['context_compact.trigger']).toBe('force')
    expect(compact.attributes['context_compact.summary_request']).toBe('shared')
    const chat = only('chat claude-sonnet-4-5')
    expect(chat.kind).toBe(api.SpanKind.CLIENT)
    expect(parentId(chat)).toBe(compact.spanContext().spanId)
    const billed = server.requests.at(-1).response.usage
    expect(billed.cache_read_input_tokens).toBeGreaterThan(0)
    expect(chat.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-sonnet-4-5',
      'gen_ai.usage.input_tokens': billed.input_tokens + billed.cache_read_input_tokens + billed.cache_creation_input_tokens,
      'gen_ai.usage.output_tokens': billed.output_tokens,
      'gen_ai.usage.cache_read.input_tokens': billed.cache_read_input_tokens,
      'gen_ai.usage.cache_creation.input_tokens': billed.cache_creation_input_tokens,
      'context_compact.attempts': 1,
    })
    expect(chat.status.code).toBe(api.SpanStatusCode.UNSET)
    // Inside its parent, and at least as long as the server took to answer.
    expect(ms(chat.startTime)).toBeGreaterThanOrEqual(ms(compact.startTime) - 1)
    expect(ms(chat.endTime)).toBeLessThanOrEqual(ms(compact.endTime) + 1)
    expect(ms(chat.endTime) - ms(chat.startTime)).toBeGreaterThanOrEqual(35)
  })

  it('your own summarizer: provider custom, its time, no usage', async () => {
    const result = await compactMessages(conversation(30), {
      contextTokenLimit: 2000, outputDir: tmp(),
      summarizer: async () => {
        await new Promise((resolve) => setTimeout(resolve, 40))
        return '## Task\nAnswer the questions about the modules.'
      },
    })
    expect(result.compacted).toBe(true)
    expect(result.provider).toBe('custom')
    const compact = only('context_compact.compact')
    const [chat] = exporter.getFinishedSpans().filter((s: any) => s.name.startsWith('chat'))
    expect(parentId(chat)).toBe(compact.spanContext().spanId)
    expect(chat.attributes['gen_ai.provider.name']).toBe('custom')
    expect(chat.attributes['gen_ai.usage.input_tokens']).toBeUndefined()
    expect(ms(chat.endTime) - ms(chat.startTime)).toBeGreaterThanOrEqual(35)
  })

  it('a retried attempt is an event on it', async () => {
    const server = await startAnthropicServer({ respond: (_body: any, { index }: any) => (index === 0 ? { status: 529 } : undefined) })
    servers.push(server)
    const result = await compactMessages(conversation(30), {
      contextTokenLimit: 2000, provider: 'anthropic', apiKey: 'test-key', baseUrl: server.url, outputDir: tmp(), maxRetries: 2, retryBaseDelayMs: 0,
    })
    expect(result.compacted).toBe(true)
    expect(result.attempts).toBe(2)
    const chat = only('chat claude-sonnet-4-6')
    expect(chat.attributes['context_compact.attempts']).toBe(2)
    expect(chat.events.map((e: any) => [e.name, e.attributes['context_compact.attempt'], e.attributes['error.type'], e.attributes['http.response.status_code']])).toEqual([
      ['context_compact.retry', 1, 'OVERLOADED', 529],
    ])
    expect(chat.attributes['gen_ai.usage.output_tokens']).toBe(result.summaryUsage.outputTokens)
  })

  it('a failed summary call: the exception and ERROR on it; the compaction failed (summaryFallback: none)', async () => {
    const server = await startAnthropicServer()
    servers.push(server)
    const messages = conversation(30)
    const { value: result } = await inParent(() =>
      compactMessages(messages, {
        contextTokenLimit: 2000, provider: 'anthropic', apiKey: 'wrong-key', baseUrl: server.url, model: 'claude-haiku-4-5',
        summaryFallback: 'none', outputDir: tmp(),
      }),
    )
    expect(result.compacted).toBe(false)
    expect(result.error.code).toBe('AUTHENTICATION_FAILED')
    const compact = only('context_compact.compact')
    expect(compact.attributes['context_compact.status']).toBe('failed')
    expect(compact.attributes['error.type']).toBe('AUTHENTICATION_FAILED')
    expect(compact.attributes['context_compact.messages_after']).toBe(60)
    expect(compact.attributes['gen_ai.conversation.compacted']).toBeUndefined()
    expect(compact.status.code).toBe(api.SpanStatusCode.ERROR)
    const chat = only('chat claude-haiku-4-5')
    expect(parentId(chat)).toBe(compact.spanContext().spanId)
    expect(chat.attributes['gen_ai.provider.name']).toBe('anthropic')
    expect(chat.attributes['error.type']).toBe('AUTHENTICATION_FAILED')
    expect(chat.status.code).toBe(api.SpanStatusCode.ERROR)
    const [exception] = chat.events
    expect(exception.name).toBe('exception')
    expect(exception.attributes['exception.type']).toBe('AUTHENTICATION_FAILED')
    expect(exception.attributes['exception.message']).toContain('invalid x-api-key')
  })

  it('a failed summary call the extractive fallback stood in for: ERROR on the call, the compaction compacted', async () => {
    const server = await startAnthropicServer({ respond: () => ({ status: 500 }) })
    servers.push(server)
    const result = await compactMessages(conversation(30), {
      contextTokenLimit: 2000, provider: 'anthropic', apiKey: 'test-key', baseUrl: server.url, outputDir: tmp(), maxRetries: 1, retryBaseDelayMs: 0,
    })
    expect(result.compacted).toBe(true)
    expect(result.summaryFallback?.used).toBe('extractive')
    const compact = only('context_compact.compact')
    expect(compact.attributes['context_compact.status']).toBe('compacted')
    expect(compact.status.code).toBe(api.SpanStatusCode.UNSET)
    const chat = spans('chat claude-sonnet-4-6')[0] ?? only('chat')
    expect(parentId(chat)).toBe(compact.spanContext().spanId)
    expect(chat.status.code).toBe(api.SpanStatusCode.ERROR)
    expect(chat.attributes['error.type']).toBe(result.summaryFallback.code)
    expect(chat.events.map((e: any) => e.name)).toEqual(['context_compact.retry', 'exception'])
  })
})

describe('without a tracer provider, without the package', () => {
  it('no provider registered: the no-op tracer, nothing recorded, the same result', async () => {
    api.trace.disable()
    try {
      const messages = conversation(30)
      const result = await compactMessages(messages, { contextTokenLimit: 2000, provider: 'extractive', outputDir: tmp() })
      expect(result.compacted).toBe(true)
      expect(exporter.getFinishedSpans()).toEqual([])
    } finally {
      api.trace.setGlobalTracerProvider(provider)
    }
    await compactMessages(conversation(2), { contextTokenLimit: 200_000, provider: 'extractive' })
    expect(spans('context_compact.compact')).toHaveLength(1)
  })

  it('the loader: the module when it can be required, null when it cannot (or is not the API)', () => {
    expect(loadOtelApi(() => api)).toBe(api)
    const missing = () => {
      const error: any = new Error("Cannot find module '@opentelemetry/api'")
      error.code = 'MODULE_NOT_FOUND'
      throw error
    }
    expect(loadOtelApi(missing)).toBeNull()
    expect(loadOtelApi(() => ({}))).toBeNull()
  })

  it('in a process that cannot see @opentelemetry/api: looked for once, nothing loaded, compactions as usual', () => {
    const dir = tmp()
    // A resolution hook that hides the package (as if it were not installed) and counts lookups.
    const hide = join(dir, 'hide-otel.cjs')
    writeFileSync(
      hide,
      `const Module = require('node:module')
const resolve = Module._resolveFilename
globalThis.__otelLookups = 0
Module._resolveFilename = function (request, ...rest) {
  if (request === '@opentelemetry/api' || request.startsWith('@opentelemetry/')) {
    globalThis.__otelLookups++
    const error = new Error("Cannot find module '" + request + "'")
    error.code = 'MODULE_NOT_FOUND'
    throw error
  }
  return resolve.call(this, request, ...rest)
}
`,
    )
    const script = join(dir, 'run.cjs')
    writeFileSync(
      script,
      `const { compactMessages } = require(${JSON.stringify(join(__dirname, '..', '..', 'index.js'))})
const messages = []
for (let i = 0; i < 30; i++) messages.push({ role: 'user', content: 'question ' + i + ' '.repeat(1) + 'why '.repeat(60) }, { role: 'assistant', content: 'because '.repeat(60) })
;(async () => {
  const loadedAtStart = globalThis.__otelLookups
  const a = await compactMessages(messages, { contextTokenLimit: 2000, provider: 'extractive', outputDir: ${JSON.stringify(dir)} })
  const b = await compactMessages(messages.slice(0, 2), { contextTokenLimit: 200000, provider: 'extractive' })
  const c = await compactMessages(messages, { contextTokenLimit: 2000, provider: 'extractive', outputDir: ${JSON.stringify(dir)} })
  const loaded = Object.keys(require.cache).filter((k) => k.includes('@opentelemetry'))
  console.log(JSON.stringify({ loadedAtStart, lookups: globalThis.__otelLookups, loaded, compacted: [a.compacted, b.compacted, c.compacted] }))
})()
`,
    )
    const out = execFileSync(process.execPath, ['--require', hide, script], { encoding: 'utf8' })
    expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual({ loadedAtStart: 0, lookups: 1, loaded: [], compacted: [true, false, true] })
  })
})

describe('LangChain: each compaction is also a custom event of the run', () => {
  it('context_compact.compaction reaches the run\'s callbacks with what the compaction did, beside the span', async () => {
    const readFile = tool(async (input: { path: string }) => `contents of ${input.path}: ` + 'fn parse(input) { return tokens } '.repeat(60), {
      name: 'read_file',
      description: 'Reads a file.',
      schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false } as const,
    })
    const model = fakeModel()
    for (let i = 0; i < 8; i++) model.respond(new AIMessage({ content: `Reading f${i}.`, tool_calls: [{ name: 'read_file', args: { path: `src/f${i}.rs` }, id: `call_${i}`, type: 'tool_call' }] }))
    model.respond(new AIMessage('All read.'))
    const compaction = contextCompactMiddleware({ summarizer: async () => '## Goal\nRead the files.', contextTokenLimit: 3000, outputDir: tmp() })
    const agent = createAgent({ model, tools: [readFile], middleware: [compaction] })
    const events: Array<{ name: string; data: any }> = []
    await agent.invoke(
      { messages: [new HumanMessage('Read the files src/f0.rs to src/f7.rs.')] },
      { configurable: { thread_id: 'otel-thread' }, recursionLimit: 50, callbacks: [{ handleCustomEvent: (name: string, data: any) => void events.push({ name, data }) }] },
    )
    const compactions = spans('context_compact.compact')
    expect(compactions.length).toBeGreaterThanOrEqual(1)
    expect(events.map((e) => e.name)).toEqual(compactions.map(() => 'context_compact.compaction'))
    const [first] = events
    const span = compactions[0]
    expect(first.data).toEqual({
      trigger: span.attributes['context_compact.trigger'],
      strategy: 'summary',
      status: 'compacted',
      tokensBefore: span.attributes['context_compact.tokens_before'],
      tokensAfter: span.attributes['context_compact.tokens_after'],
      messagesBefore: span.attributes['context_compact.messages_before'],
      messagesAfter: span.attributes['context_compact.messages_after'],
      summaryRequest: span.attributes['context_compact.summary_request'],
      checkpoint: span.attributes['context_compact.checkpoint'],
      archive: span.attributes['context_compact.archive'],
      compacted: true,
      error: null,
      sessionId: 'otel-thread',
    })
    expect(first.data.tokensAfter).toBeLessThan(first.data.tokensBefore)
  })
})

describe('OpenAI Agents: each compaction is also a custom span of the run\'s trace', () => {
  it('context_compact.compact in the SDK\'s own trace, with the same facts as the OpenTelemetry span', async () => {
    const ended: any[] = []
    setTraceProcessors([
      {
        onTraceStart: async () => {},
        onTraceEnd: async () => {},
        onSpanStart: async () => {},
        onSpanEnd: async (span: any) => void ended.push(span),
        shutdown: async () => {},
        forceFlush: async () => {},
      },
    ])
    setTracingDisabled(false)
    try {
      const readFile = agentsTool({
        name: 'read_file',
        description: 'Reads a file.',
        strict: false,
        parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
        execute: async (input: any) => `contents of ${input.path}: ` + 'export function f(x: number) { return x * 2 } '.repeat(60),
      })
      let calls = 0
      const model = new ScriptedModel(
        Array.from({ length: 200 }, () =>
          modelResponder(() => {
            calls += 1
            const usage = new Usage({ requests: 1, inputTokens: 100, outputTokens: 10, totalTokens: 110 })
            const output = calls % 4 === 0 ? [assistantMessage('Done.')] : [functionCall('read_file', { path: `src/f${calls}.ts` }, { callId: `call_${calls}` })]
            return { usage, output, responseId: `resp_${calls}` }
          }),
        ),
      )
      const agent = new Agent({ name: 'coder', instructions: 'You are a coding agent.', model, tools: [readFile] })
      const session = new CompactingSession(new MemorySession(), { summarizer: async () => '## Goal\nRead the files.', contextTokenLimit: 3000, outputDir: tmp() })
      for (let i = 0; i < 6 && !session.lastResult?.compacted; i++) await runAgent(agent, `Task ${i}`, { session })
      expect(session.lastResult?.compacted).toBe(true)
      const custom = ended.filter((span) => span.spanData.type === 'custom' && span.spanData.name === 'context_compact.compact')
      expect(custom.length).toBeGreaterThanOrEqual(1)
      const otel = spans('context_compact.compact').filter((span: any) => span.attributes['context_compact.status'] === 'compacted')
      expect(otel).toHaveLength(custom.filter((span) => span.spanData.data.status === 'compacted').length)
      const data = custom.find((span) => span.spanData.data.status === 'compacted').spanData.data
      expect(data).toEqual({
        trigger: otel[0].attributes['context_compact.trigger'],
        strategy: 'summary',
        status: 'compacted',
        tokensBefore: otel[0].attributes['context_compact.tokens_before'],
        tokensAfter: otel[0].attributes['context_compact.tokens_after'],
        messagesBefore: otel[0].attributes['context_compact.messages_before'],
        messagesAfter: otel[0].attributes['context_compact.messages_after'],
        summaryRequest: otel[0].attributes['context_compact.summary_request'],
        checkpoint: otel[0].attributes['context_compact.checkpoint'],
        archive: otel[0].attributes['context_compact.archive'],
        compacted: true,
        error: null,
      })
      // In the run's trace: the trace every other span of that run has.
      const traceId = custom[0].traceId
      expect(ended.filter((span) => span.traceId === traceId && span.spanData.type === 'agent')).not.toHaveLength(0)
    } finally {
      setTracingDisabled(true)
      setTraceProcessors([])
    }
  })
})
