// LangChain's message forms (lib/messages/langchain-forms.js): the one place that reads and makes them,
// for a compaction's result (lib/messages/result.js) and the LangChain adapter (adapters/langchain/).
import { createRequire } from 'node:module'

import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage } from '@langchain/core/messages'
import { describe, expect, it } from 'vitest'

const require = createRequire(import.meta.url)
const forms = require('../../lib/messages/langchain-forms.js')

const serialized = (name: string, kwargs: Record<string, unknown>) => ({ lc: 1, type: 'constructor', id: ['langchain_core', 'messages', name], kwargs })

describe('the forms of a LangChain message', () => {
  it('tells an instance from its serialized and stored forms', () => {
    const human = new HumanMessage({ content: 'hi', id: 'h1' })
    expect(forms.isMessageInstance(human)).toBe(true)
    expect(forms.isSerializedMessage(human)).toBe(false)
    const json = JSON.parse(JSON.stringify(human))
    expect(forms.isSerializedMessage(json)).toBe(true)
    expect(forms.isMessageInstance(json)).toBe(false)
    expect(forms.serializedClassName(json)).toBe('HumanMessage')
    // Not the serialized form without its id path or kwargs.
    expect(forms.isSerializedMessage({ lc: 1, type: 'constructor', kwargs: {} })).toBe(false)
    expect(forms.isSerializedMessage({ lc: 1, type: 'constructor', id: ['HumanMessage'], kwargs: null })).toBe(false)
    expect(forms.isSerializedMessage({ type: 'human', data: { content: 'hi' } })).toBe(false)
    expect(forms.isSerializedMessage(null)).toBe(false)
  })

  it("finds a list's message classes by name, the first of each, and none of plain objects", () => {
    const list = [new HumanMessage('a'), { role: 'user', content: 'b' }, new AIMessageChunk('c'), new HumanMessage('d'), null]
    const classes = forms.messageClassesOf(list)
    expect([...classes.keys()]).toEqual(['HumanMessage', 'AIMessageChunk'])
    expect(classes.get('HumanMessage')).toBe(HumanMessage)
    expect(forms.messageClassesOf([{ type: 'human', data: { content: 'x' } }]).size).toBe(0)
  })

  it('makes a written message in the form the list holds: an instance, the stored form, or as it is', () => {
    // A new one each time: LangChain's constructors add fields to the object they are given.
    const written = () => serialized('ToolMessage', { content: 'short', tool_call_id: 'c1' })

    const asInstance = forms.formOfList([new AIMessage('x')])(written())
    expect(asInstance).toBeInstanceOf(ToolMessage)
    expect(asInstance.content).toBe('short')
    expect(asInstance.tool_call_id).toBe('c1')

    // The list's own class for the name comes first (the caller's copy of @langchain/core).
    class OwnHuman {
      static lc_name() {
        return 'HumanMessage'
      }
      constructor(public fields: unknown) {}
    }
    const own = forms.formOfList([new OwnHuman({ content: 'q' })])(serialized('HumanMessage', { content: 'summary' }))
    expect(own).toBeInstanceOf(OwnHuman)
    expect(own.fields).toEqual({ content: 'summary' })

    const stored = forms.formOfList([{ type: 'human', data: { content: 'q' } }])
    const tool = written()
    expect(stored(tool)).toEqual({ type: 'tool', data: { content: 'short', tool_call_id: 'c1' } })
    expect(stored(tool).data).not.toBe(tool.kwargs)
    expect(stored(serialized('ChatMessage', { content: 'x', role: 'r' }))).toEqual({ type: 'human', data: { content: 'x', role: 'r' } })
    expect(forms.storedForm(serialized('AIMessage', { content: 'a' }))).toEqual({ type: 'ai', data: { content: 'a' } })

    const asIs = forms.formOfList([serialized('HumanMessage', { content: 'q' })])
    const tool2 = written()
    expect(asIs(tool2)).toBe(tool2)
  })
})
