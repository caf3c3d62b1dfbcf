// Checkpoints (issue 22, SPEC §4.11): a compaction is never paid for twice. A chat app that
// keeps the whole history and compacts it on every request gets the same summary message back,
// byte for byte, without a summary call, until a new level is needed; restore stays exact.
import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'

import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

import { Compactor, compactMessages, countTokens, listArchives, restoreMessages, type CompactEvent, type Message } from '../../index'
import { extend, render, substantialArb, VIEW_FORMATS, type FormatName } from '../support/format-conversations'
import { tempDir } from '../support/helpers'

function turn(i: number): Message[] {
  return [
    { role: 'user', content: `question ${i}: ${'please look at this file '.repeat(10)}` },
    { role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'read_file', input: { path: `src/m${i}.ts` } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: `export const m${i} = ${'1 + '.repeat(40)}1` }] },
    { role: 'assistant', content: `answer ${i}: ${'here is what I found '.repeat(10)}` },
  ]
}

function history(turns: number): Message[] {
  return [{ role: 'system', content: 'You are a coding agent.' }, ...Array.from({ length: turns }, (_, i) => turn(i)).flat()]
}

/** A summarizer that counts its calls. */
function counting() {
  const calls: Array<{ previousSummary: string | null; count: number }> = []
  const summarizer = async (request: { previousSummary: string | null; messages: unknown[] }) => {
    calls.push({ previousSummary: request.previousSummary, count: request.messages.length })
    return `## Goal\nsummary number ${calls.length}`
  }
  return { calls, summarizer }
}

/** A context window whose threshold `list` just reaches. */
const limitFor = (list: readonly unknown[]) => Math.floor(countTokens(list as Message[]) / 0.92) - 5

const summaryOf = (messages: readonly unknown[]) => (messages as any[]).find((m) => JSON.stringify(m).includes('[context-compact] Earlier conversation'))

describe('the chat-app pattern: the whole history, compactMessages on every request', () => {
  it('calls the summarizer only when a new level is needed, reuses the summary byte for byte, restores exactly', async () => {
    const outputDir = tempDir()
    const messages = history(10)
    const { calls, summarizer } = counting()
    const options = { contextTokenLimit: limitFor(messages), outputDir, sessionId: 'chat', summarizer }
    let current: string | null = null
    let levels = 0
    const reusedOnes: string[] = []
    for (let request = 0; request < 20; request++) {
      const before = calls.length
      const result = await compactMessages(messages, options)
      expect(result.compacted).toBe(true)
      expect(result.error).toBeNull()
      const summary = JSON.stringify(summaryOf(result.messages))
      const checkpoint = result.checkpoint!
      if (request === 0) {
        expect(checkpoint).toMatchObject({ reused: false, recorded: true, extended: false })
        expect(calls.length - before).toBe(1)
        levels++
        current = summary
      } else if (checkpoint.extended) {
        // A new level: the earlier summary updated with what followed it.
        expect(checkpoint).toMatchObject({ reused: true, recorded: true })
        expect(calls.length - before).toBeGreaterThanOrEqual(1)
        expect(calls.at(-1)!.previousSummary).toContain('summary number')
        levels++
        current = summary
      } else {
        expect(checkpoint).toMatchObject({ reused: true, recorded: false, extended: false })
        expect(calls.length - before).toBe(0)
        expect(summary).toBe(current)
        expect(result.provider).toBeNull()
        expect(result.summaryUsage).toBeNull()
        reusedOnes.push(summary)
      }
      // Kept messages are the caller's own objects; the covered ones are what the checkpoint says.
      expect(result.messages[result.messages.length - 1]).toBe(messages[messages.length - 1])
      expect(checkpoint.coveredMessages).toBeGreaterThan(1)
      expect(await restoreMessages(result.messages, { outputDir, sessionId: 'chat' })).toEqual(messages)
      const { stats } = result
      expect(stats.compactedMessageCount + stats.retainedMessageCount + stats.removedMessageCount).toBe(messages.length)
      expect(stats.compactedTokenCount).toBe(countTokens(result.messages))
      messages.push(...turn(100 + request))
    }
    expect(levels).toBeGreaterThanOrEqual(2)
    expect(reusedOnes.length).toBeGreaterThan(10)
    expect(calls.length).toBe(levels)
    expect((await listArchives(outputDir, 'chat')).length).toBe(levels)
  })

  it('says so in the events: checkpoint_reused, and completed carries result.checkpoint', async () => {
    const outputDir = tempDir()
    const messages = history(10)
    const { summarizer } = counting()
    const events: CompactEvent[] = []
    const options = { contextTokenLimit: limitFor(messages), outputDir, summarizer, onEvent: (e: CompactEvent) => events.push(e) }
    const first = await compactMessages(messages, options)
    expect(events.map((e) => e.type)).toEqual(['token_limit_exceeded', 'started', 'completed'])
    expect((events[2] as any).checkpoint).toEqual(first.checkpoint)
    events.length = 0
    messages.push(...turn(50))
    const second = await compactMessages(messages, options)
    expect(events.map((e) => e.type)).toEqual(['token_limit_exceeded', 'started', 'checkpoint_reused', 'completed'])
    expect(events[2]).toEqual({ type: 'checkpoint_reused', coveredMessages: second.checkpoint!.coveredMessages, archivePath: first.archivePath, extended: false })
    expect((events[3] as any).checkpoint).toEqual(second.checkpoint)
    expect(second.archivePath).toBe(first.archivePath)
  })

  it('a changed covered message is another prefix: compacted anew', async () => {
    const outputDir = tempDir()
    const messages = history(10)
    const { calls, summarizer } = counting()
    const options = { contextTokenLimit: limitFor(messages), outputDir, summarizer }
    await compactMessages(messages, options)
    const edited = structuredClone(messages) as any[]
    edited[2].content[0].input.path = 'src/other.ts'
    const result = await compactMessages(edited, options)
    expect(calls.length).toBe(2)
    expect(result.checkpoint).toMatchObject({ reused: false, recorded: true })
    // The same content in new objects is the same prefix.
    const copy = structuredClone(messages)
    copy.push(...turn(60))
    const again = await compactMessages(copy, options)
    expect(calls.length).toBe(2)
    expect(again.checkpoint!.reused).toBe(true)
  })

  it('checkpoints: false neither reads nor records', async () => {
    const outputDir = tempDir()
    const messages = history(10)
    const { calls, summarizer } = counting()
    const options = { contextTokenLimit: limitFor(messages), outputDir, summarizer, checkpoints: false }
    const first = await compactMessages(messages, options)
    await compactMessages(messages, { ...options, checkpoints: true })
    const third = await compactMessages(messages, options)
    expect(first.checkpoint).toBeNull()
    expect(third.checkpoint).toBeNull()
    expect(calls.length).toBe(3)
  })

  it.each(VIEW_FORMATS)('works on %s lists: the same summary item(s), restore exact', async (format) => {
    const [c, more] = fc.sample(substantialArb(6, 8, 8), { numRuns: 2, seed: 22 })
    const list = render(c, format as FormatName)
    const longer = render(extend(c, { ...more, episodes: more.episodes.slice(0, 1) }, 1), format as FormatName)
    expect(JSON.stringify(longer.slice(0, list.length - 1))).toBe(JSON.stringify(list.slice(0, list.length - 1)))
    // Kept turns keep their reasoning (`thinking: 'keep'`): then what the library wrote — the
    // summary, in the list's format — is the same, byte for byte. Under the default policy a
    // kept turn may lose its thinking, and the summary then ends with the line saying which
    // (`thinking was removed …`): the same summary, a line for this call's kept turns.
    for (const thinking of ['keep', 'auto'] as const) {
      const outputDir = tempDir()
      const { calls, summarizer } = counting()
      const options = { contextTokenLimit: limitFor(list), outputDir, summarizer, format: format as FormatName, tailRetentionRatio: 0.05, thinking }
      const first = await compactMessages(list, options)
      expect(first.compacted).toBe(true)
      const second = await compactMessages(longer, options)
      expect(second.compacted).toBe(true)
      expect(second.checkpoint).toMatchObject({ reused: true, extended: false })
      expect(calls.length).toBe(1)
      const written = (result: typeof first, input: unknown[]) => JSON.stringify(result.messages.filter((m) => !input.includes(m)))
      expect(written(first, list)).toContain('[context-compact]')
      if (thinking === 'keep') expect(written(second, longer)).toBe(written(first, list))
      const withoutLine = (text: string | null) => text!.replace(/\n\n\[context-compact: thinking was removed[^\n]*$/, '')
      expect(withoutLine(second.summary)).toBe(withoutLine(first.summary))
      expect(await restoreMessages(second.messages, { outputDir, format: format as FormatName })).toEqual(longer)
    }
  })
})

describe('a Compactor holds its checkpoints in memory', () => {
  it('reuses them when the location has none (removed, or another location)', async () => {
    const outputDir = tempDir()
    const messages = history(10)
    const { calls, summarizer } = counting()
    const compactor = new Compactor({ contextTokenLimit: limitFor(messages), outputDir, sessionId: 'm', summarizer })
    const first = await compactor.compact(messages)
    expect(first.checkpoint!.recorded).toBe(true)
    for (const name of readdirSync(join(outputDir, 'm'))) {
      if (name.startsWith('checkpoint-')) rmSync(join(outputDir, 'm', name))
    }
    messages.push(...turn(40))
    const second = await compactor.compact(messages)
    expect(calls.length).toBe(1)
    expect(second.checkpoint).toMatchObject({ reused: true, extended: false })
    expect(JSON.stringify(summaryOf(second.messages))).toBe(JSON.stringify(summaryOf(first.messages)))
    expect(await restoreMessages(second.messages, { outputDir, sessionId: 'm' })).toEqual(messages)
    // Per call, checkpoints can be turned off.
    await compactor.compact(messages, { checkpoints: false })
    expect(calls.length).toBe(2)
  })
})
