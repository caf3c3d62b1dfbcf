// The other seeds' features through the public API (SPEC §7, issue 6): selective compaction
// (seed 002), strategies without an LLM and custom strategies (seed 003), MessageMarkMap
// (seed 003), extra triggers and model windows (seeds 002/004), the Pi Agent hooks, events and
// recursive compaction (seed 001), and SanBot's key-information extraction (seed 004).

import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

import {
  compactMessages,
  Compactor,
  countTokens,
  createMarkMap,
  getBatchIndex,
  getCurrentBatchIndices,
  isModified,
  measureTokens,
  restoreMessages,
  shouldCompact,
  type CompactEvent,
  type CompactOptions,
  type CompressionStrategy,
  type Message,
  type MessageMarkMap,
  type StrategyName,
  type SummaryRequest,
} from '../../index'
import { conversation } from '../support/conversations'
import { pairingProblems, tempDir, textOfTokens } from '../support/helpers'

const user = (content: string): Message => ({ role: 'user', content })
const assistant = (content: string): Message => ({ role: 'assistant', content })

/** A summarizer that counts its calls. */
function counting(reply = '## Goal\nfix the bugs') {
  const requests: SummaryRequest[] = []
  const summarizer = async (request: SummaryRequest) => {
    requests.push(request)
    return reply
  }
  return { summarizer, requests, get calls() { return requests.length } }
}

/** A coding session: a system prompt, then turns of request, tool call, tool result, answer. */
function session(turns: number, resultTokens: number, from = 0): Message[] {
  const messages: Message[] = from === 0 ? [{ role: 'system', content: 'You are a coding agent.' }] : []
  for (let i = from; i < from + turns; i++) {
    messages.push(user(`Please fix bug ${i} in src/mod${i}.ts`))
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `Reading src/mod${i}.ts.` },
        { type: 'tool_use', id: `toolu_${i}`, name: 'read_file', input: { path: `src/mod${i}.ts` } },
      ],
    })
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: textOfTokens(resultTokens) }] })
    messages.push(assistant(`Fixed bug ${i}; we decided to keep the public API.`))
  }
  return messages
}

function isNotice(message: Message): boolean {
  return message.role === 'user' && typeof message.content === 'string' && message.content.startsWith('[context-compact] ') && !message.content.split('\n')[0].includes('into the summary below')
}

// ---------------------------------------------------------------------------------------------
// 1. Selective compaction (seed 002)

describe('selective compaction (agent-SDK seed)', () => {
  it('below the threshold after the rules: no LLM call at all (counting summarizer)', async () => {
    const dir = tempDir()
    const messages = session(10, 400)
    const total = countTokens(messages)
    const s = counting()
    const result = await compactMessages(messages, { strategy: 'selective', contextTokenLimit: total, thresholdRatio: 0.8, outputDir: dir, summarizer: s.summarizer })
    expect(result.compacted).toBe(true)
    expect(s.calls).toBe(0)
    expect(result.strategy).toBe('selective')
    expect(result.fallback).toBe(false)
    expect(result.trigger).toBe('tokens')
    expect(result.rounds).toBe(0)
    expect(result.summary).toBeNull()
    expect(result.removed).toEqual({ messagesRemoved: 0, toolResultsCleared: 7, skillMessagesDropped: 0, turnsRemoved: 0, steps: ['toolResults'] })
    expect(result.stats.compactedTokenCount).toBe(countTokens(result.messages))
    expect(result.stats.compactedTokenCount).toBeLessThan(total * 0.8)
    expect(pairingProblems(result.messages)).toEqual([])
    // The 3 most recent tool results are the caller's own objects.
    expect(result.messages.slice(-12)).toEqual(messages.slice(-12))
    expect(result.messages.at(-2)).toBe(messages.at(-2))
  })

  it('cleared tool results keep their ids, say what was removed and where the original is; restore gives it back', async () => {
    const dir = tempDir()
    const messages = session(6, 400)
    const result = await compactMessages(messages, { strategy: 'selective', contextTokenLimit: countTokens(messages), thresholdRatio: 0.8, outputDir: dir, sessionId: 'sel' })
    expect(result.compacted).toBe(true)
    const notice = result.messages[1]
    expect(isNotice(notice)).toBe(true)
    expect(notice.content).toContain(result.archivePath!)
    expect(notice.content).toContain('3 older tool results cleared')
    const cleared = (result.messages[4] as any).content[0]
    expect(cleared.type).toBe('tool_result')
    expect(cleared.tool_use_id).toBe('toolu_0')
    expect(cleared.content).toMatch(/^\[context-compact\] Tool result cleared to save context \(\d+ bytes of output\)\. The original is in the archive compact-\d{8}T\d{6}Z-1\.json\.$/)
    // The archive holds the originals of what changed; a restore is the conversation again.
    const archived = JSON.parse(readFileSync(result.archivePath!, 'utf8'))
    expect(archived[0]).toEqual(messages[1])
    expect(await restoreMessages(result.messages, { outputDir: dir, sessionId: 'sel' })).toEqual(messages)
  })

  it('OpenAI tool messages keep their tool_call_id when cleared', async () => {
    const messages: Message[] = [{ role: 'system', content: 's' }]
    for (let i = 0; i < 6; i++) {
      messages.push(user(`run ${i}`))
      messages.push({ role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } }] })
      messages.push({ role: 'tool', tool_call_id: `c${i}`, content: textOfTokens(300) })
      messages.push(assistant(`done ${i}`))
    }
    const result = await compactMessages(messages, { strategy: 'selective', contextTokenLimit: countTokens(messages), thresholdRatio: 0.7, outputDir: tempDir() })
    expect(result.strategy).toBe('selective')
    const tool = result.messages.find((m) => m.role === 'tool' && String(m.content).startsWith('[context-compact]')) as any
    expect(tool.tool_call_id).toBe('c0')
    expect(pairingProblems(result.messages)).toEqual([])
  })

  it('not enough: falls back to a full summary of the ORIGINAL list', async () => {
    const messages = session(8, 5)
    const s = counting()
    const result = await compactMessages(messages, {
      strategy: 'selective',
      contextTokenLimit: countTokens(messages),
      thresholdRatio: 0.3,
      tailRetentionRatio: 0.05,
      outputDir: tempDir(),
      summarizer: s.summarizer,
    })
    expect(result.compacted).toBe(true)
    expect(result.strategy).toBe('summary')
    expect(result.fallback).toBe(true)
    expect(result.removed).toBeNull()
    expect(s.calls).toBeGreaterThanOrEqual(1)
    // The summarizer saw the original messages, not cleared placeholders.
    expect(s.requests[0].messages[0]).toBe(messages[1])
    expect(JSON.stringify(s.requests[0].messages)).not.toContain('Tool result cleared')
    expect(pairingProblems(result.messages)).toEqual([])
  })

  it('configurable rules, in the seed order: skills dropped, then whole turns removed', async () => {
    const messages = session(12, 2)
    messages.splice(5, 0, { role: 'user', content: 'SKILL: how to run the tests', metadata: { type: 'skill_prompt' } } as Message)
    const s = counting()
    const result = await compactMessages(messages, {
      strategy: 'selective',
      maxMessages: 30,
      selectiveRules: { toolResults: { strategy: 'none' }, userMessages: { strategy: 'truncate', keepRecent: 4 } },
      outputDir: tempDir(),
      summarizer: s.summarizer,
    })
    expect(s.calls).toBe(0)
    expect(result.trigger).toBe('messages')
    expect(result.removed!.steps).toEqual(['skills', 'turns'])
    expect(result.removed!.skillMessagesDropped).toBe(1)
    // 5 assistant messages need 3 turns, 4 prompts 4 turns: 8 of 12 turns go.
    expect(result.removed!.turnsRemoved).toBe(8)
    expect(result.messages.length).toBeLessThanOrEqual(30)
    expect(result.messages[0]).toBe(messages[0])
    expect(pairingProblems(result.messages)).toEqual([])
    expect(JSON.stringify(result.messages)).not.toContain('SKILL:')
    // Unknown rules are caught, not ignored.
    await expect(compactMessages(messages, { strategy: 'selective', selectiveRules: { toolResult: { strategy: 'drop' } } as any })).rejects.toThrow(TypeError)
  })

  it("the seed's continuation-summary prompt is a promptStyle", async () => {
    const s = counting('<summary>resume here</summary>')
    const result = await compactMessages(session(6, 20), { force: true, contextTokenLimit: 1000, promptStyle: 'continuation', outputDir: tempDir(), summarizer: s.summarizer })
    expect(s.requests[0].prompt).toContain('Write a continuation summary')
    expect(result.summary).toContain('resume here')
    expect(result.summary).not.toContain('<summary>')
  })
})

// ---------------------------------------------------------------------------------------------
// 2. Strategies without an LLM, custom strategies, ContextCompressionConfig (seed 003)

describe('strategies without an LLM (type seed)', () => {
  it('keep-recent keeps the last 20 messages by default, nothing else, and archives the rest', async () => {
    const dir = tempDir()
    const messages = session(10, 5)
    const s = counting()
    const result = await compactMessages(messages, { strategy: 'keep-recent', force: true, outputDir: dir, sessionId: 'kr', summarizer: s.summarizer })
    expect(s.calls).toBe(0)
    expect(result.strategy).toBe('keep-recent')
    expect(result.trigger).toBe('force')
    // The notice, then the last 20 (which begin with a prompt here).
    expect(result.messages).toHaveLength(21)
    expect(isNotice(result.messages[0])).toBe(true)
    result.messages.slice(1).forEach((m, i) => expect(m).toBe(messages[messages.length - 20 + i]))
    expect(result.removed!.messagesRemoved).toBe(messages.length - 20)
    expect(JSON.parse(readFileSync(result.archivePath!, 'utf8'))).toEqual(messages.slice(0, messages.length - 20))
    expect(await restoreMessages(result.messages, { outputDir: dir, sessionId: 'kr' })).toEqual(messages)
  })

  it('keep-recent moves the cut back to the call instead of starting with a tool result', async () => {
    const messages = session(10, 5)
    // The last 6 would begin with a tool result: the call comes along.
    const result = await compactMessages(messages, { strategy: 'keep-recent', keepRecentMessages: 6, force: true, outputDir: tempDir() })
    expect(result.messages.slice(1)).toEqual(messages.slice(-7))
    expect(pairingProblems(result.messages)).toEqual([])
  })

  it('keep-system-and-recent also keeps the leading system messages', async () => {
    const messages = session(10, 5)
    const result = await compactMessages(messages, { strategy: 'keep-system-and-recent', keepRecentMessages: 8, force: true, outputDir: tempDir() })
    expect(result.messages[0]).toBe(messages[0])
    expect(isNotice(result.messages[1])).toBe(true)
    expect(result.messages.slice(2)).toEqual(messages.slice(-8))
  })

  it('sliding-window keeps the most recent messages within compression.targetTokens', async () => {
    const messages = session(10, 30)
    const result = await compactMessages(messages, { strategy: 'sliding-window', compression: { targetTokens: 200 }, force: true, outputDir: tempDir() })
    expect(result.strategy).toBe('sliding-window')
    expect(result.messages[0]).toBe(messages[0])
    const kept = result.messages.slice(2)
    expect(countTokens(kept)).toBeLessThanOrEqual(200)
    expect(kept.at(-1)).toBe(messages.at(-1))
    expect(pairingProblems(result.messages)).toEqual([])
  })

  it('noop compacts nothing and writes nothing', async () => {
    const dir = tempDir()
    const messages = session(4, 50)
    const result = await compactMessages(messages, { strategy: 'noop', contextTokenLimit: 100, outputDir: dir })
    expect(result.messages).toBe(messages)
    expect(result.compacted).toBe(false)
    expect(result.error).toBeNull()
    expect(result.strategy).toBe('noop')
    expect(existsSync(join(dir, 'default'))).toBe(false)
  })

  it('every strategy keeps the tool-pair rules on generated conversations (property)', async () => {
    const strategies: StrategyName[] = ['summary', 'selective', 'keep-recent', 'keep-system-and-recent', 'sliding-window']
    await fc.assert(
      fc.asyncProperty(conversation, fc.constantFrom(...strategies), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 400 }), async (messages, strategy, keep, limit) => {
        fc.pre(pairingProblems(messages).length === 0)
        const dir = tempDir()
        const result = await compactMessages(messages, {
          strategy,
          force: true,
          keepRecentMessages: keep,
          contextTokenLimit: limit,
          outputDir: dir,
          summarizer: async () => 'S',
        })
        if (!result.compacted) return result.error !== null && result.messages === messages
        if (pairingProblems(result.messages).length > 0) return false
        // Kept originals stay in order; a restore gives the conversation back.
        const kept = result.messages.filter((m) => messages.includes(m))
        if (!kept.every((m, i, all) => i === 0 || messages.indexOf(m) > messages.indexOf(all[i - 1]))) return false
        const restored = await restoreMessages(result.messages, { outputDir: dir })
        return JSON.stringify(restored) === JSON.stringify(messages)
      }),
      { numRuns: 80 },
    )
  })

  it('compression: enabled false never compacts; threshold is absolute; targetTokens sizes the tail', async () => {
    const messages = session(10, 50)
    const total = countTokens(messages)
    const off = await compactMessages(messages, { compression: { enabled: false }, force: true, contextTokenLimit: 10 })
    expect(off.compacted).toBe(false)
    expect(off.messages).toBe(messages)
    expect(shouldCompact(messages, { compression: { enabled: false }, contextTokenLimit: 10 })).toBe(false)
    expect(measureTokens(messages, { compression: { threshold: total } }).threshold).toBe(total)
    expect(shouldCompact(messages, { compression: { threshold: total } })).toBe(true)
    expect(shouldCompact(messages, { compression: { threshold: total + 1 } })).toBe(false)
    const s = counting()
    const result = await compactMessages(messages, { compression: { threshold: total, targetTokens: 150 }, outputDir: tempDir(), summarizer: s.summarizer })
    // With the default tail budget (20 000 tokens) everything would be tail: nothing to compact.
    expect(result.compacted).toBe(true)
    const tail = result.messages.slice(2)
    expect(countTokens(tail)).toBeGreaterThanOrEqual(150)
    expect(countTokens(tail)).toBeLessThan(150 + 2 * 60)
  })
})

describe('custom strategies (CompressionStrategy)', () => {
  it('compress(messages, markMap, config) decides; the library checks, archives and reports', async () => {
    const dir = tempDir()
    const messages = session(6, 20)
    const seen: { markMap: MessageMarkMap; config: unknown }[] = []
    const keepLastTurn: CompressionStrategy = {
      async compress(list, markMap, config) {
        seen.push({ markMap, config })
        return { messages: [list[0], ...list.slice(-4)], markMap }
      },
    }
    const events: CompactEvent[] = []
    const result = await compactMessages(messages, {
      strategy: keepLastTurn,
      compression: { threshold: 100, targetTokens: 50 },
      outputDir: dir,
      onEvent: (e) => events.push(e),
    })
    expect(result.compacted).toBe(true)
    expect(result.strategy).toBe('custom')
    expect(result.messages).toEqual([messages[0], ...messages.slice(-4)])
    expect(result.messages[0]).toBe(messages[0])
    expect(seen[0].markMap).toEqual(createMarkMap(messages.length))
    expect(seen[0].config).toEqual({ enabled: true, threshold: 100, targetTokens: 50 })
    expect(result.removed!.messagesRemoved).toBe(messages.length - 5)
    expect(JSON.parse(readFileSync(result.archivePath!, 'utf8'))).toEqual(messages.slice(1, -4))
    expect(result.stats.compactedTokenCount).toBe(countTokens(result.messages))
    expect(events.map((e) => e.type)).toEqual(['token_limit_exceeded', 'started', 'completed'])
  })

  it('output that breaks a tool pair (or throws) is refused with STRATEGY_FAILED', async () => {
    const messages = session(4, 20)
    const orphan: CompressionStrategy = { compress: async (list, markMap) => ({ messages: list.slice(-2), markMap }) }
    const result = await compactMessages(messages, { strategy: orphan, force: true, outputDir: tempDir() })
    expect(result.compacted).toBe(false)
    expect(result.messages).toBe(messages)
    expect(result.error!.code).toBe('STRATEGY_FAILED')
    expect(result.error!.message).toMatch(/tool_use_id|tool_result/)
    const throwing: CompressionStrategy = {
      compress: async () => {
        throw new Error('boom')
      },
    }
    const failed = await compactMessages(messages, { strategy: throwing, force: true, outputDir: tempDir() })
    expect(failed.error).toMatchObject({ code: 'STRATEGY_FAILED', message: expect.stringContaining('boom') })
  })
})

// ---------------------------------------------------------------------------------------------
// 3. MessageMarkMap (seed 003)

describe('MessageMarkMap', () => {
  it('§二: the batch cycle 0-1-0 and the three helpers', () => {
    // 原始状态
    const markMap: MessageMarkMap = { originalIndices: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], batchBoundaries: [0], boundaryToBatch: [0], currentBatch: 0 }
    expect(getCurrentBatchIndices(markMap)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(isModified(3, markMap)).toBe(false)
    expect(getBatchIndex(7, markMap)).toBe(7)
    // 添加临时消息：batchBoundaries = [0, 5], boundaryToBatch = [0, 1], currentBatch = 1
    markMap.batchBoundaries = [0, 5]
    markMap.boundaryToBatch = [0, 1]
    markMap.currentBatch = 1
    expect(getCurrentBatchIndices(markMap)).toEqual([5, 6, 7, 8, 9])
    expect(isModified(4, markMap)).toBe(true)
    expect(isModified(5, markMap)).toBe(false)
    expect(getBatchIndex(7, markMap)).toBe(2)
    expect(getBatchIndex(5, markMap)).toBe(0)
    // 删除临时消息：batchBoundaries = [0], boundaryToBatch = [0], currentBatch = 0
    markMap.batchBoundaries = [0]
    markMap.boundaryToBatch = [0]
    markMap.currentBatch = 0
    expect(getCurrentBatchIndices(markMap)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(isModified(4, markMap)).toBe(false)
    // `[0, 5, 10]` with `[0, 1, 0]`: boundary 10 reuses batch 0, but indexOf finds the first.
    const cycled: MessageMarkMap = { originalIndices: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], batchBoundaries: [0, 5, 10], boundaryToBatch: [0, 1, 0], currentBatch: 1 }
    expect(getCurrentBatchIndices(cycled)).toEqual([5, 6, 7, 8, 9, 10, 11])
    cycled.currentBatch = 0
    expect(getCurrentBatchIndices(cycled)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
  })

  it('§八: create, add an index, start a batch, roll back, cycle', () => {
    // 1. 创建标记映射
    let markMap: MessageMarkMap = { originalIndices: [], batchBoundaries: [0], boundaryToBatch: [0], currentBatch: 0 }
    expect(createMarkMap()).toEqual(markMap)
    expect(getCurrentBatchIndices(markMap)).toEqual([])
    // 2. 添加消息索引
    markMap.originalIndices.push(0)
    expect(getCurrentBatchIndices(markMap)).toEqual([0])
    // 3. 创建新批次
    markMap.batchBoundaries.push(5)
    markMap.boundaryToBatch.push(1)
    markMap.currentBatch = 1
    expect(getCurrentBatchIndices(markMap)).toEqual([])
    expect(isModified(0, markMap)).toBe(true)
    expect(getBatchIndex(0, markMap)).toBe(-5)
    // 4. 回退到旧批次
    markMap.currentBatch = 0
    markMap.batchBoundaries = [0]
    markMap.boundaryToBatch = [0]
    expect(getCurrentBatchIndices(markMap)).toEqual([0])
    expect(isModified(0, markMap)).toBe(false)
    // 5. 批次循环示例
    markMap = { originalIndices: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], batchBoundaries: [0], boundaryToBatch: [0], currentBatch: 0 }
    markMap.batchBoundaries.push(5)
    markMap.boundaryToBatch.push(1)
    markMap.currentBatch = 1
    expect(getCurrentBatchIndices(markMap)).toEqual([5, 6, 7, 8, 9])
    expect(isModified(3, markMap)).toBe(true)
    expect(getBatchIndex(9, markMap)).toBe(4)
    markMap.batchBoundaries = [0]
    markMap.boundaryToBatch = [0]
    markMap.currentBatch = 0
    expect(getCurrentBatchIndices(markMap)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(isModified(3, markMap)).toBe(false)
    expect(createMarkMap(3)).toEqual({ originalIndices: [0, 1, 2], batchBoundaries: [0], boundaryToBatch: [0], currentBatch: 0 })
  })

  it('a Compactor starts a batch per compaction at the first retained original index, and rolls back with the archives', async () => {
    const dir = tempDir()
    const compactor = new Compactor({ contextTokenLimit: 1000, tailRetentionRatio: 0.1, outputDir: dir, sessionId: 'mm', summarizer: async () => '## Goal\nx' })
    let messages = session(6, 30)
    const original = [...messages]
    expect(compactor.shouldCompact(messages)).toBe(false)
    expect(compactor.markMap).toEqual(createMarkMap(messages.length))
    const first = await compactor.compact(messages, { force: true })
    expect(first.compacted).toBe(true)
    const firstTail = original.indexOf(first.messages[2])
    let map = compactor.markMap
    expect(map.batchBoundaries).toEqual([0, firstTail])
    expect(map.boundaryToBatch).toEqual([0, 1])
    expect(map.currentBatch).toBe(1)
    expect(getCurrentBatchIndices(map)).toEqual(original.map((_, i) => i).filter((i) => i >= firstTail))
    expect(isModified(1, map)).toBe(true)
    // The session goes on; the new messages get the next original indices.
    const added = session(3, 30, 6)
    const afterFirst = first.messages
    messages = [...afterFirst, ...added]
    const second = await compactor.compact(messages, { force: true })
    map = compactor.markMap
    expect(map.originalIndices).toEqual([...original, ...added].map((_, i) => i))
    const secondTail = original.length + added.indexOf(second.messages[2])
    expect(map.batchBoundaries).toEqual([0, firstTail, secondTail])
    expect(map.boundaryToBatch).toEqual([0, 1, 2])
    // Roll back to batch 1: the list the first compaction returned, then everything added since.
    const toOne = await compactor.rollback(1, second.messages)
    expect(toOne).toEqual([...afterFirst, ...added])
    expect(toOne.slice(0, afterFirst.length).every((m, i) => m === afterFirst[i])).toBe(true)
    expect(compactor.markMap.boundaryToBatch).toEqual([0, 1])
    expect(compactor.markMap.currentBatch).toBe(1)
    // Roll back to batch 0: the whole session, from the archives.
    const toZero = await compactor.rollback(0, toOne)
    expect(toZero).toEqual([...original, ...added])
    expect(compactor.markMap).toMatchObject({ batchBoundaries: [0], boundaryToBatch: [0], currentBatch: 0 })
    // Compacting again reuses batch 1: the seed's 0-1-0-1 cycle.
    await compactor.compact(toZero, { force: true })
    expect(compactor.markMap.boundaryToBatch).toEqual([0, 1])
    expect(compactor.markMap.currentBatch).toBe(1)
    await expect(compactor.rollback(7)).rejects.toThrow(TypeError)
  })

  it('after many compactions, rolls back to an old batch from the archives (equal messages) and to a recent one with the very objects', async () => {
    // A long session does not keep every compaction's list alive for rollback: the last 8 keep
    // their objects, older ones are read back from the archives.
    const compactor = new Compactor({ contextTokenLimit: 1000, tailRetentionRatio: 0.1, outputDir: tempDir(), sessionId: 'mm-long', summarizer: async () => '## Goal\nx' })
    let messages = session(6, 30)
    const results: Message[][] = []
    const addedAfter: Message[][] = []
    for (let k = 0; k < 12; k++) {
      const result = await compactor.compact(messages, { force: true })
      expect(result.compacted).toBe(true)
      results.push(result.messages)
      const added = session(2, 30, 100 + 2 * k)
      addedAfter.push(added)
      messages = [...result.messages, ...added]
    }
    expect(compactor.markMap.boundaryToBatch).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
    // Batch 11 (recent): the list compaction 11 returned, the very objects, then what was added since.
    const toEleven = await compactor.rollback(11, messages)
    expect(toEleven).toEqual([...results[10], ...addedAfter[10], ...addedAfter[11]])
    results[10].forEach((m, i) => expect(toEleven[i]).toBe(m))
    // Batch 1 (old): equal to what compaction 1 returned, then everything added since.
    const toOne = await compactor.rollback(1, toEleven)
    expect(toOne).toEqual([...results[0], ...addedAfter.flat()])
    expect(compactor.markMap.boundaryToBatch).toEqual([0, 1])
  })
})

// ---------------------------------------------------------------------------------------------
// 4. Triggers and model windows (seeds 002/004)

describe('triggers', () => {
  it('maxMessages fires when there are more messages than N', async () => {
    const messages = session(5, 5)
    expect(shouldCompact(messages, { maxMessages: messages.length })).toBe(false)
    expect(measureTokens(messages, { maxMessages: messages.length - 1 })).toMatchObject({ shouldCompact: true, trigger: 'messages' })
    const result = await compactMessages(messages, { maxMessages: messages.length - 1, tailRetentionRatio: 0.0001, outputDir: tempDir(), summarizer: async () => 'S' })
    expect(result.compacted).toBe(true)
    expect(result.trigger).toBe('messages')
  })

  it('maxToolOutputBytes fires when the tool results exceed N UTF-8 bytes', async () => {
    // Results large enough that clearing one saves more tokens than the notice costs (a
    // compaction that would not shrink the list returns it unchanged: NOT_SMALLER).
    const messages = session(4, 300)
    const bytes = messages.reduce((n, m) => n + (Array.isArray(m.content) ? m.content.filter((b: any) => b.type === 'tool_result').reduce((k: number, b: any) => k + Buffer.byteLength(b.content), 0) : 0), 0)
    expect(shouldCompact(messages, { maxToolOutputBytes: bytes })).toBe(false)
    expect(measureTokens(messages, { maxToolOutputBytes: bytes - 1 }).trigger).toBe('tool_output')
    const compactor = new Compactor({ maxToolOutputBytes: bytes - 1 })
    expect(compactor.shouldCompact(messages)).toBe(true)
    expect(compactor.shouldCompact(messages.slice(0, -4))).toBe(false)
    const result = await compactMessages(messages, { maxToolOutputBytes: bytes - 1, strategy: 'selective', outputDir: tempDir() })
    expect(result.trigger).toBe('tool_output')
    expect(result.strategy).toBe('selective')
    expect(result.removed!.toolResultsCleared).toBe(1)
  })

  it('agentModel gives contextTokenLimit from the built-in table', () => {
    const windows: Record<string, number> = {
      'claude-sonnet-4-5': 200_000,
      'gpt-4o': 128_000,
      'gpt-5': 400_000,
      'gemini-2.5-pro': 1_048_576,
      'deepseek-chat': 128_000,
      'qwen3-coder-plus': 131_072,
    }
    for (const [model, window] of Object.entries(windows)) {
      expect(measureTokens([user('hi')], { agentModel: model }).threshold).toBe(Math.ceil(window * 0.92))
    }
    expect(measureTokens([user('hi')], { agentModel: 'gpt-4o', contextTokenLimit: 1000 }).threshold).toBe(920)
  })

  it('token_limit_exceeded is emitted by compactMessages and by Compactor.shouldCompact', async () => {
    const messages = session(4, 50)
    const events: CompactEvent[] = []
    const options: CompactOptions = { contextTokenLimit: 200, outputDir: tempDir(), onEvent: (e) => events.push(e), summarizer: async () => 'S' }
    await compactMessages(messages, options)
    expect(events[0]).toEqual({ type: 'token_limit_exceeded', tokensUsed: countTokens(messages), tokenLimit: 184 })
    events.length = 0
    const compactor = new Compactor(options)
    expect(compactor.shouldCompact(messages.slice(0, 1))).toBe(false)
    expect(events).toEqual([])
    expect(compactor.shouldCompact(messages)).toBe(true)
    expect(events).toEqual([{ type: 'token_limit_exceeded', tokensUsed: countTokens(messages), tokenLimit: 184 }])
  })
})

// ---------------------------------------------------------------------------------------------
// 5. Pi Agent seed (001)

describe('Pi Agent seed: confirmation, events, summary cap, recursive compaction', () => {
  it('onBeforeCompact returning false declines: the input array itself, DECLINED, no summary call', async () => {
    const dir = tempDir()
    const messages = session(6, 50)
    const s = counting()
    const infos: any[] = []
    const result = await compactMessages(messages, {
      contextTokenLimit: 500,
      outputDir: dir,
      summarizer: s.summarizer,
      onBeforeCompact: (info) => {
        infos.push(info)
        return false
      },
    })
    expect(result.compacted).toBe(false)
    expect(result.messages).toBe(messages)
    expect(result.error).toMatchObject({ code: 'DECLINED', message: 'onBeforeCompact declined the compaction' })
    expect(s.calls).toBe(0)
    expect(infos).toHaveLength(1)
    expect(infos[0]).toMatchObject({ tokens: countTokens(messages), threshold: 460, messageCount: messages.length, trigger: 'tokens', strategy: 'summary' })
    expect(infos[0].middleCount).toBeGreaterThan(0)
    expect(infos[0].middleCount).toBe(infos[0].tailStart - infos[0].headLength)
    // The audit log says so; no archive was written.
    const events = readFileSync(join(dir, 'default', 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    expect(events.map((e) => e.event)).toEqual(['declined'])
  })

  it('a Promise of false declines too; a Promise of true (or undefined) proceeds; a throwing hook declines', async () => {
    const messages = session(6, 50)
    const base = { contextTokenLimit: 500, outputDir: tempDir(), summarizer: async () => 'S' }
    expect((await compactMessages(messages, { ...base, onBeforeCompact: async () => false })).error?.code).toBe('DECLINED')
    expect((await compactMessages(messages, { ...base, onBeforeCompact: async () => true })).compacted).toBe(true)
    expect((await compactMessages(messages, { ...base, onBeforeCompact: () => undefined })).compacted).toBe(true)
    const thrown = await compactMessages(messages, {
      ...base,
      onBeforeCompact: () => {
        throw new Error('no network')
      },
    })
    expect(thrown.error).toMatchObject({ code: 'DECLINED', message: expect.stringContaining('no network') })
    expect(thrown.messages).toBe(messages)
  })

  it('keepRecentTurns keeps at least N user turns in the tail', async () => {
    const messages = session(8, 30)
    // A ratio is more than 0 (docs/trust.md): a tiny one leaves the tail to keepRecentTurns.
    const result = await compactMessages(messages, { force: true, keepRecentTurns: 3, tailRetentionRatio: 0.0001, outputDir: tempDir(), summarizer: async () => 'S' })
    const tail = result.messages.slice(2)
    expect(tail.filter((m) => m.role === 'user' && typeof m.content === 'string')).toHaveLength(3)
    expect(tail[0]).toBe(messages[messages.length - 12])
  })

  it('summaryMaxChars caps the model text; the ledger stays whole', async () => {
    const result = await compactMessages(session(6, 20), {
      force: true,
      contextTokenLimit: 1000,
      // A window of 1 000 tokens gives the summary 150: room for the capped text and the ledger.
      summaryBudgetTokens: 10_000,
      summaryMaxChars: 300,
      outputDir: tempDir(),
      summarizer: async () => 'The agent fixed several bugs. '.repeat(100),
    })
    const body = result.summary!.split('\n').slice(2).join('\n')
    const [text, ledger] = body.split('## Ledger')
    expect(text.trimEnd().length).toBeLessThanOrEqual(300)
    expect(text).toContain('[summary truncated]')
    expect(ledger).toContain('src/mod0.ts')
  })

  it('events: started, completed with original/new tokens, saved ratio and summary', async () => {
    const events: CompactEvent[] = []
    const messages = session(8, 40)
    const result = await compactMessages(messages, { contextTokenLimit: 500, outputDir: tempDir(), summarizer: async () => '## Goal\nfix', onEvent: (e) => events.push(e) })
    expect(events.map((e) => e.type)).toEqual(['token_limit_exceeded', 'started', 'completed'])
    expect(events[1]).toMatchObject({ type: 'started', tokens: countTokens(messages), threshold: 460, messageCount: messages.length, trigger: 'tokens', strategy: 'summary' })
    const completed = events[2] as any
    expect(completed.originalTokens).toBe(result.stats.originalTokenCount)
    expect(completed.newTokens).toBe(result.stats.compactedTokenCount)
    expect(completed.savedRatio).toBeCloseTo(1 - result.stats.compactionRatio, 10)
    expect(completed.summary).toBe(result.summary)
    // A failure after the start is a `failed` event with the result's error (the list is over
    // its window: without summaryFallback, the summary would be written without an LLM instead).
    const failing: CompactEvent[] = []
    const failed = await compactMessages(messages, { contextTokenLimit: 500, maxRetries: 0, summaryFallback: 'none', outputDir: tempDir(), summarizer: async () => '  ', onEvent: (e) => failing.push(e) })
    expect(failing.map((e) => e.type)).toEqual(['token_limit_exceeded', 'started', 'failed'])
    expect((failing[2] as any).error).toEqual(failed.error)
  })

  it('recursive compaction: still over the threshold → again with a smaller tail, at most two more rounds, reported', async () => {
    const dir = tempDir()
    const messages = session(40, 3)
    const total = countTokens(messages)
    const s = counting()
    const result = await compactMessages(messages, { contextTokenLimit: total, thresholdRatio: 0.5, tailRetentionRatio: 0.45, outputDir: dir, sessionId: 'rec', summarizer: s.summarizer })
    expect(result.compacted).toBe(true)
    expect(result.rounds).toBeGreaterThanOrEqual(2)
    expect(result.rounds).toBeLessThanOrEqual(3)
    expect(s.calls).toBe(result.rounds)
    // The second round updates the first summary.
    expect(s.requests[1].previousSummary).toContain('fix the bugs')
    // Its messages are the caller's own objects that follow the first middle, in order; the
    // first round's summary is what it updates (previousSummary), so one summary replaces one
    // contiguous part of the input and one archive holds it.
    const carried = s.requests[1].messages
    const firstMiddleEnd = messages.indexOf(s.requests[0].messages.at(-1)!) + 1
    expect(carried.length).toBeGreaterThan(0)
    carried.forEach((message, i) => expect(message).toBe(messages[firstMiddleEnd + i]))
    // The prompt, rendered on first read, is the transcript of exactly these messages.
    const prompt = s.requests[1].prompt
    // Framed by the request's key (docs/trust.md).
    expect(prompt).toMatch(/<previous_summary key="[0-9a-f]{16}">\n## Goal\nfix the bugs/)
    expect(prompt).toContain((carried[0] as { content: string }).content)
    expect(prompt).not.toContain((s.requests[0].messages[0] as { content: string }).content + '\n')
    expect(s.requests[1].prompt).toBe(prompt)
    expect(result.stats.compactedTokenCount < total * 0.5 || result.rounds === 3).toBe(true)
    expect(result.stats.compactedMessageCount + result.stats.retainedMessageCount).toBe(messages.length)
    expect(pairingProblems(result.messages)).toEqual([])
    expect(await restoreMessages(result.messages, { outputDir: dir, sessionId: 'rec' })).toEqual(messages)
    // A tail of one turn is not compacted again: one summary call. That summary is longer than
    // what it replaces, so the input stands (NOT_SMALLER) rather than a list that grew.
    let singleCalls = 0
    const single = await compactMessages(messages, {
      contextTokenLimit: total,
      thresholdRatio: 0.5,
      tailRetentionRatio: 0.0001,
      // A summary budget that lets the long summary through (the default would cut it).
      summaryBudgetTokens: 1_000_000,
      outputDir: tempDir(),
      summarizer: async () => {
        singleCalls += 1
        return 'long summary '.repeat(3000)
      },
    })
    expect(singleCalls).toBe(1)
    expect(single.compacted).toBe(false)
    expect(single.messages).toBe(messages)
    expect(single.error).toMatchObject({ code: 'NOT_SMALLER', originalTokens: total })
  })
})

// ---------------------------------------------------------------------------------------------
// 6. SanBot key-information extraction (seed 004)

describe('SanBot: extractMemory', () => {
  it('appends decisions, facts, preferences and runtime to extracted/*.md, privately, never twice', async () => {
    const dir = tempDir()
    const messages: Message[] = [
      { role: 'system', content: 'You are a coding agent.' },
      user('I prefer small commits. 我喜欢先写测试。 The project is called orbit.'),
      { role: 'assistant', content: [{ type: 'text', text: 'We decided to use SQLite. I will edit src/db/schema.ts next.' }, { type: 'tool_use', id: 't1', name: 'bash', input: { command: 'npm test' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', is_error: true, content: 'Error: 2 tests failed' }] },
      assistant('最终确定使用 Node 20。配置文件在 config/app.json。'),
      ...session(4, 30, 10),
    ]
    const options: CompactOptions = { extractMemory: true, force: true, tailRetentionRatio: 0.0001, keepRecentTurns: 1, outputDir: dir, sessionId: 'mem', summarizer: async () => 'S' }
    const result = await compactMessages(messages, options)
    expect(result.extracted).toMatchObject({ dir: join(dir, 'mem', 'extracted') })
    const read = (name: string) => readFileSync(join(dir, 'mem', 'extracted', `${name}.md`), 'utf8')
    expect(read('decisions')).toContain('- We decided to use SQLite')
    expect(read('decisions')).toContain('确定使用 Node 20')
    expect(read('preferences')).toContain('I prefer small commits')
    expect(read('preferences')).toContain('我喜欢先写测试')
    expect(read('facts')).toContain('src/db/schema.ts')
    expect(read('facts')).toContain('The project is called orbit')
    expect(read('runtime')).toContain('- ran: npm test')
    expect(read('runtime')).toMatch(/- failed: bash `npm test`: Error: 2 tests failed/)
    if (process.platform !== 'win32') {
      expect(statSync(join(dir, 'mem', 'extracted', 'facts.md')).mode & 0o777).toBe(0o600)
    }
    // A second compaction of the same history adds nothing already there.
    const again = await compactMessages(messages, options)
    expect(again.extracted).toMatchObject({ decisions: 0, facts: 0, preferences: 0, runtime: 0 })
    expect(read('decisions').match(/decided to use SQLite/g)).toHaveLength(1)
  })
})
