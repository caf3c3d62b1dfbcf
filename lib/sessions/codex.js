'use strict'

// Codex's rollout files, read as the list its model holds.
// The overview, and what every reader returns: index.js.
//
// - Codex (~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl): `{timestamp, type,
//   payload}` lines — `session_meta`, `turn_context`, `response_item` (Responses API items),
//   `event_msg` (`token_count` carries the usage), `compacted` (its `replacement_history` is
//   the history from then on).

const { isObject } = require('./shared.js')

// The record types this reader knows; others are skipped and counted.
const CODEX_TYPES = new Set(['session_meta', 'response_item', 'event_msg', 'turn_context', 'compacted'])

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

module.exports = { readCodex, isCodexOutput, CODEX_TYPES }
