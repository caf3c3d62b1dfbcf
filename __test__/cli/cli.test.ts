// The `context-compact` CLI, spawned as users run it: `node cli/context-compact.js …`.
// Every run has ANTHROPIC_API_KEY and OPENAI_API_KEY removed from its environment, so the
// zero-configuration provider is the offline extractive summarizer (unless a test sets a key
// for a local mock server).

import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { checkMessages, countTokens, type CompactResult, type Message } from '../../index'
import { tempDir } from '../support/helpers'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const CLI = join(ROOT, 'cli', 'context-compact.js')

interface Run {
  code: number | null
  stdout: string
  stderr: string
  ms: number
}

function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra }
  for (const key of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_BASE_URL', 'OPENAI_BASE_URL', 'CONTEXT_COMPACT_DEBUG']) {
    if (!(key in extra)) delete env[key]
  }
  return env
}

function cli(args: string[], options: { input?: string; env?: Record<string, string>; cwd?: string } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const start = Date.now()
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: options.cwd ?? dir,
      env: cleanEnv(options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - start }))
    child.stdin.end(options.input ?? '')
  })
}

/** A failure: exit code, exactly one line on stderr, no stack trace. */
function expectOneLineError(run: Run, code: number, pattern: RegExp) {
  expect(run.code, run.stderr).toBe(code)
  const lines = run.stderr.trimEnd().split('\n')
  expect(lines, run.stderr).toHaveLength(1)
  expect(lines[0]).toMatch(/^context-compact: /)
  expect(lines[0]).toMatch(pattern)
  expect(run.stderr).not.toMatch(/\n\s+at /)
}

let dir: string
let conversation: Message[]
let convFile: string
let bodyFile: string
let orphanFile: string

beforeAll(async () => {
  dir = tempDir('cc-cli-')
  const generator = await import(pathToFileURL(join(ROOT, 'benchmark', 'generate.mjs')).href)
  conversation = generator.generateConversation({ targetTokens: 20_000, seed: 7 })
  convFile = join(dir, 'conversation.json')
  writeFileSync(convFile, JSON.stringify(conversation))
  bodyFile = join(dir, 'body.json')
  writeFileSync(
    bodyFile,
    JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      system: conversation[0].content,
      tools: [{ name: 'bash', description: 'Runs a shell command', input_schema: { type: 'object', properties: { cmd: { type: 'string' } } } }],
      messages: conversation.slice(1),
    }),
  )
  orphanFile = join(dir, 'orphan.json')
  writeFileSync(
    orphanFile,
    JSON.stringify([
      { role: 'user', content: 'list the files' },
      { role: 'assistant', content: 'Sure.' },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01orphan', content: 'a.txt' }] },
    ]),
  )
})

describe('help and usage errors', () => {
  it('prints help for every command with exit 0', async () => {
    const main = await cli(['--help'])
    expect(main.code).toBe(0)
    for (const command of ['count', 'check', 'compact', 'history', 'restore', 'prune', 'demo']) {
      expect(main.stdout).toContain(command)
      const run = await cli([command, '--help'])
      expect(run.code, command).toBe(0)
      expect(run.stdout).toContain(`Usage: context-compact ${command}`)
    }
  })

  it('exits 2 with one line for usage errors', async () => {
    expectOneLineError(await cli(['frobnicate']), 2, /unknown command "frobnicate"/)
    expectOneLineError(await cli(['count']), 2, /missing argument: <file\|->/)
    expectOneLineError(await cli(['count', convFile, '--bogus']), 2, /--bogus/)
    expectOneLineError(await cli(['check', convFile, '--limit', 'lots']), 2, /--limit must be an integer/)
    expectOneLineError(await cli(['compact', convFile, '--provider', 'gemini']), 2, /--provider must be one of anthropic, openai, extractive/)
    expectOneLineError(await cli(['check', convFile, '--usage', '{nope']), 2, /--usage must be a JSON object/)
    expectOneLineError(await cli(['prune']), 2, /--older-than-days/)
    expectOneLineError(await cli(['history', '--session-id', '../etc']), 2, /sessionId/)
    const none = await cli([])
    expect(none.code).toBe(2)
  })
})

describe('invalid input: exit 1, one line, no stack trace', () => {
  it('reports unreadable, malformed and wrongly shaped files', async () => {
    const bad = join(dir, 'bad.json')
    writeFileSync(bad, '{"messages": [')
    expectOneLineError(await cli(['count', bad]), 1, /bad\.json: invalid JSON/)
    expectOneLineError(await cli(['check', join(dir, 'missing.json')]), 1, /cannot read .*missing\.json: no such file/)
    const shape = join(dir, 'shape.json')
    writeFileSync(shape, JSON.stringify({ prompt: 'hi' }))
    expectOneLineError(await cli(['compact', shape]), 1, /expected a JSON array of messages or a request body/)
    const invalid = join(dir, 'invalid.json')
    writeFileSync(invalid, JSON.stringify([{ role: 'user', content: 'hi' }, { content: 'no role' }]))
    expectOneLineError(await cli(['count', invalid]), 1, /messages\[1\]\.role is missing/)
    expectOneLineError(await cli(['compact', invalid, '--force']), 1, /messages\[1\]\.role is missing/)
  })
})

describe('count', () => {
  it('prints totals, roles, block types and the largest messages', async () => {
    const run = await cli(['count', convFile])
    expect(run.code, run.stderr).toBe(0)
    const total = countTokens(conversation)
    expect(run.stdout).toContain(`${conversation.length} messages, ${total.toLocaleString('en-US')} tokens (o200k_base)`)
    expect(run.stdout).toMatch(/By role\n\s+user/)
    expect(run.stdout).toMatch(/By block type\n/)
    expect(run.stdout).toContain('tool_result')
    expect(run.stdout).toMatch(/Largest messages\n\s+index\s+tokens\s+role\n\s+messages\[\d+\]/)
  })

  it('--json: the parts add up to the exact total', async () => {
    const run = await cli(['count', convFile, '--json'])
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout)
    expect(report.tokens).toBe(countTokens(conversation))
    expect(report.messages).toBe(conversation.length)
    const sum = (o: Record<string, { tokens: number }>) => Object.values(o).reduce((a, e) => a + e.tokens, 0)
    expect(sum(report.byRole)).toBe(report.tokens)
    expect(sum(report.byBlockType)).toBe(report.tokens)
    expect(report.largest).toHaveLength(5)
    const perMessage = conversation.map((m) => countTokens([m]))
    expect(report.largest[0].tokens).toBe(Math.max(...perMessage))
    expect(report.largest[0].tokens).toBe(perMessage[report.largest[0].index])
    expect(report.largest.map((m: { tokens: number }) => m.tokens)).toEqual(
      [...report.largest.map((m: { tokens: number }) => m.tokens)].sort((a, b) => b - a),
    )
  })

  it('counts the system prompt and tools of a request body', async () => {
    const run = await cli(['count', bodyFile, '--json', '--encoding', 'cl100k_base'])
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout)
    expect(report.encoding).toBe('cl100k_base')
    expect(report.systemTokens).toBeGreaterThan(0)
    expect(report.toolsTokens).toBeGreaterThan(0)
    expect(report.requestTokens).toBe(report.tokens + report.systemTokens + report.toolsTokens)
  })
})

describe('check', () => {
  it('reports the threshold status of a valid conversation (exit 0)', async () => {
    const run = await cli(['check', convFile, '--limit', '10000'])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toMatch(/raw tokens/)
    expect(run.stdout).toMatch(/estimated tokens .*source: raw/)
    expect(run.stdout).toMatch(/status: OVER the threshold/)
    expect(run.stdout).toContain('validity: OK')
    const below = await cli(['check', convFile])
    expect(below.code).toBe(0)
    expect(below.stdout).toMatch(/status: below the threshold/)
  })

  it('--json: measure with usage and agent model', async () => {
    const run = await cli(['check', convFile, '--json', '--limit', '100000', '--ratio', '0.5', '--usage', '{"input_tokens": 60000}'])
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout)
    expect(report.valid).toBe(true)
    expect(report.problems).toEqual([])
    expect(report.measure.source).toBe('usage')
    expect(report.measure.threshold).toBe(50_000)
    expect(report.measure.shouldCompact).toBe(true)
    expect(report.contextTokenLimit).toBe(100_000)
    const model = JSON.parse((await cli(['check', convFile, '--json', '--agent-model', 'claude-sonnet-4-5'])).stdout)
    expect(model.measure.source).toBe('model')
    expect(model.measure.tokens).toBeGreaterThan(model.measure.rawTokens)
    // A request body names its model: used as the agent model.
    const body = JSON.parse((await cli(['check', bodyFile, '--json'])).stdout)
    expect(body.agentModel).toBe('claude-sonnet-4-5')
    expect(body.measure.rawTokens).toBeGreaterThan(body.measure.messageTokens)
  })

  it('exits 1 on an orphan tool_result, naming the index in the API words', async () => {
    const run = await cli(['check', orphanFile])
    expect(run.code).toBe(1)
    expect(run.stdout).toContain(
      'messages[2] orphan_tool_result: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01orphan.',
    )
    expectOneLineError(run, 1, /invalid conversation: messages\[2\]: unexpected `tool_use_id`/)
    const json = await cli(['check', orphanFile, '--json'])
    expect(json.code).toBe(1)
    const report = JSON.parse(json.stdout)
    expect(report.valid).toBe(false)
    expect(report.problems).toEqual(checkMessages(JSON.parse(readFileSync(orphanFile, 'utf8'))))
    expect(report.problems).toEqual([expect.objectContaining({ index: 2, kind: 'orphan_tool_result' })])
  })

  it('reports structurally invalid messages as problems', async () => {
    const file = join(dir, 'roles.json')
    writeFileSync(file, JSON.stringify([{ role: 'assistant', content: 'I begin' }, { role: 'robot', content: 'x' }]))
    const run = await cli(['check', file, '--json'])
    expect(run.code).toBe(1)
    const report = JSON.parse(run.stdout)
    expect(report.problems.map((p: { index: number; kind: string }) => [p.index, p.kind])).toEqual([
      [0, 'first_message_not_user'],
      [1, 'invalid_message'],
    ])
  })
})

describe('compact', () => {
  it('reads stdin and writes the compacted array to stdout, stats on stderr', async () => {
    const outputDir = join(dir, 'stdin-archives')
    const run = await cli(['compact', '-', '--limit', '8000', '--output-dir', outputDir], { input: JSON.stringify(conversation) })
    expect(run.code, run.stderr).toBe(0)
    const out = JSON.parse(run.stdout) as Message[]
    expect(out.length).toBeLessThan(conversation.length)
    expect(out[0]).toEqual(conversation[0])
    expect(out.at(-1)).toEqual(conversation.at(-1))
    expect(checkMessages(out)).toEqual([])
    expect(run.stderr).toMatch(/original tokens\s+[\d,]+/)
    expect(run.stderr).toMatch(/compaction ratio\s+[\d.]+ %/)
    expect(run.stderr).toMatch(/provider\s+extractive/)
    const archive = run.stderr.match(/archive\s+(\S+\.json)/)![1]
    expect(existsSync(join(dir, archive)) || existsSync(archive)).toBe(true)
    // Not a TTY: plain progress lines, no spinner control codes.
    expect(run.stderr).toMatch(/writing the summary…\n/)
    expect(run.stderr).not.toContain('\x1b[')
  })

  it('keeps a request body envelope and writes -o; --quiet keeps stderr empty', async () => {
    const out = join(dir, 'body-out.json')
    const run = await cli(['compact', bodyFile, '-o', out, '--quiet', '--limit', '8000', '--output-dir', join(dir, 'a2')])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toBe('')
    expect(run.stdout).toBe('')
    const input = JSON.parse(readFileSync(bodyFile, 'utf8'))
    const body = JSON.parse(readFileSync(out, 'utf8'))
    expect(Object.keys(body)).toEqual(Object.keys(input))
    expect(body.system).toEqual(input.system)
    expect(body.tools).toEqual(input.tools)
    expect(body.messages.length).toBeLessThan(input.messages.length)
  })

  it('--json prints the whole CompactResult', async () => {
    const run = await cli(['compact', convFile, '--json', '--force', '--limit', '20000', '--tail-ratio', '0.2', '--session-id', 'json-test', '--output-dir', join(dir, 'a3'), '--prompt-style', 'continuation', '--max-retries', '0'])
    expect(run.code, run.stderr).toBe(0)
    const result = JSON.parse(run.stdout) as CompactResult
    expect(result.compacted).toBe(true)
    expect(result.provider).toBe('extractive')
    expect(result.error).toBeNull()
    expect(result.stats.originalTokenCount).toBe(countTokens(conversation))
    expect(result.stats.compactedMessageCount + result.stats.retainedMessageCount).toBe(conversation.length)
    expect(result.archivePath).toMatch(/json-test[\\/]compact-\d{8}T\d{6}Z-1\.json$/)
    expect(result.summary).toBeTruthy()
  })

  it('below the threshold: the input unchanged, exit 0', async () => {
    const run = await cli(['compact', convFile, '--output-dir', join(dir, 'a4')])
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual(conversation)
    expect(run.stderr).toMatch(/nothing to compact/)
    expect(existsSync(join(dir, 'a4'))).toBe(false)
  })

  it('a failed compaction exits 1 with one error line, output unchanged', async () => {
    // An explicit provider without a key: no network, MISSING_API_KEY.
    const run = await cli(['compact', convFile, '--force', '--provider', 'openai', '--quiet', '--output-dir', join(dir, 'a5')])
    expect(run.code).toBe(1)
    expectOneLineError(run, 1, /compaction failed: MISSING_API_KEY/)
    expect(JSON.parse(run.stdout)).toEqual(conversation)
  })

  it('the result fits or says so: a giant last message is shortened, or exit 1 with STILL_OVER_LIMIT', async () => {
    const log = Array.from({ length: 3000 }, (_, i) => `line ${i} of the build output`).join('\n')
    const giant = [
      ...conversation,
      { role: 'assistant', content: 'Shall I go on?' },
      { role: 'user', content: `Here is the whole log:\n${log}` },
    ]
    const file = join(dir, 'giant.json')
    writeFileSync(file, JSON.stringify(giant))
    const limit = String(Math.floor(countTokens(giant.slice(-1) as Message[]) * 0.75))
    const over = await cli(['compact', file, '--limit', limit, '--output-dir', join(dir, 'a7')])
    expect(over.code).toBe(1)
    expect(over.stderr).toMatch(/compacted, but the result does not fit: STILL_OVER_LIMIT: .*threshold/)
    const smaller = JSON.parse(over.stdout) as Message[]
    expect(countTokens(smaller)).toBeLessThan(countTokens(giant as Message[]))
    const fits = await cli(['compact', file, '--limit', limit, '--offload', 'all', '--json', '--output-dir', join(dir, 'a7')])
    expect(fits.code, fits.stderr).toBe(0)
    const result = JSON.parse(fits.stdout) as CompactResult
    expect(result.error).toBeNull()
    expect(result.offloaded).toMatchObject([{ kind: 'text', originalIndex: giant.length - 1 }])
    expect(countTokens(result.messages)).toBeLessThan(result.threshold)
    const bad = await cli(['compact', file, '--offload', 'some'])
    expect(bad.code).toBe(2)
  })

  describe('against a mock Anthropic server', () => {
    let server: Server
    let url: string
    let requests = 0
    let apiKey: string | undefined
    beforeAll(async () => {
      server = createServer((req, res) => {
        let body = ''
        req.on('data', (chunk) => (body += chunk))
        req.on('end', () => {
          requests++
          if (requests === 1) {
            res.writeHead(529, { 'content-type': 'application/json', 'retry-after-ms': '50' })
            res.end(JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }))
            return
          }
          apiKey = req.headers['x-api-key'] as string | undefined
          res.writeHead(200, { 'content-type': 'application/json' })
          res.end(
            JSON.stringify({
              id: 'msg_1',
              type: 'message',
              role: 'assistant',
              model: 'claude-mock',
              content: [{ type: 'text', text: '## Goal\nThe mock summary.' }],
              stop_reason: 'end_turn',
              usage: { input_tokens: 100, output_tokens: 10 },
            }),
          )
        })
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    })
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

    it('shows the retry and the attempt number while the summary is written', async () => {
      const run = await cli(['compact', convFile, '--force', '--base-url', url, '--model', 'claude-mock', '--output-dir', join(dir, 'a6')], {
        env: { ANTHROPIC_API_KEY: 'sk-ant-test' },
      })
      expect(run.code, run.stderr).toBe(0)
      expect(run.stderr).toMatch(/attempt 1 failed: OVERLOADED \(HTTP 529\).*attempt 2 in 0\.1s/)
      expect(run.stderr).toMatch(/summary written in [\d.]+s \(2 attempts\)/)
      expect(run.stderr).toMatch(/provider\s+anthropic claude-mock/)
      expect(apiKey).toBe('sk-ant-test')
      expect(run.stderr).not.toContain('sk-ant-test')
      const out = JSON.parse(run.stdout) as Message[]
      expect(JSON.stringify(out)).toContain('The mock summary.')
    })
  })
})

describe('history, restore, prune', () => {
  it('lists, restores the full conversation after two compactions, and prunes', async () => {
    const outputDir = join(dir, 'hist')
    const first = join(dir, 'c1.json')
    const second = join(dir, 'c2.json')
    const common = ['--output-dir', outputDir, '--session-id', 's1', '--quiet']
    expect((await cli(['compact', convFile, '-o', first, '--limit', '8000', ...common])).code).toBe(0)
    expect((await cli(['compact', first, '-o', second, '--force', '--limit', '3000', ...common])).code).toBe(0)

    const history = await cli(['history', '--output-dir', outputDir, '--session-id', 's1', '--json'])
    expect(history.code, history.stderr).toBe(0)
    const archives = JSON.parse(history.stdout)
    // The second compaction's kept tail alone is over a 3000-token window: its largest tool
    // result was shortened to fit, and that message's original went into the same compaction's
    // archive, 2: one entry per compaction.
    expect(archives.map((a: { sequence: number }) => a.sequence)).toEqual([1, 2])
    expect(readFileSync(second, 'utf8')).toContain('The full original is keptOriginals.shortened[0] of the archive ')
    expect(JSON.parse(readFileSync(archives[1].path, 'utf8')).keptOriginals.shortened).toHaveLength(1)
    const text = await cli(['history', '--output-dir', outputDir, '--session-id', 's1'])
    expect(text.stdout).toMatch(/2 archives for session "s1"/)
    expect(text.stdout).toMatch(/#1 .* messages/)

    const restored = await cli(['restore', second, '--output-dir', outputDir, '--session-id', 's1'])
    expect(restored.code, restored.stderr).toBe(0)
    expect(JSON.parse(restored.stdout)).toEqual(conversation)
    expect(restored.stderr).toMatch(/restored \d+ → \d+ messages/)

    const wrong = await cli(['restore', second, '--output-dir', outputDir, '--session-id', 'other'])
    expectOneLineError(wrong, 1, /ARCHIVE_NOT_FOUND/)

    const kept = await cli(['prune', '--output-dir', outputDir, '--older-than-days', '30', '--json'])
    expect(kept.code).toBe(0)
    expect(JSON.parse(kept.stdout)).toEqual({ removed: [], kept: 2 })
    const pruned = await cli(['prune', '--output-dir', outputDir, '--older-than-days', '0', '--session-id', 's1'])
    expect(pruned.code, pruned.stderr).toBe(0)
    // The archives and the metadata of the two compactions.
    expect(pruned.stdout).toMatch(/removed 4 files, kept 0 archives/)
    const after = await cli(['history', '--output-dir', outputDir, '--session-id', 's1', '--json'])
    expect(JSON.parse(after.stdout)).toEqual([])
  })
})

describe('demo', () => {
  it('compacts a 200K-token session offline in under 10 s', async () => {
    const outputDir = join(dir, 'demo-archives')
    const run = await cli(['demo', '--output-dir', outputDir])
    expect(run.code, run.stderr).toBe(0)
    expect(run.ms).toBeLessThan(10_000)
    expect(run.stdout).toMatch(/\d{3},\d{3} tokens \(o200k_base\)/)
    expect(run.stdout).toMatch(/threshold 184,000/)
    expect(run.stdout).toMatch(/over the threshold, compaction runs/)
    expect(run.stdout).toMatch(/zero-configuration provider: extractive/)
    expect(run.stdout).toMatch(/summary written by: extractive/)
    expect(run.stdout).toContain('[context-compact] Earlier conversation')
    expect(run.stdout).toMatch(/original tokens\s+2\d\d,\d{3}/)
    const archive = run.stdout.match(/archived in (\S+\.json)/)![1]
    expect(archive.startsWith(outputDir)).toBe(true)
    expect(existsSync(archive)).toBe(true)
    // The demo's kept turns lose their thinking: their originals are in the compaction's one
    // archive, beside the messages it replaced.
    const archived = JSON.parse(readFileSync(archive, 'utf8'))
    expect(Array.isArray(archived.messages)).toBe(true)
    expect(archived.keptOriginals.thinkingRemoved.length).toBeGreaterThan(0)
    expect(readdirSync(dirname(archive)).filter((n) => /^compact-.*-\d+\.json$/.test(n))).toEqual([basename(archive)])
  })
})

describe('message formats (--format)', () => {
  /** A Gemini agent loop: calls without ids, answered by order. */
  function geminiContents(steps: number) {
    const contents: unknown[] = []
    for (let i = 0; i < steps; i++) {
      contents.push({ role: 'user', parts: [{ text: `step ${i}: edit src/g${i}.py` }] })
      contents.push({ role: 'model', parts: [{ functionCall: { name: 'edit_file', args: { path: `src/g${i}.py` } }, thoughtSignature: `sig${i}` }] })
      contents.push({ role: 'user', parts: [{ functionResponse: { name: 'edit_file', response: { output: 'lorem ipsum dolor sit amet '.repeat(60) } } }] })
      contents.push({ role: 'model', parts: [{ text: `done ${i}` }] })
    }
    return contents
  }

  it('compacts a Gemini request body {contents} in its envelope, and restores it', async () => {
    const body = { systemInstruction: { parts: [{ text: 'You are a coding agent.' }] }, contents: geminiContents(30) }
    const file = join(dir, 'gemini-body.json')
    const out = join(dir, 'gemini-out.json')
    writeFileSync(file, JSON.stringify(body))
    const common = ['--output-dir', join(dir, 'gemini-archives'), '--session-id', 'g', '--quiet']
    const run = await cli(['compact', file, '-o', out, '--format', 'gemini', '--force', '--limit', '20000', ...common])
    expect(run.code, run.stderr).toBe(0)
    const compacted = JSON.parse(readFileSync(out, 'utf8'))
    expect(compacted.systemInstruction).toEqual(body.systemInstruction)
    expect(compacted.contents.length).toBeLessThan(body.contents.length)
    // The summary is a Gemini user content (then, before a user turn, the model turn that keeps
    // the roles alternating); everything after it is the input's tail.
    expect(compacted.contents[0]).toEqual({ role: 'user', parts: [{ text: expect.stringMatching(/^\[context-compact\]/) }] })
    const tail = compacted.contents[1].role === 'model' && compacted.contents[1].parts[0].text?.startsWith('[context-compact] Understood') ? compacted.contents.slice(2) : compacted.contents.slice(1)
    expect(tail).toEqual(body.contents.slice(body.contents.length - tail.length))
    expect(checkMessages(compacted.contents, { format: 'gemini' } as any)).toEqual([])

    const restored = await cli(['restore', out, '--format', 'gemini', ...common])
    expect(restored.code, restored.stderr).toBe(0)
    expect(JSON.parse(restored.stdout)).toEqual(body)
  })

  it('counts and checks an OpenAI Responses array, detected or named', async () => {
    const items = [
      { role: 'developer', content: 'You are a coding agent.' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'run the tests' }] },
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'run them' }] },
      { type: 'function_call', call_id: 'c1', name: 'shell', arguments: '{"command":"npm test"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'all 12 tests passed' },
    ]
    const file = join(dir, 'responses.json')
    writeFileSync(file, JSON.stringify(items))
    const expected = countTokens(items as any, { format: 'openai-responses' } as any)
    for (const args of [[], ['--format', 'openai-responses']]) {
      const count = await cli(['count', file, '--json', ...args])
      expect(count.code, count.stderr).toBe(0)
      expect(JSON.parse(count.stdout).tokens).toBe(expected)
      const check = await cli(['check', file, '--json', ...args])
      expect(check.code, check.stderr).toBe(0)
      expect(JSON.parse(check.stdout).valid).toBe(true)
    }
    // An output without its call is reported in the Responses list's own terms.
    writeFileSync(file, JSON.stringify(items.filter((item) => item.type !== 'function_call')))
    const orphan = await cli(['check', file, '--json', '--format', 'openai-responses'])
    expect(orphan.code).toBe(1)
    expect(JSON.parse(orphan.stdout).problems[0].index).toBe(3)
  })

  it('an unknown --format is a usage error naming the choices', async () => {
    const run = await cli(['count', convFile, '--format', 'gemni'])
    expectOneLineError(run, 2, /--format.*gemini/)
  })
})
