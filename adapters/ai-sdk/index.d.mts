// Generated from adapters/ai-sdk/index.d.ts by scripts/adapter-types.mjs (npm run build:types): edit that file.
// The declarations `import` gets (an ES module).

// context-compact/ai-sdk: compaction as the Vercel AI SDK's `prepareStep` (AI SDK 5, 6 and 7).
// The AI SDK's own types (`ModelMessage`, `ToolSet`, …) come from the `ai` package you have
// installed, so the step fits the `prepareStep` of that version with no cast.

import type { ModelMessage, SystemModelMessage, Tool, ToolSet } from 'ai'
import type { CompactOptions, CompactResult, Compactor, RecallInput, RecallToolOptions } from '../../index.js'

/**
 * The options of {@link compactionStep}: the {@link Compactor}'s options (archives `outputDir` /
 * `sessionId` / `archiveStore`, `contextTokenLimit`, the summary `provider` or `summarizer`,
 * checkpoints, `background`, `rehydrate`, `agentRequest`, `onEvent`, …), with `system`, `tools`
 * and `signal` in the AI SDK's own terms.
 *
 * Not accepted, because the step sets them itself: `usage` (read from each step), `force` and
 * `overflow` (they concern one call: use `step.compactor.compact(messages, { overflow })`).
 */
export interface CompactionStepOptions
  extends Omit<CompactOptions, 'format' | 'system' | 'tools' | 'signal' | 'usage' | 'force' | 'overflow'> {
  /**
   * The messages are always the AI SDK's `ModelMessage`s: `'ai-sdk'` (or `'auto'`) only.
   * @default 'ai-sdk'
   */
  format?: 'ai-sdk' | 'auto'
  /**
   * The system prompt you give `generateText` / `streamText` / the agent (`system` or
   * `instructions`): counted into every estimate, never summarized (it is not in the messages).
   * AI SDK 5 and 6 do not show it to `prepareStep`, so pass it here. AI SDK 7 does (the step's
   * `instructions`, including a change made by another `prepareStep`), and that is used when this
   * option is not given.
   * @default undefined (AI SDK 7: the step's instructions)
   */
  system?: string | SystemModelMessage | ReadonlyArray<SystemModelMessage>
  /**
   * The tools you give `generateText` (the same `ToolSet` object), or tool definitions as the
   * {@link Compactor}'s `tools` option takes them. No AI SDK version shows them to `prepareStep`,
   * and the provider bills their names, descriptions and input schemas with every request: they
   * are counted into every estimate, never changed. Schemas are read as the SDK reads them
   * (`jsonSchema()`, Zod 4 and other Standard JSON Schemas; Zod 3 through the SDK's own converter);
   * one that cannot be read is counted without its schema (a warning goes to `onLog` / `logger`).
   * @default undefined (no tools counted)
   */
  tools?: ToolSet | ReadonlyArray<object>
  /**
   * Aborts a compaction in progress. The AI SDK does not pass its `abortSignal` to `prepareStep`,
   * so give the same signal here, or a function returning the signal of the run in progress (for
   * an agent whose calls each get their own). When it aborts, the step rejects with the
   * `AbortError` and the run ends with it, as the SDK's own abort does.
   * @default undefined
   */
  signal?: AbortSignal | (() => AbortSignal | null | undefined)
}

/**
 * The AI SDK's usage of a step, as the step reads it (`LanguageModelUsage` of AI SDK 5, 6 and 7).
 * On AI SDK 6 and 7 `inputTokens` includes the tokens read from and written to the prompt cache;
 * on AI SDK 5 that depends on the provider (see {@link compactionStep}).
 */
export interface AiSdkStepUsage {
  /** The request's input tokens as the provider billed them. */
  readonly inputTokens?: number | undefined
  /** The tokens the model wrote (not read by the trigger). */
  readonly outputTokens?: number | undefined
  /** AI SDK 5: the cached input tokens. */
  readonly cachedInputTokens?: number | undefined
  /** AI SDK 6 and 7: the parts of `inputTokens`. */
  readonly inputTokenDetails?:
    | {
        /** Input tokens paid in full. */
        readonly noCacheTokens?: number | undefined
        /** Input tokens read from the prompt cache. */
        readonly cacheReadTokens?: number | undefined
        /** Input tokens written to the prompt cache. */
        readonly cacheWriteTokens?: number | undefined
      }
    | undefined
}

/** What the step reads of the options the AI SDK gives `prepareStep` (AI SDK 5, 6 and 7). */
export interface CompactionStepInput {
  /** The messages the step would send. */
  messages: ModelMessage[]
  /** The finished steps: the last one's `usage` is what its request was billed. */
  steps: ReadonlyArray<{
    /** What the step's request was billed. */
    readonly usage: AiSdkStepUsage
    /** AI SDK 5 with Anthropic: `anthropic.usage`, the raw usage, tells the cached tokens. */
    readonly providerMetadata?: unknown
  }>
  /** AI SDK 7: the step's instructions (its system prompt). */
  instructions?: string | SystemModelMessage | ReadonlyArray<SystemModelMessage> | undefined
}

/**
 * A `prepareStep` function that compacts the step's messages when the trigger fires: pass it as
 * `prepareStep` to `generateText`, `streamText` or `ToolLoopAgent`, as it is. It also carries the
 * last result and the {@link Compactor} it runs on.
 */
export interface CompactionStep {
  /**
   * Resolves with `{ messages }` (the list the model gets: compacted now, or the compaction of an
   * earlier step carried forward) or with `undefined` (the step's own messages are sent).
   * Resolves, with the messages unchanged, when the summary cannot be written or the archive or
   * store fails ({@link CompactionStep.lastResult} says why); rejects only when its `signal`
   * aborts (with the `AbortError`) or for invalid messages (a `TypeError`).
   */
  (options: CompactionStepInput): Promise<{
    /** The list the model gets instead of the step's own. */
    messages: ModelMessage[]
  } | undefined>
  /**
   * The result of the last compaction this step attempted — compacted, or skipped with `error`
   * (a summary that failed) or `warnings` (an archive that could not be written) — or `null`
   * before the first. Steps below the threshold attempt none and leave it as it is.
   * `restoreMessages(lastResult.messages, { outputDir, sessionId })` gives back the whole history
   * it compacted.
   */
  readonly lastResult: CompactResult<ModelMessage> | null
  /**
   * The {@link Compactor} behind the step: its `calibration`, `markMap` and `rollback`, and
   * `compact(messages, { overflow })` after a request the API refused as too long.
   */
  readonly compactor: Compactor
  /** Stops the background work (`background` option): see {@link Compactor.close}. */
  close(): Promise<void>
}

/**
 * Compaction for an AI SDK agent loop (AI SDK 5, 6 and 7): returns a `prepareStep` function that,
 * before each model call, compacts the step's messages when they reach the threshold (by default
 * 92 % of `contextTokenLimit`): the head and the recent tail are kept as they are, the middle is
 * replaced by a summary message (`{ role: 'user', content }`), and the originals are archived.
 *
 * - **The trigger** reads the previous step's `usage` (the input tokens its request was billed,
 *   cache reads and writes included, plus its output), and the estimate of what was added since.
 *   On AI SDK 5 the cache is read from `providerMetadata.anthropic.usage` for Anthropic, and from
 *   `cachedInputTokens` when it exceeds `inputTokens` for other providers that leave it out.
 * - **System prompt and tools** are not in the messages: they are counted into every estimate
 *   (pass them as `system` and `tools`) and never summarized.
 * - **Carried forward.** After a compaction every later step sends the compacted list plus what
 *   was added since, without another summary. (AI SDK 7 does this itself; on AI SDK 5 and 6 the
 *   step does it.) A history that comes back as new objects — the next call of a chat, read from
 *   a database — gets the same summary message from the checkpoint, without an LLM call.
 * - **Below the threshold** a step returns `undefined`; it counts only what was added since the
 *   previous step (a millisecond or two on a 400K-token history).
 * - **One step per conversation** (with its own `sessionId`): it keeps what it compacted and what
 *   it learned from the provider's usage for that conversation.
 * - **Failures** never break the run: a summary that fails (LLM down, `summarizer` rejecting)
 *   leaves the messages as they are and `lastResult.error` says why, with the `failed` event; an
 *   archive that cannot be written is reported in `lastResult.warnings` (the compaction goes on,
 *   or is skipped with `requireArchive`). Only an aborted `signal` ends the run.
 *
 * @example
 * import { generateText, stepCountIs } from 'ai'
 * import { compactionStep } from 'context-compact/ai-sdk'
 *
 * const step = compactionStep({ contextTokenLimit: 200_000, system, tools, sessionId: 'chat-42' })
 * const result = await generateText({ model, system, tools, messages, stopWhen: stepCountIs(50), prepareStep: step })
 * if (step.lastResult?.compacted) console.log(step.lastResult.stats)
 * @throws {TypeError} for invalid options, naming the option.
 */
export declare function compactionStep(options?: CompactionStepOptions): CompactionStep

/** The options of {@link recallTool}: where the archives are, as the compactions were given it. */
export type AiSdkRecallToolOptions = Omit<RecallToolOptions<'ai-sdk'>, 'format'>

/**
 * The recall tool in the AI SDK's tool shape, for `tools: { recall: recallTool({ outputDir, sessionId }) }`
 * (with or without the SDK's `tool()`): the agent reads back the original messages a compaction
 * archived — the range a summary's `Recall:` line names, or the passages matching a query (see
 * `createRecallTool`). Its `execute` always resolves with text for the model.
 * @throws {TypeError} for invalid options, naming the option.
 */
export declare function recallTool(options?: AiSdkRecallToolOptions): Tool<RecallInput, string>

/** The default export of the ES module: the same exports, as one object. */
declare const _default: {
  compactionStep: typeof compactionStep
  recallTool: typeof recallTool
}
export default _default
