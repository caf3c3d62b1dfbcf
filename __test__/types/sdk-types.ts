// Type-level test, compiled with `tsc --strict` (never run): every SDK's own message array goes
// into context-compact without a cast, and exactly the same element type comes back. An
// `// @ts-expect-error` line fails the compilation when its error disappears, so the negative
// checks fail if the types ever become so loose that they accept anything.

import { HumanMessage, type BaseMessage } from '@langchain/core/messages'
import type { Content } from '@google/genai'
import type { ModelMessage } from 'ai'
import type { FunctionTool, ResponseInputItem } from 'openai/resources/responses/responses'
import type { ChatCompletionTool } from 'openai/resources/chat/completions/completions'
import type { MessageParam, Tool as AnthropicTool, Usage as AnthropicUsage } from '@anthropic-ai/sdk/resources/messages/messages'
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions/completions'
import type { CompletionUsage } from 'openai/resources/completions'
import type { Tool as GeminiTool } from '@google/genai'
import type { ToolSet } from 'ai'
import {
  checkMessages,
  compactMessages,
  createRecallTool,
  Compactor,
  countTokens,
  measureTokens,
  offloadToolResults,
  partitionMessages,
  persistMessages,
  restoreMessages,
  shouldCompact,
  type BedrockMessage,
  type CompactOptions,
  type CompressionStrategy,
  type Message,
  type SummaryRequest,
} from 'context-compact'

/** True only when A and B are the same type (`any` is equal to nothing but `any`). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
/** Compiles only when its type argument is `true`. */
function assertType<_ extends true>(): void {}

declare const aiSdk: ModelMessage[]
declare const responses: ResponseInputItem[]
declare const gemini: Content[]
declare const langChain: BaseMessage[]
declare const native: Message[]
declare const anthropic: MessageParam[]
declare const chat: ChatCompletionMessageParam[]

const options: CompactOptions = { contextTokenLimit: 8000, outputDir: '/tmp/cc-types', sessionId: 'types' }

export async function sameTypeComesBack() {
  // compactMessages: messages of the caller's type, summary included.
  const aiSdkResult = await compactMessages(aiSdk, options)
  assertType<Equal<typeof aiSdkResult.messages, ModelMessage[]>>()
  const responsesResult = await compactMessages(responses, { ...options, format: 'openai-responses' })
  assertType<Equal<typeof responsesResult.messages, ResponseInputItem[]>>()
  const geminiResult = await compactMessages(gemini, { format: 'gemini' })
  assertType<Equal<typeof geminiResult.messages, Content[]>>()
  const langChainResult = await compactMessages(langChain)
  assertType<Equal<typeof langChainResult.messages, BaseMessage[]>>()
  const nativeResult = await compactMessages(native)
  assertType<Equal<typeof nativeResult.messages, Message[]>>()
  // The provider SDKs' own message params: what a loop passes to messages.create comes back as is.
  const anthropicResult = await compactMessages(anthropic)
  assertType<Equal<typeof anthropicResult.messages, MessageParam[]>>()
  const chatResult = await compactMessages(chat, { format: 'openai' })
  assertType<Equal<typeof chatResult.messages, ChatCompletionMessageParam[]>>()

  // A readonly array is accepted; a mutable one of the same type comes back.
  const frozen: readonly ModelMessage[] = aiSdk
  const fromFrozen: ModelMessage[] = (await compactMessages(frozen)).messages

  // Compactor.compact, partitionMessages, rollback.
  const compactor = new Compactor(options)
  const compacted = await compactor.compact(aiSdk, { usage: { inputTokens: 1200 } })
  assertType<Equal<typeof compacted.messages, ModelMessage[]>>()
  const parts = compactor.partitionMessages(gemini, 500)
  assertType<Equal<typeof parts.tail, Content[]>>()
  const rolledBack = await compactor.rollback(0, compacted.messages)
  assertType<Equal<typeof rolledBack, ModelMessage[]>>()
  const rolledBackUnnamed = await compactor.rollback<ResponseInputItem>(0)
  assertType<Equal<typeof rolledBackUnnamed, ResponseInputItem[]>>()

  // The loop of the README, typed with the SDKs' own types: the usage of the last response
  // (undefined before the first) goes in as it is, under exactOptionalPropertyTypes too.
  let anthropicUsage: AnthropicUsage | undefined
  let chatUsage: CompletionUsage | undefined
  const anthropicLoop = await compactor.compact(anthropic, { usage: anthropicUsage })
  assertType<Equal<typeof anthropicLoop.messages, MessageParam[]>>()
  const chatLoop = await compactor.compact(chat, { usage: chatUsage })
  assertType<Equal<typeof chatLoop.messages, ChatCompletionMessageParam[]>>()
  anthropicUsage = undefined
  chatUsage = undefined
  const stillOver: boolean = compactor.shouldCompact(anthropic, { usage: anthropicUsage }) || compactor.shouldCompact(chat, { usage: chatUsage })

  // restoreMessages, partitionMessages, offloadToolResults.
  const restored = await restoreMessages(responsesResult.messages, { outputDir: '/tmp/cc-types', sessionId: 'types' })
  assertType<Equal<typeof restored, ResponseInputItem[]>>()
  const { head, middle, tail } = partitionMessages(langChain, 1000, { format: 'langchain' })
  assertType<Equal<typeof head | typeof middle | typeof tail, BaseMessage[]>>()
  const offloaded = await offloadToolResults(gemini, { maxTokens: 2000, format: 'gemini' })
  assertType<Equal<typeof offloaded.messages, Content[]>>()

  // Functions that only read the list take any format.
  const tokens: number = countTokens(aiSdk) + countTokens(responses, { format: 'openai-responses' }) + countTokens(langChain)
  const over: boolean = shouldCompact(gemini, options) || measureTokens(responses).shouldCompact
  const problems = checkMessages(gemini, { format: 'gemini' }).concat(checkMessages(langChain))
  const archive: string = await persistMessages(middle, '/tmp/cc-types', 'types', { format: 'langchain' })

  // The results go straight back to the SDK that made them.
  const nextAiSdk: ModelMessage[] = compacted.messages
  const nextContents: Content[] = geminiResult.messages
  const nextInput: ResponseInputItem[] = responsesResult.messages
  const nextLangChain: BaseMessage[] = [...langChainResult.messages, new HumanMessage('go on')]
  const nextAnthropic: MessageParam[] = anthropicLoop.messages
  const nextChat: ChatCompletionMessageParam[] = chatLoop.messages
  return { stillOver, nextAnthropic, nextChat, fromFrozen, tokens, over, problems, archive, nextAiSdk, nextContents, nextInput, nextLangChain }
}

// @aws-sdk/client-bedrock-runtime is not installed: this is the shape of its declarations (v3,
// abridged), where each ContentBlock member sets one field and declares the others `?: never`,
// and `$unknown` stands for blocks newer than the SDK. That pattern is what could break
// assignability, so it is what is replicated.
namespace AwsBedrockRuntime {
  export type ContentBlock = ContentBlock.TextMember | ContentBlock.ToolUseMember | ContentBlock.ToolResultMember | ContentBlock.$UnknownMember
  export namespace ContentBlock {
    export interface TextMember {
      text: string
      image?: never
      toolUse?: never
      toolResult?: never
      reasoningContent?: never
      $unknown?: never
    }
    export interface ToolUseMember {
      text?: never
      image?: never
      toolUse: { toolUseId: string | undefined; name: string | undefined; input: unknown | undefined; type?: 'server_tool_use' }
      toolResult?: never
      reasoningContent?: never
      $unknown?: never
    }
    export interface ToolResultMember {
      text?: never
      image?: never
      toolUse?: never
      toolResult: { toolUseId: string | undefined; content: Array<{ text: string } | { json: unknown }> | undefined; status?: 'success' | 'error' }
      reasoningContent?: never
      $unknown?: never
    }
    export interface $UnknownMember {
      text?: never
      image?: never
      toolUse?: never
      toolResult?: never
      reasoningContent?: never
      $unknown: [string, any]
    }
  }
  export interface Message {
    role: 'user' | 'assistant' | undefined
    content: ContentBlock[] | undefined
  }
}

declare const fromBedrockSdk: AwsBedrockRuntime.Message[]

export async function bedrockAndInlineMessages() {
  const sdkResult = await compactMessages(fromBedrockSdk, { format: 'bedrock' })
  assertType<Equal<typeof sdkResult.messages, AwsBedrockRuntime.Message[]>>()

  // Bedrock messages written inline, as ConverseCommand takes them.
  const converse: BedrockMessage[] = [
    { role: 'user', content: [{ text: 'List the files.' }] },
    { role: 'assistant', content: [{ toolUse: { toolUseId: 'tu1', name: 'list_files', input: { dir: '.' } } }] },
    { role: 'user', content: [{ toolResult: { toolUseId: 'tu1', content: [{ text: 'a.ts' }], status: 'success' } }] },
  ]
  const bedrock = await compactMessages(converse, { format: 'bedrock' })
  assertType<Equal<typeof bedrock.messages, BedrockMessage[]>>()

  // Literals of each format are accepted as written, each list inferring its own element type.
  const items = (
    await compactMessages([
      { role: 'developer', content: 'You are a coding agent.' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Fix the test.' }] },
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA' },
      { type: 'function_call', call_id: 'call_1', name: 'shell', arguments: '{"command":"npm test"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'ok' },
    ])
  ).messages
  const contents = (
    await compactMessages([
      { role: 'user', parts: [{ text: 'Edit a.py' }] },
      { role: 'model', parts: [{ functionCall: { name: 'edit', args: { path: 'a.py' } }, thoughtSignature: 'c2ln' }] },
      { role: 'user', parts: [{ functionResponse: { name: 'edit', response: { output: 'ok' } } }] },
    ])
  ).messages
  return { sdkResult, items, contents }
}

export function summarizersAndStrategiesForOneFormat() {
  // A summarizer and a strategy written for one format fit the (format-independent) options.
  const forAiSdk: CompactOptions = {
    summarizer: async (request: SummaryRequest<ModelMessage>) => `${request.messages.length} AI SDK messages`,
  }
  const keepLastTwo: CompressionStrategy = {
    async compress(messages: Message[], markMap) {
      return { messages: messages.slice(-2), markMap }
    },
  }
  // An unannotated summarizer sees the messages of any format.
  const anyFormat: CompactOptions = { summarizer: async ({ messages, prompt }) => `${messages.length}: ${prompt.length}`, strategy: keepLastTwo }
  return [forAiSdk, anyFormat]
}

export async function recallToolsFitTheirSdks() {
  // Each definition goes into its SDK's tool list as it is.
  const anthropic: AnthropicTool[] = [createRecallTool().definition]
  const chat: ChatCompletionTool[] = [createRecallTool({ format: 'openai' }).definition]
  const responses: FunctionTool[] = [createRecallTool({ format: 'openai-responses' }).definition]
  const gemini: GeminiTool[] = [createRecallTool({ format: 'gemini' }).definition]
  // The AI SDK's schema type is branded with a symbol of its own: its definition is typed loosely.
  const aiSdk: ToolSet = { recall: createRecallTool({ format: 'ai-sdk' }).definition as ToolSet[string] }
  const answer: string = await createRecallTool().run({ archive: 'compact-20260101T000000Z-1.json', from: 0, to: 3 })
  // @ts-expect-error the input's fields have their types
  await createRecallTool().run({ from: 'first' })
  return [anthropic, chat, responses, gemini, aiSdk, answer]
}

export async function rejected() {
  // @ts-expect-error numbers are not messages
  await compactMessages([1, 2, 3])
  // @ts-expect-error a string is not a message list
  countTokens('hello')
  // @ts-expect-error content must be a string or blocks, in every format that has `content`
  await compactMessages([{ role: 'user', content: 42 }])
  // @ts-expect-error an unknown format name
  checkMessages(gemini, { format: 'vertex' })
  // @ts-expect-error Gemini contents do not become AI SDK messages (no `content`)
  const wrong: ModelMessage[] = (await compactMessages(gemini)).messages
  return wrong
}
