// context-compact/mastra: compaction as a Mastra processor (`@mastra/core` 1.x). Mastra's own types
// (`Processor`, `ProcessInputStepArgs`, …) come from the `@mastra/core` you have installed.

import type { ProcessAPIErrorArgs, ProcessAPIErrorResult, ProcessInputStepArgs, Processor } from '@mastra/core/processors'
import type { MessageList } from '@mastra/core/agent/message-list'
import type { CompactOptions, CompactResult, Compactor } from '../../index'

/**
 * The options of {@link ContextCompactProcessor}: the {@link Compactor}'s options (archives
 * `outputDir` / `sessionId` / `archiveStore`, `contextTokenLimit`, the summary `provider` or
 * `summarizer`, checkpoints, `onEvent`, …). The system prompt is read from the step's system
 * messages, the tools from the step's tools (their names, descriptions and input schemas are
 * counted, as the provider bills them; `tools` given here are counted instead), and the abort
 * signal from the run.
 *
 * Not accepted, because the processor sets them itself: `usage` (read from the previous step's
 * billed usage), `force`, and `overflow` (passed by `processAPIError`).
 */
export interface ContextCompactProcessorOptions
  extends Omit<CompactOptions, 'format' | 'usage' | 'force' | 'overflow' | 'signal'> {
  /**
   * The messages are the AI SDK messages Mastra sends the model: `'ai-sdk'` only.
   * @default 'ai-sdk'
   */
  format?: 'ai-sdk'
  /**
   * The processor's id (what Mastra names its span and its state after).
   * @default 'context-compact'
   */
  id?: string
}

/**
 * Compaction as a Mastra processor. In `inputProcessors`, `processInputStep` compacts the
 * messages before a model call when the estimate reaches the threshold
 * (`contextTokenLimit × thresholdRatio`); the change stays in the run's message list for the
 * later steps. The steps of the run so far (one assistant message in Mastra) are compacted step
 * by step: the latest steps stay in that message. In `errorProcessors`, `processAPIError` compacts
 * after a provider rejection that says the request is over the context window and returns
 * `{ retry: true }`; Mastra calls it only when the agent has `errorProcessors`.
 *
 * Each compaction's outcome (`context_compact.status`, `.tokens_before`, `.tokens_after`, …) is
 * added to the metadata of the span Mastra gives the processor run, when tracing is on.
 *
 * @example
 * ```ts
 * import { Agent } from '@mastra/core/agent'
 * import { ContextCompactProcessor } from 'context-compact/mastra'
 *
 * const compaction = new ContextCompactProcessor({ contextTokenLimit: 200_000 })
 * const agent = new Agent({
 *   id: 'agent',
 *   name: 'agent',
 *   instructions: 'You are a helpful assistant.',
 *   model: 'openai/gpt-5',
 *   inputProcessors: [compaction],
 *   errorProcessors: [compaction],
 * })
 * ```
 */
export declare class ContextCompactProcessor implements Processor<string> {
  constructor(options?: ContextCompactProcessorOptions)
  /** The processor's id, `options.id` (default `'context-compact'`): Mastra names its span after it. */
  readonly id: string
  /** The processor's name in Mastra's traces: `'Context compaction'`. */
  readonly name: string
  /** What the processor does, as Mastra shows it. */
  readonly description: string
  /**
   * The Compactor doing the work (its checkpoints, archives, `close()`). It reads the processor's
   * own conversions of Mastra's messages, which it does not compare again at each step: a list of
   * your own goes to a Compactor of your own.
   */
  readonly compactor: Compactor
  /** The result of the last compaction run (`null` before the first). */
  lastResult: CompactResult | null
  /** Compacts when the trigger fires; resolves with the message list when it changed it. */
  processInputStep(args: ProcessInputStepArgs): Promise<MessageList | undefined>
  /** On a context-overflow rejection: compacts and resolves `{ retry: true }`; otherwise `undefined`. */
  processAPIError(args: ProcessAPIErrorArgs): Promise<ProcessAPIErrorResult | undefined>
}
