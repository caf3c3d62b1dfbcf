// context-compact/mastra: a real Mastra Agent (`@mastra/core` 1.71) run with the AI SDK's mock
// model (LanguageModelV3, which Mastra 1.71 takes) and a tool whose results fill the context, so
// the threshold is crossed in the middle of the run.

import { createRequire } from 'node:module'

import { APICallError } from '@ai-sdk/provider'
import { MockLanguageModelV3 } from 'ai-v6/test'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'

import { countTokens } from '../../index'
import { ContextCompactProcessor } from '../../adapters/mastra/index'
import { tempDir, textOfTokens } from '../support/helpers'

const require = createRequire(import.meta.url)
const present = (() => {
  try {
    require.resolve('@mastra/core/agent')
    return true
  } catch {
    return false
  }
})()

const LIMIT = 20_000
const THRESHOLD = 18_400 // 0.92 × 20,000 (the default thresholdRatio)
const RESULT_TOKENS = 1_500

type Prompt = Array<{ role: string; content: unknown }>

// A prompt as the provider receives it: every tool call answered by a result right after it, and
// no result without its call. Returns the problems found.
function problems(prompt: Prompt): string[] {
  const out: string[] = []
  const open = new Set<string>()
  for (const [i, message] of prompt.entries()) {
    const parts = Array.isArray(message.content) ? (message.content as Array<Record<string, unknown>>) : []
    if (message.role === 'tool') {
      for (const part of parts) {
        if (part.type !== 'tool-result') continue
        if (!open.delete(part.toolCallId as string)) out.push(`result ${String(part.toolCallId)} at ${i} has no call`)
      }
    } else {
      if (open.size > 0) out.push(`calls ${[...open].join(', ')} unanswered before message ${i}`)
      open.clear()
      if (message.role === 'assistant') for (const part of parts) if (part.type === 'tool-call') open.add(part.toolCallId as string)
    }
  }
  return out
}

// The prompt's size in tokens, counted as the library counts AI SDK messages (the provider-level
// prompt Mastra sends has the same shape).
const promptTokens = (prompt: Prompt) => countTokens(prompt as never, { format: 'ai-sdk' })

// A model that calls the `read` tool `calls - 1` times, then answers. With `window`, it rejects a
// prompt larger than that as Anthropic does (a 400 naming both sizes).
// `billed`: the factor of the input tokens it reports to the tokens the library counts (a
// provider whose tokenizer counts more than o200k); without it, it reports 10 tokens.
function scriptedModel(calls: number, window?: number, billed?: number) {
  const prompts: Prompt[] = []
  let n = 0
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      const prompt = options.prompt as unknown as Prompt
      prompts.push(prompt)
      const size = promptTokens(prompt)
      const input = billed === undefined ? 10 : Math.round(size * billed)
      const usage = { inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } }
      if (window !== undefined && size > window) {
        const text = `prompt is too long: ${size} tokens > ${window} maximum`
        throw new APICallError({
          message: text,
          url: 'http://127.0.0.1/v1/messages',
          requestBodyValues: {},
          statusCode: 400,
          responseBody: JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: text } }),
          isRetryable: false,
        })
      }
      n++
      if (n < calls) {
        return {
          content: [{ type: 'tool-call', toolCallId: `call-${n}`, toolName: 'read', input: JSON.stringify({ page: n }) }],
          finishReason: { unified: 'tool-calls', raw: 'tool_use' },
          usage,
          warnings: [],
        }
      }
      return { content: [{ type: 'text', text: 'All pages read.' }], finishReason: { unified: 'stop', raw: 'end_turn' }, usage, warnings: [] }
    },
  })
  return { model, prompts }
}

async function agentWith(model: unknown, processor: ContextCompactProcessor, errors: boolean) {
  const { Agent } = await import('@mastra/core/agent')
  const { createTool } = await import('@mastra/core/tools')
  const read = createTool({
    id: 'read',
    description: 'Reads one page of the report',
    inputSchema: z.object({ page: z.number() }),
    execute: async ({ page }: { page: number }) => ({ page, text: textOfTokens(RESULT_TOKENS) }),
  })
  return new Agent({
    id: 'reader',
    name: 'reader',
    instructions: 'You read reports page by page.',
    model: model as never,
    tools: { read },
    inputProcessors: [processor],
    ...(errors ? { errorProcessors: [processor] } : {}),
  })
}

function summarizerCounting() {
  const requests: unknown[] = []
  const summarizer = async (request: { messages: unknown[] }) => {
    requests.push(request)
    return `## Goal\nRead the report. Summary ${requests.length} of ${request.messages.length} messages.`
  }
  return { requests, summarizer }
}

describe.runIf(present)('ContextCompactProcessor in a Mastra Agent', () => {
  it('compacts mid-run in processInputStep: every later request valid and under the threshold, the run completes', async () => {
    const { requests, summarizer } = summarizerCounting()
    const processor = new ContextCompactProcessor({ contextTokenLimit: LIMIT, outputDir: tempDir('cc-mastra-'), sessionId: 'mastra-run', summarizer })
    const CALLS = 30
    const { model, prompts } = scriptedModel(CALLS)
    const agent = await agentWith(model, processor, false)
    const result = await agent.generate('Read all the pages of the report.', { maxSteps: CALLS + 5 })

    expect(result.text).toBe('All pages read.')
    expect(prompts).toHaveLength(CALLS)
    // 30 results of 1,500 tokens is 45,000 tokens: the threshold is crossed several times.
    expect(requests.length).toBeGreaterThanOrEqual(2)
    for (const [i, prompt] of prompts.entries()) {
      expect(problems(prompt), `request ${i}`).toEqual([])
      expect(promptTokens(prompt), `request ${i}`).toBeLessThan(THRESHOLD)
    }
    const summaries = prompts.filter((p) => JSON.stringify(p).includes('Read the report. Summary'))
    expect(summaries.length).toBeGreaterThan(0)
    // The run's own latest steps are kept after a compaction: the last request ends with the
    // last tool call and its result.
    const last = prompts[prompts.length - 1]
    expect(JSON.stringify(last)).toContain(`call-${CALLS - 1}`)
    expect(last[0].role).toBe('system')
    expect(JSON.stringify(last[0])).toContain('You read reports page by page.')
  })

  it('reads the billed usage of the previous step: a provider that bills 1.5 times the estimate gets its compactions in time', async () => {
    const { requests, summarizer } = summarizerCounting()
    const processor = new ContextCompactProcessor({ contextTokenLimit: LIMIT, outputDir: tempDir('cc-mastra-'), sessionId: 'mastra-billed', summarizer })
    const CALLS = 30
    const BILLED = 1.5
    const { model, prompts } = scriptedModel(CALLS, undefined, BILLED)
    const agent = await agentWith(model, processor, false)
    const result = await agent.generate('Read all the pages of the report.', { maxSteps: CALLS + 5 })
    expect(result.text).toBe('All pages read.')
    const billed = prompts.map((p) => Math.round(promptTokens(p) * BILLED))
    // By the estimate alone the first compaction would come at 18,400 counted tokens (27,600
    // billed): the billed size is what the trigger reads, so it comes before that.
    expect(requests.length).toBeGreaterThanOrEqual(3)
    for (const [i, n] of billed.entries()) expect(n, `request ${i}`).toBeLessThan(THRESHOLD)
    for (const prompt of prompts) expect(problems(prompt)).toEqual([])
  })

  it('with the summarizer down the run still completes, every request valid', async () => {
    let calls = 0
    const summarizer = async () => {
      calls++
      throw new Error('summary service unavailable')
    }
    const processor = new ContextCompactProcessor({ contextTokenLimit: LIMIT, outputDir: tempDir('cc-mastra-'), sessionId: 'mastra-down', summarizer })
    const CALLS = 20
    const { model, prompts } = scriptedModel(CALLS)
    const agent = await agentWith(model, processor, false)
    const result = await agent.generate('Read all the pages of the report.', { maxSteps: CALLS + 5 })
    expect(result.text).toBe('All pages read.')
    expect(prompts).toHaveLength(CALLS)
    expect(calls).toBeGreaterThan(0)
    // The library's own extractive summary took over: the run's later requests are back under.
    expect(processor.lastResult?.compacted).toBe(true)
    expect(promptTokens(prompts[prompts.length - 1])).toBeLessThan(THRESHOLD)
    for (const prompt of prompts) expect(problems(prompt)).toEqual([])
  })

  it('processAPIError: a context-overflow 400 compacts and the retried call succeeds', async () => {
    const { requests, summarizer } = summarizerCounting()
    // The processor is told a window far larger than the model's: only the provider's rejection
    // shows the real one.
    const WINDOW = 12_000
    const processor = new ContextCompactProcessor({ contextTokenLimit: 1_000_000, outputDir: tempDir('cc-mastra-'), sessionId: 'mastra-overflow', summarizer })
    const CALLS = 12
    const { model, prompts } = scriptedModel(CALLS, WINDOW)
    const agent = await agentWith(model, processor, true)
    const result = await agent.generate('Read all the pages of the report.', { maxSteps: CALLS + 5 })

    expect(result.text).toBe('All pages read.')
    const sizes = prompts.map(promptTokens)
    const rejected = sizes.findIndex((n) => n > WINDOW)
    expect(rejected).toBeGreaterThan(0)
    // Rejected once, then retried after the compaction: smaller, under the window, with the summary.
    expect(sizes.filter((n) => n > WINDOW)).toHaveLength(1)
    expect(sizes[rejected + 1]).toBeLessThanOrEqual(WINDOW)
    expect(JSON.stringify(prompts[rejected + 1])).toContain('Read the report. Summary 1')
    expect(requests.length).toBeGreaterThanOrEqual(1)
    // Every answered call: 11 tool calls and the answer, plus the one rejected request.
    expect(prompts).toHaveLength(CALLS + 1)
    for (const prompt of prompts) expect(problems(prompt)).toEqual([])
  })

  it('without errorProcessors the overflow ends the run with the provider error', async () => {
    const processor = new ContextCompactProcessor({ contextTokenLimit: 1_000_000, outputDir: tempDir('cc-mastra-'), summarizer: async () => 'never' })
    const { model } = scriptedModel(12, 6_000)
    const agent = await agentWith(model, processor, false)
    await expect(agent.generate('Read all the pages.', { maxSteps: 20 })).rejects.toThrow(/prompt is too long/)
  })

  it('on a MessageList: the run\'s assistant message is split by step, kept messages stay the same objects, the summary comes first', async () => {
    const { MessageList } = await import('@mastra/core/agent/message-list')
    const list = new MessageList({ threadId: 't', resourceId: 'r' })
    const t0 = Date.now() - 60_000
    const at = (s: number) => new Date(t0 + s * 1000)
    const big = textOfTokens(800)
    const user = (id: string, text: string, s: number) => ({ id, role: 'user' as const, createdAt: at(s), content: { format: 2 as const, parts: [{ type: 'text' as const, text }] } })
    const step = (n: number) => [
      { type: 'step-start' as const },
      { type: 'tool-invocation' as const, toolInvocation: { state: 'result' as const, toolCallId: `c${n}`, toolName: 'read', args: { page: n }, result: { text: big } } },
    ]
    const memory = [user('u1', 'Read the first report.', 1), { id: 'a1', role: 'assistant' as const, createdAt: at(2), content: { format: 2 as const, parts: [{ type: 'text' as const, text: 'Done: ' + textOfTokens(15_000) }] } }]
    list.add(memory, 'memory')
    list.add(user('u2', 'Now read the second one.', 3), 'input')
    list.add({ id: 'resp', role: 'assistant' as const, createdAt: at(4), content: { format: 2 as const, parts: [1, 2, 3, 4, 5, 6].flatMap(step) } }, 'response')
    const before = list.get.all.db()
    const u2 = before.find((m) => m.id === 'u2')

    const { summarizer } = summarizerCounting()
    const processor = new ContextCompactProcessor({ contextTokenLimit: 20_000, outputDir: tempDir('cc-mastra-'), sessionId: 'mastra-list', summarizer })
    const returned = await processor.processInputStep({ messageList: list, messages: before, systemMessages: [], stepNumber: 6, steps: [], state: {}, retryCount: 0, abort: (() => { throw new Error('abort') }) as never, model: {} as never })
    expect(returned).toBe(list)
    expect(processor.lastResult?.compacted).toBe(true)

    const after = list.get.all.db()
    // The summary first (a user message), then what was kept, in order; the run's message keeps
    // its id and its latest steps only.
    expect(JSON.stringify(after[0])).toContain('Read the report. Summary 1')
    const resp = after.find((m) => m.id === 'resp')!
    expect(resp).toBeDefined()
    expect(after[after.length - 1].id).toBe('resp')
    const calls = resp.content.parts.filter((p) => p.type === 'tool-invocation').map((p) => (p as { toolInvocation: { toolCallId: string } }).toolInvocation.toolCallId)
    expect(calls.length).toBeGreaterThan(0)
    expect(calls.length).toBeLessThan(6)
    expect(calls[calls.length - 1]).toBe('c6')
    expect(calls).toEqual(calls.map((_, i) => `c${6 - calls.length + 1 + i}`))
    // The model's view is valid and under the threshold.
    const model = list.get.all.aiV5.model()
    expect(countTokens(model as never, { format: 'ai-sdk' })).toBeLessThan(18_400)
    expect(before.find((m) => m.id === 'resp')!.content.parts).toHaveLength(12) // the list's own copy was replaced, not edited
    void u2
  })

  it('on a MessageList: messages kept whole are the very objects the list had', async () => {
    const { MessageList } = await import('@mastra/core/agent/message-list')
    const list = new MessageList({ threadId: 't', resourceId: 'r' })
    const t0 = Date.now() - 60_000
    const at = (s: number) => new Date(t0 + s * 1000)
    list.add(
      [
        { id: 'u1', role: 'user', createdAt: at(1), content: { format: 2, parts: [{ type: 'text', text: 'Read the first report.' }] } },
        { id: 'a1', role: 'assistant', createdAt: at(2), content: { format: 2, parts: [{ type: 'text', text: textOfTokens(10_000) }] } },
        { id: 'u1b', role: 'user', createdAt: at(2.5), content: { format: 2, parts: [{ type: 'text', text: 'And the appendix.' }] } },
        { id: 'a1b', role: 'assistant', createdAt: at(2.7), content: { format: 2, parts: [{ type: 'text', text: textOfTokens(9_000) }] } },
      ],
      'memory',
    )
    list.add({ id: 'u2', role: 'user', createdAt: at(3), content: { format: 2, parts: [{ type: 'text', text: 'Now the second one.' }] } }, 'input')
    list.add({ id: 'resp', role: 'assistant', createdAt: at(4), content: { format: 2, parts: [{ type: 'step-start' }, { type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'c1', toolName: 'read', args: { page: 1 }, result: { text: 'page one' } } }] } }, 'response')
    const before = list.get.all.db()
    const { summarizer } = summarizerCounting()
    const processor = new ContextCompactProcessor({ contextTokenLimit: 20_000, outputDir: tempDir('cc-mastra-'), sessionId: 'mastra-same', summarizer })
    const updates: Array<{ metadata?: Record<string, unknown> }> = []
    const currentSpan = { update: (options: { metadata?: Record<string, unknown> }) => updates.push(options) }
    await processor.processInputStep({ messageList: list, messages: before, systemMessages: [], stepNumber: 1, steps: [], state: {}, retryCount: 0, abort: (() => { throw new Error('abort') }) as never, model: {} as never, tracingContext: { currentSpan } as never })
    expect(processor.lastResult?.compacted).toBe(true)
    // The processor's span (Mastra's own) carries the outcome.
    expect(updates).toHaveLength(1)
    expect(updates[0].metadata).toMatchObject({ 'context_compact.status': 'compacted', 'context_compact.trigger': 'threshold', 'gen_ai.conversation.compacted': true })
    expect(updates[0].metadata!['context_compact.tokens_after'] as number).toBeLessThan(updates[0].metadata!['context_compact.tokens_before'] as number)
    const after = list.get.all.db()
    // The tail: the message that crosses its budget (a1b) and everything after it, as they were.
    expect(after.map((m) => m.id).slice(1)).toEqual(['a1b', 'u2', 'resp'])
    for (let i = 1; i < after.length; i++) expect(after[i]).toBe(before[i + 2])
    expect(after[0].role).toBe('user')
    expect(JSON.stringify(after[0])).toContain('Read the report. Summary 1')
  })

  it('on a MessageList: a message edited in place is seen, in the tail at the next step, an older one within the rotation, and a compaction reads every message as it is now', async () => {
    // A step compares what was appended, the last messages and older ones in rotation (not every
    // message of a long list): an edit anywhere still reaches the estimate, and a compaction
    // compares every message first.
    const { MessageList } = await import('@mastra/core/agent/message-list')
    const t0 = Date.now() - 10_000_000
    const longList = () => {
      const list = new MessageList({ threadId: 't', resourceId: 'r' })
      for (let i = 0; i < 400; i++) {
        list.add(
          [
            { id: `u${i}`, role: 'user', createdAt: new Date(t0 + i * 2000), content: { format: 2, parts: [{ type: 'text', text: `Question ${i}` }] } },
            { id: `a${i}`, role: 'assistant', createdAt: new Date(t0 + i * 2000 + 1000), content: { format: 2, parts: [{ type: 'step-start' }, { type: 'text', text: `Answer ${i}` }] } },
          ],
          'memory',
        )
      }
      return list
    }
    const stepOf = (list: InstanceType<typeof MessageList>) => ({ messageList: list, messages: list.get.all.db(), systemMessages: [], stepNumber: 0, steps: [], state: {}, retryCount: 0, abort: (() => { throw new Error('abort') }) as never, model: {} as never })
    const textOf = (message: unknown) => (message as { content: { parts: Array<{ type: string; text: string }> } }).content.parts.find((p) => p.type === 'text')!

    for (const where of ['tail', 'old'] as const) {
      const list = longList()
      const { requests, summarizer } = summarizerCounting()
      const processor = new ContextCompactProcessor({ contextTokenLimit: 50_000, outputDir: tempDir('cc-mastra-'), sessionId: `mastra-edit-${where}`, summarizer })
      await processor.processInputStep(stepOf(list))
      await processor.processInputStep(stepOf(list))
      expect(processor.lastResult).toBeNull() // below the threshold: nothing compacted
      const db = list.get.all.db()
      // Over the threshold (46,000) by an edit in place; for the tail, an old assistant message
      // edited too, by a few words only, where the rotation has not looked yet.
      textOf(db[where === 'tail' ? db.length - 1 : 41]).text += ' ' + textOfTokens(45_000)
      if (where === 'tail') textOf(db[101]).text += ' EDITED-IN-PLACE'
      let steps = 0
      while (processor.lastResult === null && steps < 100) {
        await processor.processInputStep(stepOf(list))
        steps += 1
      }
      expect(processor.lastResult).not.toBeNull()
      if (where === 'old') {
        expect(steps).toBeGreaterThan(0)
        continue
      }
      expect(steps).toBe(1)
      // What was compacted (summarized, or kept) is the list as it is now.
      expect(JSON.stringify([requests, processor.lastResult?.messages])).toContain('Answer 50 EDITED-IN-PLACE')
    }
  })

  it('counts the step\'s tools into the estimate; processAPIError leaves other errors to Mastra', async () => {
    const { MessageList } = await import('@mastra/core/agent/message-list')
    const list = new MessageList({ threadId: 't', resourceId: 'r' })
    list.add({ id: 'u1', role: 'user', createdAt: new Date(), content: { format: 2, parts: [{ type: 'text', text: 'Hello.' }] } }, 'input')
    const before = list.get.all.db()
    const base = { messageList: list, messages: before, systemMessages: [], steps: [], state: {}, retryCount: 0, abort: (() => { throw new Error('abort') }) as never }
    const processor = new ContextCompactProcessor({ contextTokenLimit: 20_000, outputDir: tempDir('cc-mastra-'), summarizer: async () => 'never' })
    // Without tools the list is far below the threshold: no compaction is even tried.
    await processor.processInputStep({ ...base, stepNumber: 0, model: {} as never })
    expect(processor.lastResult).toBeNull()
    // A tool whose declaration alone is over the threshold: the trigger fires.
    const tools = { read: { type: 'function', description: textOfTokens(19_000), parameters: { jsonSchema: { type: 'object', properties: { page: { type: 'number' } } } } } }
    await processor.processInputStep({ ...base, stepNumber: 0, model: {} as never, tools })
    expect(processor.lastResult?.tokens).toBeGreaterThan(19_000)
    expect(processor.lastResult?.compacted).toBe(false)
    // A part Mastra edits in place is read again (the conversions kept from earlier steps are
    // reused only for pieces that did not change).
    const fresh = new ContextCompactProcessor({ contextTokenLimit: 20_000, outputDir: tempDir('cc-mastra-'), summarizer: async () => 'never' })
    await fresh.processInputStep({ ...base, stepNumber: 0, model: {} as never })
    expect(fresh.lastResult).toBeNull()
    const part = list.get.all.db()[0].content.parts[0] as { text: string }
    part.text = textOfTokens(19_000)
    await fresh.processInputStep({ ...base, stepNumber: 1, model: {} as never })
    expect(fresh.lastResult?.tokens).toBeGreaterThanOrEqual(19_000)
    part.text = 'Hello.'

    const other = new APICallError({ message: 'Invalid schema for function read', url: 'http://127.0.0.1', requestBodyValues: {}, statusCode: 400, isRetryable: false })
    expect(await processor.processAPIError({ ...base, error: other, stepNumber: 1 })).toBeUndefined()
    expect(list.get.all.db()).toEqual(before)
  })

  it('rejects bad options with a TypeError naming them', () => {
    expect(() => new ContextCompactProcessor({ usage: { inputTokens: 1 } } as never)).toThrow(TypeError)
    expect(() => new ContextCompactProcessor({ format: 'openai' } as never)).toThrow(/options\.format/)
    expect(() => new ContextCompactProcessor('x' as never)).toThrow(/options must be an object/)
  })
})
