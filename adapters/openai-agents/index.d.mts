// Generated from adapters/openai-agents/index.d.ts by scripts/adapter-types.mjs (npm run build:types): edit that file.
// The declarations `import` gets (an ES module).

// context-compact/openai-agents: compaction for the OpenAI Agents SDK (`@openai/agents`).
//
//   import { MemorySession, run } from '@openai/agents'
//   import { CompactingSession } from 'context-compact/openai-agents'
//
//   const session = new CompactingSession(new MemorySession(), { contextTokenLimit: 128_000 })
//   await run(agent, 'Refactor the parser', { session })

import type {
  AgentInputItem,
  FunctionTool,
  OpenAIResponsesCompactionArgs,
  OpenAIResponsesCompactionAwareSession,
  OpenAIResponsesCompactionOwnershipAwareSession,
  OpenAIResponsesCompactionResult,
  RunContext,
  RunContextAwareSession,
  Session,
} from '@openai/agents'

import type {
  CompactError,
  CompactErrorCode,
  CompactEvent,
  CompactFailedEvent,
  CompactOptions,
  CompactResult,
  RecallToolOptions,
  SummaryRequest,
} from '../../index.js'

/**
 * Why a compaction did not reach the session, beyond the library's own reasons
 * ({@link CompactErrorCode}):
 * - `'ABORTED'`: the session's {@link CompactingSession.signal} was aborted during the
 *   compaction (or before it was written);
 * - `'SESSION_CHANGED'`: the wrapped session's items changed while the summary was written
 *   (an item removed or replaced by someone else): nothing was written;
 * - `'SESSION_READ_FAILED'` / `'SESSION_WRITE_FAILED'`: the wrapped session failed to read or
 *   to replace its items (it is given its items back after a failed write);
 * - `'INVALID_ITEMS'`: the session holds an item the library cannot read (its message names
 *   the item and the field);
 * - `'COMPACTION_FAILED'`: any other failure of the compaction;
 * - `'NOT_OWNED'`: an automatic compaction (the runner's) was skipped because someone else
 *   wrote to the session after the run read it, or the run was resumed from a saved `RunState`
 *   (the runner never saves the receipt with it);
 * - `'NOT_SEEN'`: an automatic compaction was skipped because the model had not seen the start
 *   of the history (an input filter or callback left it out) or the run had no successful
 *   model call.
 *
 * With a wrapped session that has `applyHistoryTransaction`, `'SESSION_CHANGED'` also means
 * the transaction was refused because the history no longer ended with what was compacted
 * (someone appended meanwhile): nothing was changed.
 */
export type SessionCompactErrorCode =
  | CompactErrorCode
  | 'ABORTED'
  | 'SESSION_CHANGED'
  | 'SESSION_READ_FAILED'
  | 'SESSION_WRITE_FAILED'
  | 'INVALID_ITEMS'
  | 'COMPACTION_FAILED'
  | 'NOT_OWNED'
  | 'NOT_SEEN'

/** Why a session's compaction did not happen or did not reach the session. */
export interface SessionCompactError extends Omit<CompactError, 'code'> {
  /** What went wrong: one of the library's codes, or one of the session's own. */
  code: SessionCompactErrorCode
}

/**
 * A compaction's result ({@link CompactResult} of the SDK's items). `messages` is the compacted
 * list written to the wrapped session (items added while the summary was written follow it
 * there), or, when nothing was written, the items as they were, with `error` saying why.
 */
export interface SessionCompactResult extends Omit<CompactResult<AgentInputItem>, 'error'> {
  /** Why nothing was written (or why a written list is still over the threshold); `null` otherwise. */
  error: SessionCompactError | null
}

/** A compaction did not reach the session (also after the library's own `'completed'`). */
export interface SessionCompactFailedEvent {
  /** The event's kind, as the library's {@link CompactFailedEvent}. */
  type: 'failed'
  /** Why: the same error as {@link CompactingSession.lastResult}'s. */
  error: SessionCompactError
}

/** The library's events, and {@link SessionCompactFailedEvent} for a compaction that did not reach the session. */
export type SessionCompactEvent = CompactEvent | SessionCompactFailedEvent

/**
 * The options of a {@link CompactingSession}: the `Compactor`'s options (see
 * {@link CompactOptions}; the format is the SDK's own, and `usage`, `overflow` and `force` are
 * per call), and `runUsage`.
 */
export interface CompactingSessionOptions
  extends Omit<CompactOptions, 'format' | 'usage' | 'overflow' | 'force' | 'onEvent' | 'summarizer'> {
  /**
   * The archives' session (`[A-Za-z0-9._-]{1,128}`).
   * @default the wrapped session's `getSessionId()` (a digest of it when it has other characters)
   */
  sessionId?: string | undefined
  /**
   * Let the trigger use the usage the model reported for the run's last request (the run
   * context's `usage.requestUsageEntries`): what the API billed, instructions and tool
   * definitions included, so the compaction fires when the window is really full. Turn it off
   * when the model is sent something else than the session's items (a `sessionInputCallback`
   * or `callModelInputFilter` that drops or adds items): the trigger then counts the items,
   * scaled by `agentModel`'s factor when you name the model.
   * @default true
   */
  runUsage?: boolean | undefined
  /**
   * Aborts a compaction in progress; see {@link CompactingSession.signal}, which this sets.
   */
  signal?: AbortSignal | undefined
  /** Writes the summary, in place of the HTTP providers (see {@link CompactOptions.summarizer}). */
  summarizer?: ((request: SummaryRequest<AgentInputItem>) => Promise<string>) | undefined
  /** The library's events, and `'failed'` for a compaction that did not reach the session. */
  onEvent?: ((event: SessionCompactEvent) => void) | undefined
}

/**
 * An Agents SDK `Session` that wraps any other `Session` (a `MemorySession`, one backed by a
 * database, …) and compacts its items when they reach the threshold: the middle of the history
 * is replaced by a summary (a user message item starting with `[context-compact]`), the first
 * items and the most recent ones are kept as they are (function calls with their results,
 * reasoning with what follows it), and the originals are archived.
 *
 * The runner reads a session once per run and calls `runCompaction` after it saved the run's
 * items: the compaction happens there, and the next run reads the compacted history. It cannot
 * shrink a run already going (the runner holds its own copy of the items), so
 * `thresholdRatio` has to leave room for what one run adds.
 *
 * Failures never reach the agent: a summarizer, archive or session failure leaves the items as
 * they were, and {@link CompactingSession.lastResult} (`error`), the `'failed'` event and the
 * log say why.
 *
 * The runner's rules for its automatic compaction are kept: the session hands out compaction
 * ownership (`getItemsWithCompactionOwnership` / `addItemsWithCompactionOwnership`), so the
 * runner passes `runCompaction` its receipt and the latest successful model exchange. Only
 * what the model saw is summarized: the longest run of items from the start that the model saw
 * (never splitting a tool call from its result) is compacted, and the items from the first
 * unseen one on (left out by a `callModelInputFilter`, or added after the model's latest call)
 * are kept as they are after it (`result.warnings` says how many). When the model did not see
 * the start of the history, or someone else wrote since the run read it, the compaction is
 * skipped (`lastResult.error.code` `'NOT_SEEN'` / `'NOT_OWNED'`).
 *
 * When the wrapped session has `applyHistoryTransaction`, the compaction is written as one
 * `replace_suffix` transaction, with an `operationId` derived from the session id and the
 * items replaced (a retry sends the same one, and the store applies it once). A history that no longer ends
 * with what was compacted makes the store refuse it, unchanged, and the compaction is skipped
 * (`'SESSION_CHANGED'`). Without it, the items are replaced by `clearSession` and `addItems`
 * (put back if that fails).
 *
 * Not forwarded to the wrapped session: the runner's own history transactions and history
 * mutations (the runner appends through `addItems`).
 */
export declare class CompactingSession<TContext = unknown>
  implements RunContextAwareSession<TContext>, OpenAIResponsesCompactionOwnershipAwareSession
{
  /**
   * @param session the session that holds the items (any `Session`)
   * @param options the Compactor's options, e.g. `{ contextTokenLimit: 128_000, agentModel: 'gpt-4.1' }`
   * @throws {TypeError} when `session` is not a Session or an option is invalid
   */
  constructor(session: Session, options?: CompactingSessionOptions)

  /** The runner passes its run context to each call. */
  readonly acceptsRunContext: true

  /**
   * The last compaction's result, also one that failed or did not reach the session (`error`
   * says why); `null` before the first compaction.
   */
  readonly lastResult: SessionCompactResult | null

  /**
   * Aborts a compaction in progress: the items stay as they were (`error.code` `'ABORTED'`).
   * The runner does not pass its signal to sessions; give the session the same one:
   * `session.signal = controller.signal; await run(agent, input, { session, signal: controller.signal })`.
   * While it is aborted, no compaction starts.
   */
  signal: AbortSignal | undefined

  getSessionId(): Promise<string>
  /** The wrapped session's items (its own objects). */
  getItems(limit?: number, runContext?: RunContext<TContext>): Promise<AgentInputItem[]>
  /** Appends to the wrapped session (and to this session's own copy of its items). */
  addItems(items: AgentInputItem[], runContext?: RunContext<TContext>): Promise<void>
  /**
   * The runner's read at the start of a run: the wrapped session's items and a receipt that lets
   * that run's automatic compaction replace them while no one else writes (the wrapped
   * session's own, when it has these methods, is used within).
   */
  getItemsWithCompactionOwnership(runContext?: RunContext<TContext>): Promise<{
    /** The wrapped session's items. */
    items: AgentInputItem[]
    /** The receipt: pass it back to `addItemsWithCompactionOwnership` and `runCompaction`. */
    ownership: object
  }>
  /** The runner's append: as `addItems`, and the receipt stays valid if it was. */
  addItemsWithCompactionOwnership(items: AgentInputItem[], ownership: object | null, runContext?: RunContext<TContext>): Promise<void>
  /** Removes the wrapped session's last item and resolves with it. */
  popItem(runContext?: RunContext<TContext>): Promise<AgentInputItem | undefined>
  /** Empties the wrapped session. Its archives stay. */
  clearSession(runContext?: RunContext<TContext>): Promise<void>
  /** The wrapped session's own rewrite, or the item itself. */
  prepareHistoryItemForModelInput(item: AgentInputItem): AgentInputItem
  /** The wrapped session's own normalization, or the items themselves. */
  prepareHistoryItemsForPersistenceComparison(items: AgentInputItem[]): AgentInputItem[]
  /** The wrapped session's own answer; `false` when it has none. */
  preserveReasoningItemIdsForPersistence(): boolean

  /**
   * Called by the runner after it saved a run's items (streamed or not): compacts when the
   * items reach the threshold, or whatever they are with `args.force`. Resolves with what the
   * summary calls cost (the runner adds it to the run's usage, `endpoint: 'context-compact'`),
   * or `null`; never rejects for a failure of the summarizer, the archive or the wrapped
   * session. A wrapped session with its own `runCompaction` runs it first, as it would
   * unwrapped (its failures are its own).
   *
   * `ownership` and `modelExchange` are the runner's (see the class): with a receipt (or
   * `null`) the compaction follows the runner's rules; without one (a call of your own) it
   * compacts the whole history.
   */
  runCompaction(
    args?: OpenAIResponsesCompactionArgs,
    runContext?: RunContext<any>,
    ownership?: object | null,
    modelExchange?: { items: AgentInputItem[]; responseId?: string; reasoningItemIdPolicy?: 'preserve' | 'omit' },
  ): Promise<OpenAIResponsesCompactionResult | null>

  /**
   * Compacts now: when the items reach the threshold, whatever they are with `force`, or
   * regardless of the estimate with `overflow` (the error of a request the model's API refused
   * as too long, see `isContextOverflow`). Resolves with the result, `compacted: false` and
   * `error` saying why when nothing was written.
   * @throws {TypeError} for invalid options; an Error once the session was closed
   */
  compact(options?: { force?: boolean | undefined; overflow?: unknown }): Promise<SessionCompactResult>

  /**
   * Every item this session ever held, in order: each summary replaced by the items it stands
   * for, read back from the archives (the very objects of the SDK, as they were saved).
   * @throws an Error with `code` (`'ARCHIVE_NOT_FOUND'`, …) when an archive cannot be read
   */
  restoreItems(): Promise<AgentInputItem[]>

  /**
   * The recall tool over this session's archives, as an SDK function tool: the agent reads the
   * archived originals of a summary's range, or searches them. Put it in the agent's `tools`.
   * @throws an Error with `code: 'ERR_CONTEXT_COMPACT_MISSING_PEER'` when `@openai/agents` is not
   * installed
   */
  recallTool(options?: Pick<RecallToolOptions, 'name' | 'maxTokens'>): FunctionTool<any, any, string>

  /**
   * Cancels the Compactor's background work and waits for a compaction in progress. The session
   * can still be read and written; it compacts no more.
   */
  close(): Promise<void>
}

/**
 * The recall tool (see `createRecallTool`) as an Agents SDK function tool, over the archives of
 * `outputDir` / `sessionId` (the session's own: `session.recallTool()`).
 * @throws {TypeError} for invalid options; an Error with `code: 'ERR_CONTEXT_COMPACT_MISSING_PEER'`
 * when `@openai/agents` is not installed
 */
export declare function recallTool(
  options?: Omit<RecallToolOptions, 'format'>,
): FunctionTool<any, any, string>
