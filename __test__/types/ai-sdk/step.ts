// Type-level test of context-compact/ai-sdk, compiled (never run) against AI SDK 5, 6 and 7 in
// turn (tsconfig.v5/v6/v7.json map `ai` to each), under `strict` and `exactOptionalPropertyTypes`:
// the step goes into `prepareStep` as it is, with no cast, and what it gives back is typed with
// the SDK's own `ModelMessage`. An `// @ts-expect-error` line fails the compilation when its error
// disappears, so the negative checks fail if the types become so loose that they accept anything.

import {
  generateText,
  jsonSchema,
  stepCountIs,
  streamText,
  tool,
  type LanguageModel,
  type ModelMessage,
  type PrepareStepFunction,
  type Tool,
} from 'ai'
import { restoreMessages, type CompactResult } from 'context-compact'
import { compactionStep, recallTool, type CompactionStep } from 'context-compact/ai-sdk'

/** True only when A and B are the same type (`any` is equal to nothing but `any`). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
/** Compiles only when its type argument is `true`. */
function assertType<_ extends true>(): void {}

declare const model: LanguageModel
declare const messages: ModelMessage[]

const archive = { outputDir: '/tmp/cc-ai-sdk-types', sessionId: 'types' }
const tools = {
  read_file: tool({
    description: 'Reads a file.',
    inputSchema: jsonSchema<{ path: string }>({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }),
    execute: async ({ path }) => `contents of ${path}`,
  }),
}
const system = 'You are a coding assistant.'

export async function asWritten() {
  const step = compactionStep({ contextTokenLimit: 128_000, system, tools, ...archive })

  // The SDK's own function type, for this tool set: assignable with no cast.
  const prepare: PrepareStepFunction<typeof tools> = step
  void prepare

  // `prepareStep: step` as written, in generateText and streamText.
  const result = await generateText({ model, system, tools, messages, stopWhen: stepCountIs(30), prepareStep: step })
  void result
  const stream = streamText({ model, system, tools, messages, stopWhen: stepCountIs(30), prepareStep: step })
  void stream

  // The last result, typed with the SDK's message type; restore gives the same type back.
  const last = step.lastResult
  assertType<Equal<typeof last, CompactResult<ModelMessage> | null>>()
  if (last !== null) {
    assertType<Equal<typeof last.messages, ModelMessage[]>>()
    const restored = await restoreMessages(last.messages, archive)
    assertType<Equal<typeof restored, ModelMessage[]>>()
  }

  // Called directly (e.g. from your own prepareStep): the SDK's options in, ModelMessage[] out.
  const out = await step({ messages, steps: [] })
  assertType<Equal<typeof out, { messages: ModelMessage[] } | undefined>>()

  // Composed with other per-step settings.
  await generateText({
    model,
    tools,
    messages,
    prepareStep: async (options) => ({ ...(await step(options)), activeTools: ['read_file'] }),
  })
}

export async function options() {
  // The system prompt in each form the SDK takes; tools as definitions; a signal or a function.
  compactionStep({ system: { role: 'system', content: system } })
  compactionStep({ system: [{ role: 'system', content: system }], tools: [{ name: 'read_file', input_schema: {} }] })
  const controller = new AbortController()
  compactionStep({ signal: controller.signal })
  compactionStep({ signal: () => controller.signal })
  // The Compactor's options pass through.
  compactionStep({ background: true, checkpoints: true, rehydrate: { maxTokens: 4000 }, onEvent: (event) => void event.type })

  // @ts-expect-error usage is read from each step
  compactionStep({ usage: { inputTokens: 100 } })
  // @ts-expect-error force would compact before every step
  compactionStep({ force: true })
  // @ts-expect-error the messages are always ModelMessages
  compactionStep({ format: 'anthropic' })
  // @ts-expect-error a signal, or a function returning one
  compactionStep({ signal: 'stop' })
  // @ts-expect-error the system prompt is text or system messages
  compactionStep({ system: [{ role: 'user', content: system }] })
  // An option read from a variable that may be undefined goes in as it is, under
  // exactOptionalPropertyTypes too: undefined is the default.
  compactionStep({ sessionId: process.env.SESSION_ID })

  const step: CompactionStep = compactionStep()
  // @ts-expect-error lastResult is read-only
  step.lastResult = null
  // @ts-expect-error the step takes the SDK's step options, not a bare list
  await step(messages)
}

export async function recall() {
  // Straight into the tool set, with or without tool().
  const recallDefinition = recallTool(archive)
  const asTool: Tool = recallDefinition
  void asTool
  await generateText({ model, tools: { ...tools, recall: recallTool(archive) }, messages, prepareStep: compactionStep(archive) })
  await generateText({ model, tools: { ...tools, recall: tool(recallTool({ ...archive, maxTokens: 4000 })) }, messages })
  // @ts-expect-error the format is always the AI SDK's
  recallTool({ format: 'anthropic' })
}
