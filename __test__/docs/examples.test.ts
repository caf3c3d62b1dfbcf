// The examples in examples/: type-checked with `tsc --noEmit -p examples`, then compiled with
// esbuild and run, each against a local mock of its API on 127.0.0.1 that answers the agent's
// requests with tool calls and then a final answer, answers summary requests (context-compact's
// own provider calls, which go to the same base URL, or the example's own summarizer), and
// rejects any request the real API would reject, with that API's 400 — Anthropic and OpenAI Chat
// checked with checkMessages, the Responses API and Gemini by their own pairing rules written
// out below (independent of the library under test) — so compaction must keep every request
// valid.

import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { checkMessages, type Message } from '../../index'
import { tempDir } from '../support/helpers'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const EXAMPLES = [
  'anthropic-agent-loop',
  'openai-agent-loop',
  'ai-sdk-agent-loop',
  'openai-responses-agent-loop',
  'gemini-agent-loop',
  'compactor-events',
  'archive-store',
  'recall-agent-loop',
  'ai-sdk-prepare-step',
  'openai-agents-session',
]

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

// ---------------------------------------------------------------------------------------------
// A mock of the Anthropic Messages API, the OpenAI Chat Completions and Responses APIs, and the
// Gemini API (generateContent)

/** What the agent "decides" on its n-th request: tool calls, then a final answer. */
const SCRIPT: Array<Array<{ name: string; input: Record<string, string> }>> = [
  [{ name: 'list_files', input: { dir: '.' } }],
  [{ name: 'read_file', input: { path: 'index.d.ts' } }],
  // Parallel calls: answered together, kept together by compaction.
  [
    { name: 'read_file', input: { path: 'package.json' } },
    { name: 'read_file', input: { path: 'index.js' } },
  ],
  [{ name: 'read_file', input: { path: 'cli/context-compact.js' } }],
]
const FINAL = 'This package keeps LLM agent loops under their context window.'

interface Mock {
  url: string
  agentRequests: number
  summaryRequests: number
  /** Requests the real API would have rejected. */
  invalid: string[]
  /** The body of every agent request, in order. */
  agentBodies: any[]
  /** Answer the first summary request with 529 (to see a retry). */
  failFirstSummary: boolean
  /** Anthropic agent: once a request carries a summary's recall line, call the recall tool with it (once). */
  recall: boolean
  /** The id of that recall call, once made. */
  recallId: string | null
  close(): Promise<void>
}

async function startMock(options: { failFirstSummary?: boolean; recall?: boolean } = {}): Promise<Mock> {
  const mock: Mock = {
    url: '',
    agentRequests: 0,
    summaryRequests: 0,
    invalid: [],
    agentBodies: [],
    failFirstSummary: options.failFirstSummary ?? false,
    recall: options.recall ?? false,
    recallId: null,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers })
    res.end(JSON.stringify(body))
  }
  const handle = (req: IncomingMessage, res: ServerResponse, body: any) => {
    if (req.method === 'POST' && req.url!.endsWith('/v1/responses')) return handleResponses(res, body)
    const gemini = /\/v1beta\/models\/([^/:]+):generateContent$/.exec(req.url!)
    if (req.method === 'POST' && gemini) return handleGemini(res, body, decodeURIComponent(gemini[1]))
    const anthropic = req.url!.endsWith('/v1/messages')
    const openai = req.url!.endsWith('/v1/chat/completions')
    if (!(anthropic || openai) || req.method !== 'POST') return send(res, 404, { error: { message: `no route ${req.url}` } })
    const inputTokens = Math.ceil(JSON.stringify([body.system ?? null, body.tools ?? null, body.messages]).length / 4)
    // A summary request from context-compact's provider carries no tools (the transcript
    // request), or is the loop's own request with the library's instruction as its last
    // message (the shared request, with `agentRequest`).
    const last = Array.isArray(body.messages) ? body.messages.at(-1) : null
    const lastText = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '')
    const isAgent = Array.isArray(body.tools) && body.tools.length > 0 && !lastText.includes('is being compacted')

    if (!isAgent) {
      // A summary request from context-compact's provider.
      mock.summaryRequests++
      if (mock.failFirstSummary && mock.summaryRequests === 1) {
        return anthropic
          ? send(res, 529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, { 'retry-after-ms': '20' })
          : send(res, 503, { error: { message: 'Service unavailable', type: 'server_error' } }, { 'retry-after-ms': '20' })
      }
      const text = `## Goal\nMock summary #${mock.summaryRequests}: the user asked what the package does; files were listed and read.`
      return anthropic
        ? send(res, 200, {
            id: `msg_summary_${mock.summaryRequests}`,
            type: 'message',
            role: 'assistant',
            model: body.model,
            content: [{ type: 'text', text }],
            stop_reason: 'end_turn',
            stop_sequence: null,
            usage: { input_tokens: inputTokens, output_tokens: 30 },
          })
        : send(res, 200, {
            id: `chatcmpl-summary-${mock.summaryRequests}`,
            object: 'chat.completion',
            created: Math.floor(Date.now() / 1000),
            model: body.model,
            choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop', logprobs: null }],
            usage: { prompt_tokens: inputTokens, completion_tokens: 30, total_tokens: inputTokens + 30 },
          })
    }

    // An agent request: reject what the real API would reject.
    const n = ++mock.agentRequests
    mock.agentBodies.push(body)
    const problems = checkMessages(body.messages as Message[])
    if (problems.length > 0) {
      const p = problems[0]
      mock.invalid.push(`request ${n}: messages[${p.index}] ${p.kind}: ${p.message}`)
      return anthropic
        ? send(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: `messages.${p.index}: ${p.message}` } })
        : send(res, 400, { error: { message: `Invalid parameter: ${p.message}`, type: 'invalid_request_error', param: 'messages', code: null } })
    }
    // The recall mode: the first request whose messages carry a summary's recall line gets a
    // recall call with that line's values; the script goes on after it.
    const recallLine = mock.recall && mock.recallId === null ? /Recall: archive=(compact-[0-9TZ-]+\.json) from=(\d+) to=(\d+)/.exec(JSON.stringify(body.messages)) : null
    if (recallLine) mock.recallId = `toolu_${n}_0`
    const calls: Array<{ name: string; input: Record<string, unknown> }> | undefined = recallLine
      ? [{ name: 'recall', input: { archive: recallLine[1], from: Number(recallLine[2]), to: Number(recallLine[3]) } }]
      : SCRIPT[n - 1 - (mock.recallId !== null ? 1 : 0)]
    if (anthropic) {
      return send(res, 200, {
        id: `msg_${n}`,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: calls
          ? [{ type: 'text', text: 'Let me look.' }, ...calls.map((c, k) => ({ type: 'tool_use', id: `toolu_${n}_${k}`, name: c.name, input: c.input }))]
          : [{ type: 'text', text: FINAL }],
        stop_reason: calls ? 'tool_use' : 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: inputTokens, output_tokens: 20 },
      })
    }
    return send(res, 200, {
      id: `chatcmpl-${n}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [
        {
          index: 0,
          message: calls
            ? {
                role: 'assistant',
                content: null,
                tool_calls: calls.map((c, k) => ({ id: `call_${n}_${k}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input) } })),
              }
            : { role: 'assistant', content: FINAL },
          finish_reason: calls ? 'tool_calls' : 'stop',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: inputTokens, completion_tokens: 20, total_tokens: inputTokens + 20 },
    })
  }
  // The Responses API (POST /v1/responses): the example's agent requests. Its summaries go
  // through context-compact's `openai` provider to /v1/chat/completions, above.
  const handleResponses = (res: ServerResponse, body: any) => {
    const n = ++mock.agentRequests
    mock.agentBodies.push(body)
    const problem = responsesInputProblem(body.input, body.store)
    if (problem) {
      mock.invalid.push(`request ${n}: ${problem}`)
      return send(res, 400, { error: { message: problem, type: 'invalid_request_error', param: 'input', code: null } })
    }
    const calls = SCRIPT[n - 1]
    const inputTokens = Math.ceil(JSON.stringify([body.instructions ?? null, body.tools ?? null, body.input]).length / 4)
    // A reasoning model's output: a reasoning item (encrypted, since the request is stateless)
    // before the calls or the answer it led to.
    const reasoning = { type: 'reasoning', id: `rs_${n}`, summary: [], encrypted_content: `gAAAAB${'x'.repeat(64)}${n}` }
    const output = calls
      ? [
          reasoning,
          ...calls.map((c, k) => ({
            type: 'function_call',
            id: `fc_${n}_${k}`,
            call_id: `call_${n}_${k}`,
            name: c.name,
            arguments: JSON.stringify(c.input),
            status: 'completed',
          })),
        ]
      : [
          reasoning,
          {
            type: 'message',
            id: `msg_${n}`,
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: FINAL, annotations: [], logprobs: [] }],
          },
        ]
    return send(res, 200, {
      id: `resp_${n}`,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status: 'completed',
      error: null,
      incomplete_details: null,
      instructions: body.instructions ?? null,
      max_output_tokens: null,
      metadata: {},
      model: body.model,
      output,
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: 'medium', summary: null },
      store: body.store ?? true,
      temperature: 1,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: body.tools ?? [],
      top_p: 1,
      truncation: 'disabled',
      usage: {
        input_tokens: inputTokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 20,
        output_tokens_details: { reasoning_tokens: 10 },
        total_tokens: inputTokens + 20,
      },
    })
  }

  // The Gemini API (POST /v1beta/models/{model}:generateContent): agent requests carry the
  // function declarations; the example's summarizer sends the prompt alone.
  const handleGemini = (res: ServerResponse, body: any, model: string) => {
    const inputTokens = Math.ceil(JSON.stringify([body.systemInstruction ?? null, body.tools ?? null, body.contents]).length / 4)
    const reply = (parts: unknown[]) =>
      send(res, 200, {
        candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: inputTokens, candidatesTokenCount: 20, totalTokenCount: inputTokens + 20 },
        modelVersion: model,
        responseId: `gemini-${mock.agentRequests + mock.summaryRequests}`,
      })
    if (!Array.isArray(body.tools) || body.tools.length === 0) {
      mock.summaryRequests++
      return reply([{ text: `## Goal\nMock summary #${mock.summaryRequests}: the user asked what the package does; files were listed and read.` }])
    }
    const n = ++mock.agentRequests
    mock.agentBodies.push(body)
    const problem = geminiContentsProblem(body.contents)
    if (problem) {
      mock.invalid.push(`request ${n}: ${problem}`)
      return send(res, 400, { error: { code: 400, message: problem, status: 'INVALID_ARGUMENT' } })
    }
    const calls = SCRIPT[n - 1]
    if (!calls) return reply([{ text: FINAL }])
    // Calls without ids (paired with their responses by order), the first one signed, as
    // Gemini's thinking models return them.
    return reply(calls.map((c, k) => ({ functionCall: { name: c.name, args: c.input }, ...(k === 0 ? { thoughtSignature: signature(n) } : {}) })))
  }

  const server: Server = createServer((req, res) => {
    let text = ''
    req.setEncoding('utf8')
    req.on('data', (chunk) => (text += chunk))
    req.on('end', () => {
      try {
        handle(req, res, JSON.parse(text || '{}'))
      } catch (error) {
        send(res, 500, { error: { message: String(error) } })
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  mock.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return mock
}

/** The thought signature the Gemini mock puts on the first call of its n-th answer. */
function signature(n: number): string {
  return Buffer.from(`mock-thought-${n}`).toString('base64')
}

/**
 * What the Responses API answers 400 to in a request's `input`, in its own words (`param:
 * 'input'`), or null: an output without its call, a call without its output, a reasoning item
 * not followed by the item it led to (or, with `store: false`, not sent back encrypted), and
 * output content in a user, system or developer message.
 */
function responsesInputProblem(input: unknown, store: unknown): string | null {
  if (!Array.isArray(input)) return "Invalid type for 'input': expected an array of input items."
  const answered = new Set<string>()
  const called = new Set<string>()
  for (const [i, item] of input.entries()) {
    if (item === null || typeof item !== 'object') return `Invalid type for 'input[${i}]': expected an object.`
    const type = item.type ?? 'message'
    if (type === 'function_call') called.add(item.call_id)
    else if (type === 'function_call_output') {
      if (!called.has(item.call_id)) return `No tool call found for function call output with call_id ${item.call_id}.`
      answered.add(item.call_id)
    } else if (type === 'reasoning') {
      const next = input[i + 1]
      if (!next || !(next.type === 'function_call' || (next.type === 'message' && next.role === 'assistant'))) {
        return `Item '${item.id}' of type 'reasoning' was provided without its required following item.`
      }
      if (store === false && typeof item.encrypted_content !== 'string') {
        return `Item with id '${item.id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`
      }
    } else if (type === 'message') {
      if (!['user', 'assistant', 'system', 'developer'].includes(item.role)) {
        return `Invalid value: '${item.role}'. Supported values are: 'assistant', 'system', 'developer', and 'user'.`
      }
      const parts = typeof item.content === 'string' ? [] : item.content
      if (!Array.isArray(parts)) return `Invalid type for 'input[${i}].content': expected one of a string or an array.`
      for (const [k, part] of parts.entries()) {
        const allowed = item.role === 'assistant' ? ['output_text', 'refusal'] : ['input_text', 'input_image', 'input_file']
        if (!allowed.includes(part?.type)) {
          return `Invalid value: '${part?.type}'. Supported values are: ${allowed.map((t) => `'${t}'`).join(', ')}. (input[${i}].content[${k}].type)`
        }
      }
    } else return `Invalid value: '${type}'. This mock only knows message, reasoning, function_call and function_call_output items.`
  }
  const unanswered = [...called].find((id) => !answered.has(id))
  return unanswered === undefined ? null : `No tool output found for function call ${unanswered}.`
}

/**
 * What the Gemini API answers 400 (`INVALID_ARGUMENT`) to in `contents`, in its own words, or
 * null: an unknown role, a function call turn that does not follow a user turn, a function
 * response turn whose response count differs from the calls before it, and, in the current turn
 * (after the last user text), a first function call without its thought signature.
 */
function geminiContentsProblem(contents: unknown): string | null {
  if (!Array.isArray(contents) || contents.length === 0) return '* GenerateContentRequest.contents: contents is not specified'
  const callsOf = (content: any) => (content.parts ?? []).filter((part: any) => part.functionCall).length
  const responsesOf = (content: any) => (content.parts ?? []).filter((part: any) => part.functionResponse).length
  let currentTurn = 0
  for (const [i, content] of contents.entries()) {
    if (content?.role !== 'user' && content?.role !== 'model') return 'Please use a valid role: user, model.'
    if (content.role === 'user' && (content.parts ?? []).some((part: any) => typeof part.text === 'string')) currentTurn = i
    const previous = contents[i - 1]
    if (callsOf(content) > 0 && content.role === 'model' && previous?.role !== 'user') {
      return 'Please ensure that function call turn comes immediately after a user turn or after a function response turn.'
    }
    if (responsesOf(content) > 0 && (!previous || callsOf(previous) !== responsesOf(content))) {
      return 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.'
    }
    if (callsOf(content) > 0 && responsesOf(contents[i + 1] ?? {}) !== callsOf(content)) {
      return 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.'
    }
  }
  for (const [i, content] of contents.entries()) {
    if (i < currentTurn || content.role !== 'model') continue
    const first = (content.parts ?? []).find((part: any) => part.functionCall)
    if (first && typeof first.thoughtSignature !== 'string') {
      return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${first.functionCall.name}\` , position ${i + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`
    }
  }
  return null
}

// ---------------------------------------------------------------------------------------------

let outDir: string
let archives: string

beforeAll(async () => {
  // Inside the package, so that `import … from 'context-compact'` resolves to it (self-reference
  // through package.json "exports"), and the SDKs resolve from its node_modules.
  outDir = mkdtempSync(join(ROOT, '.examples-build-'))
  archives = tempDir('cc-examples-')
  await build({
    entryPoints: EXAMPLES.map((name) => join(ROOT, 'examples', `${name}.ts`)),
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node18',
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    logLevel: 'silent',
  })
})

afterAll(() => {
  if (outDir) rmSync(outDir, { recursive: true, force: true })
})

/** The environment of an example run: no real keys or endpoints, a tiny window. */
function exampleEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const key of [
    'ANTHROPIC_API_KEY',
    'OPENAI_API_KEY',
    'ANTHROPIC_BASE_URL',
    'OPENAI_BASE_URL',
    'GEMINI_API_KEY',
    'GOOGLE_API_KEY',
    'GOOGLE_GEMINI_BASE_URL',
    'EXAMPLE_MODEL',
  ])
    delete env[key]
  return { ...env, EXAMPLE_CONTEXT_LIMIT: '3000', EXAMPLE_OUTPUT_DIR: archives, ...extra }
}

function runExample(name: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return run(process.execPath, [join(outDir, `${name}.mjs`)], env)
}

function expectLoopFinished(result: Run) {
  expect(result.code, result.stderr + result.stdout).toBe(0)
  expect(result.stdout).toContain(`Final answer: ${FINAL}`)
  const done = result.stdout.match(/done: (\d+) requests, (\d+) compactions/)
  expect(done, result.stdout).not.toBeNull()
  expect(Number(done![1])).toBe(SCRIPT.length + 1)
  expect(Number(done![2])).toBeGreaterThanOrEqual(1)
  return Number(done![2])
}

describe('examples', () => {
  it('type-check: tsc --noEmit -p examples', async () => {
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
    const result = await run(process.execPath, [tsc, '--noEmit', '-p', 'examples'], process.env, 120_000)
    expect(result.code, result.stdout + result.stderr).toBe(0)
  }, 120_000)

  it('type-check: index.d.ts on its own, strict, without skipLibCheck', async () => {
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
    const result = await run(process.execPath, [tsc, '--noEmit', '--strict', join(ROOT, 'index.d.ts')], process.env, 120_000)
    expect(result.code, result.stdout + result.stderr).toBe(0)
  }, 120_000)

  it('anthropic-agent-loop: tool calls, compaction (summaries by the Anthropic provider), final answer', async () => {
    const mock = await startMock()
    try {
      const result = await runExample('anthropic-agent-loop', exampleEnv({ ANTHROPIC_API_KEY: 'sk-ant-mock', ANTHROPIC_BASE_URL: mock.url }))
      const compactions = expectLoopFinished(result)
      expect(mock.invalid).toEqual([])
      expect(mock.agentRequests).toBe(SCRIPT.length + 1)
      expect(mock.summaryRequests).toBeGreaterThanOrEqual(compactions)
      // The loop caches (top-level cache_control) and passes agentRequest; in so small a window
      // the transcript is the cheaper request ('auto' compares them), so either may be used.
      expect(result.stdout).toMatch(/\[compaction\] .* with the (shared|transcript) request/)
      expect(result.stdout).toMatch(/\[tool\] read_file \{"path":"index\.d\.ts"\}/)
      expect(result.stdout).toMatch(/\[compaction\] \d+ → \d+ tokens, \d+ messages summarized by anthropic/)
    } finally {
      await mock.close()
    }
  })

  it('openai-agent-loop: tool calls, compaction (summaries by the OpenAI provider), final answer', async () => {
    const mock = await startMock()
    try {
      const result = await runExample('openai-agent-loop', exampleEnv({ OPENAI_API_KEY: 'sk-mock', OPENAI_BASE_URL: `${mock.url}/v1` }))
      const compactions = expectLoopFinished(result)
      expect(mock.invalid).toEqual([])
      expect(mock.summaryRequests).toBeGreaterThanOrEqual(compactions)
      expect(result.stdout).toMatch(/\[compaction\] .* summarized by openai/)
    } finally {
      await mock.close()
    }
  })

  it('ai-sdk-agent-loop: the AI SDK ModelMessage[] compacted as it is', async () => {
    const mock = await startMock()
    try {
      const result = await runExample('ai-sdk-agent-loop', exampleEnv({ OPENAI_API_KEY: 'sk-mock', OPENAI_BASE_URL: `${mock.url}/v1` }))
      const compactions = expectLoopFinished(result)
      expect(mock.invalid).toEqual([])
      expect(mock.summaryRequests).toBeGreaterThanOrEqual(compactions)
      expect(result.stdout).toMatch(/\[tool\] list_files/)
      expect(result.stdout).toMatch(/\[compaction\] .* summarized by openai/)
      // The summary came back as an AI SDK user message, which the provider sent as a plain
      // Chat Completions user message.
      const sent = mock.agentBodies.flatMap((body) => body.messages)
      expect(sent).toContainEqual({ role: 'user', content: expect.stringContaining('Mock summary #') })
    } finally {
      await mock.close()
    }
  })

  it('openai-responses-agent-loop: ResponseInputItem[] compacted as it is, every request accepted', async () => {
    const mock = await startMock()
    try {
      const result = await runExample('openai-responses-agent-loop', exampleEnv({ OPENAI_API_KEY: 'sk-mock', OPENAI_BASE_URL: `${mock.url}/v1` }))
      const compactions = expectLoopFinished(result)
      expect(mock.invalid).toEqual([])
      expect(mock.agentRequests).toBe(SCRIPT.length + 1)
      expect(mock.summaryRequests).toBeGreaterThanOrEqual(compactions)
      expect(result.stdout).toMatch(/\[tool\] read_file \{"path":"index\.d\.ts"\}/)
      expect(result.stdout).toMatch(/\[compaction\] \d+ → \d+ tokens, \d+ items summarized by openai/)
      // After a compaction the request carries the summary as a Responses input item, and its
      // remaining reasoning items still precede the calls they led to (checked above).
      const summaryItems = mock.agentBodies.flatMap((body) =>
        body.input.filter((item: any) => JSON.stringify(item).includes('Mock summary #')),
      )
      expect(summaryItems.length).toBeGreaterThanOrEqual(1)
      for (const item of summaryItems) {
        expect(item).toMatchObject({ type: 'message', role: 'user', content: [{ type: 'input_text', text: expect.stringContaining('Mock summary #') }] })
      }
    } finally {
      await mock.close()
    }
  })

  it('openai-agents-session: the Agents SDK runner on a CompactingSession (its own OpenAI model), every request accepted', async () => {
    const mock = await startMock()
    try {
      const result = await runExample('openai-agents-session', exampleEnv({ OPENAI_API_KEY: 'sk-mock', OPENAI_BASE_URL: `${mock.url}/v1` }))
      expect(result.code, result.stderr + result.stdout).toBe(0)
      expect(result.stdout).toContain(`Final answer: ${FINAL}`)
      const done = /done: (\d+) requests, (\d+) compactions, (\d+) items in the session, (\d+) restored/.exec(result.stdout)
      expect(done, result.stdout).not.toBeNull()
      // The first run follows the script (tool calls, then the answer); the second run answers.
      expect(Number(done![1])).toBe(SCRIPT.length + 2)
      const compactions = Number(done![2])
      expect(compactions).toBeGreaterThanOrEqual(1)
      // The session holds fewer items than were ever appended; the archives give them all back.
      expect(Number(done![3])).toBeLessThan(Number(done![4]))
      expect(mock.invalid).toEqual([])
      expect(mock.summaryRequests).toBeGreaterThanOrEqual(compactions)
      expect(result.stdout).toMatch(/\[tool\] read_file \{"path":"index\.d\.ts"\}/)
      expect(result.stdout).toMatch(/\[compaction\] \d+ → \d+ tokens/)
      // The second run's request carries the summary as a user input item, which the SDK sent
      // as it was stored.
      const last = mock.agentBodies[mock.agentBodies.length - 1]
      expect(last.input).toContainEqual(
        expect.objectContaining({ role: 'user', content: [{ type: 'input_text', text: expect.stringContaining('Mock summary #') }] }),
      )
    } finally {
      await mock.close()
    }
  })

  it('gemini-agent-loop: Content[] compacted as it is (summaries by its summarizer), every request accepted', async () => {
    const mock = await startMock()
    try {
      const result = await runExample('gemini-agent-loop', exampleEnv({ GEMINI_API_KEY: 'gemini-mock', GOOGLE_GEMINI_BASE_URL: mock.url }))
      const compactions = expectLoopFinished(result)
      expect(mock.invalid).toEqual([])
      expect(mock.agentRequests).toBe(SCRIPT.length + 1)
      expect(mock.summaryRequests).toBeGreaterThanOrEqual(compactions)
      expect(result.stdout).toMatch(/\[tool\] read_file \{"path":"index\.d\.ts"\}/)
      expect(result.stdout).toMatch(/\[compaction\] \d+ → \d+ tokens, \d+ contents summarized by custom/)
      const last = mock.agentBodies[mock.agentBodies.length - 1]
      // The summary is a user content, and every signed call the mock made that is still in the
      // history carries its signature unchanged.
      expect(last.contents).toContainEqual({ role: 'user', parts: [{ text: expect.stringContaining('Mock summary #') }] })
      const signed = last.contents.flatMap((content: any) => content.parts.filter((part: any) => part.thoughtSignature))
      expect(signed.length).toBeGreaterThanOrEqual(1)
      for (const part of signed) expect(part.thoughtSignature).toMatch(/^bW9jay10aG91Z2h0LT/)
    } finally {
      await mock.close()
    }
  })

  it('compactor-events: logs the retry event and the compactions', async () => {
    const mock = await startMock({ failFirstSummary: true })
    try {
      const result = await runExample('compactor-events', exampleEnv({ ANTHROPIC_API_KEY: 'sk-ant-mock', ANTHROPIC_BASE_URL: mock.url, EXAMPLE_CONTEXT_LIMIT: '8000' }))
      expect(result.code, result.stderr + result.stdout).toBe(0)
      expect(result.stdout).toMatch(/\[event\] retry: attempt 1 failed with OVERLOADED \(HTTP 529\)/)
      expect(result.stdout).toMatch(/compacted \d+ messages, .* summary by anthropic/)
      const done = result.stdout.match(/done: \d+ turns, (\d+) compactions/)
      expect(Number(done![1])).toBeGreaterThanOrEqual(1)
      expect(mock.summaryRequests).toBeGreaterThanOrEqual(2)
    } finally {
      await mock.close()
    }
  })

  it('compactor-events: runs offline with the extractive summarizer', async () => {
    const result = await runExample('compactor-events', exampleEnv({}))
    expect(result.code, result.stderr + result.stdout).toBe(0)
    expect(result.stdout).toMatch(/summary by extractive/)
  })

  it('recall-agent-loop: after a compaction the agent reads back the archived range its summary names', async () => {
    const mock = await startMock({ recall: true })
    try {
      const result = await runExample('recall-agent-loop', exampleEnv({ ANTHROPIC_API_KEY: 'sk-ant-mock', ANTHROPIC_BASE_URL: mock.url }))
      expect(result.code, result.stderr + result.stdout).toBe(0)
      expect(result.stdout).toContain(`Final answer: ${FINAL}`)
      expect(mock.invalid).toEqual([])
      // One recall call beside the scripted ones, answered from the archive.
      expect(mock.recallId).not.toBeNull()
      expect(mock.agentRequests).toBe(SCRIPT.length + 2)
      expect(result.stdout).toMatch(/\[compaction\] \d+ → \d+ tokens; Recall: archive=compact-\d{8}T\d{6}Z-\d+\.json from=0 to=\d+/)
      expect(result.stdout).toMatch(/\[recall\] Archive compact-\d{8}T\d{6}Z-\d+\.json, messages 0 to \d+ of \d+/)
      // The tool's answer gave the agent the user's task word for word.
      const answers = mock.agentBodies
        .flatMap((body) => body.messages)
        .flatMap((m: any) => (Array.isArray(m.content) ? m.content : []))
        .filter((b: any) => b.type === 'tool_result' && b.tool_use_id === mock.recallId)
      expect(answers.length).toBeGreaterThanOrEqual(1)
      expect(answers[0].content).toContain('Look at package.json and index.d.ts and tell me what this package does. Codeword: PELICAN-42.')
      // The summaries name their ranges and carry the section of the user's messages (in this
      // tiny window its budget may only say how many were left out: recall gives them back).
      const summaries = mock.agentBodies
        .flatMap((body) => body.messages)
        .filter((m: any) => typeof m.content === 'string' && m.content.startsWith('[context-compact]'))
      expect(summaries.length).toBeGreaterThanOrEqual(1)
      expect(summaries[0].content).toContain('## User messages (verbatim)')
      expect(summaries[0].content).toMatch(/^Recall: archive=compact-/m)
    } finally {
      await mock.close()
    }
  })

  it('ai-sdk-prepare-step: prepareStep compacts a generateText tool loop (the AI SDK mock model), restorable', async () => {
    const result = await runExample('ai-sdk-prepare-step', exampleEnv({}))
    expect(result.code, result.stderr + result.stdout).toBe(0)
    expect(result.stdout).toContain(`Final answer: ${FINAL}`)
    // The mock model refuses (throws) a prompt whose tool calls and results do not pair up.
    expect(result.stdout + result.stderr).not.toContain('400 invalid request')
    const done = result.stdout.match(/done: (\d+) model calls, (\d+) compactions/)
    expect(done, result.stdout).not.toBeNull()
    expect(Number(done![1])).toBe(11)
    expect(Number(done![2])).toBeGreaterThanOrEqual(2)
    expect(result.stdout).toMatch(/\[compaction\] \d+ → \d+ tokens; archive: .*compact-\d{8}T\d{6}Z-1\.json/)
    expect(result.stdout).toMatch(/restored \d+ messages, identical: true/)
  })

  it('archive-store: compacts into a Map-backed archiveStore, lists and restores from it', async () => {
    const result = await runExample('archive-store', exampleEnv({}))
    expect(result.code, result.stderr + result.stdout).toBe(0)
    const done = result.stdout.match(/done: (\d+) compactions, (\d+) archives, restored (\d+) messages, identical: (\w+)/)
    expect(done, result.stdout).not.toBeNull()
    expect(Number(done![1])).toBeGreaterThanOrEqual(2)
    expect(Number(done![2])).toBe(Number(done![1]))
    // 1 system message + 60 turns of 4 messages, all given back.
    expect(Number(done![3])).toBe(241)
    expect(done![4]).toBe('true')
    expect(result.stdout).toMatch(/compacted \d+ messages into archiveStore:agent-7\/compact-\d{8}T\d{6}Z-1\.json/)
    // The documented layout: archives, metadata, one object per audit event, extracted memory.
    expect(result.stdout).toMatch(/agent-7\/compact-\d{8}T\d{6}Z-1\.meta\.json/)
    expect(result.stdout).toMatch(/agent-7\/events\/\d{8}T\d{6}\.\d{3}Z-[0-9a-f]{16}\.json/)
    expect(result.stdout).toMatch(/agent-7\/extracted\/decisions\//)
  })
})
