// Message formats (SPEC "Message formats"): the same guarantees in every format the library
// reads — OpenAI Responses items, AI SDK ModelMessages, Gemini contents, Bedrock Converse and
// LangChain messages, with Anthropic and OpenAI Chat as controls. Property tests over
// generated valid conversations (format-conversations.ts): identity and order of kept items,
// pairing by each API's own rule (checked independently of the library), exact restore across
// successive compactions, the summary in the list's format, counting against the same content
// in Anthropic form, and validation errors that name the item and field.

import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

import { checkMessages, compactMessages, countTokens, partitionMessages, restoreMessages } from '../../index'
import {
  checkers,
  type Conversation,
  conversationArb,
  extend,
  FORMATS,
  type FormatName,
  PNG_BASE64,
  render,
  substantialArb,
  textOf,
  VIEW_FORMATS,
} from '../support/format-conversations'
import { tempDir, textOfTokens } from '../support/helpers'

type Msg = any
// `format` is the option under test; the published types may not list it yet.
const withFormat = (format: FormatName, options: Record<string, unknown> = {}): any => ({ format, ...options })

const SUMMARY_PREFIX = '[context-compact]'
const isSummary = (m: Msg) => textOf(m).startsWith(SUMMARY_PREFIX) && textOf(m) !== SUMMARY_ACK
// Bedrock and Gemini refuse two user turns in a row; after a summary followed by a kept user
// turn the library writes this model turn.
const SUMMARY_ACK = '[context-compact] Understood; continuing from the summary.'
const ACKS: Partial<Record<FormatName, Msg>> = {
  bedrock: { role: 'assistant', content: [{ text: SUMMARY_ACK }] },
  gemini: { role: 'model', parts: [{ text: SUMMARY_ACK }] },
}

// A failing async property shrinks for minutes (each step compacts); FORMATS_SHRINK=1 shrinks.
fc.configureGlobal({ endOnFailure: !process.env.FORMATS_SHRINK })

// Small run counts: every run compacts and restores through the archive on disk.
const RUNS = Number(process.env.FORMATS_RUNS ?? 8)

/** Compaction options that always compact, with the offline extractive summarizer. */
function compactOptions(format: FormatName, list: Msg[], dir: string, sessionId: string, tailRatio = 0.3) {
  return withFormat(format, {
    contextTokenLimit: Math.max(400, countTokens(list, withFormat(format))),
    tailRetentionRatio: tailRatio,
    force: true,
    provider: 'extractive',
    // Kept turns stay byte-identical: the thinking policy and the fit step's shortening of
    // tool outputs (when summary plus tail are over the limit) are tested on their own below.
    thinking: 'keep',
    offload: 'off',
    outputDir: dir,
    sessionId,
  })
}

/**
 * Index pairs of the input that must stay together (same side of any cut): a call and its
 * result, an approval request and its response, a Responses reasoning item and the item after
 * it. Read from each API's fields, not from the library.
 */
function links(list: Msg[], format: FormatName): Array<[number, number]> {
  const out: Array<[number, number]> = []
  const callAt = new Map<string, number>()
  const pair = (id: string, at: number) => {
    const from = callAt.get(id)
    if (from !== undefined) out.push([from, at])
  }
  list.forEach((m, i) => {
    switch (format) {
      case 'anthropic':
        for (const b of Array.isArray(m.content) ? m.content : []) {
          if (b.type === 'tool_use') callAt.set(b.id, i)
          if (b.type === 'tool_result') pair(b.tool_use_id, i)
        }
        break
      case 'openai':
        for (const t of m.tool_calls ?? []) callAt.set(t.id, i)
        if (m.role === 'tool') pair(m.tool_call_id, i)
        break
      case 'openai-responses':
        if (m.type === 'reasoning') out.push([i, i + 1])
        if (m.type === 'function_call') callAt.set(m.call_id, i)
        if (m.type === 'function_call_output') pair(m.call_id, i)
        break
      case 'ai-sdk':
        for (const p of Array.isArray(m.content) ? m.content : []) {
          if (p.type === 'tool-call') callAt.set(p.toolCallId, i)
          if (p.type === 'tool-approval-request') callAt.set(p.approvalId, i)
          if (p.type === 'tool-result') pair(p.toolCallId, i)
          if (p.type === 'tool-approval-response') pair(p.approvalId, i)
        }
        break
      case 'gemini':
        // Responses without ids answer the turn before by order: the whole turns are linked.
        if (m.parts.some((p: Msg) => p.functionResponse)) out.push([i - 1, i])
        break
      case 'bedrock':
        for (const b of m.content) {
          if (b.toolUse) callAt.set(b.toolUse.toolUseId, i)
          if (b.toolResult) pair(b.toolResult.toolUseId, i)
        }
        break
      case 'langchain': {
        const f = m.lc === 1 ? m.kwargs : m.data
        for (const t of f.tool_calls ?? []) callAt.set(t.id, i)
        if (f.tool_call_id) pair(f.tool_call_id, i)
        break
      }
    }
  })
  return out
}

/** The summary as each format writes a user message of text. */
function expectSummaryShape(format: FormatName, summary: Msg, conversation: Conversation) {
  const text = expect.stringMatching(/^\[context-compact\]/)
  switch (format) {
    case 'anthropic':
    case 'openai':
    case 'ai-sdk':
      expect(summary).toEqual({ role: 'user', content: text })
      break
    case 'openai-responses':
      expect(summary).toEqual({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] })
      break
    case 'gemini':
      expect(summary).toEqual({ role: 'user', parts: [{ text }] })
      break
    case 'bedrock':
      expect(summary).toEqual({ role: 'user', content: [{ text }] })
      break
    case 'langchain':
      if (conversation.langchainForm === 'serialized') {
        expect(summary).toMatchObject({ lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'HumanMessage'], kwargs: { content: text } })
      } else {
        expect(summary).toMatchObject({ type: 'human', data: { content: text } })
      }
      break
  }
}

describe.each(FORMATS)('%s', (format) => {
  it('partitionMessages: every item once, as the same object, and no call, approval or reasoning split from its partner', () => {
    fc.assert(
      fc.property(conversationArb(), fc.double({ min: 0, max: 1, noNaN: true }), (conversation, tailShare) => {
        const list = render(conversation, format)
        const tailTokens = Math.floor(countTokens(list, withFormat(format)) * tailShare)
        const { head, middle, tail } = partitionMessages(list, tailTokens, withFormat(format))
        const all = [...head, ...middle, ...tail]
        expect(all).toHaveLength(list.length)
        all.forEach((m, i) => expect(m).toBe(list[i]))
        const section = (i: number) => (i < head.length ? 0 : i < head.length + middle.length ? 1 : 2)
        for (const [a, b] of links(list, format)) {
          expect(section(a), `items ${a} and ${b} belong together`).toBe(section(b))
        }
      }),
      { numRuns: RUNS * 4 },
    )
  })

  it('compactMessages: kept items are the same objects in order, pairing stays valid, the summary is in the format, restore is exact', async () => {
    const dir = tempDir()
    let run = 0
    let notSmaller = 0
    await fc.assert(
      fc.asyncProperty(substantialArb(4, 7, 3), fc.double({ min: 0.1, max: 0.5, noNaN: true }), async (conversation, tailRatio) => {
        const list = render(conversation, format)
        // The generator's conversations are valid to begin with, by both checks.
        expect(checkMessages(list, withFormat(format))).toEqual([])
        expect(checkers[format](list, list)).toEqual([])
        const snapshot = structuredClone(list)
        const sessionId = `${format}-${run++}`
        const result = await compactMessages(list, compactOptions(format, list, dir, sessionId, tailRatio))
        // A summary longer than the short middle it would replace is refused (and nothing may be
        // shortened here): the input comes back as it is, and the run says nothing more.
        if (result.error?.code === 'NOT_SMALLER') {
          expect(result.messages).toBe(list)
          notSmaller++
          fc.pre(false)
        }
        expect(result.compacted, JSON.stringify(result.error)).toBe(true)
        expect(list, 'the input is not mutated').toEqual(snapshot)

        // Kept items: the caller's very objects, a prefix (head) then a suffix (tail) of the input.
        const kept = result.messages.filter((m: Msg) => list.includes(m))
        const written = result.messages.filter((m: Msg) => !list.includes(m))
        const positions = kept.map((m: Msg) => list.indexOf(m))
        const headLength = positions.findIndex((p: number, k: number) => p !== k)
        const head = headLength < 0 ? positions.length : headLength
        positions.slice(head).forEach((p: number, k: number, tail: number[]) => expect(p).toBe(list.length - tail.length + k))
        expect(new Set(kept).size).toBe(kept.length)

        // What the library wrote: the summary (and, where roles alternate, the model turn after
        // it when a user turn follows), each starting with the marker.
        for (const m of written) expect(textOf(m).startsWith(SUMMARY_PREFIX), JSON.stringify(m).slice(0, 200)).toBe(true)
        const summaries = written.filter(isSummary)
        expect(summaries).toHaveLength(1)
        const others = written.filter((m: Msg) => !isSummary(m))
        if (ACKS[format] && others.length > 0) {
          expect(others).toEqual([ACKS[format]])
          expect(result.messages.indexOf(others[0])).toBe(result.messages.indexOf(summaries[0]) + 1)
        } else {
          expect(others).toEqual([])
        }
        expectSummaryShape(format, summaries[0], conversation)
        // The summary reads as the list's format: detection over the whole result agrees.
        expect(countTokens(result.messages)).toBe(countTokens(result.messages, withFormat(format)))
        expect(countTokens([summaries[0]], withFormat(format))).toBeGreaterThan(0)

        expect(checkMessages(result.messages, withFormat(format))).toEqual([])
        expect(checkers[format](result.messages, list)).toEqual([])

        const restored = await restoreMessages(result.messages, { outputDir: dir, sessionId })
        expect(restored).toEqual(list)
        expect(JSON.stringify(restored)).toBe(JSON.stringify(list))
      }),
      { numRuns: RUNS },
    )
    // The refusals are the exception, not what the property ran on.
    expect(notSmaller).toBeLessThan(run / 2)
  })

  it('three successive compactions with turns appended between them restore the whole history', async () => {
    const dir = tempDir()
    let run = 0
    await fc.assert(
      fc.asyncProperty(
        substantialArb(4, 5, 3),
        fc.array(substantialArb(2, 3, 2), { minLength: 2, maxLength: 2 }),
        async (first, later) => {
          const sessionId = `${format}-rounds-${run++}`
          let history = first
          let messages: Msg[] = render(history, format)
          for (let round = 0; round < 3; round++) {
            if (round > 0) {
              // The agent keeps going: new turns after what it holds now.
              const next = extend(history, later[round - 1], round)
              const appended = render(next, format).slice(render(history, format).length)
              history = next
              messages = [...messages, ...appended]
            }
            const result = await compactMessages(messages, compactOptions(format, messages, dir, sessionId))
            expect(result.compacted, JSON.stringify(result.error)).toBe(true)
            expect(checkers[format](result.messages)).toEqual([])
            messages = result.messages
          }
          const restored = await restoreMessages(messages, { outputDir: dir, sessionId })
          expect(restored).toEqual(render(history, format))
        },
      ),
      { numRuns: Math.max(2, RUNS / 2) },
    )
  })
})

describe('counting: each format against the same content in Anthropic form', () => {
  // Measured over 200 generated conversations (seed 1): the structural fields of every format
  // (item types, role names, ids, `parts` vs `content`, the extra `function_call` items of a
  // Responses turn) cost nothing; counts differ only where a format carries content the other
  // does not:
  // - Responses: a reasoning item's `encrypted_content` is counted like Anthropic
  //   `redacted_thinking` data (a thinking `signature` is not billed);
  // - Gemini: an error `functionResponse` is its `response` JSON (`{"error": …}`), not bare text;
  // - OpenAI Chat and LangChain have no reasoning field (compared without reasoning);
  // - OpenAI images (Chat `image_url`, Responses `input_image`) are counted by OpenAI's tile
  //   rule, not Anthropic's pixel rule (compared without images; see the image case below).
  // The properties below say exactly that: equal, up to those named contents.
  function anthropicCount(c: Conversation) {
    return countTokens(render(c, 'anthropic'))
  }
  /** The conversation as `format` can say it (what Anthropic form is compared with). */
  function comparable(c: Conversation, format: FormatName): Conversation {
    const noReasoning = format === 'openai' || format === 'langchain'
    const turn = (t: Msg) =>
      t && {
        ...t,
        reasoning: noReasoning ? null : t.reasoning,
        // A denied AI SDK approval has no output, only the denial.
        calls: t.calls.map((k: Msg) => (format === 'ai-sdk' && k.approval && k.isError ? { ...k, output: 'execution denied: user said no' } : k)),
      }
    return {
      ...c,
      // Gemini and Bedrock take the system prompt as a request field, not in the list.
      system: format === 'gemini' || format === 'bedrock' ? null : c.system,
      // OpenAI bills images by its tile rule (Chat `image_url`, Responses `input_image`).
      episodes: c.episodes.map((e) => ({ ...e, image: format === 'openai' || format === 'openai-responses' ? false : e.image, steps: e.steps.map(turn), answer: turn(e.answer) })),
    }
  }
  const turns = (c: Conversation) => c.episodes.flatMap((e) => [...e.steps, ...(e.answer ? [e.answer] : [])])

  it.each(['openai', 'ai-sdk', 'bedrock', 'langchain'] as const)('%s counts exactly as Anthropic', (format) => {
    fc.assert(
      fc.property(conversationArb(), (raw) => {
        const c = comparable(raw, format)
        expect(countTokens(render(c, format), withFormat(format))).toBe(anthropicCount(c))
      }),
      { numRuns: 40 },
    )
  })

  it('openai-responses counts as Anthropic plus the encrypted reasoning it carries', () => {
    fc.assert(
      fc.property(conversationArb(), (raw) => {
        const c = comparable(raw, 'openai-responses')
        const list = render(c, 'openai-responses')
        const encrypted = list
          .filter((m: Msg) => m.type === 'reasoning')
          .reduce((sum: number, m: Msg) => sum + countTokens([{ role: 'assistant', content: [{ type: 'redacted_thinking', data: m.encrypted_content }] }] as Msg), 0)
        expect(countTokens(list, withFormat('openai-responses'))).toBe(anthropicCount(c) + encrypted)
        // With no reasoning at all the counts are equal: a turn split into several items costs nothing.
        const plain = { ...c, episodes: c.episodes.map((e) => ({ ...e, steps: e.steps.map((s) => ({ ...s, reasoning: null })), answer: e.answer && { ...e.answer, reasoning: null } })) }
        expect(countTokens(render(plain, 'openai-responses'))).toBe(anthropicCount(plain))
      }),
      { numRuns: 40 },
    )
  })

  it('an OpenAI Responses input_image counts as the OpenAI Chat image_url it is billed like', () => {
    for (const detail of ['auto', 'low', 'high']) {
      const url = `data:image/png;base64,${PNG_BASE64}`
      const responses = countTokens([{ type: 'message', role: 'user', content: [{ type: 'input_image', image_url: url, detail }] }] as Msg)
      const chat = countTokens([{ role: 'user', content: [{ type: 'image_url', image_url: { url, detail } }] }] as Msg)
      expect(responses).toBe(chat)
    }
    // A computer call's screenshot is such an image too.
    const url = `data:image/png;base64,${PNG_BASE64}`
    const screenshot = countTokens([
      { type: 'computer_call', call_id: 'cc', action: { type: 'screenshot' } },
      { type: 'computer_call_output', call_id: 'cc', output: { type: 'computer_screenshot', image_url: url } },
    ] as Msg)
    const call = countTokens([{ type: 'computer_call', call_id: 'cc', action: { type: 'screenshot' } }] as Msg)
    expect(screenshot - call).toBe(countTokens([{ role: 'user', content: [{ type: 'image_url', image_url: { url, detail: 'auto' } }] }] as Msg))
  })

  it('gemini counts as Anthropic plus the JSON around error responses', () => {
    fc.assert(
      fc.property(conversationArb(), (raw) => {
        const c = comparable(raw, 'gemini')
        const errors = turns(c).flatMap((t) => t.calls.filter((k) => k.isError))
        const wrapping = errors.reduce(
          (sum, k) => sum + countTokens([{ role: 'user', content: JSON.stringify({ error: k.output }) }]) - countTokens([{ role: 'user', content: k.output }]),
          0,
        )
        expect(countTokens(render(c, 'gemini'), withFormat('gemini'))).toBe(anthropicCount(c) + wrapping)
      }),
      { numRuns: 40 },
    )
  })
})

describe('the pairing checkers themselves catch broken lists', () => {
  // Each checker must be able to fail: drop the first item that answers a call, or (Responses)
  // move a reasoning item away from the call it preceded.
  const answers = (m: Msg) =>
    m.type === 'function_call_output' ||
    m.role === 'tool' ||
    m.parts?.some((p: Msg) => p.functionResponse) ||
    (Array.isArray(m.content) && m.content.some((b: Msg) => b.type === 'tool_result' || b.toolResult)) ||
    m.kwargs?.tool_call_id ||
    m.data?.tool_call_id
  const withCalls = conversationArb().filter((c) => c.episodes.some((e) => e.steps.length > 0))

  it.each(FORMATS)('%s: a call without its answer is reported', (format) => {
    fc.assert(
      fc.property(withCalls, (c) => {
        const list = render(c, format)
        expect(checkers[format](list, list)).toEqual([])
        const broken = list.filter((m, i) => i !== list.findIndex(answers))
        expect(checkers[format](broken, list).length).toBeGreaterThan(0)
      }),
      { numRuns: 10 },
    )
  })

  it('openai-responses: a reasoning item separated from its call, or kept without it, is reported', () => {
    fc.assert(
      fc.property(withCalls, (c) => {
        const reasoned = { ...c, episodes: c.episodes.map((e) => ({ ...e, steps: e.steps.map((s) => ({ ...s, reasoning: 'think', text: null })) })) }
        const list = render(reasoned, 'openai-responses')
        const at = list.findIndex((m: Msg, i: number) => m.type === 'reasoning' && list[i + 1]?.type === 'function_call')
        expect(at).toBeGreaterThanOrEqual(0)
        const swapped = [...list.slice(0, at), list[at + 1], list[at], ...list.slice(at + 2)]
        expect(checkers['openai-responses'](swapped, list).length).toBeGreaterThan(0)
        // The call dropped with its output (pairing fine), its reasoning left behind.
        const callId = list[at + 1].call_id
        const orphaned = list.filter((m: Msg) => m.call_id !== callId)
        expect(checkers['openai-responses'](orphaned, list).length).toBeGreaterThan(0)
      }),
      { numRuns: 10 },
    )
  })
})

describe('validation errors name the item and field', () => {
  // One malformed item in an otherwise valid list of each format: a TypeError whose message
  // names `messages[i].<field>`.
  const cases: Array<[FormatName, (list: Msg[]) => [Msg[], number, string]]> = [
    ['openai-responses', (l) => corrupt(l, (m) => m.type === 'function_call', (m) => ({ ...m, call_id: 42 }), 'call_id')],
    ['openai-responses', (l) => corrupt(l, (m) => m.type === 'message', (m) => ({ ...m, role: 'robot' }), 'role')],
    ['ai-sdk', (l) => corrupt(l, (m) => Array.isArray(m.content) && m.content.some((p: Msg) => p.type === 'tool-call'), (m) => ({ ...m, content: m.content.map((p: Msg) => (p.type === 'tool-call' ? { ...p, toolName: undefined } : p)) }), 'content\\[\\d+\\]\\.toolName')],
    ['ai-sdk', (l) => corrupt(l, (m) => m.role === 'user', (m) => ({ ...m, content: 7 }), 'content')],
    ['gemini', (l) => corrupt(l, (m) => m.role === 'model', (m) => ({ ...m, parts: 'hi' }), 'parts')],
    ['gemini', (l) => corrupt(l, (m) => m.parts.some((p: Msg) => p.functionCall), (m) => ({ ...m, parts: m.parts.map((p: Msg) => (p.functionCall ? { functionCall: { args: {} } } : p)) }), 'parts\\[\\d+\\]\\.functionCall\\.name')],
    ['bedrock', (l) => corrupt(l, (m) => m.content.some((b: Msg) => b.toolUse), (m) => ({ ...m, content: m.content.map((b: Msg) => (b.toolUse ? { toolUse: { ...b.toolUse, toolUseId: null } } : b)) }), 'content\\[\\d+\\]\\.toolUse\\.toolUseId')],
    ['bedrock', (l) => corrupt(l, (m) => m.role === 'assistant', (m) => ({ ...m, role: 'system' }), 'role')],
    ['langchain', (l) => corrupt(l, (m) => (m.kwargs ?? m.data).tool_call_id, (m) => (m.lc ? { ...m, kwargs: { ...m.kwargs, tool_call_id: undefined } } : { ...m, data: { ...m.data, tool_call_id: undefined } }), '(kwargs|data)\\.tool_call_id')],
    ['langchain', (l) => corrupt(l, (m) => m.lc === 1, (m) => ({ ...m, id: ['langchain_core', 'messages', 'RobotMessage'] }), 'id')],
  ]

  function corrupt(list: Msg[], which: (m: Msg) => unknown, change: (m: Msg) => Msg, field: string): [Msg[], number, string] {
    const at = list.findIndex((m) => which(m))
    return [list.map((m, i) => (i === at ? change(m) : m)), at, field]
  }

  it.each(cases.map(([format, make], n) => [`${format} #${n}`, format, make] as const))('%s', async (_, format, make) => {
    await fc.assert(
      fc.asyncProperty(
        conversationArb().filter((c) => c.episodes.some((e) => e.steps.length > 0)),
        async (c) => {
          const [list, at, field] = make(render(c, format))
          if (at < 0) return
          const pattern = new RegExp(`messages\\[${at}\\]\\.${field}`)
          // checkMessages is a report: the same problem, as an entry instead of a throw.
          const report = checkMessages(list, withFormat(format))
          expect(report.map((p: Msg) => [p.index, p.kind])).toContainEqual([at, 'invalid_message'])
          expect(report.find((p: Msg) => p.index === at)!.message).toMatch(pattern)
          for (const call of [() => countTokens(list, withFormat(format)), () => countTokens(list), () => compactMessages(list, withFormat(format, { force: true }))]) {
            let error: unknown
            try {
              await call()
            } catch (e) {
              error = e
            }
            expect(error).toBeInstanceOf(TypeError)
            expect((error as Error).message).toMatch(pattern)
          }
        },
      ),
      { numRuns: 5 },
    )
  })

  it('a list mixing two formats is refused, naming the first item that disagrees', () => {
    const list = [
      { role: 'user', parts: [{ text: 'hi' }] },
      { type: 'function_call_output', call_id: 'c', output: 'x' },
    ]
    expect(() => countTokens(list as Msg)).toThrow(TypeError)
    expect(() => countTokens(list as Msg)).toThrow(/messages\[1\]/)
  })
})

describe('view formats only', () => {
  it.each(VIEW_FORMATS)('%s: an unknown format name is a TypeError listing the names', (format) => {
    const list = render(fc.sample(conversationArb(), { numRuns: 1, seed: 3 })[0], format)
    expect(() => countTokens(list, withFormat('gemni' as FormatName))).toThrow(TypeError)
    expect(() => countTokens(list, withFormat('gemni' as FormatName))).toThrow(/openai-responses/)
  })
})

// ------------------------------------------------------------------------------------------
// Hand-written cases: LangChain instances, the thinking policy per format, offload.

/** A step's bulky tool output (≈ 300 tokens), so the middle has something to summarize. */
const bulky = (i: number) => `output of step ${i}: ` + 'lorem ipsum dolor sit amet '.repeat(60)

describe('LangChain message instances', () => {
  // The classes a LangChain.js agent holds; they cross into the addon as their toJSON() form.
  async function agentHistory(steps: number) {
    const { AIMessage, HumanMessage, SystemMessage, ToolMessage } = await import('@langchain/core/messages')
    const list: Msg[] = [new SystemMessage('You are a coding agent.')]
    for (let i = 0; i < steps; i++) {
      list.push(new HumanMessage(`step ${i}: edit src/f${i}.ts`))
      list.push(new AIMessage({ content: '', tool_calls: [{ name: 'write_file', args: { path: `src/f${i}.ts` }, id: `c${i}`, type: 'tool_call' }] }))
      list.push(new ToolMessage({ content: bulky(i), tool_call_id: `c${i}` }))
      list.push(new AIMessage(`done ${i}`))
    }
    return list
  }

  it('count, compact and restore: kept messages are the same instances, the summary is a HumanMessage', async () => {
    const { HumanMessage } = await import('@langchain/core/messages')
    const list = await agentHistory(12)
    const serialized = list.map((m) => JSON.parse(JSON.stringify(m)))
    // An instance counts as its serialized form.
    expect(countTokens(list)).toBe(countTokens(serialized))
    expect(countTokens(list)).toBeGreaterThan(12 * 300)

    const dir = tempDir()
    const result = await compactMessages(list, withFormat('langchain', { contextTokenLimit: countTokens(list), tailRetentionRatio: 0.25, force: true, provider: 'extractive', outputDir: dir, sessionId: 'lc' }))
    expect(result.compacted).toBe(true)
    const written = result.messages.filter((m: Msg) => !list.includes(m))
    expect(written).toHaveLength(1)
    expect(written[0]).toBeInstanceOf(HumanMessage)
    expect(String(written[0].content)).toMatch(/^\[context-compact\]/)
    const kept = result.messages.filter((m: Msg) => list.includes(m))
    expect(kept.map((m: Msg) => list.indexOf(m))).toEqual([0, ...kept.slice(1).map((_: Msg, k: number) => list.length - kept.length + 1 + k)])
    expect(checkers.langchain(result.messages)).toEqual([])
    expect(checkMessages(result.messages)).toEqual([])

    const restored = await restoreMessages(result.messages, { outputDir: dir, sessionId: 'lc' })
    expect(restored).toHaveLength(list.length)
    // Kept messages come back as the very instances; archived ones as instances of the same
    // class with the same serialized form.
    restored.forEach((m: Msg, i: number) => {
      if (kept.includes(list[i])) expect(m).toBe(list[i])
      expect(m.constructor).toBe(list[i].constructor)
      expect(JSON.stringify(m)).toBe(JSON.stringify(list[i]))
    })
  })

  it('the stored form (mapChatMessagesToStoredMessages) compacts and restores in its own form', async () => {
    const { mapChatMessagesToStoredMessages } = await import('@langchain/core/messages')
    const stored = mapChatMessagesToStoredMessages(await agentHistory(12)) as Msg[]
    const dir = tempDir()
    const result = await compactMessages(stored, withFormat('langchain', { contextTokenLimit: countTokens(stored), tailRetentionRatio: 0.25, force: true, provider: 'extractive', outputDir: dir, sessionId: 'st' }))
    expect(result.compacted).toBe(true)
    const written = result.messages.filter((m: Msg) => !stored.includes(m))
    expect(written).toEqual([{ type: 'human', data: expect.objectContaining({ content: expect.stringMatching(/^\[context-compact\]/) }) }])
    // The system message (head), the summary, then the input's tail: the very objects.
    expect(result.messages[0]).toBe(stored[0])
    const tail = result.messages.slice(2)
    tail.forEach((m: Msg, k: number) => expect(m).toBe(stored[stored.length - tail.length + k]))
    expect(checkers.langchain(result.messages)).toEqual([])
    expect(await restoreMessages(result.messages, { outputDir: dir, sessionId: 'st' })).toEqual(stored)
  })
})

describe('thinking policy per format', () => {
  /** An AI SDK agent loop on Claude: signed reasoning parts before each call. */
  function aiSdkWithReasoning(steps: number): Msg[] {
    const list: Msg[] = [{ role: 'system', content: 'You are a coding agent.' }]
    for (let i = 0; i < steps; i++) {
      list.push({ role: 'user', content: `step ${i}: fix src/f${i}.ts` })
      list.push({
        role: 'assistant',
        content: [
          { type: 'reasoning', text: `I should edit f${i}.`, providerOptions: { anthropic: { signature: `EqQBCkYI${i}sig==` } } },
          { type: 'text', text: `Editing f${i}.` },
          { type: 'tool-call', toolCallId: `t${i}`, toolName: 'edit', input: { path: `src/f${i}.ts` } },
        ],
      })
      list.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: `t${i}`, toolName: 'edit', output: { type: 'text', value: bulky(i) } }] })
    }
    return list
  }
  const base = (dir: string, sessionId: string, list: Msg[]) => ({ contextTokenLimit: countTokens(list), tailRetentionRatio: 0.3, force: true, provider: 'extractive', outputDir: dir, sessionId })

  it("AI SDK on a preserved-thinking Claude model: 'auto' removes reasoning parts from kept turns, only those, reported and restored", async () => {
    const list = aiSdkWithReasoning(12)
    const dir = tempDir()
    const result = await compactMessages(list, withFormat('ai-sdk', { ...base(dir, 'th', list), agentModel: 'claude-sonnet-5-5', thinking: 'auto' }))
    expect(result.compacted).toBe(true)
    const changed = result.messages.filter((m: Msg) => !list.includes(m) && !isSummary(m))
    expect(changed.length).toBeGreaterThan(0)
    for (const m of changed) {
      // The caller's item with its reasoning parts left out, nothing else different.
      const original = list.find((o: Msg) => o.role === 'assistant' && o.content.some((p: Msg) => p.toolCallId === m.content.find((q: Msg) => q.type === 'tool-call').toolCallId))
      expect(m).toEqual({ ...original, content: original.content.filter((p: Msg) => p.type !== 'reasoning') })
    }
    expect(result.messages.flatMap((m: Msg) => (Array.isArray(m.content) ? m.content : [])).filter((p: Msg) => p.type === 'reasoning')).toEqual([])
    // Every removal is reported against the caller's item and where it is now.
    expect(result.transformations).toHaveLength(changed.length)
    for (const t of result.transformations) {
      expect(t.type).toBe('thinking_dropped')
      expect(list[t.originalIndex].content[0].type).toBe('reasoning')
      expect(changed).toContain(result.messages[t.index!])
    }
    expect(checkers['ai-sdk'](result.messages)).toEqual([])
    expect(await restoreMessages(result.messages, { outputDir: dir, sessionId: 'th' })).toEqual(list)
  })

  it("AI SDK on an older Claude model: 'auto' keeps the reasoning parts (kept turns are the same objects)", async () => {
    const list = aiSdkWithReasoning(12)
    const result = await compactMessages(list, withFormat('ai-sdk', { ...base(tempDir(), 'th', list), agentModel: 'claude-opus-4-8', thinking: 'auto' }))
    expect(result.compacted).toBe(true)
    expect(result.transformations).toEqual([])
    expect(result.messages.filter((m: Msg) => !list.includes(m))).toHaveLength(1)
  })

  it("Bedrock reasoningContent is removed under 'strip' and given back by restore", async () => {
    const list: Msg[] = []
    for (let i = 0; i < 12; i++) {
      list.push({ role: 'user', content: [{ text: `step ${i}` }] })
      list.push({ role: 'assistant', content: [{ reasoningContent: { reasoningText: { text: `think ${i}`, signature: `sig${i}` } } }, { toolUse: { toolUseId: `u${i}`, name: 'edit', input: { i } } }] })
      list.push({ role: 'user', content: [{ toolResult: { toolUseId: `u${i}`, content: [{ text: bulky(i) }], status: 'success' } }] })
      list.push({ role: 'assistant', content: [{ text: `done ${i}` }] })
    }
    const dir = tempDir()
    const result = await compactMessages(list, withFormat('bedrock', { ...base(dir, 'br', list), thinking: 'strip' }))
    expect(result.compacted).toBe(true)
    const assistants = result.messages.filter((m: Msg) => m.role === 'assistant' && m.content.some((b: Msg) => b.toolUse))
    expect(assistants.length).toBeGreaterThan(0)
    for (const m of assistants) expect(m.content).toEqual([{ toolUse: expect.anything() }])
    expect(checkers.bedrock(result.messages)).toEqual([])
    expect(await restoreMessages(result.messages, { outputDir: dir, sessionId: 'br' })).toEqual(list)
  })

  it("LangChain AIMessage thinking blocks are removed by 'auto' on a preserved-thinking model; tool_calls stay", async () => {
    const L = (cls: string, kwargs: Msg) => ({ lc: 1, type: 'constructor', id: ['langchain_core', 'messages', cls], kwargs })
    const list: Msg[] = [L('SystemMessage', { content: 'You are a coding agent.' })]
    for (let i = 0; i < 12; i++) {
      list.push(L('HumanMessage', { content: `step ${i}` }))
      list.push(
        L('AIMessage', {
          content: [{ type: 'thinking', thinking: `plan ${i}`, signature: `sig${i}` }, { type: 'text', text: `on it ${i}` }],
          tool_calls: [{ name: 'write_file', args: { i }, id: `c${i}`, type: 'tool_call' }],
        }),
      )
      list.push(L('ToolMessage', { content: bulky(i), tool_call_id: `c${i}` }))
    }
    const dir = tempDir()
    const result = await compactMessages(list, withFormat('langchain', { ...base(dir, 'lt', list), agentModel: 'claude-sonnet-5-5' }))
    expect(result.compacted).toBe(true)
    const kept = result.messages.filter((m: Msg) => m.id[2] === 'AIMessage')
    expect(kept.length).toBeGreaterThan(0)
    for (const m of kept) {
      const original = list.find((o: Msg) => o.kwargs.tool_calls?.[0]?.id === m.kwargs.tool_calls[0].id)
      expect(m).toEqual({ ...original, kwargs: { ...original.kwargs, content: [original.kwargs.content[1]] } })
    }
    expect(result.transformations).toHaveLength(kept.length)
    expect(checkers.langchain(result.messages)).toEqual([])
    expect(await restoreMessages(result.messages, { outputDir: dir, sessionId: 'lt' })).toEqual(list)
  })

  // OpenAI accepts reasoning items from any earlier turn and Gemini checks thought signatures
  // only in the current turn, which a compaction keeps whole: 'auto' keeps them, with no
  // agentModel (which for the other formats means strip).
  it.each(['openai-responses', 'gemini'] as const)("%s: 'auto' keeps reasoning verbatim", async (format) => {
    const c = fc.sample(substantialArb(5, 6, 4), { numRuns: 1, seed: 11 })[0]
    const withReasoning = { ...c, episodes: c.episodes.map((e) => ({ ...e, steps: e.steps.map((s) => ({ ...s, reasoning: 'weigh the options' })) })) }
    const list = render(withReasoning, format)
    const result = await compactMessages(list, withFormat(format, { ...base(tempDir(), 'r', list), thinking: 'auto' }))
    expect(result.compacted).toBe(true)
    expect(result.transformations).toEqual([])
    expect(result.messages.filter((m: Msg) => !list.includes(m))).toHaveLength(1)
    const reasoning = (m: Msg) => m.type === 'reasoning' || m.parts?.some((p: Msg) => p.thought)
    expect(result.messages.filter(reasoning).length).toBeGreaterThan(0)
  })
})

describe('offload in foreign formats', () => {
  // A single tool output far over the whole window, in the last turn (the tail): the fit step
  // shortens it in its own format and archives the original.
  const huge = textOfTokens(300_000)

  function check(list: Msg[], result: Msg, at: number, expectItem: (item: Msg) => void) {
    expect(result.offloaded.length).toBeGreaterThan(0)
    const entry = result.offloaded.find((o: Msg) => o.originalIndex === at)
    expect(entry, JSON.stringify(result.offloaded)).toBeDefined()
    expect(entry.kind).toBe('tool_result')
    expect(entry.originalTokens).toBeGreaterThanOrEqual(300_000)
    expect(entry.tokens).toBeLessThan(100_000)
    const item = result.messages[entry.index]
    expect(item).not.toBe(list[at])
    expectItem(item)
  }

  it('a Responses function_call_output', async () => {
    const c = fc.sample(substantialArb(4, 4, 2), { numRuns: 1, seed: 5 })[0]
    const list = render(c, 'openai-responses')
    list.push({ type: 'function_call', call_id: 'big', name: 'shell', arguments: '{"command":"cat huge.log"}' })
    list.push({ type: 'function_call_output', call_id: 'big', output: huge })
    const dir = tempDir()
    const result = await compactMessages(list, withFormat('openai-responses', { contextTokenLimit: 100_000, provider: 'extractive', outputDir: dir, sessionId: 'off' }))
    check(list, result, list.length - 1, (item) => {
      const { output, ...rest } = item
      expect(rest).toEqual({ type: 'function_call_output', call_id: 'big' })
      expect(typeof output).toBe('string')
      expect(output.length).toBeLessThan(huge.length / 2)
    })
    expect(checkers['openai-responses'](result.messages)).toEqual([])
    expect(await restoreMessages(result.messages, { outputDir: dir, sessionId: 'off' })).toEqual(list)
  })

  it('the second of two parallel Responses outputs: the entry names that item', async () => {
    const c = fc.sample(substantialArb(4, 4, 2), { numRuns: 1, seed: 5 })[0]
    const list = render(c, 'openai-responses')
    list.push({ type: 'function_call', call_id: 'small', name: 'shell', arguments: '{"command":"ls"}' })
    list.push({ type: 'function_call', call_id: 'big', name: 'shell', arguments: '{"command":"cat huge.log"}' })
    list.push({ type: 'function_call_output', call_id: 'small', output: 'huge.log' })
    list.push({ type: 'function_call_output', call_id: 'big', output: huge })
    const dir = tempDir()
    const result = await compactMessages(list, withFormat('openai-responses', { contextTokenLimit: 100_000, provider: 'extractive', outputDir: dir, sessionId: 'par' }))
    check(list, result, list.length - 1, (item) => expect(item.call_id).toBe('big'))
    // The small output before it is the caller's object, untouched.
    expect(result.messages).toContain(list[list.length - 2])
    expect(await restoreMessages(result.messages, { outputDir: dir, sessionId: 'par' })).toEqual(list)
  })

  it('an AI SDK tool-result', async () => {
    const c = fc.sample(substantialArb(4, 4, 2), { numRuns: 1, seed: 5 })[0]
    const list = render(c, 'ai-sdk')
    list.push({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'big', toolName: 'shell', input: { command: 'cat huge.log' } }] })
    list.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'big', toolName: 'shell', output: { type: 'text', value: huge } }] })
    const dir = tempDir()
    const result = await compactMessages(list, withFormat('ai-sdk', { contextTokenLimit: 100_000, provider: 'extractive', outputDir: dir, sessionId: 'off' }))
    check(list, result, list.length - 1, (item) => {
      expect(item.role).toBe('tool')
      expect(item.content).toHaveLength(1)
      const { output, ...rest } = item.content[0]
      expect(rest).toEqual({ type: 'tool-result', toolCallId: 'big', toolName: 'shell' })
      expect(output.type).toBe('text')
      expect(output.value.length).toBeLessThan(huge.length / 2)
    })
    expect(checkers['ai-sdk'](result.messages)).toEqual([])
    expect(await restoreMessages(result.messages, { outputDir: dir, sessionId: 'off' })).toEqual(list)
  })
})
