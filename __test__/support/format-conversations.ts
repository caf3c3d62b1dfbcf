// Valid conversations in each message format the library reads, rendered from one abstract
// conversation so that the same content can be compared across formats (counting envelope),
// plus an independent pairing checker per format written from each API's documented rule.
// Used by formats.test.ts; the checkers know nothing of the library's view.

import fc from 'fast-check'

export const FORMATS = ['anthropic', 'openai', 'openai-responses', 'ai-sdk', 'gemini', 'bedrock', 'langchain'] as const
export type FormatName = (typeof FORMATS)[number]
/** The formats read through a view (the two native ones are controls). */
export const VIEW_FORMATS = FORMATS.filter((f) => f !== 'anthropic' && f !== 'openai')

// ------------------------------------------------------------------------------------------
// The abstract conversation

export interface Call {
  id: string
  name: string
  args: Record<string, unknown>
  output: string
  isError: boolean
  /** AI SDK only: the call waited for a user approval (tool-approval-request / -response). */
  approval: boolean
}

/** One model turn: optional reasoning and text, then parallel calls answered in the next turn. */
export interface ModelTurn {
  reasoning: string | null
  text: string | null
  calls: Call[]
}

export interface Episode {
  prompt: string
  image: boolean
  /** Tool steps: each a model turn with ≥ 1 call, answered by a results turn. */
  steps: ModelTurn[]
  /** The closing answer (no calls); absent when the conversation stops after tool results. */
  answer: ModelTurn | null
}

export interface Conversation {
  system: string | null
  episodes: Episode[]
  /** Gemini: calls carry ids (newer SDKs) or not (matched by order). */
  geminiIds: boolean
  /** LangChain: serialized toJSON() objects or the stored {type, data} form. */
  langchainForm: 'serialized' | 'stored'
}

/** Between `min` and `max` lorem words (a floor, so that shrunk conversations still have a middle to summarize). */
const words = (min: number, max: number) =>
  fc.array(fc.lorem({ maxCount: 1, mode: 'words' }), { minLength: min, maxLength: max }).map((w) => w.join(' ') || 'ok')
const TOOL_NAMES = ['read_file', 'write_file', 'shell', 'search']
// A tiny valid PNG; the counters bill images by size, not by pixel content.
export const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

function callArb(): fc.Arbitrary<Omit<Call, 'id'>> {
  return fc.record({
    name: fc.constantFrom(...TOOL_NAMES),
    args: fc.record({ path: fc.constantFrom('src/a.ts', 'src/b.rs', 'README.md', 'lib/c.py'), n: fc.nat(99) }),
    // Outputs of a few hundred tokens, so that a compaction has something to summarize but
    // nothing is big enough to be offloaded.
    output: fc.array(fc.lorem({ maxCount: 1, mode: 'sentences' }), { minLength: 20, maxLength: 60 }).map((lines) => lines.join('\n')),
    // One call in five fails (an error result, or a denied approval in the AI SDK).
    isError: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
    approval: fc.boolean(),
  })
}

function modelTurnArb(withCalls: boolean): fc.Arbitrary<Omit<ModelTurn, 'calls'> & { calls: Omit<Call, 'id'>[] }> {
  return fc.record({
    reasoning: fc.option(words(3, 25), { freq: 2 }),
    text: withCalls ? fc.option(words(1, 15), { freq: 2 }) : words(5, 40),
    calls: withCalls ? fc.array(callArb(), { minLength: 1, maxLength: 3 }) : fc.constant([]),
  })
}

export function conversationArb(opts: { minEpisodes?: number; maxEpisodes?: number } = {}): fc.Arbitrary<Conversation> {
  const episode = fc.record({
    prompt: words(10, 60),
    image: fc.boolean(),
    steps: fc.array(modelTurnArb(true), { minLength: 0, maxLength: 3 }),
    answer: fc.option(modelTurnArb(false), { freq: 6 }),
  })
  return fc
    .record({
      system: fc.option(words(5, 30), { freq: 3 }),
      episodes: fc.array(episode, { minLength: opts.minEpisodes ?? 3, maxLength: opts.maxEpisodes ?? 7 }),
      geminiIds: fc.boolean(),
      langchainForm: fc.constantFrom('serialized' as const, 'stored' as const),
    })
    .map((c) => {
      // Unique call ids across the conversation, as every API issues them. An episode that
      // stops after tool results is only valid as the last one (the model answers next).
      let next = 0
      const episodes = c.episodes.map((e, i) => ({
        ...e,
        answer: i < c.episodes.length - 1 && e.answer === null ? { reasoning: null, text: 'done', calls: [] } : e.answer,
        steps: e.steps.map((s) => ({ ...s, calls: s.calls.map((call) => ({ ...call, id: `call_${++next}` })) })),
      }))
      return { ...c, episodes } as Conversation
    })
}

/**
 * Conversations with at least `minSteps` tool steps: enough tool output that a summary is
 * smaller than what it replaces (a few short prompts are legitimately not compacted:
 * NOT_SMALLER / NOTHING_TO_COMPACT).
 */
export function substantialArb(minEpisodes: number, maxEpisodes: number, minSteps: number): fc.Arbitrary<Conversation> {
  return conversationArb({ minEpisodes, maxEpisodes }).filter((c) => c.episodes.reduce((n, e) => n + e.steps.length, 0) >= minSteps)
}

/** Appends `more` episodes after `c` with fresh call ids (for successive compactions). */
export function extend(c: Conversation, more: Conversation, round: number): Conversation {
  const episodes = more.episodes.map((e) => ({
    ...e,
    steps: e.steps.map((s) => ({ ...s, calls: s.calls.map((call) => ({ ...call, id: `r${round}_${call.id}` })) })),
  }))
  const last = c.episodes[c.episodes.length - 1]
  const closed = last.answer ? c.episodes : [...c.episodes.slice(0, -1), { ...last, answer: { reasoning: null, text: 'done', calls: [] } }]
  return { ...c, episodes: [...closed, ...episodes] }
}

// ------------------------------------------------------------------------------------------
// Rendering

type Msg = any

const sig = (s: string) => `EqQBsig${Buffer.from(s).toString('base64').slice(0, 12)}==`

function lcMessage(c: Conversation, cls: string, kwargs: Record<string, unknown>): Msg {
  if (c.langchainForm === 'serialized') {
    return { lc: 1, type: 'constructor', id: ['langchain_core', 'messages', cls], kwargs }
  }
  const type = { HumanMessage: 'human', AIMessage: 'ai', SystemMessage: 'system', ToolMessage: 'tool' }[cls]
  return { type, data: { content: '', additional_kwargs: {}, response_metadata: {}, ...kwargs } }
}

/** The conversation in `format` (OpenAI Chat and LangChain carry no reasoning). */
export function render(c: Conversation, format: FormatName): Msg[] {
  const out: Msg[] = []
  const R = renderers[format]
  if (c.system !== null) R.system(out, c.system, c)
  for (const e of c.episodes) {
    R.user(out, e, c)
    for (const step of e.steps) {
      R.model(out, step, c)
      R.results(out, step.calls, c)
    }
    if (e.answer) R.model(out, e.answer, c)
  }
  return out
}

interface Renderer {
  system(out: Msg[], text: string, c: Conversation): void
  user(out: Msg[], e: Episode, c: Conversation): void
  model(out: Msg[], t: ModelTurn, c: Conversation): void
  results(out: Msg[], calls: Call[], c: Conversation): void
}

const renderers: Record<FormatName, Renderer> = {
  // Anthropic Messages has no system role in `messages`; the native reading takes an OpenAI-style
  // system message, which is what a caller passing both would have.
  anthropic: {
    system: (out, text) => out.push({ role: 'system', content: text }),
    user: (out, e) =>
      out.push({
        role: 'user',
        content: e.image
          ? [{ type: 'text', text: e.prompt }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } }]
          : e.prompt,
      }),
    model: (out, t) => {
      const content: Msg[] = []
      if (t.reasoning) content.push({ type: 'thinking', thinking: t.reasoning, signature: sig(t.reasoning) })
      if (t.text) content.push({ type: 'text', text: t.text })
      for (const call of t.calls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.args })
      out.push({ role: 'assistant', content })
    },
    results: (out, calls) =>
      out.push({
        role: 'user',
        content: calls.map((call) => ({
          type: 'tool_result',
          tool_use_id: call.id,
          content: call.output,
          ...(call.isError ? { is_error: true } : {}),
        })),
      }),
  },
  openai: {
    system: (out, text) => out.push({ role: 'system', content: text }),
    user: (out, e) =>
      out.push({
        role: 'user',
        content: e.image
          ? [{ type: 'text', text: e.prompt }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } }]
          : e.prompt,
      }),
    // Chat Completions has no reasoning field a caller sends back; it is left out.
    model: (out, t) =>
      out.push({
        role: 'assistant',
        content: t.text ?? null,
        ...(t.calls.length
          ? { tool_calls: t.calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } })) }
          : {}),
      }),
    results: (out, calls) => {
      for (const call of calls) out.push({ role: 'tool', tool_call_id: call.id, content: call.output })
    },
  },
  'openai-responses': {
    system: (out, text) => out.push({ role: 'developer', content: text }),
    user: (out, e) =>
      out.push({
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: e.prompt },
          ...(e.image ? [{ type: 'input_image', image_url: `data:image/png;base64,${PNG_BASE64}`, detail: 'auto' }] : []),
        ],
      }),
    // A reasoning item precedes the output it led to (the first call, or the message).
    model: (out, t) => {
      if (t.reasoning)
        out.push({ type: 'reasoning', id: `rs_${out.length}`, summary: [{ type: 'summary_text', text: t.reasoning }], encrypted_content: `gAAAA${sig(t.reasoning)}` })
      if (t.text)
        out.push({ type: 'message', id: `msg_${out.length}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: t.text, annotations: [] }] })
      for (const call of t.calls)
        out.push({ type: 'function_call', id: `fc_${call.id}`, call_id: call.id, name: call.name, arguments: JSON.stringify(call.args), status: 'completed' })
    },
    results: (out, calls) => {
      for (const call of calls) out.push({ type: 'function_call_output', call_id: call.id, output: call.output })
    },
  },
  'ai-sdk': {
    system: (out, text) => out.push({ role: 'system', content: text }),
    user: (out, e) =>
      out.push({
        role: 'user',
        content: e.image ? [{ type: 'text', text: e.prompt }, { type: 'image', image: PNG_BASE64, mediaType: 'image/png' }] : e.prompt,
      }),
    model: (out, t) => {
      const content: Msg[] = []
      if (t.reasoning) content.push({ type: 'reasoning', text: t.reasoning, providerOptions: { anthropic: { signature: sig(t.reasoning) } } })
      if (t.text) content.push({ type: 'text', text: t.text })
      for (const call of t.calls) {
        content.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.args })
        if (call.approval) content.push({ type: 'tool-approval-request', approvalId: `ap_${call.id}`, toolCallId: call.id })
      }
      out.push({ role: 'assistant', content: t.calls.length || t.reasoning ? content : (t.text ?? '') })
    },
    // An approved call's approval response, then the results (one tool message, as the SDK's
    // response messages hold them); a denied call's result says so.
    results: (out, calls) => {
      const content: Msg[] = []
      for (const call of calls) {
        if (call.approval) content.push({ type: 'tool-approval-response', approvalId: `ap_${call.id}`, approved: !call.isError })
      }
      for (const call of calls) {
        const output =
          call.approval && call.isError
            ? { type: 'execution-denied', reason: 'user said no' }
            : { type: call.isError ? 'error-text' : 'text', value: call.output }
        content.push({ type: 'tool-result', toolCallId: call.id, toolName: call.name, output })
      }
      out.push({ role: 'tool', content })
    },
  },
  gemini: {
    // Gemini's system instruction is a request field, not part of `contents`.
    system: () => {},
    user: (out, e) =>
      out.push({ role: 'user', parts: [{ text: e.prompt }, ...(e.image ? [{ inlineData: { mimeType: 'image/png', data: PNG_BASE64 } }] : [])] }),
    model: (out, t, c) => {
      const parts: Msg[] = []
      if (t.reasoning) parts.push({ text: t.reasoning, thought: true })
      if (t.text) parts.push({ text: t.text })
      t.calls.forEach((call, n) =>
        parts.push({
          functionCall: { ...(c.geminiIds ? { id: call.id } : {}), name: call.name, args: call.args },
          // Gemini 3 signs the first call of a turn.
          ...(n === 0 ? { thoughtSignature: sig(call.id) } : {}),
        }),
      )
      out.push({ role: 'model', parts })
    },
    results: (out, calls, c) =>
      out.push({
        role: 'user',
        parts: calls.map((call) => ({
          functionResponse: {
            ...(c.geminiIds ? { id: call.id } : {}),
            name: call.name,
            response: call.isError ? { error: call.output } : { output: call.output },
          },
        })),
      }),
  },
  bedrock: {
    system: () => {},
    user: (out, e) =>
      out.push({
        role: 'user',
        content: [{ text: e.prompt }, ...(e.image ? [{ image: { format: 'png', source: { bytes: PNG_BASE64 } } }] : [])],
      }),
    model: (out, t) => {
      const content: Msg[] = []
      if (t.reasoning) content.push({ reasoningContent: { reasoningText: { text: t.reasoning, signature: sig(t.reasoning) } } })
      if (t.text) content.push({ text: t.text })
      for (const call of t.calls) content.push({ toolUse: { toolUseId: call.id, name: call.name, input: call.args } })
      out.push({ role: 'assistant', content })
    },
    results: (out, calls) =>
      out.push({
        role: 'user',
        content: calls.map((call) => ({
          toolResult: { toolUseId: call.id, content: [{ text: call.output }], status: call.isError ? 'error' : 'success' },
        })),
      }),
  },
  langchain: {
    system: (out, text, c) => out.push(lcMessage(c, 'SystemMessage', { content: text })),
    user: (out, e, c) =>
      out.push(
        lcMessage(c, 'HumanMessage', {
          content: e.image
            ? [{ type: 'text', text: e.prompt }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } }]
            : e.prompt,
        }),
      ),
    // LangChain has no portable reasoning field in the serialized form; left out.
    model: (out, t, c) =>
      out.push(
        lcMessage(c, 'AIMessage', {
          content: t.text ?? '',
          tool_calls: t.calls.map((call) => ({ name: call.name, args: call.args, id: call.id, type: 'tool_call' })),
          invalid_tool_calls: [],
        }),
      ),
    results: (out, calls, c) => {
      for (const call of calls)
        out.push(lcMessage(c, 'ToolMessage', { content: call.output, tool_call_id: call.id, ...(call.isError ? { status: 'error' } : {}) }))
    },
  },
}

// ------------------------------------------------------------------------------------------
// Independent pairing checkers: each API's documented rule, on the caller's items. They return
// human-readable problems (empty when the list is valid). `input` is the list before a
// compaction, for rules about adjacency that only the original order defines. A call left
// unanswered at the very end counts as a problem too: the generated conversations never end
// that way, and a compaction keeps the end of the list as it is.

export type Checker = (list: Msg[], input?: Msg[]) => string[]

/** The kind of view message an item belongs to in LangChain (its class or stored type). */
function lcKind(m: Msg): string {
  if (m && typeof m._getType === 'function') return m._getType()
  if (m?.lc === 1) return { HumanMessage: 'human', AIMessage: 'ai', SystemMessage: 'system', ToolMessage: 'tool' }[m.id[m.id.length - 1] as string] ?? '?'
  return m?.type
}
function lcFields(m: Msg): Msg {
  if (m?.lc === 1) return m.kwargs
  if (m && typeof m._getType === 'function') return m
  return m?.data
}

// Chat-style rule (OpenAI Chat, LangChain): the tool messages answering an assistant turn's
// calls come right after it, each id once, before anything else.
function chatRule(list: Msg[], kindOf: (m: Msg) => string, callsOf: (m: Msg) => string[], answerOf: (m: Msg) => string): string[] {
  const problems: string[] = []
  let open: Set<string> | null = null
  list.forEach((m, i) => {
    const kind = kindOf(m)
    if (kind === 'tool') {
      const id = answerOf(m)
      if (!open || !open.has(id)) problems.push(`[${i}] answers ${id}, which the assistant turn before it did not call`)
      else open.delete(id)
      return
    }
    if (open && open.size) problems.push(`[${i}] comes before the answers to ${[...open].join(', ')}`)
    open = kind === 'ai' ? new Set(callsOf(m)) : null
  })
  if (open && (open as Set<string>).size) problems.push(`the list ends before the answers to ${[...(open as Set<string>)].join(', ')}`)
  return problems
}

// Anthropic rule: each tool_result answers a tool_use of the assistant message right before.
function anthropicRule(list: Msg[]): string[] {
  const problems: string[] = []
  list.forEach((m, i) => {
    const blocks = Array.isArray(m.content) ? m.content : []
    const results = blocks.filter((b: Msg) => b.type === 'tool_result').map((b: Msg) => b.tool_use_id)
    const prev = list[i - 1]
    const calls =
      prev?.role === 'assistant' && Array.isArray(prev.content) ? prev.content.filter((b: Msg) => b.type === 'tool_use').map((b: Msg) => b.id) : []
    for (const id of results) if (!calls.includes(id)) problems.push(`[${i}] tool_result ${id} has no tool_use in the message before`)
    if (m.role === 'assistant') {
      const next = list[i + 1]
      const answered = next && Array.isArray(next.content) ? next.content.filter((b: Msg) => b.type === 'tool_result').map((b: Msg) => b.tool_use_id) : []
      for (const b of blocks) if (b.type === 'tool_use' && !answered.includes(b.id)) problems.push(`[${i}] tool_use ${b.id} not answered next`)
    }
  })
  return problems
}

export const checkers: Record<FormatName, Checker> = {
  anthropic: anthropicRule,
  openai: (list) =>
    chatRule(
      list,
      (m) => (m.role === 'tool' ? 'tool' : m.role === 'assistant' ? 'ai' : m.role),
      (m) => (m.tool_calls ?? []).map((t: Msg) => t.id),
      (m) => m.tool_call_id,
    ),
  // Responses: a function_call_output follows the function_call with its call_id; every call is
  // answered; a reasoning item stays immediately before the item it preceded in the input, and
  // neither is kept without the other (the API refuses a call "provided without its required
  // reasoning item").
  'openai-responses': (list, input) => {
    const problems: string[] = []
    const called = new Map<string, number>()
    const answered = new Set<string>()
    list.forEach((m, i) => {
      if (m.type === 'function_call') called.set(m.call_id, i)
      if (m.type === 'function_call_output') {
        if (!called.has(m.call_id)) problems.push(`[${i}] output for ${m.call_id} before (or without) its call`)
        if (answered.has(m.call_id)) problems.push(`[${i}] second output for ${m.call_id}`)
        answered.add(m.call_id)
      }
    })
    for (const [id, i] of called) if (!answered.has(id)) problems.push(`[${i}] call ${id} has no output`)
    if (input) {
      input.forEach((m, i) => {
        if (m.type !== 'reasoning') return
        const at = list.indexOf(m)
        const follower = list.indexOf(input[i + 1])
        if (at >= 0 !== follower >= 0) problems.push(`reasoning input[${i}] kept ${at >= 0}, the item after it kept ${follower >= 0}`)
        else if (at >= 0 && follower !== at + 1) problems.push(`reasoning input[${i}] no longer right before input[${i + 1}]`)
      })
    }
    return problems
  },
  // AI SDK: a tool-result (in a tool message) answers a tool-call by toolCallId made in an
  // earlier assistant message, before the next user or assistant message; a
  // tool-approval-response follows its tool-approval-request (approvalId).
  'ai-sdk': (list) => {
    const problems: string[] = []
    let open = new Set<string>()
    const requested = new Set<string>()
    list.forEach((m, i) => {
      const parts = Array.isArray(m.content) ? m.content : []
      if (m.role === 'tool') {
        for (const p of parts) {
          if (p.type === 'tool-result') {
            if (!open.has(p.toolCallId)) problems.push(`[${i}] result for ${p.toolCallId} without its call`)
            open.delete(p.toolCallId)
          }
          if (p.type === 'tool-approval-response' && !requested.has(p.approvalId)) problems.push(`[${i}] approval ${p.approvalId} without its request`)
        }
        return
      }
      if (open.size) problems.push(`[${i}] ${m.role} message before the results of ${[...open].join(', ')}`)
      open = new Set()
      for (const p of parts) {
        if (m.role === 'assistant' && p.type === 'tool-call' && !p.providerExecuted) open.add(p.toolCallId)
        if (m.role === 'assistant' && p.type === 'tool-approval-request') requested.add(p.approvalId)
      }
    })
    if (open.size) problems.push(`the list ends before the results of ${[...open].join(', ')}`)
    return problems
  },
  // Gemini: a user turn of functionResponse parts follows a model turn of functionCall parts,
  // with as many responses as calls (ids, when both sides carry them, match).
  gemini: (list) => {
    const problems: string[] = []
    list.forEach((m, i) => {
      const responses = (m.parts ?? []).filter((p: Msg) => p.functionResponse)
      const calls = (m.parts ?? []).filter((p: Msg) => p.functionCall)
      if (responses.length) {
        const prev = list[i - 1]
        const prevCalls = prev?.role === 'model' ? prev.parts.filter((p: Msg) => p.functionCall) : []
        if (prevCalls.length !== responses.length) problems.push(`[${i}] ${responses.length} responses after ${prevCalls.length} calls`)
        responses.forEach((r: Msg, n: number) => {
          const id = r.functionResponse.id
          if (id && !prevCalls.some((c: Msg) => c.functionCall.id === id)) problems.push(`[${i}] response ${id} has no call`)
          if (!id && prevCalls[n] && prevCalls.every((c: Msg) => c.functionCall.name !== r.functionResponse.name))
            problems.push(`[${i}] response ${n} (${r.functionResponse.name}) matches no call by name`)
        })
      }
      if (calls.length && !(list[i + 1]?.parts ?? []).some((p: Msg) => p.functionResponse)) problems.push(`[${i}] calls not answered next`)
    })
    return problems
  },
  // Bedrock: a toolResult is in the user message right after the assistant message holding its
  // toolUse, every toolUse is answered there; the roles alternate, starting with user.
  bedrock: (list) => {
    const problems: string[] = []
    list.forEach((m, i) => {
      if (i === 0 && m.role !== 'user') problems.push('[0] does not start with a user message')
      if (i > 0 && list[i - 1].role === m.role) problems.push(`[${i}] two ${m.role} messages in a row`)
      const uses = m.content.filter((b: Msg) => b.toolUse).map((b: Msg) => b.toolUse.toolUseId)
      const results = m.content.filter((b: Msg) => b.toolResult).map((b: Msg) => b.toolResult.toolUseId)
      const prevUses = i > 0 ? list[i - 1].content.filter((b: Msg) => b.toolUse).map((b: Msg) => b.toolUse.toolUseId) : []
      for (const id of results) if (!prevUses.includes(id)) problems.push(`[${i}] toolResult ${id} not after its toolUse`)
      const next = list[i + 1]
      if (uses.length) {
        const answered = (next?.content ?? []).filter((b: Msg) => b.toolResult).map((b: Msg) => b.toolResult.toolUseId)
        for (const id of uses) if (!answered.includes(id)) problems.push(`[${i}] toolUse ${id} not answered next`)
      }
    })
    return problems
  },
  langchain: (list) =>
    chatRule(
      list,
      lcKind,
      (m) => (lcFields(m).tool_calls ?? []).map((t: Msg) => t.id),
      (m) => lcFields(m).tool_call_id,
    ),
}

/** Whether an item is the summary (or Bedrock's acknowledgement of it) the library wrote. */
export function textOf(m: Msg): string {
  if (m == null) return ''
  const f = lcFields(m)
  const content = m.parts ?? m.content ?? f?.content
  if (typeof content === 'string') return content
  if (Array.isArray(content)) return content.map((p: Msg) => p.text ?? '').join('')
  return ''
}
