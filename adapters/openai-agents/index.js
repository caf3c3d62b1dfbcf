'use strict'

// context-compact/openai-agents: CompactingSession, an OpenAI Agents SDK (@openai/agents)
// Session that wraps any other Session and compacts its items with a Compactor.
//
// Where it sits in the SDK's runner (@openai/agents-core, runner/sessionPersistence):
// - run(agent, input, { session }) reads the session once, when the run starts (getItems), and
//   sends the model that history plus the run's own items, which it keeps in memory: it never
//   reads the session again during the run.
// - It appends what the run produced (addItems): the input before the first model call, the
//   rest when the run ends (streamed or not), and then calls the session's
//   runCompaction(args, runContext) when the session has one
//   (OpenAIResponsesCompactionAwareSession), awaiting it before the run resolves.
// So the compaction runs in runCompaction, after the run's items are saved, and the next run
// reads the compacted list. It cannot shrink the request of a run already going (the runner
// holds its own copy): thresholdRatio has to leave room for what one run adds.
//
// The items stay the SDK's own (AgentInputItem): the library's Responses reader reads the
// SDK's dialect of those items (`callId`, `function_call_result`, structured outputs,
// `hosted_tool_call`, …), so kept items are the very objects, the archives hold the SDK's
// items, and a restore gives them back exactly. The summary is a user message item
// `{ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }`.
//
// Cost below the threshold: the runner calls runCompaction after every run; reading the wrapped
// session each time would copy the whole history (MemorySession clones every item it returns). The session keeps its own copy of the items instead, updated by
// the writes that go through it (addItems, popItem, clearSession) and checked against every full
// read (getItems); the Compactor counts each item once (its cache is keyed by the item object).
// Before it writes a compaction back, the session reads the wrapped session and compacts only
// if the history it summarized is still there, item for item.
//
// The runner's rules for automatic compaction (0.20: OpenAIResponsesCompactionOwnershipAwareSession):
// - The runner reads the history through getItemsWithCompactionOwnership and appends through
//   addItemsWithCompactionOwnership; the receipt it gets stays valid while only its own run
//   writes. It then calls runCompaction(args, runContext, ownership, modelExchange): a stale
//   receipt (another writer came in between) or no successful model exchange skips the
//   compaction, as the SDK's own compaction session does.
// - Only what the model saw is summarized: the stored items are matched, in order, against the
//   latest model exchange (its input, after any callModelInputFilter, and its output). The
//   compaction covers the longest prefix the model saw (never splitting a tool call from its
//   result); the items from the first unseen one on (hidden by a filter, or added after the
//   exchange) are kept as they are after the summary, and result.warnings says so. Nothing seen
//   at the start: the compaction is skipped (lastResult.error.code 'NOT_SEEN').
// - A wrapped session with applyHistoryTransaction gets the swap as one replace_suffix
//   transaction whose operationId is derived from the session id and the items replaced: a
//   retry sends the same id (idempotent), and a suffix that no longer matches
//   (someone appended) changes nothing: the compaction is skipped ('SESSION_CHANGED').

const { createHash } = require('node:crypto')
const { createRequire } = require('node:module')

const { Compactor, restoreMessages, createRecallTool } = require('../../index.js')
const { notCompactedResult } = require('../../lib/result.js')
const { compactionFacts } = require('../../lib/otel.js')

// The format the library reads the SDK's items in.
const FORMAT = 'openai-responses'
// The `endpoint` of the usage entry a compaction adds to the run's usage: the trigger never
// takes it for the model's.
const USAGE_ENDPOINT = 'context-compact'
const SESSION_METHODS = ['getSessionId', 'getItems', 'addItems', 'popItem', 'clearSession']
// Item types whose `id` the runner drops before it compares stored items (transient ids, also in
// nested provider data), as its stripTransientCallIds does.
const TRANSIENT_ID_TYPES = new Set(['function_call', 'function_call_result'])
const TOOL_SEARCH_TYPES = new Set(['tool_search_call', 'tool_search_output'])
// The fields of a Compactor's result that a failed write-back keeps.
const MEASURED_FIELDS = [
  'provider', 'model', 'warnings', 'tokens', 'threshold', 'measure', 'strategy', 'trigger', 'rounds', 'removed',
  'fallback', 'extracted', 'compactionUnavailable', 'summaryUsage', 'summaryModelLearnt', 'summaryRequest', 'checkpoint',
  'background',
]
// Options that say something about one call, not about the session.
const PER_CALL_OPTIONS = {
  usage: 'the session reads the usage of each run itself (see runUsage)',
  overflow: 'pass the overflow error to compact({ overflow }) instead',
  force: 'call compact({ force: true }) to compact now',
}

// The SDK's tracing, loaded on first use: null when @openai/agents (an optional peer) is absent.
// From @openai/agents-core, beside @openai/agents: loading @openai/agents itself (its CommonJS
// build, when the app imported the ES module) would install its default trace exporter again,
// over the trace processors the app set.
let agentsTracing
function tracing() {
  if (agentsTracing === undefined) {
    try {
      const agents = createRequire(require.resolve('@openai/agents'))('@openai/agents-core')
      agentsTracing = typeof agents.createCustomSpan === 'function' && typeof agents.getCurrentTrace === 'function' ? agents : null
    } catch {
      agentsTracing = null
    }
  }
  return agentsTracing
}

// Each compaction as a custom span `context_compact.compact` of the run's trace (the SDK's own
// tracing: the Traces dashboard, or your trace processors), under the span current when the
// runner called runCompaction; its data is what the compaction did. Outside a trace the
// compaction just runs.
async function inCustomSpan(items, compact) {
  const agents = tracing()
  if (agents === null || agents.getCurrentTrace() === null) return compact()
  const span = agents.createCustomSpan({ data: { name: 'context_compact.compact', data: {} } })
  span.start()
  try {
    const result = await compact()
    span.spanData.data = compactionFacts(items, result)
    if (!result.compacted && result.error) span.setError({ message: result.error.message, data: { code: result.error.code } })
    return result
  } catch (error) {
    span.setError({ message: error && error.message ? String(error.message) : String(error) })
    throw error
  } finally {
    span.end()
  }
}

function describe(value) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value
}

function invalid(message) {
  return new TypeError(message)
}

function isSignal(value) {
  return value !== null && typeof value === 'object' && typeof value.aborted === 'boolean' && typeof value.addEventListener === 'function'
}

function clone(item) {
  try {
    return structuredClone(item)
  } catch {
    // An item structuredClone refuses (a function inside) is kept as it is: the Compactor
    // still notices a change made to it in place.
    return item
  }
}

// An archive session id from the SDK session's id: the id itself when the archive accepts it,
// else a stable digest of it (the same SDK session always finds its own archives).
function archiveSessionId(id) {
  const text = String(id)
  if (/^[A-Za-z0-9._-]{1,128}$/.test(text) && text !== '.' && text !== '..') return text
  return `session-${createHash('sha256').update(text).digest('hex').slice(0, 32)}`
}

// Whether two items hold the same data: the same keys with the same values, in any order (a
// store may give keys back in another order), a key holding `undefined` being no key (as in
// JSON).
function sameData(a, b) {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return Number.isNaN(a) && Number.isNaN(b)
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    if (a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!sameData(a[i], b[i])) return false
    return true
  }
  if (ArrayBuffer.isView(a) || ArrayBuffer.isView(b)) {
    if (!ArrayBuffer.isView(a) || !ArrayBuffer.isView(b) || a.byteLength !== b.byteLength) return false
    const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength)
    const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength)
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false
    return true
  }
  const keysA = Object.keys(a).filter((k) => a[k] !== undefined)
  const keysB = Object.keys(b).filter((k) => b[k] !== undefined)
  if (keysA.length !== keysB.length) return false
  for (const key of keysA) {
    if (!Object.hasOwn(b, key) || !sameData(a[key], b[key])) return false
  }
  return true
}

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

function isPlainObject(value) {
  if (value === null || typeof value !== 'object') return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
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

// The result of a compaction that did not reach the session: the CompactResult's fields, the
// items unchanged, and why.
function notCompacted(items, error, from) {
  const base = from ?? {}
  // What the Compactor measured and tried is kept; what it changed is not (the items are the
  // session's as they were).
  const measured = {}
  for (const key of MEASURED_FIELDS) if (base[key] !== undefined && base[key] !== null) measured[key] = base[key]
  return notCompactedResult(items, { ...measured, attempts: base.attempts ?? error.attempts ?? 0, error })
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

function checkSession(session) {
  if (session === null || typeof session !== 'object') {
    throw invalid(`session must be an OpenAI Agents SDK Session (an object with ${SESSION_METHODS.join(', ')}), got ${describe(session)}`)
  }
  if (session instanceof CompactingSession) {
    throw invalid('session is already a CompactingSession: wrap the session it wraps instead')
  }
  const missing = SESSION_METHODS.filter((name) => typeof session[name] !== 'function')
  if (missing.length > 0) {
    throw invalid(`session must be an OpenAI Agents SDK Session: it has no ${missing.join(', ')} method${missing.length > 1 ? 's' : ''}`)
  }
  return session
}

function checkSessionOptions(options) {
  if (options === undefined || options === null) return {}
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw invalid(`options must be an object, got ${describe(options)}`)
  }
  const opts = { ...options }
  if (opts.format !== undefined && opts.format !== null && opts.format !== FORMAT && opts.format !== 'auto') {
    throw invalid(`options.format must be left out: a CompactingSession's items are the Agents SDK's (read as '${FORMAT}'), got ${JSON.stringify(opts.format)}`)
  }
  for (const [name, why] of Object.entries(PER_CALL_OPTIONS)) {
    if (opts[name] !== undefined && opts[name] !== null) throw invalid(`options.${name} is not a session option: ${why}`)
  }
  if (opts.runUsage !== undefined && typeof opts.runUsage !== 'boolean') {
    throw invalid(`options.runUsage must be a boolean, got ${describe(opts.runUsage)}`)
  }
  if (opts.signal !== undefined && opts.signal !== null && !isSignal(opts.signal)) {
    throw invalid(`options.signal must be an AbortSignal, got ${describe(opts.signal)}`)
  }
  return opts
}

class CompactingSession {
  #session
  // The Compactor's options (without `signal`, passed per call) and the adapter's own.
  #options
  #runUsage
  #signal
  #compactor = null
  #compactorReady = null
  // The items as the wrapped session holds them (our own copies), or null until read.
  #items = null
  // Writes through this session, one at a time (a compaction's write-back among them).
  #queue = Promise.resolve()
  // The compaction in progress: a second runCompaction waits for it instead of starting another.
  #running = null
  // Runs whose history was rewritten while they went on: their later usage is of the old list.
  #rewrittenRuns = new WeakSet()
  #lastResult = null
  #closed = false
  // Which writes a runner's receipt has seen: a new object at every change of the history, and
  // for each receipt the one it was given at (with the wrapped session's own receipt, if any).
  #generation = {}
  #receipts = new WeakMap()

  /**
   * @param session any Session of the Agents SDK (MemorySession, a database-backed one, …)
   * @param options the Compactor's options, plus `runUsage`
   */
  constructor(session, options) {
    this.#session = checkSession(session)
    const opts = checkSessionOptions(options)
    const { runUsage, signal, ...compactorOptions } = opts
    compactorOptions.format = FORMAT
    this.#options = compactorOptions
    this.#runUsage = runUsage !== false
    this.#signal = signal ?? undefined
    // Invalid options are a TypeError now, not on the first run. Without a sessionId the
    // wrapped session's own id names the archives (known once it is asked, asynchronously).
    const probe = new Compactor({ ...compactorOptions, sessionId: compactorOptions.sessionId ?? 'default' })
    if (compactorOptions.sessionId != null) this.#compactor = probe
    // A session-level token_limit_exceeded listener would be told on every check: it is told
    // by the Compactor as usual.
  }

  /** The runner passes its run context to every call (RunContextAwareSession). */
  get acceptsRunContext() {
    return true
  }

  /** The last compaction's result (also a failed one), or null before the first. */
  get lastResult() {
    return this.#lastResult
  }

  /** The signal that aborts a compaction in progress (set it to the run's own signal). */
  get signal() {
    return this.#signal
  }

  set signal(value) {
    if (value !== undefined && value !== null && !isSignal(value)) {
      throw invalid(`signal must be an AbortSignal or undefined, got ${describe(value)}`)
    }
    this.#signal = value ?? undefined
  }

  // A call to the wrapped session, with the run context after the method's own arguments when
  // it takes one (`getItems(undefined, runContext)`), else with those arguments alone, as the
  // runner calls a session (`getItems()`).
  #call(method, args, runContext) {
    const session = this.#session
    if (runContext !== undefined && session.acceptsRunContext === true) return session[method](...args, runContext)
    let end = args.length
    while (end > 0 && args[end - 1] === undefined) end--
    return session[method](...args.slice(0, end))
  }

  // Runs a write (or a full read) after the ones before it; a failed one does not block the next.
  #serialized(write) {
    const done = this.#queue.then(write)
    this.#queue = done.then(
      () => undefined,
      () => undefined,
    )
    return done
  }

  getSessionId() {
    return this.#session.getSessionId()
  }

  async getItems(limit, runContext) {
    if (limit !== undefined) return this.#call('getItems', [limit], runContext)
    // In turn with the writes: a read that overlapped an append could see its items before the
    // append adds them to this session's copy.
    return this.#serialized(async () => {
      const items = await this.#call('getItems', [undefined], runContext)
      if (Array.isArray(items)) this.#sync(items)
      return items
    })
  }

  // A full read: when it is not the list this session holds (written to the wrapped session
  // directly, or by another process), the read becomes the list.
  #sync(items) {
    const mine = this.#items
    if (mine !== null && mine.length === items.length) {
      if (items.length === 0) return
      const [last] = this.#comparable([items[items.length - 1]])
      const [own] = this.#comparable([mine[mine.length - 1]])
      if (sameData(last, own)) return
    }
    this.#items = items.map(clone)
  }

  async addItems(items, runContext) {
    await this.#append(items, null, runContext)
  }

  /**
   * The runner's read at the start of a run: the items, and a receipt that lets the run's
   * compaction replace them while only that run writes (OpenAIResponsesCompactionOwnershipAwareSession).
   */
  async getItemsWithCompactionOwnership(runContext) {
    return this.#serialized(async () => {
      const session = this.#session
      let items
      let inner = null
      if (typeof session.getItemsWithCompactionOwnership === 'function') {
        const snapshot = await this.#call('getItemsWithCompactionOwnership', [], runContext)
        items = snapshot?.items
        inner = snapshot?.ownership ?? null
      } else {
        items = await this.#call('getItems', [undefined], runContext)
      }
      if (!Array.isArray(items)) throw new Error(`the wrapped session's items are ${describe(items)}, not an array`)
      this.#sync(items)
      const ownership = {}
      this.#receipts.set(ownership, { generation: this.#generation, inner })
      return { items, ownership }
    })
  }

  /** The runner's append: the receipt stays valid when it was valid before this write. */
  async addItemsWithCompactionOwnership(items, ownership, runContext) {
    await this.#append(items, ownership ?? null, runContext)
  }

  async #append(items, ownership, runContext) {
    await this.#serialized(async () => {
      const receipt = ownership === null ? undefined : this.#receipts.get(ownership)
      const owned = receipt !== undefined && receipt.generation === this.#generation
      try {
        if (typeof this.#session.addItemsWithCompactionOwnership === 'function') {
          await this.#call('addItemsWithCompactionOwnership', [items, receipt?.inner ?? null], runContext)
        } else {
          await this.#call('addItems', [items], runContext)
        }
      } catch (error) {
        // The store may have written before it failed: read it again next time.
        this.#items = null
        this.#generation = {}
        throw error
      }
      this.#generation = {}
      if (owned) receipt.generation = this.#generation
      if (this.#items !== null && Array.isArray(items)) {
        for (const item of items) this.#items.push(clone(item))
      }
    })
  }

  async popItem(runContext) {
    return this.#serialized(async () => {
      this.#generation = {}
      const popped = await this.#call('popItem', [], runContext)
      if (popped !== undefined && this.#items !== null) this.#items.pop()
      return popped
    })
  }

  async clearSession(runContext) {
    await this.#serialized(async () => {
      // Read again in full next time, whatever the call did before failing.
      this.#items = null
      this.#generation = {}
      await this.#call('clearSession', [], runContext)
      this.#items = []
    })
  }

  /** The wrapped session's own model-input rewrite, if it has one. */
  prepareHistoryItemForModelInput(item) {
    const session = this.#session
    return typeof session.prepareHistoryItemForModelInput === 'function' ? session.prepareHistoryItemForModelInput(item) : item
  }

  /** The wrapped session's own normalization before comparisons, if it has one. */
  prepareHistoryItemsForPersistenceComparison(items) {
    return this.#comparable(items)
  }

  /** The wrapped session's own answer (false when it has none). */
  preserveReasoningItemIdsForPersistence() {
    const session = this.#session
    return typeof session.preserveReasoningItemIdsForPersistence === 'function' && session.preserveReasoningItemIdsForPersistence() === true
  }

  #comparable(items) {
    const session = this.#session
    if (typeof session.prepareHistoryItemsForPersistenceComparison !== 'function') return items
    return session.prepareHistoryItemsForPersistenceComparison(items)
  }

  /**
   * Called by the runner after it saved a run's items: compacts when the items reach the
   * threshold. Resolves with the usage of the summary calls
   * (the runner adds it to the run's usage) or null; never rejects for a failure of the
   * summarizer, the archive or the wrapped session (see lastResult).
   */
  async runCompaction(args, runContext, ownership, modelExchange) {
    let inner = null
    const session = this.#session
    // The runner's ownership rules apply when it passes a receipt (null: none survived);
    // undefined is a compaction the caller asked for.
    const automatic = ownership !== undefined
    if (typeof session.runCompaction === 'function') {
      // A wrapped session with its own compaction keeps it, as if it were not wrapped (with its
      // own receipt and the model exchange when it follows the runner's rules too).
      const ownsToo = typeof session.getItemsWithCompactionOwnership === 'function' && typeof session.addItemsWithCompactionOwnership === 'function'
      const innerArgs = automatic && ownsToo ? [args, runContext, this.#receipts.get(ownership)?.inner ?? null, modelExchange] : [args]
      if (innerArgs.length > 1) {
        inner = await session.runCompaction(...innerArgs)
      } else {
        inner = await this.#call('runCompaction', innerArgs, runContext)
      }
      if (inner) {
        this.#items = null
        if (runContext) this.#rewrittenRuns.add(runContext)
      }
    }
    const force = args !== null && typeof args === 'object' && args.force === true
    const exchange = automatic ? { ownership, modelExchange } : undefined
    const own = await this.#maybeCompact({ force, runContext, exchange })
    const usage = own === null ? null : requestUsageOf(own.summaryUsage)
    if (!inner) return usage ? { usage } : null
    if (!usage) return inner
    const sum = (key) => (inner.usage?.[key] ?? 0) + usage[key]
    return { usage: { ...inner.usage, inputTokens: sum('inputTokens'), outputTokens: sum('outputTokens'), totalTokens: sum('totalTokens') } }
  }

  /**
   * Compacts now when the items reach the threshold (or whatever they are, with `force`), as
   * runCompaction does, and resolves with the result (also when nothing was done: `compacted:
   * false`, `error` saying why). Never rejects for a failure of the summarizer, the archive or
   * the wrapped session.
   */
  async compact(options) {
    if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
      throw invalid(`options must be an object { force?, overflow? }, got ${describe(options)}`)
    }
    const { force, overflow } = options ?? {}
    if (force !== undefined && typeof force !== 'boolean') throw invalid(`options.force must be a boolean, got ${describe(force)}`)
    if (this.#closed) throw new Error('compact(): this CompactingSession was closed')
    const done = await this.#maybeCompact({ force: force === true, overflow, runContext: undefined, always: true })
    return done ?? this.#lastResult
  }

  // The compaction itself: null when nothing was written (below the threshold, or failed, with
  // lastResult saying why), else the result.
  async #maybeCompact({ force, overflow, runContext, always = false, exchange }) {
    if (this.#closed) return null
    if (this.#running) {
      // One at a time: the history a second one would summarize is being replaced.
      await this.#running.catch(() => undefined)
      if (!always) return null
    }
    const signal = this.#signal
    if (signal && signal.aborted && !always) return null
    const work = this.#compactOnce({ force, overflow, runContext, always, exchange })
    this.#running = work
    try {
      return await work
    } finally {
      if (this.#running === work) this.#running = null
    }
  }

  async #compactOnce({ force, overflow, runContext, always, exchange }) {
    let compactor
    let items
    try {
      compactor = await this.#ready()
      // The list as it is now (items added later go after what the compaction writes), the same
      // array for the trigger and the compaction (which then does not report the crossing twice).
      items = (await this.#current(runContext)).slice()
    } catch (error) {
      return this.#failed(this.#items ?? [], 'SESSION_READ_FAILED', `the wrapped session could not be read: ${messageOf(error)}`)
    }
    const signal = this.#signal
    const usage = this.#usageOf(runContext)
    const overrides = { signal }
    if (usage) overrides.usage = usage
    if (overflow !== undefined && overflow !== null) overrides.overflow = overflow
    if (force) overrides.force = true
    try {
      // Below the threshold this is the whole cost of a step: counts come from the cache. (A
      // call of compact() goes on: the Compactor answers below the threshold itself.)
      if (!always && !force && !compactor.shouldCompact(items, overrides)) return null
    } catch (error) {
      return this.#failed(items, 'INVALID_ITEMS', `the session holds items the library cannot read: ${messageOf(error)}`)
    }
    // The write-back checks that the wrapped session still starts with it.
    const snapshot = items
    // What the compaction may summarize: all of it, or (by the runner's rules) what the model saw.
    let target = snapshot
    let unseen = 0
    if (exchange !== undefined) {
      const receipt = exchange.ownership === null ? undefined : this.#receipts.get(exchange.ownership)
      if (receipt === undefined || receipt.generation !== this.#generation) {
        return this.#failed(snapshot, 'NOT_OWNED', 'the history was written by someone else since this run read it: the automatic compaction was skipped, the items are unchanged')
      }
      const seenItems = exchange.modelExchange?.items
      if (!Array.isArray(seenItems)) {
        return this.#failed(snapshot, 'NOT_SEEN', 'the run had no successful model call to compare the history with: the automatic compaction was skipped, the items are unchanged')
      }
      const seen = wholeToolCalls(snapshot, seenPrefixLength(this.#comparable(snapshot.map(clone)), this.#comparable(seenItems.map(clone))))
      if (seen === 0) {
        return this.#failed(snapshot, 'NOT_SEEN', 'the model did not see the start of the history (an input filter or callback left it out): the automatic compaction was skipped, the items are unchanged')
      }
      if (seen < snapshot.length) {
        target = snapshot.slice(0, seen)
        unseen = snapshot.length - seen
        // The trigger fired for the whole history; the part the model saw is compacted as far
        // as it goes, not measured again on its own (the usage is of the whole).
        delete overrides.usage
        overrides.force = true
      }
    }
    let result
    try {
      result = await inCustomSpan(target, () => compactor.compact(target, overrides))
    } catch (error) {
      if (error && error.name === 'AbortError') return this.#failed(snapshot, 'ABORTED', 'the compaction was aborted: the items are unchanged')
      if (error instanceof TypeError) return this.#failed(snapshot, 'INVALID_ITEMS', `the session holds items the library cannot read: ${messageOf(error)}`)
      return this.#failed(snapshot, 'COMPACTION_FAILED', messageOf(error))
    }
    if (unseen > 0) {
      const kept = snapshot.slice(target.length)
      const warning = `${unseen} item${unseen === 1 ? '' : 's'} the model had not seen (left out by an input filter, or added after its latest call) ${unseen === 1 ? 'was' : 'were'} kept as ${unseen === 1 ? 'it was' : 'they were'}, after the compacted part`
      result = result.compacted
        ? { ...result, messages: [...result.messages, ...kept], warnings: [...(result.warnings ?? []), warning] }
        : { ...result, messages: snapshot, warnings: [...(result.warnings ?? []), warning] }
    }
    this.#lastResult = result
    if (!result.compacted) return null
    if (signal && signal.aborted) {
      return this.#failed(snapshot, 'ABORTED', 'the run was aborted before the compaction was written: the items are unchanged', result)
    }
    const written = await this.#writeBack(snapshot, result, runContext)
    if (written !== null) return this.#failed(snapshot, written.code, written.message, result)
    if (runContext) this.#rewrittenRuns.add(runContext)
    // The run that compacted still owns the history it wrote (as with the SDK's own session).
    const receipt = exchange?.ownership ? this.#receipts.get(exchange.ownership) : undefined
    if (receipt !== undefined) receipt.generation = this.#generation
    return result
  }

  // The Compactor, once the archive's session id is known.
  async #ready() {
    if (this.#compactor) return this.#compactor
    if (!this.#compactorReady) {
      this.#compactorReady = (async () => {
        const id = archiveSessionId(await this.#session.getSessionId())
        this.#compactor = new Compactor({ ...this.#options, sessionId: id })
        return this.#compactor
      })()
      // A failed read is tried again next time.
      this.#compactorReady.catch(() => {
        this.#compactorReady = null
      })
    }
    return this.#compactorReady
  }

  // The items: this session's copy, read in full (in turn with the writes) the first time.
  async #current(runContext) {
    if (this.#items !== null) return this.#items
    return this.#serialized(async () => {
      if (this.#items === null) {
        const items = await this.#call('getItems', [undefined], runContext)
        if (!Array.isArray(items)) throw new Error(`getItems() resolved with ${describe(items)}, not an array`)
        this.#items = items.map(clone)
      }
      return this.#items
    })
  }

  // The usage the model reported for the run's last request, when it is the usage of the list
  // this session holds: not after the history was rewritten during the run (the runner still
  // sends the old one), nor the entry of a compaction.
  #usageOf(runContext) {
    if (!this.#runUsage || !runContext || this.#rewrittenRuns.has(runContext)) return null
    const entries = runContext.usage && runContext.usage.requestUsageEntries
    if (!Array.isArray(entries) || entries.length === 0) return null
    const last = entries[entries.length - 1]
    if (!last || last.endpoint === USAGE_ENDPOINT || last.endpoint === 'responses.compact') return null
    const input = last.inputTokens
    const output = last.outputTokens ?? 0
    if (!Number.isSafeInteger(input) || input <= 0 || !Number.isSafeInteger(output) || output < 0) return null
    return { input_tokens: input, output_tokens: output }
  }

  // Replaces the wrapped session's items with the compacted list, if they still start with
  // what was compacted (items added since go after it). Null when written, else why not; the
  // wrapped session's items are then as they were.
  #writeBack(snapshot, result, runContext) {
    return this.#serialized(async () => {
      let current
      try {
        current = await this.#call('getItems', [undefined], runContext)
        if (!Array.isArray(current)) throw new Error(`getItems() resolved with ${describe(current)}, not an array`)
      } catch (error) {
        return { code: 'SESSION_READ_FAILED', message: `the wrapped session could not be read before writing the compaction: ${messageOf(error)}` }
      }
      const before = this.#comparable(current.slice(0, snapshot.length))
      const compacted = this.#comparable(snapshot)
      if (current.length < snapshot.length || !before.every((item, i) => sameData(item, compacted[i]))) {
        this.#items = current.map(clone)
        return { code: 'SESSION_CHANGED', message: 'the wrapped session changed while the summary was written (items removed or replaced): the compaction was not written' }
      }
      const added = current.slice(snapshot.length)
      const next = [...result.messages, ...added]
      if (typeof this.#session.applyHistoryTransaction === 'function') return this.#transaction(current, next, runContext)
      this.#generation = {}
      try {
        await this.#call('clearSession', [], runContext)
        await this.#call('addItems', [next], runContext)
      } catch (error) {
        const failure = await this.#restore(current, runContext)
        this.#items = null
        const after = failure === null ? 'its items were put back' : `putting its items back failed too: ${failure}`
        return { code: 'SESSION_WRITE_FAILED', message: `the compaction could not be written to the wrapped session (${messageOf(error)}); ${after}` }
      }
      this.#items = [...result.messages, ...added.map(clone)]
      return null
    })
  }

  // The swap as one replace_suffix transaction (the whole history read is the suffix): the store
  // applies it atomically, or refuses it unchanged when the history no longer ends with it. A
  // failed call is sent once more with the same operationId (a store that applied it and lost
  // the answer acknowledges it without applying it again). Null when written, else why not.
  async #transaction(current, next, runContext) {
    const expectedSuffix = current
    const replacement = next.map(clone)
    let sessionId
    try {
      sessionId = await this.#session.getSessionId()
    } catch (error) {
      return { code: 'SESSION_READ_FAILED', message: `the wrapped session's id could not be read before writing the compaction: ${messageOf(error)}` }
    }
    const args = { operationId: compactionOperationId(sessionId, expectedSuffix), transaction: { type: 'replace_suffix', expectedSuffix, replacement } }
    let failure = null
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.#call('applyHistoryTransaction', [args], runContext)
        failure = null
        break
      } catch (error) {
        failure = error
      }
    }
    this.#generation = {}
    if (failure === null) {
      this.#items = next.map(clone)
      return null
    }
    // Whether the history moved on (someone appended or removed) or the store failed: nothing
    // was changed either way.
    this.#items = null
    let now = null
    try {
      now = await this.#call('getItems', [undefined], runContext)
    } catch {
      // Read again next time.
    }
    if (Array.isArray(now) && now.length === current.length) {
      const a = this.#comparable(now)
      const b = this.#comparable(current)
      if (a.every((item, i) => sameData(item, b[i]))) {
        return { code: 'SESSION_WRITE_FAILED', message: `the compaction could not be written to the wrapped session (${messageOf(failure)}); its items are unchanged` }
      }
    }
    return { code: 'SESSION_CHANGED', message: `the wrapped session changed before the compaction was written (${messageOf(failure)}): the compaction was skipped, the history is as the store has it` }
  }

  // Puts the items back after a failed write: null when it worked, else why not.
  async #restore(items, runContext) {
    try {
      await this.#call('clearSession', [], runContext)
      if (items.length > 0) await this.#call('addItems', [items], runContext)
      return null
    } catch (error) {
      return messageOf(error)
    }
  }

  // A compaction that did not reach the session: lastResult says why, onEvent and the log too.
  #failed(items, code, message, from) {
    const error = { code, message, attempts: from ? from.attempts : 0 }
    this.#lastResult = notCompacted(items, error, from)
    this.#log('warn', message)
    const onEvent = this.#options.onEvent
    if (typeof onEvent === 'function') {
      try {
        onEvent({ type: 'failed', error })
      } catch {
        // A listener's bug must not break the agent.
      }
    }
    return null
  }

  #log(level, message) {
    const entry = { level, message, target: 'context_compact::openai_agents' }
    try {
      if (typeof this.#options.onLog === 'function') this.#options.onLog(entry)
      const logger = this.#options.logger
      if (logger && typeof logger === 'object') {
        const method = [level, 'log'].map((name) => logger[name]).find((fn) => typeof fn === 'function')
        if (method) method.call(logger, `context-compact: ${message}`)
      }
    } catch {
      // A logger's bug must not break the agent.
    }
  }

  /**
   * Every item the session ever held, in order: each summary replaced by the items it stands
   * for, read back from the archives.
   */
  async restoreItems() {
    const compactor = await this.#ready()
    const { outputDir, sessionId, archiveStore, storeOptions } = compactor.options
    return restoreMessages(await this.getItems(), { outputDir, sessionId, archiveStore, storeOptions, format: FORMAT })
  }

  /**
   * The recall tool over this session's archives, as an Agents SDK function tool (made with
   * the SDK's `tool()`).
   */
  recallTool(options) {
    const opts = options ?? {}
    if (typeof opts !== 'object' || Array.isArray(opts)) throw invalid(`options must be an object, got ${describe(options)}`)
    const base = {
      outputDir: this.#options.outputDir,
      archiveStore: this.#options.archiveStore,
      storeOptions: this.#options.storeOptions,
      ...opts,
    }
    if (base.sessionId == null && this.#options.sessionId != null) base.sessionId = this.#options.sessionId
    if (base.sessionId != null) return recallTool(base)
    // The archive's session id is the wrapped session's, known once it is asked.
    const probe = createRecallTool({ ...base, sessionId: 'default' })
    let tool = null
    return sdkTool(probe, async (input) => {
      if (tool === null) {
        try {
          const compactor = await this.#ready()
          tool = createRecallTool({ ...base, sessionId: compactor.options.sessionId })
        } catch (error) {
          return `The recall tool could not read the archives: ${messageOf(error)}`
        }
      }
      return tool.run(input)
    })
  }

  /**
   * Stops the Compactor's background work (a summary being prepared is cancelled) and waits for
   * a compaction in progress. The session can still be read and written.
   */
  async close() {
    this.#closed = true
    if (this.#running) await this.#running.catch(() => undefined)
    if (this.#compactor) await this.#compactor.close()
  }
}

function messageOf(error) {
  return error && error.message ? String(error.message) : String(error)
}

// The Agents SDK's `tool()`, loaded when a recall tool is made: nothing of the SDK is loaded
// for the rest of this module.
function sdkTool(recall, run) {
  let agents
  try {
    agents = require('@openai/agents')
  } catch (error) {
    const missing = new Error('context-compact/openai-agents needs the OpenAI Agents SDK for recallTool(): npm install @openai/agents')
    missing.code = 'ERR_CONTEXT_COMPACT_MISSING_PEER'
    missing.cause = error
    throw missing
  }
  return agents.tool({
    name: recall.name,
    description: recall.description,
    parameters: recall.inputSchema,
    // Every property is optional, which strict mode does not allow.
    strict: false,
    execute: (input) => run(input),
  })
}

/**
 * The recall tool (see createRecallTool) as an Agents SDK function tool: the agent reads back
 * the archived originals of what was compacted. Give it the session's outputDir and sessionId
 * (or use `session.recallTool()`).
 */
function recallTool(options) {
  const recall = createRecallTool(options)
  return sdkTool(recall, (input) => recall.run(input))
}

module.exports = {
  CompactingSession,
  recallTool,
}
