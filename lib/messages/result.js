'use strict'

// Results built from the caller's own message objects: the addon answers with pieces (an index
// into the caller's list, or a message the library wrote), so retained messages are the very
// objects passed in (same identity, same key order, nothing copied); LangChain messages the
// library wrote are made in the form the list holds.

const { fromArchived } = require('../addon/binary.js')
const { formOfList, isSerializedMessage } = require('./langchain-forms.js')

const ZERO_STATS = Object.freeze({
  originalTokenCount: 0,
  compactedTokenCount: 0,
  compactionRatio: 0,
  compactedMessageCount: 0,
  retainedMessageCount: 0,
  removedMessageCount: 0,
})

// A result's pieces: an index is the caller's own message object; anything else is a message
// the library wrote (the summary, a shortened result), in the list's format. LangChain
// messages the library writes arrive in their serialized form and are made instances (or the
// stored form) when the list holds those (lib/messages/langchain-forms.js).
function piecesToMessages(pieces, messages) {
  let langChain
  return pieces.map((piece) => {
    if (typeof piece === 'number') return messages[piece]
    // Bytes and URLs the addon tagged, back as what they were (lib/addon/binary.js).
    piece = fromArchived(piece)
    if (isSerializedMessage(piece)) {
      langChain ??= formOfList(messages)
      return langChain(piece)
    }
    return piece
  })
}

// The fields every result has besides the messages and what a compaction made them, at their
// "nothing happened" values, with `fields` over them. Results built outside the addon (a custom
// strategy, the adapters' failed runs) start from here, so each has every field.
function resultFields(fields = {}) {
  return {
    provider: null,
    model: null,
    attempts: 0,
    warnings: [],
    tokens: 0,
    threshold: 0,
    measure: null,
    strategy: 'summary',
    trigger: null,
    rounds: 0,
    removed: null,
    fallback: false,
    extracted: null,
    offloaded: [],
    offloadArchivePath: null,
    transformations: [],
    thinkingArchivePath: null,
    compactionUnavailable: null,
    summaryUsage: null,
    summaryModelLearnt: null,
    summaryRequest: null,
    summaryFallback: null,
    checkpoint: null,
    background: null,
    rehydrated: [],
    ...fields,
  }
}

// A result that did not compact: the caller's messages as given, and why (`fields.error`).
function notCompactedResult(messages, fields = {}) {
  return {
    ...resultFields({ error: null, ...fields }),
    messages,
    compacted: false,
    summary: null,
    archivePath: null,
    stats: { ...ZERO_STATS },
  }
}

function buildResult(messages, outcome) {
  const base = {
    provider: outcome.provider ?? null,
    model: outcome.model ?? null,
    attempts: outcome.attempts ?? 0,
    warnings: outcome.warnings ?? [],
    tokens: outcome.triggerTokens,
    threshold: outcome.thresholdTokens,
    measure: outcome.measure ?? null,
    strategy: outcome.strategy ?? 'summary',
    trigger: outcome.trigger ?? null,
    rounds: outcome.rounds ?? 0,
    removed: outcome.removed ?? null,
    fallback: outcome.fallback ?? false,
    extracted: outcome.extracted ?? null,
    offloaded: outcome.offloaded ?? [],
    offloadArchivePath: outcome.offloadArchivePath ?? null,
    transformations: outcome.transformations ?? [],
    thinkingArchivePath: outcome.thinkingArchivePath ?? null,
    compactionUnavailable: outcome.compactionUnavailable ?? null,
    summaryUsage: outcome.summaryUsage ?? null,
    summaryModelLearnt: outcome.summaryModelLearnt ?? null,
    summaryRequest: outcome.summaryRequest ?? null,
    summaryFallback: outcome.summaryFallback ?? null,
    checkpoint: outcome.checkpoint ?? null,
    // A Compactor with `background` says what happened to its prepared summary.
    background: null,
    rehydrated: outcome.rehydrated ?? [],
  }
  if (!outcome.compacted) return notCompactedResult(messages, { ...base, error: outcome.error ?? null })
  return {
    messages: piecesToMessages(outcome.pieces, messages),
    compacted: true,
    summary: outcome.summary,
    archivePath: outcome.archivePath ?? null,
    stats: outcome.stats,
    // A compacted result still over the threshold says so (STILL_OVER_LIMIT).
    error: outcome.error ?? null,
    ...base,
  }
}

module.exports = {
  resultFields,
  notCompactedResult,
  piecesToMessages,
  buildResult,
}
