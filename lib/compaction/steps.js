'use strict'

// The pipeline's steps as calls of their own, for callers who compose them: partition
// (F-003), the summary (F-004), assembly (F-005), and the validity report (what the APIs would
// reject with a 400; logic in crates/core/src/check.rs).

const native = require('../addon/native.js')
const { describe, invalidArgument, callNative, checkedMessages, checkOptions, checkFunction, checkSignal, checkInteger } = require('../addon/validate.js')
const { optionsJson, formatOf, unknownOptionWarnings } = require('../options/options.js')
const { wrapSummarizer, wrapLog, withSignal, reportWarnings } = require('../addon/callbacks.js')
const { piecesToMessages } = require('../messages/result.js')

function partitionMessages(messages, tailRetentionTokens, options) {
  const opts = checkOptions(options)
  reportWarnings(opts, unknownOptionWarnings(opts))
  if (tailRetentionTokens === undefined || tailRetentionTokens === null) {
    throw invalidArgument('tailRetentionTokens: expected an integer from 0 to 1000000000, got nothing (it is required)')
  }
  checkInteger(tailRetentionTokens, 'tailRetentionTokens', 0, 1_000_000_000)
  const list = checkedMessages(messages)
  const cut = callNative(() => native.partitionJson(list, tailRetentionTokens, optionsJson(opts)))
  return {
    head: messages.slice(0, cut.headLen),
    middle: messages.slice(cut.headLen, cut.tailStart),
    tail: messages.slice(cut.tailStart),
  }
}

// The summary is a user message in the format of head and tail (detected, or `options.format`):
// `{role: 'user', content}` for Anthropic, OpenAI Chat and the AI SDK, `{role: 'user', parts}`
// for Gemini, and so on.
function assembleMessages(head, summary, tail, options) {
  if (!Array.isArray(head)) throw invalidArgument(`head must be an array of message objects, got ${describe(head)}`)
  if (!Array.isArray(tail)) throw invalidArgument(`tail must be an array of message objects, got ${describe(tail)}`)
  if (typeof summary !== 'string') throw invalidArgument(`summary must be a string, got ${describe(summary)}`)
  const opts = checkOptions(options)
  if (summary.trim() === '') {
    process.emitWarning('assembleMessages: the summary is empty', { code: 'CONTEXT_COMPACT_EMPTY_SUMMARY' })
  }
  const around = [...head, ...tail]
  const written = JSON.parse(callNative(() => native.summaryMessageJson(summary, around, formatOf(opts))))
  return [...head, ...piecesToMessages(written, around), ...tail]
}

function checkMessages(messages, options) {
  const opts = checkOptions(options)
  reportWarnings(opts, unknownOptionWarnings(opts))
  const list = checkedMessages(messages)
  const problems = JSON.parse(callNative(() => native.checkJson(list, formatOf(opts))))
  if (!problems.some((p) => p.kind !== 'invalid_message')) return problems
  // The core judges a list on its Anthropic-shaped view; a list in an OpenAI format is judged
  // by its own API's rules and worded in its terms. The format is looked up only when there is
  // a problem to judge (the usual valid list costs nothing more).
  let format = formatOf(opts)
  if (format === undefined || format === 'auto') {
    try {
      format = native.countItemsJson(list, undefined, undefined).format
    } catch {
      return problems
    }
  }
  if (format === 'openai-responses') return inResponsesTerms(problems, list)
  if (format === 'openai') return inChatTerms(problems, list)
  return problems
}

/**
 * The Chat Completions API's rules, for a list named or detected as OpenAI Chat even when it
 * has no tool message to tell it by (the core then applies Anthropic's role rules): system and
 * developer messages may come anywhere, the first message need not be a user's; only an
 * empty content array is rejected.
 */
function inChatTerms(problems, messages) {
  return problems.flatMap((problem) => {
    if (problem.kind === 'system_not_at_start' || problem.kind === 'first_message_not_user') return []
    if (problem.kind !== 'empty_content') return [problem]
    const content = messages[problem.index]?.content
    if (!Array.isArray(content) || content.length > 0) return []
    return [{ ...problem, message: `Invalid 'messages[${problem.index}].content': empty array. Expected an array with minimum length 1, but got an empty array instead.` }]
  })
}

// A Responses call item and the type of the item that answers it (client tools; hosted tools
// such as `web_search_call` are answered by the API inside the response).
const RESPONSES_ANSWERS = {
  function_call: 'function_call_output',
  custom_tool_call: 'custom_tool_call_output',
  local_shell_call: 'local_shell_call_output',
  computer_call: 'computer_call_output',
  shell_call: 'shell_call_output',
  apply_patch_call: 'apply_patch_call_output',
  tool_search_call: 'tool_search_output',
}
const RESPONSES_OUTPUTS = new Set(Object.values(RESPONSES_ANSWERS))

// The ids a core problem names (its wording is crates/core/src/model/check.rs's).
function idsOf(problem) {
  const listed = /(?:immediately after|`tool_result` blocks): (.+?)\. Each /.exec(problem.message)
  if (listed) return listed[1].split(', ')
  const one = /(?:must be unique|with id): (\S+) \(first /.exec(problem.message)
  return one ? [one[1]] : []
}

/**
 * The Responses API's rules for a list of Responses items: `developer` and `system` messages
 * may come anywhere and the input need not start with a user message (no role rules); a text
 * may be empty, an empty content array may not; each client tool call needs its output item,
 * and each output item a call, matched by `call_id`. Problems point at the item itself.
 */
function inResponsesTerms(problems, items) {
  const itemOf = (id, output) =>
    items.findIndex((item) => item !== null && typeof item === 'object' && item.call_id === id && (output ? RESPONSES_OUTPUTS.has(item.type) : item.type in RESPONSES_ANSWERS))
  const out = []
  for (const problem of problems) {
    switch (problem.kind) {
      case 'system_not_at_start':
      case 'first_message_not_user':
        break
      case 'empty_content': {
        const content = items[problem.index]?.content
        if (Array.isArray(content) && content.length === 0) {
          out.push({ ...problem, message: `Invalid 'input[${problem.index}].content': empty array. Expected an array with minimum length 1, but got an empty array instead.` })
        }
        break
      }
      case 'missing_tool_result':
        for (const id of idsOf(problem)) {
          const at = itemOf(id, false)
          out.push({ index: at >= 0 ? at : problem.index, kind: problem.kind, message: `No tool output found for function call ${id}.` })
        }
        break
      case 'orphan_tool_result':
        for (const id of idsOf(problem)) {
          const at = itemOf(id, true)
          out.push({ index: at >= 0 ? at : problem.index, kind: problem.kind, message: `No tool call found for function call output with call_id ${id}.` })
        }
        break
      case 'duplicate_tool_id':
        for (const id of idsOf(problem)) {
          out.push({ index: problem.index, kind: problem.kind, message: /must be unique/.test(problem.message) ? `call_id ${id} is used by more than one tool call item` : `call_id ${id} is answered by more than one output item` })
        }
        break
      default:
        out.push(problem)
    }
  }
  return out.sort((a, b) => a.index - b.index)
}

async function generateSummary(middle, options) {
  const opts = checkOptions(options)
  reportWarnings(opts, unknownOptionWarnings(opts))
  const list = checkedMessages(middle, 'middle')
  const summarizer = wrapSummarizer(checkFunction(opts, 'summarizer'), middle, formatOf(opts))
  const signal = checkSignal(opts)
  const onLog = wrapLog(opts)
  const optsJson = optionsJson(opts)
  try {
    return await withSignal(signal, (cancelId) => native.generateSummaryJson(list, optsJson, summarizer, cancelId, onLog))
  } catch (error) {
    // "OVERLOADED: … (after 3 attempt(s))": expose the stable code like CompactResult.error does.
    const match = error && error.name !== 'AbortError' && /^([A-Z_]+): /.exec(error.message)
    if (match) error.code = match[1]
    throw error
  }
}

module.exports = {
  partitionMessages,
  assembleMessages,
  checkMessages,
  generateSummary,
}
