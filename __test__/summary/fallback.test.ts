// The loop always gets a list it can send (issue 35). Against the local Anthropic and OpenAI
// servers of benchmark/servers, answering as the APIs do: when every summary attempt fails (a
// 500, a refusal, an empty text, a summary cut at max_tokens) and the list is over the context
// window, the summary is written without an LLM (`summaryFallback: 'extractive'`, the default),
// and the result fits, is valid in its format and restores exactly; under the window the PRD's
// rule stands. Also: no death spiral in a Compactor, and the empty tail (`tailRetentionRatio: 0`).
import { afterEach, describe, expect, it } from 'vitest'

// @ts-ignore: plain ESM JavaScript shared with the node benchmark scripts
import { startAnthropicServer } from '../../benchmark/servers/anthropic-messages.mjs'
// @ts-ignore: plain ESM JavaScript shared with the node benchmark scripts
import { startOpenAIServer } from '../../benchmark/servers/openai-chat.mjs'
import { checkMessages, compactMessages, Compactor, countTokens, measureTokens, restoreMessages, type CompactResult } from '../../index'
import { checkers, render, type Conversation, type FormatName } from '../support/format-conversations'
import { tempDir } from '../support/helpers'

type Json = any
interface Server {
  url: string
  requests: Json[]
  close(): Promise<void>
}

const servers: Server[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

// The numbers: about 22,530 tokens for a 21,457-token window.
const WINDOW = 21_457

/** A coding session: the task, `steps` tool calls with outputs of a few hundred tokens, then "go on". */
function session(steps: number): Conversation {
  const output = (t: number) =>
    Array.from({ length: 30 }, (_, i) => `src/lex_${t}.rs:${i}: fn token_${i}(input: &str) -> Option<Token> { scan(input, ${i}) }`).join('\n')
  return {
    system: 'You are a coding agent working in /repo.',
    episodes: [
      {
        prompt: 'Port the tokenizer in src/lex.c to Rust and keep the tests green. I prefer small commits.',
        image: false,
        steps: Array.from({ length: steps }, (_, t) => ({
          reasoning: null,
          text: `Step ${t}: reading the next part of the lexer.`,
          calls: [{ id: `call_${t}`, name: 'bash', args: { command: `cat src/lex_${t}.rs` }, output: output(t), isError: false, approval: false }],
        })),
        answer: { reasoning: null, text: 'All parts read; writing the port now.', calls: [] },
      },
      { prompt: 'go on', image: false, steps: [], answer: null },
    ],
    geminiIds: true,
    langchainForm: 'serialized',
  }
}

/** The session in `format`, just over 22,530 tokens. */
function overTheWindow(format: FormatName): Json[] {
  let steps = 1
  while (countTokens(render(session(steps + 1), format), { format }) <= 22_530) steps++
  const messages = render(session(steps + 1), format)
  const tokens = countTokens(messages, { format })
  expect(tokens).toBeGreaterThan(WINDOW)
  expect(tokens).toBeLessThan(23_600)
  return messages
}

type Failure = '500' | 'refusal' | 'empty' | 'truncated'
const FAILURES: [Failure, string][] = [
  ['500', 'SERVER_ERROR'],
  ['refusal', 'REFUSED'],
  ['empty', 'EMPTY_SUMMARY'],
  ['truncated', 'TRUNCATED'],
]

/** The Anthropic server failing every summary the same way. */
async function anthropicFailing(failure: Failure): Promise<Server> {
  const server = await startAnthropicServer({
    respond: () => {
      switch (failure) {
        case '500':
          return { status: 500 }
        case 'refusal':
          return { content: [{ type: 'text', text: "I can't help with that." }], stop_reason: 'refusal' }
        case 'empty':
          return { content: [], stop_reason: 'end_turn', output_tokens: 0 }
        case 'truncated':
          return { content: [{ type: 'text', text: '## Goal\nPort the tokeni' }], stop_reason: 'max_tokens' }
      }
    },
  })
  servers.push(server)
  return server
}

/** The OpenAI server failing every summary the same way. */
async function openaiFailing(failure: Failure): Promise<Server> {
  const server = await startOpenAIServer({
    respond: () => {
      switch (failure) {
        case '500':
          return { status: 500 }
        case 'refusal':
          return { refusal: "I'm sorry, I can't help with that." }
        case 'empty':
          return { content: '' }
        case 'truncated':
          return { content: '## Goal\nPort the tokeni', finish_reason: 'length' }
      }
    },
  })
  servers.push(server)
  return server
}

// Each format with the provider a loop in it would use (the AI SDK's with Anthropic's API).
const CASES: { format: FormatName; provider: 'anthropic' | 'openai' }[] = [
  { format: 'anthropic', provider: 'anthropic' },
  { format: 'openai', provider: 'openai' },
  { format: 'ai-sdk', provider: 'anthropic' },
  { format: 'gemini', provider: 'openai' },
]

async function failingProvider(provider: 'anthropic' | 'openai', failure: Failure) {
  const server = provider === 'anthropic' ? await anthropicFailing(failure) : await openaiFailing(failure)
  const model = provider === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-4o-mini'
  return { server, options: { provider, model, apiKey: 'test-key', baseUrl: server.url, maxRetries: 1, retryBaseDelayMs: 0 } }
}

describe('summaryFallback: every summary attempt failed', () => {
  for (const { format, provider } of CASES) {
    for (const [failure, code] of FAILURES) {
      it(`${format} (${provider}), ${failure} every time, over the window: a list under it, valid, restored exactly`, async () => {
        const messages = overTheWindow(format)
        const before = structuredClone(messages)
        const { server, options } = await failingProvider(provider, failure)
        const outputDir = tempDir()
        const result = await compactMessages(messages, { ...options, format, contextTokenLimit: WINDOW, outputDir, sessionId: 's' })
        // Every attempt was made first (the first and maxRetries more), never more.
        expect(server.requests.length).toBe(2)
        expect(result.compacted).toBe(true)
        expect(result.error).toBeNull()
        expect(result.summaryFallback).toEqual({ used: 'extractive', code, reason: expect.stringMatching(new RegExp(`^${code}: `)) })
        expect(result.warnings.some((w) => w.includes('without an LLM') && w.includes(code))).toBe(true)
        expect(result.provider).toBe('extractive')
        expect(result.attempts).toBe(2)
        const tokens = countTokens(result.messages, { format })
        expect(tokens).toBeLessThan(WINDOW)
        expect(result.stats.compactedTokenCount).toBe(tokens)
        expect(checkMessages(result.messages, { format })).toEqual([])
        expect(checkers[format](result.messages, messages)).toEqual([])
        // The summary is the library's own: the task and the commands survive.
        expect(result.summary).toContain('Port the tokenizer')
        expect(result.summary).toContain('cat src/lex_0.rs')
        expect(messages).toEqual(before)
        expect(await restoreMessages(result.messages, { outputDir, sessionId: 's', format } as any)).toEqual(messages)
      })
    }
  }

  it('under the window the PRD rule stands: retried, then skipped, the list unchanged', async () => {
    const messages = overTheWindow('anthropic')
    const { server, options } = await failingProvider('anthropic', '500')
    // The window is compared with the trigger's estimate (here scaled by the summary model's
    // family factor, since `model` names it): one token more than that is under the window.
    const limit = measureTokens(messages, options).tokens + 1
    expect(measureTokens(messages, { ...options, contextTokenLimit: limit }).window).toBe(limit)
    const result = await compactMessages(messages, { ...options, contextTokenLimit: limit, outputDir: tempDir() })
    expect(server.requests.length).toBe(2)
    expect(result.compacted).toBe(false)
    expect(result.messages).toBe(messages)
    expect(result.error?.code).toBe('SERVER_ERROR')
    expect(result.error?.status).toBe(500)
    expect(result.summaryFallback).toBeNull()
  })

  it("summaryFallback: 'none' keeps today's behaviour over the window", async () => {
    const messages = overTheWindow('openai')
    const { server, options } = await failingProvider('openai', 'truncated')
    const result = await compactMessages(messages, { ...options, contextTokenLimit: WINDOW, outputDir: tempDir(), summaryFallback: 'none' })
    expect(server.requests.length).toBe(2)
    expect(result.compacted).toBe(false)
    expect(result.messages).toBe(messages)
    expect(result.error?.code).toBe('TRUNCATED')
    expect(result.summaryFallback).toBeNull()
  })

  it('an invalid summaryFallback is a TypeError naming the option', async () => {
    await expect(compactMessages([], { summaryFallback: 'llm' as any })).rejects.toThrow(TypeError)
    await expect(compactMessages([], { summaryFallback: 'llm' as any })).rejects.toThrow(/summaryFallback/)
    // Only a Compactor declines summaries: a caller's summaryDeclined is no option.
    const result = await compactMessages([{ role: 'user', content: 'hi' }], { summaryDeclined: { code: 'SUMMARY_SKIPPED', message: 'x' } } as any)
    expect(result.warnings.some((w) => w.includes('summaryDeclined'))).toBe(true)
  })
})

// ---------------------------------------------------------------------------------------------
// No death spiral

/** A summarizer callback that counts its calls. */
function counting() {
  const calls: number[] = []
  const summarizer = async () => {
    calls.push(calls.length)
    return '## Goal\nRead the pasted log and find the failure.'
  }
  return { calls, summarizer }
}

/** Some history, then a user message larger than the window, then the agent's first answer. */
function pastedLog(): Json[] {
  const history = render(session(4), 'anthropic').slice(1)
  const huge = 'the full log follows: ' + 'line of pasted output 0123 '.repeat(4_000)
  return [...history, { role: 'assistant', content: 'Paste the log, please.' }, { role: 'user', content: huge }, { role: 'assistant', content: 'Looking at it' }]
}

describe('no death spiral', () => {
  it('a user message larger than the window, 6 steps of "Looking at it" / "go on": at most 2 summary calls', async () => {
    const { calls, summarizer } = counting()
    const compactor = new Compactor({ contextTokenLimit: 20_000, summarizer, outputDir: tempDir(), retryBaseDelayMs: 0 })
    let messages = pastedLog()
    const results: CompactResult[] = []
    for (let step = 0; step < 6; step++) {
      messages = [...messages, { role: 'user', content: 'go on' }, { role: 'assistant', content: 'Looking at it' }]
      const result = await compactor.compact(messages)
      results.push(result)
      messages = result.messages
    }
    expect(calls.length).toBeLessThanOrEqual(2)
    expect(calls.length).toBeGreaterThanOrEqual(1)
    // The first says what keeps the list over and what would help.
    expect(results[0].error?.code).toBe('STILL_OVER_LIMIT')
    expect(results[0].error?.message).toMatch(/message \d+ \(user, \d+ tokens; at \d+ in the result\) keeps it over: offload: 'all' would shorten its text/)
    // The others say why no summary was paid for.
    for (const result of results.slice(1)) {
      const why = skippedReason(result)
      expect(why).toMatch(/STILL_OVER_LIMIT/)
      expect(why).toMatch(/another summary is made once it grows by 2000 \(a tenth of the 20000-token window\)/)
    }
    // Below the threshold nothing is due, backing off or not: no error.
    const calm = await compactor.compact(messages, { contextTokenLimit: 1_000_000 })
    expect(calm.compacted).toBe(false)
    expect(calm.error).toBeNull()
    expect(calls.length).toBeLessThanOrEqual(2)
  })

  it('pays again once the list grew by a tenth of the window; three in a row stop the calls until the list changes', async () => {
    const { calls, summarizer } = counting()
    const compactor = new Compactor({ contextTokenLimit: 20_000, summarizer, outputDir: tempDir(), retryBaseDelayMs: 0 })
    // A system prompt larger than the window: the head, never summarized nor shortened.
    const system = { role: 'system', content: 'Reference manual: ' + 'rule 0123 of the style guide applies. '.repeat(3_000) }
    let messages: Json[] = [system, ...render(session(4), 'anthropic').slice(1)]
    let result = await compactor.compact(messages)
    expect(calls.length).toBe(1)
    expect(result.error?.code).toBe('STILL_OVER_LIMIT')
    expect(result.error?.message).toMatch(/message 0 \(system, \d+ tokens; at 0 in the result\) keeps it over: a system prompt is never shortened/)
    // Each turn adds a tool call with an output of about 2,700 tokens: more than a tenth of the window.
    const grow = (list: Json[], turn: number): Json[] => [
      ...list,
      { role: 'assistant', content: [{ type: 'tool_use', id: `grow_${turn}`, name: 'bash', input: { command: `grep -n error part${turn}.log` } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: `grow_${turn}`, content: `part ${turn}: ` + 'error at line 42 of the build '.repeat(340) }] },
    ]
    messages = result.messages
    // Growing by less does not pay.
    result = await compactor.compact([...messages, { role: 'assistant', content: 'Reading part 0.' }, { role: 'user', content: 'go on' }])
    expect(calls.length).toBe(1)
    expect(skippedReason(result)).toMatch(/grown by \d+ tokens since; another summary is made once it grows by 2000/)
    messages = result.messages
    for (let turn = 0; turn < 2; turn++) {
      result = await compactor.compact(grow(messages, turn))
      expect(result.error?.code).toBe('STILL_OVER_LIMIT')
      messages = result.messages
    }
    expect(calls.length).toBe(3)
    // Three in a row: growing again does not pay; over the window, the summary is written without an LLM.
    result = await compactor.compact(grow(messages, 2))
    expect(calls.length).toBe(3)
    expect(skippedReason(result)).toMatch(/last 3 compactions of this session in a row/)
    messages = result.messages
    result = await compactor.compact(grow(messages, 3))
    expect(calls.length).toBe(3)
    messages = result.messages
    // The caller drops the oversized system prompt: the list changed by more than a tenth of the window.
    const without = messages.filter((m: Json) => m.role !== 'system')
    result = await compactor.compact(grow(without, 4), { force: true })
    expect(calls.length).toBe(4)
    expect(result.compacted).toBe(true)
    expect(result.error).toBeNull()
  })
})

/** Why a Compactor paid for no summary (SUMMARY_SKIPPED, as the error or as the fallback's reason), or null. */
function skippedReason(result: CompactResult): string | null {
  if (result.summaryFallback?.code === 'SUMMARY_SKIPPED') return result.summaryFallback.reason
  if (result.error?.code === 'SUMMARY_SKIPPED') return result.error.message
  return null
}

// ---------------------------------------------------------------------------------------------
// The PRD's extreme case: the empty tail

describe('tailRetentionRatio: 0', () => {
  for (const format of ['anthropic', 'openai', 'openai-responses', 'ai-sdk', 'gemini', 'bedrock', 'langchain'] as FormatName[]) {
    it(`${format}: the head and the summary message, valid, restored exactly`, async () => {
      const messages = overTheWindow(format)
      const outputDir = tempDir()
      const { calls, summarizer } = counting()
      const result = await compactMessages(messages, { format, contextTokenLimit: WINDOW, tailRetentionRatio: 0, summarizer, outputDir, sessionId: 's' })
      expect(calls.length).toBe(1)
      expect(result.compacted).toBe(true)
      expect(result.error).toBeNull()
      expect(checkMessages(result.messages, { format })).toEqual([])
      expect(checkers[format](result.messages, messages)).toEqual([])
      // The head (the system prompt, where the format has it in the list) and the summary.
      const head = format === 'gemini' || format === 'bedrock' ? 0 : 1
      expect(result.messages.length).toBe(head + 1)
      if (head) expect(result.messages[0]).toBe(messages[0])
      expect(result.stats.retainedMessageCount).toBe(head)
      expect(result.stats.compactedMessageCount).toBe(messages.length - head)
      expect(await restoreMessages(result.messages, { outputDir, sessionId: 's', format } as any)).toEqual(messages)
    })
  }

  it('is accepted by the options check, and out-of-range ratios are not', async () => {
    expect(() => new Compactor({ tailRetentionRatio: 0 })).not.toThrow()
    for (const bad of [-0.1, 1.5, Number.NaN]) {
      await expect(compactMessages([], { tailRetentionRatio: bad })).rejects.toThrow(/tailRetentionRatio: expected a number from 0 to 1/)
    }
  })

  it('the Anthropic list ends with the summary, a user message, as the API needs', async () => {
    const messages = overTheWindow('anthropic')
    const result = await compactMessages(messages, { contextTokenLimit: WINDOW, tailRetentionRatio: 0, provider: 'extractive', outputDir: tempDir() })
    expect(result.messages.at(-1)).toMatchObject({ role: 'user' })
    expect(result.messages.at(-1).content).toMatch(/^\[context-compact\]/)
  })
})
