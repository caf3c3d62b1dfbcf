// The recall tool (SPEC §4.12): the range a summary names gives back the exact original text of
// those messages (also on the real sessions in ../shared/data/real), a query finds a distinctive
// string of the middle across two compactions on disk, on a file:// store, on S3 (moto's
// standalone server on 127.0.0.1, as object-store.test.ts starts it) and on the caller's own
// archiveStore; bad input is answered, never thrown; the definition has each API's tool shape.

import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

import { asSchema } from '@ai-sdk/provider-utils'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'

import { compactMessages, countTokens, createRecallTool, restoreMessages, type ArchiveStore, type ArchiveStoreEntry, type Message } from '../../index'
import { tempDir } from '../support/helpers'

type Msg = any
vi.setConfig({ testTimeout: 300_000 })

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const REAL = join(ROOT, '..', 'shared', 'data', 'real')

/** Every `Recall:` line of a summary, as the tool's input. */
function recallLines(summary: string): Array<{ archive: string; from?: number; to?: number }> {
  return [...summary.matchAll(/^Recall: archive=(\S+)(?: from=(\d+) to=(\d+))?$/gm)].map((m) => ({
    archive: m[1],
    ...(m[2] !== undefined ? { from: Number(m[2]), to: Number(m[3]) } : {}),
  }))
}

/** The texts of a message the tool must give back verbatim: string contents, text blocks, string tool results. */
function textsOf(m: Msg): string[] {
  const out: string[] = []
  if (typeof m.content === 'string') out.push(m.content)
  for (const b of Array.isArray(m.content) ? m.content : []) {
    if (b.type === 'text' && typeof b.text === 'string') out.push(b.text)
    if (b.type === 'tool_result' && typeof b.content === 'string') out.push(b.content)
  }
  if (m.role === 'tool' && typeof m.content === 'string') out.push(m.content)
  return out.map((t) => t.trimEnd()).filter((t) => t.trim() !== '')
}

function conversation(tag: string, turns: number, secret?: { at: number; text: string }): Message[] {
  const messages: Message[] = [{ role: 'system', content: 'You are a careful agent.' }]
  for (let i = 0; i < turns; i++) {
    messages.push({ role: 'user', content: `${tag} question ${i}: ${'please look at the files '.repeat(8)}` })
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${tag}_${i}`, name: 'read', input: { path: `src/${tag}${i}.ts` } }] } as Message)
    const output = secret && secret.at === i ? `line 1\nthe error was ${secret.text} in module m${i}\nline 3` : `${tag} ${'x '.repeat(60)}`
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${tag}_${i}`, content: output }] } as Message)
    messages.push({ role: 'assistant', content: `${tag} answer ${i} ${'word '.repeat(40)}` })
  }
  return messages
}

// A summary budget with room for every recall line (a 4 000-token window gives it 600).
const SMALL = { provider: 'extractive' as const, contextTokenLimit: 4000, summaryBudgetTokens: 4000, tailRetentionRatio: 0.1, force: true }

describe('the range a summary names', () => {
  it('gives back the exact original text of those messages', async () => {
    const dir = tempDir()
    const messages = conversation('r', 10)
    const result = await compactMessages(messages, { ...SMALL, outputDir: dir, sessionId: 's' })
    expect(result.compacted).toBe(true)
    const lines = recallLines(result.summary!)
    expect(lines).toHaveLength(1)
    const [line] = lines
    expect(line.archive).toBe(result.archivePath!.split('/').pop())
    expect(line.from).toBe(0)
    expect(line.to).toBe(result.stats.compactedMessageCount)
    const tool = createRecallTool({ outputDir: dir, sessionId: 's', maxTokens: 100_000 })
    const text = await tool.run(line)
    const compacted = messages.slice(1, 1 + line.to!)
    for (const m of compacted) for (const t of textsOf(m)) expect(text).toContain(t)
    // Each message under its own index and role, tool calls with their input.
    expect(text).toContain(`--- message 0 · user ---`)
    expect(text).toContain('[assistant called tool read] {"path":"src/r0.ts"}')
    // A part of the range.
    const part = await tool.run({ archive: line.archive, from: 2, to: 3 })
    expect(part).toContain('--- message 2 · user ---')
    expect(part).not.toContain('--- message 3')
    // The JSON text of the arguments (OpenAI's form) is taken too.
    expect(await tool.run(JSON.stringify({ archive: line.archive, from: 2, to: 3 }))).toBe(part)
  })

  it('is carried forward: after a second compaction the summary names both ranges', async () => {
    const dir = tempDir()
    const first = await compactMessages(conversation('a', 10), { ...SMALL, outputDir: dir, sessionId: 's' })
    const grown = [...first.messages, ...conversation('b', 10).slice(1)]
    const second = await compactMessages(grown, { ...SMALL, outputDir: dir, sessionId: 's' })
    const lines = recallLines(second.summary!)
    expect(lines.map((l) => l.archive)).toEqual([first.archivePath!.split('/').pop(), second.archivePath!.split('/').pop()])
    const tool = createRecallTool({ outputDir: dir, sessionId: 's', maxTokens: 100_000 })
    // The first range still reads the first compaction's originals.
    const text = await tool.run(lines[0])
    expect(text).toContain('a question 0:')
    // Within a small budget: where it stopped, and how to ask for the rest.
    const small = createRecallTool({ outputDir: dir, sessionId: 's', maxTokens: 300 })
    const cut = await small.run(lines[1])
    expect(countTokens([{ role: 'user', content: cut }])).toBeLessThanOrEqual(310)
    expect(cut).toMatch(new RegExp(`Ask again with archive=${lines[1].archive.replace(/\./g, '\\.')} from=\\d+ to=${lines[1].to}`))
  })

  const manifest: Array<{ file: string }> = existsSync(join(REAL, 'manifest.json')) ? JSON.parse(readFileSync(join(REAL, 'manifest.json'), 'utf8')) : []
  it.skipIf(manifest.length === 0).each(manifest.map((e) => e.file))('on the real session %s', async (file) => {
    const messages: Message[] = JSON.parse(readFileSync(join(REAL, file), 'utf8'))
    const dir = tempDir()
    const result = await compactMessages(messages, { provider: 'extractive', outputDir: dir, sessionId: 'real', contextTokenLimit: Math.floor(countTokens(messages) * 0.9) })
    expect(result.compacted).toBe(true)
    // In a window too tight for them (openhands-sdk-sonnet4-hello), the recall lines gave way:
    // the header still names the archive, and the whole of it is the range.
    const line = recallLines(result.summary!)[0] ?? { archive: result.archivePath!.split('/').pop()!, from: 0, to: result.stats.compactedMessageCount }
    const text = await createRecallTool({ outputDir: dir, sessionId: 'real', maxTokens: 10_000_000 }).run(line)
    const head = result.messages.findIndex((m) => typeof m.content === 'string' && m.content.startsWith('[context-compact]'))
    for (const m of messages.slice(head + line.from!, head + line.to!)) for (const t of textsOf(m)) expect(text).toContain(t)
    expect(JSON.stringify(await restoreMessages(result.messages, { outputDir: dir, sessionId: 'real' }))).toBe(JSON.stringify(messages))
  })
})

// ---------------------------------------------------------------------------------------------
// Queries across two compactions, on every kind of archive location

/** Two compactions, each with a distinctive string in its middle; returns the options used. */
async function twoCompactions(location: { outputDir?: string; storeOptions?: Record<string, string>; archiveStore?: ArchiveStore }) {
  const options = { ...SMALL, ...location, sessionId: 'q' }
  const first = await compactMessages(conversation('a', 10, { at: 2, text: 'ZEBRA-4711' }), options)
  expect(first.compacted).toBe(true)
  const grown = [...first.messages, ...conversation('b', 10, { at: 1, text: 'QUOKKA-0815' }).slice(1)]
  const second = await compactMessages(grown, options)
  expect(second.compacted).toBe(true)
  return { options, first, second }
}

async function expectQueriesFind(tool: ReturnType<typeof createRecallTool>, first: string, second: string) {
  const zebra = await tool.run({ query: 'zebra-4711' })
  expect(zebra).toMatch(/^1 message in the 2 archives of this session match "zebra-4711"/)
  expect(zebra).toContain('the error was ZEBRA-4711 in module m2')
  expect(zebra).toContain(`--- ${first} · message`)
  const quokka = await tool.run({ query: 'QUOKKA-0815' })
  expect(quokka).toContain('the error was QUOKKA-0815 in module m1')
  expect(quokka).toContain(`--- ${second} · message`)
  // The passage names the range that reads its whole message, which gives the same text.
  const range = /\(archive=(\S+) from=(\d+) to=(\d+)\)/.exec(quokka)!
  const whole = await tool.run({ archive: range[1], from: Number(range[2]), to: Number(range[3]) })
  expect(whole).toContain('the error was QUOKKA-0815 in module m1')
  // Within one archive only.
  expect(await tool.run({ query: 'ZEBRA-4711', archive: second })).toMatch(/^Nothing in archive/)
}

describe('a query across two compactions', () => {
  it('on disk', async () => {
    const dir = tempDir()
    const { first, second } = await twoCompactions({ outputDir: dir })
    const tool = createRecallTool({ outputDir: dir, sessionId: 'q' })
    await expectQueriesFind(tool, first.archivePath!.split('/').pop()!, second.archivePath!.split('/').pop()!)
  })

  it('on a file:// object store', async () => {
    const url = pathToFileURL(join(tempDir(), 'store')).href
    const { first, second } = await twoCompactions({ outputDir: url })
    expect(first.archivePath).toMatch(/^file:\/\//)
    const tool = createRecallTool({ outputDir: url, sessionId: 'q' })
    await expectQueriesFind(tool, first.archivePath!.split('/').pop()!, second.archivePath!.split('/').pop()!)
  })

  it("on the caller's archiveStore", async () => {
    const objects = new Map<string, Uint8Array>()
    const store: ArchiveStore = {
      async put(key, bytes, { ifNotExists }) {
        if (ifNotExists && objects.has(key)) return false
        objects.set(key, bytes)
        return true
      },
      async get(key) {
        return objects.get(key) ?? null
      },
      async list(prefix) {
        return [...objects.keys()].filter((k) => k.startsWith(prefix)).map((key): ArchiveStoreEntry => ({ key, size: objects.get(key)!.length }))
      },
      async delete(key) {
        objects.delete(key)
      },
    }
    const { first, second } = await twoCompactions({ archiveStore: store })
    const tool = createRecallTool({ archiveStore: store, sessionId: 'q' })
    await expectQueriesFind(tool, first.archivePath!.split('/').pop()!, second.archivePath!.split('/').pop()!)
    // A store that fails is reported, not thrown.
    const broken = createRecallTool({
      sessionId: 'q',
      archiveStore: { ...store, list: async () => Promise.reject(new Error('network down')) },
    })
    expect(await broken.run({ query: 'x' })).toMatch(/network down/)
  })

  describe('on S3 (moto)', () => {
    let moto: { endpoint: string; stop(): Promise<void> } | null = null
    beforeAll(async () => {
      moto = await startMoto()
    }, 60_000)
    afterAll(async () => {
      await moto?.stop()
    })

    it('finds the strings of both middles', async (context) => {
      if (!moto) return context.skip()
      const response = await fetch(`${moto.endpoint}/recall-bucket`, { method: 'PUT' })
      expect(response.status).toBe(200)
      const storeOptions = { aws_endpoint: moto.endpoint, aws_access_key_id: 'testing-key-id', aws_secret_access_key: 'testing-secret', aws_region: 'us-east-1', aws_allow_http: 'true' }
      const url = 's3://recall-bucket/agents'
      const { first, second } = await twoCompactions({ outputDir: url, storeOptions })
      expect(first.archivePath).toMatch(/^s3:\/\/recall-bucket\/agents\/q\/compact-/)
      const tool = createRecallTool({ outputDir: url, storeOptions, sessionId: 'q' })
      await expectQueriesFind(tool, first.archivePath!.split('/').pop()!, second.archivePath!.split('/').pop()!)
    })
  })
})

function motoExecutable(): string | null {
  const fromEnv = process.env.CONTEXT_COMPACT_MOTO_SERVER
  if (fromEnv) return fromEnv
  const local = join(ROOT, '.venv-moto', 'bin', 'moto_server')
  return existsSync(local) ? local : null
}

async function startMoto(): Promise<{ endpoint: string; stop(): Promise<void> } | null> {
  const executable = motoExecutable()
  const why = (text: string) => {
    if (process.env.CONTEXT_COMPACT_REQUIRE_MOTO === '1') throw new Error(`moto_server is required (CONTEXT_COMPACT_REQUIRE_MOTO=1): ${text}`)
    console.warn(`SKIPPED: ${text}`)
    return null
  }
  if (!executable) return why('no moto_server (node scripts/setup-moto.mjs installs it into .venv-moto/)')
  const port = await new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
  const child: ChildProcess = spawn(executable, ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' })
  const endpoint = `http://127.0.0.1:${port}`
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      child.once('exit', () => resolve())
      child.kill('SIGKILL')
    })
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    try {
      await fetch(endpoint)
      return { endpoint, stop }
    } catch {
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  await stop()
  return why(`moto_server did not answer on ${endpoint} within 30 s`)
}

// ---------------------------------------------------------------------------------------------

describe('bad input is answered, never thrown', () => {
  it('unknown archive, range out of bounds, empty query, wrong types, no archives yet', async () => {
    const dir = tempDir()
    const result = await compactMessages(conversation('e', 10), { ...SMALL, outputDir: dir, sessionId: 's' })
    const [line] = recallLines(result.summary!)
    const tool = createRecallTool({ outputDir: dir, sessionId: 's' })
    const cases: Array<[unknown, RegExp]> = [
      [{ archive: 'compact-20990101T000000Z-9.json' }, new RegExp(`no archive named "compact-20990101T000000Z-9\\.json".*\\n- ${line.archive.replace(/\./g, '\\.')} \\(\\d+ messages, from=0 to=${line.to}\\)`, 's')],
      [{ archive: line.archive, from: 999 }, /from=999 is out of range/],
      [{ archive: line.archive, to: line.to! + 1 }, new RegExp(`to=${line.to! + 1} is past the end`)],
      [{ archive: line.archive, from: 3, to: 2 }, /from=3 must be less than to=2/],
      [{ archive: line.archive, from: -2 }, /`from` must be a message index/],
      [{ archive: line.archive, from: 1.5 }, /`from` must be a message index/],
      [{ query: '' }, /The query is empty/],
      [{ query: '   ' }, /The query is empty/],
      [{ query: 42 }, /`query` must be a string/],
      [{}, /Nothing was asked/],
      [null, /Nothing was asked/],
      [undefined, /Nothing was asked/],
      ['{not json', /not valid JSON/],
      [[1, 2], /takes an object/],
      [{ query: 'no such words anywhere' }, /^Nothing in archive .* matches "no such words anywhere"/],
    ]
    for (const [input, expected] of cases) {
      const answer = await tool.run(input as any)
      expect(typeof answer).toBe('string')
      expect(answer, JSON.stringify(input)).toMatch(expected)
    }
    const cyclic: any = {}
    cyclic.self = cyclic
    expect(await tool.run(cyclic)).toMatch(/cannot be read/)
    expect(await createRecallTool({ outputDir: dir, sessionId: 'empty' }).run({ query: 'x' })).toMatch(/no archived messages yet/)
  })

  it('invalid options are TypeErrors naming the option', () => {
    expect(() => createRecallTool({ sessionId: '../x' })).toThrow(TypeError)
    expect(() => createRecallTool({ maxTokens: 0 })).toThrow(/options\.maxTokens/)
    expect(() => createRecallTool({ format: 'cohere' as any })).toThrow(/options\.format/)
    expect(() => createRecallTool({ outputDir: '' })).toThrow(/options\.outputDir/)
    expect(() => createRecallTool({ name: 'has space' })).toThrow(/options\.name/)
    expect(() => createRecallTool({ archiveStore: {} as any })).toThrow(/archiveStore\.put/)
  })
})

describe('the definition in each format', () => {
  it('has the API’s own tool shape', () => {
    const schema = createRecallTool().inputSchema
    expect(schema).toMatchObject({ type: 'object', additionalProperties: false })
    expect(Object.keys(schema.properties)).toEqual(['archive', 'from', 'to', 'query', 'ledger'])
    const tool = (format: any) => createRecallTool({ format }).definition as any
    expect(tool(undefined)).toEqual({ name: 'recall', description: expect.any(String), input_schema: schema })
    expect(tool('anthropic')).toEqual(tool(undefined))
    expect(tool('openai')).toEqual({ type: 'function', function: { name: 'recall', description: expect.any(String), parameters: schema } })
    expect(tool('langchain')).toEqual(tool('openai'))
    expect(tool('openai-responses')).toEqual({ type: 'function', name: 'recall', description: expect.any(String), parameters: schema, strict: false })
    expect(tool('gemini')).toEqual({ functionDeclarations: [{ name: 'recall', description: expect.any(String), parametersJsonSchema: schema }] })
    expect(tool('bedrock')).toEqual({ toolSpec: { name: 'recall', description: expect.any(String), inputSchema: { json: schema } } })
    const aiSdk = tool('ai-sdk')
    expect(typeof aiSdk.execute).toBe('function')
    // The AI SDK reads its schema as its own jsonSchema() wrapper.
    expect(asSchema(aiSdk.inputSchema).jsonSchema).toEqual(schema)
    expect(createRecallTool({ name: 'read_archive', format: 'bedrock' }).definition.toolSpec.name).toBe('read_archive')
  })

  it("the AI SDK tool's execute is run", async () => {
    const dir = tempDir()
    await compactMessages(conversation('x', 10, { at: 1, text: 'OKAPI-1' }), { ...SMALL, outputDir: dir, sessionId: 's' })
    const definition = createRecallTool({ outputDir: dir, sessionId: 's', format: 'ai-sdk' }).definition
    expect(await definition.execute({ query: 'okapi-1' })).toContain('the error was OKAPI-1')
  })
})
