'use strict'

// The public API of context-compact. All logic is in Rust (crates/core); the JS layer (lib/)
// - passes messages to the addon as the objects themselves (read with JSON.stringify's rules),
// - builds results from the caller's own message objects, so retained messages are the very
//   objects that were passed in (same identity, same key order, nothing copied),
// - turns invalid input into TypeError, wires AbortSignal and the JS callbacks.
// This file only gathers the public names; types and documentation: index.d.ts.
//
// lib/, each module requiring only the ones listed before it (__test__/package/layers.test.ts keeps the
// graph free of cycles):
//   native.js           loads the addon (a clear error when no binary fits the platform)
//   binary.js           bytes and URL objects back from the addon's JSON as what they were
//   suggest.js          the edit distance behind "did you mean …?" (options.js, and the CLI's flags)
//   validate.js         argument checks, the addon's errors as TypeError
//   options.js          the options as the addon reads them (JSON), and the JS-only ones
//   callbacks.js        summarizer, onLog/logger, onEvent, onBeforeCompact, AbortSignal
//   store.js            the bridge to the caller's archiveStore and to object stores
//   result.js           results built from the caller's own message objects
//   counting.js         countTokens, measureTokens, shouldCompact
//   steps.js            partitionMessages, generateSummary, assembleMessages, checkMessages
//   archives.js         persistMessages, offloadToolResults, listArchives, restoreMessages, pruneArchives
//   mark-map.js         the MessageMarkMap helpers
//   overflow.js         isContextOverflow (what an error says about itself)
//   learnt.js           what was learnt about models (window, factor), kept in the store
//   recall.js           createRecallTool: the agent's tool over the archived originals
//   otel.js             OpenTelemetry spans for compactions (when @opentelemetry/api is installed)
//   custom-strategy.js  compaction with a caller's `strategy: { compress }`
//   compaction.js       compactMessages
//   snapshot.js         when the Compactor's cached count of a message is still right
//   message-counts.js   the Compactor's per-message counts, and what a step re-checks
//   background.js       the Compactor's summary prepared before the threshold (`background`)
//   compactor.js        the Compactor class
//   report/             the session report's rooms: html.js (the escaping tag), page.js (the page),
//                       chart.js (SVG), compaction.js (the cards), style.js (CSS), format.js, usage.js (billed usage)
//   report.js           renderReport: what a session report shows, gathered and computed
//   sessions/           readAgentSession: agents' session files (Claude Code, pi, Codex), one file per agent

const { countTokens, measureTokens, shouldCompact } = require('./lib/counting.js')
const { partitionMessages, generateSummary, assembleMessages, checkMessages } = require('./lib/steps.js')
const { persistMessages, offloadToolResults, listArchives, restoreMessages, pruneArchives } = require('./lib/archives.js')
const { getCurrentBatchIndices, isModified, getBatchIndex, createMarkMap } = require('./lib/mark-map.js')
const { isContextOverflow } = require('./lib/overflow.js')
const { compactMessages } = require('./lib/compaction.js')
const { Compactor } = require('./lib/compactor.js')
const { renderReport } = require('./lib/report.js')
const { readAgentSession, parseAgentSession } = require('./lib/sessions/index.js')
const { createRecallTool } = require('./lib/recall.js')

// The defaults of the options of the same names (the core's; index.d.ts documents them).
const CONTEXT_TOKEN_LIMIT = 200_000
const COMPACT_THRESHOLD_RATIO = 0.92
const TAIL_RETENTION_RATIO = 0.1
const COMPACT_MAX_RETRIES = 2

module.exports = {
  CONTEXT_TOKEN_LIMIT,
  COMPACT_THRESHOLD_RATIO,
  TAIL_RETENTION_RATIO,
  COMPACT_MAX_RETRIES,
  countTokens,
  shouldCompact,
  measureTokens,
  partitionMessages,
  generateSummary,
  assembleMessages,
  persistMessages,
  compactMessages,
  offloadToolResults,
  listArchives,
  restoreMessages,
  pruneArchives,
  checkMessages,
  getCurrentBatchIndices,
  isModified,
  getBatchIndex,
  createMarkMap,
  Compactor,
  isContextOverflow,
  renderReport,
  readAgentSession,
  parseAgentSession,
  createRecallTool,
}
