/**
 * An agent loop on the OpenAI Responses API (`client.responses.create`) with two function
 * tools, kept under the context window by context-compact.
 *
 * The conversation is kept as the Responses API's own `input`: a `ResponseInputItem[]` to which
 * each turn appends the response's `output` items (reasoning, messages, `function_call`s) and a
 * `function_call_output` for every call. That array goes to `compactMessages` as it is and comes
 * back as `ResponseInputItem[]`: kept items are your objects, and the summary is an input item,
 * `{ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }`. A
 * `function_call` never loses its `function_call_output`, nor a `reasoning` item the call it
 * precedes, so the next request is accepted.
 *
 * The summaries are written by context-compact's `openai` provider (Chat Completions, with the
 * same key and base URL).
 *
 *   OPENAI_API_KEY=sk-… npx tsx examples/openai-responses-agent-loop.ts "What does this package do?"
 *
 * Environment:
 *   OPENAI_API_KEY         the key (read by the SDK, and by context-compact for the summaries)
 *   OPENAI_BASE_URL        another endpoint, e.g. a local mock, with its /v1
 *   EXAMPLE_MODEL          the agent's model (default gpt-5-mini)
 *   EXAMPLE_CONTEXT_LIMIT  a tiny context window, to watch compaction happen (default: the model's)
 *   EXAMPLE_OUTPUT_DIR     where the archives of compacted messages go (default ./.context-compact)
 */
import OpenAI from 'openai'
import type { FunctionTool, ResponseInputItem, ResponseUsage } from 'openai/resources/responses/responses'
import { compactMessages } from 'context-compact'
import { readdirSync, readFileSync } from 'node:fs'
import { relative, resolve } from 'node:path'

const MODEL = process.env.EXAMPLE_MODEL ?? 'gpt-5-mini'
const MAX_TURNS = 20

// ---------------------------------------------------------------------------------------------
// Tools

const TOOLS: FunctionTool[] = [
  {
    type: 'function',
    name: 'list_files',
    description: 'Lists the files of a directory (relative to the working directory).',
    parameters: { type: 'object', properties: { dir: { type: 'string' } }, required: ['dir'], additionalProperties: false },
    strict: true,
  },
  {
    type: 'function',
    name: 'read_file',
    description: 'Reads a text file (relative to the working directory); long files are cut.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
    strict: true,
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
const INSTRUCTIONS = 'You are a coding assistant. Use the tools to look at the files in the working directory.'

async function main(task: string) {
  // The whole conversation, sent as `input` on every request (no `previous_response_id`: the
  // history is ours, so it can be compacted).
  let input: ResponseInputItem[] = [{ role: 'user', content: task }]
  let usage: ResponseUsage | undefined
  let compactions = 0

  for (let turn = 1; turn <= MAX_TURNS; turn++) {
    const result = await compactMessages(input, {
      // Optional: detected from the items' `type`s. Naming it also covers the first turn,
      // whose lone `{ role, content }` item every format reads alike.
      format: 'openai-responses',
      agentModel: MODEL,
      contextTokenLimit: process.env.EXAMPLE_CONTEXT_LIMIT ? Number(process.env.EXAMPLE_CONTEXT_LIMIT) : undefined,
      // `response.usage` as the SDK returns it: `input_tokens` is what the last request was
      // billed, so the trigger knows what the next one will be.
      usage,
      // The instructions and tools are sent with every request: counted, never changed.
      system: INSTRUCTIONS,
      tools: TOOLS,
      outputDir: process.env.EXAMPLE_OUTPUT_DIR,
      sessionId: 'openai-responses-example',
    })
    if (result.compacted) {
      compactions++
      input = result.messages // ResponseInputItem[], ready for the next request
      console.log(
        `[compaction] ${result.stats.originalTokenCount} → ${result.stats.compactedTokenCount} tokens, ` +
          `${result.stats.compactedMessageCount} items summarized by ${result.provider}; archive: ${result.archivePath}`,
      )
    } else if (result.error) {
      console.warn(`[compaction skipped] ${result.error.code}: ${result.error.message}`)
    }

    // Stateless (`store: false`): reasoning comes back encrypted, to be sent again with the input.
    const response = await client.responses.create({
      model: MODEL,
      instructions: INSTRUCTIONS,
      input,
      tools: TOOLS,
      store: false,
      include: ['reasoning.encrypted_content'],
    })
    usage = response.usage
    // Every output item goes back as input, in order (a reasoning item stays in front of the
    // call it led to). With only function tools, the output holds these three types, which the
    // SDK types as input items too (not every output type is one: hence the narrowing).
    for (const item of response.output) {
      if (item.type !== 'reasoning' && item.type !== 'message' && item.type !== 'function_call') {
        throw new Error(`unexpected output item of type ${item.type}`)
      }
      input.push(item)
    }

    const calls = response.output.filter((item) => item.type === 'function_call')
    if (calls.length === 0) {
      console.log(`Final answer: ${response.output_text}`)
      console.log(`done: ${turn} requests, ${compactions} compactions, ${input.length} items in the input`)
      return
    }

    // Every call is answered by a `function_call_output` with its `call_id`.
    for (const call of calls) {
      console.log(`[tool] ${call.name} ${call.arguments}`)
      let output: string
      try {
        output = runTool(call.name, JSON.parse(call.arguments || '{}'))
      } catch (error) {
        output = `Error: ${String(error)}`
      }
      input.push({ type: 'function_call_output', call_id: call.call_id, output })
    }
  }
  throw new Error(`no final answer after ${MAX_TURNS} requests`)
}

main(process.argv[2] ?? 'Look at package.json and index.d.ts and tell me what this package does.').catch((error) => {
  console.error(error)
  process.exitCode = 1
})
