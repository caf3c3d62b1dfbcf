'use strict'

// Claude Code's session files, read as the list its model holds.
// The overview, and what every reader returns: index.js.
//
// - Claude Code (~/.claude/projects/<dir>/<session>.jsonl): one entry a line — `user`,
//   `assistant`, `system`, `progress`, `file-history-snapshot`, … — chained by `parentUuid`.
//   The context is the chain from the last message back to its root; a compaction starts a new
//   root (a `system` `compact_boundary` with `parentUuid: null`, then the summary as a user
//   entry marked `isCompactSummary`). A streamed reply is one entry per content block sharing
//   `message.id`, and the results of parallel tool calls hang off the entry of their own call,
//   beside the chain: both are pulled back in, in file order.

const { isObject, blankText, anthropicUsage } = require('./shared.js')

// The entry types this reader knows; others are skipped and counted.
const CLAUDE_TYPES = new Set(['user', 'assistant', 'system', 'summary', 'progress', 'file-history-snapshot', 'queue-operation', 'attachment'])

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

module.exports = { readClaudeCode, CLAUDE_TYPES }
