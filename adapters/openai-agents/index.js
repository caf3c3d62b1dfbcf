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

const { Compactor, restoreMessages } = require('../../index.js')
const { isAbortSignal, sameData, clone, archiveSessionId, logger, messageOf, failedResult } = require('../kit.js')
const { FORMAT, describe, invalid, checkSession, checkSessionOptions } = require('./options.js')
const { seenPrefixLength, wholeToolCalls, compactionOperationId, requestUsageOf, lastRequestUsage, addedUsage, withUnseen } = require('./runner.js')
const { inCustomSpan } = require('./tracing.js')
const { recallTool, sessionRecallTool } = require('./recall.js')

class CompactingSession {
  #session
  // The Compactor's options (without `signal`, passed per call) and the adapter's own.
  #options
  // What the session reports itself, through the options' onLog / logger.
  #log
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
    this.#session = checkSession(session, CompactingSession)
    const opts = checkSessionOptions(options)
    const { runUsage, signal, ...compactorOptions } = opts
    compactorOptions.format = FORMAT
    this.#options = compactorOptions
    this.#log = logger(compactorOptions, 'context_compact::openai_agents')
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
    if (value !== undefined && value !== null && !isAbortSignal(value)) {
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
    return usage ? { usage: addedUsage(inner.usage, usage) } : inner
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
    if (unseen > 0) result = withUnseen(result, snapshot, target.length)
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
        const id = archiveSessionId(await this.#session.getSessionId(), 'session')
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
    return lastRequestUsage(runContext)
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
    this.#lastResult = failedResult(items, error, from)
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
    return sessionRecallTool(options, this.#options, () => this.#ready())
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

module.exports = {
  CompactingSession,
  recallTool,
}
