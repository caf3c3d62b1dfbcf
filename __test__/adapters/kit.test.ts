// The adapters' kit (adapters/kit.js): the helpers every framework adapter shares, on their own.
// The adapters' own tests cover them through each framework; these pin the boundaries.
import { createRequire } from 'node:module'

import { describe, expect, it } from 'vitest'

const require = createRequire(import.meta.url)
const kit = require('../../adapters/kit.js')

describe('sameData', () => {
  it('compares data as JSON would write it: keys in any order, undefined as no key, NaN, bytes by content', () => {
    expect(kit.sameData({ a: 1, b: [1, { c: 'x' }] }, { b: [1, { c: 'x' }], a: 1 })).toBe(true)
    expect(kit.sameData({ a: 1, b: undefined }, { a: 1 })).toBe(true)
    expect(kit.sameData({ a: 1 }, { a: 1, b: null })).toBe(false)
    expect(kit.sameData({ a: NaN }, { a: NaN })).toBe(true)
    expect(kit.sameData(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3]))).toBe(true)
    expect(kit.sameData(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4]))).toBe(false)
    expect(kit.sameData([1, 2], { 0: 1, 1: 2 })).toBe(false)
    expect(kit.sameData([1, 2], [1, 2, 3])).toBe(false)
    expect(kit.sameData('a', 'b')).toBe(false)
  })

  it('plain: objects of a class are equal only when they are the same object; otherwise by their own keys', () => {
    class Item {
      constructor(public text: string) {}
    }
    const a = new Item('x')
    expect(kit.sameData(a, new Item('x'))).toBe(true)
    expect(kit.sameData(a, new Item('x'), true)).toBe(false)
    expect(kit.sameData({ item: a }, { item: a }, true)).toBe(true)
    expect(kit.sameData(Object.assign(Object.create(null), { a: 1 }), { a: 1 }, true)).toBe(true)
  })

  it('a circle, or data deeper than its limit, is "not the same" rather than a stack overflow', () => {
    const x: any = { a: 1 }
    x.self = x
    const y: any = { a: 1 }
    y.self = y
    expect(kit.sameData(x, y)).toBe(false)
  })
})

describe('archiveSessionId', () => {
  it('keeps an id the archive accepts, and gives any other a stable digest with the prefix', () => {
    expect(kit.archiveSessionId('thread-1.a_b', 'thread')).toBe('thread-1.a_b')
    const odd = kit.archiveSessionId('user 42/chat', 'thread')
    expect(odd).toMatch(/^thread-[0-9a-f]{32}$/)
    expect(kit.archiveSessionId('user 42/chat', 'thread')).toBe(odd)
    expect(kit.archiveSessionId('user 42/chat!', 'thread')).not.toBe(odd)
    expect(kit.archiveSessionId('..', 'session')).toMatch(/^session-[0-9a-f]{32}$/)
    expect(kit.archiveSessionId('x'.repeat(129), 'session')).toMatch(/^session-/)
  })
})

describe('SessionPool', () => {
  it('opens a session once, keeps the most recently used, and drops the least recently used beyond its size', () => {
    const opened: string[] = []
    const dropped: string[] = []
    const pool = new kit.SessionPool(
      2,
      (id: string) => {
        opened.push(id)
        return { id }
      },
      (session: { id: string }) => dropped.push(session.id),
    )
    const a = pool.get('a')
    expect(pool.get('a')).toBe(a)
    pool.get('b')
    pool.get('a') // a is now the most recently used
    pool.get('c') // b goes
    expect(opened).toEqual(['a', 'b', 'c'])
    expect(dropped).toEqual(['b'])
    expect(pool.peek('b')).toBeUndefined()
    expect(pool.peek('a')).toBe(a)
    expect(pool.values().map((s: { id: string }) => s.id)).toEqual(['a', 'c'])
  })
})

describe('aiSdkUsage', () => {
  it('AI SDK 6/7: inputTokens is the total; without it the parts of inputTokenDetails add up', () => {
    expect(kit.aiSdkUsage({ usage: { inputTokens: 900, outputTokens: 50, inputTokenDetails: { cacheReadTokens: 800 } } })).toEqual({ inputTokens: 900, outputTokens: 50 })
    expect(kit.aiSdkUsage({ usage: { outputTokens: 5, inputTokenDetails: { noCacheTokens: 10, cacheReadTokens: 80, cacheWriteTokens: 3 } } })).toEqual({ inputTokens: 93, outputTokens: 5 })
  })

  it("AI SDK 5: Anthropic's raw usage with its cache; a provider that leaves the cache out of inputTokens; none", () => {
    const anthropic = { usage: { inputTokens: 10, outputTokens: 7 }, providerMetadata: { anthropic: { usage: { input_tokens: 10, cache_read_input_tokens: 900, output_tokens: 7 } } } }
    expect(kit.aiSdkUsage(anthropic)).toEqual({ input_tokens: 10, cache_read_input_tokens: 900, cache_creation_input_tokens: 0, output_tokens: 7 })
    expect(kit.aiSdkUsage({ usage: { inputTokens: 1000, cachedInputTokens: 800, outputTokens: 3 } })).toEqual({ inputTokens: 1000, outputTokens: 3 })
    expect(kit.aiSdkUsage({ usage: { inputTokens: 100, cachedInputTokens: 800, outputTokens: 3 } })).toEqual({ inputTokens: 900, outputTokens: 3 })
    expect(kit.aiSdkUsage({ usage: { inputTokens: -1 } })).toBeUndefined()
    expect(kit.aiSdkUsage({})).toBeUndefined()
    expect(kit.aiSdkUsage(null)).toBeUndefined()
  })
})

describe('options, peers, results, logging', () => {
  it('objectOptions and rejectOptions: a TypeError with the library code, naming the option', () => {
    expect(kit.objectOptions(undefined)).toEqual({})
    const error = (() => {
      try {
        kit.objectOptions([], 'options', 'thing: ')
      } catch (e) {
        return e as any
      }
    })()
    expect(error).toBeInstanceOf(TypeError)
    expect(error.code).toBe('ERR_CONTEXT_COMPACT_INVALID_ARGUMENT')
    expect(error.message).toBe('thing: options must be an object, got array')
    const say = (name: string, why: string) => `options.${name}: ${why}`
    expect(() => kit.rejectOptions({ force: true }, { force: 'no' }, say)).toThrow('options.force: no')
    expect(() => kit.rejectOptions({ force: null }, { force: 'no' }, say)).not.toThrow()
    expect(() => kit.rejectOptions({ force: null }, { force: 'no' }, say, (v: unknown) => v !== undefined)).toThrow('options.force: no')
  })

  it('requirePeer: the framework, or ERR_CONTEXT_COMPACT_MISSING_PEER saying what to install, with the cause', () => {
    expect(kit.requirePeer(() => 42, 'unused')).toBe(42)
    const cause = new Error('Cannot find module')
    let error: any
    try {
      kit.requirePeer(() => {
        throw cause
      }, 'npm install thing')
    } catch (e) {
      error = e
    }
    expect(error.code).toBe('ERR_CONTEXT_COMPACT_MISSING_PEER')
    expect(error.message).toBe('npm install thing')
    expect(error.cause).toBe(cause)
    expect(
      kit.optionalPeer(() => {
        throw cause
      }),
    ).toBeNull()
  })

  it('failedResult: the messages unchanged, the error, and only what the Compactor measured of its result', () => {
    const messages = [{ role: 'user', content: 'hi' }]
    const result = kit.failedResult(messages, { code: 'SESSION_CHANGED', message: 'changed' }, { tokens: 120, threshold: 100, attempts: 2, summary: 'S', compacted: true, archivePath: '/a' })
    expect(result.messages).toBe(messages)
    expect(result).toMatchObject({ compacted: false, summary: null, archivePath: null, tokens: 120, threshold: 100, attempts: 2, error: { code: 'SESSION_CHANGED', message: 'changed' } })
    expect(kit.failedResult(messages, { code: 'ABORTED', message: 'x', attempts: 0 }).attempts).toBe(0)
  })

  it("logger: onLog and the logger's method for the level (else its log), quiet without them, never throwing", () => {
    const entries: unknown[] = []
    const lines: string[] = []
    kit.logger({ onLog: (e: unknown) => entries.push(e), logger: { log: (m: string) => lines.push(m) } }, 'context_compact::x')('warn', 'careful')
    expect(entries).toEqual([{ level: 'warn', message: 'careful', target: 'context_compact::x' }])
    expect(lines).toEqual(['context-compact: careful'])
    expect(() => kit.logger({}, 't')('warn', 'nobody listens')).not.toThrow()
    const throwing = {
      onLog: () => {
        throw new Error('bug')
      },
    }
    expect(() => kit.logger(throwing, 't')('error', 'x')).not.toThrow()
  })
})

describe('withCompactor', () => {
  it('gives a function its last result (read live), its Compactor and a close() that is not enumerated, with its own properties before close', () => {
    let closed = 0
    const compactor = { close: () => (closed += 1) }
    let last: unknown = null
    const fn = kit.withCompactor(() => 'called', compactor, () => last, { extra: { value: 7, enumerable: true } })
    expect(fn()).toBe('called')
    expect(fn.lastResult).toBeNull()
    last = { compacted: true }
    expect(fn.lastResult).toBe(last)
    expect(fn.compactor).toBe(compactor)
    expect(Object.keys(fn)).toEqual(['lastResult', 'compactor', 'extra'])
    expect(Reflect.ownKeys(fn).filter((key) => !['length', 'name'].includes(key as string))).toEqual(['lastResult', 'compactor', 'extra', 'close'])
    fn.close()
    expect(closed).toBe(1)
    expect(() => (fn.lastResult = 1)).toThrow(TypeError)
  })
})
