// The result always fits, or says why (SPEC §4.7, §4.8): offload of oversized kept tool
// results, NOT_SMALLER, STILL_OVER_LIMIT, overflow recovery, and the custom-strategy path's
// records. Property tests over generated conversations with giant tail tool results and giant
// user messages.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

import {
  checkMessages,
  compactMessages,
  Compactor,
  countTokens,
  measureTokens,
  offloadToolResults,
  restoreMessages,
  type CompactEvent,
  type Message,
} from '../../index'
import { conversation } from '../support/conversations'
import { pairingProblems, tempDir, textOfTokens } from '../support/helpers'

const logLines = (n: number) => Array.from({ length: n }, (_, i) => `${String(i).padStart(6, '0')} compiling crate ${i} in 0.${i}s`).join('\n')

/** A session whose last tool result is `lines` lines long. */
function session(turns: number, lines: number, dialect: 'anthropic' | 'openai' = 'anthropic'): Message[] {
  const m: Message[] = [{ role: 'system', content: 'You are a coding agent.' }]
  const call = (id: string, command: string, output: string) => {
    if (dialect === 'anthropic') {
      m.push({ role: 'assistant', content: [{ type: 'tool_use', id, name: 'bash', input: { command } }] })
      m.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: output }] })
    } else {
      m.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } }] })
      m.push({ role: 'tool', tool_call_id: id, content: output })
    }
  }
  for (let t = 0; t < turns; t++) {
    m.push({ role: 'user', content: `step ${t}: ${'please continue '.repeat(20)}` })
    call(`t${t}`, `make step${t}`, logLines(20))
  }
  call('giant', 'cargo build -vv', logLines(lines))
  return m
}

describe('a kept tool result larger than the window', () => {
  it.each(['anthropic', 'openai'] as const)('%s: is shortened to fit, reported, and restored exactly', async (dialect) => {
    const dir = tempDir()
    const messages = session(30, 5000, dialect)
    const before = JSON.stringify(messages)
    const giant = countTokens(messages.slice(-1))
    const contextTokenLimit = Math.floor(giant * 0.75)
    const result = await compactMessages(messages, { contextTokenLimit, outputDir: dir, sessionId: 's', provider: 'extractive' })
    expect(JSON.stringify(messages)).toBe(before)
    expect(result.compacted).toBe(true)
    expect(result.error).toBeNull()
    expect(countTokens(result.messages)).toBeLessThan(result.threshold)
    expect(result.offloaded).toHaveLength(1)
    const [o] = result.offloaded
    expect(o).toMatchObject({ index: result.messages.length - 1, originalIndex: messages.length - 1, kind: 'tool_result' })
    expect(o.path).toBe(dialect === 'anthropic' ? `messages.${o.index}.content.0.content` : `messages.${o.index}.content`)
    expect(o.tokens).toBeLessThan(o.originalTokens)
    expect(result.offloadArchivePath).toMatch(/compact-\d{8}T\d{6}Z-\d+\.json$/)
    const shortened = JSON.stringify(result.messages[o.index])
    expect(shortened).toContain('000000 compiling crate 0')
    expect(shortened).toContain('004999 compiling crate 4999')
    expect(shortened).toContain(result.offloadArchivePath!)
    expect(result.warnings.some((w) => w.includes('shortened to fit'))).toBe(true)
    expect(pairingProblems(result.messages)).toEqual([])
    expect(checkMessages(result.messages)).toEqual([])
    expect(JSON.stringify(await restoreMessages(result.messages, { outputDir: dir, sessionId: 's' }))).toBe(before)
  })

  it("a giant user message: STILL_OVER_LIMIT with the numbers, unless offload: 'all'", async () => {
    const dir = tempDir()
    const messages = [...session(10, 10), { role: 'assistant', content: 'What next?' }, { role: 'user', content: `Here is the log:\n${logLines(4000)}` }] as Message[]
    const contextTokenLimit = Math.floor(countTokens(messages.slice(-1)) * 0.75)
    const result = await compactMessages(messages, { contextTokenLimit, outputDir: dir, sessionId: 's', provider: 'extractive' })
    expect(result.compacted).toBe(true)
    expect(result.error).toMatchObject({ code: 'STILL_OVER_LIMIT', threshold: result.threshold })
    expect(result.error!.tokens!).toBeGreaterThanOrEqual(result.threshold)
    expect(result.error!.message).toMatch(/offload: 'all'/)
    expect(result.messages.at(-1)).toBe(messages.at(-1))
    const all = await compactMessages(messages, { contextTokenLimit, outputDir: dir, sessionId: 's', provider: 'extractive', offload: 'all' })
    expect(all.error).toBeNull()
    expect(all.offloaded).toMatchObject([{ kind: 'text', originalIndex: messages.length - 1 }])
    expect(countTokens(all.messages)).toBeLessThan(all.threshold)
    expect(await restoreMessages(all.messages, { outputDir: dir, sessionId: 's' })).toEqual(messages)
    const off = await compactMessages(session(10, 5000), { contextTokenLimit, outputDir: dir, sessionId: 's', provider: 'extractive', offload: false })
    expect(off.error?.code).toBe('STILL_OVER_LIMIT')
    expect(off.offloaded).toEqual([])
    await expect(compactMessages(messages, { offload: 'some' as any })).rejects.toThrow(TypeError)
  })
})

describe('never grow', () => {
  it('a compaction that would not shrink the list returns the input with NOT_SMALLER', async () => {
    const messages: Message[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
      { role: 'user', content: `task: ${'details '.repeat(400)}` },
      { role: 'assistant', content: `done: ${'result '.repeat(400)}` },
    ]
    const events: CompactEvent[] = []
    const result = await compactMessages(messages, {
      contextTokenLimit: 3000,
      // A summary budget that lets the long summary through (the default would cut it).
      summaryBudgetTokens: 1_000_000,
      force: true,
      outputDir: tempDir(),
      summarizer: async () => 'a very long summary '.repeat(300),
      onEvent: (e) => events.push(e),
    })
    expect(result.compacted).toBe(false)
    expect(result.messages).toBe(messages)
    expect(result.error).toMatchObject({ code: 'NOT_SMALLER', originalTokens: countTokens(messages) })
    expect(events.map((e) => e.type)).toEqual(['started', 'failed'])
  })
})

describe('property: the post-condition holds on generated conversations, or the error says why', () => {
  const giantTail = fc.record({
    base: conversation,
    giant: fc.constantFrom('tool', 'user', 'none'),
    size: fc.integer({ min: 500, max: 4000 }),
    windowFactor: fc.double({ min: 0.3, max: 1.2, noNaN: true }),
    offload: fc.constantFrom('tool-results', 'all', 'off'),
  })
  it('compacted means fewer tokens; no error means under the threshold; restore is exact', async () => {
    await fc.assert(
      fc.asyncProperty(giantTail, async ({ base, giant, size, windowFactor, offload }) => {
        const messages = base.slice()
        const openai = messages.some((m) => m.role === 'tool' || 'tool_calls' in m)
        if (giant === 'tool') {
          const id = 'giant_call'
          if (openai) {
            messages.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'bash', arguments: '{"command":"cat big.log"}' } }] } as Message)
            messages.push({ role: 'tool', tool_call_id: id, content: textOfTokens(size) } as Message)
          } else {
            messages.push({ role: 'assistant', content: [{ type: 'tool_use', id, name: 'bash', input: { command: 'cat big.log' } }] })
            messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: textOfTokens(size) }] })
          }
        } else if (giant === 'user') {
          messages.push({ role: 'user', content: textOfTokens(size) })
        }
        const total = countTokens(messages)
        const contextTokenLimit = Math.max(50, Math.floor(total * windowFactor))
        const dir = tempDir()
        const before = JSON.stringify(messages)
        const result = await compactMessages(messages, { contextTokenLimit, force: true, outputDir: dir, sessionId: 'p', provider: 'extractive', offload: offload as any })
        expect(JSON.stringify(messages)).toBe(before)
        if (!result.compacted) {
          expect(result.messages).toBe(messages)
          expect(['NOT_SMALLER', 'NOTHING_TO_COMPACT']).toContain(result.error?.code)
          return
        }
        const after = countTokens(result.messages)
        expect(after).toBeLessThan(total)
        if (result.error === null) expect(after).toBeLessThan(result.threshold)
        else {
          expect(result.error.code).toBe('STILL_OVER_LIMIT')
          expect(measureTokens(result.messages, { contextTokenLimit }).tokens).toBeGreaterThanOrEqual(result.threshold)
        }
        expect(pairingProblems(result.messages)).toEqual([])
        expect(JSON.stringify(await restoreMessages(result.messages, { outputDir: dir, sessionId: 'p' }))).toBe(before)
      }),
      { numRuns: 40 },
    )
  })
})

describe('overflow recovery', () => {
  const overflow = { status: 400, error: { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } } }

  it('compact({ overflow }) compacts whatever the estimate says and raises the calibration', async () => {
    const messages = session(60, 200)
    const raw = countTokens(messages)
    const compactor = new Compactor({ outputDir: tempDir(), provider: 'extractive' })
    expect(compactor.shouldCompact(messages)).toBe(false)
    const result = await compactor.compact(messages, { overflow })
    expect(result.compacted).toBe(true)
    expect(result.trigger).toBe('tokens')
    // The same list is now estimated at what the API said it was, at least.
    const m = compactor.measure(messages)
    expect(m.source).toBe('calibration')
    expect(m.tokens).toBeGreaterThanOrEqual(210_000)
    expect(m.tokens).toBeLessThan(210_000 + 10)
    expect(m.factor).toBeCloseTo(210_000 / raw, 5)
    // The result fits in that raised measure.
    expect(compactor.measure(result.messages).tokens).toBeLessThan(result.threshold)
    expect(result.error).toBeNull()
    // Stateless: the same for this call.
    const once = await compactMessages(messages, { outputDir: tempDir(), provider: 'extractive', overflow: new Error('prompt is too long: 210000 tokens > 200000 maximum') })
    expect(once.compacted).toBe(true)
    expect(once.measure!.tokens).toBeGreaterThanOrEqual(210_000)
  })

  it('an error without numbers: the estimate is raised above the window', async () => {
    const messages = session(60, 200)
    const compactor = new Compactor({ contextTokenLimit: 150_000, outputDir: tempDir(), provider: 'extractive' })
    await compactor.compact(messages, { overflow: { status: 400, code: 'context_length_exceeded', message: 'context too long' } })
    expect(compactor.measure(messages).tokens).toBeGreaterThan(150_000)
  })
})

describe('events', () => {
  it('token_limit_exceeded fires once when shouldCompact is followed by compact', async () => {
    const events: CompactEvent[] = []
    const messages = session(20, 10)
    const compactor = new Compactor({ contextTokenLimit: 2000, outputDir: tempDir(), provider: 'extractive', onEvent: (e) => events.push(e) })
    expect(compactor.shouldCompact(messages)).toBe(true)
    await compactor.compact(messages)
    expect(events.filter((e) => e.type === 'token_limit_exceeded')).toHaveLength(1)
    expect(events.map((e) => e.type)).toEqual(['token_limit_exceeded', 'started', 'completed'])
    // A compact() on its own still reports it.
    events.length = 0
    await compactor.compact(session(20, 10))
    expect(events.filter((e) => e.type === 'token_limit_exceeded')).toHaveLength(1)
  })
})

describe('custom strategies', () => {
  it('write an audit line and extracted memory, and never return a larger list', async () => {
    const dir = tempDir()
    const messages = session(10, 10)
    messages.splice(1, 0, { role: 'user', content: 'We decided to use nom for parsing. I prefer small commits.' })
    const dropFirstTurns = {
      compress: async (list: Message[], markMap: any) => ({ messages: [list[0], ...list.slice(8)], markMap }),
    }
    const result = await compactMessages(messages, { force: true, outputDir: dir, sessionId: 'c', strategy: dropFirstTurns, extractMemory: true })
    expect(result.compacted).toBe(true)
    const log = readFileSync(join(dir, 'c', 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    expect(log.at(-1)).toMatchObject({ event: 'compacted', provider: 'custom', stats: result.stats })
    expect(result.extracted).not.toBeNull()
    expect(existsSync(join(dir, 'c', 'extracted', 'decisions.md'))).toBe(true)
    expect(readFileSync(join(dir, 'c', 'extracted', 'decisions.md'), 'utf8')).toContain('nom')
    const growing = { compress: async (list: Message[], markMap: any) => ({ messages: [...list, { role: 'user', content: 'extra' }], markMap }) }
    const grown = await compactMessages(messages, { force: true, outputDir: dir, sessionId: 'c', strategy: growing })
    expect(grown.compacted).toBe(false)
    expect(grown.messages).toBe(messages)
    expect(grown.error?.code).toBe('NOT_SMALLER')
    const last = readFileSync(join(dir, 'c', 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)).at(-1)
    expect(last).toMatchObject({ event: 'failed', code: 'NOT_SMALLER' })
  })
})

describe('offloadToolResults', () => {
  it('shortens only what is over maxTokens, archives the originals, restores exactly', async () => {
    const dir = tempDir()
    const messages = session(3, 3000)
    const before = JSON.stringify(messages)
    const out = await offloadToolResults(messages, { maxTokens: 1000, outputDir: dir, sessionId: 'o' })
    expect(JSON.stringify(messages)).toBe(before)
    expect(out.error).toBeNull()
    expect(out.offloaded).toHaveLength(1)
    expect(out.offloaded[0].tokens).toBeLessThanOrEqual(1020)
    expect(out.messages.slice(0, -1).every((m, i) => m === messages[i])).toBe(true)
    expect(out.messages.at(-1)).not.toBe(messages.at(-1))
    expect(out.archivePath).toMatch(/compact-.*-1\.json$/)
    expect(JSON.stringify(await restoreMessages(out.messages, { outputDir: dir, sessionId: 'o' }))).toBe(before)
    const none = await offloadToolResults(session(3, 10), { maxTokens: 1000, outputDir: dir, sessionId: 'o' })
    expect(none.offloaded).toEqual([])
    expect(none.archivePath).toBeNull()
    await expect(offloadToolResults(messages, { maxTokens: 0 } as any)).rejects.toThrow(TypeError)
    await expect(offloadToolResults(messages, {} as any)).rejects.toThrow(/maxTokens/)
  })
})
