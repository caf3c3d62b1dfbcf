// The examples in examples/: type-checked with `tsc --noEmit -p examples`, then compiled with
// esbuild and run, each against a local mock of its API on 127.0.0.1 that answers the agent's
// requests with tool calls and then a final answer, answers summary requests (context-compact's
// own provider calls, which go to the same base URL), and rejects any request the real API
// would reject (checked with checkMessages), so compaction must keep every request valid.

import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { checkMessages, type Message } from '../index'
import { tempDir } from './helpers'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const EXAMPLES = ['anthropic-agent-loop', 'openai-agent-loop', 'ai-sdk-agent-loop', 'compactor-events', 'archive-store']

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
// A mock of the Anthropic Messages API and the OpenAI Chat Completions API

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
  /** Answer the first summary request with 529 (to see a retry). */
  failFirstSummary: boolean
  close(): Promise<void>
}

async function startMock(options: { failFirstSummary?: boolean } = {}): Promise<Mock> {
  const mock: Mock = {
    url: '',
    agentRequests: 0,
    summaryRequests: 0,
    invalid: [],
    failFirstSummary: options.failFirstSummary ?? false,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers })
    res.end(JSON.stringify(body))
  }
  const handle = (req: IncomingMessage, res: ServerResponse, body: any) => {
    const anthropic = req.url!.endsWith('/v1/messages')
    const openai = req.url!.endsWith('/v1/chat/completions')
    if (!(anthropic || openai) || req.method !== 'POST') return send(res, 404, { error: { message: `no route ${req.url}` } })
    const inputTokens = Math.ceil(JSON.stringify([body.system ?? null, body.tools ?? null, body.messages]).length / 4)
    const isAgent = Array.isArray(body.tools) && body.tools.length > 0

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
    const problems = checkMessages(body.messages as Message[])
    if (problems.length > 0) {
      const p = problems[0]
      mock.invalid.push(`request ${n}: messages[${p.index}] ${p.kind}: ${p.message}`)
      return anthropic
        ? send(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: `messages.${p.index}: ${p.message}` } })
        : send(res, 400, { error: { message: `Invalid parameter: ${p.message}`, type: 'invalid_request_error', param: 'messages', code: null } })
    }
    const calls = SCRIPT[n - 1]
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
  for (const key of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_BASE_URL', 'OPENAI_BASE_URL', 'EXAMPLE_MODEL']) delete env[key]
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

  it('ai-sdk-agent-loop: AI SDK messages adapted, compacted and mapped back', async () => {
    const mock = await startMock()
    try {
      const result = await runExample('ai-sdk-agent-loop', exampleEnv({ OPENAI_API_KEY: 'sk-mock', OPENAI_BASE_URL: `${mock.url}/v1` }))
      const compactions = expectLoopFinished(result)
      expect(mock.invalid).toEqual([])
      expect(mock.summaryRequests).toBeGreaterThanOrEqual(compactions)
      expect(result.stdout).toMatch(/\[tool\] list_files/)
      expect(result.stdout).toMatch(/\[compaction\] .* summarized by openai/)
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
