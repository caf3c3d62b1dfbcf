/**
 * An AI SDK agent kept under its context window by context-compact: `compactionStep` is passed
 * as `prepareStep`, and compacts the step's messages whenever they reach the threshold, before
 * the model call. One `generateText` call runs the whole tool loop.
 *
 * It runs offline: the model is the AI SDK's own mock (`MockLanguageModelV4` from `ai/test`),
 * answering from a script with tool calls on the files of this directory, reporting usage like a
 * provider, and refusing a prompt whose tool results do not follow their calls, as the APIs do.
 * Put your provider's model in its place (`anthropic('claude-sonnet-4-5')`, `openai('gpt-4o')`).
 *
 *   npx tsx examples/ai-sdk-prepare-step.ts
 *
 * Environment:
 *   EXAMPLE_CONTEXT_LIMIT  the context window (default 6000: tiny, to watch compaction happen)
 *   EXAMPLE_OUTPUT_DIR     where the archives of compacted messages go (default ./.context-compact)
 */
import { generateText, jsonSchema, stepCountIs, tool, type ModelMessage } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
import { checkMessages, restoreMessages } from 'context-compact'
import { compactionStep, recallTool } from 'context-compact/ai-sdk'
import { readdirSync, readFileSync } from 'node:fs'
import { relative, resolve } from 'node:path'

const SYSTEM = 'You are a coding assistant. Use the tools to look at the files in the working directory.'
const archive = { outputDir: process.env.EXAMPLE_OUTPUT_DIR ?? './.context-compact', sessionId: `ai-sdk-example-${process.pid}` }

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
  // The archived originals of what was compacted, for the details a summary leaves out.
  recall: recallTool(archive),
}

// ---------------------------------------------------------------------------------------------
// The compaction step: the system prompt and the tools are counted (they are not in the
// messages the step sees), never summarized.

let compactions = 0
const step = compactionStep({
  contextTokenLimit: Number(process.env.EXAMPLE_CONTEXT_LIMIT ?? 6000),
  system: SYSTEM,
  tools,
  ...archive,
  // Offline summaries; drop this line to have Claude or GPT write them (ANTHROPIC_API_KEY or
  // OPENAI_API_KEY in the environment).
  provider: 'extractive',
  onEvent: (event) => {
    if (event.type === 'completed') compactions += 1
    if (event.type === 'completed') console.log(`[compaction] ${event.originalTokens} → ${event.newTokens} tokens; archive: ${event.archivePath}`)
    if (event.type === 'failed') console.log(`[compaction skipped] ${event.error.code}: ${event.error.message}`)
  },
})

// ---------------------------------------------------------------------------------------------
// The model: a scripted stand-in for a provider

const SCRIPT: Array<{ toolName: keyof typeof tools; input: Record<string, string> }> = [
  { toolName: 'list_files', input: { dir: '.' } },
  { toolName: 'read_file', input: { path: 'package.json' } },
  { toolName: 'read_file', input: { path: 'index.d.ts' } },
  { toolName: 'list_files', input: { dir: 'lib' } },
  { toolName: 'read_file', input: { path: 'lib/compactor.js' } },
  { toolName: 'read_file', input: { path: 'lib/recall.js' } },
  { toolName: 'list_files', input: { dir: 'adapters' } },
  { toolName: 'read_file', input: { path: 'adapters/ai-sdk.js' } },
  { toolName: 'read_file', input: { path: 'adapters/ai-sdk.d.ts' } },
  { toolName: 'read_file', input: { path: 'index.js' } },
]
const FINAL = 'This package keeps LLM agent loops under their context window.'

let calls = 0
const model = new MockLanguageModelV4({
  doGenerate: async ({ prompt }) => {
    // A provider refuses a prompt whose tool calls and results do not pair up (HTTP 400).
    const problems = checkMessages(prompt as ModelMessage[], { format: 'ai-sdk' })
    if (problems.length > 0) throw new Error(`400 invalid request: ${problems[0].message}`)
    const next = SCRIPT[calls]
    calls += 1
    const inputTokens = Math.round(JSON.stringify(prompt).length / 3.5)
    console.log(`[model] call ${calls}: ${prompt.length} messages, ~${inputTokens} tokens`)
    return {
      content: next
        ? [{ type: 'tool-call', toolCallId: `call_${calls}`, toolName: next.toolName, input: JSON.stringify(next.input) }]
        : [{ type: 'text', text: FINAL }],
      finishReason: { unified: next ? 'tool-calls' : 'stop', raw: undefined },
      usage: {
        inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 20, text: 20, reasoning: 0 },
      },
      warnings: [],
    }
  },
})

// ---------------------------------------------------------------------------------------------

async function main(task: string) {
  const messages: ModelMessage[] = [{ role: 'user', content: task }]
  const result = await generateText({ model, system: SYSTEM, tools, messages, stopWhen: stepCountIs(20), prepareStep: step })
  console.log(`Final answer: ${result.text}`)
  console.log(`done: ${result.steps.length} model calls, ${compactions} compactions`)

  // The whole conversation, as it was at the last compaction, is recoverable from what the step
  // produced (the messages after it are the SDK's own).
  const last = step.lastResult
  if (last?.compacted) {
    const restored = await restoreMessages(last.messages, archive)
    const history = [...messages, ...result.responseMessages]
    const identical = JSON.stringify(restored) === JSON.stringify(history.slice(0, restored.length))
    console.log(`restored ${restored.length} messages, identical: ${identical}`)
  }
}

main(process.argv[2] ?? 'Look at this package and tell me what it does.').catch((error) => {
  console.error(error)
  process.exitCode = 1
})
