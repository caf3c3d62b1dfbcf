// Generated from adapters/pi/index.d.ts by scripts/adapter-types.mjs (npm run build:types): edit that file.
// The declarations `import` gets (an ES module).

// context-compact/pi: compaction as pi-agent-core's `prepareRequest` (1.6 and later).
// pi's own types (`AgentMessage`, `AgentTool`, …) come from the `@earendil-works/pi-agent-core`
// you have installed, so the function fits `new Agent({ prepareRequest })` with no cast.

import type { AgentMessage, AgentRequestUpdate, AgentTool, PrepareRequestContext } from '@earendil-works/pi-agent-core'
import type { CompactOptions, CompactResult, Compactor, Message, RecallToolOptions } from '../../index.js'

/** A tool definition to count: pi's `Tool` shape, or the Anthropic one. */
export interface PiToolDefinition {
  /** The tool's name. */
  name: string
  /** What the tool does, for the model. */
  description?: string
  /** The input's JSON schema (pi's `Tool`). */
  parameters?: object
  /** The input's JSON schema (Anthropic's shape). */
  input_schema?: object
}

/** What {@link CompactionRequest.compact} resolves with. */
export interface PiCompaction {
  /** The list to continue from: pi's messages, the given list itself when nothing changed. */
  messages: AgentMessage[]
  /** The compaction's result (in the Anthropic shape the compaction works in), or `null`. */
  result: CompactResult<Message> | null
}

/**
 * The options of {@link compactionRequest}: the {@link Compactor}'s options (archives `outputDir` /
 * `sessionId` / `archiveStore`, `contextTokenLimit`, the summary `provider` or `summarizer`,
 * checkpoints, `agentRequest`, `onEvent`, …).
 *
 * Not accepted, because the function sets them itself: `format` (pi's messages are converted),
 * `system` (read from the transcript's system messages), `usage` (read from the last reply),
 * `force` and `overflow` (they concern one call: use {@link CompactionRequest.compact}).
 */
export interface CompactionRequestOptions extends Omit<CompactOptions, 'format' | 'system' | 'tools' | 'usage' | 'force' | 'overflow'> {
  /**
   * The tools counted into every estimate, instead of the tools the transcript's system messages
   * declare (`toolsAdded`, `toolsRemoved`; else the request's `context.tools`), which are the default.
   * @default undefined (the transcript's tools)
   */
  tools?: ReadonlyArray<AgentTool<any> | PiToolDefinition>
}

/** The options of {@link CompactionRequest.compact}: one compaction's own options. */
export type PiCompactOptions = Omit<CompactOptions, 'format' | 'system' | 'tools' | 'usage'>

/**
 * A `prepareRequest` function that compacts the run's context when the trigger fires: pass it as
 * `prepareRequest` to `new Agent({ … })`, as it is. It also carries the last result, the
 * {@link Compactor} it runs on, and `compact` / `restore` for pi's messages.
 */
export interface CompactionRequest {
  /**
   * Resolves with `{ context }` (the context pi uses for this and later requests of the run:
   * compacted now, or the compaction of an earlier run carried forward) or with `undefined` (the
   * context as it is). Resolves, with the context unchanged, when the summary cannot be written or
   * the archive fails ({@link CompactionRequest.lastResult} says why); rejects only when the run's
   * signal aborts it, or for invalid messages (a `TypeError`).
   */
  (request: PrepareRequestContext, signal?: AbortSignal): Promise<AgentRequestUpdate | undefined>
  /**
   * The result of the last compaction attempted (in the Anthropic shape the compaction works in),
   * or `null` before the first.
   */
  readonly lastResult: CompactResult<Message> | null
  /**
   * The {@link Compactor} behind the function: its `calibration`, `markMap`, `rollback`. It reads
   * the function's own conversions of pi's messages, which it does not compare again at each
   * request: a list of your own goes to a Compactor of your own.
   */
  readonly compactor: Compactor
  /**
   * Compacts pi's messages now, whatever the trigger says: after a request the API refused as too
   * long, `compact(messages, { overflow: errorMessage })`. Resolves with the list to continue from
   * (the list itself when nothing changed) and the result.
   */
  compact(messages: AgentMessage[], options?: PiCompactOptions): Promise<PiCompaction>
  /**
   * Gives back the whole transcript a compacted list stands for. Messages this function saw come
   * back as the very objects pi held; messages only the archive holds (another process) come back
   * with their content, roles and tool call ids, without pi's metadata (usage, timestamps).
   */
  restore(messages: AgentMessage[]): Promise<AgentMessage[]>
  /** Stops the background work (`background` option): see {@link Compactor.close}. */
  close(): Promise<void>
}

/**
 * Compaction for a pi agent loop (`@earendil-works/pi-agent-core` 1.6 and later): returns a
 * `prepareRequest` function that, before each provider request (between tool calls too), compacts
 * the run's messages when they reach the threshold (by default 92 % of `contextTokenLimit`): the
 * recent tail is kept as it is, the rest is replaced by a summary message (a `user` message, which
 * pi's `convertToLlm` passes to the model), and the originals are archived.
 *
 * - **The trigger** reads the last reply's `usage` as billed (`input + cacheRead + cacheWrite`),
 *   plus the estimate of what was added since.
 * - **System prompt and tools** (the transcript's system messages) are counted and never summarized.
 * - **The whole run.** pi uses the returned context for the rest of the run; `agent.state.messages`
 *   keeps the whole transcript, and the next `prompt()` starts from the compacted list again, with
 *   no second summary call.
 * - **Failures** never break the run: a summary that fails leaves the context as it is (or the
 *   `summaryFallback` shortens it) and `lastResult` says why.
 *
 * @example
 * import { Agent } from '@earendil-works/pi-agent-core'
 * import { compactionRequest } from 'context-compact/pi'
 *
 * const prepareRequest = compactionRequest({ contextTokenLimit: 200_000, sessionId: 'chat-42' })
 * const agent = new Agent({ initialState: { systemPrompt, model, tools }, streamFn, prepareRequest })
 * @throws {TypeError} for invalid options, naming the option.
 */
export declare function compactionRequest(options?: CompactionRequestOptions): CompactionRequest

/** The options of {@link recallTool}: where the archives are, as the compactions were given it. */
export type PiRecallToolOptions = Omit<RecallToolOptions, 'format'>

/**
 * The recall tool as a pi `AgentTool`, for `initialState: { tools: [recallTool({ outputDir, sessionId })] }`:
 * the agent reads back the original messages a compaction archived — the range a summary's
 * `Recall:` line names, or the passages matching a query (see `createRecallTool`).
 * @throws {TypeError} for invalid options, naming the option.
 */
export declare function recallTool(options?: PiRecallToolOptions): AgentTool<any, undefined>

/** The default export of the ES module: the same exports, as one object. */
declare const _default: {
  compactionRequest: typeof compactionRequest
  recallTool: typeof recallTool
}
export default _default
