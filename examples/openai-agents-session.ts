/**
 * A chat on the OpenAI Agents SDK (`@openai/agents`) whose history lives in a session, kept
 * under the context window by context-compact.
 *
 * `CompactingSession` wraps the session you would use anyway (here a `MemorySession`; a
 * database-backed one the same way) and is passed to `run()` in its place. The runner reads the
 * history when a run starts, and after it saved the run's items it calls the session's
 * `runCompaction()`: past the threshold, the middle of the history becomes one summary item
 * (a user message starting with `[context-compact]`), the recent items stay as they are (a
 * function call with its result, reasoning with what follows it), and the originals are
 * archived. The next run reads the compacted history. The agent gets a `recall` tool to read
 * back what a summary replaced.
 *
 * The summaries are written by context-compact's `openai` provider (Chat Completions, with the
 * same key and base URL).
 *
 *   OPENAI_API_KEY=sk-… npx tsx examples/openai-agents-session.ts "What does this package do?"
 *
 * Environment:
 *   OPENAI_API_KEY         the key (read by the SDK, and by context-compact for the summaries)
 *   OPENAI_BASE_URL        another endpoint, e.g. a local mock, with its /v1
 *   EXAMPLE_MODEL          the agent's model (default gpt-4.1)
 *   EXAMPLE_CONTEXT_LIMIT  a tiny context window, to watch compaction happen (default: the model's)
 *   EXAMPLE_OUTPUT_DIR     where the archives of compacted messages go (default ./.context-compact)
 */
import { Agent, MemorySession, run, setTracingDisabled, tool } from '@openai/agents'
import { CompactingSession } from 'context-compact/openai-agents'
import { readdirSync, readFileSync } from 'node:fs'
import { relative, resolve } from 'node:path'
import { z } from 'zod'

const MODEL = process.env.EXAMPLE_MODEL ?? 'gpt-4.1'

// This example uploads no traces (the SDK exports them to OpenAI by default).
setTracingDisabled(true)

// ---------------------------------------------------------------------------------------------
// Tools

/** A path inside the working directory, or an error. */
function insideCwd(path: string): string {
  const full = resolve(path)
  if (relative(process.cwd(), full).startsWith('..')) throw new Error(`${path} is outside the working directory`)
  return full
}

const listFiles = tool({
  name: 'list_files',
  description: 'Lists the files of a directory (relative to the working directory).',
  parameters: z.object({ dir: z.string() }),
  execute: async (input) => {
    console.log(`[tool] list_files ${JSON.stringify(input)}`)
    return readdirSync(insideCwd(input.dir), { withFileTypes: true })
      .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
      .join('\n')
  },
})

const readFile = tool({
  name: 'read_file',
  description: 'Reads a text file (relative to the working directory); long files are cut.',
  parameters: z.object({ path: z.string() }),
  execute: async (input) => {
    console.log(`[tool] read_file ${JSON.stringify(input)}`)
    return readFileSync(insideCwd(input.path), 'utf8').slice(0, 4000)
  },
})

// ---------------------------------------------------------------------------------------------
// The session and the chat

let compactions = 0
const session = new CompactingSession(new MemorySession({ sessionId: 'openai-agents-example' }), {
  // The trigger reads what the model reported for each run's last request; naming the model
  // also sets the window (unless EXAMPLE_CONTEXT_LIMIT makes it tiny).
  agentModel: MODEL,
  ...(process.env.EXAMPLE_CONTEXT_LIMIT ? { contextTokenLimit: Number(process.env.EXAMPLE_CONTEXT_LIMIT) } : {}),
  // The runner reads the session once per run: leave room for what one run adds.
  thresholdRatio: 0.8,
  ...(process.env.EXAMPLE_OUTPUT_DIR ? { outputDir: process.env.EXAMPLE_OUTPUT_DIR } : {}),
  onEvent: (event) => {
    if (event.type === 'completed') {
      compactions++
      console.log(`[compaction] ${event.originalTokens} → ${event.newTokens} tokens; archive: ${event.archivePath}`)
    }
    if (event.type === 'failed') console.warn(`[compaction skipped] ${event.error.code}: ${event.error.message}`)
  },
})

const agent = new Agent({
  name: 'assistant',
  instructions: 'You are a coding assistant. Use the tools to look at the files in the working directory.',
  model: MODEL,
  tools: [listFiles, readFile, session.recallTool()],
})

async function main(question: string) {
  let requests = 0
  for (const input of [question, 'Say it again in one sentence.']) {
    const before = compactions
    const result = await run(agent, input, { session })
    requests += result.rawResponses.length
    console.log(`Final answer: ${result.finalOutput}`)
    // The compaction at the end of this run, if there was one (it is what the next run reads).
    const last = session.lastResult
    if (compactions > before && last?.compacted) {
      console.log(`[session] ${last.stats.compactedMessageCount} items summarized by ${last.provider}; ${last.stats.retainedMessageCount} kept`)
    }
  }
  const items = await session.getItems()
  const restored = await session.restoreItems()
  console.log(`done: ${requests} requests, ${compactions} compactions, ${items.length} items in the session, ${restored.length} restored`)
}

main(process.argv[2] ?? 'What does this package do?').catch((error) => {
  console.error(error)
  process.exit(1)
})
