// Archives on object stores from JS (issue 14): `outputDir` as an s3:// URL against a real
// S3-compatible server (moto's standalone server, started here on 127.0.0.1) and as a file://
// URL; the CLI with --output-dir s3://…; several compactions of one session racing from
// separate node processes; failures (wrong credentials, a stopped server) that degrade without
// leaking a secret; and a caller's own `archiveStore`.
//
// The S3 tests skip, saying why, when moto_server is not installed; `.ci/run` installs it into
// .venv-moto/ (or set CONTEXT_COMPACT_MOTO_SERVER to the executable).

import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import {
  compactMessages,
  Compactor,
  countTokens,
  listArchives,
  persistMessages,
  pruneArchives,
  restoreMessages,
  type ArchiveStore,
  type ArchiveStoreEntry,
  type Message,
} from '../../index'
import { otherWarnings, tempDir, THINKING_WINDOW, thinkingSession } from '../support/helpers'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const CLI = join(ROOT, 'cli', 'context-compact.js')
const SECRET = 'SECRETjs7c41e0-do-not-leak'

function conversation(tag: string, turns = 8): Message[] {
  const messages: Message[] = [{ role: 'system', content: 'You are a careful agent.' }]
  for (let i = 0; i < turns; i++) {
    messages.push({ role: 'user', content: `${tag} question ${i}: we decided to read src/f${i}.ts ${'word '.repeat(40)}` })
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${tag}_${i}`, name: 'read', input: { path: `src/f${i}.ts` } }] })
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${tag}_${i}`, content: `${tag} ${'x '.repeat(60)}` }] })
    messages.push({ role: 'assistant', content: `${tag} answer ${i} ${'word '.repeat(40)}` })
  }
  return messages
}

const SMALL = { provider: 'extractive' as const, contextTokenLimit: 4000, tailRetentionRatio: 0.1, force: true, maxRetries: 1, retryBaseDelayMs: 20 }

// ---------------------------------------------------------------------------------------------
// moto

function motoExecutable(): string | null {
  const fromEnv = process.env.CONTEXT_COMPACT_MOTO_SERVER
  if (fromEnv) return fromEnv
  const local = join(ROOT, '.venv-moto', 'bin', 'moto_server')
  return existsSync(local) ? local : null
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

/** A skip when the server is missing, or a failure when CI requires it (`.ci/run` installs it). */
function skip(why: string) {
  if (process.env.CONTEXT_COMPACT_REQUIRE_MOTO === '1') throw new Error(`moto_server is required (CONTEXT_COMPACT_REQUIRE_MOTO=1): ${why}`)
  console.warn(`SKIPPED: ${why}`)
}

interface Moto {
  endpoint: string
  stop(): Promise<void>
}

async function startMoto(env: Record<string, string> = {}): Promise<Moto | null> {
  const executable = motoExecutable()
  if (!executable) {
    skip("no moto_server (python3 -m venv .venv-moto && .venv-moto/bin/pip install 'moto[server]==5.2.5')")
    return null
  }
  const port = await freePort()
  const child: ChildProcess = spawn(executable, ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore', env: { ...process.env, ...env } })
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
  skip(`moto_server did not answer on ${endpoint} within 30 s`)
  return null
}

async function createBucket(moto: Moto, bucket: string) {
  const response = await fetch(`${moto.endpoint}/${bucket}`, { method: 'PUT' })
  expect(response.status).toBe(200)
}

function s3Options(moto: Moto, secret = SECRET) {
  return { aws_endpoint: moto.endpoint, aws_access_key_id: 'testing-key-id', aws_secret_access_key: secret, aws_region: 'us-east-1' }
}

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

function runNode(args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    child.stdin.end(input ?? '')
  })
}

/** The environment of a child: no cloud variables of this machine, plus `extra`. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(AWS_|GOOGLE_|AZURE_|ANTHROPIC_|OPENAI_)/.test(key)) env[key] = value
  }
  return { ...env, ...extra }
}

/** One `compactMessages` in a node process of its own, its summarizer counting: `{ calls, result }`. */
async function compactInChild(messages: Message[], options: object, env: NodeJS.ProcessEnv): Promise<{ calls: number; result: any }> {
  const input = join(tempDir(), 'messages.json')
  writeFileSync(input, JSON.stringify(messages))
  const script = `
    const { compactMessages } = require(${JSON.stringify(join(ROOT, 'index.js'))})
    const messages = JSON.parse(require('node:fs').readFileSync(${JSON.stringify(input)}, 'utf8'))
    let calls = 0
    compactMessages(messages, { ...${JSON.stringify(options)}, summarizer: async () => '## Goal\\nsummary ' + ++calls })
      .then((result) => process.stdout.write(JSON.stringify({ calls, result })))
      .catch((e) => { console.error(e); process.exit(1) })`
  const run = await runNode(['-e', script], env)
  expect(run.code, run.stderr).toBe(0)
  return JSON.parse(run.stdout)
}

/**
 * Checkpoints (issue 22) in a shared location: a process compacts; another one, later, holds
 * the same history plus a turn: it gets the first one's summary message back, byte for byte,
 * without a summary call, and its result restores to its whole history.
 */
async function secondProcessReuses(outputDir: string, storeOptions?: Record<string, string>) {
  const history = conversation('k', 10)
  const options = { contextTokenLimit: Math.floor(countTokens(history) / 0.92) - 5, tailRetentionRatio: 0.1, outputDir, sessionId: 'k', storeOptions }
  const env = childEnv({})
  const first = await compactInChild(history, options, env)
  expect(first.calls).toBe(1)
  expect(first.result.checkpoint).toMatchObject({ reused: false, recorded: true })
  const later = [...history, ...conversation('k2', 1).slice(1)]
  const second = await compactInChild(later, options, env)
  expect(second.calls).toBe(0)
  expect(second.result.checkpoint).toMatchObject({ reused: true, extended: false, archivePath: first.result.archivePath })
  expect(JSON.stringify(second.result.messages[1])).toBe(JSON.stringify(first.result.messages[1]))
  expect(await restoreMessages(second.result.messages, { outputDir, sessionId: 'k', storeOptions })).toEqual(later)
  expect((await listArchives(outputDir, 'k', { storeOptions })).length).toBe(1)
}

// ---------------------------------------------------------------------------------------------

describe('object-store outputDir: invalid input', () => {
  it('an unknown scheme, a malformed URL or a stray storeOptions is a TypeError naming the option', async () => {
    await expect(compactMessages(conversation('a'), { ...SMALL, outputDir: 'ftp://host/x' })).rejects.toThrow(TypeError)
    await expect(compactMessages(conversation('a'), { ...SMALL, outputDir: 'ftp://host/x' })).rejects.toThrow(/outputDir.*"ftp"/)
    await expect(compactMessages(conversation('a'), { ...SMALL, outputDir: 's3://' })).rejects.toThrow(/outputDir.*names no bucket/)
    await expect(listArchives('s3://b/a//c', 's')).rejects.toThrow(TypeError)
    await expect(compactMessages(conversation('a'), { ...SMALL, outputDir: tempDir(), storeOptions: { region: 'x' } })).rejects.toThrow(
      /storeOptions.*only applies/,
    )
    const unknownKey = compactMessages(conversation('a'), { ...SMALL, outputDir: 's3://b/p', storeOptions: { no_such_key: SECRET } })
    await expect(unknownKey).rejects.toThrow(/storeOptions\.no_such_key/)
    await unknownKey.catch((error: Error) => expect(error.message).not.toContain(SECRET))
    const withCredentials = listArchives(`s3://AKIA:${SECRET}@bucket/p`, 's')
    await expect(withCredentials).rejects.toThrow(TypeError)
    await withCredentials.catch((error: Error) => expect(error.message).not.toContain(SECRET))
  })

  it('an archiveStore without its functions is a TypeError', async () => {
    const store = { put: async () => true, get: async () => null, list: async () => [] } as unknown as ArchiveStore
    await expect(compactMessages(conversation('a'), { ...SMALL, archiveStore: store })).rejects.toThrow(/archiveStore\.delete must be a function/)
  })
})

describe('file:// URL', () => {
  it('compacts, lists, restores and prunes', async () => {
    const dir = join(tempDir(), 'with space+ü')
    const url = pathToFileURL(dir).href
    let messages = conversation('f')
    const history = [...messages]
    for (let round = 0; round < 3; round++) {
      const result = await compactMessages(messages, { ...SMALL, outputDir: url, sessionId: 's' })
      expect(result.compacted).toBe(true)
      expect(otherWarnings(result.warnings)).toEqual([])
      expect(result.archivePath).toMatch(new RegExp(`/s/compact-\\d{8}T\\d{6}Z-${round + 1}\\.json$`))
      const more = conversation(`f${round}`, 4).slice(1)
      messages = [...result.messages, ...more]
      history.push(...more)
    }
    expect(readdirSync(join(dir, 's')).filter((n) => /^compact-.*-\d+\.json$/.test(n))).toHaveLength(3)
    const archives = await listArchives(url, 's')
    expect(archives.map((a) => a.sequence)).toEqual([1, 2, 3])
    expect(archives.every((a) => a.metaPath !== null && a.summary)).toBe(true)
    expect(await restoreMessages(messages, { outputDir: url, sessionId: 's' })).toEqual(history)
    const pruned = await pruneArchives(url, { olderThanDays: 0 })
    expect(pruned.kept).toBe(0)
    expect(pruned.removed).toHaveLength(6)
    expect(await listArchives(url, 's')).toEqual([])
    // The audit log survives the prune: one object per event.
    expect(readdirSync(join(dir, 's', 'events')).length).toBe(4)
  })

  it('checkpoints: a second process reuses the first one\'s', async () => {
    await secondProcessReuses(pathToFileURL(join(tempDir(), 'shared')).href)
  }, 60_000)
})

describe('s3:// against moto', () => {
  let moto: Moto | null = null
  beforeAll(async () => {
    moto = await startMoto()
  }, 60_000)
  afterAll(async () => {
    await moto?.stop()
  })

  it('the whole lifecycle: compact 3 times, list, restore, memory, prune by age', async () => {
    if (!moto) return
    await createBucket(moto, 'lifecycle')
    const url = 's3://lifecycle/fleet/agent one'
    const storeOptions = s3Options(moto)
    let messages = conversation('s')
    const history = [...messages]
    for (let round = 0; round < 3; round++) {
      const result = await compactMessages(messages, { ...SMALL, outputDir: url, storeOptions, sessionId: 's', extractMemory: true })
      expect(result.compacted).toBe(true)
      expect(otherWarnings(result.warnings)).toEqual([])
      expect(result.archivePath).toMatch(new RegExp(`^s3://lifecycle/fleet/agent one/s/compact-\\d{8}T\\d{6}Z-${round + 1}\\.json$`))
      expect(result.extracted?.dir).toBe(`${url}/s/extracted`)
      const more = conversation(`s${round}`, 4).slice(1)
      messages = [...result.messages, ...more]
      history.push(...more)
    }
    const archives = await listArchives(url, 's', { storeOptions })
    expect(archives.map((a) => a.sequence)).toEqual([1, 2, 3])
    expect(archives.every((a) => a.path.startsWith(`${url}/s/`) && a.metaPath && a.summary && a.messageCount)).toBe(true)
    expect(await restoreMessages(messages, { outputDir: url, sessionId: 's', storeOptions })).toEqual(history)
    // Nothing is older than a day; everything is older than "now".
    expect((await pruneArchives(url, { olderThanDays: 1, storeOptions })).removed).toEqual([])
    const pruned = await pruneArchives(url, { olderThanDays: 0, sessionId: 's', storeOptions })
    expect(pruned.removed.filter((p) => p.endsWith('.meta.json'))).toHaveLength(3)
    expect(await listArchives(url, 's', { storeOptions })).toEqual([])
    // Numbering continues after the prune.
    const next = await persistMessages([{ role: 'user', content: 'after' }], url, 's', { storeOptions })
    expect(next).toMatch(/-4\.json$/)
  }, 60_000)

  it('what was learnt about a model is kept beside the sessions and read by the next Compactor', async () => {
    if (!moto) return
    await createBucket(moto, 'learnt')
    const url = 's3://learnt/fleet'
    const storeOptions = s3Options(moto)
    const overflow = { status: 400, error: { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 9000 tokens > 8192 maximum' } } }
    const result = await compactMessages(conversation('l', 40), { provider: 'extractive', agentModel: 'tiny', outputDir: url, storeOptions, sessionId: 'a', overflow })
    expect(result.compacted, JSON.stringify([result.error, result.warnings])).toBe(true)
    expect(result.threshold).toBe(Math.ceil(8192 * 0.92))
    expect(result.warnings.filter((w) => w.includes('learnt'))).toEqual([])
    // Pruning every session leaves the record: it is not in one.
    await pruneArchives(url, { olderThanDays: 0, storeOptions })
    const compactor = new Compactor({ agentModel: 'tiny', outputDir: url, storeOptions, sessionId: 'b' })
    expect(compactor.calibration?.window).toBe(8192)
    expect(compactor.measure(conversation('m', 1)).threshold).toBe(Math.ceil(8192 * 0.92))
  })

  it('64 concurrent compactions with thinking: sequences 1…64, 64 listArchives entries, 64 pruned archives', async () => {
    if (!moto) return
    await createBucket(moto, 'one')
    const url = 's3://one/fleet'
    const storeOptions = s3Options(moto)
    const input = thinkingSession('s')
    const options = { ...THINKING_WINDOW, outputDir: url, storeOptions, sessionId: 'c', maxRetries: 3, retryBaseDelayMs: 20 }
    const results = await Promise.all(Array.from({ length: 64 }, () => compactMessages(input, options)))
    for (const r of results) {
      expect(r.compacted && r.error === null, JSON.stringify(r.warnings)).toBe(true)
      expect(r.transformations.length > 0 && r.offloaded.length > 0).toBe(true)
      expect(r.thinkingArchivePath).toBe(r.archivePath)
      expect(r.offloadArchivePath).toBe(r.archivePath)
    }
    const range = Array.from({ length: 64 }, (_, i) => i + 1)
    const numbers = results.map((r) => Number(/-(\d+)\.json$/.exec(r.archivePath ?? '')?.[1])).sort((a, b) => a - b)
    expect(numbers).toEqual(range)
    const archives = await listArchives(url, 'c', { storeOptions })
    expect(archives.map((a) => a.sequence)).toEqual(range)
    for (const r of results.filter((_, i) => i % 16 === 0)) {
      expect(await restoreMessages(r.messages, { outputDir: url, sessionId: 'c', storeOptions })).toEqual(input)
    }
    const pruned = await pruneArchives(url, { olderThanDays: 0, sessionId: 'c', storeOptions })
    expect(pruned.removed.filter((p) => /\/compact-\d{8}T\d{6}Z-\d+\.json$/.test(p))).toHaveLength(64)
    expect(pruned.removed).toHaveLength(128)
  }, 120_000)

  it('the CLI: compact, history, restore with --output-dir s3://… and credentials from the environment', async () => {
    if (!moto) return
    await createBucket(moto, 'cli')
    const dir = tempDir()
    const input = join(dir, 'conversation.json')
    writeFileSync(input, JSON.stringify(conversation('c')))
    const env = childEnv({
      AWS_ACCESS_KEY_ID: 'testing-key-id',
      AWS_SECRET_ACCESS_KEY: SECRET,
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL: moto.endpoint,
    })
    const out = join(dir, 'compacted.json')
    const compact = await runNode([CLI, 'compact', input, '-o', out, '--force', '--limit', '2000', '--tail-ratio', '0.1', '--output-dir', 's3://cli/p', '--session-id', 'c'], env)
    expect(compact.code, compact.stderr).toBe(0)
    const history = await runNode([CLI, 'history', '--output-dir', 's3://cli/p', '--session-id', 'c', '--json'], env)
    expect(history.code, history.stderr).toBe(0)
    const listed = JSON.parse(history.stdout)
    expect(listed).toHaveLength(1)
    expect(listed[0].path).toMatch(/^s3:\/\/cli\/p\/c\/compact-.*-1\.json$/)
    const restored = await runNode([CLI, 'restore', out, '--output-dir', 's3://cli/p', '--session-id', 'c'], env)
    expect(restored.code, restored.stderr).toBe(0)
    expect(JSON.parse(restored.stdout)).toEqual(conversation('c'))
    for (const run of [compact, history, restored]) expect(run.stdout + run.stderr).not.toContain(SECRET)
    // --store-option works too (here with the endpoint), and a malformed one is a usage error.
    const bad = await runNode([CLI, 'history', '--output-dir', 's3://cli/p', '--store-option', `${SECRET}`], env)
    expect(bad.code).toBe(2)
    expect(bad.stderr).not.toContain(SECRET)
    const viaFlag = await runNode(
      [CLI, 'history', '--output-dir', 's3://cli/p', '--session-id', 'c', '--json', '--store-option', `aws_endpoint=${moto.endpoint}`],
      childEnv({ AWS_ACCESS_KEY_ID: 'k', AWS_SECRET_ACCESS_KEY: SECRET, AWS_REGION: 'us-east-1' }),
    )
    expect(viaFlag.code, viaFlag.stderr).toBe(0)
    expect(JSON.parse(viaFlag.stdout)).toHaveLength(1)
  }, 120_000)

  it('concurrent compactions of one session from separate processes never overwrite each other', async () => {
    if (!moto) return
    await createBucket(moto, 'race')
    const dir = tempDir()
    const env = childEnv({ AWS_ACCESS_KEY_ID: 'testing-key-id', AWS_SECRET_ACCESS_KEY: SECRET, AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL: moto.endpoint })
    const PROCESSES = 5
    const runs = await Promise.all(
      Array.from({ length: PROCESSES }, (_, i) => {
        const input = join(dir, `conversation-${i}.json`)
        writeFileSync(input, JSON.stringify(conversation(`proc${i}`)))
        return runNode(
          [CLI, 'compact', input, '-o', join(dir, `out-${i}.json`), '--force', '--limit', '2000', '--tail-ratio', '0.1', '--output-dir', 's3://race/shared', '--session-id', 'one', '-q'],
          env,
        )
      }),
    )
    for (const run of runs) expect(run.code, run.stderr).toBe(0)
    const storeOptions = { aws_endpoint: moto.endpoint, aws_access_key_id: 'k', aws_secret_access_key: 'x', aws_region: 'us-east-1' }
    const archives = await listArchives('s3://race/shared', 'one', { storeOptions })
    expect(archives.map((a) => a.sequence)).toEqual(Array.from({ length: PROCESSES }, (_, i) => i + 1))
    // Each process's archive is there, intact: restoring each process's output gives its input.
    for (let i = 0; i < PROCESSES; i++) {
      const compacted = JSON.parse((await import('node:fs')).readFileSync(join(dir, `out-${i}.json`), 'utf8'))
      const restored = await restoreMessages(compacted, { outputDir: 's3://race/shared', sessionId: 'one', storeOptions })
      expect(restored).toEqual(conversation(`proc${i}`))
    }
  }, 120_000)

  it('checkpoints: a second process reuses the first one\'s', async () => {
    if (!moto) return
    await createBucket(moto, 'checkpoints')
    await secondProcessReuses('s3://checkpoints/fleet', s3Options(moto))
  }, 60_000)

  it('a stopped server: compaction succeeds without an archive and a warning, or fails closed', async () => {
    const own = await startMoto()
    if (!own) return
    await createBucket(own, 'stop')
    const options = { ...SMALL, outputDir: 's3://stop/p', storeOptions: s3Options(own), sessionId: 's' }
    expect((await compactMessages(conversation('x'), options)).archivePath).toMatch(/^s3:/)
    await own.stop()
    const logs: string[] = []
    const result = await compactMessages(conversation('y'), { ...options, onLog: (entry) => logs.push(JSON.stringify(entry)) })
    expect(result.compacted).toBe(true)
    expect(result.archivePath).toBeNull()
    expect(result.warnings.join('\n')).toMatch(/could not archive/)
    const strict = await compactMessages(conversation('y'), { ...options, requireArchive: true })
    expect(strict.compacted).toBe(false)
    expect(strict.error?.code).toBe('ARCHIVE_FAILED')
    expect(JSON.stringify([result, strict, logs])).not.toContain(SECRET)
  }, 60_000)

  it('wrong credentials: a clear error, and the secret appears nowhere', async () => {
    const locked = await startMoto({ INITIAL_NO_AUTH_ACTION_COUNT: '0' })
    if (!locked) return
    try {
      const logs: string[] = []
      const options = { ...SMALL, outputDir: 's3://locked/p', storeOptions: s3Options(locked), sessionId: 's', extractMemory: true }
      const result = await compactMessages(conversation('w'), { ...options, onLog: (entry) => logs.push(JSON.stringify(entry)) })
      expect(result.compacted).toBe(true)
      expect(result.archivePath).toBeNull()
      expect(result.warnings.join('\n')).toMatch(/403|Forbidden|InvalidAccessKeyId/i)
      const listing = await listArchives('s3://locked/p', 's', { storeOptions: s3Options(locked) }).catch((e: Error) => e)
      expect(listing).toBeInstanceOf(Error)
      expect(String(listing)).toMatch(/403|Forbidden|InvalidAccessKeyId/i)
      const cli = await runNode(
        [CLI, 'history', '--output-dir', 's3://locked/p'],
        childEnv({ AWS_ACCESS_KEY_ID: 'nobody', AWS_SECRET_ACCESS_KEY: SECRET, AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL: locked.endpoint }),
      )
      expect(cli.code).toBe(1)
      expect(cli.stderr).toMatch(/403|Forbidden|InvalidAccessKeyId/i)
      expect(JSON.stringify([result, logs, String(listing), cli])).not.toContain(SECRET)
    } finally {
      await locked.stop()
    }
  }, 60_000)
})

describe('archiveStore: your own store', () => {
  /** A Map store; `put` with ifNotExists is atomic (check and write in one synchronous step). */
  function mapStore(delayMs = 0) {
    const entries = new Map<string, { value: Uint8Array; at: number }>()
    const calls: string[] = []
    const pause = () => new Promise((r) => setTimeout(r, delayMs))
    const store: ArchiveStore = {
      async put(key, value, { ifNotExists }) {
        calls.push(`put ${key}`)
        await pause()
        if (ifNotExists && entries.has(key)) return false
        entries.set(key, { value: Uint8Array.from(value), at: Date.now() })
        return true
      },
      async get(key) {
        await pause()
        return entries.get(key)?.value ?? null
      },
      async list(prefix): Promise<ArchiveStoreEntry[]> {
        await pause()
        return [...entries].filter(([k]) => k.startsWith(prefix)).map(([key, e]) => ({ key, size: e.value.byteLength, lastModified: e.at }))
      },
      async delete(key) {
        entries.delete(key)
      },
    }
    return { store, entries, calls }
  }

  it('holds everything: archives, metadata, one object per event and summary, memory', async () => {
    const { store, entries } = mapStore()
    let messages = conversation('m')
    const history = [...messages]
    for (let round = 0; round < 3; round++) {
      const result = await compactMessages(messages, { ...SMALL, archiveStore: store, sessionId: 'k', extractMemory: true })
      expect(result.compacted).toBe(true)
      expect(otherWarnings(result.warnings)).toEqual([])
      expect(result.archivePath).toMatch(new RegExp(`^archiveStore:k/compact-\\d{8}T\\d{6}Z-${round + 1}\\.json$`))
      const more = conversation(`m${round}`, 4).slice(1)
      messages = [...result.messages, ...more]
      history.push(...more)
    }
    const keys = [...entries.keys()]
    expect(keys.filter((k) => /^k\/compact-.*-\d+\.json$/.test(k)).length).toBe(3)
    expect(keys.filter((k) => /^k\/compact-.*-\d+\.meta\.json$/.test(k)).length).toBe(3)
    expect(keys.filter((k) => /^k\/events\/\d{8}T\d{6}\.\d{3}Z-[0-9a-f]{16}\.json$/.test(k)).length).toBe(3)
    expect(keys.filter((k) => k.startsWith('k/summaries/')).length).toBe(3)
    expect(keys.some((k) => k.startsWith('k/extracted/decisions/'))).toBe(true)
    expect((await listArchives('ignored', 'k', { archiveStore: store })).map((a) => a.sequence)).toEqual([1, 2, 3])
    expect(await restoreMessages(messages, { sessionId: 'k', archiveStore: store })).toEqual(history)
    const pruned = await pruneArchives('ignored', { olderThanDays: 0, archiveStore: store })
    expect(pruned.removed).toHaveLength(6)
    expect(entries.get('k/last-sequence')).toBeDefined()
  })

  it('sequence numbers stay unique when compactions race on one session (put ifNotExists → false)', async () => {
    const { store, calls } = mapStore(5)
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => compactMessages(conversation(`r${i}`), { ...SMALL, archiveStore: store, sessionId: 'race' })),
    )
    const sequences = results.map((r) => Number(/-(\d+)\.json$/.exec(r.archivePath ?? '')?.[1])).sort((a, b) => a - b)
    expect(sequences).toEqual([1, 2, 3, 4, 5, 6])
    // The writers did collide (several tried to claim the same number) and moved on.
    const claims = calls.filter((c) => /^put race\/sequences\/\d+$/.test(c))
    expect(claims.length).toBeGreaterThan(6)
    expect(calls.filter((c) => /^put race\/compact-.*-\d+\.json$/.test(c))).toHaveLength(6)
    for (let i = 0; i < 6; i++) {
      expect(await restoreMessages(results[i].messages, { sessionId: 'race', archiveStore: store })).toEqual(conversation(`r${i}`))
    }
  })

  it('a failing store degrades to no archive with a warning, after retrying; requireArchive fails closed', async () => {
    let attempts = 0
    const broken: ArchiveStore = {
      put: async () => {
        attempts++
        throw new Error('database is down')
      },
      get: async () => null,
      list: async () => [],
      delete: async () => {},
    }
    const result = await compactMessages(conversation('b'), { ...SMALL, archiveStore: broken })
    expect(result.compacted).toBe(true)
    expect(result.archivePath).toBeNull()
    expect(result.warnings.join('\n')).toMatch(/archiveStore\.put failed: database is down/)
    // maxRetries: 1 → two attempts for the archive.
    expect(attempts).toBeGreaterThanOrEqual(2)
    const strict = await compactMessages(conversation('b'), { ...SMALL, archiveStore: broken, requireArchive: true })
    expect(strict.error?.code).toBe('ARCHIVE_FAILED')
  })

  it('persistMessages and offloadToolResults write to it too', async () => {
    const { store, entries } = mapStore()
    const path = await persistMessages([{ role: 'user', content: 'hi' }], 'unused', 'p', { archiveStore: store })
    expect(path).toMatch(/^archiveStore:p\/compact-.*-1\.json$/)
    expect(JSON.parse(Buffer.from(entries.get(path.slice('archiveStore:'.length))!.value).toString('utf8'))).toEqual([{ role: 'user', content: 'hi' }])
  })
})

afterAll(() => {
  // Leave nothing in the repo.
  rmSync(join(ROOT, '.context-compact-object-store-test'), { recursive: true, force: true })
})
