// Generated from adapters/langchain/index.d.ts by scripts/adapter-types.mjs (npm run build:types): edit that file.
// The declarations `require` gets (CommonJS).

// context-compact/langchain: context compaction for LangChain.js v1 agents (`createAgent` of the
// `langchain` package). Guide: docs/langchain.md.

import type { AgentMiddleware } from 'langchain'
import type { BaseMessage } from '@langchain/core/messages'
import type { BaseChatModel } from '@langchain/core/language_models/chat_models'
import type { DynamicStructuredTool } from '@langchain/core/tools'

import type { CompactError, CompactErrorCode, CompactOptions, CompactResult, RecallToolOptions } from '../../index.js'

/**
 * A chat model that writes the summary: any LangChain chat model (`new ChatAnthropic(…)`,
 * `await initChatModel('openai:gpt-4.1-mini')`, …). It is asked once per compaction with the
 * summary prompt (the library's instructions and the transcript of the messages to summarize)
 * as one user message, with the run's signal, tagged `nostream` so that its tokens stay out of
 * the agent's message stream.
 */
export type SummaryChatModel = Pick<BaseChatModel, 'invoke'>

/**
 * The options of {@link contextCompactMiddleware}: a `Compactor`'s options ({@link CompactOptions}:
 * the window and threshold, the summarizer or provider, the archives, checkpoints, `background`,
 * `rehydrate`, `agentRequest`, `onEvent`, …), except what the middleware reads from each model
 * request itself: the messages' format (LangChain's), the usage the model reported
 * (`usage_metadata` of the last AIMessage, which bills the system prompt and the tools), the
 * system prompt and the tools (counted by the tokenizer while there is no usage yet; never
 * summarized), and the run's signal.
 *
 * A few defaults come from the models when you do not set them:
 * - `agentModel`: the agent model's name (`model.model`), for the trigger's per-model factor;
 * - `contextTokenLimit`: LangChain's profile of the agent's model (`model.profile.maxInputTokens`),
 *   else the window the library knows for `agentModel`, else 200 000;
 * - `summaryContextTokens`: the profile's `maxInputTokens` of a chat `model` that writes the
 *   summaries.
 *
 * summarizationMiddleware's `trigger`, `keep`, `tokenCounter`, `summaryPrompt`, `summaryPrefix`
 * and `trimTokensToSummarize` are not taken: passing one is a TypeError that names what to use
 * instead (see docs/langchain.md for the whole mapping).
 */
export interface ContextCompactMiddlewareOptions
  extends Omit<CompactOptions, 'model' | 'format' | 'usage' | 'system' | 'tools' | 'signal' | 'overflow' | 'force'> {
  /**
   * Who writes the summary:
   * - a chat model ({@link SummaryChatModel}): your own model, as summarizationMiddleware's
   *   `model` (not with `summarizer`);
   * - a model name: the summary model of the built-in HTTP `provider` (e.g.
   *   `'claude-haiku-4-5'`), as the library's `model` option. A `'provider:model'` string of
   *   `initChatModel` is not resolved here: pass `await initChatModel('openai:gpt-4.1-mini')`.
   * Without it (and without `summarizer` or `provider`): the library's zero-configuration choice.
   */
  model?: string | SummaryChatModel
  /** Always LangChain's messages; `'auto'` is accepted. */
  format?: 'langchain' | 'auto'
  /**
   * The archive session of every run. By default each conversation thread is its own session:
   * the run's `configurable.thread_id` (a thread id that is not a valid session id gets a stable
   * `thread-<hash>` one), or `'default'` without a thread. Archives, checkpoints and the recall
   * tool of one thread are then never another's.
   */
  sessionId?: string
  /**
   * How many threads' sessions are kept in memory (their count caches, checkpoints, calibration
   * and background summaries); the least recently used beyond it is closed. A thread that comes
   * back starts a new session, which reads its checkpoints again from the archives.
   * @default 128
   */
  maxSessions?: number
}

/** Why a compaction did not happen: the library's codes, and the middleware's own. */
export type LangChainCompactErrorCode =
  | CompactErrorCode
  /** The run was aborted (its signal) while the compaction ran; the step ended with the run's AbortError. */
  | 'ABORTED'
  /** The state held something the library cannot read as a message (the model got it unchanged). */
  | 'INVALID_INPUT'
  /** Anything else that went wrong in the compaction (the model got the messages unchanged). */
  | 'UNEXPECTED'

/** Why the last compaction did not happen: the library's {@link CompactError}, with the middleware's own codes. */
export interface LangChainCompactError extends Omit<CompactError, 'code'> {
  /** What went wrong (see {@link LangChainCompactErrorCode}). */
  code: LangChainCompactErrorCode
}

/**
 * The last compaction of a {@link ContextCompactMiddleware} (of any thread): the library's
 * {@link CompactResult}, with the messages as LangChain message instances — the state's own
 * objects for the kept ones, instances of the same classes (with ids) for the summary and any
 * message the compaction changed — and the session whose archives hold the originals.
 */
export interface LangChainCompactResult extends Omit<CompactResult<BaseMessage>, 'error'> {
  /**
   * The messages the model got: the compacted list, or (when nothing was compacted) the
   * request's messages unchanged. `restoreMessages(messages, { outputDir, sessionId })` gives
   * back the originals.
   */
  messages: BaseMessage[]
  /** Why nothing was compacted, or `null`. */
  error: LangChainCompactError | null
  /** The archive session of the run (see {@link ContextCompactMiddlewareOptions.sessionId}). */
  sessionId: string
}

/**
 * The middleware: an element of `createAgent({ middleware: [...] })`. Put it first in the list,
 * so that the model requests it compacts are the agent state's own messages (a middleware
 * before it that gives the model other messages leaves the state as it is: then only the
 * requests are compacted).
 */
export interface ContextCompactMiddleware extends AgentMiddleware<undefined, undefined, unknown> {
  /**
   * The last compaction's result (any thread), `null` before the first one. Also set when a
   * compaction failed or was skipped: `error` says why (an LLM, disk or store failure never
   * reaches the agent; the model then got the messages unchanged).
   */
  readonly lastResult: LangChainCompactResult | null
  /** Stops the background work of every session (`background` option), and waits for it. */
  close(): Promise<void>
}

/**
 * Compaction for a LangChain.js v1 agent, in place of LangChain's `summarizationMiddleware`.
 *
 * Before each model call it counts the request — the state's messages, the system prompt and
 * the tools, with the usage the model reported for the last AIMessage — and when the threshold
 * is reached, the model gets the list compacted by a `Compactor` (head and recent tail kept, AI
 * and tool messages kept together, the middle replaced by a summary message, the originals
 * archived); the agent state then holds the compacted list (as summarizationMiddleware leaves
 * it: `RemoveMessage` with `REMOVE_ALL_MESSAGES`, then the list). Below the threshold a step
 * costs under a millisecond on a 400K-token history.
 *
 * An LLM, disk or store failure never reaches the agent: the model gets the messages unchanged
 * and {@link ContextCompactMiddleware.lastResult} says why. An aborted run (its signal) aborts a
 * compaction in progress, and the summary call of a chat `model` with it.
 *
 * @throws {TypeError} for invalid options (naming the option), before any run.
 * @example
 * import { createAgent } from 'langchain'
 * import { ChatAnthropic } from '@langchain/anthropic'
 * import { contextCompactMiddleware } from 'context-compact/langchain'
 *
 * const compaction = contextCompactMiddleware({
 *   model: new ChatAnthropic({ model: 'claude-haiku-4-5' }), // writes the summaries
 *   outputDir: './.context-compact', // the originals, for restoreMessages and the recall tool
 * })
 * const agent = createAgent({ model: 'anthropic:claude-sonnet-4-5', tools, middleware: [compaction] })
 */
export declare function contextCompactMiddleware(options?: ContextCompactMiddlewareOptions): ContextCompactMiddleware

/** The options of {@link recallTool}: where the archives are, as given to the middleware. */
export interface LangChainRecallToolOptions extends Omit<RecallToolOptions, 'format' | 'sessionId'> {
  /**
   * The archive session to read; by default the run's thread, as for the middleware (see
   * {@link ContextCompactMiddlewareOptions.sessionId}).
   */
  sessionId?: string
}

/**
 * The recall tool as a LangChain tool, for `createAgent({ tools: [recallTool({ outputDir })] })`:
 * after a compaction the agent can read back the archived originals a summary names ("Recall:
 * archive=… from=… to=…"), or search them. It always answers with text the model can act on,
 * even when the archives cannot be read.
 * @throws {TypeError} for invalid options.
 */
export declare function recallTool(options?: LangChainRecallToolOptions): DynamicStructuredTool
