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

const { isObject } = require('./shared.js')
const { readClaudeCode, CLAUDE_TYPES } = require('./claude-code.js')
const { readPi } = require('./pi.js')
const { readCodex, isCodexOutput, CODEX_TYPES } = require('./codex.js')


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
