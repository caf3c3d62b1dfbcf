// Session files in the shapes the agents write them, made at test time from the real
// conversations of ../shared/data/real (never copied into the repository):
// - Claude Code's project JSONL (as 2.1.x writes it: one entry per content block of a streamed
//   reply, tool results chained to the entry of their own call, progress, system, snapshot and
//   queue entries, a subagent's side chain, and a compaction boundary);
// - pi's session JSONL (version 3: a header, then entries with id/parentId, an abandoned branch,
//   an aborted turn and a compaction);
// - Codex's rollout JSONL (session_meta, turn_context, response_item, event_msg token_count
//   written twice as Codex does, and a `compacted` line with its replacement history).
// Each maker returns the file's text and what an agent's model holds at its end, made
// independently of the CLI's reader: the messages and the usage of each request.
import { randomUUID } from 'node:crypto'

type Json = Record<string, any>

export interface Made {
  text: string
  /** The list the agent's model holds at the end of the file. */
  messages: Json[]
  /** One entry per request of that list: message_index_after_which_the_request_was_made and the billed prompt. */
  usage: { index: number; prompt: number }[]
  sessionId: string
  model: string
}

const lines = (entries: Json[]) => entries.map((e) => JSON.stringify(e)).join('\n') + '\n'
let clock = Date.parse('2026-02-11T20:00:00.000Z')
const now = () => new Date((clock += 1375)).toISOString()

// ---------------------------------------------------------------------------------------------
// Claude Code

interface ClaudeOptions {
  sessionId?: string
  /** Messages written (and compacted away) before the given ones: a boundary, then the given list, its first message the summary. */
  before?: Json[]
  /** Usage entries of the given list, as the usage files hold them. */
  usage: Json[]
  model?: string
}

/** A Claude Code project file holding `messages` (Anthropic form) as Claude Code writes them. */
export function claudeCodeSession(messages: Json[], options: ClaudeOptions): Made {
  const sessionId = options.sessionId ?? randomUUID()
  const model = options.model ?? 'claude-opus-4-6'
  const base = { isSidechain: false, userType: 'external', cwd: '/home/USER/projects/app', sessionId, version: '2.1.39', gitBranch: 'main', slug: 'quiet-dancing-otter' }
  const out: Json[] = []
  let head: string | null = null
  let reply = 0
  const entry = (fields: Json, parent: string | null = head) => {
    const uuid = randomUUID()
    out.push({ parentUuid: parent, ...base, ...fields, uuid, timestamp: now() })
    head = uuid
    return uuid
  }
  const progress = (hook: string, toolUseID: string) =>
    entry({ type: 'progress', data: { type: 'hook_progress', hookEvent: hook, hookName: `${hook}:Bash`, command: '${CLAUDE_PLUGIN_ROOT}/scripts/capture.sh' }, parentToolUseID: toolUseID, toolUseID })
  const snapshot = () => {
    const messageId = randomUUID()
    out.push({ type: 'file-history-snapshot', messageId, snapshot: { messageId, trackedFileBackups: {}, timestamp: now() }, isSnapshotUpdate: false })
  }

  const write = (list: Json[], usageOf: (i: number) => Json | undefined, compactSummary: boolean) => {
    const callEntry = new Map<string, string>()
    list.forEach((m, i) => {
      if (m.role === 'assistant') {
        const id = `msg_01${String(++reply).padStart(22, 'x')}`
        const u = usageOf(i - 1) ?? { input_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 }
        const usage = { ...u, cache_creation: { ephemeral_5m_input_tokens: u.cache_creation_input_tokens ?? 0, ephemeral_1h_input_tokens: 0 }, service_tier: 'standard' }
        delete usage.message_index_after_which_the_request_was_made
        delete usage.model
        delete usage.request_id
        const requestId = `req_011${randomUUID().replace(/-/g, '').slice(0, 20)}`
        const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content
        for (const block of blocks) {
          // Opus streams a blank text block before its thinking; Claude Code records it.
          if (block.type === 'thinking') entry({ type: 'assistant', message: { model, id, type: 'message', role: 'assistant', content: [{ type: 'text', text: '\n\n' }], stop_reason: null, stop_sequence: null, usage }, requestId })
          const uuid = entry({ type: 'assistant', message: { model, id, type: 'message', role: 'assistant', content: [block], stop_reason: null, stop_sequence: null, usage }, requestId })
          if (block.type === 'tool_use') {
            callEntry.set(block.id, uuid)
            progress('PreToolUse', block.id)
          }
        }
        // A subagent's turn (Task) is written into the file as a side chain in older versions.
        if (blocks.some((b: Json) => b.type === 'tool_use' && b.name === 'Task')) {
          const side = { ...base, isSidechain: true }
          const first = randomUUID()
          out.push({ parentUuid: null, ...side, type: 'user', message: { role: 'user', content: 'Explore the code base' }, uuid: first, timestamp: now() })
          out.push({ parentUuid: first, ...side, type: 'assistant', message: { model: 'claude-haiku-4-5-20251001', id: 'msg_side', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'The side chain.' }], usage: { input_tokens: 9, output_tokens: 3 } }, uuid: randomUUID(), timestamp: now() })
        }
        if (!blocks.some((b: Json) => b.type === 'tool_use')) entry({ type: 'system', subtype: 'turn_duration', durationMs: 41_250, isMeta: false })
      } else {
        const blocks = typeof m.content === 'string' ? null : m.content
        const results = blocks ? blocks.filter((b: Json) => b.type === 'tool_result') : []
        const rest = blocks ? blocks.filter((b: Json) => b.type !== 'tool_result') : []
        if (results.length === 0) snapshot()
        // Each result hangs off the entry of its own call; the chain goes on from the last.
        for (const block of results) {
          const source = callEntry.get(block.tool_use_id) ?? head
          const text = typeof block.content === 'string' ? block.content : JSON.stringify(block.content)
          entry({ type: 'user', message: { role: 'user', content: [block] }, toolUseResult: { stdout: text.slice(0, 200), stderr: '', interrupted: false, isImage: false }, sourceToolAssistantUUID: source }, source)
          progress('PostToolUse', block.tool_use_id)
        }
        if (blocks === null || rest.length > 0) {
          const fields: Json = { type: 'user', message: { role: 'user', content: blocks === null ? m.content : rest } }
          if (compactSummary && i === 0) Object.assign(fields, { isCompactSummary: true, isVisibleInTranscriptOnly: true })
          else if (results.length === 0) Object.assign(fields, { thinkingMetadata: { maxThinkingTokens: 31999 }, todos: [], permissionMode: 'bypassPermissions' })
          entry(fields)
        }
        if (i === 0 && !compactSummary) out.push({ type: 'queue-operation', operation: 'enqueue', timestamp: now(), sessionId, content: 'check again' })
      }
    })
  }

  snapshot()
  for (const hook of ['SessionStart:startup', 'SessionStart:startup']) entry({ type: 'progress', data: { type: 'hook_progress', hookEvent: 'SessionStart', hookName: hook, command: 'bd prime' }, parentToolUseID: 'start', toolUseID: 'start' })
  if (options.before) {
    write(options.before, () => undefined, false)
    // The compaction: a new root that names the old chain, then the summary.
    const last = head
    head = null
    entry({ type: 'system', subtype: 'compact_boundary', content: 'Conversation compacted', isMeta: false, level: 'info', logicalParentUuid: last, compactMetadata: { trigger: 'auto', preTokens: 167_094 } }, null)
  }
  const byIndex = new Map(options.usage.map((u) => [u.message_index_after_which_the_request_was_made, u]))
  write(messages, (i) => byIndex.get(i), Boolean(options.before))

  // What the model holds: the messages, without blank text blocks; the usage of each reply.
  const held = messages.map((m) => (typeof m.content === 'string' ? m : { ...m, content: m.content.filter((b: Json) => !(b.type === 'text' && b.text.trim() === '')) }))
  const usage = options.usage.map((u) => ({
    index: u.message_index_after_which_the_request_was_made,
    prompt: u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0),
  }))
  return { text: lines(out), messages: held, usage, sessionId, model }
}

// ---------------------------------------------------------------------------------------------
// pi

const piText = (content: any) => (typeof content === 'string' ? [{ type: 'text', text: content }] : content.map((b: Json) => (b.type === 'text' ? { type: 'text', text: b.text } : b)))

/**
 * A pi session (version 3) holding `messages` (Anthropic form): before them, a branch the user
 * left and, when `compactAt` is given, a compaction whose summary replaces the messages before
 * it but the last `kept` ones.
 */
export function piSession(messages: Json[], options: { usage: Json[]; model?: string; compactAt?: number; kept?: number }): Made {
  const id = randomUUID()
  const model = options.model ?? 'claude-opus-4-5'
  const out: Json[] = [{ type: 'session', version: 3, id, timestamp: now(), cwd: '/Users/me/workspaces/app' }]
  let parent: string | null = null
  const add = (fields: Json, from: string | null = parent) => {
    const entryId = randomUUID().slice(0, 8)
    out.push({ ...fields, id: entryId, parentId: from, timestamp: now() })
    parent = entryId
    return entryId
  }
  add({ type: 'model_change', provider: 'anthropic', modelId: model })
  add({ type: 'thinking_level_change', thinkingLevel: 'medium' })
  // After a compaction pi's requests send the smaller context: their billed usage is scaled by
  // the share of the text they still send (as a real session's would be smaller).
  const scaled = scaleAfterCompaction(messages, options)
  const byIndex = new Map(scaled.map((u) => [u.message_index_after_which_the_request_was_made, u]))
  // The id of the first entry written for each message.
  const firstIdOf: string[] = []
  const piUsage = (u: Json | undefined) => ({
    input: u?.input_tokens ?? 0,
    output: u?.output_tokens ?? 0,
    cacheRead: u?.cache_read_input_tokens ?? 0,
    cacheWrite: u?.cache_creation_input_tokens ?? 0,
    totalTokens: (u?.input_tokens ?? 0) + (u?.output_tokens ?? 0),
    cost: { input: 0.001, output: 0.002, cacheRead: 0, cacheWrite: 0, total: 0.003 },
  })
  messages.forEach((m, i) => {
    const count = out.length
    if (i === 1) {
      // A turn the user aborted, and a branch they left for another try (pi's /tree).
      add({ type: 'message', message: { role: 'assistant', content: [], api: 'anthropic-messages', provider: 'anthropic', model, usage: piUsage(undefined), stopReason: 'aborted', timestamp: clock, errorMessage: 'Request was aborted' } })
      const fork = parent
      add({ type: 'message', message: { role: 'user', content: [{ type: 'text', text: 'no, the other way round' }], timestamp: clock } })
      add({ type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: 'An answer on a branch that was left.' }], api: 'anthropic-messages', provider: 'anthropic', model, usage: piUsage({ input_tokens: 5, output_tokens: 7 }), stopReason: 'stop', timestamp: clock } })
      add({ type: 'label', targetId: parent, label: 'left branch' })
      parent = fork
    }
    if (m.role === 'user' && Array.isArray(m.content) && m.content.some((b: Json) => b.type === 'tool_result')) {
      for (const block of m.content) {
        if (block.type !== 'tool_result') continue
        add({ type: 'message', message: { role: 'toolResult', toolCallId: block.tool_use_id, toolName: 'read', content: piText(block.content), isError: Boolean(block.is_error), timestamp: clock } })
      }
      const rest = m.content.filter((b: Json) => b.type !== 'tool_result')
      if (rest.length > 0) add({ type: 'message', message: { role: 'user', content: piText(rest), timestamp: clock } })
    } else if (m.role === 'user') {
      add({ type: 'message', message: { role: 'user', content: piText(m.content), timestamp: clock } })
    } else {
      const content = (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content).map((b: Json) => {
        if (b.type === 'tool_use') return { type: 'toolCall', id: b.id, name: b.name, arguments: b.input }
        if (b.type === 'thinking') return { type: 'thinking', thinking: b.thinking, thinkingSignature: b.signature }
        return { type: 'text', text: b.text }
      })
      const u = byIndex.get(i - 1)
      add({ type: 'message', message: { role: 'assistant', content, api: 'anthropic-messages', provider: 'anthropic', model, usage: piUsage(u), stopReason: content.some((b: Json) => b.type === 'toolCall') ? 'toolUse' : 'stop', timestamp: clock } })
    }
    // (Before message 1 come the aborted turn, the left branch and its label: four entries.)
    firstIdOf[i] = out.slice(count).filter((e, k) => e.type === 'message' && (i !== 1 || k >= 4))[0].id
    if (options.compactAt !== undefined && i === options.compactAt) {
      // pi's compaction: the summary, then the kept entries from firstKeptEntryId on.
      const firstKept = firstIdOf[options.compactAt + 1 - (options.kept ?? 1)]
      add({ type: 'compaction', summary: '## Goal\nFinish the refactor.\n\n## Progress\n- Parser split into modules', firstKeptEntryId: firstKept, tokensBefore: 150_000 })
    }
  })

  // What the model holds: the messages in pi's Anthropic conversion (every text a block, every
  // tool result with is_error), after a compaction its summary and the messages from the first
  // kept one on; usage of the replies written after the compaction.
  // (A user message of tool results and text is two messages in pi: the results, then the text.)
  const converted: Json[] = []
  const lastOf: number[] = []
  const firstOf: number[] = []
  messages.forEach((m, i) => {
    firstOf[i] = converted.length
    if (m.role === 'assistant') {
      const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content
      converted.push({ role: 'assistant', content: blocks.filter((b: Json) => !(b.type === 'text' && b.text.trim() === '')).map((b: Json) => (b.type === 'tool_use' ? { type: 'tool_use', id: b.id, name: b.name, input: b.input } : b.type === 'thinking' ? { type: 'thinking', thinking: b.thinking, signature: b.signature } : { type: 'text', text: b.text })) })
    } else if (typeof m.content === 'string') {
      converted.push({ role: 'user', content: [{ type: 'text', text: m.content }] })
    } else {
      // An empty text block is dropped: the API rejects one.
      const results = m.content.filter((b: Json) => b.type === 'tool_result').map((b: Json) => ({ type: 'tool_result', tool_use_id: b.tool_use_id, content: piText(b.content).filter((c: Json) => !(c.type === 'text' && c.text.trim() === '')), is_error: Boolean(b.is_error) }))
      const rest = piText(m.content.filter((b: Json) => b.type !== 'tool_result'))
      if (results.length > 0) converted.push({ role: 'user', content: results })
      if (rest.length > 0) converted.push({ role: 'user', content: rest })
    }
    lastOf[i] = converted.length - 1
  })
  let held = converted
  let usage = scaled.map((u) => ({ index: lastOf[u.message_index_after_which_the_request_was_made], prompt: u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) }))
  if (options.compactAt !== undefined) {
    const keptFrom = firstOf[options.compactAt + 1 - (options.kept ?? 1)]
    const summary = { role: 'user', content: [{ type: 'text', text: 'The conversation history before this point was compacted into the following summary:\n\n<summary>\n## Goal\nFinish the refactor.\n\n## Progress\n- Parser split into modules\n</summary>' }] }
    held = [summary, ...converted.slice(keptFrom)]
    // Only the replies written after the compaction were billed for this context.
    usage = usage.filter((u) => u.index >= lastOf[options.compactAt!]).map((u) => ({ ...u, index: u.index - keptFrom + 1 }))
  }
  return { text: lines(out), messages: held, usage, sessionId: id, model }
}

/** The usage entries, those of requests after `compactAt` scaled to the text still sent. */
function scaleAfterCompaction(messages: Json[], options: { usage: Json[]; compactAt?: number; kept?: number }): Json[] {
  if (options.compactAt === undefined) return options.usage
  const keptFrom = options.compactAt + 1 - (options.kept ?? 1)
  const chars: number[] = []
  let sum = 0
  for (const m of messages) chars.push((sum += JSON.stringify(m.content).length))
  const summary = 200
  return options.usage.map((u) => {
    const at = u.message_index_after_which_the_request_was_made
    if (at < options.compactAt!) return u
    const share = (summary + chars[at] - (keptFrom > 0 ? chars[keptFrom - 1] : 0)) / chars[at]
    const scale = (n: number | undefined) => (n === undefined ? undefined : Math.round(n * share))
    return { ...u, input_tokens: scale(u.input_tokens), cache_read_input_tokens: scale(u.cache_read_input_tokens), cache_creation_input_tokens: scale(u.cache_creation_input_tokens) }
  })
}

// ---------------------------------------------------------------------------------------------
// Codex

/**
 * A Codex rollout holding an OpenAI Chat conversation (system, user, assistant with tool calls,
 * tool) as Codex records it, as OpenAI Responses items; with `compactAt`, Codex compacted after
 * that message and carried on from its replacement history.
 */
export function codexRollout(chat: Json[], options: { usage: Json[]; model?: string; compactAt?: number }): Made {
  const id = randomUUID()
  const model = options.model ?? 'gpt-5-codex'
  const out: Json[] = []
  const line = (type: string, payload: Json) => out.push({ timestamp: now(), type, payload })
  const system = chat.find((m) => m.role === 'system')?.content ?? ''
  line('session_meta', { id, timestamp: now(), cwd: '/home/me/repo', originator: 'codex_cli_rs', cli_version: '0.46.0', source: 'cli', model_provider: 'openai', base_instructions: { text: system }, git: { commit_hash: 'a1b2c3d', branch: 'main' } })
  const history: Json[] = []
  const record = (item: Json) => {
    history.push(item)
    line('response_item', item)
  }
  // Codex's own first items: the developer's permissions and the environment.
  record({ type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<permissions instructions>\nFilesystem sandboxing: workspace-write.\n</permissions instructions>' }] })
  record({ type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context>\n  <cwd>/home/me/repo</cwd>\n  <shell>bash</shell>\n</environment_context>' }] })
  const byIndex = new Map(options.usage.map((u) => [u.message_index_after_which_the_request_was_made, u]))
  const itemOf: number[] = []
  let total = { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, reasoning_output_tokens: 0, total_tokens: 0 }
  let offset = 0
  let expected: Json[] = []
  let usage: { index: number; prompt: number }[] = []
  chat.forEach((m, i) => {
    if (m.role === 'system') {
      itemOf[i] = history.length - 1
      return
    }
    if (m.role === 'user') {
      line('turn_context', { cwd: '/home/me/repo', approval_policy: 'on-request', sandbox_policy: { mode: 'workspace-write' }, model, effort: 'medium', summary: 'auto' })
      line('event_msg', { type: 'task_started', model_context_window: 272_000 })
      record({ type: 'message', role: 'user', content: [{ type: 'input_text', text: m.content }] })
      line('event_msg', { type: 'user_message', message: m.content, images: [] })
    } else if (m.role === 'assistant') {
      if (m.content) {
        record({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: m.content }] })
        line('event_msg', { type: 'agent_message', message: m.content })
      }
      for (const call of m.tool_calls ?? []) {
        record({ type: 'function_call', name: 'shell', arguments: JSON.stringify({ command: ['bash', '-lc', JSON.parse(call.function.arguments).command] }), call_id: call.id })
      }
      const u = byIndex.get(i - 1)
      if (u) {
        // After the compaction a request sends the smaller history: its usage scaled to it.
        const sent = history.slice(0, itemOf[i - 1] + 1)
        const size = (items: Json[]) => items.reduce((n, item) => n + JSON.stringify(item).length, 0)
        const share = offset > 0 || expected.length > 0 ? (size(expected) + size(sent.slice(offset + expected.length))) / size(sent) : 1
        const prompt = Math.round((u.prompt_tokens ?? u.input_tokens) * share)
        const last = { input_tokens: prompt, cached_input_tokens: Math.min(prompt, u.cache_read_input_tokens ?? 0), output_tokens: u.output_tokens, reasoning_output_tokens: u.reasoning_tokens ?? 0, total_tokens: prompt + u.output_tokens }
        total = Object.fromEntries(Object.entries(total).map(([k, v]) => [k, v + (last as Json)[k]])) as typeof total
        const event = { type: 'token_count', info: { total_token_usage: total, last_token_usage: last, model_context_window: 272_000 }, rate_limits: { primary: { used_percent: 3, window_minutes: 300 } } }
        // Codex records some counts twice in a row.
        line('event_msg', event)
        line('event_msg', event)
        usage.push({ index: itemOf[i - 1] - offset, prompt: last.input_tokens })
      }
    } else if (m.role === 'tool') {
      record({ type: 'function_call_output', call_id: m.tool_call_id, output: m.content })
    }
    itemOf[i] = history.length - 1
    if (options.compactAt !== undefined && i === options.compactAt) {
      // Codex's compaction: the user's messages and a summary, as the history from now on.
      const replacement = [
        ...history.filter((item) => item.type === 'message' && item.role === 'user').slice(0, 3),
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Another language model started to solve this problem and produced a summary of its thinking process.\n\nThe fix is in src/_pytest/python.py.' }] },
      ]
      line('compacted', { message: 'The fix is in src/_pytest/python.py.', replacement_history: replacement })
      line('event_msg', { type: 'context_compacted' })
      expected = [...replacement]
      offset = history.length - replacement.length
      usage = []
    }
  })
  line('event_msg', { type: 'task_complete', last_agent_message: null })
  const messages = options.compactAt === undefined ? history : [...expected, ...history.slice(offset + expected.length)]
  return { text: lines(out), messages, usage, sessionId: id, model }
}
