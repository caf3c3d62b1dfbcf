/**
 * An agent loop on the Anthropic Messages API with two tools, kept under the context window by
 * context-compact: before every request, a `Compactor` looks at the conversation (and at the
 * `usage` the API reported for the last response) and, past 92 % of the window, replaces the
 * older middle with a summary, keeping the tool_use / tool_result pairs intact.
 *
 *   ANTHROPIC_API_KEY=sk-ant-… npx tsx examples/anthropic-agent-loop.ts "What does this package do?"
 *
 * Environment:
 *   ANTHROPIC_API_KEY      the key (read by the SDK, and by context-compact for the summaries)
 *   ANTHROPIC_BASE_URL     another endpoint, e.g. a local mock (default https://api.anthropic.com)
 *   EXAMPLE_MODEL          the agent's model (default claude-sonnet-4-6)
 *   EXAMPLE_CONTEXT_LIMIT  a tiny context window, to watch compaction happen (default: the model's)
 *   EXAMPLE_OUTPUT_DIR     where the archives of compacted messages go (default ./.context-compact)
 */
import Anthropic from '@anthropic-ai/sdk'
import { Compactor } from 'context-compact'
import { readdirSync, readFileSync } from 'node:fs'
import { relative, resolve } from 'node:path'

const MODEL = process.env.EXAMPLE_MODEL ?? 'claude-sonnet-4-6'
const MAX_TURNS = 20
const SYSTEM = 'You are a coding assistant. Use the tools to look at the files in the working directory.'

// ---------------------------------------------------------------------------------------------
// Tools

const TOOLS: Anthropic.Tool[] = [
  {
    name: 'list_files',
    description: 'Lists the files of a directory (relative to the working directory).',
    input_schema: { type: 'object', properties: { dir: { type: 'string' } }, required: ['dir'] },
  },
  {
    name: 'read_file',
    description: 'Reads a text file (relative to the working directory); long files are cut.',
    input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
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

const client = new Anthropic({ baseURL: process.env.ANTHROPIC_BASE_URL })

// Every request of the loop, without its messages. Top-level `cache_control` turns on prompt
// caching: each request reads the conversation so far from Anthropic's cache.
const REQUEST = {
  model: MODEL,
  max_tokens: 1024,
  system: SYSTEM,
  tools: TOOLS,
  cache_control: { type: 'ephemeral' },
} satisfies Omit<Anthropic.MessageCreateParamsNonStreaming, 'messages'>

const compactor = new Compactor({
  // The loop's request: a compaction asks for its summary with this same request plus one
  // instruction, so the summary call reads the cached conversation too. It also names the
  // agent's model (the trigger scales its estimate like Anthropic bills, and the window defaults
  // to the model's: 200K for Claude Sonnet 4.6), and its system prompt and tools, which count into
  // every decision and are never changed.
  agentRequest: REQUEST,
  contextTokenLimit: process.env.EXAMPLE_CONTEXT_LIMIT ? Number(process.env.EXAMPLE_CONTEXT_LIMIT) : undefined,
  outputDir: process.env.EXAMPLE_OUTPUT_DIR,
  sessionId: 'anthropic-example',
})

async function main(task: string) {
  let messages: Anthropic.MessageParam[] = [{ role: 'user', content: task }]
  let usage: Anthropic.Usage | undefined
  let compactions = 0

  for (let turn = 1; turn <= MAX_TURNS; turn++) {
    // Before each request: compact when the next request would pass the threshold. Below it,
    // this returns the same array and costs a cache lookup per message.
    const result = await compactor.compact(messages, { usage })
    if (result.compacted) {
      compactions++
      messages = result.messages
      console.log(
        `[compaction] ${result.stats.originalTokenCount} → ${result.stats.compactedTokenCount} tokens, ` +
          `${result.stats.compactedMessageCount} messages summarized by ${result.provider} with the ${result.summaryRequest} request; ` +
          `archive: ${result.archivePath}`,
      )
    } else if (result.error) {
      // Compaction never throws for LLM or disk trouble: the loop goes on with the full history.
      console.warn(`[compaction skipped] ${result.error.code}: ${result.error.message}`)
    }

    const response = await client.messages.create({ ...REQUEST, messages })
    usage = response.usage
    messages.push({ role: 'assistant', content: response.content })

    if (response.stop_reason !== 'tool_use') {
      const answer = response.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n')
      console.log(`Final answer: ${answer}`)
      console.log(`done: ${turn} requests, ${compactions} compactions, ${messages.length} messages in the history`)
      return
    }

    // Every tool_use is answered in the next (user) message, in one tool_result block each.
    const results: Anthropic.ToolResultBlockParam[] = []
    for (const block of response.content) {
      if (block.type !== 'tool_use') continue
      console.log(`[tool] ${block.name} ${JSON.stringify(block.input)}`)
      try {
        results.push({ type: 'tool_result', tool_use_id: block.id, content: runTool(block.name, block.input as Record<string, unknown>) })
      } catch (error) {
        results.push({ type: 'tool_result', tool_use_id: block.id, content: String(error), is_error: true })
      }
    }
    messages.push({ role: 'user', content: results })
  }
  throw new Error(`no final answer after ${MAX_TURNS} requests`)
}

main(process.argv[2] ?? 'Look at package.json and index.d.ts and tell me what this package does.').catch((error) => {
  console.error(error)
  process.exitCode = 1
})
