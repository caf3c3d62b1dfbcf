// Quiet by default: a program that compacts writes nothing to stderr unless it asks (`onLog`,
// `logger`, `logLevel`, or CONTEXT_COMPACT_LOG), and what a user needs to know is in
// `result.warnings`. Checked in a child process, as a program runs the library: with no API key
// (the extractive fallback), an archive directory that cannot be written, a shared summary
// request the API rejects (the transcript fallback) and a result still over the threshold.
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

import { describe, expect, it } from 'vitest'

import { compactMessages, Compactor } from '../../index'
import { tempDir } from '../support/helpers'

const ROOT = join(__dirname, '..', '..')

// The child: three compactions, their warnings as JSON on stdout. `LOG_LEVEL` (when set) is
// passed as the `logLevel` option of each call.
const CHILD = `
import { createRequire } from 'node:module'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
const require = createRequire(import.meta.url)
const { compactMessages, Compactor } = require(${JSON.stringify(join(ROOT, 'index.js'))})
const { generateConversation } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'benchmark', 'generate.mjs')).href)})
const { startAnthropicServer } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'benchmark', 'servers', 'anthropic-messages.mjs')).href)})

const logLevel = process.env.LOG_LEVEL ? { logLevel: process.env.LOG_LEVEL } : {}
const dir = mkdtempSync(join(tmpdir(), 'cc-quiet-child-'))
const conversation = generateConversation({ targetTokens: 20000, seed: 11 })
const out = {}

// No key, no provider: the extractive fallback; the archive directory is under a file.
writeFileSync(join(dir, 'a-file'), 'not a directory')
const broken = join(dir, 'a-file', 'archives')
const first = await compactMessages(conversation, { contextTokenLimit: 8000, outputDir: broken, ...logLevel })
out.fallback = first.warnings

// The same through a Compactor, whose giant last message keeps the result over the threshold.
const giant = [...conversation, { role: 'assistant', content: 'Shall I go on?' }, { role: 'user', content: 'the whole log: ' + 'line of the build output\\n'.repeat(4000) }]
const compactor = new Compactor({ contextTokenLimit: 20000, outputDir: join(dir, 'ok'), offload: 'off', ...logLevel })
const over = await compactor.compact(giant)
out.over = over.warnings
out.overError = over.error && over.error.code

// A shared summary request the API rejects (a tool without its schema): the transcript request.
const server = await startAnthropicServer()
try {
  const agentRequest = { model: 'claude-sonnet-4-5', max_tokens: 1024, system: 'You are a coding agent.', tools: [{ name: 'Bash' }] }
  // Long enough that the local server's summary makes the list smaller.
  const long = generateConversation({ targetTokens: 80000, seed: 11 })
  const shared = await compactMessages(long, {
    provider: 'anthropic', apiKey: 'test-key', baseUrl: server.url, agentRequest, summaryRequest: 'shared',
    force: true, outputDir: join(dir, 'shared'), retryBaseDelayMs: 0, ...logLevel,
  })
  out.shared = shared.warnings
  out.sharedRequest = shared.summaryRequest
} finally {
  await server.close()
}
process.stdout.write(JSON.stringify(out))
`

function runChild(env: Record<string, string> = {}) {
  const dir = tempDir('cc-quiet-')
  const file = join(dir, 'child.mjs')
  writeFileSync(file, CHILD)
  const clean: NodeJS.ProcessEnv = { ...process.env, ...env }
  for (const key of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_BASE_URL', 'OPENAI_BASE_URL', 'CONTEXT_COMPACT_LOG']) {
    if (!(key in env)) delete clean[key]
  }
  const run = spawnSync(process.execPath, [file], { env: clean, encoding: 'utf8', timeout: 120_000 })
  expect(run.status, run.stderr).toBe(0)
  return { stderr: run.stderr, out: JSON.parse(run.stdout) }
}

describe('quiet by default', () => {
  it('a program that compacts writes nothing to stderr; each warning a user needs is in result.warnings', () => {
    const { stderr, out } = runChild()
    expect(stderr).toBe('')
    const fallback = out.fallback.join('\n')
    expect(fallback).toMatch(/neither ANTHROPIC_API_KEY nor OPENAI_API_KEY is set/)
    expect(fallback).toMatch(/could not archive the .* in .*a-file/)
    expect(out.overError).toBe('STILL_OVER_LIMIT')
    expect(out.over.join('\n')).toMatch(/still over the threshold/)
    expect(out.sharedRequest).toBe('transcript')
    expect(out.shared.join('\n')).toMatch(/the shared summary request failed \(BAD_REQUEST: .*the transcript request instead/)
  })

  it('logLevel writes the calls\' log at that level and above to stderr, one line each', () => {
    const { stderr, out } = runChild({ LOG_LEVEL: 'warn' })
    const lines = stderr.trimEnd().split('\n')
    expect(lines.length).toBeGreaterThanOrEqual(4)
    for (const line of lines) expect(line).toMatch(/^context-compact (warn|error): /)
    // The warnings of the results are there, at least once each.
    expect(stderr).toMatch(/neither ANTHROPIC_API_KEY nor OPENAI_API_KEY/)
    expect(stderr).toMatch(/could not archive/)
    expect(stderr).toMatch(/still over the threshold/)
    expect(stderr).toMatch(/the shared summary request failed/)
    expect(out.shared.length).toBeGreaterThan(0)
    // 'debug' says more than 'warn'; 'off' says nothing, even with CONTEXT_COMPACT_LOG set.
    expect(runChild({ LOG_LEVEL: 'debug' }).stderr.split('\n').length).toBeGreaterThan(lines.length)
    expect(runChild({ LOG_LEVEL: 'off', CONTEXT_COMPACT_LOG: 'debug' }).stderr).toBe('')
  })

  it('CONTEXT_COMPACT_LOG writes the log to stderr for a program that cannot be changed', () => {
    const { stderr } = runChild({ CONTEXT_COMPACT_LOG: 'warn' })
    expect(stderr).toMatch(/WARN context_compact_core/)
    expect(stderr).toMatch(/could not archive/)
    expect(stderr).not.toMatch(/DEBUG|INFO/)
  })

  it('logLevel is validated: a TypeError naming the option and the values it takes', async () => {
    for (const bad of ['verbose', 'WARN', 3, true, {}]) {
      await expect(compactMessages([{ role: 'user', content: 'hi' }], { logLevel: bad as any })).rejects.toThrow(TypeError)
      await expect(compactMessages([{ role: 'user', content: 'hi' }], { logLevel: bad as any })).rejects.toThrow(
        /options\.logLevel must be one of 'off', 'error', 'warn', 'info' or 'debug'/,
      )
      expect(() => new Compactor({ logLevel: bad as any })).toThrow(/options\.logLevel/)
    }
    // Valid values, and onLog still receives the entries whatever logLevel says.
    const entries: string[] = []
    const result = await compactMessages([{ role: 'user', content: 'hi' }], { logLevel: 'off', onLog: (e) => entries.push(e.level) })
    expect(result.compacted).toBe(false)
  })
})

describe('an onEvent listener that throws', () => {
  it('is a process warning (CONTEXT_COMPACT_LISTENER), not a failure of the call (lib/addon/callbacks.js emitEvent)', async () => {
    const { emitEvent } = createRequire(import.meta.url)('../../lib/addon/callbacks.js')
    const warnings: { name: string; code?: string; message: string }[] = []
    const onWarning = (warning: any) => warnings.push(warning)
    process.on('warning', onWarning)
    try {
      const seen: unknown[] = []
      emitEvent((event: unknown) => seen.push(event), { type: 'a' })
      emitEvent(undefined, { type: 'b' })
      expect(() =>
        emitEvent(() => {
          throw new Error('boom')
        }, { type: 'c' }),
      ).not.toThrow()
      await new Promise((resolve) => setImmediate(resolve))
      expect(seen).toEqual([{ type: 'a' }])
      expect(warnings.map((w) => [w.code, w.message])).toEqual([['CONTEXT_COMPACT_LISTENER', 'onEvent listener threw: boom']])
    } finally {
      process.off('warning', onWarning)
    }
  })
})
