'use strict'

// pi's session files, read as the list its model holds.
// The overview, and what every reader returns: index.js.
//
// - pi (~/.pi/agent/sessions/<dir>/<time>_<id>.jsonl): a `session` header, then entries with
//   `id`/`parentId` (version 1 files have neither: each entry follows the one before). The
//   context is the path from the last entry to the root; after a `compaction` entry it is the
//   summary, the entries from `firstKeptEntryId` on, then those after the compaction
//   (buildSessionContext in pi's session-manager.ts), converted as pi converts them for an LLM
//   (convertToLlm in messages.ts, transformMessages in pi-ai).

const { isObject, blankText } = require('./shared.js')

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

module.exports = { readPi }
