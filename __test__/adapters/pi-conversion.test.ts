// context-compact/pi's step conversion (adapters/pi/messages.js): a request reuses the conversion of
// the messages unchanged since the last one and builds the Anthropic list again only from where
// the transcript changed. Whatever happens to the transcript between requests (replies and tool
// results appended, system messages, an app's own messages, messages edited, replaced, removed,
// the oldest dropped), the list is the one a conversion from scratch gives.
import { createRequire } from 'node:module'

import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

type Json = Record<string, any>

const require = createRequire(import.meta.url)
const { PiConversion, toAnthropic } = require('../../adapters/pi/messages.js') as {
  PiConversion: new (tools?: unknown) => {
    convert(messages: Json[], exact: boolean): { entries: Json[]; anthropic: Json[]; systems: Array<{ index: number }> }
    layout(messages: Json[], entries: Json[]): { anthropic: Json[]; sources: Json[][] }
    callOf(messages: Json[], systems: Array<{ index: number }>, overrides: Json): Json
  }
  toAnthropic: (messages: Json[]) => { anthropic: Json[]; sources: Json[][] }
}

let ids = 0
const text = (words: string) => [{ type: 'text', text: words }]
const kinds = {
  user: () => ({ role: 'user', content: `Question ${ids++}`, timestamp: ids }),
  userBlocks: () => ({ role: 'user', content: text(`Look at this ${ids++}`), timestamp: ids }),
  reply: () => ({ role: 'assistant', content: text(`Answer ${ids++}`), api: 'anthropic-messages', provider: 'anthropic', model: 'm', usage: { input: 10, output: 2, cacheRead: 0, cacheWrite: 0 }, stopReason: 'stop', timestamp: ids }),
  call: () => ({ role: 'assistant', content: [{ type: 'toolCall', id: `t${ids}`, name: 'read', arguments: { path: `f${ids++}.ts` } }], api: 'a', provider: 'p', model: 'm', stopReason: 'toolUse', timestamp: ids }),
  result: () => ({ role: 'toolResult', toolCallId: `t${ids}`, toolName: 'read', content: text(`contents ${ids++}`), isError: ids % 5 === 0, timestamp: ids }),
  failedReply: () => ({ role: 'assistant', content: [], api: 'a', provider: 'p', model: 'm', stopReason: 'error', timestamp: ids++ }),
  system: () => ({ role: 'system', content: `System ${ids++}`, toolsAdded: [{ name: `tool${ids}`, description: 'a tool', parameters: { type: 'object', properties: {} } }] }),
  own: () => ({ role: 'notification', text: `An app's own message ${ids++}` }),
}
type Kind = keyof typeof kinds
const kind = fc.constantFrom(...(Object.keys(kinds) as Kind[]))

// What happens to the transcript between two requests.
const change = fc.oneof(
  fc.record({ op: fc.constant('append' as const), kinds: fc.array(kind, { minLength: 1, maxLength: 6 }) }),
  fc.record({ op: fc.constant('edit' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('replace' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('remove' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('dropOldest' as const), count: fc.integer({ min: 1, max: 3 }) }),
)

describe('context-compact/pi: the step conversion', () => {
  it('is the list a conversion from scratch gives, after any changes; unchanged messages keep their objects', () => {
    fc.assert(
      fc.property(fc.array(kind, { minLength: 0, maxLength: 30 }), fc.array(change, { minLength: 1, maxLength: 25 }), (start, changes) => {
        const conversion = new PiConversion()
        const list: Json[] = start.map((k) => kinds[k]())
        let before = conversion.convert(list, false).anthropic
        expect(before).toEqual(toAnthropic(list).anthropic)
        for (const c of changes) {
          // An edit in place is found by a step only where it looks (the tail, the rotation):
          // a request after one compares every message, as a compaction does.
          let exact = false
          if (c.op === 'append') for (const k of c.kinds) list.push(kinds[k]())
          else if (list.length === 0) continue
          else if (c.op === 'edit') {
            const m = list[c.at % list.length]
            if (typeof m.content === 'string') m.content += ' edited'
            else if (Array.isArray(m.content)) m.content.push({ type: 'text', text: 'edited' })
            else m.text += ' edited'
            exact = true
          } else if (c.op === 'replace') list[c.at % list.length] = structuredClone(list[c.at % list.length])
          else if (c.op === 'remove') list.splice(c.at % list.length, 1)
          else list.splice(0, c.count)
          const step = conversion.convert(list, exact)
          const fresh = toAnthropic(list)
          expect(step.anthropic).toEqual(fresh.anthropic)
          // Where each message came from, on the step's own objects.
          const layout = conversion.layout(list, step.entries)
          expect(layout.anthropic.length).toBe(step.anthropic.length)
          layout.anthropic.forEach((m, i) => expect(m).toBe(step.anthropic[i]))
          expect(layout.sources).toEqual(fresh.sources)
          expect(step.systems.map((s) => s.index)).toEqual(list.flatMap((m, i) => (m.role === 'system' ? [i] : [])))
          // Appending keeps every message but the last of the list before (a group of tool
          // results it ends with may have grown) as the very same objects.
          if (c.op === 'append') for (let i = 0; i < before.length - 1; i++) expect(step.anthropic[i]).toBe(before[i])
          before = step.anthropic
        }
      }),
      { numRuns: 300 },
    )
  })

  it('replays the system prompt and tools only when a system message or the context tools change', () => {
    const conversion = new PiConversion()
    const list: Json[] = [kinds.system(), kinds.user(), kinds.call(), kinds.result()]
    let step = conversion.convert(list, false)
    const first = conversion.callOf(list, step.systems, { contextTools: undefined })
    expect(first.system).toBe(list[0].content)
    expect(first.tools.map((t: Json) => t.name)).toEqual([list[0].toolsAdded[0].name])
    list.push(kinds.reply(), kinds.user())
    step = conversion.convert(list, false)
    const second = conversion.callOf(list, step.systems, { contextTools: undefined })
    expect(second.tools).toBe(first.tools) // the same definitions: counted once
    const added = kinds.system()
    list.push(added)
    step = conversion.convert(list, false)
    const third = conversion.callOf(list, step.systems, { contextTools: undefined, signal: undefined })
    expect(third.system).toBe(`${list[0].content}\n\n${added.content}`)
    expect(third.tools.map((t: Json) => t.name)).toEqual([list[0].toolsAdded[0].name, added.toolsAdded[0].name])
    expect('contextTools' in third).toBe(false)
  })
})
