// The trigger on real Claude sessions (shared/data): replays every API request in order and
// checks that compaction is never triggered late (after the API would bill ≥ 92 % of the
// window) nor too early, in the tokens the API actually billed.
import { existsSync } from 'node:fs'
import { join } from 'node:path'

import { beforeAll, describe, expect, it, vi } from 'vitest'

import { Compactor, measureTokens, shouldCompact, type Message } from '../../index'
import { loadReplay, type Replay } from '../support/pi-session'

const DATA = join(__dirname, '..', '..', '..', 'shared', 'data')
const LIMIT = 180_000
const AT_92 = LIMIT * 0.92
const AT_80 = LIMIT * 0.8

const sessions = ['pi-session-before-compaction.jsonl', 'pi-session-large.jsonl']

// Replays recount real sessions many times; give them room on a slow debug build.
vi.setConfig({ testTimeout: 300_000 })

describe.each(sessions)('replaying %s', (file) => {
  let replay: Replay
  let first92: number
  let first80: number

  beforeAll(() => {
    const path = join(DATA, file)
    expect(existsSync(path), `${path} (shared/data must sit beside the repository)`).toBe(true)
    replay = loadReplay(path)
    first92 = replay.requests.findIndex((r) => r.billed >= AT_92)
    first80 = replay.requests.findIndex((r) => r.billed >= AT_80)
  })

  it('reaches 92 % of a 180K window before its own compaction', () => {
    expect(replay.requests.length).toBeGreaterThan(100)
    expect(first80).toBeGreaterThan(0)
    expect(first92).toBeGreaterThan(first80)
  })

  it('the raw o200k count alone would be late (why the calibration exists)', () => {
    const request = replay.requests[first92]
    expect(shouldCompact(request.messages, { contextTokenLimit: LIMIT })).toBe(false)
  })

  it('with the previous reply’s usage: first true at the first request billed ≥ 92 %, or one earlier', () => {
    const firstTrue = (decide: (request: (typeof replay.requests)[number]) => boolean) =>
      replay.requests.findIndex((request) => decide(request))
    // The stateless function recounts every message on every call: check it where it matters
    // (from the 80 % point on, and every 10th request before it).
    const statelessAt = (i: number) =>
      shouldCompact(replay.requests[i].messages, { contextTokenLimit: LIMIT, usage: replay.requests[i].previousUsage ?? undefined })
    for (let i = 0; i < first92 - 1; i += i < first80 ? 10 : 1) expect(statelessAt(i), `request ${i}`).toBe(false)
    expect(statelessAt(first92)).toBe(true)
    const compactor = new Compactor({ contextTokenLimit: LIMIT })
    const learning = firstTrue((r) => compactor.shouldCompact(r.messages, { usage: r.previousUsage ?? undefined }))
    expect([first92 - 1, first92]).toContain(learning)
    expect(compactor.measure(replay.requests[first92].messages, { usage: replay.requests[first92].previousUsage! }).source).toBe('usage')
  })

  it('without usage, with the agent model named: never late, and not before 80 %', () => {
    for (const agentModel of ['claude-sonnet-4-5', replay.model]) {
      const compactor = new Compactor({ contextTokenLimit: LIMIT, agentModel })
      const firstTrue = replay.requests.findIndex((r) => compactor.shouldCompact(r.messages))
      expect(firstTrue).toBeGreaterThanOrEqual(first80)
      expect(firstTrue).toBeLessThanOrEqual(first92)
      // The stateless function agrees at the boundaries.
      expect(shouldCompact(replay.requests[first92].messages, { contextTokenLimit: LIMIT, agentModel })).toBe(true)
      expect(shouldCompact(replay.requests[first80 - 1].messages, { contextTokenLimit: LIMIT, agentModel })).toBe(false)
      expect(measureTokens(replay.requests[first92].messages, { contextTokenLimit: LIMIT, agentModel }).source).toBe('model')
    }
  })

  it('a compactor that saw usage early keeps the trigger on time when usage stops', () => {
    const compactor = new Compactor({ contextTokenLimit: LIMIT })
    const stopAt = Math.floor(first80 / 2)
    let firstTrue = -1
    replay.requests.forEach((r, i) => {
      const usage = i < stopAt ? (r.previousUsage ?? undefined) : undefined
      if (firstTrue < 0 && compactor.shouldCompact(r.messages, { usage })) firstTrue = i
    })
    expect(compactor.calibration).not.toBeNull()
    expect(compactor.calibration!.slope).toBeGreaterThan(1.1)
    expect(compactor.measure(replay.requests[first92].messages).source).toBe('calibration')
    expect(firstTrue).toBeLessThanOrEqual(first92)
    expect(firstTrue).toBeGreaterThanOrEqual(first80)
  })

  it('stats stay raw tokenizer counts; the estimate is reported beside them', () => {
    const messages: Message[] = replay.requests[first92].messages
    const m = measureTokens(messages, { contextTokenLimit: LIMIT, agentModel: 'claude-opus-4-5' })
    expect(m.rawTokens).toBeLessThan(m.tokens)
    expect(m.factor).toBe(1.35)
    expect(m.tokens).toBe(Math.ceil(m.rawTokens * 1.35))
  })
})

describe('usage shapes', () => {
  const messages: Message[] = [
    { role: 'user', content: 'hello' },
    { role: 'assistant', content: 'hi' },
    { role: 'user', content: 'hello world' },
  ]
  it.each([
    ['Anthropic', { input_tokens: 100, cache_read_input_tokens: 800, cache_creation_input_tokens: 50, output_tokens: 50 }],
    ['OpenAI', { prompt_tokens: 950, completion_tokens: 50, total_tokens: 1000 }],
    ['AI SDK', { inputTokens: 950, outputTokens: 50, totalTokens: 1000 }],
  ])('%s usage counts everything up to the reply, plus the scaled new messages', (_, usage) => {
    const m = measureTokens(messages, { contextTokenLimit: 2000, usage, agentModel: 'gpt-4o' })
    expect(m.source).toBe('usage')
    expect(m.tokens).toBe(1000 + 2) // "hello world" = 2 o200k tokens, gpt-4o factor 1
    expect(shouldCompact(messages, { contextTokenLimit: 1089, usage, agentModel: 'gpt-4o' })).toBe(true)
    expect(shouldCompact(messages, { contextTokenLimit: 1090, usage, agentModel: 'gpt-4o' })).toBe(false)
  })

  it('rejects something that is not a usage object', () => {
    expect(() => shouldCompact(messages, { usage: { tokens: 5 } as any })).toThrow(TypeError)
  })

  it('agentModel gives contextTokenLimit when it is not set', () => {
    expect(measureTokens(messages, { agentModel: 'gpt-4o' }).threshold).toBe(Math.round(128_000 * 0.92))
    expect(measureTokens(messages, { agentModel: 'gpt-4o', contextTokenLimit: 1000 }).threshold).toBe(920)
    expect(measureTokens(messages, { model: 'gpt-4o' }).threshold).toBe(184_000)
  })
})
