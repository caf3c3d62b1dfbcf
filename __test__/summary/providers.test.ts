// The HTTP providers end to end: compactMessages → addon → reqwest → a real HTTP server on
// 127.0.0.1 speaking the Anthropic or OpenAI protocol (request interceptors such as nock cannot
// see the addon's traffic).

import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { compactMessages, Compactor, generateSummary, type Message } from '../../index'
import { tempDir } from '../support/helpers'

const KEY = 'sk-test-SECRET-123'
const MARKER = 'MIDDLE-MARKER-7731'

interface Seen {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: any
}

interface Reply {
  status: number
  headers?: Record<string, string>
  body: unknown
}

/** `null`: never answer (the request hangs until the client gives up). */
type Handler = (request: Seen, index: number) => Reply | null

interface TestServer {
  url: string
  requests: Seen[]
  close(): Promise<void>
}

const servers: TestServer[] = []

async function startServer(handler: Handler): Promise<TestServer> {
  const requests: Seen[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      let body: any = text
      try {
        body = JSON.parse(text)
      } catch {}
      const seen: Seen = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body }
      requests.push(seen)
      const reply = handler(seen, requests.length - 1)
      if (reply === null) return
      const payload = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body)
      res.writeHead(reply.status, {
        'content-type': typeof reply.body === 'string' ? 'text/html' : 'application/json',
        ...reply.headers,
      })
      res.end(payload)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const handle: TestServer = {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.()
        server.close(() => resolve())
      }),
  }
  servers.push(handle)
  return handle
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

// No key from the developer's environment may reach these tests (or a real API).
const ENV_NAMES = ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_BASE_URL', 'OPENAI_BASE_URL']
const savedEnv: Record<string, string | undefined> = {}
beforeAll(() => {
  for (const name of ENV_NAMES) {
    savedEnv[name] = process.env[name]
    delete process.env[name]
  }
})
afterAll(() => {
  for (const name of ENV_NAMES) {
    if (savedEnv[name] === undefined) delete process.env[name]
    else process.env[name] = savedEnv[name]
  }
})

function conversation(): Message[] {
  const messages: Message[] = [{ role: 'system', content: 'You are a coding agent.' }]
  for (let i = 0; i < 20; i++) {
    messages.push({ role: 'user', content: `request ${i}: please edit src/module${i}.ts ${i === 2 ? MARKER : ''} ${'word '.repeat(40)}` })
    messages.push({ role: 'assistant', content: `answer ${i}: edited src/module${i}.ts ${'done '.repeat(40)}` })
  }
  return messages
}

const anthropicOk = (text: string): Reply => ({
  status: 200,
  body: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    usage: { input_tokens: 100, output_tokens: 20 },
  },
})

const anthropicError = (status: number, type: string, message: string): Reply => ({
  status,
  body: { type: 'error', error: { type, message } },
})

const openaiOk = (text: string): Reply => ({
  status: 200,
  body: {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: 'stop' }],
  },
})

/** Every file under a directory, recursively. */
function filesUnder(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) out.push(...filesUnder(path))
    else out.push(path)
  }
  return out
}

function expectNoKeyAnywhere(result: unknown, outputDir: string, extra: unknown[] = []) {
  expect(JSON.stringify(result)).not.toContain(KEY)
  for (const value of extra) expect(JSON.stringify(value)).not.toContain(KEY)
  for (const file of filesUnder(outputDir)) {
    expect(readFileSync(file, 'utf8'), file).not.toContain(KEY)
  }
}

// The conversations here are over their 2,000-token window: a failed summary is the result under
// test, so the summary written without an LLM (summaryFallback, summary-fallback.test.ts) is off.
const base = (url: string, outputDir: string) => ({
  apiKey: KEY,
  baseUrl: url,
  retryBaseDelayMs: 0,
  force: true,
  contextTokenLimit: 2000,
  summaryFallback: 'none' as const,
  outputDir,
})

describe('anthropic provider', () => {
  it('compacts with a summary from the Messages API', async () => {
    const server = await startServer(() => anthropicOk('## Goal\nEdit the modules (from the server)'))
    const outputDir = tempDir()
    const messages = conversation()
    const logs: any[] = []
    const result = await compactMessages(messages, {
      ...base(server.url, outputDir),
      provider: 'anthropic',
      summaryMaxTokens: 2048,
      onLog: (entry) => logs.push(entry),
    })
    expect(result.compacted).toBe(true)
    expect(result.provider).toBe('anthropic')
    expect(result.model).toBe('claude-sonnet-4-6')
    expect(result.summary).toContain('Edit the modules (from the server)')
    expect(result.error).toBeNull()
    expect(result.attempts).toBe(1)
    expect(result.archivePath).toBeTruthy()

    expect(server.requests).toHaveLength(1)
    const [request] = server.requests
    expect(request.method).toBe('POST')
    expect(request.path).toBe('/v1/messages')
    expect(request.headers['x-api-key']).toBe(KEY)
    expect(request.headers['anthropic-version']).toBe('2023-06-01')
    expect(request.headers['content-type']).toMatch(/^application\/json/)
    expect(request.headers.authorization).toBeUndefined()
    expect(request.body.model).toBe('claude-sonnet-4-6')
    expect(request.body.max_tokens).toBe(2048)
    expect(request.body.messages[0].role).toBe('user')
    expect(request.body.messages[0].content).toContain(MARKER)
    expect(JSON.stringify(request.body)).not.toContain(KEY)

    expectNoKeyAnywhere(result, outputDir, [logs])
  })

  it("a JS summarizer's request.prompt (rendered when read) is exactly what the provider sends, chunked or not", async () => {
    // Long tool results, so that a small summary window shortens them and splits the middle.
    const messages = conversation()
    for (let i = 3; i < 40; i += 8) {
      messages.splice(i, 0, {
        role: 'assistant',
        content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'read_file', input: { path: `src/m${i}.ts` } }],
      }, {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: `line ${i}\n`.repeat(900) }],
      })
    }
    for (const window of [undefined, 6000]) {
      const server = await startServer(() => anthropicOk('## Goal\nEdit the modules'))
      // The same list summarized twice, once by each summarizer: no checkpoint in between. Both
      // name the summary model, whose factor sizes the parts.
      const options = { ...base(server.url, tempDir()), model: 'claude-sonnet-4-6', customInstructions: 'Mention the files.', summaryContextTokens: window, checkpoints: false }
      await compactMessages(messages, { ...options, provider: 'anthropic' })
      const prompts: string[] = []
      await compactMessages(messages, {
        ...options,
        summarizer: async (request) => {
          prompts.push(request.prompt)
          return '## Goal\nEdit the modules'
        },
      })
      expect(prompts.length).toBe(window === undefined ? 1 : server.requests.length)
      expect(prompts.length).toBeGreaterThan(window === undefined ? 0 : 1)
      // The same text but for the key that frames the transcript, drawn anew for each request
      // (docs/trust.md): it is the only difference.
      const keyless = (prompt: string) => {
        const key = /The key of this request is ([0-9a-f]{16});/.exec(prompt)![1]
        return prompt.split(key).join('K')
      }
      const sent = server.requests.map((r) => r.body.messages[0].content)
      expect(prompts.map(keyless)).toEqual(sent.map(keyless))
      expect(new Set([...prompts, ...sent].map((p) => /The key of this request is ([0-9a-f]{16});/.exec(p)![1])).size).toBe(prompts.length + sent.length)
    }
  })

  it('a summary request refused as too long is split again; result.summaryModelLearnt keeps what the refusal stated', async () => {
    // The first request (the whole middle) is refused with the count and the maximum, as the
    // Messages API states them; the smaller parts that follow are accepted.
    const server = await startServer((_request, index) =>
      index === 0
        ? anthropicError(400, 'invalid_request_error', 'prompt is too long: 4000 tokens > 2000 maximum')
        : anthropicOk('## Goal\nEdit the modules'),
    )
    const result = await compactMessages(conversation(), { ...base(server.url, tempDir()), provider: 'anthropic', summaryMaxTokens: 256 })
    expect(result.compacted, JSON.stringify([result.error, result.warnings, server.requests.length])).toBe(true)
    expect(result.warnings).toContainEqual(expect.stringMatching(/^the summary model refused a part of 4000 tokens \(maximum 2000\) as too long; it was split into \d+ parts$/))
    const sizes = server.requests.map((r) => r.body.messages[0].content.length)
    expect(sizes.length).toBeGreaterThan(2)
    // Each later request is a part, smaller than the refused one: none is sent again.
    for (const size of sizes.slice(1)) expect(size).toBeLessThan(sizes[0] / 2)
    expect(result.summaryModelLearnt).toMatchObject({ model: 'claude-sonnet-4-6', window: 2000 })
    expect(result.summaryModelLearnt!.factor).toBeGreaterThan(1)
    // Refusals are not billed: the usage counts the accepted requests.
    expect(result.summaryUsage!.requests).toBe(sizes.length - 1)
  })

  it('what a refusal taught the summary model is kept in the store: the next call on it sizes its parts with it, no refusal', async () => {
    const outputDir = tempDir()
    const first = await startServer((_request, index) =>
      index === 0
        ? anthropicError(400, 'invalid_request_error', 'prompt is too long: 4000 tokens > 2000 maximum')
        : anthropicOk('## Goal\nEdit the modules'),
    )
    const taught = await compactMessages(conversation(), { ...base(first.url, outputDir), provider: 'anthropic', summaryMaxTokens: 256 })
    expect(taught.summaryModelLearnt).toMatchObject({ window: 2000 })
    const refused = first.requests[0].body.messages[0].content.length
    const accepted = Math.max(...first.requests.slice(1).map((r) => r.body.messages[0].content.length))
    // Another conversation, same store and summary model: a server that refuses what the first
    // refused. Its parts are sized from the start by what the store kept.
    const second = await startServer((request) =>
      request.body.messages[0].content.length >= refused
        ? anthropicError(400, 'invalid_request_error', 'prompt is too long: 4000 tokens > 2000 maximum')
        : anthropicOk('## Goal\nEdit the modules'),
    )
    const result = await compactMessages(conversation(), { ...base(second.url, outputDir), sessionId: 'another', provider: 'anthropic', summaryMaxTokens: 256 })
    expect(result.compacted, JSON.stringify([result.error, result.warnings])).toBe(true)
    expect(result.warnings.filter((w) => /refused/.test(w))).toEqual([])
    for (const r of second.requests) expect(r.body.messages[0].content.length).toBeLessThanOrEqual(accepted * 1.5)
    // A store without the record: the whole middle is asked first, as in the first call.
    const fresh = await startServer(() => anthropicOk('## Goal\nEdit the modules'))
    await compactMessages(conversation(), { ...base(fresh.url, tempDir()), provider: 'anthropic', summaryMaxTokens: 256 })
    expect(fresh.requests[0].body.messages[0].content.length).toBe(refused)
  })

  it('529 every time: compacted false, the input array itself, OVERLOADED after 3 attempts', async () => {
    const server = await startServer(() => anthropicError(529, 'overloaded_error', 'Overloaded'))
    const outputDir = tempDir()
    const messages = conversation()
    const logs: any[] = []
    const events: any[] = []
    const result = await compactMessages(messages, {
      ...base(server.url, outputDir),
      provider: 'anthropic',
      onLog: (entry) => logs.push(entry),
      onEvent: (event) => events.push(event),
    })
    expect(result.compacted).toBe(false)
    expect(result.messages).toBe(messages)
    expect(result.summary).toBeNull()
    expect(result.error?.code).toBe('OVERLOADED')
    expect(result.error?.attempts).toBe(3)
    expect(result.error?.status).toBe(529)
    expect(result.error?.message).toContain('HTTP 529')
    expect(result.error?.message).toContain('overloaded_error')
    expect(result.attempts).toBe(3)
    expect(result.provider).toBe('anthropic')
    expect(server.requests).toHaveLength(3)
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(2)

    // The retries reached onLog as warnings with their fields.
    await new Promise((resolve) => setImmediate(resolve))
    const retries = logs.filter((l) => l.level === 'warn' && /retrying/.test(l.message))
    expect(retries).toHaveLength(2)
    expect(retries[0].fields.code).toBe('OVERLOADED')
    expect(retries[0].fields.provider).toBe('anthropic')
    expect(logs.some((l) => l.level === 'warn' && /summary failed/.test(l.message))).toBe(true)

    expectNoKeyAnywhere(result, outputDir, [logs, events])
  })

  it('a 401 is not retried, and the key echoed by the server is redacted', async () => {
    const server = await startServer(() => anthropicError(401, 'authentication_error', `invalid x-api-key: ${KEY}`))
    const outputDir = tempDir()
    const messages = conversation()
    const result = await compactMessages(messages, { ...base(server.url, outputDir), provider: 'anthropic', maxRetries: 5 })
    expect(result.compacted).toBe(false)
    expect(result.messages).toBe(messages)
    expect(result.error?.code).toBe('AUTHENTICATION_FAILED')
    expect(result.error?.attempts).toBe(1)
    expect(server.requests).toHaveLength(1)
    expect(result.error?.message).toContain('authentication_error')
    expectNoKeyAnywhere(result, outputDir)
  })

  it('an AbortSignal rejects at once while the request is in flight, without retrying', async () => {
    const server = await startServer(() => null)
    const controller = new AbortController()
    const started = Date.now()
    const pending = compactMessages(conversation(), {
      ...base(server.url, tempDir()),
      provider: 'anthropic',
      signal: controller.signal,
    })
    setTimeout(() => controller.abort(), 150)
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' })
    expect(Date.now() - started).toBeLessThan(2000)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(server.requests).toHaveLength(1)
  })

  it('a stalled server times out after timeoutMs', async () => {
    const server = await startServer(() => null)
    const started = Date.now()
    const result = await compactMessages(conversation(), {
      ...base(server.url, tempDir()),
      provider: 'anthropic',
      timeoutMs: 200,
      maxRetries: 1,
    })
    expect(result.error?.code).toBe('TIMEOUT')
    expect(result.error?.attempts).toBe(2)
    expect(Date.now() - started).toBeLessThan(5000)
  })

  it('zero configuration uses ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL', async () => {
    const server = await startServer(() => anthropicOk('## Goal\nzero config'))
    process.env.ANTHROPIC_API_KEY = KEY
    process.env.ANTHROPIC_BASE_URL = server.url
    try {
      const outputDir = tempDir()
      const result = await compactMessages(conversation(), { force: true, contextTokenLimit: 2000, outputDir })
      expect(result.compacted).toBe(true)
      expect(result.provider).toBe('anthropic')
      expect(result.summary).toContain('zero config')
      expect(server.requests[0].headers['x-api-key']).toBe(KEY)
      expectNoKeyAnywhere(result, outputDir)
    } finally {
      delete process.env.ANTHROPIC_API_KEY
      delete process.env.ANTHROPIC_BASE_URL
    }
  })

  it('generateSummary uses the provider too', async () => {
    const server = await startServer(() => anthropicOk('## Goal\nfrom generateSummary'))
    const summary = await generateSummary(conversation().slice(1, 9), {
      provider: 'anthropic',
      apiKey: KEY,
      baseUrl: server.url,
    })
    expect(summary).toContain('from generateSummary')
    expect(server.requests[0].body.messages[0].content).toContain(MARKER)
  })
})

describe('openai provider', () => {
  it('compacts with a summary from Chat Completions (baseUrl ending in /v1)', async () => {
    const server = await startServer(() => openaiOk('## Goal\nfrom the openai server'))
    const outputDir = tempDir()
    const result = await compactMessages(conversation(), {
      ...base(`${server.url}/v1`, outputDir),
      provider: 'openai',
      model: 'gpt-4o',
    })
    expect(result.compacted).toBe(true)
    expect(result.provider).toBe('openai')
    expect(result.model).toBe('gpt-4o')
    expect(result.summary).toContain('from the openai server')
    expect(server.requests).toHaveLength(1)
    const [request] = server.requests
    expect(request.path).toBe('/v1/chat/completions')
    expect(request.headers.authorization).toBe(`Bearer ${KEY}`)
    expect(request.headers['x-api-key']).toBeUndefined()
    expect(request.body.model).toBe('gpt-4o')
    expect(request.body.max_tokens).toBe(4096)
    expect(request.body.messages[0].content).toContain(MARKER)
    expectNoKeyAnywhere(result, outputDir)
  })

  it('a quota 429 is not retried: QUOTA_EXCEEDED after one request', async () => {
    const server = await startServer(() => ({
      status: 429,
      body: {
        error: {
          message: 'You exceeded your current quota, please check your plan and billing details.',
          type: 'insufficient_quota',
          param: null,
          code: 'insufficient_quota',
        },
      },
    }))
    const outputDir = tempDir()
    const messages = conversation()
    const result = await compactMessages(messages, { ...base(server.url, outputDir), provider: 'openai' })
    expect(result.compacted).toBe(false)
    expect(result.messages).toBe(messages)
    expect(result.error?.code).toBe('QUOTA_EXCEEDED')
    expect(result.error?.attempts).toBe(1)
    expect(result.error?.status).toBe(429)
    expect(server.requests).toHaveLength(1)
    expectNoKeyAnywhere(result, outputDir)
  })
})

describe('provider options', () => {
  it('an explicit provider without a key skips with MISSING_API_KEY', async () => {
    const messages = conversation()
    const result = await compactMessages(messages, { provider: 'openai', force: true, contextTokenLimit: 2000, summaryFallback: 'none', outputDir: tempDir() })
    expect(result.compacted).toBe(false)
    expect(result.messages).toBe(messages)
    expect(result.error?.code).toBe('MISSING_API_KEY')
    expect(result.error?.message).toContain('OPENAI_API_KEY')
    // Over the window (the default summaryFallback), the loop still gets a list it can send, and
    // is told why the summary is the built-in one.
    const fallback = await compactMessages(messages, { provider: 'openai', force: true, contextTokenLimit: 2000, outputDir: tempDir() })
    expect(fallback.compacted).toBe(true)
    expect(fallback.summaryFallback?.code).toBe('MISSING_API_KEY')
    expect(fallback.summaryFallback?.reason).toContain('OPENAI_API_KEY')
  })

  it('without keys, zero configuration is the extractive summarizer', async () => {
    const result = await compactMessages(conversation(), { force: true, contextTokenLimit: 2000, outputDir: tempDir() })
    expect(result.compacted).toBe(true)
    expect(result.provider).toBe('extractive')
  })

  it('invalid provider options are TypeErrors (also when a Compactor is created)', async () => {
    await expect(compactMessages(conversation(), { provider: 'gemini' as any })).rejects.toThrow(TypeError)
    await expect(compactMessages(conversation(), { baseUrl: 'not a url' })).rejects.toThrow(/options\.baseUrl/)
    expect(() => new Compactor({ timeoutMs: 0 })).toThrow(/options\.timeoutMs/)
    expect(() => new Compactor({ onLog: 'nope' as any })).toThrow(TypeError)
  })

  it('a logger object receives the log entries', async () => {
    const server = await startServer((_, i) => (i === 0 ? anthropicError(500, 'api_error', 'boom') : anthropicOk('## Goal\nok')))
    const warned: unknown[][] = []
    const logger = { warn: (...args: unknown[]) => warned.push(args), info() {}, debug() {}, error() {} }
    const result = await compactMessages(conversation(), { ...base(server.url, tempDir()), provider: 'anthropic', logger })
    expect(result.compacted).toBe(true)
    expect(result.attempts).toBe(2)
    await new Promise((resolve) => setImmediate(resolve))
    expect(warned.some(([message]) => String(message).includes('retrying'))).toBe(true)
    expect(JSON.stringify(warned)).not.toContain(KEY)
  })
})
