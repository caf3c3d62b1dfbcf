'use strict'

// The session files agents keep on disk, read as the list their model holds now, with the usage
// they recorded: Claude Code's project JSONL, pi's session JSONL and Codex's rollout JSONL, told
// apart by their content (never by the file's name). Each agent's own rules decide what its
// model holds; where a rule is Claude Code's, pi's or Codex's, the comment says so:
//
// - Claude Code (~/.claude/projects/<dir>/<session>.jsonl): one entry a line — `user`,
//   `assistant`, `system`, `progress`, `file-history-snapshot`, … — chained by `parentUuid`.
//   The context is the chain from the last message back to its root; a compaction starts a new
//   root (a `system` `compact_boundary` with `parentUuid: null`, then the summary as a user
//   entry marked `isCompactSummary`). A streamed reply is one entry per content block sharing
//   `message.id`, and the results of parallel tool calls hang off the entry of their own call,
//   beside the chain: both are pulled back in, in file order.
// - pi (~/.pi/agent/sessions/<dir>/<time>_<id>.jsonl): a `session` header, then entries with
//   `id`/`parentId` (version 1 files have neither: each entry follows the one before). The
//   context is the path from the last entry to the root; after a `compaction` entry it is the
//   summary, the entries from `firstKeptEntryId` on, then those after the compaction
//   (buildSessionContext in pi's session-manager.ts), converted as pi converts them for an LLM
//   (convertToLlm in messages.ts, transformMessages in pi-ai).
// - Codex (~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl): `{timestamp, type,
//   payload}` lines — `session_meta`, `turn_context`, `response_item` (Responses API items),
//   `event_msg` (`token_count` carries the usage), `compacted` (its `replacement_history` is
//   the history from then on).
//
// Claude Code and pi sessions become Anthropic messages; Codex sessions, OpenAI Responses items.
// Usage entries have the shape of the report's `usage` option: the request was sent with
// messages 0..message_index_after_which_the_request_was_made.

const SESSION_ID = /^[A-Za-z0-9._-]{1,128}$/

/** Lines of JSONL text: `{ entries: [{ line, value }], malformed: [line numbers] }`. */
function parseJsonl(text) {
  const entries = []
  const malformed = []
  const lines = text.split('\n')
  lines.forEach((raw, i) => {
    const line = raw.trim()
    if (line === '') return
    try {
      entries.push({ line: i + 1, value: JSON.parse(line) })
    } catch {
      malformed.push(i + 1)
    }
  })
  return { entries, malformed }
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)

const CODEX_TYPES = new Set(['session_meta', 'response_item', 'event_msg', 'turn_context', 'compacted'])
const CLAUDE_TYPES = new Set(['user', 'assistant', 'system', 'summary', 'progress', 'file-history-snapshot', 'queue-operation', 'attachment'])

/** Which agent wrote these entries: 'claude-code', 'pi', 'codex' or null. */
function detectAgent(values) {
  const objects = values.filter(isObject)
  if (objects.length === 0 || objects.length !== values.length) return null
  // pi: the header comes first (pi's own isValidSessionFile test).
  if (objects[0].type === 'session' && typeof objects[0].id === 'string') return 'pi'
  // Codex: every line is a `{timestamp, type, payload}` record, read by that shape rather than
  // by a list of types (each version adds some: 0.146 wrote `world_state` and
  // `inter_agent_communication_metadata`); the known ones carry an object payload, and a
  // session has its metadata or the model's items.
  const codexShaped = (v) => typeof v.type === 'string' && 'payload' in v && (!CODEX_TYPES.has(v.type) || isObject(v.payload))
  if (objects.every(codexShaped) && objects.some((v) => v.type === 'session_meta' || v.type === 'response_item')) return 'codex'
  // Claude Code: entries with a `type`, its messages chained by `uuid`; types it adds over
  // versions (`custom-title`, `last-prompt`, …) are read past, and counted.
  const spoken = objects.some((v) => (v.type === 'user' || v.type === 'assistant') && isObject(v.message) && (typeof v.uuid === 'string' || typeof v.sessionId === 'string'))
  if (spoken && objects.every((v) => typeof v.type === 'string' && !('payload' in v))) return 'claude-code'
  return null
}

/**
 * Why values most of which look like one agent's file are not one: `{ agent, at, what }`
 * (`at`: the index of the first value that does not fit), or null when no agent's shape
 * dominates. The error then names that line, not the first.
 */
function misfit(values) {
  const codex = (v) => isObject(v) && typeof v.type === 'string' && 'payload' in v && (!CODEX_TYPES.has(v.type) || isObject(v.payload))
  const claude = (v) => isObject(v) && typeof v.type === 'string' && !('payload' in v)
  for (const [agent, fits, what] of [
    ['Codex', codex, 'a Codex record ({timestamp, type, payload})'],
    ['Claude Code', claude, 'a Claude Code entry (an object with a "type")'],
  ]) {
    const count = values.filter(fits).length
    if (count >= values.length / 2 && count < values.length) return { agent, at: values.findIndex((v) => !fits(v)), what }
  }
  return null
}

const NAMES = { 'claude-code': 'Claude Code', pi: 'pi', codex: 'Codex' }

// Whitespace-only text blocks: Opus streams "\n\n" before a thinking block and Claude Code
// records it, but the API rejects a text block without text.
const blankText = (block) => isObject(block) && block.type === 'text' && (typeof block.text !== 'string' || block.text.trim() === '')

/** Anthropic usage, its fields as given (extra fields of the agent dropped). */
function anthropicUsage(u) {
  if (!isObject(u) || typeof u.input_tokens !== 'number') return null
  const out = { input_tokens: u.input_tokens }
  for (const key of ['cache_creation_input_tokens', 'cache_read_input_tokens', 'output_tokens']) {
    if (typeof u[key] === 'number') out[key] = u[key]
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Claude Code

function readClaudeCode(values) {
  const notes = []
  const all = values.map((value, order) => ({ value, order }))
  const spoken = all.filter(({ value }) => (value.type === 'user' || value.type === 'assistant') && isObject(value.message))
  // A subagent's own file holds only side-chain entries; a session file holds the main chain
  // (older versions also wrote their subagents' entries into it, marked as side chains).
  const main = spoken.some(({ value }) => value.isSidechain !== true)
  const candidates = spoken.filter(({ value }) => (value.isSidechain === true) !== main)
  const byUuid = new Map()
  for (const entry of all) if (typeof entry.value.uuid === 'string') byUuid.set(entry.value.uuid, entry)
  const leaf = candidates[candidates.length - 1]
  if (!leaf) return { messages: [], usage: [], notes: ['the session holds no user or assistant message yet'] }

  // A compaction that kept recent messages (Claude Code's partial compaction) leaves them where
  // they were in the file, chained to what came before; its boundary names them, and a reader
  // relinks them after the summary (the anchor): `compactMetadata.preservedSegment {headUuid,
  // anchorUuid, tailUuid}` (the head's parent becomes the anchor, and what was written after
  // the anchor follows the tail), or, in later versions, `preservedMessages {anchorUuid, uuids}`
  // (each kept message follows the one before it, the first the anchor).
  const relink = new Map()
  let anchor = null
  for (const { value, order } of all) {
    if (value.type !== 'system' || value.subtype !== 'compact_boundary') continue
    const meta = isObject(value.compactMetadata) ? value.compactMetadata : isObject(value.compact_metadata) ? value.compact_metadata : {}
    const kept = isObject(meta.preservedMessages) ? meta.preservedMessages : isObject(meta.preserved_messages) ? meta.preserved_messages : null
    const segment = isObject(meta.preservedSegment) ? meta.preservedSegment : isObject(meta.preserved_segment) ? meta.preserved_segment : null
    const anchorUuid = kept ? (kept.anchorUuid ?? kept.anchor_uuid) : segment ? (segment.anchorUuid ?? segment.anchor_uuid) : undefined
    if (typeof anchorUuid !== 'string') continue
    const uuids = kept && Array.isArray(kept.uuids) ? kept.uuids.filter((u) => typeof u === 'string') : []
    if (uuids.length > 0) {
      uuids.forEach((u, i) => relink.set(u, i === 0 ? anchorUuid : uuids[i - 1]))
      relink.set(`after:${anchorUuid}`, uuids[uuids.length - 1])
    } else if (segment) {
      const head = segment.headUuid ?? segment.head_uuid
      const tail = segment.tailUuid ?? segment.tail_uuid
      if (typeof head !== 'string' || typeof tail !== 'string') continue
      relink.set(head, anchorUuid)
      relink.set(`after:${anchorUuid}`, tail)
    } else {
      continue
    }
    anchor = { uuid: anchorUuid, order: byUuid.get(anchorUuid)?.order ?? order }
  }
  const parentOf = (entry) => {
    const { uuid, parentUuid } = entry.value
    if (relink.has(uuid)) return relink.get(uuid)
    // Written after the summary, before the kept messages were relinked: it follows them.
    if (typeof parentUuid === 'string' && relink.has(`after:${parentUuid}`) && entry.order > (byUuid.get(parentUuid)?.order ?? Infinity)) return relink.get(`after:${parentUuid}`)
    return parentUuid
  }

  // The chain from the leaf back to its root (a compaction's boundary is a root).
  const chain = new Set()
  let first = leaf.order
  for (let at = leaf, guard = 0; at && guard <= all.length; guard++) {
    if (chain.has(at.value.uuid)) break
    chain.add(at.value.uuid)
    first = Math.min(first, at.order)
    const parent = parentOf(at)
    at = typeof parent === 'string' ? byUuid.get(parent) : undefined
  }
  // Kept messages relinked after the summary come after it, in their own order; their usage
  // was billed for the context before the compaction.
  const relinked = anchor !== null && chain.has(anchor.uuid) ? anchor : null
  const rank = (entry) => (relinked && entry.order < relinked.order ? relinked.order + 0.5 + entry.order / (all.length + 1) / 2 : entry.order)
  const stale = (entry) => relinked !== null && entry.order < relinked.order
  const onChain = candidates.filter(({ value, order }) => order >= first && chain.has(value.uuid))
  const ids = new Set(onChain.filter(({ value }) => value.type === 'assistant' && value.message.id).map(({ value }) => value.message.id))
  const included = new Set(onChain)
  // The other content blocks of the replies on the chain.
  for (const entry of candidates) {
    if (entry.order >= first && entry.value.type === 'assistant' && ids.has(entry.value.message.id)) included.add(entry)
  }
  // The results of their tool calls, which hang off the entry of their call.
  const calls = new Set()
  for (const { value } of included) {
    if (value.type !== 'assistant' || !Array.isArray(value.message.content)) continue
    for (const block of value.message.content) if (isObject(block) && block.type === 'tool_use') calls.add(block.id)
  }
  for (const entry of candidates) {
    const content = entry.value.message.content
    if (entry.order < first || entry.value.type !== 'user' || included.has(entry) || !Array.isArray(content)) continue
    const results = content.filter((b) => isObject(b) && b.type === 'tool_result')
    if (results.length > 0 && results.every((b) => calls.has(b.tool_use_id))) included.add(entry)
  }

  // Entries → messages: one assistant message per reply (message.id), consecutive user entries
  // merged with their tool results first, as the API wants them.
  const messages = []
  const usage = []
  let replyAt = new Map()
  let model
  for (const entry of [...included].sort((a, b) => rank(a) - rank(b))) {
    const { value } = entry
    const m = value.message
    if (value.type === 'assistant') {
      // Claude Code's own error replies ("API Error: …", model "<synthetic>") were never sent.
      if (value.isApiErrorMessage === true || m.model === '<synthetic>') continue
      const blocks = (Array.isArray(m.content) ? m.content : [{ type: 'text', text: String(m.content ?? '') }]).filter((b) => !blankText(b))
      const at = m.id !== undefined ? replyAt.get(m.id) : undefined
      if (at !== undefined) {
        messages[at].content.push(...blocks)
      } else {
        if (blocks.length === 0) continue
        messages.push({ role: 'assistant', content: blocks })
        if (m.id !== undefined) replyAt.set(m.id, messages.length - 1)
      }
      const index = at ?? messages.length - 1
      const u = anthropicUsage(m.usage)
      // Every block of a reply repeats its usage; the last one has the final output count.
      if (u && !stale(entry)) usage[index] = { message_index_after_which_the_request_was_made: index - 1, ...u }
      if (typeof m.model === 'string') model = m.model
    } else {
      const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content.filter((b) => !blankText(b)) : []
      if (blocks.length === 0) continue
      const last = messages[messages.length - 1]
      if (last && last.role === 'user') {
        const merged = [...last.content, ...blocks]
        last.content = [...merged.filter((b) => b.type === 'tool_result'), ...merged.filter((b) => b.type !== 'tool_result')]
      } else {
        messages.push({ role: 'user', content: blocks })
      }
    }
  }
  // A single text block stays a string, as Claude Code wrote it.
  for (const message of messages) {
    if (message.role === 'user' && Array.isArray(message.content) && message.content.length === 1 && message.content[0].type === 'text' && Object.keys(message.content[0]).length === 2) {
      message.content = message.content[0].text
    }
  }
  const unknown = new Map()
  for (const { value } of all) if (!CLAUDE_TYPES.has(value.type)) unknown.set(value.type, (unknown.get(value.type) ?? 0) + 1)
  if (unknown.size > 0) {
    const total = [...unknown.values()].reduce((a, b) => a + b, 0)
    notes.push(`${total} Claude Code entr${total === 1 ? 'y' : 'ies'} of types this reader does not know skipped (${[...unknown].map(([t, n]) => `${t} ×${n}`).join(', ')})`)
  }
  const compacted = onChain.some(({ value }) => value.isCompactSummary === true)
  const keptCount = relinked ? onChain.filter((entry) => entry.order < relinked.order).length : 0
  if (compacted) notes.push(`Claude Code compacted this session: the list starts with its summary${keptCount > 0 ? `, then the ${keptCount} entr${keptCount === 1 ? 'y' : 'ies'} it kept` : ''}`)
  return {
    messages,
    usage: usage.filter(Boolean),
    model,
    sessionId: leaf.value.sessionId,
    notes,
  }
}

// ---------------------------------------------------------------------------------------------
// pi

const PI_COMPACTION_PREFIX = 'The conversation history before this point was compacted into the following summary:\n\n<summary>\n'
const PI_COMPACTION_SUFFIX = '\n</summary>'
const PI_BRANCH_PREFIX = 'The following is a summary of a branch that this conversation came back from:\n\n<summary>\n'
const PI_BRANCH_SUFFIX = '</summary>'

/** pi's bashExecutionToText. */
function bashText(m) {
  let text = `Ran \`${m.command}\`\n`
  text += m.output ? `\`\`\`\n${m.output}\n\`\`\`` : '(no output)'
  if (m.cancelled) text += '\n\n(command cancelled)'
  else if (m.exitCode !== null && m.exitCode !== undefined && m.exitCode !== 0) text += `\n\nCommand exited with code ${m.exitCode}`
  if (m.truncated && m.fullOutputPath) text += `\n\n[Output truncated. Full output: ${m.fullOutputPath}]`
  return text
}

function piBlocks(content) {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  if (!Array.isArray(content)) return []
  return content.flatMap((block) => {
    if (!isObject(block)) return []
    if (block.type === 'image') return [{ type: 'image', source: { type: 'base64', media_type: block.mimeType, data: block.data } }]
    if (block.type === 'text') return blankText(block) ? [] : [{ type: 'text', text: block.text }]
    return [block]
  })
}

// pi's entries that never reach the model (session-manager.ts): settings, extension state,
// bookmarks, the session's name, billed usage outside a reply (`usage`, in pi 1.5.2 and 1.6.0), and the
// compaction, branch and context-edit entries read above.
const PI_OUT_OF_CONTEXT = new Set(['model_change', 'thinking_level_change', 'custom', 'label', 'session_info', 'usage', 'compaction', 'branch_summary', 'context_edit'])
const PI_ROLES = new Set(['user', 'assistant', 'toolResult', 'bashExecution', 'custom', 'hookMessage', 'branchSummary', 'compactionSummary', 'system'])

/** The text of a pi `system` message (pi-ai's SystemMessage): its content, then its named sections. */
function piSystemText(m) {
  const parts = []
  if (typeof m.content === 'string') parts.push(m.content)
  else if (Array.isArray(m.content)) for (const b of m.content) if (isObject(b) && typeof b.text === 'string') parts.push(b.text)
  if (isObject(m.sections)) for (const v of Object.values(m.sections)) if (typeof v === 'string') parts.push(v)
  return parts.filter((t) => t !== '').join('\n\n')
}

function readPi(values) {
  const header = values[0]
  const entries = values.slice(1).filter(isObject)
  // Version 1: no ids; each entry follows the one before, and a compaction names the index of
  // its first kept entry in the file (pi's migrateV1ToV2).
  const tree = entries.some((e) => typeof e.id === 'string')
  const byId = new Map()
  entries.forEach((e, i) => {
    const id = tree ? e.id : `#${i + 1}`
    byId.set(id, { entry: e, id, parent: tree ? (e.parentId ?? null) : i === 0 ? null : `#${i}` })
  })
  if (!tree) {
    for (const node of byId.values()) {
      if (node.entry.type === 'compaction' && typeof node.entry.firstKeptEntryIndex === 'number') node.firstKept = `#${node.entry.firstKeptEntryIndex}`
    }
  } else {
    for (const node of byId.values()) if (node.entry.type === 'compaction') node.firstKept = node.entry.firstKeptEntryId
  }
  const last = [...byId.values()].pop()
  const path = []
  for (let at = last, guard = 0; at && guard <= byId.size; guard++) {
    path.unshift(at)
    at = at.parent === null ? undefined : byId.get(at.parent)
  }
  let model = typeof header.modelId === 'string' ? header.modelId : undefined
  let compaction = -1
  path.forEach((node, i) => {
    const e = node.entry
    if (e.type === 'model_change' && typeof e.modelId === 'string') model = e.modelId
    if (e.type === 'message' && isObject(e.message) && e.message.role === 'assistant' && typeof e.message.model === 'string') model = e.message.model
    if (e.type === 'compaction') compaction = i
  })
  // pi's buildSessionContext: the summary, the kept entries before the compaction, the rest.
  const context = []
  const notes = []
  let order = path
  // The usage of a reply kept across a compaction was billed for the context before it.
  const stale = new Set()
  if (compaction >= 0) {
    const c = path[compaction]
    // pi 1.5.2 and 1.6.0: the compaction carries the system prompt in force at that point, placed before the summary.
    if (isObject(c.entry.systemMessage)) context.push(c.entry.systemMessage)
    context.push({ role: 'compactionSummary', summary: String(c.entry.summary ?? '') })
    const kept = path.findIndex((node, i) => i < compaction && node.id === c.firstKept)
    // The kept entries leave out the system messages the compaction's own one replaces.
    const before = (kept >= 0 ? path.slice(kept, compaction) : []).filter((node) => !(node.entry.type === 'message' && node.entry.message?.role === 'system'))
    for (const node of before) stale.add(node.entry.message)
    order = [...before, ...path.slice(compaction + 1)]
    notes.push('pi compacted this session: the list starts with its summary')
  }
  // Entries of types this reader does not know (a newer pi adds some) are skipped and counted;
  // those pi keeps out of the model's context are skipped silently.
  const skipped = new Map()
  const skip = (type) => skipped.set(type, (skipped.get(type) ?? 0) + 1)
  // pi 1.5.2 and 1.6.0: a `context_edit` entry replaces an earlier entry's content in the model's context,
  // or (replacement null) leaves the entry out; the latest edit of an entry wins.
  const edits = new Map()
  for (const { entry: e } of order) if (e.type === 'context_edit' && typeof e.targetId === 'string') edits.set(e.targetId, e)
  const edited = (e, m) => {
    const edit = edits.get(e.id)
    if (!edit || !['user', 'assistant', 'toolResult', 'custom'].includes(m.role)) return m
    if (edit.replacement === null) return null
    if (!isObject(edit.replacement)) return m
    const content = edit.replacement.content
    return { ...m, content: (m.role === 'assistant' || m.role === 'toolResult') && typeof content === 'string' ? [{ type: 'text', text: content }] : content }
  }
  for (const { entry: e } of order) {
    let m
    if (e.type === 'message' && isObject(e.message)) m = e.message
    else if (e.type === 'custom_message') m = { role: 'custom', content: e.content }
    if (m) {
      if (edits.has(e.id)) {
        const replaced = edited(e, m)
        if (replaced) context.push(replaced)
        // An edited reply kept across a compaction keeps its stale usage.
        if (replaced && stale.has(m)) stale.add(replaced)
      } else context.push(m)
    }
    else if (e.type === 'branch_summary' && e.summary) context.push({ role: 'branchSummary', summary: e.summary })
    else if (!PI_OUT_OF_CONTEXT.has(e.type)) skip(String(e.type))
  }
  // pi 1.5.2 and 1.6.0 record system prompts as `system` messages; they are the request's system prompt,
  // not messages of the list (the latest one in the context is taken, its sections appended).
  let system

  // convertToLlm, then pi-ai's transformMessages for an Anthropic model.
  const messages = []
  const usage = []
  let pending = []
  let answered = new Set()
  const closePending = () => {
    const missing = pending.filter((call) => !answered.has(call.id))
    if (missing.length > 0) {
      const results = missing.map((call) => ({ type: 'tool_result', tool_use_id: call.id, content: [{ type: 'text', text: 'No result provided' }], is_error: true }))
      appendResults(results)
    }
    pending = []
    answered = new Set()
  }
  const appendResults = (results) => {
    const last = messages[messages.length - 1]
    if (last && last.role === 'user' && Array.isArray(last.content) && last.content.every((b) => b.type === 'tool_result')) last.content.push(...results)
    else messages.push({ role: 'user', content: results })
  }
  const pushUser = (content) => {
    closePending()
    const blocks = piBlocks(content)
    if (blocks.length > 0) messages.push({ role: 'user', content: typeof content === 'string' ? content : blocks })
  }
  for (const m of context) {
    if (!isObject(m)) continue
    if (!PI_ROLES.has(m.role)) skip(`message role ${String(m.role)}`)
    switch (m.role) {
      case 'system': {
        const text = piSystemText(m)
        if (text) system = text
        break
      }
      case 'compactionSummary':
        pushUser([{ type: 'text', text: PI_COMPACTION_PREFIX + m.summary + PI_COMPACTION_SUFFIX }])
        break
      case 'branchSummary':
        pushUser([{ type: 'text', text: PI_BRANCH_PREFIX + m.summary + PI_BRANCH_SUFFIX }])
        break
      case 'bashExecution':
        if (!m.excludeFromContext) pushUser([{ type: 'text', text: bashText(m) }])
        break
      case 'custom':
      case 'hookMessage':
        pushUser(typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content)
        break
      case 'user':
        pushUser(m.content)
        break
      case 'toolResult':
        answered.add(m.toolCallId)
        appendResults([{ type: 'tool_result', tool_use_id: m.toolCallId, content: piBlocks(m.content), is_error: Boolean(m.isError) }])
        break
      case 'assistant': {
        closePending()
        // Errored and aborted turns are not replayed (pi-ai's transformMessages).
        if (m.stopReason === 'error' || m.stopReason === 'aborted') break
        const own = m.provider === 'anthropic'
        const blocks = (Array.isArray(m.content) ? m.content : []).flatMap((block) => {
          if (!isObject(block)) return []
          if (block.type === 'toolCall') return [{ type: 'tool_use', id: block.id, name: block.name, input: block.arguments ?? {} }]
          if (block.type === 'thinking') {
            // Another provider's thinking is replayed as text; an empty one is dropped.
            if (own && block.thinkingSignature) return [{ type: 'thinking', thinking: block.thinking ?? '', signature: block.thinkingSignature }]
            return typeof block.thinking === 'string' && block.thinking.trim() !== '' ? [{ type: 'text', text: block.thinking }] : []
          }
          if (block.type === 'text') return blankText(block) ? [] : [{ type: 'text', text: block.text }]
          return []
        })
        if (blocks.length === 0) break
        messages.push({ role: 'assistant', content: blocks })
        pending = blocks.filter((b) => b.type === 'tool_use')
        answered = new Set()
        const u = m.usage
        if (!stale.has(m) && isObject(u) && typeof u.input === 'number' && u.input + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0) > 0) {
          usage.push({
            message_index_after_which_the_request_was_made: messages.length - 2,
            input_tokens: u.input,
            cache_read_input_tokens: u.cacheRead ?? 0,
            cache_creation_input_tokens: u.cacheWrite ?? 0,
            output_tokens: u.output ?? 0,
          })
        }
        break
      }
      default:
        break
    }
  }
  if (pending.some((call) => !answered.has(call.id)) && messages[messages.length - 1]?.role !== 'assistant') closePending()
  if (skipped.size > 0) {
    const total = [...skipped.values()].reduce((a, b) => a + b, 0)
    notes.push(`${total} pi entr${total === 1 ? 'y' : 'ies'} of types this reader does not know skipped (${[...skipped].map(([t, n]) => `${t} ×${n}`).join(', ')})`)
  }
  return { messages, usage, model, sessionId: header.id, ...(system === undefined ? {} : { system }), notes }
}

// ---------------------------------------------------------------------------------------------
// Codex

// Items of the model's history (Codex's ResponseItem, what it sends back to the API); a
// `ghost_snapshot` is Codex's own bookkeeping.
const CODEX_HISTORY = new Set([
  'message',
  'reasoning',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'local_shell_call',
  'web_search_call',
  'image_generation_call',
  'tool_search_call',
  'tool_search_output',
  'compaction',
])
// Codex's own records that carry nothing the model is sent.
const CODEX_BOOKKEEPING = new Set(['ghost_snapshot'])

/** A history item as the Responses API takes it: Codex's older `compaction_summary` (its
 * encrypted summary) is the API's `compaction` item. */
function codexItem(item) {
  if (item.type === 'compaction_summary') return { ...item, type: 'compaction' }
  return item
}
const isCodexHistory = (item) => isObject(item) && (CODEX_HISTORY.has(item.type) || item.type === 'compaction_summary')
const isEncrypted = (item) => item.type === 'compaction' && typeof item.encrypted_content === 'string'
const isCodexOutput = (item) => item.type === 'message' ? item.role === 'assistant' : !/_output$/.test(item.type)

function readCodex(values) {
  let history = []
  let usage = []
  let model
  let sessionId
  let system
  const notes = []
  // Where the request whose reply is being recorded was sent: the history before its first
  // output item.
  let requestEnd = null
  let lastCount = null
  // Records (and history items) of types this reader does not know: skipped, and counted in a
  // note, so that a newer Codex's file still reads.
  const skipped = new Map()
  const skip = (type) => skipped.set(type, (skipped.get(type) ?? 0) + 1)
  let compactedNote = null
  for (const { type, payload } of values) {
    if (!CODEX_TYPES.has(type)) {
      skip(type)
      continue
    }
    if (type === 'session_meta') {
      if (typeof payload.id === 'string') sessionId = payload.id
      const instructions = isObject(payload.base_instructions) ? payload.base_instructions.text : payload.instructions
      if (typeof instructions === 'string' && instructions !== '') system = instructions
    } else if (type === 'turn_context') {
      if (typeof payload.model === 'string') model = payload.model
    } else if (type === 'response_item') {
      if (!isCodexHistory(payload)) {
        if (!CODEX_BOOKKEEPING.has(payload.type)) skip(`response_item ${String(payload.type)}`)
        continue
      }
      if (isCodexOutput(payload)) {
        if (requestEnd === null) requestEnd = history.length - 1
      } else {
        requestEnd = null
      }
      history.push(codexItem(payload))
    } else if (type === 'compacted') {
      // The history Codex carries on with: the replacement it recorded, else (older versions)
      // the user's messages and the summary as a user message.
      if (Array.isArray(payload.replacement_history)) {
        history = payload.replacement_history.filter(isCodexHistory).map(codexItem)
      } else {
        const users = history.filter((item) => item.type === 'message' && item.role === 'user')
        history = [...users, { type: 'message', role: 'user', content: [{ type: 'input_text', text: String(payload.message ?? '') }] }]
      }
      usage = []
      requestEnd = null
      // A remote compaction's summary is encrypted (a `compaction` item the API decrypts):
      // sent as it is, counted by its size.
      compactedNote = history.some(isEncrypted)
        ? 'Codex compacted this session: the list starts from its replacement history (its summary is encrypted: an opaque compaction item, sent as it is)'
        : 'Codex compacted this session: the list starts from its replacement history'
    } else if (type === 'event_msg') {
      if (payload.type === 'token_count' && isObject(payload.info) && isObject(payload.info.last_token_usage)) {
        const u = payload.info.last_token_usage
        const key = JSON.stringify(u)
        // Codex records some counts twice in a row.
        if (key === lastCount || typeof u.input_tokens !== 'number' || u.input_tokens <= 0) continue
        lastCount = key
        const index = requestEnd ?? history.length - 1
        if (index < 0) continue
        usage.push({
          message_index_after_which_the_request_was_made: index,
          input_tokens: u.input_tokens,
          input_tokens_details: { cached_tokens: typeof u.cached_input_tokens === 'number' ? u.cached_input_tokens : 0 },
          output_tokens: typeof u.output_tokens === 'number' ? u.output_tokens : 0,
        })
      } else if (payload.type === 'thread_rolled_back' && Number.isInteger(payload.num_turns) && payload.num_turns > 0) {
        // The last turns were taken back: the history from the user message that began them.
        let turns = 0
        for (let i = history.length - 1; i >= 0; i--) {
          const item = history[i]
          if (item.type === 'message' && item.role === 'user' && ++turns === payload.num_turns) {
            history = history.slice(0, i)
            usage = usage.filter((u) => u.message_index_after_which_the_request_was_made < i)
            break
          }
        }
      }
    }
  }
  if (compactedNote) notes.push(compactedNote)
  if (skipped.size > 0) {
    const total = [...skipped.values()].reduce((a, b) => a + b, 0)
    const kinds = [...skipped].map(([t, n]) => `${t} ×${n}`).join(', ')
    notes.push(`${total} Codex record${total === 1 ? '' : 's'} of types this reader does not know skipped (${kinds})`)
  }
  return { messages: history, usage, model, sessionId, system, notes }
}

// ---------------------------------------------------------------------------------------------

const FORMATS = { 'claude-code': 'anthropic', pi: 'anthropic', codex: 'openai-responses' }
const READERS = { 'claude-code': readClaudeCode, pi: readPi, codex: readCodex }

/**
 * The session an agent's JSONL file holds, or null when `values` are not one:
 * `{ agent, agentName, format, messages, usage, lastUsage, model, sessionId, system, notes }`.
 * `lastUsage` is the usage of the request that produced the list's last reply, when the list
 * ends with that reply (or with the tool results that followed it): what the trigger reads.
 */
function readSession(values) {
  const agent = detectAgent(values)
  if (!agent) return null
  const session = READERS[agent](values)
  const last = session.usage[session.usage.length - 1]
  const replies = session.messages.length
  let lastUsage
  if (last) {
    // The reply of the last request (in Codex, its items: reasoning, message, calls), then only
    // what no model reply followed.
    const isReply = (m) => (agent === 'codex' ? isCodexOutput(m) : m.role === 'assistant')
    let end = last.message_index_after_which_the_request_was_made + 1
    if (end < replies && isReply(session.messages[end])) end++
    while (agent === 'codex' && end < replies && isReply(session.messages[end])) end++
    const replied = end > last.message_index_after_which_the_request_was_made + 1
    if (replied && !session.messages.slice(end).some(isReply)) {
      const { message_index_after_which_the_request_was_made: _index, ...u } = last
      lastUsage = u
    }
  }
  return {
    agent,
    agentName: NAMES[agent],
    format: FORMATS[agent],
    messages: session.messages,
    usage: session.usage,
    lastUsage,
    model: session.model,
    sessionId: typeof session.sessionId === 'string' && SESSION_ID.test(session.sessionId) && session.sessionId !== '.' && session.sessionId !== '..' ? session.sessionId : undefined,
    system: session.system,
    notes: session.notes,
  }
}

module.exports = { parseJsonl, detectAgent, readSession, misfit }
