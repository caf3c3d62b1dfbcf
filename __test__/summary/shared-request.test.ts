// The summary request reads the loop's prompt cache (issue 21): with `agentRequest`, the
// anthropic and openai providers send the loop's own request plus one instruction. Against the
// local servers of benchmark/servers, which implement the providers' documented validation and
// cache accounting (breakpoints, the 20-block look-back, prefix matching, usage fields; see
// benchmark/CACHE-RULES.md), not servers that accept anything.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

// @ts-expect-error plain ESM without types
import { startAnthropicServer } from '../../benchmark/servers/anthropic-messages.mjs'
// @ts-expect-error plain ESM without types
import { startOpenAIServer } from '../../benchmark/servers/openai-chat.mjs'
// @ts-expect-error plain ESM without types
import { CLAUDE_CODE_SYSTEM, CLAUDE_CODE_TOOLS, MINI_SWE_AGENT_TOOLS } from '../../benchmark/economics/synthetic-agent.mjs'

const { compactMessages, Compactor, restoreMessages, checkMessages } = require('../../index.js')

const REAL = join(__dirname, '..', '..', '..', 'shared', 'data', 'real')
const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'cc-shared-'))
  dirs.push(d)
  return d
}

const ANTHROPIC_BODY = {
  model: 'claude-sonnet-4-5',
  max_tokens: 32000,
  system: [{ type: 'text', text: CLAUDE_CODE_SYSTEM, cache_control: { type: 'ephemeral' } }],
  tools: CLAUDE_CODE_TOOLS,
  metadata: { user_id: 'shared-request-test' },
}

/** The loop's last request, as Claude Code sends it: a breakpoint on the last block. */
function loopRequest(agentRequest: object, messages: any[]) {
  const sent = structuredClone(messages)
  const last = sent.at(-1)
  if (typeof last.content === 'string') last.content = [{ type: 'text', text: last.content }]
  last.content.at(-1).cache_control = { type: 'ephemeral' }
  return { ...agentRequest, messages: sent }
}

async function post(url: string, body: object, headers: Record<string, string>) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  expect(response.status, await response.clone().text()).toBe(200)
}

/** A coding session in the Anthropic form, ending where the loop's last request returned tool calls. */
function session(rounds: number, marker = 'MIDDLE-MARKER-7') {
  const messages: any[] = [{ role: 'user', content: `Fix the parser tests in src/parser.rs. ${marker}` }]
  for (let i = 0; i < rounds; i++) {
    messages.push({ role: 'assistant', content: [
      { type: 'text', text: `Reading src/f${i}.rs to see what it does with the tokens. `.repeat(6) },
      { type: 'tool_use', id: `toolu_${i}`, name: 'Read', input: { file_path: `/repo/src/f${i}.rs`, limit: 2.5e3 } },
    ] })
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: `pub fn f${i}(x: u32) -> u32 { x * ${i} } // "é" \\ \u0001\n`.repeat(30) }] })
  }
  return messages
}

/** The loop's request, then the compaction: the summary request is the server's last record. */
async function compactAfterLoop(server: any, messages: any[], options: object) {
  const loopMessages = messages.slice(0, -2) // the loop's last request, before its reply and the tool results
  await post(`${server.url}/v1/messages`, loopRequest(ANTHROPIC_BODY, loopMessages), { 'x-api-key': 'test-key', 'anthropic-version': '2023-06-01' })
  const outputDir = tmp()
  const result = await compactMessages(messages, {
    provider: 'anthropic', apiKey: 'test-key', baseUrl: server.url, agentRequest: ANTHROPIC_BODY,
    force: true, outputDir, maxRetries: 1, retryBaseDelayMs: 0, ...options,
  })
  return { result, outputDir, summaryRequests: server.requests.slice(1) }
}

describe('the shared summary request (Anthropic)', () => {
  it('is the loop request plus one instruction, byte for byte, and reads the cache', async () => {
    const server = await startAnthropicServer()
    try {
      const messages = session(40)
      const { result, outputDir, summaryRequests } = await compactAfterLoop(server, messages, {})
      expect(result.compacted).toBe(true)
      expect(result.summaryRequest).toBe('shared')
      expect(summaryRequests).toHaveLength(1)
      const [request] = summaryRequests
      expect(request.status).toBe(200)
      // The conversation serializes as the caller's objects: same key order, numbers and escapes.
      const prefix = JSON.stringify(messages).slice(0, -1)
      expect(request.rawBody).toContain(`"messages":${prefix}`)
      expect(request.body.messages).toHaveLength(messages.length + 1)
      for (const key of ['model', 'system', 'tools', 'metadata']) expect(request.body[key]).toEqual((ANTHROPIC_BODY as any)[key])
      const instruction = request.body.messages.at(-1)
      expect(instruction.role).toBe('user')
      expect(instruction.content[0].text.startsWith('[context-compact] ')).toBe(true)
      // summaryUsage is what the server billed.
      const u = request.response.usage
      expect(result.summaryUsage).toEqual({
        requests: 1,
        inputTokens: u.input_tokens,
        cacheReadTokens: u.cache_read_input_tokens,
        cacheWriteTokens: u.cache_creation_input_tokens,
        outputTokens: u.output_tokens,
      })
      const input = u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens
      expect(u.cache_read_input_tokens / input).toBeGreaterThanOrEqual(0.85)
      // Everything else still holds: valid, the ledger, exact restore.
      expect(checkMessages(result.messages)).toEqual([])
      expect(result.summary).toContain('/repo/src/f0.rs')
      const restored = await restoreMessages(result.messages, { outputDir, sessionId: 'default' })
      expect(restored).toEqual(messages)
      // The audit log has the same numbers.
      const events = readFileSync(join(outputDir, 'default', 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
      expect(events.at(-1).summaryUsage).toEqual(result.summaryUsage)
    } finally {
      await server.close()
    }
  })

  it('a tool call in place of a summary is retried, then sent as the transcript', async () => {
    const server = await startAnthropicServer({
      respond: (body: any) => (body.tools ? { content: [{ type: 'tool_use', id: 'toolu_z', name: 'Bash', input: { command: 'ls' } }], stop_reason: 'tool_use' } : undefined),
    })
    try {
      const { result, summaryRequests } = await compactAfterLoop(server, session(30), {})
      expect(result.compacted).toBe(true)
      expect(result.summaryRequest).toBe('transcript')
      expect(summaryRequests.map((r: any) => Boolean(r.body.tools))).toEqual([true, true, false])
      expect(result.warnings.join('\n')).toContain('TOOL_CALL')
      expect(result.summaryUsage.requests).toBe(3)
    } finally {
      await server.close()
    }
  })

  it('an empty reply is retried, then sent as the transcript', async () => {
    const server = await startAnthropicServer({ respond: (body: any) => (body.tools ? [] : undefined) })
    try {
      const { result, summaryRequests } = await compactAfterLoop(server, session(30), {})
      expect(result.compacted).toBe(true)
      expect(result.summaryRequest).toBe('transcript')
      expect(summaryRequests).toHaveLength(3)
      expect(result.warnings.join('\n')).toContain('EMPTY_SUMMARY')
    } finally {
      await server.close()
    }
  })

  it("an agentRequest whose tools the server rejects falls back; a model it rejects fails clearly", async () => {
    const server = await startAnthropicServer()
    try {
      // A tool without its input_schema is a 400: the transcript request has no tools.
      const broken = { ...ANTHROPIC_BODY, tools: [{ name: 'Bash' }] }
      const messages = session(30)
      await post(`${server.url}/v1/messages`, loopRequest(ANTHROPIC_BODY, messages.slice(0, -2)), { 'x-api-key': 'test-key', 'anthropic-version': '2023-06-01' })
      const result = await compactMessages(messages, { provider: 'anthropic', apiKey: 'test-key', baseUrl: server.url, agentRequest: broken, summaryRequest: 'shared', force: true, outputDir: tmp(), retryBaseDelayMs: 0 })
      const statuses = server.requests.slice(1).map((r: any) => r.status)
      expect(statuses[0]).toBe(400)
      expect(statuses.at(-1)).toBe(200)
      expect(result.compacted).toBe(true)
      expect(result.summaryRequest).toBe('transcript')
      expect(result.warnings.join('\n')).toContain('BAD_REQUEST')
    } finally {
      await server.close()
    }
  })

  it('a conversation over the summary model window takes the transcript path', async () => {
    const server = await startAnthropicServer()
    try {
      const { result, summaryRequests } = await compactAfterLoop(server, session(40), { summaryContextTokens: 12_000 })
      expect(result.compacted).toBe(true)
      expect(result.summaryRequest).toBe('transcript')
      expect(summaryRequests.every((r: any) => !r.body.tools)).toBe(true)
    } finally {
      await server.close()
    }
  })

  it('an aborted signal rejects at once in shared mode', async () => {
    const server = await startAnthropicServer({ delayMs: 2_000 })
    try {
      const controller = new AbortController()
      const pending = compactMessages(session(30), { provider: 'anthropic', apiKey: 'test-key', baseUrl: server.url, agentRequest: ANTHROPIC_BODY, force: true, outputDir: tmp(), signal: controller.signal })
      setTimeout(() => controller.abort(), 100)
      await expect(pending).rejects.toMatchObject({ name: 'AbortError' })
    } finally {
      await server.close()
    }
  })

  it('the Compactor takes agentRequest in the constructor and per call', async () => {
    const server = await startAnthropicServer()
    try {
      const messages = session(40)
      await post(`${server.url}/v1/messages`, loopRequest(ANTHROPIC_BODY, messages.slice(0, -2)), { 'x-api-key': 'test-key', 'anthropic-version': '2023-06-01' })
      const compactor = new Compactor({ provider: 'anthropic', apiKey: 'test-key', baseUrl: server.url, agentRequest: { ...ANTHROPIC_BODY, system: 'an older system prompt' }, outputDir: tmp(), force: true })
      const result = await compactor.compact(messages, { agentRequest: ANTHROPIC_BODY })
      expect(result.summaryRequest).toBe('shared')
      expect(server.requests.at(-1).body.system).toEqual(ANTHROPIC_BODY.system)
      expect(result.summaryUsage.cacheReadTokens).toBeGreaterThan(0)
    } finally {
      await server.close()
    }
  })
})

describe('the shared summary request (OpenAI)', () => {
  it('keeps the loop body, passes prompt_cache_key, and reads the automatic prefix cache', async () => {
    const server = await startOpenAIServer()
    try {
      const messages: any[] = [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: 'Fix the parser. MIDDLE-MARKER-9' }]
      for (let i = 0; i < 40; i++) {
        messages.push({ role: 'assistant', content: null, tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: `cat src/f${i}.py` }) } }] })
        messages.push({ role: 'tool', tool_call_id: `call_${i}`, content: `def f${i}(x):\n    return x * ${i}\n`.repeat(20) })
      }
      const body = { model: 'gpt-4.1', tools: MINI_SWE_AGENT_TOOLS, prompt_cache_key: 'ticket-9' }
      await post(`${server.url}/v1/chat/completions`, { ...body, messages: messages.slice(0, -2) }, { authorization: 'Bearer test-key' })
      const outputDir = tmp()
      const result = await compactMessages(messages, { provider: 'openai', apiKey: 'test-key', baseUrl: server.url, agentRequest: body, force: true, outputDir, contextTokenLimit: 20_000 })
      expect(result.error, JSON.stringify(result.error)).toBeNull()
      expect(result.summaryRequest).toBe('shared')
      const request = server.requests.at(-1)
      expect(request.rawBody).toContain(`"messages":${JSON.stringify(messages).slice(0, -1)}`)
      expect(request.body.prompt_cache_key).toBe('ticket-9')
      const u = request.response.usage
      expect(result.summaryUsage).toEqual({
        requests: 1,
        inputTokens: u.prompt_tokens - u.prompt_tokens_details.cached_tokens,
        cacheReadTokens: u.prompt_tokens_details.cached_tokens,
        cacheWriteTokens: 0,
        outputTokens: u.completion_tokens,
      })
      expect(u.prompt_tokens_details.cached_tokens / u.prompt_tokens).toBeGreaterThanOrEqual(0.85)
      expect(await restoreMessages(result.messages, { outputDir, sessionId: 'default' })).toEqual(messages)
    } finally {
      await server.close()
    }
  })
})

const realSessions = existsSync(REAL) ? ['cc-spotter-gqc-pre', 'cc-spotter-4te-pre', 'cc-spotter-fum-post'] : []
// Skipped only when ../shared/data/real is absent (shared/ must sit beside the repository).
describe.skipIf(realSessions.length === 0)('real Claude Code sessions', () => {
  it.each(realSessions)('%s: at least 85 %% of the summary request is read from the cache', async (name) => {
    const messages = JSON.parse(readFileSync(join(REAL, `${name}.json`), 'utf8'))
    const usage = JSON.parse(readFileSync(join(REAL, `${name}.usage.json`), 'utf8'))
    const model = usage.at(-1).model
    const agentRequest = { ...ANTHROPIC_BODY, model }
    // The loop's last request: the messages up to the one after which it was made.
    const last = usage.at(-1).message_index_after_which_the_request_was_made
    const server = await startAnthropicServer()
    try {
      await post(`${server.url}/v1/messages`, loopRequest(agentRequest, messages.slice(0, last + 1)), { 'x-api-key': 'test-key', 'anthropic-version': '2023-06-01' })
      const result = await compactMessages(messages, { provider: 'anthropic', apiKey: 'test-key', baseUrl: server.url, agentRequest, force: true, outputDir: tmp(), summaryRequest: 'shared' })
      expect(result.compacted).toBe(true)
      expect(result.summaryRequest).toBe('shared')
      const u = result.summaryUsage
      expect(u.cacheReadTokens / (u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens)).toBeGreaterThanOrEqual(0.85)
      expect(checkMessages(result.messages)).toEqual([])
    } finally {
      await server.close()
    }
  })
})

// The loop a user copies from the README: the official Anthropic SDK, a plain system prompt, and
// caching asked for (top-level `cache_control`) or not at all. Its last request goes through the
// SDK to the local server, then the compaction runs with the default `summaryRequest: 'auto'`.
describe.skipIf(realSessions.length === 0)('a loop written from the README, on real Claude Code sessions', () => {
  // Relative prices of Anthropic's input tokens: written 1.25×, read 0.1×.
  const price = (u: any) => u.inputTokens + 1.25 * u.cacheWriteTokens + 0.1 * u.cacheReadTokens

  async function readmeLoop(name: string, caching: boolean, summaryRequest: 'auto' | 'shared' | 'transcript') {
    const Anthropic = require('@anthropic-ai/sdk').default
    const messages = JSON.parse(readFileSync(join(REAL, `${name}.json`), 'utf8'))
    const usage = JSON.parse(readFileSync(join(REAL, `${name}.usage.json`), 'utf8'))
    const request = {
      model: usage.at(-1).model,
      max_tokens: 4096,
      system: CLAUDE_CODE_SYSTEM,
      tools: CLAUDE_CODE_TOOLS,
      ...(caching ? { cache_control: { type: 'ephemeral' } } : {}),
    }
    const last = usage.at(-1).message_index_after_which_the_request_was_made
    const server = await startAnthropicServer({ apiKey: 'sk-ant-readme' })
    try {
      const client = new Anthropic({ apiKey: 'sk-ant-readme', baseURL: server.url, maxRetries: 0 })
      await client.messages.create({ ...request, messages: messages.slice(0, last + 1) })
      const result = await compactMessages(messages, {
        provider: 'anthropic', apiKey: 'sk-ant-readme', baseUrl: server.url, agentRequest: request,
        force: true, outputDir: tmp(), summaryRequest,
      })
      expect(result.compacted, JSON.stringify(result.error)).toBe(true)
      expect(checkMessages(result.messages)).toEqual([])
      return result
    } finally {
      await server.close()
    }
  }

  it.each(realSessions)('%s, top-level cache_control: auto shares and reads at least 85 %% from the cache', async (name) => {
    const result = await readmeLoop(name, true, 'auto')
    expect(result.summaryRequest).toBe('shared')
    const u = result.summaryUsage
    expect(u.cacheReadTokens / (u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens)).toBeGreaterThanOrEqual(0.85)
    expect(result.warnings.filter((w: string) => w.includes('cache'))).toEqual([])
  })

  it.each(realSessions)('%s, no caching: auto pays no more than the transcript, and says how to turn caching on', async (name) => {
    const auto = await readmeLoop(name, false, 'auto')
    const shared = await readmeLoop(name, false, 'shared')
    const transcript = await readmeLoop(name, false, 'transcript')
    expect(auto.summaryRequest).toBe('transcript')
    // What sharing would have cost: nothing read, everything written.
    expect(shared.summaryUsage.cacheReadTokens).toBe(0)
    expect(price(auto.summaryUsage)).toBeLessThanOrEqual(price(transcript.summaryUsage) * 1.05)
    expect(price(auto.summaryUsage)).toBeLessThan(price(shared.summaryUsage))
    const advice = auto.warnings.filter((w: string) => w.includes('cache_control'))
    expect(advice).toHaveLength(1)
    expect(advice[0]).toContain('top level')
  })
})

// A loop that sets its cache breakpoints as it builds each request, as Claude Code does: the
// breakpoints go on the request it sends (system prompt, last block), never into the messages it
// keeps or the body it gives as `agentRequest`. Only the usage it passes shows that it caches.
describe("'auto' and a loop that sets its breakpoints per request", () => {
  const PLAIN_BODY = { ...ANTHROPIC_BODY, system: CLAUDE_CODE_SYSTEM }
  const headers = { 'x-api-key': 'test-key', 'anthropic-version': '2023-06-01' }

  /** The request such a loop sends: breakpoints on its system prompt and its last block. */
  function perRequest(agentRequest: any, messages: any[]) {
    const request: any = loopRequest(agentRequest, messages)
    request.system = [{ type: 'text', text: agentRequest.system, cache_control: { type: 'ephemeral' } }]
    return request
  }

  async function afterLoop(server: any, messages: any[]) {
    await post(`${server.url}/v1/messages`, perRequest(PLAIN_BODY, messages.slice(0, -2)), headers)
    return server.requests[0].response.usage
  }

  const readShare = (u: any) => u.cacheReadTokens / (u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens)

  it('sends the shared request on the usage the loop passes, in the Anthropic and the AI SDK shapes, and through a Compactor', async () => {
    const messages = session(40)
    const aiSdk = (u: any) => ({
      inputTokens: u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens,
      outputTokens: u.output_tokens,
      inputTokenDetails: { noCacheTokens: u.input_tokens, cacheReadTokens: u.cache_read_input_tokens, cacheWriteTokens: u.cache_creation_input_tokens },
    })
    for (const shape of ['anthropic', 'ai-sdk', 'compactor'] as const) {
      const server = await startAnthropicServer()
      try {
        const loopUsage = await afterLoop(server, messages)
        // The loop's request wrote the conversation to the cache: its usage says so.
        expect(loopUsage.cache_creation_input_tokens).toBeGreaterThan(0)
        const usage = shape === 'ai-sdk' ? aiSdk(loopUsage) : loopUsage
        const options = { provider: 'anthropic', apiKey: 'test-key', baseUrl: server.url, agentRequest: PLAIN_BODY, force: true, outputDir: tmp(), maxRetries: 1, retryBaseDelayMs: 0 }
        const result =
          shape === 'compactor'
            ? await new Compactor(options).compact(messages, { usage })
            : await compactMessages(messages, { ...options, usage })
        expect(result.compacted, JSON.stringify(result.error)).toBe(true)
        expect(result.summaryRequest, `${shape}: ${result.warnings}`).toBe('shared')
        expect(result.warnings).toEqual([])
        const request = server.requests.at(-1)
        // The server saw the loop's prefix, byte for byte, and served it from the cache.
        expect(request.rawBody).toContain(`"messages":${JSON.stringify(messages.slice(0, -1)).slice(0, -1)}`)
        expect(readShare(result.summaryUsage)).toBeGreaterThanOrEqual(0.85)
      } finally {
        await server.close()
      }
    }
  })

  it('without the usage, sends the transcript and says what it looked at', async () => {
    const messages = session(40)
    const server = await startAnthropicServer()
    try {
      await afterLoop(server, messages)
      const result = await compactMessages(messages, {
        provider: 'anthropic', apiKey: 'test-key', baseUrl: server.url, agentRequest: PLAIN_BODY, force: true, outputDir: tmp(), maxRetries: 1, retryBaseDelayMs: 0,
      })
      expect(result.compacted).toBe(true)
      expect(result.summaryRequest).toBe('transcript')
      expect(server.requests.slice(1).every((r: any) => !r.body.tools)).toBe(true)
      const [warning, ...others] = result.warnings
      expect(others).toEqual([])
      expect(warning).toContain('no sign the loop caches: no top-level `cache_control` in agentRequest, no breakpoint in its system prompt or tools, none in the messages, and no usage was passed')
      expect(warning).toContain("pass its last response's `usage`")
    } finally {
      await server.close()
    }
  })

  it('says which evidence it read in the debug log', async () => {
    const messages = session(40)
    const server = await startAnthropicServer()
    try {
      const usage = await afterLoop(server, messages)
      const logs: any[] = []
      const result = await compactMessages(messages, {
        provider: 'anthropic', apiKey: 'test-key', baseUrl: server.url, agentRequest: PLAIN_BODY, force: true, outputDir: tmp(), usage, onLog: (e: any) => logs.push(e),
      })
      expect(result.summaryRequest).toBe('shared')
      const said = logs.map((e) => e.message).find((m: string) => m.includes('the loop caches'))
      expect(said).toContain(`the usage passed shows ${usage.cache_creation_input_tokens} tokens written to the cache`)
    } finally {
      await server.close()
    }
  })
})

// Skipped only when ../shared/data/real is absent (shared/ must sit beside the repository).
describe.skipIf(realSessions.length === 0)('a per-request-breakpoint loop on a real Claude Code session', () => {
  it('cc-spotter-gqc-pre: auto shares on the usage alone and pays the shared price, not the transcript', async () => {
    const name = 'cc-spotter-gqc-pre'
    const messages = JSON.parse(readFileSync(join(REAL, `${name}.json`), 'utf8'))
    const recorded = JSON.parse(readFileSync(join(REAL, `${name}.usage.json`), 'utf8'))
    const last = recorded.at(-1).message_index_after_which_the_request_was_made
    const agentRequest = { ...ANTHROPIC_BODY, model: recorded.at(-1).model, system: CLAUDE_CODE_SYSTEM }
    const run = async (usage: boolean, summaryRequest: 'auto' | 'transcript') => {
      const server = await startAnthropicServer()
      try {
        const sent: any = loopRequest(agentRequest, messages.slice(0, last + 1))
        sent.system = [{ type: 'text', text: CLAUDE_CODE_SYSTEM, cache_control: { type: 'ephemeral' } }]
        await post(`${server.url}/v1/messages`, sent, { 'x-api-key': 'test-key', 'anthropic-version': '2023-06-01' })
        const result = await compactMessages(messages, {
          provider: 'anthropic', apiKey: 'test-key', baseUrl: server.url, agentRequest, force: true, outputDir: tmp(), summaryRequest,
          ...(usage ? { usage: server.requests[0].response.usage } : {}),
        })
        expect(result.compacted, JSON.stringify(result.error)).toBe(true)
        expect(checkMessages(result.messages)).toEqual([])
        return result
      } finally {
        await server.close()
      }
    }
    // Relative prices of Anthropic's input tokens: written 1.25×, read 0.1×.
    const price = (u: any) => u.inputTokens + 1.25 * u.cacheWriteTokens + 0.1 * u.cacheReadTokens
    const withUsage = await run(true, 'auto')
    const transcript = await run(false, 'transcript')
    expect(withUsage.summaryRequest).toBe('shared')
    expect(withUsage.warnings.filter((w: string) => w.includes('cache'))).toEqual([])
    // The benchmark measures it at about a sixth of the transcript's cost.
    expect(price(withUsage.summaryUsage)).toBeLessThan(price(transcript.summaryUsage) / 3)
  })
})
