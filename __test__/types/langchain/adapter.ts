// Type-level test of context-compact/langchain, compiled with `strict` and
// `exactOptionalPropertyTypes` (never run): the middleware is an element of
// `createAgent({ middleware: [...] })` and the recall tool an element of its `tools`, with no
// cast; the options take a LangChain chat model, a model name or the library's options; the last
// result's messages are LangChain messages that restoreMessages takes back. The
// `@ts-expect-error` lines fail the compilation if the types start accepting what they must not.

import { createAgent, createMiddleware, fakeModel, initChatModel, tool } from 'langchain'
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages'
import { restoreMessages, type CompactEvent } from 'context-compact'
import {
  contextCompactMiddleware,
  recallTool,
  type ContextCompactMiddleware,
  type ContextCompactMiddlewareOptions,
  type LangChainCompactErrorCode,
  type LangChainCompactResult,
} from 'context-compact/langchain'

/** True only when A and B are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
function assertType<_ extends true>(): void {}

const readFile = tool(async ({ path }: { path: string }) => `contents of ${path}`, {
  name: 'read_file',
  description: 'Reads a file',
  schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
})

export async function asAgentMiddleware() {
  const summaries = fakeModel().respond(new AIMessage('## Summary'))
  const events: CompactEvent[] = []
  const compaction = contextCompactMiddleware({
    model: summaries,
    contextTokenLimit: 32_000,
    thresholdRatio: 0.9,
    outputDir: './.context-compact',
    background: { atRatio: 0.7 },
    rehydrate: { read: async (path: string) => (path.endsWith('.ts') ? 'export {}' : null) },
    onEvent: (event) => events.push(event),
  })
  assertType<Equal<typeof compaction, ContextCompactMiddleware>>()

  // An element of createAgent's middleware, beside one of the user's own, with the recall tool.
  // (LangChain's summarizationMiddleware itself is not assignable there under
  // exactOptionalPropertyTypes: its context schema's zod types are not.)
  const logging = createMiddleware({
    name: 'Logging',
    afterModel: (state) => {
      void state.messages.length
    },
  })
  const agent = createAgent({
    model: fakeModel().respond(new AIMessage('done')),
    tools: [readFile, recallTool({ outputDir: './.context-compact' })],
    systemPrompt: 'You read files.',
    middleware: [compaction, logging],
  })
  const state = await agent.invoke({ messages: [new HumanMessage('Read package.json')] }, { configurable: { thread_id: 't-1' } })
  const messages: BaseMessage[] = state.messages

  // The last result: LangChain messages, restorable.
  const last = compaction.lastResult
  assertType<Equal<typeof last, LangChainCompactResult | null>>()
  if (last) {
    assertType<Equal<typeof last.messages, BaseMessage[]>>()
    const code: LangChainCompactErrorCode | undefined = last.error?.code
    const originals = await restoreMessages(last.messages, { outputDir: './.context-compact', sessionId: last.sessionId })
    assertType<Equal<typeof originals, BaseMessage[]>>()
    return { messages, code, originals }
  }
  await compaction.close()
  return { messages }
}

export async function chatModels() {
  // A model of initChatModel (a ConfigurableModel) writes summaries as well as a chat model class.
  const configurable = contextCompactMiddleware({ model: await initChatModel('openai:gpt-4.1-mini') })
  return configurable
}

export function options() {
  // A model name is the library's summary model; a summarizer instead of a model.
  const named: ContextCompactMiddlewareOptions = { model: 'claude-haiku-4-5', provider: 'anthropic' }
  const custom = contextCompactMiddleware({ summarizer: async (request) => `summary of ${request.messages.length}`, sessionId: 'fixed' })
  // @ts-expect-error: the format is always LangChain's
  contextCompactMiddleware({ format: 'openai' })
  // @ts-expect-error: the usage comes from the request, not from the options
  contextCompactMiddleware({ usage: { input_tokens: 1 } })
  // @ts-expect-error: the system prompt comes from the request
  contextCompactMiddleware({ system: 'You are…' })
  // @ts-expect-error: the chat model must be able to invoke
  contextCompactMiddleware({ model: { name: 'not a model' } })
  // An option read from a variable that may be undefined goes in as it is, under
  // exactOptionalPropertyTypes too: undefined is the default.
  const notSet: ContextCompactMiddlewareOptions = { outputDir: process.env.ARCHIVES }
  // @ts-expect-error: lastResult is read-only
  custom.lastResult = null
  return [named, custom, notSet]
}
