'use strict'

// A session report (issue 24): one self-contained HTML page of how a conversation grew, when
// and why it was compacted, what each compaction replaced and cost, and what fills the list
// now. This module gathers and computes what the page shows; report/page.js writes the page.
//
// What it reads:
// - the list as it is now, each message described by the addon (formats/parts.rs): role,
//   blocks with their tokens, tool names, a short preview; in every format, through the view;
// - the full conversation, restored through the archives (restoreMessages);
// - the session's records: archives (listArchives), their metadata files and the audit log
//   (events.jsonl on disk, one object per event on a store), read by the addon on disk, on an
//   object store or through the caller's archiveStore alike;
// - billed usage, when known: the `usage` option (one entry per request, as the usage files of
//   ../shared/data/real/ hold them) or usage recorded on the model's messages.

const native = require('../addon/native.js')
const { describe, invalidArgument, callNative, nativeAsync, checkedMessages, checkOptions, checkOutputDir, checkSessionId } = require('../addon/validate.js')
const { checkArchiveStore, withArchiveStore, storeJson } = require('../archive/store.js')
const { measureTokens } = require('../counting/counting.js')
const { listArchives, restoreMessages } = require('../archive/archives.js')
const { renderHtml } = require('./page.js')
const { num, usageIndex, billedOf, billedRequests, usageNow } = require('./usage.js')

const SOURCE_KEY = 'x-context-compact-source'
const DEFAULT_OUTPUT_DIR = './.context-compact'
const DEFAULT_SESSION_ID = 'default'
const DEFAULT_RATIO = 0.92
const LEDGER_HEADER = '## Ledger (extracted from tool calls)'
const LEDGER_SECTIONS = ['Files read', 'Files created', 'Files modified', 'Files deleted', 'Commands run', 'Failed tool calls']

function checkReportOptions(options) {
  const opts = checkOptions(options)
  const outputDir = opts.outputDir == null ? DEFAULT_OUTPUT_DIR : checkOutputDir(opts.outputDir, 'options.outputDir')
  const sessionId = opts.sessionId == null ? DEFAULT_SESSION_ID : checkSessionId(opts.sessionId, 'options.sessionId')
  const archiveStore = checkArchiveStore(opts.archiveStore)
  if (opts.usage != null && !Array.isArray(opts.usage)) {
    throw invalidArgument(`options.usage must be an array of usage entries (one per request), got ${describe(opts.usage)}`)
  }
  for (const [i, entry] of (opts.usage ?? []).entries()) {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      throw invalidArgument(`options.usage[${i}] must be an object, got ${describe(entry)}`)
    }
    const index = usageIndex(entry)
    if (!Number.isInteger(index) || index < 0) {
      throw invalidArgument(
        `options.usage[${i}].message_index_after_which_the_request_was_made (or .index) must be a non-negative integer, got ${describe(index)}`,
      )
    }
  }
  if (opts.title != null && typeof opts.title !== 'string') {
    throw invalidArgument(`options.title must be a string, got ${describe(opts.title)}`)
  }
  return { opts, outputDir, sessionId, archiveStore }
}

// What the addon says of each message (formats/parts.rs).
function describeItems(messages, encoding, format, previewChars) {
  return JSON.parse(callNative(() => native.reportItemsJson(messages, encoding, format, previewChars)))
}

// ---------------------------------------------------------------------------------------------
// The session's records

function metaNameOf(fileName) {
  return fileName.replace(/\.json$/, '.meta.json')
}

async function readSession(outputDir, sessionId, names, opts, store) {
  return JSON.parse(
    await withArchiveStore(store, (id) => nativeAsync(() => native.readSessionJson(outputDir, sessionId, names, storeJson(opts, id)))),
  )
}

/** An archive's entries as the caller's items (a view message holds its items) and its shape. */
function archiveItems(content) {
  const items = []
  const sizes = []
  let format = null
  for (const entry of content) {
    const source = entry !== null && typeof entry === 'object' ? entry[SOURCE_KEY] : null
    if (source && Array.isArray(source.items)) {
      items.push(...source.items)
      sizes.push(source.items.length)
      format = format ?? (typeof source.format === 'string' ? source.format : null)
    } else {
      items.push(entry)
      sizes.push(1)
    }
  }
  return { items, sizes, format }
}

/** The ledger section of a summary (crates/core/src/carry/ledger/mod.rs `Ledger::parse`), or null. */
function parseLedger(summary) {
  if (typeof summary !== 'string') return null
  const start = summary.indexOf(LEDGER_HEADER)
  if (start < 0) return null
  const ledger = Object.fromEntries(LEDGER_SECTIONS.map((title) => [title, []]))
  let current = null
  for (const line of summary.slice(start + LEDGER_HEADER.length).split('\n')) {
    if (line.startsWith('## ')) break
    if (line.startsWith('- ')) {
      if (current) ledger[current].push(line.slice(2))
      continue
    }
    current = LEDGER_SECTIONS.find((title) => line.startsWith(`${title}:`)) ?? null
  }
  return ledger
}

/** What an archive holds: messages by role, tool calls by name, earlier summaries, thinking. */
function archiveSummary(described, sizes) {
  const byRole = {}
  const tools = {}
  let tokens = 0
  let thinkingTokens = 0
  let thinkingBlocks = 0
  const summaries = []
  for (const item of described.items) {
    if (item.ack) continue
    tokens += item.tokens
    if (item.summary !== undefined) {
      summaries.push(item.summary)
      continue
    }
    const role = (byRole[item.role] ??= { messages: 0, tokens: 0 })
    role.messages += 1
    role.tokens += item.tokens
    for (const part of item.parts) {
      if (part.type === 'thinking' || part.type === 'redacted_thinking') {
        thinkingTokens += part.tokens
        thinkingBlocks += 1
      }
      if (part.type.endsWith('tool_use') && part.name) {
        const tool = (tools[part.name] ??= { calls: 0, failed: 0, resultTokens: 0 })
        tool.calls += 1
      } else if (part.type.endsWith('tool_result') && part.name) {
        const tool = (tools[part.name] ??= { calls: 0, failed: 0, resultTokens: 0 })
        tool.resultTokens += part.tokens
        if (part.error) tool.failed += 1
      }
    }
  }
  return { items: described.items.length, entries: sizes.length, tokens, byRole, tools, summaries, thinkingTokens, thinkingBlocks }
}

// ---------------------------------------------------------------------------------------------
// Where each compaction happened in the full conversation

/**
 * The number of the full conversation's messages an archive stands for, counted in `unit`
 * ('items': the caller's items; 'view': view messages, the unit of the audit log's counts for
 * the formats read through a view): its messages, each earlier summary in it replaced by what
 * that archive stands for.
 */
function expandedCount(name, unit, archives, memo, seen = new Set()) {
  const key = `${unit}:${name}`
  if (memo.has(key)) return memo.get(key)
  const archive = archives.get(name)
  if (!archive || !archive.items || seen.has(name)) return null
  seen.add(name)
  const stands = (summary) => (summary ? expandedCount(summary, unit, archives, memo, seen) : null) ?? 1
  let n = 0
  if (!archive.described) {
    n = unit === 'view' ? archive.sizes.length : archive.items.length
  } else if (unit === 'items') {
    for (const item of archive.described.items) n += item.summary !== undefined ? stands(item.summary) : item.ack ? 0 : 1
  } else {
    let at = 0
    for (const size of archive.sizes) {
      const first = archive.described.items[at]
      n += first && first.summary !== undefined ? stands(first.summary) : 1
      at += size
    }
  }
  seen.delete(name)
  memo.set(key, n)
  return n
}

/**
 * The full conversation's message count when compaction `c` ran: the list it was given, with
 * its archive's messages counted as what they stand for. Said in the unit of the recorded
 * counts, then as items of the full conversation (`viewEnds`: the end item of each view
 * message).
 */
function positionOf(c, archives, memo, viewEnds, total) {
  const archive = archives.get(c.archive)
  const stats = c.stats
  if (!archive || !archive.items || !stats) return null
  const given = num(stats.compactedMessageCount) + num(stats.retainedMessageCount) + num(stats.removedMessageCount)
  // The audit log counts view messages (one per turn in the Responses API, …); a log that
  // counts the caller's items is read as such.
  const unit = stats.compactedMessageCount !== archive.sizes.length && stats.compactedMessageCount === archive.items.length ? 'items' : 'view'
  const middle = unit === 'view' ? archive.sizes.length : archive.items.length
  const expanded = expandedCount(c.archive, unit, archives, memo)
  if (expanded === null) return null
  const p = given - middle + expanded
  if (unit === 'items') return Math.max(0, Math.min(total, p))
  if (p <= 0) return 0
  return p > viewEnds.length ? total : viewEnds[p - 1]
}

// ---------------------------------------------------------------------------------------------
// The report

/**
 * The archives this list stands on: those its summaries name, and, through their archives,
 * the ones those replaced (a summary compacted again is in the next archive).
 */
function chainOf(current, archives) {
  const chain = new Set()
  const visit = (items) => {
    for (const item of items ?? []) {
      if (typeof item.summary !== 'string' || chain.has(item.summary)) continue
      chain.add(item.summary)
      visit(archives.get(item.summary)?.described?.items)
    }
  }
  visit(current.items)
  return chain
}

/**
 * The numbers a report shows, computed from the list, its session and the options (the model
 * the page is written from; see renderReport).
 */
async function reportData(messages, options, internal = {}) {
  const { opts, outputDir, sessionId, archiveStore } = checkReportOptions(options)
  const list = checkedMessages(messages)
  const encoding = opts.encoding == null ? undefined : String(opts.encoding)
  const previewChars = list.length > 1000 ? 60 : 120
  const current = describeItems(list, encoding, opts.format == null ? undefined : String(opts.format), previewChars)
  const format = current.format
  const notes = []
  const location = { storeOptions: opts.storeOptions, archiveStore: archiveStore ?? undefined }

  // The session: its archives, then the records beside them and the archives' content.
  // `internal.records === false` (the CLI on a list whose summaries name no archive, with no
  // session asked for): the session's records are another run's, not this list's.
  const listed = internal.records === false ? [] : await listArchives(outputDir, sessionId, location)
  const names = []
  for (const a of listed) {
    names.push(a.fileName)
    if (a.metaPath) names.push(metaNameOf(a.fileName))
  }
  const records = internal.records === false ? { files: [], events: [] } : await readSession(outputDir, sessionId, names, opts, archiveStore)
  const files = new Map(names.map((name, i) => [name, records.files[i]]))
  const archives = new Map()
  for (const a of listed) {
    const content = files.get(a.fileName)
    const entry = { info: a, meta: files.get(metaNameOf(a.fileName)) ?? null, items: null, sizes: [], described: null, held: null, kept: {} }
    // A compaction that changed kept messages archives `{ messages, keptOriginals }` (one archive,
    // one sequence number); otherwise the archive is the array of the replaced messages.
    const replaced = Array.isArray(content) ? content : Array.isArray(content?.messages) ? content.messages : null
    if (replaced && !Array.isArray(content) && content.keptOriginals && typeof content.keptOriginals === 'object') {
      for (const [kind, originals] of Object.entries(content.keptOriginals)) {
        if (!Array.isArray(originals)) continue
        try {
          const kept = archiveItems(originals)
          entry.kept[kind] = archiveSummary(describeItems(kept.items, encoding, kept.format ?? undefined, 120), kept.sizes)
        } catch (error) {
          notes.push(`${a.fileName}: keptOriginals.${kind} holds messages that cannot be read: ${error.message}`)
        }
      }
    }
    if (replaced) {
      const { items, sizes, format: archivedFormat } = archiveItems(replaced)
      entry.items = items
      entry.sizes = sizes
      try {
        entry.described = describeItems(items, encoding, archivedFormat ?? undefined, 120)
        entry.held = archiveSummary(entry.described, sizes)
      } catch (error) {
        notes.push(`${a.fileName} holds messages that cannot be read: ${error.message}`)
      }
    } else {
      notes.push(`${a.fileName} could not be read as a JSON array of messages.`)
    }
    archives.set(a.fileName, entry)
  }

  // The full conversation, restored through the archives.
  let full = list
  let fullItems = current.items
  if (current.items.some((item) => item.summary !== undefined)) {
    try {
      full = await restoreMessages(list, { outputDir, sessionId, format, ...location })
      fullItems = full === list ? current.items : describeItems(full, encoding, format, 0).items
    } catch (error) {
      if (error instanceof TypeError) throw error
      notes.push(`The full conversation could not be restored (${error.code ?? 'error'}: ${error.message}); the curve shows the list as it is.`)
    }
  }
  const counts = fullItems.map((item) => item.tokens)
  const viewEnds = []
  fullItems.forEach((item, i) => {
    viewEnds[item.group] = i + 1
  })

  // The compactions: the audit log's `compacted` events with their archives; an archive with
  // metadata but no event (a log that could not be written) is one too.
  const events = records.events.filter((e) => e && typeof e === 'object')
  const compactions = []
  const byArchive = new Map()
  for (const event of events) {
    if (event.event !== 'compacted') continue
    const c = compactionOf(event, archives.get(event.archive), archives)
    compactions.push(c)
    if (event.archive) byArchive.set(event.archive, c)
  }
  for (const [name, archive] of archives) {
    if (byArchive.has(name) || !archive.meta) continue
    const c = compactionOf(null, archive, archives)
    compactions.push(c)
    byArchive.set(name, c)
  }
  compactions.sort((a, b) => (a.sequence ?? Infinity) - (b.sequence ?? Infinity) || String(a.time).localeCompare(String(b.time)))
  compactions.forEach((c, i) => {
    c.number = i + 1
  })
  const memo = new Map()
  for (const c of compactions) c.position = positionOf(c, archives, memo, viewEnds, counts.length)
  // Where each compaction comes from: this list (its summaries lead to the archive), or the
  // session's audit log only (another run under the same session id).
  const chain = chainOf(current, archives)
  for (const c of compactions) c.origin = c.archive && chain.has(c.archive) ? 'list' : 'log'

  // The window and threshold the page draws and states: the threshold the compactions ran with
  // (the audit log's, the window derived from it) unless a window is given (contextTokenLimit),
  // else the options' (an agentModel's window), else the defaults. The estimate now is measured
  // against that same window, so that the chart and the text say the same numbers.
  const measureOptions = { ...opts, archiveStore: undefined, usage: undefined }
  for (const key of ['outputDir', 'sessionId', 'storeOptions', 'title']) delete measureOptions[key]
  const ratio = typeof opts.thresholdRatio === 'number' ? opts.thresholdRatio : DEFAULT_RATIO
  const asGiven = measureTokens([], { ...measureOptions, thresholdRatio: 1 }).threshold
  let window = asGiven
  let threshold = measureTokens([], measureOptions).threshold
  let linesFrom = opts.contextTokenLimit != null || opts.agentModel != null || opts.model != null ? 'options' : 'default'
  const recorded = [...events].reverse().find((e) => typeof e.threshold === 'number' && e.threshold > 0)
  if (recorded && opts.contextTokenLimit == null) {
    if (linesFrom === 'options' && recorded.threshold !== threshold) {
      notes.push(`The compactions ran with a threshold of ${recorded.threshold.toLocaleString('en-US')} tokens (the audit log's); the chart and the text use it, not the ${threshold.toLocaleString('en-US')} the options give (pass contextTokenLimit, or --limit, to draw another window).`)
    }
    threshold = recorded.threshold
    window = Math.round(recorded.threshold / ratio)
    linesFrom = 'log'
  } else if (recorded && recorded.threshold !== threshold) {
    notes.push(`The compactions ran with a threshold of ${recorded.threshold.toLocaleString('en-US')} tokens (the audit log's); the chart and the text use the ${threshold.toLocaleString('en-US')} of the window given.`)
  }
  const lastUsage = usageNow(list, full === list, opts.usage)
  const measureNow = measureTokens(list, { ...measureOptions, contextTokenLimit: window, ...(lastUsage ? { usage: lastUsage } : {}) })
  const extraTokens = measureTokens([], { ...measureOptions, thresholdRatio: 1 }).rawTokens

  // The curves: the full conversation never compacted, and the context the model held.
  const cumulative = []
  const context = []
  let sum = extraTokens
  let held = extraTokens
  const order = compactions.filter((c) => c.position !== null).sort((a, b) => a.position - b.position)
  let next = 0
  const drops = []
  const applyAt = (x) => {
    while (next < order.length && order[next].position === x) {
      const c = order[next++]
      const after = c.stats ? num(c.stats.compactedTokenCount) + extraTokens : held
      drops.push({ number: c.number, x, before: held, after, estimate: c.tokens, threshold: c.threshold })
      held = after
    }
  }
  applyAt(0)
  counts.forEach((n, i) => {
    sum += n
    held += n
    cumulative.push(sum)
    context.push(held)
    applyAt(i + 1)
  })
  for (const drop of drops) {
    const c = compactions[drop.number - 1]
    c.drawnBefore = drop.before
    c.drawnAfter = drop.after
  }

  const billed = billedRequests(full, fullItems, opts.usage)
  const outOfRange = billed.filter((b) => b.index >= counts.length)
  if (outOfRange.length > 0) {
    notes.push(`${outOfRange.length} usage entr${outOfRange.length === 1 ? 'y names messages' : 'ies name messages'} past the conversation's ${counts.length}; not shown.`)
  }
  const shownBilled = billed
    .filter((b) => b.index < counts.length)
    .map((b) => ({ ...b, estimate: context[b.index], cumulative: cumulative[b.index] }))

  // Other archives: the originals of offloaded texts and of removed thinking, and archives
  // written outside a compaction (persistMessages, offloadToolResults).
  const roles = new Map()
  for (const c of compactions) {
    if (c.offloadArchive) roles.set(c.offloadArchive, `originals of the texts offloaded by compaction #${c.number}`)
    if (c.thinkingArchive) roles.set(c.thinkingArchive, `originals of the turns whose thinking compaction #${c.number} removed`)
    if (c.archive) roles.set(c.archive, `messages replaced by compaction #${c.number}`)
  }
  const archiveList = [...archives.values()].map((a) => ({
    ...a.info,
    role: roles.get(a.info.fileName) ?? 'written outside a compaction (persistMessages, offloadToolResults)',
    compaction: byArchive.get(a.info.fileName)?.number ?? null,
    held: a.held,
  }))

  // The list now.
  const summaryLinks = new Map(compactions.filter((c) => c.archive).map((c) => [c.archive, c.number]))
  const nowItems = current.items.map((item, index) => ({ ...item, index, compaction: item.summary ? (summaryLinks.get(item.summary) ?? null) : null }))

  return {
    title: opts.title ?? `Session ${sessionId}`,
    version: require('../../package.json').version,
    format,
    encoding: encoding ?? 'o200k_base',
    outputDir,
    sessionId,
    notes,
    now: {
      items: nowItems,
      measure: measureNow,
      extraTokens,
    },
    full: {
      count: counts.length,
      restored: full !== list,
      cumulative,
      context,
      total: counts.reduce((a, b) => a + b, 0),
    },
    lines: { window, threshold, ratio, from: linesFrom },
    compactions,
    drops,
    billed: shownBilled,
    usageGiven: Array.isArray(opts.usage),
    events,
    archives: archiveList,
  }
}

/** One compaction from its audit event and archive (either may be missing). */
function compactionOf(event, archive, archives) {
  const meta = archive ? archive.meta : null
  const e = event ?? {}
  const summary = typeof meta?.summary === 'string' ? meta.summary : (archive?.info.summary ?? null)
  const offloadArchive = typeof e.offloadArchive === 'string' ? e.offloadArchive : null
  const thinkingArchive = typeof e.thinkingArchive === 'string' ? e.thinkingArchive : null
  const tokens = typeof e.tokens === 'number' ? e.tokens : typeof meta?.tokens === 'number' ? meta.tokens : null
  const threshold = typeof e.threshold === 'number' ? e.threshold : typeof meta?.threshold === 'number' ? meta.threshold : null
  const notice = typeof summary === 'string' && !/^\[context-compact\] [^\n]*was compacted into the summary below\./.test(summary)
  return {
    number: 0,
    sequence: e.sequence ?? meta?.sequence ?? archive?.info.sequence ?? null,
    time: e.time ?? meta?.createdAt ?? archive?.info.createdAt ?? null,
    archive: e.archive ?? archive?.info.fileName ?? null,
    archivePath: archive?.info.path ?? null,
    archiveBytes: archive?.info.sizeBytes ?? null,
    metaPath: archive?.info.metaPath ?? null,
    missingArchive: !archive,
    trigger: typeof e.trigger === 'string' ? e.trigger : null,
    estimate: typeof e.estimate === 'string' ? e.estimate : null,
    strategy: typeof e.strategy === 'string' ? e.strategy : summary === null ? null : notice ? 'a strategy without a summary' : 'summary',
    fallback: e.fallback === true,
    rounds: typeof e.rounds === 'number' ? e.rounds : null,
    provider: e.provider ?? meta?.provider ?? null,
    model: e.model ?? meta?.model ?? null,
    attempts: e.attempts ?? meta?.attempts ?? null,
    summaryRequest: e.summaryRequest ?? null,
    summaryUsage: e.summaryUsage && typeof e.summaryUsage === 'object' ? e.summaryUsage : null,
    tokens,
    threshold,
    stats: e.stats ?? meta?.stats ?? null,
    head: meta?.headCount ?? null,
    tail: meta?.tailCount ?? null,
    summary,
    ledger: parseLedger(summary),
    replaced: archive?.held ?? null,
    offloaded: typeof e.offloaded === 'number' ? e.offloaded : null,
    offloadArchive,
    offloadHeld: offloadArchive ? (archives.get(offloadArchive)?.kept.shortened ?? (offloadArchive === e.archive ? null : archives.get(offloadArchive)?.held) ?? null) : null,
    transformations: typeof e.transformations === 'number' ? e.transformations : null,
    thinkingArchive,
    thinkingHeld: thinkingArchive ? (archives.get(thinkingArchive)?.kept.thinkingRemoved ?? (thinkingArchive === e.archive ? null : archives.get(thinkingArchive)?.held) ?? null) : null,
    code: e.code ?? null,
    reason: e.reason ?? null,
    warnings: Array.isArray(e.warnings) ? e.warnings : [],
    position: null,
    drawnBefore: null,
    drawnAfter: null,
  }
}

async function renderReport(messages, options) {
  return renderHtml(await reportData(messages, options))
}

/** The page and its numbers (the CLI says where the compactions come from). */
async function renderReportWith(messages, options, internal) {
  const data = await reportData(messages, options, internal)
  return { html: renderHtml(data), data }
}

module.exports = {
  renderReport,
  renderReportWith,
  reportData,
  billedOf,
  parseLedger,
}
