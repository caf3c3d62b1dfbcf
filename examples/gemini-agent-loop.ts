/**
 * An agent loop on the Gemini API (`@google/genai`, `ai.models.generateContent`) with two
 * function tools, kept under the context window by context-compact.
 *
 * The conversation is kept as Gemini's own `contents: Content[]`: the model's content is
 * appended as it came (its parts carry the thought signatures Gemini checks), then a `user`
 * content with one `functionResponse` per `functionCall`. A `Compactor` takes that array as it
 * is and gives back `Content[]`: kept contents are your objects, and the summary is a content,
 * `{ role: 'user', parts: [{ text }] }`. A model content's function calls never lose the
 * responses after them, so the next request is accepted.
 *
 * context-compact has no Gemini provider of its own: the summaries are written by Gemini too,
 * through the `summarizer` option (the library's rendered prompt, sent as one request).
 *
 *   GEMINI_API_KEY=… npx tsx examples/gemini-agent-loop.ts "What does this package do?"
 *
 * Environment:
 *   GEMINI_API_KEY         the key
 *   GOOGLE_GEMINI_BASE_URL another endpoint, e.g. a local mock (default https://generativelanguage.googleapis.com)
 *   EXAMPLE_MODEL          the agent's model (default gemini-2.5-flash)
 *   EXAMPLE_CONTEXT_LIMIT  a tiny context window, to watch compaction happen (default: the model's)
 *   EXAMPLE_OUTPUT_DIR     where the archives of compacted messages go (default ./.context-compact)
 */
import { GoogleGenAI, type Content, type FunctionDeclaration, type GenerateContentResponseUsageMetadata, type Part } from '@google/genai'
import { Compactor } from 'context-compact'
import { readdirSync, readFileSync } from 'node:fs'
import { relative, resolve } from 'node:path'

const MODEL = process.env.EXAMPLE_MODEL ?? 'gemini-2.5-flash'
const MAX_TURNS = 20
const SYSTEM = 'You are a coding assistant. Use the tools to look at the files in the working directory.'

// ---------------------------------------------------------------------------------------------
// Tools

const FUNCTIONS: FunctionDeclaration[] = [
  {
    name: 'list_files',
    description: 'Lists the files of a directory (relative to the working directory).',
    parametersJsonSchema: { type: 'object', properties: { dir: { type: 'string' } }, required: ['dir'] },
  },
  {
    name: 'read_file',
    description: 'Reads a text file (relative to the working directory); long files are cut.',
    parametersJsonSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
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

const ai = new GoogleGenAI({
  apiKey: process.env.GEMINI_API_KEY,
  httpOptions: process.env.GOOGLE_GEMINI_BASE_URL ? { baseUrl: process.env.GOOGLE_GEMINI_BASE_URL } : undefined,
})

const compactor = new Compactor({
  // Optional: detected from `parts` and the `model` role. Naming it also covers the first
  // turn, whose lone user content could be read otherwise.
  format: 'gemini',
  agentModel: MODEL,
  contextTokenLimit: process.env.EXAMPLE_CONTEXT_LIMIT ? Number(process.env.EXAMPLE_CONTEXT_LIMIT) : undefined,
  // The system instruction and the function declarations go with every request: counted, never changed.
  system: SYSTEM,
  tools: FUNCTIONS,
  outputDir: process.env.EXAMPLE_OUTPUT_DIR,
  sessionId: 'gemini-example',
  // The summary, written by Gemini: `request.prompt` holds the instructions and the transcript.
  // An empty answer is a failed attempt, retried by the library.
  summarizer: async (request) => {
    const response = await ai.models.generateContent({
      model: MODEL,
      contents: request.prompt,
      config: { maxOutputTokens: request.maxTokens },
    })
    return response.text ?? ''
  },
})

async function main(task: string) {
  let contents: Content[] = [{ role: 'user', parts: [{ text: task }] }]
  let usage: GenerateContentResponseUsageMetadata | undefined
  let compactions = 0

  for (let turn = 1; turn <= MAX_TURNS; turn++) {
    // What the last request was billed (Gemini's usageMetadata: promptTokenCount, cached
    // content included) calibrates the trigger.
    const result = await compactor.compact(contents, { usage })
    if (result.compacted) {
      compactions++
      contents = result.messages // Content[], ready for the next request
      console.log(
        `[compaction] ${result.stats.originalTokenCount} → ${result.stats.compactedTokenCount} tokens, ` +
          `${result.stats.compactedMessageCount} contents summarized by ${result.provider}; archive: ${result.archivePath}`,
      )
    } else if (result.error) {
      console.warn(`[compaction skipped] ${result.error.code}: ${result.error.message}`)
    }

    const response = await ai.models.generateContent({
      model: MODEL,
      contents,
      config: { systemInstruction: SYSTEM, tools: [{ functionDeclarations: FUNCTIONS }] },
    })
    usage = response.usageMetadata
    const content = response.candidates?.[0]?.content
    if (!content) throw new Error(`no candidate in the response (finish reason ${response.candidates?.[0]?.finishReason})`)
    // As it came: the thought signatures on its parts must be sent back unchanged.
    contents.push(content)

    const calls = response.functionCalls ?? []
    if (calls.length === 0) {
      console.log(`Final answer: ${response.text ?? ''}`)
      console.log(`done: ${turn} requests, ${compactions} compactions, ${contents.length} contents in the history`)
      return
    }

    // One functionResponse per functionCall, in order, in the next user content.
    const responses: Part[] = calls.map((call) => {
      const name = call.name ?? ''
      console.log(`[tool] ${name} ${JSON.stringify(call.args ?? {})}`)
      try {
        return { functionResponse: { id: call.id, name, response: { output: runTool(name, call.args ?? {}) } } }
      } catch (error) {
        return { functionResponse: { id: call.id, name, response: { error: String(error) } } }
      }
    })
    contents.push({ role: 'user', parts: responses })
  }
  throw new Error(`no final answer after ${MAX_TURNS} requests`)
}

main(process.argv[2] ?? 'Look at package.json and index.d.ts and tell me what this package does.').catch((error) => {
  console.error(error)
  process.exitCode = 1
})
