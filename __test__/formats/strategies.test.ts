// Every strategy on lists in the other formats: what a strategy keeps are the caller's own
// objects, what it changes (a cleared tool result, the summary or notice) is written in the
// list's format, the result keeps the pairing rules, and restoreMessages gives back the input
// exactly, also across compactions of compactions.
import { describe, expect, it } from 'vitest'

import { checkMessages, compactMessages, countTokens, restoreMessages, type StrategyName } from '../../index'
import { tempDir, textOfTokens } from '../support/helpers'

type Item = Record<string, any>

const output = (i: number) => `output ${i}: ${textOfTokens(150)}`

// Gemini: parallel calls without ids (answered by order), thought signatures on the calls.
function gemini(turns: number): Item[] {
  const contents: Item[] = []
  for (let i = 0; i < turns; i++) {
    contents.push({ role: 'user', parts: [{ text: `step ${i}` }] })
    contents.push({
      role: 'model',
      parts: [
        { functionCall: { name: 'edit_file', args: { path: `g${i}.py` } }, thoughtSignature: `sig${i}` },
        { functionCall: { name: 'read_file', args: { path: `r${i}.py` } } },
      ],
    })
    contents.push({
      role: 'user',
      parts: [
        { functionResponse: { name: 'edit_file', response: { output: output(i) } } },
        { functionResponse: { name: 'read_file', response: { output: output(i) } } },
      ],
    })
    contents.push({ role: 'model', parts: [{ text: `done ${i}` }] })
  }
  return contents
}

// Responses: reasoning before parallel function calls, their outputs, a closing message.
function responses(turns: number): Item[] {
  const items: Item[] = [{ role: 'developer', content: 'You are a coding agent.' }]
  for (let i = 0; i < turns; i++) {
    items.push({ role: 'user', content: `step ${i}` })
    items.push({ type: 'reasoning', id: `rs_${i}`, summary: [{ type: 'summary_text', text: 'plan' }], encrypted_content: `enc${i}` })
    items.push({ type: 'function_call', call_id: `a${i}`, name: 'read_file', arguments: JSON.stringify({ path: `a${i}.ts` }) })
    items.push({ type: 'function_call', call_id: `b${i}`, name: 'read_file', arguments: JSON.stringify({ path: `b${i}.ts` }) })
    items.push({ type: 'function_call_output', call_id: `a${i}`, output: output(i) })
    items.push({ type: 'function_call_output', call_id: `b${i}`, output: output(i) })
    items.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `done ${i}`, annotations: [] }] })
  }
  return items
}

// Bedrock: every turn starts with a user text, so a summary is always followed by a user turn.
function bedrock(turns: number): Item[] {
  const messages: Item[] = []
  for (let i = 0; i < turns; i++) {
    messages.push({ role: 'user', content: [{ text: `step ${i}` }] })
    messages.push({ role: 'assistant', content: [{ toolUse: { toolUseId: `t${i}`, name: 'write_file', input: { path: `b${i}.go` } } }] })
    messages.push({ role: 'user', content: [{ toolResult: { toolUseId: `t${i}`, content: [{ text: output(i) }], status: 'success' } }] })
    messages.push({ role: 'assistant', content: [{ text: `done ${i}` }] })
  }
  return messages
}

const STRATEGIES: StrategyName[] = ['summary', 'selective', 'keep-recent', 'keep-system-and-recent', 'sliding-window']
const FORMATS: Array<[string, (turns: number) => Item[]]> = [
  ['gemini', gemini],
  ['openai-responses', responses],
  ['bedrock', bedrock],
]

// Bedrock wants user and assistant turns to alternate (Gemini's older models too).
function alternates(format: string, messages: Item[]): boolean {
  if (format === 'openai-responses') return true
  return messages.every((m, i) => i === 0 || (m.role === 'user') !== (messages[i - 1].role === 'user'))
}

describe('strategies on lists in other formats', () => {
  for (const [format, build] of FORMATS) {
    for (const strategy of STRATEGIES) {
      it(`${format}, ${strategy}: kept items are the caller's, the result is valid, restore is exact`, async () => {
        const input = build(24)
        const snapshot = JSON.stringify(input)
        const outputDir = tempDir()
        const limit = Math.floor(countTokens(input) / 0.95)
        const result = await compactMessages(input, { strategy, contextTokenLimit: limit, keepRecentMessages: 9, outputDir, sessionId: 's' })
        expect(result.compacted, JSON.stringify(result.error)).toBe(true)
        expect(JSON.stringify(input)).toBe(snapshot)
        expect(checkMessages(result.messages)).toEqual([])
        expect(alternates(format, input)).toBe(true)
        expect(alternates(format, result.messages)).toBe(true)
        // Kept items are the very objects, in order; new ones are in the list's format.
        const kept = result.messages.filter((m) => input.includes(m))
        expect(kept.map((m) => input.indexOf(m))).toEqual([...kept.map((m) => input.indexOf(m))].sort((a, b) => a - b))
        const written = result.messages.filter((m) => !input.includes(m))
        expect(written.length).toBeGreaterThan(0)
        expect(() => countTokens(written, { format: format as any })).not.toThrow()
        expect(countTokens(result.messages)).toBeLessThan(countTokens(input))
        expect(await restoreMessages(result.messages, { outputDir, sessionId: 's' })).toEqual(input)
      })
    }

    it(`${format}: three compactions in a row restore to the whole history`, async () => {
      const outputDir = tempDir()
      const history = build(36)
      let list: Item[] = history.slice(0, 12 * (history.length / 36))
      let appended = list.length
      for (let round = 0; round < 3; round++) {
        const result = await compactMessages(list, { contextTokenLimit: Math.floor(countTokens(list) / 0.95), outputDir, sessionId: 'r' })
        expect(result.compacted, JSON.stringify(result.error)).toBe(true)
        expect(checkMessages(result.messages)).toEqual([])
        const more = history.slice(appended, appended + 12 * (history.length / 36))
        appended += more.length
        list = [...result.messages, ...more]
      }
      expect(await restoreMessages(list, { outputDir, sessionId: 'r' })).toEqual(history)
    })
  }
})

describe('restore when what was kept says no format', () => {
  it('an AI SDK list whose kept turns are plain text gets its own items back', async () => {
    // Tool calls early (the list reads as AI SDK when compacted), plain chat at the end: the
    // compacted list (summary + plain messages) says no format and reads as Anthropic/OpenAI,
    // yet restore must give back the AI SDK items the archive holds.
    const input: Item[] = [{ role: 'system', content: 'You are a coding agent.' }]
    for (let i = 0; i < 12; i++) {
      input.push({ role: 'user', content: `step ${i}` })
      input.push({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: `t${i}`, toolName: 'read_file', input: { path: `f${i}.ts` } }] })
      input.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: `t${i}`, toolName: 'read_file', output: { type: 'text', value: output(i) } }] })
    }
    for (let i = 0; i < 4; i++) {
      input.push({ role: 'user', content: `question ${i}` })
      input.push({ role: 'assistant', content: `answer ${i} ${textOfTokens(40)}` })
    }
    const outputDir = tempDir()
    const result = await compactMessages(input, { contextTokenLimit: Math.floor(countTokens(input) / 0.95), tailRetentionRatio: 0.01, outputDir, sessionId: 'p' })
    expect(result.compacted, JSON.stringify(result.error)).toBe(true)
    expect(result.messages.some((m) => Array.isArray(m.content) && m.content.some((p: Item) => p.type === 'tool-call'))).toBe(false)
    expect(await restoreMessages(result.messages, { outputDir, sessionId: 'p' })).toEqual(input)
  })
})
