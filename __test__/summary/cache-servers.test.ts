// The local Anthropic and OpenAI servers of benchmark/servers are the oracle for the shared
// summary request (issue 21) and the economics benchmark, so they are tested first: each test
// here fails on a server that accepts anything or caches everything. The rules and their sources
// are in benchmark/CACHE-RULES.md.
import { afterEach, describe, expect, it } from 'vitest'

// @ts-ignore: plain ESM JavaScript shared with the node benchmark scripts
import { LOOKBACK_BLOCKS, modelInfo, startAnthropicServer } from '../../benchmark/servers/anthropic-messages.mjs'
// @ts-ignore: plain ESM JavaScript shared with the node benchmark scripts
import { startOpenAIServer } from '../../benchmark/servers/openai-chat.mjs'

type Json = any
interface Server {
  url: string
  requests: Json[]
  close(): Promise<void>
  reset(): void
}

const servers: Server[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

async function anthropic(options: Json = {}): Promise<Server> {
  const server = await startAnthropicServer(options)
  servers.push(server)
  return server
}
async function openai(options: Json = {}): Promise<Server> {
  const server = await startOpenAIServer(options)
  servers.push(server)
  return server
}

async function post(url: string, body: Json, headers: Record<string, string>) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) })
  return { status: response.status, body: (await response.json()) as Json }
}
const ANTHROPIC_HEADERS = { 'x-api-key': 'test-key', 'anthropic-version': '2023-06-01' }
const send = (server: Server, body: Json, headers: Record<string, string> = {}) => post(`${server.url}/v1/messages`, body, { ...ANTHROPIC_HEADERS, ...headers })
const chat = (server: Server, body: Json, headers: Record<string, string> = { authorization: 'Bearer test-key' }) => post(`${server.url}/v1/chat/completions`, body, headers)

/** About `n` o200k tokens of distinct text ("w<seed>-<i> " is about 4 tokens). */
const text = (n: number, seed: string) => Array.from({ length: Math.ceil(n / 4) }, (_, i) => `w${seed}-${i}`).join(' ')
const EPHEMERAL = { type: 'ephemeral' }

/** Messages alternating user/assistant, one text block each, starting and ending with user. */
function turns(count: number, seed = 't'): Json[] {
  return Array.from({ length: count }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: [{ type: 'text', text: `${seed} message ${i}: ${text(60, `${seed}${i}`)}` }] }))
}

/** A copy of `messages` with `cache_control` on the last block of the last message (as Claude Code does). */
function markLast(messages: Json[]): Json[] {
  const copy = structuredClone(messages)
  const last = copy.at(-1)
  last.content.at(-1).cache_control = EPHEMERAL
  return copy
}

/** `messages` extended by exactly `blocks` content blocks, still ending with a user message. */
function extend(messages: Json[], blocks: number, seed: string): Json[] {
  const out = structuredClone(messages)
  const pairs = Math.floor(blocks / 2)
  for (let p = 0; p < pairs; p++) {
    out.push({ role: 'assistant', content: [{ type: 'text', text: `${seed} answer ${p}: ${text(40, `${seed}a${p}`)}` }] })
    out.push({ role: 'user', content: [{ type: 'text', text: `${seed} question ${p}: ${text(40, `${seed}q${p}`)}` }] })
  }
  if (blocks % 2 === 1) out.at(-1).content.push({ type: 'text', text: `${seed} extra block ${text(20, `${seed}x`)}` })
  return out
}

const SYSTEM = text(1500, 'sys')
const TOOLS = [
  { name: 'read_file', description: `Reads a file. ${text(200, 'rf')}`, input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  { name: 'run', description: `Runs a shell command. ${text(200, 'rn')}`, input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } },
]

describe('anthropic server: prompt-cache accounting', () => {
  it('reads, on the same request sent twice, everything up to the breakpoint and bills what follows it in full', async () => {
    const server = await anthropic()
    const messages = [{ role: 'user', content: [{ type: 'text', text: text(800, 'a'), cache_control: EPHEMERAL }, { type: 'text', text: `after the breakpoint ${text(100, 'b')}` }] }]
    const body = { model: 'claude-sonnet-4-5', max_tokens: 64, system: SYSTEM, messages }
    const first = await send(server, body)
    const second = await send(server, body)
    expect(first.status).toBe(200)
    const u1 = first.body.usage
    const u2 = second.body.usage
    expect(u1.cache_read_input_tokens).toBe(0)
    expect(u1.cache_creation_input_tokens).toBeGreaterThan(2000)
    expect(u1.input_tokens).toBeGreaterThan(50)
    expect(u2).toMatchObject({ cache_read_input_tokens: u1.cache_creation_input_tokens, cache_creation_input_tokens: 0, input_tokens: u1.input_tokens })
    expect(server.requests[1].usage).toEqual(u2)
  })

  it(`finds a prior write up to ${LOOKBACK_BLOCKS - 1} blocks back and misses it at ${LOOKBACK_BLOCKS} unless an earlier breakpoint reaches it`, async () => {
    const base = turns(11)
    const run = async (blocks: number, earlierBreakpoint = false) => {
      const server = await anthropic()
      const first = await send(server, { model: 'claude-sonnet-4-5', max_tokens: 64, system: SYSTEM, messages: markLast(base) })
      const longer = markLast(extend(base, blocks, `x${blocks}`))
      if (earlierBreakpoint) longer[base.length - 1].content.at(-1).cache_control = EPHEMERAL
      const second = await send(server, { model: 'claude-sonnet-4-5', max_tokens: 64, system: SYSTEM, messages: longer })
      expect(second.status).toBe(200)
      return { written: first.body.usage.cache_creation_input_tokens, usage: second.body.usage, total: server.requests[1].cache.totalTokens }
    }
    // [PC] "The lookback window is 20 blocks … counting the breakpoint itself as the first."
    const within = await run(LOOKBACK_BLOCKS - 1)
    expect(within.usage.cache_read_input_tokens).toBe(within.written)
    expect(within.usage.cache_creation_input_tokens).toBe(within.total - within.written)
    expect(within.usage.input_tokens).toBe(0)

    const beyond = await run(LOOKBACK_BLOCKS)
    expect(beyond.usage.cache_read_input_tokens).toBe(0)
    expect(beyond.usage.cache_creation_input_tokens).toBe(beyond.total)

    const twoBreakpoints = await run(LOOKBACK_BLOCKS + 10, true)
    expect(twoBreakpoints.usage.cache_read_input_tokens).toBe(twoBreakpoints.written)
    expect(twoBreakpoints.usage.cache_creation_input_tokens).toBe(twoBreakpoints.total - twoBreakpoints.written)
  })

  it('reads nothing after a tool definition changed, and everything when the tools are the same', async () => {
    const server = await anthropic()
    const body = { model: 'claude-sonnet-4-5', max_tokens: 64, tools: TOOLS, system: SYSTEM, messages: markLast(turns(3)) }
    await send(server, body)
    const same = await send(server, body)
    expect(same.body.usage.cache_read_input_tokens).toBeGreaterThan(2000)
    const changed = structuredClone(body)
    changed.tools[1].description += ' Times out after 120 s.'
    const after = await send(server, changed)
    expect(after.body.usage.cache_read_input_tokens).toBe(0)
    expect(after.body.usage.cache_creation_input_tokens).toBe(server.requests[2].cache.totalTokens)
  })

  it('keeps tools and system cached but not the messages when tool_choice or the thinking settings change', async () => {
    const system = [{ type: 'text', text: SYSTEM, cache_control: EPHEMERAL }]
    const base = { model: 'claude-sonnet-4-5', max_tokens: 4096, tools: TOOLS, system, messages: markLast(turns(5)) }
    for (const change of [{ tool_choice: { type: 'any' } }, { thinking: { type: 'enabled', budget_tokens: 2048 } }]) {
      const server = await anthropic()
      await send(server, base)
      const changed = await send(server, { ...base, ...change })
      expect(changed.status).toBe(200)
      const systemEnd = server.requests[1].cache.breakpoints[0]
      expect(systemEnd.where).toBe('system.0')
      expect(changed.body.usage.cache_read_input_tokens).toBe(systemEnd.tokens)
      expect(changed.body.usage.cache_creation_input_tokens).toBe(server.requests[1].cache.totalTokens - systemEnd.tokens)
      // The unchanged request still reads everything.
      const again = await send(server, base)
      expect(again.body.usage.cache_read_input_tokens).toBe(server.requests[2].cache.totalTokens)
    }
  })

  it("caches nothing below the model's minimum cacheable length (1,024 tokens on Sonnet 4.5, 4,096 on Haiku 4.5)", async () => {
    const server = await anthropic()
    const small = { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: [{ type: 'text', text: text(600, 's'), cache_control: EPHEMERAL }] }] }
    for (let i = 0; i < 2; i++) {
      const { body } = await send(server, small)
      expect(body.usage).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 0 })
      expect(body.usage.input_tokens).toBe(server.requests[i].cache.totalTokens)
    }
    expect(modelInfo('claude-haiku-4-5-20251001').minCacheableTokens).toBe(4096)
    const medium = (model: string) => ({ model, max_tokens: 64, messages: [{ role: 'user', content: [{ type: 'text', text: text(2500, 'm'), cache_control: EPHEMERAL }] }] })
    expect((await send(server, medium('claude-sonnet-4-5'))).body.usage.cache_creation_input_tokens).toBeGreaterThan(1024)
    expect((await send(server, medium('claude-haiku-4-5-20251001'))).body.usage.cache_creation_input_tokens).toBe(0)
  })

  it('expires entries after 5 minutes without use, and a read renews them', async () => {
    let clock = 1_000_000
    const server = await anthropic({ now: () => clock })
    const body = { model: 'claude-sonnet-4-5', max_tokens: 64, system: SYSTEM, messages: markLast(turns(3)) }
    await send(server, body)
    clock += 4 * 60_000
    expect((await send(server, body)).body.usage.cache_read_input_tokens).toBeGreaterThan(0)
    clock += 4 * 60_000 // 8 minutes after the write, 4 after the read that renewed it
    expect((await send(server, body)).body.usage.cache_read_input_tokens).toBeGreaterThan(0)
    clock += 5 * 60_000 + 1
    const expired = await send(server, body)
    expect(expired.body.usage.cache_read_input_tokens).toBe(0)
    expect(expired.body.usage.cache_creation_input_tokens).toBeGreaterThan(0)
  })

  it('caches with the top-level cache_control (automatic caching) at the last block', async () => {
    const server = await anthropic()
    const body = { model: 'claude-sonnet-4-5', max_tokens: 64, cache_control: EPHEMERAL, system: SYSTEM, messages: turns(3) }
    await send(server, body)
    const second = await send(server, body)
    expect(second.body.usage).toMatchObject({ cache_read_input_tokens: server.requests[1].cache.totalTokens, cache_creation_input_tokens: 0, input_tokens: 0 })
    expect(server.requests[1].cache.breakpoints).toEqual([expect.objectContaining({ automatic: true, where: 'messages.2.content.0' })])
  })

  it('isolates caches between API keys (organizations)', async () => {
    const server = await anthropic({ apiKey: ['test-key', 'other-key'] })
    const body = { model: 'claude-sonnet-4-5', max_tokens: 64, system: SYSTEM, messages: markLast(turns(3)) }
    await send(server, body)
    expect((await send(server, body, { 'x-api-key': 'other-key' })).body.usage.cache_read_input_tokens).toBe(0)
    expect((await send(server, body)).body.usage.cache_read_input_tokens).toBeGreaterThan(0)
  })

  it('strips earlier thinking at a new user turn on models that keep only the last turn (Sonnet 4.5), not on Opus 4.6', async () => {
    const thinking = { type: 'enabled', budget_tokens: 1024 }
    const loop = [
      { role: 'user', content: [{ type: 'text', text: `Fix the failing test. ${text(5000, 'q')}` }] },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'I should read the test first.', signature: 'sig-1' }, { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: '/repo/test.js' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'expect(add(1, 2)).toBe(3)' }] },
    ]
    const next = [...loop, { role: 'assistant', content: [{ type: 'thinking', thinking: 'The test is right.', signature: 'sig-2' }, { type: 'text', text: 'add() is fixed.' }] }, { role: 'user', content: [{ type: 'text', text: 'Thanks, now commit it.' }] }]
    const reads: Record<string, number> = {}
    for (const model of ['claude-sonnet-4-5', 'claude-opus-4-6']) {
      const server = await anthropic()
      const first = await send(server, { model, max_tokens: 2048, thinking, tools: TOOLS, messages: markLast(loop) })
      expect(first.status).toBe(200)
      expect(server.requests[0].cache.strippedThinking).toEqual([])
      const second = await send(server, { model, max_tokens: 2048, thinking, tools: TOOLS, messages: markLast(next) })
      expect(second.status).toBe(200)
      reads[model] = second.body.usage.cache_read_input_tokens
      if (model === 'claude-sonnet-4-5') expect(server.requests[1].cache.strippedThinking).toEqual(['messages.1.content.0', 'messages.3.content.0'])
      else expect(reads[model]).toBe(first.body.usage.cache_creation_input_tokens)
    }
    expect(reads['claude-sonnet-4-5']).toBe(0)
    expect(reads['claude-opus-4-6']).toBeGreaterThan(5000)
  })
})

describe('anthropic server: request validation', () => {
  const valid = { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] }
  const expectError = (result: Json, status: number, type: string, message: string | RegExp) => {
    expect(result.status).toBe(status)
    expect(result.body.type).toBe('error')
    expect(result.body.error.type).toBe(type)
    if (typeof message === 'string') expect(result.body.error.message).toBe(message)
    else expect(result.body.error.message).toMatch(message)
  }

  it('answers 401 without a valid x-api-key and 400 without anthropic-version', async () => {
    const server = await anthropic()
    expectError(await post(`${server.url}/v1/messages`, valid, { 'anthropic-version': '2023-06-01' }), 401, 'authentication_error', 'x-api-key header is required')
    expectError(await send(server, valid, { 'x-api-key': 'wrong' }), 401, 'authentication_error', 'invalid x-api-key')
    expectError(await post(`${server.url}/v1/messages`, valid, { 'x-api-key': 'test-key' }), 400, 'invalid_request_error', 'anthropic-version: header is required')
    expect((await send(server, valid)).status).toBe(200)
  })

  it('requires model, max_tokens and messages, and a first user message', async () => {
    const server = await anthropic()
    expectError(await send(server, { ...valid, model: undefined }), 400, 'invalid_request_error', 'model: Field required')
    expectError(await send(server, { ...valid, max_tokens: undefined }), 400, 'invalid_request_error', 'max_tokens: Field required')
    expectError(await send(server, { ...valid, messages: undefined }), 400, 'invalid_request_error', 'messages: Field required')
    expectError(await send(server, { ...valid, messages: [{ role: 'assistant', content: 'hi' }] }), 400, 'invalid_request_error', 'messages: first message must use the "user" role')
  })

  it('rejects a role:"system" message', async () => {
    const server = await anthropic()
    const body = { ...valid, messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'hello' }] }
    expectError(await send(server, body), 400, 'invalid_request_error', 'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.')
  })

  it('rejects orphan tool results and unanswered tool calls, and accepts a valid tool exchange followed by an instruction', async () => {
    const server = await anthropic()
    const use = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_A', name: 'run', input: { command: 'ls' } }] }
    const request = (messages: Json[]) => send(server, { ...valid, tools: TOOLS, messages })
    expectError(
      await request([{ role: 'user', content: 'go' }, use, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_A', content: 'x' }, { type: 'tool_result', tool_use_id: 'toolu_B', content: 'y' }] }]),
      400,
      'invalid_request_error',
      'messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_B. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
    )
    expectError(
      await request([{ role: 'user', content: 'go' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_A', content: 'x' }] }]),
      400,
      'invalid_request_error',
      'messages.2: `tool_result` block(s) provided when previous message does not contain any `tool_use` blocks',
    )
    const unanswered = 'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_A. Each `tool_use` block must have a corresponding `tool_result` block in the next message.'
    expectError(await request([{ role: 'user', content: 'go' }, use, { role: 'user', content: 'never mind' }]), 400, 'invalid_request_error', unanswered)
    // Text before the result: [TU] "the tool_result blocks must come FIRST in the content array".
    expectError(
      await request([{ role: 'user', content: 'go' }, use, { role: 'user', content: [{ type: 'text', text: 'here:' }, { type: 'tool_result', tool_use_id: 'toolu_A', content: 'x' }] }]),
      400,
      'invalid_request_error',
      unanswered,
    )
    // Consecutive user messages form one turn: a result, then an instruction, is valid.
    const ok = await request([{ role: 'user', content: 'go' }, use, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_A', content: 'x' }] }, { role: 'user', content: 'Summarize the conversation.' }])
    expect(ok.status).toBe(200)
  })

  it('allows at most 4 cache breakpoints, the automatic one included', async () => {
    const server = await anthropic()
    const blocks = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'text', text: `part ${i}`, cache_control: EPHEMERAL }))
    expect((await send(server, { ...valid, messages: [{ role: 'user', content: blocks(4) }] })).status).toBe(200)
    expectError(await send(server, { ...valid, messages: [{ role: 'user', content: blocks(5) }] }), 400, 'invalid_request_error', 'A maximum of 4 blocks with cache_control may be provided. Found 5.')
    const four = [...blocks(4), { type: 'text', text: 'last, unmarked' }]
    expectError(await send(server, { ...valid, cache_control: EPHEMERAL, messages: [{ role: 'user', content: four }] }), 400, 'invalid_request_error', 'A maximum of 4 blocks with cache_control may be provided. Found 5.')
    // The automatic breakpoint on a block that already has one of the same TTL is a no-op.
    expect((await send(server, { ...valid, cache_control: EPHEMERAL, messages: [{ role: 'user', content: blocks(4) }] })).status).toBe(200)
  })

  it('checks thinking budgets and forced tool use under thinking', async () => {
    const server = await anthropic()
    expectError(await send(server, { ...valid, max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 2048 } }), 400, 'invalid_request_error', '`max_tokens` must be greater than `thinking.budget_tokens`.')
    expectError(await send(server, { ...valid, max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 512 } }), 400, 'invalid_request_error', 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024')
    expectError(
      await send(server, { ...valid, max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 }, tools: TOOLS, tool_choice: { type: 'any' } }),
      400,
      'invalid_request_error',
      'Thinking may not be enabled when tool_choice forces tool use.',
    )
    expectError(await send(server, { ...valid, tools: TOOLS, tool_choice: { type: 'required' } }), 400, 'invalid_request_error', /^tool_choice: Input tag 'required'/)
    expect((await send(server, { ...valid, max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 }, tools: TOOLS, tool_choice: { type: 'auto' } })).status).toBe(200)
  })

  it('accepts a final assistant message as a prefill on Sonnet 4.5 and refuses it on Opus 4.6', async () => {
    const server = await anthropic()
    const messages = [{ role: 'user', content: 'Answer in JSON.' }, { role: 'assistant', content: '{' }]
    expect((await send(server, { ...valid, messages })).status).toBe(200)
    expectError(await send(server, { ...valid, model: 'claude-opus-4-6', messages }), 400, 'invalid_request_error', 'Prefilling assistant messages is not supported for this model.')
  })
})

describe('anthropic server: replies and records', () => {
  it('replies with a summary that quotes the last user message, records the raw body, and can be scripted', async () => {
    let script: Json = undefined
    const server = await anthropic({ respond: () => script })
    const raw = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 2000, messages: [{ role: 'user', content: 'Edit /repo/src/a.ts.\n\nSUMMARIZE-INSTRUCTION-42: write the summary now.' }] })
    const plain = await post(`${server.url}/v1/messages`, raw, ANTHROPIC_HEADERS)
    expect(plain.body).toMatchObject({ type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', stop_reason: 'end_turn', stop_sequence: null })
    expect(plain.body.content[0].text).toContain('SUMMARIZE-INSTRUCTION-42')
    expect(plain.body.content[0].text).toContain('/repo/src/a.ts')
    expect(server.requests[0].rawBody).toBe(raw)

    script = [{ type: 'tool_use', id: 'toolu_X', name: 'run', input: { command: 'ls' } }]
    expect((await post(`${server.url}/v1/messages`, raw, ANTHROPIC_HEADERS)).body.stop_reason).toBe('tool_use')
    script = []
    const empty = await post(`${server.url}/v1/messages`, raw, ANTHROPIC_HEADERS)
    expect(empty.body.content).toEqual([])
    script = [{ type: 'text', text: text(400, 'long') }]
    const cut = await send(server, { model: 'claude-sonnet-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] })
    expect(cut.body).toMatchObject({ stop_reason: 'max_tokens', usage: { output_tokens: 50 } })
    script = { status: 529 }
    const overloaded = await send(server, { model: 'claude-sonnet-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] })
    expect(overloaded).toMatchObject({ status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } })
    script = { content: [{ type: 'text', text: 'slow' }], delayMs: 150 }
    const started = Date.now()
    await send(server, { model: 'claude-sonnet-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] })
    expect(Date.now() - started).toBeGreaterThanOrEqual(140)
  })

  it('writes nothing to the cache for a request answered with an error', async () => {
    let fail = true
    const server = await anthropic({ respond: () => (fail ? { status: 500 } : undefined) })
    const body = { model: 'claude-sonnet-4-5', max_tokens: 64, system: SYSTEM, messages: markLast(turns(3)) }
    expect((await send(server, body)).status).toBe(500)
    fail = false
    expect((await send(server, body)).body.usage.cache_read_input_tokens).toBe(0)
    expect((await send(server, body)).body.usage.cache_read_input_tokens).toBeGreaterThan(0)
  })
})

describe('openai server: automatic prefix caching', () => {
  const system = text(2000, 'sys')
  const body = { model: 'gpt-5', messages: [{ role: 'system', content: system }, { role: 'user', content: 'What does the build script do?' }] }

  it('reads, on a ~2,000-token prompt sent twice, the largest 128-token multiple of the prompt from 1,024 tokens on', async () => {
    const server = await openai()
    const first = (await chat(server, body)).body.usage
    const second = (await chat(server, body)).body.usage
    expect(first.prompt_tokens).toBeGreaterThan(1900)
    expect(first.prompt_tokens_details.cached_tokens).toBe(0)
    expect(second.prompt_tokens).toBe(first.prompt_tokens)
    expect(second.prompt_tokens_details.cached_tokens).toBe(Math.floor(first.prompt_tokens / 128) * 128)
    expect(second.prompt_tokens_details.cached_tokens).toBeGreaterThanOrEqual(1024)
  })

  it('reads the earlier prompt when a request extends it, up to its last full 128-token block', async () => {
    const server = await openai()
    const first = (await chat(server, body)).body.usage
    const longer = { ...body, messages: [...body.messages, { role: 'assistant', content: 'It compiles the addon.' }, { role: 'user', content: 'And the tests?' }] }
    const second = (await chat(server, longer)).body.usage
    expect(second.prompt_tokens).toBeGreaterThan(first.prompt_tokens)
    expect(second.prompt_tokens_details.cached_tokens).toBe(Math.floor(first.prompt_tokens / 128) * 128)
  })

  it('caches nothing under 1,024 tokens', async () => {
    const server = await openai()
    const small = { model: 'gpt-5', messages: [{ role: 'user', content: text(700, 'small') }] }
    await chat(server, small)
    const again = (await chat(server, small)).body.usage
    expect(again.prompt_tokens).toBeLessThan(1024)
    expect(again.prompt_tokens_details.cached_tokens).toBe(0)
  })

  it('partitions by prompt_cache_key and model, and misses after a tool changed', async () => {
    const server = await openai()
    const keyed = { ...body, prompt_cache_key: 'session-1' }
    await chat(server, keyed)
    expect((await chat(server, { ...body, prompt_cache_key: 'session-2' })).body.usage.prompt_tokens_details.cached_tokens).toBe(0)
    expect((await chat(server, { ...keyed, model: 'gpt-5-mini' })).body.usage.prompt_tokens_details.cached_tokens).toBe(0)
    expect((await chat(server, keyed)).body.usage.prompt_tokens_details.cached_tokens).toBeGreaterThanOrEqual(1024)

    const tool = (description: string) => [{ type: 'function', function: { name: 'bash', description, parameters: { type: 'object', properties: { command: { type: 'string' } } } } }]
    await chat(server, { ...body, tools: tool('Runs a command.') })
    expect((await chat(server, { ...body, tools: tool('Runs a command.') })).body.usage.prompt_tokens_details.cached_tokens).toBeGreaterThanOrEqual(1024)
    expect((await chat(server, { ...body, tools: tool('Runs a shell command.') })).body.usage.prompt_tokens_details.cached_tokens).toBe(0)
  })

  it('forgets a prefix after 5 minutes without use', async () => {
    let clock = 5_000_000
    const server = await openai({ now: () => clock })
    await chat(server, body)
    clock += 5 * 60_000 + 1
    expect((await chat(server, body)).body.usage.prompt_tokens_details.cached_tokens).toBe(0)
  })
})

describe('openai server: validation and replies', () => {
  const call = (id: string) => ({ id, type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } })
  const TOOLS_OAI = [{ type: 'function', function: { name: 'bash', parameters: { type: 'object', properties: {} } } }]

  it('answers 401 with the API error body for a missing or wrong key, without echoing the key', async () => {
    const server = await openai()
    const body = { model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }] }
    const missing = await chat(server, body, {})
    expect(missing.status).toBe(401)
    expect(missing.body.error).toMatchObject({ type: 'invalid_request_error', param: null })
    const wrong = await chat(server, body, { authorization: 'Bearer sk-proj-SECRET-0123456789' })
    expect(wrong.status).toBe(401)
    expect(wrong.body).toEqual({ error: { message: expect.stringMatching(/^Incorrect API key provided: /), type: 'invalid_request_error', param: null, code: 'invalid_api_key' } })
    expect(JSON.stringify(wrong.body)).not.toContain('SECRET-0123456789')
  })

  it("rejects tool messages without a preceding assistant 'tool_calls', and calls left unanswered", async () => {
    const server = await openai()
    const orphan = await chat(server, { model: 'gpt-5', tools: TOOLS_OAI, messages: [{ role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 'call_1', content: 'x' }] })
    expect(orphan.status).toBe(400)
    expect(orphan.body.error).toEqual({ message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", type: 'invalid_request_error', param: 'messages.[1].role', code: null })
    const unanswered = await chat(server, {
      model: 'gpt-5',
      tools: TOOLS_OAI,
      messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: [call('call_1'), call('call_2')] }, { role: 'tool', tool_call_id: 'call_1', content: 'x' }, { role: 'user', content: 'go on' }],
    })
    expect(unanswered.status).toBe(400)
    expect(unanswered.body.error.message).toBe("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_2")
    const parallel = await chat(server, {
      model: 'gpt-5',
      tools: TOOLS_OAI,
      messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: [call('call_1'), call('call_2')] }, { role: 'tool', tool_call_id: 'call_2', content: 'y' }, { role: 'tool', tool_call_id: 'call_1', content: 'x' }],
    })
    expect(parallel.status).toBe(200)
  })

  it('scripts tool calls, length stops and errors', async () => {
    let script: Json
    const server = await openai({ respond: () => script })
    const body = { model: 'gpt-5', max_completion_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }
    script = { tool_calls: [call('call_9')] }
    const tools = (await chat(server, body)).body
    expect(tools.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [call('call_9')] } })
    script = text(200, 'long')
    expect((await chat(server, body)).body.choices[0].finish_reason).toBe('length')
    script = { status: 429 }
    const limited = await chat(server, body)
    expect(limited).toMatchObject({ status: 429, body: { error: { code: 'rate_limit_exceeded' } } })
  })
})
