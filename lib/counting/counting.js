'use strict'

// Counting and the trigger (F-001, F-002): tokens per message and per list, and the measure
// behind the trigger. The addon counts and estimates; JS adds the counts up and finds the
// model's last message, since a usage report covers only the tokens up to it.

const native = require('../addon/native.js')
const { callNative, checkedMessages, checkOptions } = require('../addon/validate.js')
const { optionsJson, formatOf, encodingOf, needsToolBytes, unknownOptionWarnings } = require('../options/options.js')
const { reportWarnings } = require('../addon/callbacks.js')

function countTokens(messages, options) {
  const opts = checkOptions(options)
  reportWarnings(opts, unknownOptionWarnings(opts))
  const list = checkedMessages(messages)
  return callNative(() => native.countTokensJson(list, encodingOf(opts), formatOf(opts)))
}

// What the model wrote, in every format: an assistant message (Anthropic, OpenAI Chat, AI SDK,
// Bedrock, a Responses message), a Gemini `model` content, a Responses output item (reasoning,
// a call), or a LangChain AI message (an instance, its serialized or its stored form).
const RESPONSES_OUTPUT_ITEMS = /_call$|^reasoning$|^compaction$|^mcp_list_tools$|^mcp_approval_request$/

function isModelMessage(m) {
  if (m === null || typeof m !== 'object') return false
  if (m.role === 'assistant' || m.role === 'model') return true
  if (m.role === undefined && typeof m.type === 'string') {
    if (RESPONSES_OUTPUT_ITEMS.test(m.type)) return true
    if (m.type === 'ai') return true
    if (m.type === 'constructor' && Array.isArray(m.id)) return /^AIMessage(Chunk)?$/.test(m.id[m.id.length - 1])
  }
  if (typeof m._getType === 'function') {
    try {
      return m._getType() === 'ai'
    } catch {
      return false
    }
  }
  return false
}

function lastAssistantIndex(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (isModelMessage(messages[i])) return i
  }
  return -1
}

// The trigger's estimate (SPEC §4.2): usage, calibration, model factor or raw count; and
// what fires a compaction (tokens, maxMessages, maxToolOutputBytes, force). `toolBytes` is the
// tool output of the list, needed only when `maxToolOutputBytes` is set. `held`: a Compactor's
// `{ id, changes }` (options.js HeldOptions, changesJson), which stand for `opts` in the addon.
function measureCounts(messages, counts, opts, calibration, toolBytes = 0, held = null) {
  let total = 0
  for (const n of counts) total += n
  const last = lastAssistantIndex(messages)
  let after = null
  if (last >= 0) {
    after = 0
    for (let i = last + 1; i < counts.length; i++) after += counts[i]
  }
  const calibrationJson = calibration ? JSON.stringify(calibration) : null
  const json = callNative(() =>
    held !== null
      ? native.measureHeldJson(held.id, held.changes, total, after, calibrationJson, messages.length, toolBytes)
      : native.measureJson(total, after, optionsJson(opts), calibrationJson, messages.length, toolBytes),
  )
  const measure = JSON.parse(json)
  const trigger = measure.trigger ?? null
  return {
    messageTokens: total,
    rawTokens: measure.rawTokens,
    tokens: measure.tokens,
    source: measure.source,
    factor: measure.factor,
    threshold: measure.threshold,
    window: measure.window,
    // `force` is about compact(), not about whether the conversation needs it.
    shouldCompact: trigger !== null && trigger !== 'force',
    trigger: trigger === 'force' ? null : trigger,
    tokensAfterLastAssistant: after,
  }
}

function toolOutputBytes(messages, opts) {
  if (!needsToolBytes(opts)) return 0
  const list = checkedMessages(messages)
  return callNative(() => native.toolOutputBytesJson(list, formatOf(opts))).reduce((a, b) => a + b, 0)
}

function countEach(messages, opts) {
  const list = checkedMessages(messages)
  return callNative(() => native.countEachJson(list, encodingOf(opts), formatOf(opts)))
}

function measureTokens(messages, options) {
  const opts = checkOptions(options)
  reportWarnings(opts, unknownOptionWarnings(opts))
  const counts = countEach(messages, opts)
  const { tokensAfterLastAssistant, ...measure } = measureCounts(messages, counts, opts, null, toolOutputBytes(messages, opts))
  return measure
}

function shouldCompact(messages, options) {
  return measureTokens(messages, options).shouldCompact
}

module.exports = {
  isModelMessage,
  countTokens,
  measureTokens,
  shouldCompact,
  measureCounts,
  countEach,
  toolOutputBytes,
}
