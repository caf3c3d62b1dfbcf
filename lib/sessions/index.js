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

const fs = require('node:fs')

const { isObject, invalidArgument } = require('./shared.js')
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

// ---------------------------------------------------------------------------------------------
// The library's entry points: a file, or its text

/** A value as an error names it: `an object of type "summary"`. */
function describeValue(value) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value !== 'object') return `a ${typeof value}`
  return typeof value.type === 'string' ? `an object of type ${JSON.stringify(value.type.slice(0, 40))}` : 'an object without a "messages" array'
}

/**
 * The session in JSONL `text`, with a note of the lines skipped; null when the text is not JSON
 * lines (no line is JSON, or its first line is not). Text that is JSON lines but no agent's
 * session is a TypeError naming the line that does not fit. `name` starts the error's text.
 */
function sessionOfText(text, name) {
  const { entries, malformed } = parseJsonl(text)
  if (entries.length === 0) return null
  // A line an agent was still writing (or a torn copy) is skipped, as the agents skip it.
  if (malformed.length > 0 && malformed[0] < entries[0].line) return null
  const values = entries.map((e) => e.value)
  const session = readSession(values)
  if (!session) {
    const off = misfit(values)
    if (off) {
      const entry = entries[off.at]
      throw invalidArgument(
        `${name}: one JSON value a line, but not a session file of Claude Code, pi or Codex: line ${entry.line} (${describeValue(entry.value)}) is not ${off.what}, as the other lines of this ${off.agent} file are`,
      )
    }
    throw invalidArgument(`${name}: one JSON value a line, but not a session file of Claude Code, pi or Codex (line ${entries[0].line}: ${describeValue(entries[0].value)})`)
  }
  if (malformed.length > 0) {
    const n = malformed.length
    session.notes = [
      ...session.notes,
      `${n} line${n === 1 ? '' : 's'} that ${n === 1 ? 'is' : 'are'} not JSON skipped (line ${malformed.slice(0, 3).join(', ')}${n > 3 ? ', …' : ''})`,
    ]
  }
  return session
}

/** `options.name`, checked, or `fallback`. */
function nameOption(options, fallback = 'session') {
  if (options === undefined || options === null) return fallback
  if (typeof options !== 'object' || Array.isArray(options)) throw invalidArgument(`options must be an object, got ${describeValue(options)}`)
  if (options.name === undefined || options.name === null) return fallback
  if (typeof options.name !== 'string') throw invalidArgument(`options.name must be a string, got ${describeValue(options.name)}`)
  return options.name
}

/** index.d.ts `parseAgentSession`: the session an agent's JSONL text holds. */
function parseAgentSession(text, options) {
  const name = nameOption(options)
  if (typeof text !== 'string') throw invalidArgument(`text must be a string (the JSONL text of a session file), got ${describeValue(text)}`)
  const session = sessionOfText(text, name)
  if (!session) {
    const first = text.split('\n').findIndex((line) => line.trim() !== '')
    throw invalidArgument(
      first < 0
        ? `${name}: empty: a session file of Claude Code, pi or Codex holds one JSON value a line`
        : `${name}: line ${first + 1} is not JSON: a session file of Claude Code, pi or Codex holds one JSON value a line`,
    )
  }
  return session
}

/** index.d.ts `readAgentSession`: the session an agent's JSONL file holds. */
async function readAgentSession(file, options) {
  if (typeof file !== 'string' && !(file instanceof URL)) throw invalidArgument(`file must be a path (string or file: URL), got ${describeValue(file)}`)
  if (file === '') throw invalidArgument('file must be a path, got an empty string')
  const name = nameOption(options, String(file))
  let text
  try {
    text = await fs.promises.readFile(file, 'utf8')
  } catch (error) {
    const why = { ENOENT: 'no such file', EISDIR: 'a directory, not a file', EACCES: 'permission denied', EPERM: 'permission denied' }[error.code] ?? String(error.message).split('\n')[0]
    const failure = new Error(`cannot read ${name}: ${why}`, { cause: error })
    failure.code = error.code ?? 'ERR_CONTEXT_COMPACT_READ'
    throw failure
  }
  return parseAgentSession(text, { ...(options ?? {}), name })
}

module.exports = { parseJsonl, detectAgent, readSession, misfit, sessionOfText, parseAgentSession, readAgentSession, describeValue }
