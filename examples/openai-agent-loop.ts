/**
 * An agent loop on the OpenAI Chat Completions API with two tools, kept under the context window
 * by context-compact: before every request, `compactMessages` checks the conversation and, past
 * 92 % of the window, replaces the older middle with a summary. An assistant message with
 * `tool_calls` always stays together with its `role: 'tool'` answers.
 *
 *   OPENAI_API_KEY=sk-… npx tsx examples/openai-agent-loop.ts "What does this package do?"
 *
 * Environment:
 *   OPENAI_API_KEY         the key (read by the SDK, and by context-compact for the summaries)
 *   OPENAI_BASE_URL        another endpoint, e.g. a local mock or any OpenAI-compatible server
 *                          (vLLM, Ollama, …), with its /v1 (default https://api.openai.com/v1)
 *   EXAMPLE_MODEL          the agent's model (default gpt-4o)
 *   EXAMPLE_CONTEXT_LIMIT  a tiny context window, to watch compaction happen (default: the model's)
 *   EXAMPLE_OUTPUT_DIR     where the archives of compacted messages go (default ./.context-compact)
 */
import OpenAI from 'openai'
import { compactMessages } from 'context-compact'
import { readdirSync, readFileSync } from 'node:fs'
import { relative, resolve } from 'node:path'

const MODEL = process.env.EXAMPLE_MODEL ?? 'gpt-4o'
const MAX_TURNS = 20

// ---------------------------------------------------------------------------------------------
// Tools

const TOOLS: OpenAI.Chat.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'list_files',
      description: 'Lists the files of a directory (relative to the working directory).',
      parameters: { type: 'object', properties: { dir: { type: 'string' } }, required: ['dir'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Reads a text file (relative to the working directory); long files are cut.',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
]

/** A path inside the working directory, or an error. */
function insideCwd(path: string): string {
  const full = resolve(path)
  if (relative(process.cwd(), full).startsWith('..')) throw new Error(`${path} is outside the working directory`)
  return full
}

function runTool(name: string, input: Record<string, unknown>): string {
  switch (name) {
    case 'list_files':
      return readdirSync(insideCwd(String(input.dir ?? '.')), { withFileTypes: true })
        .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
        .join('\n')
    case 'read_file':
      return readFileSync(insideCwd(String(input.path)), 'utf8').slice(0, 4000)
    default:
      throw new Error(`unknown tool ${name}`)
  }
}

// ---------------------------------------------------------------------------------------------
// The loop

const client = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL })

async function main(task: string) {
  // The system message is the head: always kept, never summarized.
  let messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: 'system', content: 'You are a coding assistant. Use the tools to look at the files in the working directory.' },
    { role: 'user', content: task },
  ]
  let usage: OpenAI.CompletionUsage | undefined
  let compactions = 0

  for (let turn = 1; turn <= MAX_TURNS; turn++) {
    // Before each request; the SDK's own message and usage objects are accepted as they are.
    const result = await compactMessages(messages, {
      agentModel: MODEL,
      contextTokenLimit: process.env.EXAMPLE_CONTEXT_LIMIT ? Number(process.env.EXAMPLE_CONTEXT_LIMIT) : undefined,
      // The usage the API reported for the last assistant message: the trigger then knows
      // exactly what the next request will be billed.
      usage,
      tools: TOOLS,
      outputDir: process.env.EXAMPLE_OUTPUT_DIR,
      sessionId: 'openai-example',
    })
    if (result.compacted) {
      compactions++
      messages = result.messages
      console.log(
        `[compaction] ${result.stats.originalTokenCount} → ${result.stats.compactedTokenCount} tokens, ` +
          `${result.stats.compactedMessageCount} messages summarized by ${result.provider}; archive: ${result.archivePath}`,
      )
    } else if (result.error) {
      // Compaction never throws for LLM or disk trouble: the loop goes on with the full history.
      console.warn(`[compaction skipped] ${result.error.code}: ${result.error.message}`)
    }

    const response = await client.chat.completions.create({ model: MODEL, messages, tools: TOOLS })
    usage = response.usage
    const choice = response.choices[0]
    const message = choice.message
    messages.push(message)

    const calls = (message.tool_calls ?? []).filter((call) => call.type === 'function')
    if (choice.finish_reason !== 'tool_calls' || calls.length === 0) {
      console.log(`Final answer: ${message.content ?? ''}`)
      console.log(`done: ${turn} requests, ${compactions} compactions, ${messages.length} messages in the history`)
      return
    }

    // Every tool call is answered by a `role: 'tool'` message right after.
    for (const call of calls) {
      console.log(`[tool] ${call.function.name} ${call.function.arguments}`)
      let content: string
      try {
        content = runTool(call.function.name, JSON.parse(call.function.arguments || '{}'))
      } catch (error) {
        content = `Error: ${String(error)}`
      }
      messages.push({ role: 'tool', tool_call_id: call.id, content })
    }
  }
  throw new Error(`no final answer after ${MAX_TURNS} requests`)
}

main(process.argv[2] ?? 'Look at package.json and index.d.ts and tell me what this package does.').catch((error) => {
  console.error(error)
  process.exitCode = 1
})
