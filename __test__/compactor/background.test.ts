// A Compactor's `background` (issue 22, SPEC §4.11): the summary is prepared before the
// threshold and swapped in when it comes, against a local OpenAI-compatible server with a slow,
// counted endpoint (and a JS summarizer, native compaction, other formats). A precompute is
// used only while every message it covers is unchanged; a stale one is dropped, never archived.
import { execFile } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'

import fc from 'fast-check'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { checkMessages, Compactor, countTokens, listArchives, restoreMessages, type CompactEvent, type Message } from '../../index'
import { extend, render, substantialArb, type FormatName } from '../support/format-conversations'
import { tempDir } from '../support/helpers'
import { anthropicKinds, openaiKinds, type Kind } from '../support/mutation-kinds'

// ---------------------------------------------------------------------------------------------
// The slow, counted endpoint

interface Slow {
  url: string
  requests: any[]
  delayMs: number
  fail: boolean
  close(): Promise<void>
}

const servers: Slow[] = []

async function slowServer(delayMs: number): Promise<Slow> {
  const state: Slow = { url: '', requests: [], delayMs, fail: false, close: async () => {} }
  const server: Server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      state.requests.push(JSON.parse(body))
      const n = state.requests.length
      setTimeout(() => {
        if (res.destroyed) return
        if (state.fail) {
          res.writeHead(500, { 'content-type': 'application/json' })
          res.end(JSON.stringify({ error: { message: 'internal error', type: 'server_error' } }))
          return
        }
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(
          JSON.stringify({
            id: `chatcmpl-${n}`,
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content: `## Goal\nsummary number ${n}` }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 100, completion_tokens: 10 },
          }),
        )
      }, state.delayMs)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections?.()
      server.close(() => resolve())
    })
  servers.push(state)
  return state
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

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

// ---------------------------------------------------------------------------------------------
// Conversations

function turn(i: number): Message[] {
  return [
    { role: 'user', content: `request ${i}: ${'please look at the logs of the build '.repeat(6)}` },
    { role: 'assistant', content: `answer ${i}: ${'the build failed because of a flag '.repeat(6)}` },
  ]
}

const head: Message = { role: 'system', content: 'You are a coding agent.' }

/** A window whose threshold `turns` turns (and the head) just reach. */
function limitAt(turns: number): number {
  const list = [head, ...Array.from({ length: turns }, (_, i) => turn(i)).flat()]
  return Math.floor(countTokens(list) / 0.92)
}

function openaiOptions(server: Slow, extra: Record<string, unknown> = {}) {
  return {
    provider: 'openai' as const,
    apiKey: 'sk-test-key',
    baseUrl: server.url,
    model: 'gpt-4o-mini',
    maxRetries: 0,
    outputDir: tempDir(),
    sessionId: 'bg',
    contextTokenLimit: limitAt(20),
    background: { atRatio: 0.5 },
    ...extra,
  }
}

/** Resolves at the next event of `type` the recorder sees. */
function recorder() {
  const events: CompactEvent[] = []
  const waiting: Array<{ type: string; resolve: (e: CompactEvent) => void }> = []
  const onEvent = (event: CompactEvent) => {
    events.push(event)
    for (const w of waiting.splice(0)) {
      if (w.type === event.type) w.resolve(event)
      else waiting.push(w)
    }
  }
  const next = (type: string) => new Promise<CompactEvent>((resolve) => waiting.push({ type, resolve }))
  return { events, onEvent, next, types: () => events.map((e) => e.type) }
}

/** Appends turns and calls compact after each until it starts the background summary. */
async function growUntilStarted(compactor: Compactor, list: Message[], from: number): Promise<number> {
  let i = from
  for (; i < from + 40; i++) {
    list.push(...turn(i))
    const result = await compactor.compact(list)
    expect(result.compacted).toBe(false)
    if (result.background?.state === 'started') return i + 1
  }
  throw new Error('the background summary never started')
}

/** Appends turns until compact() compacts; returns that result and how long that call took. */
async function growUntilCompacted(compactor: Compactor, list: Message[], from: number) {
  for (let i = from; i < from + 60; i++) {
    list.push(...turn(i))
    const started = performance.now()
    const result = await compactor.compact(list)
    const ms = performance.now() - started
    if (result.compacted) return { result, ms, next: i + 1 }
  }
  throw new Error('never compacted')
}

// ---------------------------------------------------------------------------------------------

describe('background: the swap', () => {
  it('swaps the ready summary in at the threshold: no LLM call, a fraction of the wait, restore exact', async () => {
    const server = await slowServer(600)
    const rec = recorder()
    const options = openaiOptions(server, { onEvent: rec.onEvent })
    const compactor = new Compactor(options)
    const list: Message[] = [head]
    const ready = rec.next('background_ready')
    const next = await growUntilStarted(compactor, list, 0)
    await ready
    expect(server.requests.length).toBe(1)
    const { result, ms } = await growUntilCompacted(compactor, list, next)
    expect(server.requests.length).toBe(1) // the background request only
    expect(result.background).toMatchObject({ state: 'applied' })
    expect(result.background!.coveredMessages).toBeGreaterThan(1)
    expect(result.error).toBeNull()
    expect(ms).toBeLessThan(600)
    expect(result.summary).toContain('summary number 1')
    expect(result.summaryUsage).toMatchObject({ requests: 1 })
    expect(await restoreMessages(result.messages, { outputDir: options.outputDir, sessionId: 'bg' })).toEqual(list)
    expect((await listArchives(options.outputDir, 'bg')).length).toBe(1)
    expect(rec.types().filter((t) => t.startsWith('background_'))).toEqual(['background_started', 'background_ready', 'background_applied'])
    await compactor.close()
  })

  it('sends exactly one request when the threshold comes while the summary runs: the call awaits it', async () => {
    const server = await slowServer(400)
    const rec = recorder()
    const compactor = new Compactor(openaiOptions(server, { onEvent: rec.onEvent }))
    const list: Message[] = [head]
    const next = await growUntilStarted(compactor, list, 0)
    // The loop races ahead while the summary is still being written.
    const { result } = await growUntilCompacted(compactor, list, next)
    expect(server.requests.length).toBe(1)
    expect(result.background).toMatchObject({ state: 'applied' })
    expect(result.background!.waitedMs).toBeGreaterThan(0)
    expect(rec.types().filter((t) => t.startsWith('background_'))).toEqual(['background_started', 'background_ready', 'background_applied'])
  })

  it('is stale when the options, the summary model or the agent model changed: dropped, compacted in the foreground', async () => {
    for (const change of [{ customInstructions: 'Mention the flags.' }, { model: 'gpt-4o' }, { agentModel: 'gpt-4o' }]) {
      const server = await slowServer(5)
      const rec = recorder()
      const options = openaiOptions(server, { onEvent: rec.onEvent })
      const compactor = new Compactor(options)
      const list: Message[] = [head]
      const ready = rec.next('background_ready')
      const next = await growUntilStarted(compactor, list, 0)
      await ready
      // The call that crosses the threshold asks with other options.
      for (let i = next; countTokens(list) < Math.ceil(options.contextTokenLimit * 0.92); i++) list.push(...turn(i))
      const result = await compactor.compact(list, change)
      expect(result.compacted).toBe(true)
      expect(result.background).toMatchObject({ state: 'stale', reason: 'options_changed' })
      expect(server.requests.length).toBe(2)
      expect(rec.types()).toContain('background_stale')
      expect((await listArchives(options.outputDir, 'bg')).length).toBe(1)
      expect(await restoreMessages(result.messages, { outputDir: options.outputDir, sessionId: 'bg' })).toEqual(list)
    }
  })

  it('asked with other options before the threshold: dropped, and started again with them', async () => {
    const server = await slowServer(5)
    const rec = recorder()
    const compactor = new Compactor(openaiOptions(server, { onEvent: rec.onEvent }))
    const list: Message[] = [head]
    const ready = rec.next('background_ready')
    const next = await growUntilStarted(compactor, list, 0)
    await ready
    list.push(...turn(next))
    const again = rec.next('background_ready')
    const result = await compactor.compact(list, { model: 'gpt-4o' })
    expect(result.background).toMatchObject({ state: 'started' })
    await again
    expect(rec.types().filter((t) => t.startsWith('background_'))).toEqual(['background_started', 'background_ready', 'background_stale', 'background_started', 'background_ready'])
    expect(server.requests.map((r) => r.model)).toEqual(['gpt-4o-mini', 'gpt-4o'])
    // The one asked with the options the threshold call uses is applied.
    let i = next + 1
    let last
    do {
      list.push(...turn(i++))
      last = await compactor.compact(list, { model: 'gpt-4o' })
    } while (!last.compacted)
    expect(last.background).toMatchObject({ state: 'applied' })
    expect(server.requests.length).toBe(2)
  })

  it('a failed background summary is reported, and the threshold compaction runs as today', async () => {
    const server = await slowServer(5)
    server.fail = true
    const rec = recorder()
    const compactor = new Compactor(openaiOptions(server, { onEvent: rec.onEvent }))
    const list: Message[] = [head]
    const failed = rec.next('background_failed')
    const next = await growUntilStarted(compactor, list, 0)
    const event = (await failed) as any
    expect(event.error.code).toBe('SERVER_ERROR')
    // Not asked again on every turn.
    list.push(...turn(next))
    expect((await compactor.compact(list)).background).toMatchObject({ state: 'failed' })
    server.fail = false
    const { result } = await growUntilCompacted(compactor, list, next + 1)
    expect(result.background).toMatchObject({ state: 'failed' })
    expect(result.error).toBeNull()
    expect(server.requests.length).toBe(2)
  })
})

describe('background: stale after an in-place change to a covered message', () => {
  // Every kind of change the Compactor's cache follows (mutation-kinds.ts), made to a message
  // the prepared summary covers, after it was made: the summary is dropped, the compaction runs
  // on the current messages, and the result restores to them — not to the old ones.
  const cases = [...anthropicKinds.map((k) => ['anthropic', k] as const), ...openaiKinds.map((k) => ['openai', k] as const)]
  let server: Slow
  beforeAll(async () => {
    server = await slowServer(1)
    servers.splice(servers.indexOf(server), 1)
  })
  afterAll(() => server.close())

  it.each(cases.map(([style, kind]) => [`${style}: ${kind.name}`, kind] as const))('%s', async (_name, kind: Kind) => {
    const before = server.requests.length
    const rec = recorder()
    const options = openaiOptions(server, { onEvent: rec.onEvent })
    const compactor = new Compactor(options)
    const changed = kind.make()
    // The message to change sits early, where the summary covers it; a tool call is answered.
    const list: Message[] = [head, { role: 'user', content: 'Start.' }, changed]
    if (changed.role === 'assistant' && !changed.tool_calls) list.push({ role: 'user', content: 'Go on.' })
    if (changed.tool_calls) list.push({ role: 'tool', tool_call_id: 'call_9', content: 'README.md' } as Message)
    const ready = rec.next('background_ready')
    const next = await growUntilStarted(compactor, list, 0)
    await ready
    const copy = structuredClone(changed)
    kind.change(changed)
    const same = JSON.stringify(copy) === JSON.stringify(changed)
    const { result } = await growUntilCompacted(compactor, list, next)
    expect(result.compacted).toBe(true)
    if (same) {
      // The same content (an equal copy): still the messages the summary covers.
      expect(result.background).toMatchObject({ state: 'applied' })
      expect(server.requests.length - before).toBe(1)
    } else {
      expect(result.background).toMatchObject({ state: 'stale', reason: 'covered_changed' })
      expect(rec.types()).toContain('background_stale')
      expect(server.requests.length - before).toBe(2)
      // The foreground summary read the changed message.
      const prompt = JSON.stringify(server.requests.at(-1))
      expect(prompt).not.toBe(JSON.stringify(server.requests[before]))
    }
    const restored = await restoreMessages(result.messages, { outputDir: options.outputDir, sessionId: 'bg' })
    expect(JSON.stringify(restored)).toBe(JSON.stringify(list))
    expect((await listArchives(options.outputDir, 'bg')).length).toBe(1)
  })
})

describe('background: cleanup', () => {
  it('close() cancels a running summary at once and leaves nothing pending; later calls start none', async () => {
    const server = await slowServer(5_000)
    const rec = recorder()
    const compactor = new Compactor(openaiOptions(server, { onEvent: rec.onEvent }))
    const list: Message[] = [head]
    await growUntilStarted(compactor, list, 0)
    const started = performance.now()
    await compactor.close()
    expect(performance.now() - started).toBeLessThan(2_000)
    list.push(...turn(99))
    expect((await compactor.compact(list)).background).toMatchObject({ state: 'closed' })
    server.delayMs = 5
    // The compactor still compacts in the foreground.
    const { result } = await growUntilCompacted(compactor, list, 100)
    expect(result.compacted).toBe(true)
    expect(rec.types()).not.toContain('background_failed')
  })

  it('a process whose compactor was closed exits at once: no request, timer or promise left behind', async () => {
    const server = await slowServer(30_000)
    const script = `
      const { Compactor } = require(${JSON.stringify(join(__dirname, '..', '..', 'index.js'))})
      const turn = ${turn.toString()}
      const compactor = new Compactor(${JSON.stringify({ ...openaiOptions(server), outputDir: tempDir() })})
      ;(async () => {
        const list = [${JSON.stringify(head)}]
        for (let i = 0; i < 40; i++) {
          list.push(...turn(i))
          if ((await compactor.compact(list)).background.state === 'started') break
        }
        // The request is in flight (the server answers in 30 s) when the compactor closes.
        await new Promise((resolve) => setTimeout(resolve, 300))
        await compactor.close()
        process.stdout.write('closed ' + Date.now())
      })()
      process.on('exit', () => process.stdout.write(' exit ' + Date.now()))`
    const started = Date.now()
    // Asynchronously: this process serves the child's request meanwhile.
    const child = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? ((error as any).code ?? 1) : 0, stdout, stderr }),
      )
    })
    expect(child.code, child.stderr).toBe(0)
    const [, closed, , exited] = child.stdout.split(' ')
    expect(Number(exited) - Number(closed)).toBeLessThan(1_000)
    expect(Date.now() - started).toBeLessThan(15_000)
    expect(server.requests.length).toBe(1)
  })

  it("the signal of the call that started it cancels it; the threshold call's signal aborts its wait", async () => {
    const server = await slowServer(5_000)
    const rec = recorder()
    const controller = new AbortController()
    const compactor = new Compactor(openaiOptions(server, { onEvent: rec.onEvent }))
    const list: Message[] = [head]
    let i = 0
    for (; ; i++) {
      list.push(...turn(i))
      const result = await compactor.compact(list, { signal: controller.signal })
      if (result.background?.state === 'started') break
    }
    const failed = rec.next('background_failed')
    controller.abort()
    expect(((await failed) as any).error.code).toBe('ABORTED')

    // A new one, awaited by the threshold call, whose own signal gives up the wait.
    const other = await slowServer(5_000)
    const second = new Compactor(openaiOptions(other))
    const list2: Message[] = [head]
    const next = await growUntilStarted(second, list2, 0)
    for (let j = next; countTokens(list2) < limitAt(20) * 0.92; j++) list2.push(...turn(j))
    const wait = new AbortController()
    const pending = second.compact(list2, { signal: wait.signal })
    setTimeout(() => wait.abort(), 50)
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' })
    await second.close()
  })
})

describe('background: everywhere', () => {
  it('with a JS summarizer, and with the anthropic provider', async () => {
    let calls = 0
    const summarizer = async () => {
      calls++
      await new Promise((r) => setTimeout(r, 50))
      return '## Goal\njs summary'
    }
    const rec = recorder()
    const outputDir = tempDir()
    const compactor = new Compactor({ summarizer, outputDir, contextTokenLimit: limitAt(20), background: { atTokens: Math.ceil(limitAt(20) * 0.92 * 0.5) }, onEvent: rec.onEvent })
    const list: Message[] = [head]
    const ready = rec.next('background_ready')
    const next = await growUntilStarted(compactor, list, 0)
    await ready
    const { result } = await growUntilCompacted(compactor, list, next)
    expect(calls).toBe(1)
    expect(result.background).toMatchObject({ state: 'applied' })
    expect(await restoreMessages(result.messages, { outputDir })).toEqual(list)

    // The Anthropic Messages API, slow and counted.
    const seen: any[] = []
    const server = createServer((req, res) => {
      let body = ''
      req.on('data', (c) => (body += c))
      req.on('end', () => {
        seen.push({ path: req.url, body: JSON.parse(body) })
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' })
          res.end(JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: '## Goal\nanthropic summary' }], stop_reason: 'end_turn', usage: { input_tokens: 100, output_tokens: 10 } }))
        }, 200)
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const rec2 = recorder()
      const dir2 = tempDir()
      const anthropic = new Compactor({
        provider: 'anthropic',
        apiKey: 'sk-ant-test',
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        outputDir: dir2,
        contextTokenLimit: limitAt(20),
        background: { atRatio: 0.5 },
        onEvent: rec2.onEvent,
      })
      const list2: Message[] = [head]
      const ready2 = rec2.next('background_ready')
      const next2 = await growUntilStarted(anthropic, list2, 0)
      await ready2
      const { result: swapped } = await growUntilCompacted(anthropic, list2, next2)
      expect(seen.map((r) => r.path)).toEqual(['/v1/messages'])
      expect(swapped.background).toMatchObject({ state: 'applied' })
      expect(swapped.provider).toBe('anthropic')
      expect(swapped.summary).toContain('anthropic summary')
      expect(await restoreMessages(swapped.messages, { outputDir: dir2 })).toEqual(list2)
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })

  it('with native compaction (anthropic-compaction)', async () => {
    const block = { type: 'compaction', content: 'The agent looked at the build.', signature: 'EuYBsig==' }
    const seen: any[] = []
    const server = createServer((req, res) => {
      let body = ''
      req.on('data', (c) => (body += c))
      req.on('end', () => {
        seen.push(JSON.parse(body))
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-opus-5-5', content: [block], stop_reason: 'compaction', usage: { input_tokens: 0, output_tokens: 0 } }))
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const rec = recorder()
      const outputDir = tempDir()
      const compactor = new Compactor({
        provider: 'anthropic-compaction',
        apiKey: 'sk-ant-test',
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        model: 'claude-opus-5-5',
        outputDir,
        contextTokenLimit: limitAt(20),
        background: true,
        onEvent: rec.onEvent,
      })
      const list: Message[] = [head]
      const ready = rec.next('background_ready')
      const next = await growUntilStarted(compactor, list, 0)
      await ready
      const { result } = await growUntilCompacted(compactor, list, next)
      expect(seen.length).toBe(1)
      expect(seen[0].compaction).toBeDefined()
      expect(result.background).toMatchObject({ state: 'applied' })
      expect(result.provider).toBe('anthropic-compaction')
      expect(JSON.stringify((result.messages[1] as any).content[0])).toBe(JSON.stringify(block))
      expect(await restoreMessages(result.messages, { outputDir })).toEqual(list)
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })

  it.each(['openai-responses', 'ai-sdk', 'gemini', 'bedrock', 'langchain'] as const)('on %s lists', async (format) => {
    let calls = 0
    const summarizer = async () => {
      calls++
      return '## Goal\nformat summary'
    }
    const [c, ...more] = fc.sample(substantialArb(4, 5, 6), { numRuns: 8, seed: 7 })
    const steps = [c]
    for (const [i, m] of more.entries()) steps.push(extend(steps.at(-1)!, { ...m, episodes: m.episodes.slice(0, 1) }, i + 1))
    const lists = steps.map((s) => render(s, format as FormatName))
    const outputDir = tempDir()
    const limit = Math.floor(countTokens(lists.at(-1)!, { format } as any) / 0.92) - 5
    const rec = recorder()
    const compactor = new Compactor({ summarizer, outputDir, format, contextTokenLimit: limit, thinking: 'keep', background: { atRatio: 0.3 }, onEvent: rec.onEvent })
    let result
    let input: unknown[] = []
    const ready = rec.next('background_ready')
    for (const list of lists) {
      input = list
      result = await compactor.compact(list)
      if (result.background?.state === 'started') await ready
      if (result.compacted) break
    }
    expect(result!.compacted).toBe(true)
    expect(result!.background).toMatchObject({ state: 'applied' })
    expect(calls).toBe(1)
    expect(await restoreMessages(result!.messages, { outputDir, format })).toEqual(input)
  })
})

// ---------------------------------------------------------------------------------------------
// Properties

describe('background: properties over generated sessions', () => {
  type Command = { kind: 'append'; words: number } | { kind: 'edit'; at: number; how: number } | { kind: 'settle' } | { kind: 'compact' }
  const command: fc.Arbitrary<Command> = fc.oneof(
    { weight: 5, arbitrary: fc.record({ kind: fc.constant('append' as const), words: fc.integer({ min: 5, max: 60 }) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('edit' as const), at: fc.nat(), how: fc.nat(3) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('settle' as const) }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('compact' as const) }) },
  )

  it('whatever interleaving of appends, in-place edits, background completions and threshold crossings: every result is valid, fits or says why, and restores exactly', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 10, maxLength: 60 }), fc.integer({ min: 0, max: 20 }), async (commands, delay) => {
        const outputDir = tempDir()
        const pending = new Set<Promise<unknown>>()
        const summarizer = async (request: { messages: unknown[] }) => {
          const wait = new Promise((r) => setTimeout(r, delay))
          pending.add(wait)
          await wait
          pending.delete(wait)
          return `## Goal\nsummary of ${request.messages.length} messages`
        }
        const limit = 1_500
        const compactor = new Compactor({ summarizer, outputDir, contextTokenLimit: limit, background: { atRatio: 0.5 } })
        let list: Message[] = [head]
        const history: Message[] = [head]
        let n = 0
        const check = async () => {
          const result = await compactor.compact(list)
          if (!result.compacted) {
            expect(result.messages).toBe(list)
            return
          }
          expect(checkMessages(result.messages)).toEqual([])
          if (result.error === null) expect(countTokens(result.messages)).toBeLessThan(Math.ceil(limit * 0.92))
          else expect(['STILL_OVER_LIMIT']).toContain(result.error.code)
          expect(JSON.stringify(await restoreMessages(result.messages, { outputDir }))).toBe(JSON.stringify(history))
          list = result.messages as Message[]
        }
        for (const c of commands) {
          if (c.kind === 'append') {
            const pair: Message[] = [
              { role: 'user', content: `q${n}: ${'word '.repeat(c.words)}` },
              { role: 'assistant', content: `a${n}: ${'reply '.repeat(c.words)}` },
            ]
            n++
            list = [...list, ...pair]
            history.push(...pair)
          } else if (c.kind === 'edit') {
            // An in-place edit of a message still in the list (never the library's own).
            const own = list.filter((m) => typeof m.content === 'string' && !m.content.startsWith('[context-compact]') && m.role !== 'system')
            if (own.length === 0) continue
            const m = own[c.at % own.length] as any
            if (c.how === 0) m.content += ' (edited)'
            else if (c.how === 1) m.content = m.content.replace(/word|reply/, 'WORD')
            else if (c.how === 2) m.content = [{ type: 'text', text: m.content }]
            else m.name = 'x'
          } else if (c.kind === 'settle') {
            await Promise.all([...pending])
            await new Promise((r) => setTimeout(r, delay + 5))
          } else {
            await check()
          }
        }
        await check()
        await compactor.close()
      }),
      { numRuns: 25 },
    )
  }, 240_000)
})
