import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createRequire } from 'node:module'

import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

import {
  assembleMessages,
  COMPACT_MAX_RETRIES,
  COMPACT_THRESHOLD_RATIO,
  compactMessages,
  Compactor,
  CONTEXT_TOKEN_LIMIT,
  countTokens,
  generateSummary,
  partitionMessages,
  persistMessages,
  shouldCompact,
  TAIL_RETENTION_RATIO,
  type Message,
  type SummaryRequest,
} from '../../index'
import { conversation } from '../support/conversations'
import { pairingProblems, referenceCount, tempDir, textOfTokens } from '../support/helpers'

const user = (content: Message['content']): Message => ({ role: 'user', content: content as string })
const assistant = (content: string): Message => ({ role: 'assistant', content })

describe('package', () => {
  it('exports the PRD constants', () => {
    expect(CONTEXT_TOKEN_LIMIT).toBe(200_000)
    expect(COMPACT_THRESHOLD_RATIO).toBe(0.92)
    expect(TAIL_RETENTION_RATIO).toBe(0.1)
    expect(COMPACT_MAX_RETRIES).toBe(2)
  })

  it('works from require and from import', async () => {
    const require = createRequire(import.meta.url)
    const cjs = require('../../index.js')
    const esm = await import('../../index.mjs')
    expect(cjs.countTokens([user('hello world')])).toBe(2)
    expect(esm.countTokens([user('hello world')])).toBe(2)
    expect(esm.compactMessages).toBe(cjs.compactMessages)
  })
})

describe('F-001 countTokens', () => {
  const samples = [
    'Hello, world!',
    '<|endoftext|>',
    'text with <|endoftext|> and <|im_start|> inside',
    'emoji 🎉🧑‍💻👍🏽 flags 🇫🇷',
    '中文：压缩上下文，保留关键信息。日本語のテキスト。한국어',
    'lone surrogates \ud800 and \udfff here',
    '\ud83d',
    '   \n\n\t  mixed    whitespace \r\n',
    'fn main() { println!("{}", 1 + 2); }\n',
    "it's we'll they're I'M",
    '1234567890 3.14159 -42',
    'a'.repeat(10_000),
  ]

  it.each(samples)('counts a string content exactly as js-tiktoken: %j', (text) => {
    expect(countTokens([user(text)])).toBe(referenceCount(text))
  })

  it('matches js-tiktoken on arbitrary strings (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => countTokens([user(text)]) === referenceCount(text)),
      { numRuns: 400 },
    )
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), (text) => countTokens([user(text)]) === referenceCount(text)),
      { numRuns: 300 },
    )
  })

  it('supports cl100k_base on request', () => {
    const text = 'The quick brown fox 你好 <|endoftext|>'
    expect(countTokens([user(text)], { encoding: 'cl100k_base' })).toBe(referenceCount(text, 'cl100k_base'))
    expect(() => countTokens([user(text)], { encoding: 'p50k_base' as any })).toThrow(TypeError)
  })

  it('empty list → 0, empty string → 0', () => {
    expect(countTokens([])).toBe(0)
    expect(countTokens([user('')])).toBe(0)
    expect(countTokens([user([])])).toBe(0)
  })

  it('tool_use counts its name and JSON.stringify(input) in the caller key order', () => {
    const input = { z: 1, a: 'x y', nested: { b: [1, 2], a: null } }
    const m: Message = { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'read_file', input }] }
    expect(countTokens([m])).toBe(referenceCount('read_file') + referenceCount(JSON.stringify(input)))
  })

  it('tool_result counts its content recursively', () => {
    const m: Message = {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'alpha beta' }, { type: 'tool_result', tool_use_id: 'u', content: 'gamma' }] },
        { type: 'tool_result', tool_use_id: 'v', content: 'delta', is_error: true },
      ],
    }
    expect(countTokens([m])).toBe(referenceCount('alpha beta') + referenceCount('gamma') + referenceCount('delta'))
  })

  it('OpenAI tool_calls count name and arguments; tool messages count content', () => {
    const args = '{"command":"ls -la"}'
    const messages: Message[] = [
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'bash', arguments: args } }] },
      { role: 'tool', tool_call_id: 'c', content: 'total 0' },
    ]
    expect(countTokens(messages)).toBe(referenceCount('bash') + referenceCount(args) + referenceCount('total 0'))
  })

  it('images are estimated from their size, never tokenized as base64', () => {
    // A 1000×500 PNG header followed by 300 KB of payload.
    const header = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 3, 0xe8, 0, 0, 1, 0xf4, 8, 6, 0, 0, 0])
    const data = Buffer.concat([header, Buffer.alloc(300_000, 7)]).toString('base64')
    const m: Message = { role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }] }
    expect(countTokens([m])).toBe(Math.ceil((1000 * 500) / 750))
    expect(referenceCount(data)).toBeGreaterThan(50_000)
  })

  it('unknown blocks count 0 and pass through', () => {
    const m: Message = { role: 'user', content: [{ type: 'hologram', text: 'not counted' } as any, { type: 'text', text: 'hi' }] }
    expect(countTokens([m])).toBe(referenceCount('hi'))
  })

  it('counts a 50 MB string correctly', () => {
    const unit = 'hello '
    const small = countTokens([user(unit.repeat(1000))])
    const smaller = countTokens([user(unit.repeat(100))])
    const perUnit = (small - smaller) / 900
    const reps = Math.ceil((50 * 1024 * 1024) / unit.length)
    expect(countTokens([user(unit.repeat(reps))])).toBe(smaller + perUnit * (reps - 100))
  })
})

describe('invalid input throws a TypeError naming the index and field', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['null', null, /messages must be an array of message objects, got null/],
    ['a string', 'hello', /got string/],
    ['an object', { role: 'user' }, /got object/],
    ['a non-object element', [user('a'), 42], /^messages\[1\]: expected a message object, got number/],
    ['a null element', [null], /^messages\[0\]: expected a message object, got null/],
    ['a missing role', [{ content: 'x' }], /^messages\[0\]\.role is missing/],
    ['an unknown role', [user('a'), { role: 'robot', content: 'x' }], /^messages\[1\]\.role: unknown role "robot"/],
    ['a numeric content', [{ role: 'user', content: 5 }], /^messages\[0\]\.content: expected a string or an array of content blocks, got number/],
    ['a missing user content', [{ role: 'user' }], /^messages\[0\]\.content is missing/],
    ['a block that is not an object', [{ role: 'user', content: ['x'] }], /^messages\[0\]\.content\[0\]: expected a content block object/],
    ['a tool_result without tool_use_id', [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }], /^messages\[0\]\.content\[0\]\.tool_use_id is missing/],
    ['a tool message without tool_call_id', [{ role: 'tool', content: 'x' }], /^messages\[0\]\.tool_call_id is missing/],
  ]

  it.each(cases)('%s', (_, input, pattern) => {
    for (const call of [
      () => countTokens(input as Message[]),
      () => shouldCompact(input as Message[]),
      () => partitionMessages(input as Message[], 10),
    ]) {
      let thrown: unknown
      try {
        call()
      } catch (e) {
        thrown = e
      }
      expect(thrown).toBeInstanceOf(TypeError)
      expect((thrown as Error).message).toMatch(pattern)
    }
  })

  it('compactMessages rejects before calling the summarizer or writing anything', async () => {
    const dir = tempDir()
    let calls = 0
    await expect(
      compactMessages([user('a'), { role: 'user', content: [{ type: 'tool_result' }] } as any], {
        force: true,
        outputDir: dir,
        summarizer: async () => {
          calls++
          return 's'
        },
      }),
    ).rejects.toThrow(TypeError)
    expect(calls).toBe(0)
    expect(existsSync(join(dir, 'default'))).toBe(false)
  })

  it('deeply nested tool results are rejected, not a crash', () => {
    let content: any = 'leaf'
    for (let i = 0; i < 200; i++) content = [{ type: 'tool_result', tool_use_id: 'x', content }]
    expect(() => countTokens([{ role: 'user', content }])).toThrow(TypeError)
    let deeper: any = 'leaf'
    for (let i = 0; i < 100_000; i++) deeper = [{ type: 'tool_result', tool_use_id: 'x', content: deeper }]
    expect(() => countTokens([{ role: 'user', content: deeper }])).toThrow(TypeError)
  })

  it('circular messages and invalid options are TypeErrors', () => {
    const m: any = { role: 'user', content: 'x' }
    m.self = m
    expect(() => countTokens([m])).toThrow(TypeError)
    expect(() => shouldCompact([user('x')], { contextTokenLimit: -5 })).toThrow(/contextTokenLimit/)
    expect(() => shouldCompact([user('x')], { sessionId: '../etc' })).toThrow(TypeError)
  })

  it('messages are read exactly as JSON.stringify writes them (what the API receives)', async () => {
    class Point {
      constructor(public x: number, public y: number) {}
      toJSON() {
        return `${this.x},${this.y}`
      }
    }
    const proto = { inherited: 'not own, not sent' }
    const withProto = Object.assign(Object.create(proto), { own: 1 })
    const withGetter = Object.defineProperty({ a: 1 }, 'computed', { get: () => 'got', enumerable: true })
    const hidden = Object.defineProperty({ shown: true }, 'hidden', { value: 'no', enumerable: false })
    const input: Record<string, unknown> = {
      z: 1,
      2: 'two',
      a: [1, undefined, () => 1, Symbol('s'), NaN, -Infinity, null],
      1: 'one',
      skipped: undefined,
      fn: () => 1,
      [Symbol('key')]: 'symbol keys are not sent',
      when: new Date(Date.UTC(2026, 10, 22, 6, 0, 0)),
      point: new Point(3, 4),
      numbers: [1e21, 1e-7, 0.1 + 0.2, -0, 2 ** 53 + 2, 5e-324, Number.MAX_VALUE, 123456789.125],
      withProto,
      withGetter,
      hidden,
      text: 'emoji 😀, CJK 中文',
    }
    const asSent = JSON.stringify(input)
    const tool = (x: unknown): Message => ({ role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'run', input: x }] })
    // tool_use counts name + JSON.stringify(input): equal iff the addon read the same JSON.
    expect(countTokens([tool(input)])).toBe(countTokens([{ role: 'user', content: 'run' }]) + countTokens([{ role: 'user', content: asSent }]))
    // The archive holds the same JSON, indented.
    // A lone surrogate (legal in a JS string, not in UTF-8) is read as U+FFFD.
    const result = { type: 'tool_result', tool_use_id: 't1', content: 'lone \ud800 surrogate', extra: undefined }
    const messages: Message[] = [tool(input), { role: 'user', content: [result as any] }]
    const path = await persistMessages(messages, tempDir(), 'stringify')
    expect(readFileSync(path, 'utf8')).toBe(JSON.stringify(messages, null, 2).replace('\\ud800', '\ufffd'))
  })

  it('values JSON.stringify cannot write are TypeErrors naming the message, and nothing is left pending', () => {
    const ok: Message = { role: 'user', content: 'fine' }
    expect(() => countTokens([ok, { role: 'user', content: 'x', n: 10n } as any])).toThrow(/^messages\[1\] cannot be serialized as JSON: .*BigInt/)
    const throwing = Object.defineProperty({ role: 'user' }, 'content', { get() { throw new Error('boom getter') }, enumerable: true })
    expect(() => countTokens([ok, ok, throwing as any])).toThrow(/^messages\[2\] cannot be serialized as JSON: .*boom getter/)
    const badToJson = { role: 'user', content: [{ type: 'text', text: 'x', toJSON() { throw new RangeError('no json') } }] }
    expect(() => countTokens([badToJson as any])).toThrow(TypeError)
    // A list claiming a billion (empty) slots is refused before anything is allocated.
    expect(() => countTokens(new Array(1e9))).toThrow(/at most 10000000/)
    // The process goes on normally afterwards.
    expect(countTokens([ok])).toBe(1)
  })

  it('countTokens reads, checks and counts message by message: the first bad message by index is reported, and counts equal the per-message counts', () => {
    const ok: Message = { role: 'user', content: 'fine' }
    // An invalid message before one that cannot be read: the invalid one is reported.
    expect(() => countTokens([ok, { content: 'no role' } as any, { role: 'user', content: 'x', n: 10n } as any])).toThrow(/^messages\[1\]/)
    // One that cannot be read before an invalid one: the unreadable one is reported.
    expect(() => countTokens([ok, { role: 'user', content: 'x', n: 10n } as any, { content: 'no role' } as any])).toThrow(/^messages\[1\] cannot be serialized as JSON/)
    // The total is the sum of the messages' counts, whatever the list's length.
    const messages: Message[] = Array.from({ length: 300 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `message ${i}: ${'lorem ipsum '.repeat(i % 17)}你好 ${i * 7919}` }))
    const native = createRequire(import.meta.url)('../../lib/addon/native.js')
    const each: number[] = native.countEachJson(messages)
    expect(each).toHaveLength(300)
    expect(countTokens(messages)).toBe(each.reduce((a, b) => a + b, 0))
    expect(each).toEqual(messages.map((m) => countTokens([m])))
  })

  it('property: any JSON-like tool input counts as JSON.stringify of it', () => {
    const odd = fc.oneof(fc.constant(undefined), fc.constant(NaN), fc.date({ noInvalidDate: true }), fc.double(), fc.constant(-0))
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, fc.jsonValue(), odd, fc.array(tie('node'), { maxLength: 4 }), fc.dictionary(fc.string(), tie('node'), { maxKeys: 4 })),
    })).node
    fc.assert(
      fc.property(fc.dictionary(fc.string(), value, { maxKeys: 6 }), (input) => {
        const message: Message = { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'x', input }] }
        const expected = countTokens([{ role: 'user', content: 'x' }]) + countTokens([{ role: 'user', content: JSON.stringify(input) }])
        expect(countTokens([message])).toBe(expected)
      }),
      { numRuns: 300 },
    )
  })

  it('unknown fields and block types are accepted', () => {
    expect(countTokens([{ role: 'user', content: [{ type: 'future_block', x: 1 }], metadata: { id: 7 } } as any])).toBe(0)
  })
})

describe('F-002 shouldCompact', () => {
  it('is true exactly at the threshold (≥) and false one token below', () => {
    // threshold = 1000 × 0.92 = 920
    expect(countTokens([user(textOfTokens(920))])).toBe(920)
    expect(shouldCompact([user(textOfTokens(920))], { contextTokenLimit: 1000 })).toBe(true)
    expect(shouldCompact([user(textOfTokens(919))], { contextTokenLimit: 1000 })).toBe(false)
    expect(shouldCompact([user(textOfTokens(921))], { contextTokenLimit: 1000 })).toBe(true)
  })

  it('uses the PRD defaults: 200 000 × 0.92 = 184 000', () => {
    expect(shouldCompact([user(textOfTokens(184_000))])).toBe(true)
    expect(shouldCompact([user(textOfTokens(183_999))])).toBe(false)
  })

  it('honours thresholdRatio', () => {
    expect(shouldCompact([user(textOfTokens(500))], { contextTokenLimit: 1000, thresholdRatio: 0.5 })).toBe(true)
    expect(shouldCompact([user(textOfTokens(499))], { contextTokenLimit: 1000, thresholdRatio: 0.5 })).toBe(false)
  })

  it('empty list → false, even with a zero-token threshold', () => {
    expect(shouldCompact([])).toBe(false)
    expect(shouldCompact([], { contextTokenLimit: 1, thresholdRatio: 0.0001 })).toBe(false)
  })

  it('counts the system prompt and tool definitions', () => {
    const tools = [{ name: 'read_file', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }]
    const toolTokens = referenceCount(JSON.stringify(tools[0]))
    const system = textOfTokens(100)
    const messages = [user(textOfTokens(820 - toolTokens))]
    expect(shouldCompact(messages, { contextTokenLimit: 1000, system, tools })).toBe(true)
    expect(shouldCompact(messages, { contextTokenLimit: 1000, system })).toBe(false)
    expect(shouldCompact(messages, { contextTokenLimit: 1000, system: [{ type: 'text', text: system }], tools })).toBe(true)
  })
})

describe('F-003 partitionMessages', () => {
  const sys: Message = { role: 'system', content: 'You are helpful.' }

  it('head is the leading system messages; middle and tail follow', () => {
    const messages = [sys, user(textOfTokens(50)), assistant(textOfTokens(50)), user(textOfTokens(10)), assistant(textOfTokens(10))]
    const { head, middle, tail } = partitionMessages(messages, 20)
    expect(head).toEqual([sys])
    expect(head[0]).toBe(sys)
    expect(middle).toEqual(messages.slice(1, 3))
    expect(tail).toEqual(messages.slice(3))
  })

  it('no system message → empty head', () => {
    const messages = [user(textOfTokens(30)), assistant(textOfTokens(30)), user(textOfTokens(30))]
    const { head, middle, tail } = partitionMessages(messages, 30)
    expect(head).toEqual([])
    expect(middle).toEqual(messages.slice(0, 2))
    expect(tail).toEqual(messages.slice(2))
  })

  it('one message → tail, head and middle empty', () => {
    expect(partitionMessages([user('hi')], 0)).toEqual({ head: [], middle: [], tail: [user('hi')] })
    expect(partitionMessages([sys], 100)).toEqual({ head: [], middle: [], tail: [sys] })
  })

  it('the message that crosses the budget stays whole in the tail', () => {
    const messages = [user(textOfTokens(100)), assistant(textOfTokens(100)), user(textOfTokens(10)), assistant(textOfTokens(5))]
    expect(partitionMessages(messages, 12).tail).toEqual(messages.slice(2))
    // exactly reaching the budget stops the scan
    expect(partitionMessages(messages, 15).tail).toEqual(messages.slice(2))
    expect(partitionMessages(messages, 16).tail).toEqual(messages.slice(1))
  })

  it('head + tail covering everything → empty middle', () => {
    const messages = [sys, user('a'), assistant('b')]
    const { middle, tail } = partitionMessages(messages, 1_000_000)
    expect(middle).toEqual([])
    expect(tail).toEqual(messages.slice(1))
  })

  it('the tail never starts with Anthropic tool results (parallel calls move together)', () => {
    const messages: Message[] = [
      user('go'),
      { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'x', input: {} }, { type: 'tool_use', id: 'b', name: 'y', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: textOfTokens(100) }, { type: 'tool_result', tool_use_id: 'b', content: '2' }] },
      assistant('done'),
    ]
    const { middle, tail } = partitionMessages(messages, 50)
    expect(middle).toEqual([messages[0]])
    expect(tail[0]).toBe(messages[1])
  })

  it('the tail never starts with OpenAI tool messages (parallel calls move together)', () => {
    const messages: Message[] = [
      sys,
      user('go'),
      { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'x', arguments: '{}' } }, { id: 'b', type: 'function', function: { name: 'y', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'a', content: textOfTokens(100) },
      { role: 'tool', tool_call_id: 'b', content: textOfTokens(100) },
      assistant('done'),
    ]
    const { head, middle, tail } = partitionMessages(messages, 150)
    expect(head).toEqual([sys])
    expect(middle).toEqual([messages[1]])
    expect(tail[0]).toBe(messages[2])
  })

  it('every message appears exactly once, in order; the tail never starts with a tool result (property)', () => {
    fc.assert(
      fc.property(conversation, fc.integer({ min: 0, max: 400 }), (messages, budget) => {
        const { head, middle, tail } = partitionMessages(messages, budget)
        const joined = [...head, ...middle, ...tail]
        if (joined.length !== messages.length || joined.some((m, i) => m !== messages[i])) return false
        const first = tail[0] as any
        if (first && middle.length > 0) {
          if (first.role === 'tool') return false
          if (Array.isArray(first.content) && first.content.some((b: any) => b.type === 'tool_result')) return false
        }
        return pairingProblems([...head, { role: 'user', content: 'summary' }, ...tail]).length === 0 || middle.length === 0
      }),
      { numRuns: 300 },
    )
  })
})

describe('F-005 assembleMessages', () => {
  it('returns [...head, {role: user, content: summary}, ...tail] as a new array', () => {
    const head = [{ role: 'system', content: 's' } as Message]
    const tail = [user('t')]
    const out = assembleMessages(head, 'SUMMARY', tail)
    expect(out).toEqual([head[0], { role: 'user', content: 'SUMMARY' }, tail[0]])
    expect(out[0]).toBe(head[0])
    expect(out[2]).toBe(tail[0])
    expect(head).toHaveLength(1)
    expect(tail).toHaveLength(1)
  })

  it('empty head → the summary is first; empty tail → head + summary', () => {
    expect(assembleMessages([], 'S', [user('t')])[0]).toEqual({ role: 'user', content: 'S' })
    expect(assembleMessages([{ role: 'system', content: 's' }], 'S', [])).toEqual([{ role: 'system', content: 's' }, { role: 'user', content: 'S' }])
  })

  it('an empty summary still assembles (with a warning)', () => {
    expect(assembleMessages([], '', [])).toEqual([{ role: 'user', content: '' }])
  })

  it("writes the summary in the format of head and tail, or the one options.format names", () => {
    const gemini = { role: 'model', parts: [{ text: 'x' }] }
    expect(assembleMessages([], 'S', [gemini])).toEqual([{ role: 'user', parts: [{ text: 'S' }] }, gemini])
    const call = { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' }
    expect(assembleMessages([], 'S', [call])[0]).toEqual({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'S' }] })
    const bedrock = { role: 'assistant', content: [{ text: 'x' }] }
    expect(assembleMessages([], 'S', [bedrock])[0]).toEqual({ role: 'user', content: [{ text: 'S' }] })
    // Nothing in the list says its format: the option does.
    expect(assembleMessages([], 'S', [], { format: 'gemini' })).toEqual([{ role: 'user', parts: [{ text: 'S' }] }])
    expect(() => assembleMessages([gemini], 'S', [call])).toThrow(TypeError)
  })
})

function longConversation(turns: number, tokensPerMessage: number): Message[] {
  const messages: Message[] = [{ role: 'system', content: 'You are a coding agent.' }]
  for (let i = 0; i < turns; i++) {
    messages.push(user(`${i} ` + textOfTokens(tokensPerMessage)))
    messages.push({ role: 'assistant', content: [{ type: 'text', text: `step ${i}` }, { type: 'tool_use', id: `t${i}`, name: 'read_file', input: { path: `src/file${i}.ts` } }] })
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: textOfTokens(tokensPerMessage) }] })
  }
  return messages
}

describe('compactMessages', () => {
  it('below the threshold: the input array itself, compacted false, no summarizer call, nothing written', async () => {
    const dir = tempDir()
    const messages = longConversation(5, 10)
    let calls = 0
    const result = await compactMessages(messages, { outputDir: dir, summarizer: async () => (calls++, 'x') })
    expect(result.messages).toBe(messages)
    expect(result.compacted).toBe(false)
    expect(result.summary).toBeNull()
    expect(result.archivePath).toBeNull()
    expect(result.error).toBeNull()
    expect(result.stats).toEqual({ originalTokenCount: 0, compactedTokenCount: 0, compactionRatio: 0, compactedMessageCount: 0, retainedMessageCount: 0, removedMessageCount: 0 })
    expect(calls).toBe(0)
    expect(existsSync(join(dir, 'default'))).toBe(false)
  })

  it('over the threshold: head + summary + tail, retained messages are the very objects given', async () => {
    const dir = tempDir()
    const messages = longConversation(40, 50)
    const snapshot = JSON.stringify(messages)
    const requests: SummaryRequest[] = []
    const result = await compactMessages(messages, {
      contextTokenLimit: 4000,
      outputDir: dir,
      model: 'my-model',
      customInstructions: 'Mention the files.',
      summarizer: async (request) => {
        requests.push(request)
        return '## Goal\nRead every file.'
      },
    })
    expect(result.compacted).toBe(true)
    expect(requests).toHaveLength(1)
    const { head, middle, tail } = partitionMessages(messages, 400)
    expect(result.messages).toHaveLength(head.length + 1 + tail.length)
    result.messages.slice(0, head.length).forEach((m, i) => expect(m).toBe(head[i]))
    result.messages.slice(head.length + 1).forEach((m, i) => expect(m).toBe(tail[i]))
    expect(result.messages[head.length]).toEqual({ role: 'user', content: result.summary })
    expect(result.summary).toContain('Read every file.')
    expect(result.summary).toContain(result.archivePath!)
    // the request: the middle as given, a prompt with its content, model and instructions
    expect(requests[0].messages).toHaveLength(middle.length)
    requests[0].messages.forEach((m, i) => expect(m).toBe(middle[i]))
    expect(requests[0].prompt).toContain('src/file0.ts')
    expect(requests[0].prompt).toContain('Mention the files.')
    expect(requests[0].model).toBe('my-model')
    expect(requests[0].customInstructions).toBe('Mention the files.')
    expect(requests[0].previousSummary).toBeNull()
    // stats (F-008)
    expect(result.stats.originalTokenCount).toBe(countTokens(messages))
    expect(result.stats.compactedTokenCount).toBe(countTokens(result.messages))
    expect(result.stats.compactionRatio).toBeCloseTo(result.stats.compactedTokenCount / result.stats.originalTokenCount, 12)
    expect(result.stats.compactedMessageCount).toBe(middle.length)
    expect(result.stats.retainedMessageCount).toBe(head.length + tail.length)
    // the archive holds the middle exactly; the input was not mutated
    expect(readFileSync(result.archivePath!, 'utf8')).toBe(JSON.stringify(middle, null, 2))
    expect(JSON.stringify(messages)).toBe(snapshot)
    expect(pairingProblems(result.messages)).toEqual([])
  })

  it('force compacts below the threshold', async () => {
    const messages = longConversation(6, 20)
    const result = await compactMessages(messages, { force: true, outputDir: tempDir(), contextTokenLimit: 1000, summarizer: async () => 'S' })
    expect(result.compacted).toBe(true)
  })

  it('an empty middle is skipped with NOTHING_TO_COMPACT', async () => {
    let calls = 0
    const summarizer = async () => (calls++, 'S')
    // One message is all tail (PRD F-003).
    const single = [user(textOfTokens(1000))]
    const one = await compactMessages(single, { contextTokenLimit: 1000, outputDir: tempDir(), summarizer })
    expect(one.compacted).toBe(false)
    expect(one.messages).toBe(single)
    expect(one.error?.code).toBe('NOTHING_TO_COMPACT')
    // A tail budget that covers everything.
    const pair = [{ role: 'system', content: 's' } as Message, user(textOfTokens(500)), assistant(textOfTokens(500))]
    const both = await compactMessages(pair, { contextTokenLimit: 1000, tailRetentionRatio: 1, outputDir: tempDir(), summarizer })
    expect(both.error?.code).toBe('NOTHING_TO_COMPACT')
    expect(both.messages).toBe(pair)
    expect(calls).toBe(0)
  })

  it('retries a failing summarizer maxRetries times, then skips with the reason (F-007)', async () => {
    const messages = longConversation(10, 20)
    let calls = 0
    const result = await compactMessages(messages, {
      force: true,
      contextTokenLimit: 1000,
      outputDir: tempDir(),
      retryBaseDelayMs: 0,
      summarizer: async () => {
        calls++
        throw new Error('LLM down')
      },
    })
    expect(calls).toBe(3)
    expect(result.compacted).toBe(false)
    expect(result.messages).toBe(messages)
    expect(result.error).toMatchObject({ code: 'SUMMARIZER_ERROR', attempts: 3 })
    expect(result.error!.message).toContain('LLM down')
    expect(result.stats.originalTokenCount).toBe(0)
  })

  it('maxRetries: 0 means one attempt; a later success stops retrying', async () => {
    const messages = longConversation(10, 20)
    let calls = 0
    const once = await compactMessages(messages, { force: true, contextTokenLimit: 1000, outputDir: tempDir(), maxRetries: 0, summarizer: async () => (calls++, '') })
    expect(calls).toBe(1)
    expect(once.error?.code).toBe('EMPTY_SUMMARY')
    calls = 0
    const later = await compactMessages(messages, {
      force: true,
      contextTokenLimit: 1000,
      outputDir: tempDir(),
      retryBaseDelayMs: 0,
      summarizer: async () => (++calls < 3 ? '   ' : 'third time'),
    })
    expect(calls).toBe(3)
    expect(later.compacted).toBe(true)
    expect(later.attempts).toBe(3)
  })

  it('a summarizer resolving with a non-string is reported at once, not retried; a rejection is retried and retry events reach onEvent', async () => {
    const events: any[] = []
    const result = await compactMessages(longConversation(10, 20), {
      force: true,
      contextTokenLimit: 1000,
      outputDir: tempDir(),
      retryBaseDelayMs: 0,
      maxRetries: 1,
      onEvent: (e) => events.push(e),
      summarizer: async () => 42 as any,
    })
    expect(result.error?.code).toBe('SUMMARIZER_ERROR')
    expect(result.error?.attempts).toBe(1)
    expect(events.map((e) => e.type)).toEqual(['started', 'failed'])
    const retried: any[] = []
    const rejected = await compactMessages(longConversation(10, 20), {
      force: true,
      contextTokenLimit: 1000,
      outputDir: tempDir(),
      retryBaseDelayMs: 0,
      maxRetries: 1,
      onEvent: (e) => retried.push(e),
      summarizer: async () => Promise.reject(new Error('overloaded')),
    })
    expect(rejected.error?.code).toBe('SUMMARIZER_ERROR')
    expect(retried.filter((e) => e.type === 'retry')).toEqual([expect.objectContaining({ type: 'retry', attempt: 1 })])
    // Around it, the Pi Agent seed's lifecycle events (see seeds.test.ts).
    expect(retried.map((e) => e.type)).toEqual(['started', 'retry', 'failed'])
  })

  it('a second compaction updates the first summary (UC-002)', async () => {
    const dir = tempDir()
    let messages = longConversation(30, 40)
    const first = await compactMessages(messages, { contextTokenLimit: 3000, outputDir: dir, summarizer: async () => 'FIRST SUMMARY' })
    expect(first.compacted).toBe(true)
    messages = [...first.messages, ...longConversation(30, 40).slice(1)]
    const requests: SummaryRequest[] = []
    const second = await compactMessages(messages, {
      contextTokenLimit: 3000,
      outputDir: dir,
      summarizer: async (r) => (requests.push(r), 'SECOND SUMMARY'),
    })
    expect(second.compacted).toBe(true)
    expect(requests[0].previousSummary).toContain('FIRST SUMMARY')
    expect(requests[0].prompt).toMatch(/<previous_summary key="[0-9a-f]{16}">/)
    expect(second.summary).toContain('SECOND SUMMARY')
    expect(second.archivePath).toMatch(/compact-\d{8}T\d{6}Z-2\.json$/)
  })

  it('without a summarizer it compacts offline with the extractive summarizer', async () => {
    const result = await compactMessages(longConversation(20, 30), { force: true, outputDir: tempDir(), contextTokenLimit: 2000 })
    expect(result.provider).toBe('extractive')
    expect(result.compacted).toBe(true)
    expect(result.summary).toContain('## Goal')
    expect(result.summary).toContain('src/file0.ts')
  })

  it('output passes the pairing rules whenever the input does (property)', async () => {
    await fc.assert(
      fc.asyncProperty(conversation, fc.integer({ min: 1, max: 300 }), async (messages, limit) => {
        fc.pre(pairingProblems(messages).length === 0)
        const result = await compactMessages(messages, { force: true, contextTokenLimit: limit, outputDir: tempDir(), summarizer: async () => 'S' })
        const kept = result.messages.filter((m) => messages.includes(m))
        return pairingProblems(result.messages).length === 0 && kept.every((m, i, all) => i === 0 || messages.indexOf(m) > messages.indexOf(all[i - 1]))
      }),
      { numRuns: 60 },
    )
  })
})

describe('generateSummary and persistMessages', () => {
  it('generateSummary returns the summary (with the ledger) and throws after failed retries', async () => {
    const middle = longConversation(3, 5).slice(1)
    const summary = await generateSummary(middle, { summarizer: async () => 'S' })
    expect(summary).toMatch(/^S\n\n## Ledger/)
    await expect(generateSummary(middle, { maxRetries: 0, summarizer: async () => '' })).rejects.toMatchObject({ code: 'EMPTY_SUMMARY' })
  })

  it('persistMessages writes <outputDir>/<sessionId>/compact-<timestamp>-<n>.json', async () => {
    const dir = tempDir()
    const middle = [user('a'), assistant('b')]
    const first = await persistMessages(middle, dir, 'session-1')
    const second = await persistMessages(middle, dir, 'session-1')
    expect(first).toMatch(new RegExp(`^${dir}/session-1/compact-\\d{8}T\\d{6}Z-1\\.json$`))
    expect(second).toMatch(/-2\.json$/)
    expect(JSON.parse(readFileSync(first, 'utf8'))).toEqual(middle)
    await expect(persistMessages(middle, dir, '../etc')).rejects.toThrow(TypeError)
  })
})

describe('Compactor', () => {
  it('binds options and counts incrementally with the same results', async () => {
    const compactor = new Compactor({ contextTokenLimit: 2000, outputDir: tempDir(), summarizer: async () => 'S' })
    const messages = longConversation(5, 20)
    expect(compactor.countTokens(messages)).toBe(countTokens(messages))
    for (let i = 0; i < 20; i++) {
      messages.push(user(textOfTokens(30)))
      expect(compactor.countTokens(messages)).toBe(countTokens(messages))
      expect(compactor.shouldCompact(messages)).toBe(shouldCompact(messages, { contextTokenLimit: 2000 }))
    }
    const measure = compactor.measure(messages)
    expect(measure.threshold).toBe(1840)
    expect(measure.tokens).toBe(countTokens(messages))
    const result = await compactor.compact(messages, { force: true })
    expect(result.compacted).toBe(true)
    expect(compactor.countTokens(result.messages)).toBe(countTokens(result.messages))
  })

  it('reports invalid messages with the index in the full list', () => {
    const compactor = new Compactor()
    const messages = [user('a'), user('b')]
    compactor.countTokens(messages)
    expect(() => compactor.countTokens([...messages, { role: 'nobody', content: 'x' } as any])).toThrow(/^messages\[2\]\.role/)
  })

  it('rejects invalid options at construction', () => {
    expect(() => new Compactor({ thresholdRatio: 'high' as any })).toThrow(TypeError)
  })
})
