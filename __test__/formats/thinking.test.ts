// Valid on reasoning models (SPEC §3): the thinking policy for kept turns, reported
// transformations, exact restore, and OpenAI-compatible reasoning fields kept.
import { describe, expect, it } from 'vitest'

import { checkMessages, compactMessages, countTokens, restoreMessages, type Message } from '../../index'
import { pairingProblems, tempDir } from '../support/helpers'

/** Many turns with thinking, ending in an unfinished tool loop. */
function session(turns: number): Message[] {
  const m: Message[] = []
  for (let t = 0; t < turns; t++) {
    m.push({ role: 'user', content: `step ${t}: ${'please go on '.repeat(30)}` })
    m.push({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: `I should run step ${t}.`, signature: `EqQBCkYIARgCKkB+/sig${t}==` },
        { type: 'redacted_thinking', data: `EmwKAhgBEgy3va${t}+/==` },
        { type: 'text', text: `Running step ${t}.` },
        { type: 'tool_use', id: `t${t}`, name: 'bash', input: { command: `make step${t}` } },
      ],
    } as Message)
    m.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${t}`, content: 'ok '.repeat(80) }] })
  }
  m.push({
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 'Run the tests.', signature: 'EqQBlast+/==' },
      { type: 'tool_use', id: 'last', name: 'bash', input: { command: 'cargo test' } },
    ],
  } as Message)
  m.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'last', content: 'test result: ok' }] })
  return m
}

const thinkingBlocks = (messages: Message[]) =>
  messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b: any) => b.type === 'thinking' || b.type === 'redacted_thinking')

const base = { contextTokenLimit: 2000, tailRetentionRatio: 0.3, force: true, provider: 'extractive' as const, sessionId: 't' }

describe('thinking policy for kept turns', () => {
  it("'strip' removes every kept thinking block, reports each, and restores exactly", async () => {
    const dir = tempDir()
    const messages = session(10)
    const before = JSON.stringify(messages)
    const result = await compactMessages(messages, { ...base, outputDir: dir, thinking: 'strip' })
    expect(JSON.stringify(messages)).toBe(before)
    expect(result.compacted).toBe(true)
    expect(thinkingBlocks(result.messages)).toEqual([])
    expect(checkMessages(result.messages)).toEqual([])
    expect(pairingProblems(result.messages)).toEqual([])
    expect(result.transformations.length).toBeGreaterThan(0)
    for (const t of result.transformations) {
      expect(t.type).toBe('thinking_dropped')
      const [, i, , j] = t.path.split('.')
      expect(Number(i)).toBe(t.originalIndex)
      expect((messages[t.originalIndex].content as any[])[Number(j)].type).toBe(t.blockType)
      expect(result.messages[t.index!]).not.toBe(messages[t.originalIndex])
    }
    // The unfinished tool loop's turn lost its thinking too, and still holds its tool_use.
    const last = result.messages.at(-2) as any
    expect(last.content.map((b: any) => b.type)).toEqual(['tool_use'])
    expect(result.thinkingArchivePath).toMatch(/compact-.*\.json$/)
    expect(JSON.stringify(await restoreMessages(result.messages, { outputDir: dir, sessionId: 't' }))).toBe(before)
  })

  it("'keep' leaves kept turns as the very objects; 'auto' follows the agent model", async () => {
    const messages = session(10)
    const kept = await compactMessages(messages, { ...base, outputDir: tempDir(), thinking: 'keep' })
    expect(kept.transformations).toEqual([])
    expect(kept.messages.slice(1).every((m) => messages.includes(m))).toBe(true)
    const legacy = await compactMessages(messages, { ...base, outputDir: tempDir(), agentModel: 'claude-sonnet-4-5' })
    expect(legacy.transformations).toEqual([])
    expect(thinkingBlocks(legacy.messages).length).toBeGreaterThan(0)
    const bound = await compactMessages(messages, { ...base, outputDir: tempDir(), agentModel: 'claude-opus-5-5' })
    expect(thinkingBlocks(bound.messages)).toEqual([])
    const unnamed = await compactMessages(messages, { ...base, outputDir: tempDir() })
    expect(thinkingBlocks(unnamed.messages)).toEqual([])
    await expect(compactMessages(messages, { ...base, thinking: 'drop' as any })).rejects.toThrow(/thinking/)
  })

  it('OpenAI-compatible reasoning fields are never dropped; the summary is a plain user message', async () => {
    const messages: Message[] = []
    for (let t = 0; t < 10; t++) {
      messages.push({ role: 'user', content: `step ${t}: ${'please go on '.repeat(30)}` })
      messages.push({
        role: 'assistant',
        content: null,
        reasoning_content: `Thinking about step ${t}.`,
        reasoning_details: [{ type: 'reasoning.encrypted', data: `gAAAA${t}==`, id: `r${t}` }],
        tool_calls: [{ id: `c${t}`, type: 'function', function: { name: 'bash', arguments: `{"command":"make ${t}"}` } }],
      } as Message)
      messages.push({ role: 'tool', tool_call_id: `c${t}`, content: 'ok '.repeat(80) } as Message)
    }
    const result = await compactMessages(messages, { ...base, outputDir: tempDir(), thinking: 'strip', agentModel: 'deepseek-reasoner' })
    expect(result.compacted).toBe(true)
    const summaryAt = result.messages.findIndex((m) => typeof m.content === 'string' && m.content.startsWith('[context-compact]'))
    expect(Object.keys(result.messages[summaryAt])).toEqual(['role', 'content'])
    expect(result.messages[summaryAt].role).toBe('user')
    for (const m of result.messages.slice(summaryAt + 1)) {
      expect(messages.includes(m)).toBe(true)
      if (m.role === 'assistant') {
        expect((m as any).reasoning_content).toMatch(/^Thinking about step/)
        expect((m as any).reasoning_details[0].data).toMatch(/^gAAAA/)
      }
    }
    expect(result.transformations).toEqual([])
    expect(countTokens(result.messages)).toBeLessThan(countTokens(messages))
  })
})
