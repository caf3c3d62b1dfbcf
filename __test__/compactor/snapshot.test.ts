// Issue 11, "Never late" (SPEC §4.9): a Compactor's per-message cache follows messages changed
// in place, whatever the change. Every check compares the Compactor with the stateless
// functions on the very same list, after each change.
import { createRequire } from 'node:module'

import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'

import { Compactor, countTokens, measureTokens, shouldCompact, type Message } from '../../index'
import { conversation } from '../support/conversations'
import { anthropicBase, anthropicKinds, LONG, openaiBase, openaiKinds } from '../support/mutation-kinds'

type M = any // messages are edited freely here

const LIMIT = 1_000_000_000 // far away: only the trigger under test can fire

// The tool output bytes of a list, from the stateless form: the smallest `maxToolOutputBytes`
// that does not fire.
function statelessToolBytes(list: Message[]): number {
  const fires = (b: number) => measureTokens(list, { maxToolOutputBytes: b, contextTokenLimit: LIMIT }).trigger === 'tool_output'
  if (!fires(0)) return 0
  let hi = 1
  while (fires(hi)) hi *= 2
  let lo = hi >> 1 // fires(lo)
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1
    if (fires(mid)) lo = mid
    else hi = mid
  }
  return hi
}

/** The Compactor agrees with the stateless form on `list`: count, tool bytes, trigger. */
function expectAgreement(compactor: Compactor, list: Message[]) {
  const tokens = countTokens(list)
  expect(compactor.countTokens(list)).toBe(tokens)
  // The tool output total, pinned exactly: maxToolOutputBytes fires at bytes − 1, not at bytes.
  const bytes = statelessToolBytes(list)
  const at = (b: number) => compactor.measure(list, { maxToolOutputBytes: b, contextTokenLimit: LIMIT } as any).trigger
  expect(at(bytes)).toBe(null)
  if (bytes > 0) expect(at(bytes - 1)).toBe('tool_output')
  // The token trigger just below, at and above the count.
  for (const limit of [tokens - 1, tokens, tokens + 1, Math.ceil(tokens / 0.92), LIMIT]) {
    if (limit < 1) continue
    const options = { contextTokenLimit: limit }
    expect(compactor.measure(list, options as any)).toEqual(measureTokens(list, options))
    expect(compactor.shouldCompact(list, options as any)).toBe(shouldCompact(list, options))
  }
  return tokens
}

// ---------------------------------------------------------------------------------------------
// Every kind of in-place change, on the first, a middle and the last message

// The kinds: mutation-kinds.ts.

const positions = ['first', 'middle', 'last'] as const

function place(base: M[], message: M, position: (typeof positions)[number]): M[] {
  const list = base.slice()
  if (position === 'first') list.unshift(message)
  else if (position === 'middle') list.splice(list.length >> 1, 0, message)
  else list.push(message)
  return list
}

describe.each([
  ['Anthropic', anthropicBase, anthropicKinds],
  ['OpenAI', openaiBase, openaiKinds],
] as const)('%s messages changed in place', (_, base, kinds) => {
  describe.each(kinds.map((k) => [k.name, k] as const))('%s', (_name, kind) => {
    it.each(positions)('in the %s message', (position) => {
      const message = kind.make()
      const list = place(base(), message, position)
      const compactor = new Compactor({})
      const before = expectAgreement(compactor, list)
      kind.change(message)
      const after = expectAgreement(compactor, list)
      // The change is one the count sees (so the test would catch a stale cache).
      if (!kind.uncounted) expect(after).not.toBe(before)
      // Changed again, and once more after an unrelated turn: never behind.
      kind.change(message)
      expectAgreement(compactor, list)
      list.push({ role: 'user', content: 'next' })
      expectAgreement(compactor, list)
    })
  })
})

describe('Compactor cache, beyond the kinds', () => {
  it('follows a streamed reply: shouldCompact fires as soon as the appended text crosses the threshold', () => {
    const list: M[] = anthropicBase()
    const reply: M = { role: 'assistant', content: [{ type: 'text', text: '' }] }
    list.push(reply)
    const limit = countTokens(list) + 200
    const compactor = new Compactor({ contextTokenLimit: limit })
    let fired = -1
    for (let i = 0; i < 100 && fired < 0; i++) {
      reply.content[0].text += ' streaming tokens'
      const stateless = shouldCompact(list, { contextTokenLimit: limit })
      expect(compactor.shouldCompact(list)).toBe(stateless)
      expect(compactor.countTokens(list)).toBe(countTokens(list))
      if (stateless) fired = i
    }
    expect(fired).toBeGreaterThan(0)
  })

  it('the example of the issue: 602 tokens, not 2', () => {
    const m: M = { role: 'user', content: 'hi there' }
    const compactor = new Compactor({})
    expect(compactor.countTokens([m])).toBe(countTokens([m]))
    m.content += ' hello'.repeat(300)
    expect(compactor.countTokens([m])).toBe(countTokens([m]))
    expect(compactor.countTokens([m])).toBeGreaterThan(300)
  })

  it('maxToolOutputBytes set at construction follows tool results changed in place', () => {
    const result: M = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'short' }] }
    const list: M[] = [anthropicBase()[1], result]
    const options = { maxToolOutputBytes: 100, contextTokenLimit: LIMIT }
    const compactor = new Compactor(options)
    expect(compactor.shouldCompact(list)).toBe(false)
    result.content[0].content += 'x'.repeat(200)
    expect(shouldCompact(list, options)).toBe(true)
    expect(compactor.shouldCompact(list)).toBe(true)
    expect(compactor.measure(list)).toEqual(measureTokens(list, options))
    result.content[0].content = [{ type: 'text', text: 'tiny' }]
    expect(compactor.shouldCompact(list)).toBe(false)
    result.content.push({ type: 'tool_result', tool_use_id: 'toolu_2', content: '界'.repeat(40) }) // 120 UTF-8 bytes
    expect(compactor.measure(list)).toEqual(measureTokens(list, options))
    expect(compactor.shouldCompact(list)).toBe(true)
  })

  it('a Date (toJSON) changed in place is seen', () => {
    const when = new Date(0)
    const m: M = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'at' }], when }] }
    const list = [m]
    const compactor = new Compactor({})
    expectAgreement(compactor, list)
    when.setTime(Date.UTC(2026, 1, 17)) // no property changes: only toJSON() tells
    expectAgreement(compactor, list)
  })

  it('a Date read by its time value still follows what toJSON would give: invalid, subclassed, methods replaced', () => {
    // Plain Dates are compared by their time value (no string per call): anything that makes
    // toJSON give something else must still be seen.
    class Stamp extends Date {
      override toISOString() {
        return `stamp:${this.getTime()}:${label}`
      }
    }
    let label = 'a'
    const plain = new Date(0)
    const stamp = new Stamp(0)
    const own: M = new Date(0)
    const timed: M = new Date(0)
    // In a tool call's input, which is counted as the JSON the API is sent.
    const m: M = { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'schedule', input: { plain, stamp, own, timed } }] }
    const list = [{ role: 'user', content: 'when?' }, m]
    const compactor = new Compactor({})
    expectAgreement(compactor, list)
    plain.setTime(Number.NaN) // invalid: read as null
    expectAgreement(compactor, list)
    plain.setTime(Number.NaN)
    expectAgreement(compactor, list)
    label = 'a much longer label' + LONG // the subclass's toISOString, the time unchanged
    expectAgreement(compactor, list)
    own.toISOString = () => 'replaced on the instance' + LONG
    expectAgreement(compactor, list)
    timed.valueOf = () => Number.NaN // toJSON reads the time through valueOf: null now
    expectAgreement(compactor, list)
  })

  it('a toJSON that returns the counted content is followed', () => {
    let text = 'short'
    const m: M = { role: 'user', toJSON: () => ({ role: 'user', content: text }) }
    const compactor = new Compactor({})
    expectAgreement(compactor, [m])
    text += LONG
    expectAgreement(compactor, [m])
    expect(compactor.countTokens([m])).toBeGreaterThan(50)
  })

  it('an enumerable getter is read again', () => {
    let text = 'short'
    const m: M = { role: 'user' }
    Object.defineProperty(m, 'content', { enumerable: true, get: () => text })
    const compactor = new Compactor({})
    expectAgreement(compactor, [m])
    text = 'a longer text' + LONG
    expectAgreement(compactor, [m])
  })

  it('a message made unreadable after counting is reported, not served from the cache', () => {
    const m: M = { role: 'user', content: [{ type: 'text', text: 'hi' }] }
    const compactor = new Compactor({})
    expect(compactor.countTokens([m])).toBe(countTokens([m]))
    m.content[0].self = m // a cycle
    expect(() => countTokens([m])).toThrow()
    expect(() => compactor.countTokens([m])).toThrow()
    delete m.content[0].self
    expect(compactor.countTokens([m])).toBe(countTokens([m]))
    m.content[0].text = 10n // a BigInt
    expect(() => compactor.countTokens([m])).toThrow()
    Object.defineProperty(m.content[0], 'text', { enumerable: true, get: () => { throw new Error('gone') } })
    expect(() => compactor.countTokens([m])).toThrow(/gone/)
  })

  it('NaN and -0 do not defeat the cache, and are counted as the stateless form counts them', () => {
    const m: M = { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: { a: NaN, b: -0 } }] }
    const compactor = new Compactor({})
    expectAgreement(compactor, [m])
    m.content[0].input.a = 1e21
    expectAgreement(compactor, [m])
  })

  it('the same message object twice in a list', () => {
    const m: M = { role: 'user', content: 'twice' }
    const list = [m, { role: 'assistant', content: 'ok' }, m]
    const compactor = new Compactor({})
    expectAgreement(compactor, list)
    m.content += LONG
    expectAgreement(compactor, list)
  })
})

// ---------------------------------------------------------------------------------------------
// Random mutations of random conversations

type Op = { kind: string; target: number; pick: number; text: string; n: number }

const opKinds = [
  'appendString',
  'replaceString',
  'sameLengthString',
  'equalNewString',
  'setNumber',
  'toggleBoolean',
  'setNull',
  'pushClone',
  'removeElement',
  'insertClone',
  'reverseArray',
  'addKey',
  'deleteKey',
  'reorderKey',
  'replaceContent',
  'contentToBlocks',
  'pushToolCall',
  'pushMessage',
  'removeMessage',
  'replaceMessageWithClone',
  'duplicateMessage',
] as const

const opArb: fc.Arbitrary<Op> = fc.record({
  kind: fc.constantFrom(...opKinds),
  target: fc.nat(),
  pick: fc.nat(),
  text: fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('', ' more text', '你好 🎉', LONG)),
  n: fc.integer({ min: -1000, max: 1_000_000 }),
})

type Slot = { parent: any; key: string | number }

// Every (parent, key) slot of a message and every container in it.
function slotsOf(message: M): { slots: Slot[]; arrays: any[]; objects: any[] } {
  const slots: Slot[] = []
  const arrays: any[] = []
  const objects: any[] = []
  const visit = (value: any) => {
    if (value === null || typeof value !== 'object') return
    if (Array.isArray(value)) {
      arrays.push(value)
      value.forEach((item, i) => {
        slots.push({ parent: value, key: i })
        visit(item)
      })
    } else {
      objects.push(value)
      for (const key of Object.keys(value)) {
        slots.push({ parent: value, key })
        visit(value[key])
      }
    }
  }
  visit(message)
  return { slots, arrays, objects }
}

function applyOp(list: M[], op: Op) {
  if (op.kind === 'pushMessage') {
    list.push(op.n % 2 ? { role: 'user', content: op.text || 'hi' } : { role: 'assistant', content: [{ type: 'text', text: op.text || 'ok' }] })
    return
  }
  if (list.length === 0) return
  const index = op.target % list.length
  const message = list[index]
  switch (op.kind) {
    case 'removeMessage':
      list.splice(index, 1)
      return
    case 'replaceMessageWithClone':
      list[index] = structuredClone(message)
      return
    case 'duplicateMessage':
      list.push(message)
      return
    case 'replaceContent':
      message.content = op.text
      return
    case 'contentToBlocks':
      message.content = [{ type: 'text', text: typeof message.content === 'string' ? message.content + op.text : op.text }]
      return
    case 'pushToolCall':
      message.tool_calls = Array.isArray(message.tool_calls) ? message.tool_calls : []
      message.tool_calls.push({ id: `call_x${op.n}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: op.text }) } })
      return
  }
  const { slots, arrays, objects } = slotsOf(message)
  const ofType = (type: string) => slots.filter((s) => typeof s.parent[s.key] === type)
  const choose = <T>(xs: T[]): T | undefined => (xs.length === 0 ? undefined : xs[op.pick % xs.length])
  switch (op.kind) {
    case 'appendString': {
      const s = choose(ofType('string'))
      if (s) s.parent[s.key] += op.text
      return
    }
    case 'replaceString': {
      const s = choose(ofType('string'))
      if (s) s.parent[s.key] = op.text
      return
    }
    case 'sameLengthString': {
      const s = choose(ofType('string'))
      if (s) {
        const old: string = s.parent[s.key]
        s.parent[s.key] = old.length === 0 ? old : (old[old.length - 1] === 'x' ? 'y' : 'x') + old.slice(1)
      }
      return
    }
    case 'equalNewString': {
      // A different string object with the same characters: no change in count.
      const s = choose(ofType('string'))
      if (s) s.parent[s.key] = (s.parent[s.key] + '#').slice(0, -1)
      return
    }
    case 'setNumber': {
      const s = choose(ofType('number'))
      if (s) s.parent[s.key] = op.n
      return
    }
    case 'toggleBoolean': {
      const s = choose(ofType('boolean'))
      if (s) s.parent[s.key] = !s.parent[s.key]
      return
    }
    case 'setNull': {
      const s = choose(slots.filter((x) => x.key !== 'role' && x.key !== 'type'))
      if (s) s.parent[s.key] = null
      return
    }
    case 'pushClone': {
      const a = choose(arrays)
      if (a) a.push(a.length > 0 ? structuredClone(a[(op.n >>> 0) % a.length]) : { type: 'text', text: op.text })
      return
    }
    case 'insertClone': {
      const a = choose(arrays)
      if (a && a.length > 0) a.splice(op.pick % (a.length + 1), 0, structuredClone(a[(op.n >>> 0) % a.length]))
      return
    }
    case 'removeElement': {
      const a = choose(arrays)
      if (a && a.length > 0) a.splice((op.n >>> 0) % a.length, 1)
      return
    }
    case 'reverseArray': {
      choose(arrays)?.reverse()
      return
    }
    case 'addKey': {
      const o = choose(objects)
      if (o) o[`k${op.n}`] = op.text
      return
    }
    case 'deleteKey': {
      const o = choose(objects)
      const keys = o ? Object.keys(o) : []
      if (keys.length > 0) delete o[keys[(op.n >>> 0) % keys.length]]
      return
    }
    case 'reorderKey': {
      const o = choose(objects)
      const keys = o ? Object.keys(o) : []
      if (keys.length > 0) {
        const key = keys[(op.n >>> 0) % keys.length]
        const value = o[key]
        delete o[key]
        o[key] = value
      }
      return
    }
  }
}

// What a call gives: its value, or that it threw (an invalid message after a mutation).
function outcome<T>(f: () => T): { value: T } | { threw: true } {
  try {
    return { value: f() }
  } catch {
    return { threw: true }
  }
}

describe('random in-place mutations (property)', () => {
  it('compactor.countTokens / measure / shouldCompact / tool bytes equal the stateless form after every step', () => {
    fc.assert(
      fc.property(conversation, fc.array(opArb, { minLength: 1, maxLength: 25 }), fc.integer({ min: 20, max: 3000 }), fc.integer({ min: 0, max: 400 }), (messages, ops, limit, maxBytes) => {
        const list: M[] = structuredClone(messages) as M[] // fast-check's values stay as generated
        const options = { contextTokenLimit: limit, maxToolOutputBytes: maxBytes }
        const compactor = new Compactor(options)
        const step = () => {
          const expected = outcome(() => countTokens(list))
          expect(outcome(() => compactor.countTokens(list))).toEqual(expected)
          if ('threw' in expected) return
          // With the options it was made with, and with overrides.
          expect(compactor.shouldCompact(list)).toBe(shouldCompact(list, options))
          expect(compactor.measure(list)).toEqual(measureTokens(list, options))
          const bytes = statelessToolBytes(list)
          const at = (b: number) => compactor.measure(list, { maxToolOutputBytes: b, contextTokenLimit: LIMIT } as any).trigger
          expect(at(bytes)).toBe(null)
          if (bytes > 0) expect(at(bytes - 1)).toBe('tool_output')
        }
        step()
        for (const op of ops) {
          applyOp(list, op)
          step()
        }
      }),
      { numRuns: 200 },
    )
  })
})

// ---------------------------------------------------------------------------------------------
// The step on a long list (issue 39): what a step re-checks, and what it trusts by identity

describe('a long list: the step costs what was appended', () => {
  // Longer than what a step compares in full (256 messages).
  const long = (): M[] =>
    Array.from({ length: 400 }, (_, i) =>
      i % 2 === 0
        ? { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i - 1}`, content: `result ${i}: ` + 'line of output '.repeat(10) }] }
        : { role: 'assistant', content: [{ type: 'text', text: `step ${i}` }, { type: 'tool_use', id: `t${i}`, name: 'bash', input: { command: `ls ${i}` } }] },
    ).slice(1)

  it('appending, replacing an old message by another object and dropping the oldest are seen at once', () => {
    const list = long()
    const compactor = new Compactor({ contextTokenLimit: LIMIT })
    expect(compactor.countTokens(list)).toBe(countTokens(list))
    list.push({ role: 'user', content: 'and now the tests' + LONG })
    expect(compactor.measure(list)).toEqual(measureTokens(list, { contextTokenLimit: LIMIT }))
    list[10] = { ...list[10], content: [{ type: 'text', text: LONG }] }
    expect(compactor.measure(list)).toEqual(measureTokens(list, { contextTokenLimit: LIMIT }))
    const kept = list.slice(40)
    expect(compactor.measure(kept)).toEqual(measureTokens(kept, { contextTokenLimit: LIMIT }))
  })

  it('an edit in place deep in an old message: compact() and countTokens() see it at once, shouldCompact within a bounded number of steps', async () => {
    const list = long()
    const options = { contextTokenLimit: LIMIT }
    const compactor = new Compactor(options)
    compactor.shouldCompact(list)
    list[20].content[0].content += LONG
    const expected = measureTokens(list, options)
    expect(compactor.countTokens(list)).toBe(countTokens(list))
    // countTokens verified it: the next step has it too.
    expect(compactor.measure(list)).toEqual(expected)
    // Unseen until the rotation reaches it, but never more steps than the list has messages.
    list[30].content[0].content += LONG
    const after = measureTokens(list, options)
    let steps = 0
    while (compactor.measure(list).messageTokens !== after.messageTokens) {
      steps += 1
      expect(steps).toBeLessThan(list.length)
    }
    // compact() compares every message before anything else.
    list[40].content[0].content += LONG
    const result = await compactor.compact(list)
    expect(result.compacted).toBe(false)
    expect(compactor.measure(list)).toEqual(measureTokens(list, options))
  })

  it('changed(message): the next step reads it again', () => {
    const list = long()
    const options = { contextTokenLimit: LIMIT }
    const compactor = new Compactor(options)
    compactor.shouldCompact(list)
    list[50].content[1].input.command += LONG
    list[60].content[0].content = 'x'
    compactor.changed([list[50], list[60]])
    expect(compactor.measure(list)).toEqual(measureTokens(list, options))
    list[70].content[0].text += LONG
    compactor.changed(list[70])
    expect(compactor.measure(list)).toEqual(measureTokens(list, options))
    expect(() => compactor.changed([null, 'text'] as any)).not.toThrow()
  })
})

describe('a list rebuilt as new objects (a state read back from a store)', () => {
  it('equal copies take over the counts; a copy that differs is counted again', () => {
    const options = { contextTokenLimit: LIMIT, maxToolOutputBytes: 1_000_000 }
    const compactor = new Compactor(options)
    let list: M[] = [...anthropicBase(), ...anthropicBase()]
    expect(compactor.measure(list)).toEqual(measureTokens(list, options))
    list = structuredClone(list)
    expect(compactor.measure(list)).toEqual(measureTokens(list, options))
    list = structuredClone(list)
    list[3].content[1].text += LONG
    list[4].content[0].content[0].text += LONG
    expect(compactor.measure(list)).toEqual(measureTokens(list, options))
    expect(compactor.countTokens(list)).toBe(countTokens(list))
    list = structuredClone(list)
    list.splice(2, 1)
    expect(compactor.countTokens(list)).toBe(countTokens(list))
  })

  it('a whole list rebuilt (its first message a new object too) is compared position for position: only what differs is counted', () => {
    const native = createRequire(import.meta.url)('../../lib/addon/native.js')
    const options = { contextTokenLimit: LIMIT }
    const compactor = new Compactor(options)
    let list: M[] = [...anthropicBase(), ...anthropicBase(), ...anthropicBase()]
    compactor.measure(list)
    const counted = vi.spyOn(native, 'countItemsJson')
    try {
      list = structuredClone(list)
      expect(compactor.measure(list)).toEqual(measureTokens(list, options))
      expect(counted).not.toHaveBeenCalled()
      list = structuredClone(list)
      list[5].content[0].text += LONG
      expect(compactor.measure(list)).toEqual(measureTokens(list, options))
      expect(counted).toHaveBeenCalledTimes(1)
      expect(counted.mock.calls[0][0]).toEqual([list[5]])
    } finally {
      counted.mockRestore()
    }
  })
})

describe('LangChain instances: compared by the fields their toJSON reads', () => {
  const lc = createRequire(import.meta.url)('@langchain/core/messages')
  const { Serializable } = createRequire(import.meta.url)('@langchain/core/load/serializable')
  const history = (): M[] => [
    new lc.HumanMessage({ content: [{ type: 'text', text: 'Fix the build.' }], id: 'u1' }),
    new lc.AIMessage({ content: 'Reading.', tool_calls: [{ name: 'read_file', args: { path: 'a.ts' }, id: 'c1', type: 'tool_call' }], id: 'a1' }),
    new lc.ToolMessage({ content: 'contents of a.ts', tool_call_id: 'c1', id: 't1' }),
  ]
  const changes: Array<[string, (list: M[]) => void]> = [
    ['a field reassigned on the instance', (list) => (list[2].content += LONG)],
    ['lc_kwargs reassigned alone (toJSON reads the instance: no change)', (list) => (list[2].lc_kwargs = { ...list[2].lc_kwargs, content: LONG })],
    ['a key added to lc_kwargs', (list) => (list[0].lc_kwargs.note = LONG)],
    ['a tool call edited in place', (list) => (list[1].tool_calls[0].args.path = LONG)],
    ['text pushed into a content array', (list) => list[0].content.push({ type: 'text', text: LONG })],
    ['a value toJSON escapes', (list) => (list[0].additional_kwargs.note = { lc: 1, type: 'secret', id: [LONG] })],
  ]
  it.each(changes)('%s: the next step counts what toJSON gives, counting again only what it changed', (label, change) => {
    const native = createRequire(import.meta.url)('../../lib/addon/native.js')
    const list = history()
    const options = { contextTokenLimit: LIMIT }
    const compactor = new Compactor(options)
    compactor.measure(list)
    const before = list.map((m) => JSON.stringify(m))
    change(list)
    const changed = list.filter((m, i) => JSON.stringify(m) !== before[i])
    expect(changed.length).toBe(label.includes('no change') ? 0 : 1)
    const counted = vi.spyOn(native, 'countItemsJson')
    try {
      expect(compactor.measure(list)).toEqual(measureTokens(list, options))
      expect(counted.mock.calls.flatMap((call) => call[0])).toEqual(changed)
    } finally {
      counted.mockRestore()
    }
  })

  it('a class with lc_attributes (written over the fields by toJSON) is read through toJSON', () => {
    const native = createRequire(import.meta.url)('../../lib/addon/native.js')
    const Tagged = class HumanMessage extends lc.HumanMessage {
      tag = 'a'

      get lc_attributes() {
        return { tag: this.tag }
      }
    }
    const list: M[] = [...history(), new Tagged({ content: 'tagged', id: 'g1' })]
    const compactor = new Compactor({ contextTokenLimit: LIMIT })
    compactor.measure(list)
    list[3].tag = LONG
    const counted = vi.spyOn(native, 'countItemsJson')
    try {
      compactor.measure(list)
      expect(counted.mock.calls.flatMap((call) => call[0])).toEqual([list[3]])
    } finally {
      counted.mockRestore()
    }
  })

  it('a class with its own toJSON is read through it', () => {
    let suffix = ''
    // Named as LangChain's class (the addon reads the class name), with a toJSON of its own.
    const Noted = class HumanMessage extends lc.HumanMessage {
      toJSON() {
        const json = super.toJSON()
        return { ...json, kwargs: { ...json.kwargs, content: json.kwargs.content + suffix } }
      }
    }
    const list: M[] = [...history(), new Noted({ content: 'note', id: 'n1' })]
    const options = { contextTokenLimit: LIMIT }
    const compactor = new Compactor(options)
    compactor.measure(list)
    suffix = LONG
    expect(compactor.measure(list)).toEqual(measureTokens(list, options))
  })
})

describe('system and tools: counted once, never stale', () => {
  it('two compactors with different system prompts and tools, called in turn, each measure their own', () => {
    const list: M[] = anthropicBase()
    const a = { contextTokenLimit: LIMIT, system: 'You are a careful coding agent. '.repeat(50) }
    const b = { contextTokenLimit: LIMIT, system: 'Be brief.', tools: [{ name: 'bash', description: 'Runs a command. '.repeat(20), input_schema: { type: 'object' } }] }
    const first = new Compactor(a)
    const second = new Compactor(b)
    for (let i = 0; i < 3; i++) {
      expect(first.measure(list)).toEqual(measureTokens(list, a))
      expect(second.measure(list)).toEqual(measureTokens(list, b))
      expect(measureTokens(list, { contextTokenLimit: LIMIT }).tokens).toBeLessThan(first.measure(list).tokens)
      list.push({ role: 'user', content: `turn ${i}` })
    }
  })
})
