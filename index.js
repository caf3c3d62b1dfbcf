'use strict'

// The public API of context-compact. All logic is in Rust (crates/core); the JS layer (lib/)
// - passes messages to the addon as the objects themselves (read with JSON.stringify's rules),
// - builds results from the caller's own message objects, so retained messages are the very
//   objects that were passed in (same identity, same key order, nothing copied),
// - turns invalid input into TypeError, wires AbortSignal and the JS callbacks.
// This file only gathers the public names; types and documentation: index.d.ts.
//
// lib/, one folder per concern, bottom to top: a module requires modules of its own folder or of a
// folder listed before it (__test__/package/layers.test.ts keeps the graph free of cycles, and no
// folder requiring one listed after it):
//   addon/        the bridge to the native addon
//     native.js           loads the addon (a clear error when no binary fits the platform)
//     binary.js           bytes and URL objects back from the addon's JSON as what they were
//     validate.js         argument checks, the addon's errors as TypeError
//     callbacks.js        summarizer, onLog/logger, onEvent, onBeforeCompact, AbortSignal
//     snapshot.js         a value as the addon reads it: when a cached count of a message is still right
//   options/      the caller's options
//     suggest.js          the edit distance behind "did you mean …?" (options.js, and the CLI's flags)
//     options.js          the options as the addon reads them (JSON), and the JS-only ones
//   messages/     the caller's message objects in results
//     langchain-forms.js  LangChain's message forms, read and made here only
//     result.js           results built from the caller's own message objects
//   archive/      archives and their stores
//     store.js            the bridge to the caller's archiveStore and to object stores
//     archives.js         persistMessages, offloadToolResults, listArchives, restoreMessages, pruneArchives
//     recall.js           createRecallTool: the agent's tool over the archived originals
//   counting/     tokens against the window
//     counting.js         countTokens, measureTokens, shouldCompact
//     overflow.js         isContextOverflow (what an error says about itself)
//     learnt.js           what was learnt about models (window, factor), kept in the store
//   compaction/   one compaction call, whole or step by step
//     steps.js            partitionMessages, generateSummary, assembleMessages, checkMessages
//     mark-map.js         the MessageMarkMap helpers
//     otel.js             OpenTelemetry spans for compactions (when @opentelemetry/api is installed)
//     custom-strategy.js  compaction with a caller's `strategy: { compress }`
//     compaction.js       compactMessages
//   compactor/    the Compactor and its state
//     list-cache.js       what was read of each object of a list, kept while it is unchanged
//     message-counts.js   the Compactor's per-message counts, and what a step re-checks
//     background.js       the Compactor's summary prepared before the threshold (`background`)
//     compactor.js        the Compactor class
//   report/       the session report: report.js (renderReport: what it shows, gathered and computed),
//                 html.js (the escaping tag), page.js (the page), chart.js (SVG), compaction.js (the
//                 cards), style.js (CSS), format.js, usage.js (billed usage)
//   sessions/     readAgentSession: agents' session files (Claude Code, pi, Codex), one file per agent

const { countTokens, measureTokens, shouldCompact } = require('./lib/counting/counting.js')
const { partitionMessages, generateSummary, assembleMessages, checkMessages } = require('./lib/compaction/steps.js')
const { persistMessages, offloadToolResults, listArchives, restoreMessages, pruneArchives } = require('./lib/archive/archives.js')
const { getCurrentBatchIndices, isModified, getBatchIndex, createMarkMap } = require('./lib/compaction/mark-map.js')
const { isContextOverflow } = require('./lib/counting/overflow.js')
const { compactMessages } = require('./lib/compaction/compaction.js')
const { Compactor } = require('./lib/compactor/compactor.js')
const { renderReport } = require('./lib/report/report.js')
const { readAgentSession, parseAgentSession } = require('./lib/sessions/index.js')
const { createRecallTool } = require('./lib/archive/recall.js')

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
