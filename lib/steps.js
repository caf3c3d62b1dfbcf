'use strict'

// The pipeline's steps as calls of their own, for callers who compose them: partition
// (F-003), the summary (F-004), assembly (F-005), and the validity report (what the APIs would
// reject with a 400; logic in crates/core/src/check.rs).

const native = require('./native.js')
const { describe, invalidArgument, callNative, checkedMessages, checkOptions, checkFunction, checkSignal, checkInteger } = require('./validate.js')
const { optionsJson, formatOf, unknownOptionWarnings } = require('./options.js')
const { wrapSummarizer, wrapLog, withSignal, reportWarnings } = require('./callbacks.js')
const { piecesToMessages } = require('./result.js')

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
  return JSON.parse(callNative(() => native.checkJson(list, formatOf(opts))))
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
