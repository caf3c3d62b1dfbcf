'use strict'

// Results built from the caller's own message objects: the addon answers with pieces (an index
// into the caller's list, or a message the library wrote), so retained messages are the very
// objects passed in (same identity, same key order, nothing copied); LangChain messages the
// library wrote are made in the form the list holds.

const { fromArchived } = require('./binary.js')

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
// stored form) when the list holds those.
function piecesToMessages(pieces, messages) {
  let langChain
  return pieces.map((piece) => {
    if (typeof piece === 'number') return messages[piece]
    // Bytes and URLs the addon tagged, back as what they were (lib/binary.js).
    piece = fromArchived(piece)
    if (piece !== null && typeof piece === 'object' && piece.lc === 1 && piece.type === 'constructor') {
      langChain ??= langChainForms(messages)
      return langChain(piece)
    }
    return piece
  })
}

function langChainClassName(message) {
  const ctor = message && typeof message === 'object' ? message.constructor : undefined
  if (!ctor || ctor === Object) return undefined
  try {
    if (typeof ctor.lc_name === 'function') return ctor.lc_name()
  } catch {
    // fall through to the constructor's own name
  }
  return ctor.name
}

function langChainForms(messages) {
  const classes = new Map()
  let stored = false
  for (const message of messages) {
    const name = langChainClassName(message)
    if (name && /Message(Chunk)?$/.test(name) && !classes.has(name)) classes.set(name, message.constructor)
    if (message && typeof message === 'object' && message.lc === undefined && message.data && typeof message.type === 'string') stored = true
  }
  let library
  const fromLibrary = (name) => {
    if (library === undefined) {
      try {
        const { createRequire } = require('node:module')
        const path = require('node:path')
        library = createRequire(path.join(process.cwd(), 'index.js'))('@langchain/core/messages')
      } catch {
        library = null
      }
    }
    return library ? library[name] : undefined
  }
  const STORED_TYPES = { HumanMessage: 'human', AIMessage: 'ai', SystemMessage: 'system', ToolMessage: 'tool' }
  return (serialized) => {
    const name = serialized.id[serialized.id.length - 1]
    if (classes.size > 0) {
      const Ctor = classes.get(name) ?? fromLibrary(name)
      if (typeof Ctor === 'function') return new Ctor(serialized.kwargs)
    }
    if (stored) return { type: STORED_TYPES[name] ?? 'human', data: { ...serialized.kwargs } }
    return serialized
  }
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
