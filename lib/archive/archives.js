'use strict'

// Archives as calls of their own: persisting a list (F-006), offloading long tool results
// (PRD UC-004; logic in crates/core/src/offload.rs), and the history (SanBot): list, restore
// (rollback), prune (retention). Every call works on a directory, an object-store URL or the
// caller's `archiveStore`.

const native = require('../addon/native.js')
const { describe, invalidArgument, translateError, nativeAsync, checkedMessages, checkOptions, checkOutputDir, checkSessionId, checkInteger, shown } = require('../addon/validate.js')
const { optionsJson, formatOf } = require('../options/options.js')
const { checkArchiveStore, withArchiveStore, storeJson } = require('./store.js')
const { piecesToMessages } = require('../messages/result.js')

async function persistMessages(middle, outputDir, sessionId, options) {
  const opts = checkOptions(options)
  const store = checkArchiveStore(opts.archiveStore)
  const list = checkedMessages(middle, 'middle')
  checkOutputDir(outputDir)
  checkSessionId(sessionId)
  try {
    return await withArchiveStore(store, (id) =>
      native.persistMessagesJson(list, outputDir, sessionId, formatOf(opts), storeJson(opts, id)),
    )
  } catch (error) {
    throw translateError(error)
  }
}

const OFFLOAD_SCOPES = new Set(['tool-results', 'all'])

async function offloadToolResults(messages, options) {
  const opts = checkOptions(options)
  const list = checkedMessages(messages)
  if (opts.maxTokens === undefined || opts.maxTokens === null) {
    throw invalidArgument('options.maxTokens: expected an integer from 1 to 1000000000, got nothing (it is required)')
  }
  const maxTokens = checkInteger(opts.maxTokens, 'options.maxTokens', 1, 1_000_000_000)
  const scope = opts.scope ?? 'tool-results'
  if (!OFFLOAD_SCOPES.has(scope)) {
    throw invalidArgument(`options.scope must be 'tool-results' or 'all', got ${describe(scope)}`)
  }
  if (opts.outputDir != null) checkOutputDir(opts.outputDir, 'options.outputDir')
  if (opts.sessionId != null) checkSessionId(opts.sessionId, 'options.sessionId')
  const store = checkArchiveStore(opts.archiveStore)
  const plain = {
    outputDir: opts.outputDir,
    sessionId: opts.sessionId,
    encoding: opts.encoding,
    offload: scope,
    format: opts.format,
    storeOptions: opts.storeOptions,
  }
  const out = JSON.parse(
    await withArchiveStore(store, (id) => nativeAsync(() => native.offloadToolResultsJson(list, maxTokens, optionsJson(plain, id)))),
  )
  const changed = out.pieces.some((piece) => typeof piece !== 'number')
  return {
    messages: changed ? piecesToMessages(out.pieces, messages) : messages,
    offloaded: out.offloaded,
    archivePath: out.archivePath ?? null,
    error: out.error ?? null,
  }
}

async function listArchives(outputDir, sessionId, options) {
  checkOutputDir(outputDir)
  checkSessionId(sessionId)
  const opts = checkOptions(options)
  const store = checkArchiveStore(opts.archiveStore)
  return JSON.parse(
    await withArchiveStore(store, (id) => nativeAsync(() => native.listArchivesJson(outputDir, sessionId, storeJson(opts, id)))),
  )
}

async function restoreMessages(messages, options) {
  const opts = checkOptions(options)
  const list = checkedMessages(messages)
  const outputDir = opts.outputDir == null ? null : checkOutputDir(opts.outputDir, 'options.outputDir')
  const sessionId = opts.sessionId == null ? null : checkSessionId(opts.sessionId, 'options.sessionId')
  const store = checkArchiveStore(opts.archiveStore)
  const out = JSON.parse(
    await withArchiveStore(store, (id) =>
      nativeAsync(() => native.restoreMessagesJson(list, outputDir, sessionId, formatOf(opts), storeJson(opts, id))),
    ),
  )
  if (out.error) {
    // Not the caller's mistake but a missing or unusable archive: a plain Error with a code.
    const error = new Error(out.error.message)
    error.code = out.error.code
    throw error
  }
  // Messages that were never compacted are the caller's own objects.
  return piecesToMessages(out.pieces, messages)
}

async function pruneArchives(outputDir, options) {
  checkOutputDir(outputDir)
  const opts = checkOptions(options)
  const days = opts.olderThanDays
  // Days may be fractional (0.5: twelve hours); at most 100 years.
  if (days != null && (typeof days !== 'number' || !(days >= 0 && days <= 36_500))) {
    throw invalidArgument(`options.olderThanDays: expected a number from 0 to 36500, got ${shown(days)}`)
  }
  const sessionId = opts.sessionId == null ? null : checkSessionId(opts.sessionId, 'options.sessionId')
  const store = checkArchiveStore(opts.archiveStore)
  return JSON.parse(
    await withArchiveStore(store, (id) =>
      nativeAsync(() => native.pruneArchivesJson(outputDir, days ?? null, sessionId, storeJson(opts, id))),
    ),
  )
}

module.exports = {
  persistMessages,
  offloadToolResults,
  listArchives,
  restoreMessages,
  pruneArchives,
}
