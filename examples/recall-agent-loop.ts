/**
 * An agent loop on the Anthropic Messages API that can look back past its own compactions: the
 * `recall` tool of context-compact reads the archived originals of what a summary replaced.
 *
 * A summary drops details (an exact error message, a value, what the user said in passing). Each
 * summary ends with a line per compacted range, `Recall: archive=compact-…-1.json from=0 to=12`,
 * and the tool takes exactly those values — or a `query` to search every archive of the session.
 * `recall.definition` goes into the tool list as it is; `recall.run(input)` answers the call with
 * text, and never throws into the loop (a bad archive name or range is answered with what exists).
 * The summary also carries the user's own messages word for word, and, with `rehydrate`, the
 * current content of the files read last.
 *
 *   ANTHROPIC_API_KEY=sk-ant-… npx tsx examples/recall-agent-loop.ts "What does this package do?"
 *
 * Environment:
 *   ANTHROPIC_API_KEY      the key (read by the SDK, and by context-compact for the summaries)
 *   ANTHROPIC_BASE_URL     another endpoint, e.g. a local mock (default https://api.anthropic.com)
 *   EXAMPLE_MODEL          the agent's model (default claude-sonnet-4-6)
 *   EXAMPLE_CONTEXT_LIMIT  a tiny context window, to watch compaction happen (default: the model's)
 *   EXAMPLE_OUTPUT_DIR     where the archives of compacted messages go (default ./.context-compact)
 */
import Anthropic from '@anthropic-ai/sdk'
import { Compactor, createRecallTool } from 'context-compact'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { relative, resolve } from 'node:path'

const MODEL = process.env.EXAMPLE_MODEL ?? 'claude-sonnet-4-6'
const MAX_TURNS = 20
const SESSION = 'recall-example'
const SYSTEM =
  'You are a coding assistant. Use the tools to look at the files in the working directory. ' +
  'Earlier parts of this conversation may have been compacted into a summary: use the recall tool to read them back when you need a detail.'

// ---------------------------------------------------------------------------------------------
// Tools

/**
 * The recall tool over this session's archives, in the Anthropic tool shape. Its answers stay
 * within 2 000 tokens: a longer range says where it stopped and how to ask for the rest.
 */
const recall = createRecallTool({ outputDir: process.env.EXAMPLE_OUTPUT_DIR, sessionId: SESSION, format: 'anthropic', maxTokens: 2_000 })

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
  recall.definition,
]

/** A path inside the working directory, or an error. */
function insideCwd(path: string): string {
  const full = resolve(path)
  if (relative(process.cwd(), full).startsWith('..')) throw new Error(`${path} is outside the working directory`)
  return full
}

async function runTool(name: string, input: Record<string, unknown>): Promise<string> {
  switch (name) {
    case 'list_files':
      return readdirSync(insideCwd(String(input.dir ?? '.')), { withFileTypes: true })
        .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
        .join('\n')
    case 'read_file':
      return readFileSync(insideCwd(String(input.path)), 'utf8').slice(0, 4000)
    case recall.name:
      return recall.run(input)
    default:
      throw new Error(`unknown tool ${name}`)
  }
}

// ---------------------------------------------------------------------------------------------
// The loop

const client = new Anthropic({ baseURL: process.env.ANTHROPIC_BASE_URL })

const compactor = new Compactor({
  agentModel: MODEL,
  contextTokenLimit: process.env.EXAMPLE_CONTEXT_LIMIT ? Number(process.env.EXAMPLE_CONTEXT_LIMIT) : undefined,
  system: SYSTEM,
  tools: TOOLS,
  outputDir: process.env.EXAMPLE_OUTPUT_DIR,
  sessionId: SESSION,
  // After each summary, the files read last as they are now (the loop's own file access).
  rehydrate: {
    read: (path) => {
      try {
        const full = insideCwd(path)
        return existsSync(full) ? readFileSync(full, 'utf8') : null
      } catch {
        return null
      }
    },
    maxFiles: 2,
    maxTokensPerFile: 300,
  },
})

async function main(task: string) {
  let messages: Anthropic.MessageParam[] = [{ role: 'user', content: task }]
  let usage: Anthropic.Usage | undefined
  let compactions = 0

  for (let turn = 1; turn <= MAX_TURNS; turn++) {
    const result = await compactor.compact(messages, { usage })
    if (result.compacted) {
      compactions++
      messages = result.messages
      const ranges = (result.summary ?? '').split('\n').filter((line) => line.startsWith('Recall: '))
      console.log(`[compaction] ${result.stats.originalTokenCount} → ${result.stats.compactedTokenCount} tokens; ${ranges.join('; ')}`)
    } else if (result.error) {
      console.warn(`[compaction skipped] ${result.error.code}: ${result.error.message}`)
    }

    const response = await client.messages.create({ model: MODEL, max_tokens: 1024, system: SYSTEM, tools: TOOLS, messages })
    usage = response.usage
    messages.push({ role: 'assistant', content: response.content })

    if (response.stop_reason !== 'tool_use') {
      const answer = response.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n')
      console.log(`Final answer: ${answer}`)
      console.log(`done: ${turn} requests, ${compactions} compactions, ${messages.length} messages in the history`)
      return
    }

    const results: Anthropic.ToolResultBlockParam[] = []
    for (const block of response.content) {
      if (block.type !== 'tool_use') continue
      console.log(`[tool] ${block.name} ${JSON.stringify(block.input)}`)
      try {
        const content = await runTool(block.name, block.input as Record<string, unknown>)
        if (block.name === recall.name) console.log(`[recall] ${content.split('\n')[0]}`)
        results.push({ type: 'tool_result', tool_use_id: block.id, content })
      } catch (error) {
        results.push({ type: 'tool_result', tool_use_id: block.id, content: String(error), is_error: true })
      }
    }
    messages.push({ role: 'user', content: results })
  }
  throw new Error(`no final answer after ${MAX_TURNS} requests`)
}

main(process.argv[2] ?? 'Look at package.json and index.d.ts and tell me what this package does. Codeword: PELICAN-42.').catch((error) => {
  console.error(error)
  process.exitCode = 1
})
