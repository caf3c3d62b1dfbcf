/**
 * An agent loop on the Vercel AI SDK (`generateText` with tools), kept under the context window
 * by context-compact.
 *
 * The AI SDK's `ModelMessage[]` goes to the Compactor as it is and comes back as
 * `ModelMessage[]`: kept messages are the very objects it was given, and the summary is written
 * as an AI SDK message (`{ role: 'user', content: summary }`). A `tool-call` part always stays
 * together with the `tool-result` parts of the `role: 'tool'` message answering it.
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
import { generateText, jsonSchema, stepCountIs, tool, type ModelMessage } from 'ai'
import { Compactor } from 'context-compact'
import { readdirSync, readFileSync } from 'node:fs'
import { relative, resolve } from 'node:path'

const MODEL = process.env.EXAMPLE_MODEL ?? 'gpt-4o'
const MAX_TURNS = 20
const SYSTEM = 'You are a coding assistant. Use the tools to look at the files in the working directory.'

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
  // Optional: detected from the `tool-call` / `tool-result` parts. Naming it also covers the
  // first turns, whose plain text messages every format reads alike.
  format: 'ai-sdk',
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
    // The usage of the last step tells the trigger what the next request will be billed.
    const result = await compactor.compact(history, { usage: inputTokens === undefined ? undefined : { inputTokens } })
    if (result.compacted) {
      compactions++
      history = result.messages // ModelMessage[], ready for the next generateText
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
