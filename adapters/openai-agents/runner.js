'use strict'

// What the Agents SDK runner's rules say of a session's items (0.20,
// OpenAIResponsesCompactionOwnershipAwareSession; see the header of index.js): which of them the
// model saw in its latest exchange, where a cut keeps tool calls whole, the operationId of a
// replace_suffix transaction, and the usage a compaction adds to the run's.

const { createHash } = require('node:crypto')

const { sameData, isPlainObject } = require('../kit.js')

// The `endpoint` of the usage entry a compaction adds to the run's usage: the trigger never
// takes it for the model's.
const USAGE_ENDPOINT = 'context-compact'
// Item types whose `id` the runner drops before it compares stored items (transient ids, also in
// nested provider data), as its stripTransientCallIds does.
const TRANSIENT_ID_TYPES = new Set(['function_call', 'function_call_result'])
const TOOL_SEARCH_TYPES = new Set(['tool_search_call', 'tool_search_output'])

// An item as the model-exchange comparison sees it: without the ids the runner treats as
// transient (stored items lose them, the model input may carry them), and without a reasoning
// item's id (the runner may omit it from the model input).
function exchangeKey(item) {
  const key = withoutTransientIds(item)
  if (key !== null && typeof key === 'object' && !Array.isArray(key) && key.type === 'reasoning' && 'id' in key) {
    const { id: _id, ...rest } = key
    return rest
  }
  return key
}

function withoutTransientIds(value) {
  if (Array.isArray(value)) return value.map(withoutTransientIds)
  if (!isPlainObject(value)) return value
  let strip = false
  if (TRANSIENT_ID_TYPES.has(value.type)) strip = true
  else if (TOOL_SEARCH_TYPES.has(value.type)) {
    const provider = isPlainObject(value.providerData) ? value.providerData : {}
    const callId = value.call_id ?? value.callId ?? provider.call_id ?? provider.callId
    strip = typeof callId === 'string' && callId.length > 0
  }
  const out = {}
  for (const [key, entry] of Object.entries(value)) {
    if (strip && key === 'id') continue
    out[key] = withoutTransientIds(entry)
  }
  return out
}

// How many of the stored items, from the first, the model saw in the exchange, in order (as the
// runner's own coverage check matches them: each stored item to a later exchange item).
function seenPrefixLength(stored, exchangeItems) {
  const seen = exchangeItems.map(exchangeKey)
  let cursor = 0
  for (let i = 0; i < stored.length; i++) {
    const key = exchangeKey(stored[i])
    while (cursor < seen.length && !sameData(key, seen[cursor])) cursor++
    if (cursor === seen.length) return i
    cursor++
  }
  return stored.length
}

function callIdOf(item) {
  if (item === null || typeof item !== 'object') return null
  const id = item.callId ?? item.call_id
  return typeof id === 'string' && id.length > 0 ? id : null
}

// The cut moved back so that no tool call is on one side and its result on the other.
function wholeToolCalls(items, end) {
  let cut = end
  for (;;) {
    const after = new Set()
    for (let i = cut; i < items.length; i++) {
      const id = callIdOf(items[i])
      if (id !== null) after.add(id)
    }
    let first = cut
    for (let i = 0; i < cut; i++) {
      const id = callIdOf(items[i])
      if (id !== null && after.has(id)) {
        first = i
        break
      }
    }
    if (first === cut) return cut
    cut = first
  }
}

// JSON with sorted keys (and bytes as base64): the same items give the same text whatever order
// a store gives their keys back in.
function canonicalJson(value) {
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return 'null'
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (ArrayBuffer.isView(value)) return JSON.stringify(`base64:${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')}`)
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (typeof value.toJSON === 'function') return canonicalJson(value.toJSON())
  const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort()
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`
}

/**
 * The operationId of a compaction's replace_suffix transaction: derived from the session id and
 * the items it replaces, so a retry of the swap (the same call sent again, or a compaction of the
 * same history after a failed write, whose summary names another archive) reuses it. A store that
 * applied it refuses the id with another replacement, and its history no longer ends with those
 * items anyway: nothing is applied twice.
 */
function compactionOperationId(sessionId, expectedSuffix) {
  const hash = createHash('sha256')
  hash.update(`context-compact/replace_suffix\0${String(sessionId)}\0`)
  hash.update(canonicalJson(expectedSuffix))
  return `context-compact-${hash.digest('hex').slice(0, 40)}`
}

// What the summary calls cost, as the runner adds it to the run's usage (a RequestUsage's
// fields); null when nothing was billed that the library knows of (a custom summarizer, the
// extractive provider, a reused checkpoint).
function requestUsageOf(summaryUsage) {
  if (!summaryUsage) return null
  const cached = summaryUsage.cacheReadTokens ?? 0
  const input = (summaryUsage.inputTokens ?? 0) + cached + (summaryUsage.cacheWriteTokens ?? 0)
  const output = summaryUsage.outputTokens ?? 0
  if (input + output === 0) return null
  return {
    inputTokens: input,
    outputTokens: output,
    totalTokens: input + output,
    inputTokensDetails: { cached_tokens: cached },
    outputTokensDetails: {},
    endpoint: USAGE_ENDPOINT,
  }
}

// The usage the model reported for the run's last request (the runner's `requestUsageEntries`),
// as the trigger reads it; null for none, or for the entry of a compaction.
function lastRequestUsage(runContext) {
  const entries = runContext.usage && runContext.usage.requestUsageEntries
  if (!Array.isArray(entries) || entries.length === 0) return null
  const last = entries[entries.length - 1]
  if (!last || last.endpoint === USAGE_ENDPOINT || last.endpoint === 'responses.compact') return null
  const input = last.inputTokens
  const output = last.outputTokens ?? 0
  if (!Number.isSafeInteger(input) || input <= 0 || !Number.isSafeInteger(output) || output < 0) return null
  return { input_tokens: input, output_tokens: output }
}

// A wrapped session's own compaction usage with ours added.
function addedUsage(inner, usage) {
  const sum = (key) => (inner?.[key] ?? 0) + usage[key]
  return { ...inner, inputTokens: sum('inputTokens'), outputTokens: sum('outputTokens'), totalTokens: sum('totalTokens') }
}

// The result of compacting the first `seen` items of `snapshot` (what the model saw), with the
// items after them kept as they are, after the compacted part, and a warning saying so.
function withUnseen(result, snapshot, seen) {
  const unseen = snapshot.length - seen
  const kept = snapshot.slice(seen)
  const warning = `${unseen} item${unseen === 1 ? '' : 's'} the model had not seen (left out by an input filter, or added after its latest call) ${unseen === 1 ? 'was' : 'were'} kept as ${unseen === 1 ? 'it was' : 'they were'}, after the compacted part`
  return result.compacted
    ? { ...result, messages: [...result.messages, ...kept], warnings: [...(result.warnings ?? []), warning] }
    : { ...result, messages: snapshot, warnings: [...(result.warnings ?? []), warning] }
}

module.exports = { USAGE_ENDPOINT, seenPrefixLength, wholeToolCalls, compactionOperationId, requestUsageOf, lastRequestUsage, addedUsage, withUnseen }
