// A Compactor's options cross to the addon once (issue 38): it holds them there and a call hands
// over only what it changes. What must still hold: every measure equals the stateless one with
// the same options merged; an option object edited in place (a tool pushed, the system prompt
// changed) is read again; a call's overrides (system, tools, encoding, usage, an option unset
// with undefined) apply to that call alone; invalid overrides are a TypeError naming them.
import { describe, expect, it } from 'vitest'

import { Compactor, measureTokens, type Message } from '../../index'

const messages: Message[] = [
  { role: 'user', content: 'Read the configuration file and tell me what the timeout is.' },
  {
    role: 'assistant',
    content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'config.toml' } }],
  },
  {
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'timeout = 30\nretries = 4\n'.repeat(20) }],
  },
  { role: 'assistant', content: 'The timeout is 30 seconds.' },
  { role: 'user', content: 'And the retries?' },
]

const system = 'You are a careful assistant. '.repeat(40)
const tool = (name: string) => ({
  name,
  description: `Does ${name} with care, `.repeat(10),
  input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
})

// The figures a Compactor's measure shares with the stateless one (no usage seen before).
const figures = (m: ReturnType<Compactor['measure']>) => ({
  rawTokens: m.rawTokens,
  tokens: m.tokens,
  threshold: m.threshold,
  window: m.window,
  shouldCompact: m.shouldCompact,
})

describe('a Compactor holds its options in the addon', () => {
  it('measures as the stateless function does, with and without overrides', () => {
    const options = { contextTokenLimit: 20_000, system, tools: [tool('read_file'), tool('write_file')] }
    const compactor = new Compactor(options)
    expect(figures(compactor.measure(messages))).toEqual(figures(measureTokens(messages, options)))
    const cases: Record<string, unknown>[] = [
      { contextTokenLimit: 1_000 },
      { tools: [tool('grep')] },
      { system: 'short' },
      { system: undefined, tools: undefined },
      { encoding: 'cl100k_base' },
      { compression: { threshold: 5_000 } },
      { maxMessages: 3 },
    ]
    for (const overrides of cases) {
      const merged = { ...options, ...overrides }
      expect(figures(compactor.measure(messages, overrides as any)), JSON.stringify(overrides)).toEqual(
        figures(measureTokens(messages, merged as any)),
      )
      // The override was the call's alone.
      expect(figures(compactor.measure(messages))).toEqual(figures(measureTokens(messages, options)))
    }
  })

  it('reads an option object edited in place again', () => {
    const tools = [tool('read_file')]
    const options = { contextTokenLimit: 20_000, system: [{ type: 'text' as const, text: system }], tools }
    const compactor = new Compactor(options)
    const before = compactor.measure(messages).rawTokens
    tools.push(tool('write_file'))
    const more = compactor.measure(messages).rawTokens
    expect(more).toBeGreaterThan(before)
    expect(more).toBe(measureTokens(messages, options).rawTokens)
    options.system[0].text += ' Answer in French.'
    const again = compactor.measure(messages).rawTokens
    expect(again).toBeGreaterThan(more)
    expect(again).toBe(measureTokens(messages, options).rawTokens)
  })

  it('counts the tools a call passes, and again when they change (in place too)', () => {
    const compactor = new Compactor({ contextTokenLimit: 20_000 })
    const bare = compactor.measure(messages).rawTokens
    const tools = [tool('read_file')]
    const one = compactor.measure(messages, { tools }).rawTokens
    expect(one).toBeGreaterThan(bare)
    expect(compactor.measure(messages, { tools: structuredClone(tools) }).rawTokens).toBe(one)
    tools.push(tool('write_file'))
    const two = compactor.measure(messages, { tools }).rawTokens
    expect(two).toBeGreaterThan(one)
    expect(two).toBe(measureTokens(messages, { tools }).rawTokens)
    expect(compactor.measure(messages).rawTokens).toBe(bare)
  })

  it('unsets an option a call gives as undefined, for that call', () => {
    const options = { contextTokenLimit: 20_000, maxMessages: 2 }
    const compactor = new Compactor(options)
    expect(compactor.shouldCompact(messages)).toBe(true)
    expect(compactor.shouldCompact(messages, { maxMessages: undefined })).toBe(false)
    expect(compactor.shouldCompact(messages)).toBe(true)
  })

  it('uses a usage report a call passes, and measures without it after', () => {
    const compactor = new Compactor({ contextTokenLimit: 20_000, system })
    const raw = compactor.measure(messages)
    const withUsage = compactor.measure(messages, { usage: { input_tokens: 15_000, output_tokens: 10 } })
    expect(withUsage.source).toBe('usage')
    expect(withUsage.tokens).toBeGreaterThan(raw.tokens)
    expect(compactor.measure(messages).source).not.toBe('usage')
  })

  it('rejects invalid overrides with a TypeError naming the option, and stays usable', () => {
    const compactor = new Compactor({ contextTokenLimit: 20_000 })
    expect(() => compactor.measure(messages, { tools: 5 as any })).toThrow(TypeError)
    expect(() => compactor.measure(messages, { tools: 5 as any })).toThrow(/tools/)
    expect(() => compactor.measure(messages, { contextTokenLimit: -1 })).toThrow(/contextTokenLimit/)
    expect(() => compactor.measure(messages, { encoding: 'nope' as any })).toThrow(/encoding/)
    expect(compactor.measure(messages).rawTokens).toBe(measureTokens(messages, { contextTokenLimit: 20_000 }).rawTokens)
  })

  it('compacts with the held options, and a call override of the window for that call', async () => {
    const compactor = new Compactor({ contextTokenLimit: 1_000_000, system, summarizer: async () => 'The summary.' })
    const below = await compactor.compact(messages)
    expect(below.compacted).toBe(false)
    expect(below.threshold).toBe(compactor.measure(messages).threshold)
    const lower = await compactor.compact(messages, { contextTokenLimit: 500_000 })
    expect(lower.threshold).toBe(compactor.measure(messages, { contextTokenLimit: 500_000 }).threshold)
    expect(lower.threshold).toBeLessThan(below.threshold)
    expect((await compactor.compact(messages)).threshold).toBe(below.threshold)
  })
})
