/**
 * An agent loop on the Vercel AI SDK (`generateText` with tools), kept under the context window
 * by context-compact.
 *
 * The AI SDK's `ModelMessage`s are not a wire format context-compact reads as is: tool calls
 * are `{ type: 'tool-call', toolCallId, toolName, input }` parts and tool results live in
 * `role: 'tool'` messages holding several `{ type: 'tool-result', toolCallId, output }` parts,
 * without the `tool_call_id` an OpenAI tool message has. So this example converts them to
 * Anthropic-style messages (`tool_use` / `tool_result` blocks) with a small adapter, compacts
 * those, and maps the result back: retained messages are the very objects compaction was
 * given, so each one maps back to the original `ModelMessage`, and the summary is a plain
 * `{ role: 'user', content: string }`, which is a valid `ModelMessage` already.
 *
 *   OPENAI_API_KEY=sk-… npx tsx examples/ai-sdk-agent-loop.ts "What does this package do?"
 *
 * Environment:
 *   OPENAI_API_KEY         the key (read by the provider, and by context-compact for the summaries)
 *   OPENAI_BASE_URL        another endpoint, e.g. a local mock, with its /v1
 *   EXAMPLE_MODEL          the agent's model (default gpt-4o)
 *   EXAMPLE_CONTEXT_LIMIT  a tiny context window, to watch compaction happen (default: the model's)
 *   EXAMPLE_OUTPUT_DIR     where the archives of compacted messages go (default ./.context-compact)
 */
import { createOpenAI } from '@ai-sdk/openai'
import { generateText, jsonSchema, stepCountIs, tool, type ModelMessage, type ToolResultPart } from 'ai'
import { Compactor, type ContentBlock, type Message } from 'context-compact'
import { readdirSync, readFileSync } from 'node:fs'
import { relative, resolve } from 'node:path'

const MODEL = process.env.EXAMPLE_MODEL ?? 'gpt-4o'
const MAX_TURNS = 20
const SYSTEM = 'You are a coding assistant. Use the tools to look at the files in the working directory.'

// ---------------------------------------------------------------------------------------------
// The adapter: AI SDK ModelMessage[] ⇄ context-compact Message[]

/** The text of a tool result's output, as the model saw it. */
function outputText(output: ToolResultPart['output']): string {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return output.value
    case 'json':
    case 'error-json':
      return JSON.stringify(output.value)
    case 'execution-denied':
      return `[execution denied${output.reason ? `: ${output.reason}` : ''}]`
    case 'content':
      return output.value.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n')
    default:
      return JSON.stringify(output)
  }
}

/** One ModelMessage as context-compact reads it (Anthropic-style blocks). */
function toCompactMessage(message: ModelMessage): Message {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content }
    case 'user':
      return {
        role: 'user',
        content:
          typeof message.content === 'string'
            ? message.content
            : message.content.map((part) =>
                part.type === 'text' ? { type: 'text', text: part.text } : { type: 'text', text: `[${part.type}]` },
              ),
      }
    case 'assistant': {
      if (typeof message.content === 'string') return { role: 'assistant', content: message.content }
      const blocks: ContentBlock[] = []
      for (const part of message.content) {
        if (part.type === 'text') blocks.push({ type: 'text', text: part.text })
        else if (part.type === 'reasoning') blocks.push({ type: 'thinking', thinking: part.text })
        else if (part.type === 'tool-call') blocks.push({ type: 'tool_use', id: part.toolCallId, name: part.toolName, input: part.input })
        else if (part.type === 'tool-result') blocks.push({ type: 'text', text: outputText(part.output) })
      }
      return { role: 'assistant', content: blocks }
    }
    case 'tool':
      // All results of one step, answering the assistant message right before.
      return {
        role: 'user',
        content: message.content.flatMap((part): ContentBlock[] =>
          part.type === 'tool-result'
            ? [
                {
                  type: 'tool_result',
                  tool_use_id: part.toolCallId,
                  content: outputText(part.output),
                  is_error: part.output.type === 'error-text' || part.output.type === 'error-json',
                },
              ]
            : [],
        ),
      }
  }
}

/** Converts a history; `back` turns a compacted list into ModelMessages again. */
function adapt(history: ModelMessage[]) {
  const originals = new Map<Message, ModelMessage>()
  const messages = history.map((message) => {
    const converted = toCompactMessage(message)
    originals.set(converted, message)
    return converted
  })
  const back = (compacted: Message[]): ModelMessage[] =>
    // Retained messages map to their originals; the summary is `{ role: 'user', content: string }`.
    compacted.map((m) => originals.get(m) ?? { role: 'user', content: typeof m.content === 'string' ? m.content : '' })
  return { messages, back }
}

// ---------------------------------------------------------------------------------------------
// Tools

/** A path inside the working directory, or an error. */
function insideCwd(path: string): string {
  const full = resolve(path)
  if (relative(process.cwd(), full).startsWith('..')) throw new Error(`${path} is outside the working directory`)
  return full
}

const tools = {
  list_files: tool({
    description: 'Lists the files of a directory (relative to the working directory).',
    inputSchema: jsonSchema<{ dir: string }>({ type: 'object', properties: { dir: { type: 'string' } }, required: ['dir'] }),
    execute: async ({ dir }) =>
      readdirSync(insideCwd(dir), { withFileTypes: true })
        .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
        .join('\n'),
  }),
  read_file: tool({
    description: 'Reads a text file (relative to the working directory); long files are cut.',
    inputSchema: jsonSchema<{ path: string }>({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }),
    execute: async ({ path }) => readFileSync(insideCwd(path), 'utf8').slice(0, 4000),
  }),
}

// ---------------------------------------------------------------------------------------------
// The loop: one model step per iteration, compacting before each.

const openai = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL })
const model = openai.chat(MODEL)

const compactor = new Compactor({
  agentModel: MODEL,
  contextTokenLimit: process.env.EXAMPLE_CONTEXT_LIMIT ? Number(process.env.EXAMPLE_CONTEXT_LIMIT) : undefined,
  system: SYSTEM,
  outputDir: process.env.EXAMPLE_OUTPUT_DIR,
  sessionId: 'ai-sdk-example',
})

async function main(task: string) {
  let history: ModelMessage[] = [{ role: 'user', content: task }]
  let inputTokens: number | undefined
  let compactions = 0

  for (let turn = 1; turn <= MAX_TURNS; turn++) {
    const { messages, back } = adapt(history)
    const result = await compactor.compact(messages, { usage: inputTokens === undefined ? undefined : { inputTokens } })
    if (result.compacted) {
      compactions++
      history = back(result.messages)
      console.log(
        `[compaction] ${result.stats.originalTokenCount} → ${result.stats.compactedTokenCount} tokens, ` +
          `${result.stats.compactedMessageCount} messages summarized by ${result.provider}; archive: ${result.archivePath}`,
      )
    } else if (result.error) {
      console.warn(`[compaction skipped] ${result.error.code}: ${result.error.message}`)
    }

    // One step: the model answers; if it calls tools, the SDK runs them (`execute`) and
    // `response.messages` holds the assistant message and the tool message.
    const step = await generateText({ model, system: SYSTEM, tools, messages: history, stopWhen: stepCountIs(1) })
    inputTokens = step.usage.inputTokens
    history.push(...step.response.messages)
    for (const call of step.toolCalls) console.log(`[tool] ${call.toolName} ${JSON.stringify(call.input)}`)

    if (step.finishReason !== 'tool-calls') {
      console.log(`Final answer: ${step.text}`)
      console.log(`done: ${turn} requests, ${compactions} compactions, ${history.length} messages in the history`)
      return
    }
  }
  throw new Error(`no final answer after ${MAX_TURNS} requests`)
}

main(process.argv[2] ?? 'Look at package.json and index.d.ts and tell me what this package does.').catch((error) => {
  console.error(error)
  process.exitCode = 1
})
