// Archives (F-006, SPEC §6) and history (SanBot): byte-faithful content, sequences under
// concurrency (threads and processes), permissions, symlinks, failure policy, metadata and
// audit log, list / restore / prune.

import { spawn } from 'node:child_process'
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { describe, expect, it } from 'vitest'

import {
  compactMessages,
  listArchives,
  persistMessages,
  pruneArchives,
  restoreMessages,
  type CompactOptions,
  type CompactResult,
  type Message,
} from '../../index'
import { otherWarnings, tempDir, THINKING_WINDOW, thinkingSession } from '../support/helpers'

const REPO = fileURLToPath(new URL('../..', import.meta.url))
const ARCHIVE_NAME = /^compact-(\d{8}T\d{6}Z)-(\d+)\.json$/

const summarizer = async () => 'summary'

function options(outputDir: string, sessionId = 's', extra: CompactOptions = {}): CompactOptions {
  // A small window so that a short conversation has a middle: the tail keeps ~200 tokens.
  return { force: true, outputDir, sessionId, summarizer, contextTokenLimit: 2_000, tailRetentionRatio: 0.1, ...extra }
}

const filler = (n: number) => 'word '.repeat(n)

/** Turns with tool calls, unknown fields, odd key order, extreme numbers and non-BMP text. */
function turns(from: number, count: number): Message[] {
  const out: any[] = []
  for (let i = from; i < from + count; i++) {
    out.push({ z: i, role: 'user', content: `question ${i} 🦀 𝄞 ${filler(25)}`, a: { y: 1e21, x: -0.5 } })
    out.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `reading ${i} 😀` },
        { type: 'tool_use', id: `toolu_${i}`, name: 'read_file', input: { path: `src/f${i}.rs`, big: 12345678901234567890 } },
      ],
      usage_note: { max: Number.MAX_VALUE, tiny: 5e-324, safe: Number.MAX_SAFE_INTEGER, neg: -1.5e-300 },
    })
    out.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: `fn f${i}() {} ${'x '.repeat(30)}`, zz: [null, true, {}] }],
    })
    out.push({ role: 'assistant', content: `answer ${i} ${filler(25)}`, meta: { b: 2, a: 1 } })
  }
  return out
}

function conversation(): Message[] {
  return [{ role: 'system', content: 'You are a careful agent.' }, ...turns(0, 6)]
}

/** The middle a result replaced: input minus retained head and tail. */
function middleOf(input: Message[], result: CompactResult): Message[] {
  const summaryIndex = result.messages.findIndex((m) => !input.includes(m))
  const tailLength = result.messages.length - summaryIndex - 1
  return input.slice(summaryIndex, input.length - tailLength)
}

/** Same keys in the same order, recursively (toEqual ignores key order). */
function expectSameKeyOrder(actual: unknown, expected: unknown, path = '$'): void {
  if (Array.isArray(expected)) {
    expect(Array.isArray(actual), path).toBe(true)
    ;(expected as unknown[]).forEach((e, i) => expectSameKeyOrder((actual as unknown[])[i], e, `${path}[${i}]`))
  } else if (expected !== null && typeof expected === 'object') {
    expect(Object.keys(actual as object), path).toEqual(Object.keys(expected as object))
    for (const key of Object.keys(expected as object)) {
      expectSameKeyOrder((actual as any)[key], (expected as any)[key], `${path}.${key}`)
    }
  }
}

function expectIdentical(actual: unknown, expected: unknown): void {
  expect(actual).toEqual(expected)
  expectSameKeyOrder(actual, expected)
  expect(JSON.stringify(actual)).toBe(JSON.stringify(expected))
}

function archiveNames(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((n) => ARCHIVE_NAME.test(n)) : []
}

function sequences(dir: string): number[] {
  return archiveNames(dir)
    .map((n) => Number(ARCHIVE_NAME.exec(n)![2]))
    .sort((a, b) => a - b)
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1)

function readEvents(sessionDir: string): any[] {
  return readFileSync(join(sessionDir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l))
}

/** Runs `node -e script` and resolves with its stdout; rejects on a non-zero exit. */
function runNode(script: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`child exited ${code}: ${stderr}`))))
  })
}

/** A child process that compacts `count` times concurrently and prints the archive paths. */
function childCompactions(outputDir: string, sessionId: string, count: number, messagesFile: string): Promise<string> {
  const script = `
    const { compactMessages } = require(${JSON.stringify(join(REPO, 'index.js'))})
    const messages = JSON.parse(require('node:fs').readFileSync(${JSON.stringify(messagesFile)}, 'utf8'))
    // Each compaction of the same list writes its own archive (a checkpoint would be reused).
    const options = { force: true, outputDir: ${JSON.stringify(outputDir)}, sessionId: ${JSON.stringify(sessionId)},
      contextTokenLimit: 2000, tailRetentionRatio: 0.1, summarizer: async () => 'summary', checkpoints: false }
    Promise.all(Array.from({ length: ${count} }, () => compactMessages(messages, options)))
      .then((results) => {
        if (results.some((r) => !r.compacted || !r.archivePath)) throw new Error('not archived: ' + JSON.stringify(results[0]))
        process.stdout.write(JSON.stringify(results.map((r) => r.archivePath)))
      })
      .catch((e) => { console.error(e); process.exit(1) })
  `
  return runNode(script)
}

describe('archive content', () => {
  it('is the middle, byte-faithful: key order, unknown fields, extreme numbers, non-BMP text', async () => {
    const tmp = tempDir()
    const input = conversation()
    const result = await compactMessages(input, options(tmp))
    expect(result.compacted).toBe(true)
    expect(result.archivePath).toMatch(/compact-\d{8}T\d{6}Z-1\.json$/)
    const text = readFileSync(result.archivePath!, 'utf8')
    expect(text).toContain('\n  ') // indented
    const archived = JSON.parse(text)
    const middle = middleOf(input, result)
    expect(middle.length).toBe(result.stats.compactedMessageCount)
    expectIdentical(archived, middle)
    expect(text).toContain('🦀 𝄞')
    expect(text).toContain('😀')
    const numbers = archived.find((m: any) => m.usage_note).usage_note
    expect(numbers).toEqual({ max: Number.MAX_VALUE, tiny: 5e-324, safe: Number.MAX_SAFE_INTEGER, neg: -1.5e-300 })
    const big = archived.find((m: any) => Array.isArray(m.content) && m.content[1]?.input).content[1].input.big
    expect(big).toBe(12345678901234567890)
    expect(archived.find((m: any) => m.a).a).toEqual({ y: 1e21, x: -0.5 })
  })

  it('persistMessages round-trips the same way', async () => {
    const tmp = tempDir()
    const middle = turns(0, 2)
    const path = await persistMessages(middle, tmp, 'p')
    expectIdentical(JSON.parse(readFileSync(path, 'utf8')), middle)
  })

  it('is private: files 0600, directories 0700', async () => {
    const tmp = tempDir()
    const outputDir = join(tmp, 'nested', 'out')
    const result = await compactMessages(conversation(), options(outputDir))
    const session = join(outputDir, 's')
    expect(statSync(outputDir).mode & 0o777).toBe(0o700)
    expect(statSync(session).mode & 0o777).toBe(0o700)
    for (const name of readdirSync(session)) {
      expect([name, statSync(join(session, name)).mode & 0o777]).toEqual([name, 0o600])
    }
    expect(statSync(result.archivePath!).mode & 0o777).toBe(0o600)
  })
})

/** Runs the CLI and resolves with its stdout; rejects on a non-zero exit. */
function runCli(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO, 'cli', 'context-compact.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`cli exited ${code}: ${stderr}`))))
  })
}

const SEPARATE_ARCHIVES = join(REPO, 'crates', 'core', 'tests', 'fixtures', 'separate-archives')
const fixture = (name: string) => JSON.parse(readFileSync(join(SEPARATE_ARCHIVES, name), 'utf8'))

describe('one sequence number per compaction', () => {
  it('64 concurrent compactions with thinking: sequences 1…64, one listArchives, history and prune entry each', async () => {
    const tmp = tempDir()
    const input = thinkingSession('c')
    const results = await Promise.all(Array.from({ length: 64 }, () => compactMessages(input, { ...THINKING_WINDOW, outputDir: tmp, sessionId: 'c' })))
    for (const r of results) {
      expect(r.compacted && r.error === null).toBe(true)
      expect(r.transformations.length).toBeGreaterThan(0)
      expect(r.offloaded.length).toBeGreaterThan(0)
      // The originals of the kept messages it changed are in the compaction's one archive.
      expect(r.thinkingArchivePath).toBe(r.archivePath)
      expect(r.offloadArchivePath).toBe(r.archivePath)
    }
    const session = join(tmp, 'c')
    expect(sequences(session)).toEqual(range(64))
    expect((await listArchives(tmp, 'c')).map((a) => a.sequence)).toEqual(range(64))
    const history = JSON.parse(await runCli(['history', '--output-dir', tmp, '--session-id', 'c', '--json']))
    expect(history.map((a: any) => a.sequence)).toEqual(range(64))
    expect(readEvents(session).map((e) => e.sequence).sort((a, b) => a - b)).toEqual(range(64))
    // One compaction summarized the middle; the others may have reused its checkpoint (they run
    // at once on the same list), so read the archive of one that did not.
    const first = results.find((r) => !r.checkpoint?.reused) ?? results[0]
    const archived = JSON.parse(readFileSync(first.archivePath!, 'utf8'))
    expect(Object.keys(archived)).toEqual(['messages', 'keptOriginals'])
    expect(Object.keys(archived.keptOriginals)).toEqual(['thinkingRemoved', 'shortened'])
    expect(archived.messages).toEqual(middleOf(input, first))
    for (const r of results.filter((_, i) => i % 9 === 0)) {
      expectIdentical(await restoreMessages(r.messages, { outputDir: tmp, sessionId: 'c' }), input)
    }
    const pruned = await pruneArchives(tmp, { olderThanDays: 0, sessionId: 'c' })
    expect(pruned.removed.filter((p) => ARCHIVE_NAME.test(p.split('/').pop()!))).toHaveLength(64)
    expect(pruned.removed).toHaveLength(128)
  }, 120_000)

  it('archives written before (separate archives for the changed kept messages) restore exactly; the session goes on with one number each', async () => {
    const archives = join(SEPARATE_ARCHIVES, 'archives')
    for (const [session, count] of [['thinking-offload', 6], ['openai-offload', 2]] as const) {
      const restored = await restoreMessages(fixture(`${session}.compacted.json`), { outputDir: archives, sessionId: session })
      expectIdentical(restored, fixture(`${session}.input.json`))
      expect((await listArchives(archives, session)).map((a) => a.sequence)).toEqual(range(count))
    }
    const tmp = tempDir()
    cpSync(join(archives, 'thinking-offload'), join(tmp, 'thinking-offload'), { recursive: true })
    const more = thinkingSession('new', 4, 700).slice(1)
    const result = await compactMessages([...fixture('thinking-offload.compacted.json'), ...more], {
      ...THINKING_WINDOW,
      outputDir: tmp,
      sessionId: 'thinking-offload',
    })
    expect(result.compacted && result.error === null).toBe(true)
    expect(result.transformations.length > 0 && result.offloaded.length > 0).toBe(true)
    expect(result.archivePath).toMatch(/-7\.json$/)
    expect((await listArchives(tmp, 'thinking-offload')).map((a) => a.sequence)).toEqual(range(7))
    const restored = await restoreMessages(result.messages, { outputDir: tmp, sessionId: 'thinking-offload' })
    expectIdentical(restored, [...fixture('thinking-offload.input.json'), ...more])
  })
})

describe('sequences', () => {
  it('64 concurrent compactions in one process get 64 distinct files, sequences 1…64', async () => {
    const tmp = tempDir()
    const input = conversation()
    // The same list each time: without checkpoints, each compaction writes its own archive.
    const results = await Promise.all(Array.from({ length: 64 }, () => compactMessages(input, options(tmp, 'c', { checkpoints: false }))))
    expect(results.every((r) => r.compacted && r.archivePath)).toBe(true)
    expect(new Set(results.map((r) => r.archivePath)).size).toBe(64)
    const session = join(tmp, 'c')
    expect(sequences(session)).toEqual(range(64))
    for (const name of archiveNames(session)) {
      expect(JSON.parse(readFileSync(join(session, name), 'utf8'))).toEqual(middleOf(input, results[0]))
    }
    // One whole JSON line per compaction in the audit log, one metadata file per archive.
    const events = readEvents(session)
    expect(events.length).toBe(64)
    expect(events.every((e) => e.event === 'compacted')).toBe(true)
    expect(new Set(events.map((e) => e.sequence)).size).toBe(64)
    expect(readdirSync(session).filter((n) => n.endsWith('.meta.json')).length).toBe(64)
  })

  it('64 compactions from two processes get 64 distinct sequences', async () => {
    const tmp = tempDir()
    const messagesFile = join(tmp, 'messages.json')
    writeFileSync(messagesFile, JSON.stringify(conversation()))
    const outputDir = join(tmp, 'out')
    const outputs = await Promise.all([
      childCompactions(outputDir, 'shared', 32, messagesFile),
      childCompactions(outputDir, 'shared', 32, messagesFile),
    ])
    const paths = outputs.flatMap((o) => JSON.parse(o) as string[])
    expect(new Set(paths).size).toBe(64)
    const session = join(outputDir, 'shared')
    expect(sequences(session)).toEqual(range(64))
    for (const name of archiveNames(session)) {
      expect(Array.isArray(JSON.parse(readFileSync(join(session, name), 'utf8')))).toBe(true)
    }
    expect(readEvents(session).length).toBe(64)
  })

  it('continues after a restart (a fresh process writes the next number)', async () => {
    const tmp = tempDir()
    const input = conversation()
    await compactMessages(input, options(tmp, 'r', { checkpoints: false }))
    await compactMessages(input, options(tmp, 'r', { checkpoints: false }))
    const messagesFile = join(tmp, 'messages.json')
    writeFileSync(messagesFile, JSON.stringify(input))
    const [path] = JSON.parse(await childCompactions(tmp, 'r', 1, messagesFile))
    expect(path).toMatch(/-3\.json$/)
    expect(sequences(join(tmp, 'r'))).toEqual([1, 2, 3])
  })
})

describe('safety', () => {
  it('never follows a symlink planted at the next names', async () => {
    const tmp = tempDir()
    const session = join(tmp, 's')
    mkdirSync(session, { recursive: true, mode: 0o700 })
    const victim = join(tmp, 'victim.txt')
    writeFileSync(victim, 'precious')
    // Archive, metadata and audit names for the next few seconds, whatever the clock says then.
    const now = Date.now()
    for (let s = -2; s <= 10; s++) {
      const ts = new Date(now + s * 1000).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '')
      symlinkSync(victim, join(session, `compact-${ts}-1.json`))
      symlinkSync(victim, join(session, `compact-${ts}-2.meta.json`))
    }
    symlinkSync(victim, join(session, 'events.jsonl'))
    const result = await compactMessages(conversation(), options(tmp))
    expect(result.compacted).toBe(true)
    expect(result.archivePath).not.toBeNull()
    expect(lstatSync(result.archivePath!).isSymbolicLink()).toBe(false)
    expect(result.archivePath).toMatch(/-2\.json$/)
    // The metadata and the audit line could not be written: warnings, not failures.
    expect(result.warnings.length).toBeGreaterThanOrEqual(2)
    expect(readFileSync(victim, 'utf8')).toBe('precious')
  })

  it('rejects session ids that could leave outputDir with TypeError', async () => {
    const tmp = tempDir()
    for (const sessionId of ['../etc', 'a/b', '..', '', 'x\\y']) {
      await expect(compactMessages(conversation(), options(tmp, sessionId))).rejects.toThrow(TypeError)
      await expect(persistMessages(turns(0, 1), tmp, sessionId)).rejects.toThrow(TypeError)
      await expect(listArchives(tmp, sessionId)).rejects.toThrow(TypeError)
      await expect(restoreMessages(conversation(), { outputDir: tmp, sessionId })).rejects.toThrow(TypeError)
      await expect(pruneArchives(tmp, { sessionId })).rejects.toThrow(TypeError)
    }
    expect(readdirSync(tmp)).toEqual([])
  })

  it('an unwritable outputDir still compacts, with archivePath null and a warning', async () => {
    const tmp = tempDir()
    const file = join(tmp, 'file')
    writeFileSync(file, 'x')
    // Under a regular file: no directory can be created there, even as root.
    const outputDir = join(file, 'sub')
    const input = conversation()
    const result = await compactMessages(input, options(outputDir))
    expect(result.compacted).toBe(true)
    expect(result.archivePath).toBeNull()
    expect(otherWarnings(result.warnings).length).toBe(1)
    expect(otherWarnings(result.warnings)[0]).toMatch(/could not archive/)
    expect(result.summary).toMatch(/not archived/)
    expect(result.messages.length).toBeLessThan(input.length)
  })

  it('with requireArchive an unwritable outputDir skips the compaction with ARCHIVE_FAILED', async () => {
    const tmp = tempDir()
    const file = join(tmp, 'file')
    writeFileSync(file, 'x')
    const input = conversation()
    const result = await compactMessages(input, options(join(file, 'sub'), 's', { requireArchive: true }))
    expect(result.compacted).toBe(false)
    expect(result.error?.code).toBe('ARCHIVE_FAILED')
    expect(result.messages).toBe(input)
    expect(result.archivePath).toBeNull()
  })
})

describe('metadata and audit log', () => {
  it('writes compact-…-N.meta.json, an events.jsonl line and summaries.md', async () => {
    const tmp = tempDir()
    const input = conversation()
    const result = await compactMessages(input, options(tmp))
    const session = join(tmp, 's')
    const name = result.archivePath!.split('/').pop()!
    const meta = JSON.parse(readFileSync(join(session, name.replace(/\.json$/, '.meta.json')), 'utf8'))
    const head = result.messages.findIndex((m) => !input.includes(m))
    const middle = middleOf(input, result)
    expect(meta).toMatchObject({
      sessionId: 's',
      sequence: 1,
      archive: name,
      provider: 'custom',
      headCount: head,
      middleCount: middle.length,
      tailCount: input.length - head - middle.length,
      middle: { start: head, end: head + middle.length },
      stats: result.stats,
      summary: result.summary,
    })
    expect(new Date(meta.createdAt).toISOString().replace(/\.000Z$/, 'Z')).toBe(meta.createdAt)
    const events = readEvents(session)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ event: 'compacted', archive: name, sequence: 1, tokens: result.tokens, threshold: result.threshold })
    const summaries = readFileSync(join(session, 'summaries.md'), 'utf8')
    expect(summaries.startsWith(`## ${meta.createdAt} — ${name}\n\nsummary`)).toBe(true)
  })

  it('records failures with their code, and writes nothing below the threshold', async () => {
    const tmp = tempDir()
    const session = join(tmp, 's')
    const below = await compactMessages(conversation(), options(tmp, 's', { force: false, contextTokenLimit: 1_000_000 }))
    expect(below.compacted).toBe(false)
    expect(existsSync(session)).toBe(false)
    const failing = async () => {
      throw new Error('boom')
    }
    const failed = await compactMessages(conversation(), options(tmp, 's', { summarizer: failing, maxRetries: 0 }))
    expect(failed.error?.code).toBe('SUMMARIZER_ERROR')
    const events = readEvents(session)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ event: 'failed', code: 'SUMMARIZER_ERROR' })
    expect(events[0].reason).toMatch(/boom/)
    expect(archiveNames(session)).toEqual([])
  })
})

/** Compacts `rounds` times, adding turns after each; returns the full history and the last list. */
async function compactRounds(outputDir: string, rounds: number): Promise<{ history: Message[]; current: Message[]; results: CompactResult[] }> {
  const history = conversation()
  let current = history
  const results: CompactResult[] = []
  for (let round = 0; round < rounds; round++) {
    const result = await compactMessages(current, options(outputDir))
    expect(result.compacted).toBe(true)
    results.push(result)
    const more = turns(100 + round * 10, 2)
    history.push(...more)
    current = [...result.messages, ...more]
  }
  return { history, current, results }
}

describe('restoreMessages', () => {
  it('after one compaction returns exactly the original conversation', async () => {
    const tmp = tempDir()
    const input = conversation()
    const result = await compactMessages(input, options(tmp))
    const restored = await restoreMessages(result.messages, { outputDir: tmp, sessionId: 's' })
    expectIdentical(restored, input)
    // Messages that were never compacted are the caller's own objects.
    expect(restored[0]).toBe(input[0])
    expect(restored[restored.length - 1]).toBe(input[input.length - 1])
  })

  it('after three compactions returns exactly the whole history', async () => {
    const tmp = tempDir()
    const { history, current } = await compactRounds(tmp, 3)
    expect(current.length).toBeLessThan(history.length)
    const restored = await restoreMessages(current, { outputDir: tmp, sessionId: 's' })
    expectIdentical(restored, history)
  })

  it('finds archives by file name after the directory moved', async () => {
    const tmp = tempDir()
    const { history, current } = await compactRounds(join(tmp, 'before'), 2)
    const { renameSync } = await import('node:fs')
    renameSync(join(tmp, 'before'), join(tmp, 'after'))
    expectIdentical(await restoreMessages(current, { outputDir: join(tmp, 'after'), sessionId: 's' }), history)
  })

  it('rejects with ARCHIVE_NOT_FOUND when an archive is gone', async () => {
    const tmp = tempDir()
    const result = await compactMessages(conversation(), options(tmp))
    rmSync(result.archivePath!)
    await expect(restoreMessages(result.messages, { outputDir: tmp, sessionId: 's' })).rejects.toMatchObject({
      code: 'ARCHIVE_NOT_FOUND',
      message: expect.stringMatching(/compact-.*-1\.json/),
    })
  })

  it('never reads anything for a crafted summary that names a path outside the session directory', async () => {
    const tmp = tempDir()
    mkdirSync(join(tmp, 's'))
    writeFileSync(join(tmp, 'secret.json'), JSON.stringify([{ role: 'user', content: 'secret' }]))
    for (const target of ['../secret.json', '/etc/passwd', '../../../../etc/passwd', 'compact-20260101T000000Z-1.json']) {
      const crafted: Message[] = [
        {
          role: 'user',
          content: `[context-compact] Earlier conversation (1 message) was compacted into the summary below. Originals archived in: ${target}\n\nx`,
        },
      ]
      // No record of the session names it: it is the caller's message, and comes back as it is
      // (a recorded summary naming such a path is refused: crates/core/tests/archive.rs).
      expect(await restoreMessages(crafted, { outputDir: tmp, sessionId: 's' })).toEqual(crafted)
    }
  })

  it('returns a list without summaries as it is', async () => {
    const input = conversation()
    const restored = await restoreMessages(input, { outputDir: tempDir(), sessionId: 's' })
    expect(restored).not.toBe(input)
    restored.forEach((m, i) => expect(m).toBe(input[i]))
  })
})

describe('listArchives', () => {
  it('lists a session by sequence with metadata, ignoring non-archives', async () => {
    const tmp = tempDir()
    const { results } = await compactRounds(tmp, 3)
    const session = join(tmp, 's')
    writeFileSync(join(session, '.tmp-leftover'), '[')
    writeFileSync(join(session, 'compact-2026-x.json'), '[]')
    const list = await listArchives(tmp, 's')
    expect(list.map((a) => a.sequence)).toEqual([1, 2, 3])
    list.forEach((info, i) => {
      expect(info.path).toBe(results[i].archivePath)
      expect(info.fileName).toBe(info.path.split('/').pop())
      expect(info.timestamp).toMatch(/^\d{8}T\d{6}Z$/)
      expect(Number.isNaN(Date.parse(info.createdAt))).toBe(false)
      expect(info.messageCount).toBe(results[i].stats.compactedMessageCount)
      expect(info.sizeBytes).toBe(statSync(info.path).size)
      expect(info.metaPath).toBe(info.path.replace(/\.json$/, '.meta.json'))
      expect(info.summary).toBe(results[i].summary)
    })
    // A corrupt metadata file is tolerated.
    writeFileSync(list[0].metaPath!, '{oops')
    const again = await listArchives(tmp, 's')
    expect(again[0]).toMatchObject({ sequence: 1, metaPath: null, summary: null })
    expect(await listArchives(tmp, 'nobody')).toEqual([])
  })
})

describe('pruneArchives', () => {
  it('removes only old archives and their metadata, never the audit log or memory files', async () => {
    const tmp = tempDir()
    const recent = await compactMessages(conversation(), options(tmp))
    const session = join(tmp, 's')
    const other = join(tmp, 'other')
    mkdirSync(other, { mode: 0o700 })
    const old = [
      join(session, 'compact-20200101T000000Z-1.json'),
      join(session, 'compact-20200101T000000Z-1.meta.json'),
      join(other, 'compact-20200301T120000Z-4.json'),
    ]
    for (const path of old) writeFileSync(path, '[]', { mode: 0o600 })
    writeFileSync(join(session, 'decisions.md'), 'keep')
    const eventsBefore = readFileSync(join(session, 'events.jsonl'), 'utf8')
    const summariesBefore = readFileSync(join(session, 'summaries.md'), 'utf8')

    const result = await pruneArchives(tmp, { olderThanDays: 7 })
    expect([...result.removed].sort()).toEqual([...old].sort())
    expect(result.kept).toBe(1)
    for (const path of old) expect(existsSync(path)).toBe(false)
    expect(existsSync(recent.archivePath!)).toBe(true)
    expect(existsSync(recent.archivePath!.replace(/\.json$/, '.meta.json'))).toBe(true)
    expect(readFileSync(join(session, 'decisions.md'), 'utf8')).toBe('keep')
    expect(readFileSync(join(session, 'summaries.md'), 'utf8')).toBe(summariesBefore)
    const events = readFileSync(join(session, 'events.jsonl'), 'utf8')
    expect(events.startsWith(eventsBefore)).toBe(true)
    expect(readEvents(session).pop()).toMatchObject({ event: 'pruned', olderThanDays: 7 })
    expect(readEvents(other).pop()).toMatchObject({ event: 'pruned', removed: ['compact-20200301T120000Z-4.json'] })

    // The default retention is 7 days; nothing is old any more.
    expect(await pruneArchives(tmp)).toEqual({ removed: [], kept: 1 })
    await expect(pruneArchives(tmp, { olderThanDays: -1 })).rejects.toThrow(TypeError)
    await expect(pruneArchives(tmp, { olderThanDays: 'x' as unknown as number })).rejects.toThrow(TypeError)
    await expect(pruneArchives('' as string)).rejects.toThrow(TypeError)
  })

  it('prunes one session only when asked, and numbering continues after everything was pruned', async () => {
    const tmp = tempDir()
    const session = join(tmp, 's')
    mkdirSync(session, { mode: 0o700 })
    mkdirSync(join(tmp, 't'), { mode: 0o700 })
    writeFileSync(join(session, 'compact-20200101T000000Z-5.json'), '[]')
    writeFileSync(join(tmp, 't', 'compact-20200101T000000Z-1.json'), '[]')
    const result = await pruneArchives(tmp, { olderThanDays: 1, sessionId: 's' })
    expect(result.removed).toEqual([join(session, 'compact-20200101T000000Z-5.json')])
    expect(existsSync(join(tmp, 't', 'compact-20200101T000000Z-1.json'))).toBe(true)
    const next = await compactMessages(conversation(), options(tmp))
    expect(next.archivePath).toMatch(/-6\.json$/)
  })
})
