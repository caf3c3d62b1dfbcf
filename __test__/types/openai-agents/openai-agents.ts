// Type-level test, compiled with `tsc --strict --exactOptionalPropertyTypes` (never run): a
// CompactingSession goes wherever the SDK takes a Session, with no cast, and gives back the
// SDK's own item type. The `@ts-expect-error` lines fail the compilation if the types become so
// loose that they accept mistakes.

import {
  Agent,
  MemorySession,
  run,
  type AgentInputItem,
  type FunctionTool,
  type OpenAIResponsesCompactionAwareSession,
  type OpenAIResponsesCompactionOwnershipAwareSession,
  type RunContextAwareSession,
  type Session,
} from '@openai/agents'
import { isOpenAIResponsesCompactionAwareSession, isOpenAIResponsesCompactionOwnershipAwareSession, isRunContextAwareSession } from '@openai/agents'
import {
  CompactingSession,
  recallTool,
  type CompactingSessionOptions,
  type SessionCompactErrorCode,
  type SessionCompactResult,
} from 'context-compact/openai-agents'

/** True only when A and B are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
function assertType<_ extends true>(): void {}

const options: CompactingSessionOptions = {
  contextTokenLimit: 128_000,
  thresholdRatio: 0.8,
  agentModel: 'gpt-4.1',
  outputDir: './.context-compact',
  background: { atRatio: 0.7 },
  checkpoints: true,
  rehydrate: false,
  runUsage: true,
  summarizer: async (request) => {
    // The summarizer is asked with the SDK's items.
    assertType<Equal<(typeof request.messages)[number], AgentInputItem>>()
    return `summary of ${request.messages.length} items`
  },
  onEvent: (event) => {
    if (event.type === 'failed') {
      const code: SessionCompactErrorCode = event.error.code
      void code
    }
  },
}

/** Options computed at run time: under exactOptionalPropertyTypes, undefined is accepted as absent. */
export function optionsFromTheEnvironment(limit: number | undefined, signal: AbortSignal | undefined) {
  return new CompactingSession(new MemorySession(), { contextTokenLimit: limit, signal, runUsage: undefined, sessionId: undefined })
}

export async function aSessionWithoutACast() {
  const session = new CompactingSession(new MemorySession(), options)
  const asSession: Session = session
  const aware: OpenAIResponsesCompactionAwareSession = session
  const withContext: RunContextAwareSession = session
  // The runner hands runCompaction its ownership receipt and the model exchange.
  const owning: OpenAIResponsesCompactionOwnershipAwareSession = session
  void asSession
  void aware
  void withContext
  void owning
  // What the runner checks before it calls runCompaction and passes its run context.
  if (!isOpenAIResponsesCompactionAwareSession(asSession) || !isRunContextAwareSession(asSession)) throw new Error('unreachable')
  if (!isOpenAIResponsesCompactionOwnershipAwareSession(asSession)) throw new Error('unreachable')
  const owned = await session.getItemsWithCompactionOwnership()
  await session.addItemsWithCompactionOwnership(owned.items.slice(-1), owned.ownership)
  await session.runCompaction(undefined, undefined, owned.ownership, { items: owned.items })

  const agent = new Agent({ name: 'coder', instructions: 'Help.', tools: [session.recallTool()] })
  const controller = new AbortController()
  session.signal = controller.signal
  await run(agent, 'Refactor the parser', { session, signal: controller.signal })

  // The SDK's items come back.
  const items = await session.getItems()
  assertType<Equal<typeof items, AgentInputItem[]>>()
  const restored = await session.restoreItems()
  assertType<Equal<typeof restored, AgentInputItem[]>>()
  const result = await session.compact({ force: true })
  assertType<Equal<typeof result, SessionCompactResult>>()
  assertType<Equal<typeof result.messages, AgentInputItem[]>>()
  const last = session.lastResult
  if (last !== null && last.error !== null) {
    const code: SessionCompactErrorCode = last.error.code
    void code
  }
  const tool: FunctionTool<any, any, string> = recallTool({ outputDir: './.context-compact', sessionId: 'chat-1', maxTokens: 4000 })
  void tool
  await session.close()
}

export function mistakesAreCaught() {
  // @ts-expect-error not a Session
  new CompactingSession({ getItems: async () => [] })
  // @ts-expect-error the format is the SDK's own
  new CompactingSession(new MemorySession(), { format: 'gemini' })
  // @ts-expect-error usage is per run, not per session
  new CompactingSession(new MemorySession(), { usage: { input_tokens: 1 } })
  // @ts-expect-error runUsage is a boolean
  new CompactingSession(new MemorySession(), { runUsage: 'yes' })
  const session = new CompactingSession(new MemorySession())
  // @ts-expect-error lastResult is read-only
  session.lastResult = null
  // @ts-expect-error a signal is an AbortSignal
  session.signal = 'stop'
}
