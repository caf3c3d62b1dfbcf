// The CLI on the session files agents keep on disk, recognised by their content: Claude Code's
// project JSONL, pi's session JSONL and Codex's rollout JSONL, made at test time from the real
// conversations of ../shared/data/real in the shapes those agents write (./agent-sessions.ts),
// and the two real pi sessions of ../shared/data as they are. Each command on each: what the
// agent's model holds now is counted, checked against the threshold with the usage the agent
// recorded, compacted, restored from the archives its summary names, and reported with the
// billed usage beside the count. And the CLI's own sentences for its argument errors.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { beforeAll, describe, expect, it } from 'vitest'

import { checkMessages, countTokens } from '../../index'
import { claudeCodeSession, codexRollout, piSession, type Made } from '../support/agent-sessions'
import { tempDir } from '../support/helpers'

const ROOT = join(__dirname, '..', '..')
const CLI = join(ROOT, 'cli', 'context-compact.js')
const DATA = join(ROOT, '..', 'shared', 'data')
const REAL = join(DATA, 'real')
const present = existsSync(join(REAL, 'manifest.json')) && existsSync(join(DATA, 'pi-session-large.jsonl'))
const fmt = (n: number) => n.toLocaleString('en-US')
const load = (name: string) => JSON.parse(readFileSync(join(REAL, name), 'utf8'))

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

function cli(args: string[], cwd: string, input?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env }
    for (const key of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_BASE_URL', 'OPENAI_BASE_URL', 'CONTEXT_COMPACT_DEBUG', 'CONTEXT_COMPACT_LOG']) delete env[key]
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(input ?? '')
  })
}

/** A failure: the exit code and exactly one line on stderr, in the CLI's words. */
function expectOneLine(run: Run, code: number, pattern: RegExp) {
  expect(run.code, run.stderr).toBe(code)
  const lines = run.stderr.trimEnd().split('\n')
  expect(lines, run.stderr).toHaveLength(1)
  expect(lines[0]).toMatch(/^context-compact: /)
  expect(lines[0]).toMatch(pattern)
  expect(run.stderr).not.toMatch(/\n\s+at |ERR_PARSE_ARGS|TypeError/)
}

interface Case {
  name: string
  agent: string
  file: string
  made: Made
  format: 'anthropic' | 'openai-responses'
}

let dir: string
const cases: Case[] = []

beforeAll(() => {
  if (!present) return
  dir = tempDir('cc-cli-sessions-')
  const write = (name: string, made: Made, agent: string, format: Case['format']) => {
    const file = join(dir, name)
    writeFileSync(file, made.text)
    cases.push({ name, agent, file, made, format })
  }
  write('claude-code.jsonl', claudeCodeSession(load('cc-spotter-gqc-pre.json'), { usage: load('cc-spotter-gqc-pre.usage.json') }), 'Claude Code', 'anthropic')
  write(
    'claude-code-compacted.jsonl',
    claudeCodeSession(load('cc-spotter-fum-post.json'), { usage: load('cc-spotter-fum-post.usage.json'), before: load('cc-spotter-gqc-pre.json').slice(0, 40) }),
    'Claude Code',
    'anthropic',
  )
  write('pi.jsonl', piSession(load('cc-spotter-4te-pre.json'), { usage: load('cc-spotter-4te-pre.usage.json'), compactAt: 150, kept: 6 }), 'pi', 'anthropic')
  // A file name that says nothing: the content tells.
  write('rollout.txt', codexRollout(load('mini-gemini3-pytest-6197.json'), { usage: load('mini-gemini3-pytest-6197.usage.json'), compactAt: 99 }), 'Codex', 'openai-responses')
})

describe.skipIf(!present)('the session files agents write', () => {
  it('each file is read as the list its model holds, with its usage; count, check, compact, restore and report work on it', async () => {
    expect(cases).toHaveLength(4)
    for (const { name, agent, file, made, format } of cases) {
      const work = join(dir, `work-${name}`)
      const elsewhere = join(dir, `elsewhere-${name}`)
      mkdirSync(work)
      mkdirSync(elsewhere)
      const lastPrompt = made.usage[made.usage.length - 1].prompt

      // count: the messages the model holds, counted in their format.
      const count = await cli(['count', file, '--json'], work)
      expect(count.code, `${name}: ${count.stderr}`).toBe(0)
      const counted = JSON.parse(count.stdout)
      expect(counted.messages, name).toBe(made.messages.length)
      expect(counted.tokens, name).toBe(countTokens(made.messages as any, { format } as any))
      expect(counted.session).toMatchObject({ agent, sessionId: made.sessionId, model: made.model, format, recordedUsage: made.usage.length })
      const text = await cli(['count', file], work)
      expect(text.stdout).toContain(`a ${agent} session ${made.sessionId}, model ${made.model}: the ${fmt(made.messages.length)} messages its model holds now`)

      // check: valid, and the trigger reads the usage of the last reply.
      const check = await cli(['check', file, '--json'], work)
      expect(check.code, `${name}: ${check.stderr}`).toBe(0)
      const checked = JSON.parse(check.stdout)
      expect(checked.valid, JSON.stringify(checked.problems)).toBe(true)
      expect(checked.agentModel).toBe(made.model)
      expect(checked.measure.source, name).toBe('usage')
      expect(checked.measure.tokens).toBeGreaterThanOrEqual(lastPrompt)

      // compact: the list, compacted, as a JSON array; archives under the session's own id.
      const out = join(work, 'out.json')
      const compact = await cli(['compact', file, '-o', out, '--limit', '60000'], work)
      expect(compact.code, `${name}: ${compact.stderr}`).toBe(0)
      expect(compact.stderr).toContain(`a ${agent} session ${made.sessionId}`)
      expect(compact.stderr).toMatch(/original tokens\s+[\d,]+/)
      const compacted = JSON.parse(readFileSync(out, 'utf8'))
      expect(Array.isArray(compacted)).toBe(true)
      expect(compacted.length).toBeLessThan(made.messages.length)
      expect(checkMessages(compacted, { format } as any)).toEqual([])
      expect(existsSync(join(work, '.context-compact', made.sessionId))).toBe(true)

      // restore, from another directory and without --output-dir: the archives the summary names.
      const restored = await cli(['restore', out], elsewhere)
      expect(restored.code, `${name}: ${restored.stderr}`).toBe(0)
      expect(JSON.parse(restored.stdout)).toEqual(made.messages)
      expect(restored.stderr).toMatch(new RegExp(`restored ${compacted.length} → ${fmt(made.messages.length)} messages \\(archives of session "${made.sessionId}" in .*, as the summaries say\\)`))

      // report: the session file with its usage beside the count; the compacted list with its compaction.
      const page = join(elsewhere, 'report.html')
      const report = await cli(['report', file, '-o', page], elsewhere)
      expect(report.code, `${name}: ${report.stderr}`).toBe(0)
      const html = readFileSync(page, 'utf8')
      expect((html.match(/<circle class="billed"/g) ?? []).length, name).toBe(made.usage.length)
      expect(html).toContain(`<span>last billed prompt</span><b>${fmt(lastPrompt)}</b>`)
      const after = await cli(['report', out, '-o', join(elsewhere, 'after.html')], elsewhere)
      expect(after.code, after.stderr).toBe(0)
      expect(after.stderr).toMatch(/1 compaction \(1 from this list's summaries\),/)
    }
  })

  it('the two real pi sessions, as they are', async () => {
    const work = tempDir('cc-cli-pi-')
    for (const [file, model, messages] of [
      [join(DATA, 'pi-session-before-compaction.jsonl'), 'claude-opus-4-5', 440],
      [join(DATA, 'pi-session-large.jsonl'), 'claude-sonnet-4-5', 885],
    ] as const) {
      const count = JSON.parse((await cli(['count', file, '--json'], work)).stdout)
      // pi-session-before-compaction compacted twice: its second summary, then what it kept.
      expect(count.messages).toBe(messages)
      expect(count.session).toMatchObject({ agent: 'pi', model })
      const check = await cli(['check', file, '--json'], work)
      expect(check.code, check.stderr).toBe(0)
      const checked = JSON.parse(check.stdout)
      expect(checked.valid, JSON.stringify(checked.problems.slice(0, 2))).toBe(true)
      expect(checked.measure.source).toBe('usage')
      const out = join(work, `${count.session.sessionId}.json`)
      const compact = await cli(['compact', file, '-o', out, '-q', '--limit', '150000'], work)
      expect(compact.code, compact.stderr).toBe(0)
      const compacted = JSON.parse(readFileSync(out, 'utf8'))
      expect(compacted.length).toBeLessThan(messages)
      const restored = await cli(['restore', out, '-q'], tempDir())
      expect(restored.code, restored.stderr).toBe(0)
      expect(JSON.parse(restored.stdout)).toHaveLength(messages)
      const report = await cli(['report', file, '-o', join(work, 'r.html'), '-q'], work)
      expect(report.code, report.stderr).toBe(0)
      expect(readFileSync(join(work, 'r.html'), 'utf8')).toMatch(/<span>last billed prompt<\/span><b>[\d,]+<\/b>/)
    }
    const notes = await cli(['count', join(DATA, 'pi-session-before-compaction.jsonl')], work)
    expect(notes.stderr).toContain('note: pi compacted this session: the list starts with its summary')
  })

  it('a line the agent was still writing is skipped and said; a JSONL file no agent wrote is named as such', async () => {
    const { file, made } = cases[0]
    const torn = join(dir, 'torn.jsonl')
    writeFileSync(torn, readFileSync(file, 'utf8') + '{"parentUuid":"abc","type":"assist')
    const count = await cli(['count', torn], dir)
    expect(count.code, count.stderr).toBe(0)
    expect(count.stdout).toContain(`${fmt(made.messages.length)} messages`)
    expect(count.stderr).toMatch(/note: 1 line that is not JSON skipped \(line \d+\)/)
    const other = join(dir, 'other.jsonl')
    writeFileSync(other, '{"event":"click","x":1}\n{"event":"scroll","y":2}\n')
    expectOneLine(await cli(['check', other], dir), 1, /other\.jsonl: one JSON value a line, but not a session file of Claude Code, pi or Codex/)
    // From stdin too.
    const piped = await cli(['count', '-', '--json'], dir, readFileSync(cases[3].file, 'utf8'))
    expect(JSON.parse(piped.stdout).session.agent).toBe('Codex')
  })

  it('report on a session file never compacted: no compaction from another run unless asked, each one said where it comes from, and the estimate check gives', async () => {
    const work = tempDir('cc-cli-report-origin-')
    for (const { name, file, made } of cases.filter((c) => c.name !== 'claude-code-compacted.jsonl')) {
      // Another run compacts the session under its own id (./.context-compact/<id>).
      const out = join(work, `${name}.out.json`)
      expect((await cli(['compact', file, '-o', out, '-q', '--limit', '60000'], work)).code).toBe(0)
      expect(existsSync(join(work, '.context-compact', made.sessionId))).toBe(true)
      const check = JSON.parse((await cli(['check', file, '--json'], work)).stdout)

      const page = join(work, `${name}.html`)
      const report = await cli(['report', file, '-o', page], work)
      expect(report.code, report.stderr).toBe(0)
      expect(report.stderr, name).toMatch(/, 0 compactions \(no summary in this list names an archive; --output-dir or --session-id reads a session's records\)/)
      const html = readFileSync(page, 'utf8')
      expect(html).not.toContain('data-compaction="')
      // One estimate: the number check gives for the same file.
      expect(html, name).toContain(`<span>trigger estimate now</span><b>${fmt(check.measure.tokens)}</b>`)

      // Asked for: the other run's compaction, said to be the audit log's, not this file's.
      const asked = await cli(['report', file, '-o', page, '--session-id', made.sessionId], work)
      expect(asked.code, asked.stderr).toBe(0)
      expect(asked.stderr).toContain(`1 compaction (1 from the audit log of session "${made.sessionId}" in ./.context-compact only, not this list's)`)
      expect(readFileSync(page, 'utf8')).toMatch(/data-compaction="1" data-origin="log"/)

      // The compacted list: its own compaction.
      const own = await cli(['report', out, '-o', page], work)
      expect(own.stderr).toContain("1 compaction (1 from this list's summaries)")
      expect(readFileSync(page, 'utf8')).toMatch(/data-compaction="1" data-origin="list"/)
    }
  })

  it('restore finds the archives the summary names, also given --session-id (and says so when they are not there)', async () => {
    const { file, made } = cases[0]
    const work = tempDir('cc-cli-where-')
    const archives = join(work, 'somewhere', 'archives')
    const out = join(work, 'out.json')
    expect((await cli(['compact', file, '-o', out, '-q', '--force', '--output-dir', archives, '--session-id', 'gqc'], work)).code).toBe(0)
    // The archives are not in ./.context-compact/gqc: the summary names their directory.
    const restored = await cli(['restore', out, '--session-id', 'gqc'], tempDir())
    expect(restored.code, restored.stderr).toBe(0)
    expect(JSON.parse(restored.stdout)).toEqual(made.messages)
    // A session the summaries do not name, where there are no archives, still fails clearly.
    expectOneLine(await cli(['restore', out, '--session-id', 'other'], tempDir()), 1, /ARCHIVE_NOT_FOUND/)
  })
})

describe('the CLI in its own words', () => {
  it('--help lists one set of inputs: the main help and every command that reads a file say the same', async () => {
    const cwd = tempDir()
    const main = (await cli(['--help'], cwd)).stdout
    const start = main.indexOf('<file> is recognised by its content')
    expect(start).toBeGreaterThan(0)
    const inputs = main.slice(start, main.indexOf('\n\n', start))
    for (const shape of ['JSON array of messages', 'request body', 'Claude Code', 'pi', 'Codex', 'OpenAI Responses {input}', 'Gemini {contents}']) expect(inputs).toContain(shape)
    for (const command of ['count', 'check', 'compact', 'restore', 'report']) {
      const help = (await cli([command, '--help'], cwd)).stdout
      expect(help, command).toContain(inputs)
      // No other list of shapes beside it.
      expect(help.split('<file> is').length, command).toBe(2)
      expect(help, command).not.toMatch(/JSON message array|as for `context-compact count`|OpenAI body \{messages, tools\}/)
    }
  })

  it('argument errors are the CLI\'s sentences, not the argument parser\'s', async () => {
    const cwd = tempDir()
    const file = join(cwd, 'c.json')
    writeFileSync(file, JSON.stringify([{ role: 'user', content: 'hi' }]))
    expectOneLine(await cli(['prune', '--older-than-days', '-1'], cwd), 2, /--older-than-days must be a number ≥ 0, got "-1" \(see context-compact --help\)$/)
    expectOneLine(await cli(['prune', '--older-than-days'], cwd), 2, /--older-than-days needs a value/)
    expectOneLine(await cli(['count', file, '--json=yes'], cwd), 2, /--json takes no value/)
    expectOneLine(await cli(['compact', file, '--outptu-dir', 'x'], cwd), 2, /unknown option --outptu-dir \(did you mean --output-dir\?\)/)
    expectOneLine(await cli(['check', file, '--limit', '-5'], cwd), 2, /--limit must be an integer ≥ 1, got "-5"/)
  })

  it('compact --force on a session too short to compact: no progress for nothing, and what to change', async () => {
    const cwd = tempDir()
    const file = join(cwd, 'short.jsonl')
    const made = claudeCodeSession(
      [
        { role: 'user', content: 'What does src/main.rs do?' },
        { role: 'assistant', content: [{ type: 'text', text: 'It parses the arguments and starts the server.' }] },
        { role: 'user', content: 'Thanks.' },
      ],
      { usage: [{ message_index_after_which_the_request_was_made: 0, input_tokens: 3, cache_read_input_tokens: 20_000, cache_creation_input_tokens: 500, output_tokens: 12 }] },
    )
    writeFileSync(file, made.text)
    const run = await cli(['compact', file, '--force'], cwd)
    expect(run.code).toBe(1)
    expect(run.stderr).not.toMatch(/writing the summary|finished in/)
    expect(run.stderr).toMatch(/compaction failed: NOTHING_TO_COMPACT: .*; the 3 messages are all kept .*; to compact, try a smaller --tail-ratio \(now 0\.1\)/)
    expect(JSON.parse(run.stdout)).toEqual(made.messages)
  })
})

// Small synthetic session files of several versions of each agent, written from the shapes those
// versions document or were seen to write (./fixtures/sessions/), beside the real ones above.
const FIXTURES = join(__dirname, '..', 'fixtures', 'sessions')

describe('session files of several agent versions', () => {
  it('Codex 0.46 (instructions as a string, a compaction with its message only) reads', async () => {
    const cwd = tempDir()
    const file = join(FIXTURES, 'codex-0.46.jsonl')
    const count = await cli(['count', file, '--json'], cwd)
    expect(count.code, count.stderr).toBe(0)
    const counted = JSON.parse(count.stdout)
    expect(counted.session).toMatchObject({ agent: 'Codex', model: 'gpt-5-codex', format: 'openai-responses', recordedUsage: 2 })
    // The compaction: the user's message and the summary as a user message, then what followed
    // (the ghost snapshot is Codex's bookkeeping, not sent).
    expect(counted.messages).toBe(6)
    const check = await cli(['check', file, '--json'], cwd)
    expect(check.code, check.stderr).toBe(0)
    const checked = JSON.parse(check.stdout)
    expect(checked.valid).toBe(true)
    expect(checked.measure.source).toBe('usage')
    expect(checked.measure.tokens).toBeGreaterThanOrEqual(340)
    const text = await cli(['count', file], cwd)
    expect(text.stderr).toContain('note: Codex compacted this session: the list starts from its replacement history')
    expect(text.stderr).not.toMatch(/does not know/)
  })

  it('Codex 0.146: record types added since are skipped and counted, the encrypted compaction is used, and check judges the Responses list by its own rules', async () => {
    const cwd = tempDir()
    const file = join(FIXTURES, 'codex-0.146.jsonl')
    const count = await cli(['count', file, '--json'], cwd)
    expect(count.code, count.stderr).toBe(0)
    const counted = JSON.parse(count.stdout)
    expect(counted.session).toMatchObject({ agent: 'Codex', sessionId: '019ab3c4-0146-7000-8000-000000000146', model: 'gpt-5.3-codex', recordedUsage: 2 })
    // The replacement history (the user's message and the encrypted summary), then the
    // developer message, the patch call and its output, the reply.
    expect(counted.messages).toBe(6)
    expect(counted.byRole.compaction).toMatchObject({ messages: 1 })
    const text = await cli(['check', file], cwd)
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toContain('validity: OK (no problems found)')
    expect(text.stderr).toContain('note: 8 Codex records of types this reader does not know skipped (world_state ×4, inter_agent_communication_metadata ×4)')
    expect(text.stderr).toContain('its summary is encrypted')
    expect(text.stderr).not.toMatch(/system|Anthropic/)
    // The history as the API takes it: a developer message mid-list is the Responses API's to accept.
    const restoredList = JSON.parse((await cli(['compact', file, '--limit', '1000000'], cwd)).stdout)
    expect(restoredList.map((item: any) => item.type === 'message' ? `${item.role}` : item.type)).toEqual(['user', 'compaction', 'developer', 'function_call', 'function_call_output', 'assistant'])
    expect(restoredList[1]).toEqual({ type: 'compaction', encrypted_content: 'gAAAAB-summary-encrypted' })
  })

  it('Codex versions that named the encrypted summary `compaction_summary`: sent as the API\'s `compaction` item', async () => {
    const cwd = tempDir()
    const file = join(cwd, 'rollout.jsonl')
    writeFileSync(file, readFileSync(join(FIXTURES, 'codex-0.146.jsonl'), 'utf8').replace('{"type":"compaction","encrypted_content"', '{"type":"compaction_summary","encrypted_content"'))
    const run = await cli(['compact', file, '--limit', '1000000'], cwd)
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)[1]).toEqual({ type: 'compaction', encrypted_content: 'gAAAAB-summary-encrypted' })
    expect(run.stderr).toContain('its summary is encrypted')
  })

  it('a record line that is not a record still makes the file no Codex rollout (the error names the file, not a type list)', async () => {
    const cwd = tempDir()
    const file = join(cwd, 'rollout.jsonl')
    const lines = readFileSync(join(FIXTURES, 'codex-0.146.jsonl'), 'utf8').trimEnd().split('\n')
    writeFileSync(file, [...lines, JSON.stringify({ event: 'click' })].join('\n'))
    expectOneLine(await cli(['check', file], cwd), 1, new RegExp(`rollout\\.jsonl: one JSON value a line, but not a session file of Claude Code, pi or Codex: line ${lines.length + 1} \\(an object without a "messages" array\\) is not a Codex record`))
  })

  it('Claude Code entry types added since are read past and counted', async () => {
    const cwd = tempDir()
    const lines = readFileSync(join(FIXTURES, 'claude-code-2.1.jsonl'), 'utf8').trimEnd().split('\n')
    const file = join(cwd, 'session.jsonl')
    const extra = [{ type: 'custom-title', customTitle: 'Files', sessionId: '33333333-2121-4000-8000-000000000003' }, { type: 'last-prompt', lastPrompt: 'Step 4', sessionId: '33333333-2121-4000-8000-000000000003' }]
    writeFileSync(file, [...lines, ...extra.map((e) => JSON.stringify(e))].join('\n'))
    const run = await cli(['count', file, '--json'], cwd)
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout).messages).toBe(8)
    const text = await cli(['count', file], cwd)
    expect(text.stderr).toContain('note: 2 Claude Code entries of types this reader does not know skipped (custom-title ×1, last-prompt ×1)')
  })
})

describe('check judges a list by its own format', () => {
  const responses = [
    { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Be brief.' }] },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Ready.' }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Run it.' }] },
    { type: 'function_call', call_id: 'call_1', name: 'run', arguments: '{}' },
    { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Mode changed.' }] },
    { type: 'function_call_output', call_id: 'call_9', output: 'ok' },
  ]

  it('Responses items: no Anthropic role rules; pairing in the Responses API\'s words, at the item itself', () => {
    for (const options of [undefined, { format: 'openai-responses' as const }]) {
      expect(checkMessages(responses as any, options)).toEqual([
        { index: 3, kind: 'missing_tool_result', message: 'No tool output found for function call call_1.' },
        { index: 5, kind: 'orphan_tool_result', message: 'No tool call found for function call output with call_id call_9.' },
      ])
    }
    // The same developer message after the start, answered calls: valid.
    const valid = [...responses.slice(0, 4), { type: 'function_call_output', call_id: 'call_1', output: 'done' }, responses[4]]
    expect(checkMessages(valid as any)).toEqual([])
    expect(checkMessages([{ type: 'message', role: 'user', content: [] }] as any)).toEqual([
      { index: 0, kind: 'empty_content', message: "Invalid 'input[0].content': empty array. Expected an array with minimum length 1, but got an empty array instead." },
    ])
  })

  it('an OpenAI Chat list named as such: no Anthropic role rules, only the empty content array', () => {
    const chat = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'yo' }, { role: 'system', content: 'late' }, { role: 'user', content: [] }, { role: 'user', content: '' }]
    expect(checkMessages(chat as any, { format: 'openai' })).toEqual([
      { index: 3, kind: 'empty_content', message: "Invalid 'messages[3].content': empty array. Expected an array with minimum length 1, but got an empty array instead." },
    ])
    // The same list as Anthropic messages: Anthropic's rules.
    expect(checkMessages(chat as any, { format: 'anthropic' }).map((p) => p.kind)).toEqual(['system_not_at_start', 'empty_content', 'empty_content'])
  })

  it('Anthropic messages keep Anthropic\'s rules and words', () => {
    expect(checkMessages([{ role: 'system', content: 's' }, { role: 'user', content: 'u' }, { role: 'system', content: 'late' }] as any)).toEqual([
      expect.objectContaining({ index: 2, kind: 'system_not_at_start', message: expect.stringContaining('Anthropic API') }),
    ])
  })

  it('the CLI: a Responses request body with a late developer message is valid (exit 0)', async () => {
    const cwd = tempDir()
    const file = join(cwd, 'body.json')
    writeFileSync(file, JSON.stringify({ model: 'gpt-5', input: [...responses.slice(0, 4), { type: 'function_call_output', call_id: 'call_1', output: 'done' }, responses[4]] }))
    const run = await cli(['check', file], cwd)
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain('validity: OK')
  })
})

describe('Claude Code transcripts of several versions', () => {
  // The text of a message, its blocks joined.
  const textOf = (m: any) => (typeof m.content === 'string' ? m.content : m.content.map((b: any) => b.text ?? b.type).join('|'))

  it('1.0 (no compaction), 2.0 (a full compaction: a new root), 2.1 and 2.2 (kept messages relinked after the summary)', async () => {
    const cwd = tempDir()
    const read = async (version: string) => {
      const file = join(FIXTURES, `claude-code-${version}.jsonl`)
      const run = await cli(['compact', file, '--limit', '1000000'], cwd)
      expect(run.code, run.stderr).toBe(0)
      const check = await cli(['check', file, '--json'], cwd)
      expect(check.code, check.stderr).toBe(0)
      return { messages: JSON.parse(run.stdout), stderr: run.stderr, checked: JSON.parse(check.stdout) }
    }
    const v10 = await read('1.0')
    expect(v10.messages).toHaveLength(10)
    expect(v10.messages[0]).toEqual({ role: 'user', content: 'Read two files.' })
    expect(v10.checked.measure.tokens).toBeGreaterThanOrEqual(4 + 1020 + 110)

    const v20 = await read('2.0')
    expect(v20.messages.map(textOf)).toEqual([
      expect.stringMatching(/^This session is being continued .*\|Step 3: read file3\.txt$/s),
      'tool_use',
      'tool_result',
      'File 3 read.',
    ])
    expect(v20.stderr).toContain('note: Claude Code compacted this session: the list starts with its summary\n')

    for (const version of ['2.1', '2.2']) {
      const v = await read(version)
      // The summary, then the turn it kept (written before it in the file), then what followed.
      expect(v.messages.map(textOf), version).toEqual([
        expect.stringMatching(/^This session is being continued .*\|Step 3: read file3\.txt$/s),
        'tool_use',
        'tool_result',
        'File 3 read.',
        'Step 4: read file4.txt',
        'tool_use',
        'tool_result',
        'File 4 read.',
      ])
      expect(v.messages.some((m: any) => textOf(m).includes('Step 1') || textOf(m).includes('Step 2'))).toBe(false)
      expect(v.stderr).toContain('the list starts with its summary, then the 4 entries it kept')
      // The kept turn's usage was billed before the compaction: only the later requests count.
      expect(v.checked.session.usage).toMatchObject({ input_tokens: 4, cache_creation_input_tokens: 700 })
      expect(v.checked.valid).toBe(true)
    }
  })
})

describe('pi sessions of several file versions', () => {
  const textOf = (m: any) => (typeof m.content === 'string' ? m.content : m.content.map((b: any) => b.text ?? b.type).join('|'))
  const read = async (name: string) => {
    const cwd = tempDir()
    const file = join(FIXTURES, name)
    const run = await cli(['compact', file, '--limit', '1000000'], cwd)
    expect(run.code, run.stderr).toBe(0)
    const check = await cli(['check', file, '--json'], cwd)
    expect(check.code, check.stderr).toBe(0)
    const checked = JSON.parse(check.stdout)
    expect(checked.valid, JSON.stringify(checked.problems)).toBe(true)
    return { texts: JSON.parse(run.stdout).map(textOf), stderr: run.stderr, checked }
  }

  it('version 1 (no ids): the compaction keeps from the entry its index names; the kept replies\' usage is not read', async () => {
    const v = await read('pi-v1.jsonl')
    expect(v.texts).toEqual([
      expect.stringMatching(/^The conversation history before this point was compacted into the following summary:\n\n<summary>\nFile 1 was read\.\n<\/summary>$/),
      'Read file 2.',
      'tool_use',
      'tool_result',
      'Read 2.',
      'Read file 3.',
      'tool_use',
      'tool_result',
      'Read 3.',
    ])
    expect(v.checked.session.usage).toEqual({ input_tokens: 3, cache_read_input_tokens: 500, cache_creation_input_tokens: 60, output_tokens: 10 })
  })

  it('version 2 (a tree): the path to the last entry, the abandoned branch as its summary, a hook message', async () => {
    const v = await read('pi-v2.jsonl')
    expect(v.texts).toEqual([
      'Read file 1.',
      'tool_use',
      'tool_result',
      'Read 1.',
      'The following is a summary of a branch that this conversation came back from:\n\n<summary>\nApproach A was tried and failed.</summary>',
      'Remember the tests.',
      'Try approach B.',
      'B works.',
    ])
    expect(v.texts.join(' ')).not.toContain('A failed.')
    // The trigger reads pi's usage as billed: input + cacheRead + cacheWrite.
    expect(v.checked.measure.tokens).toBeGreaterThanOrEqual(3 + 900 + 50)
  })

  it('version 3: custom messages in, extension state, labels, names and settings out, another provider\'s thinking as text, the model of the last change', async () => {
    const v = await read('pi-v3.jsonl')
    expect(v.texts).toEqual([
      expect.stringContaining('<summary>\nFile 1 was read.\n</summary>'),
      'Read file 2.',
      'tool_use',
      'tool_result',
      'Next: file 3.',
      'Read file 3 next.|tool_use',
      'tool_result',
      'A note from an extension.',
    ])
    expect(v.checked.session).toMatchObject({ agent: 'pi', sessionId: 'pi-v3-0000-4000-8000-000000000003' })
    expect(v.checked.agentModel).toBe('gpt-5.1-codex')
    expect(v.stderr).not.toMatch(/does not know/)
  })

  // pi 1.6.0 (@earendil-works/pi-coding-agent 1.6.0, read in its package file
  // dist/core/session-manager.d.ts and .js, and dist/core/messages.d.ts) still writes session
  // version 3 (CURRENT_SESSION_VERSION = 3, the same file format as 1.5.2), with entries the older
  // fixtures lack: `usage` (billed usage outside a reply), `context_edit` (replaces an earlier
  // entry's content in the model's context, or with replacement null leaves it out), `system`
  // messages, and a compaction that carries the system prompt in force (`systemMessage`).
  // pi-v3-1.6.jsonl is synthetic, written in that shape.
  it('pi 1.6 (version 3): the compaction is used, context edits applied, the system message is the system prompt, usage entries out', async () => {
    const v = await read('pi-v3-1.6.jsonl')
    expect(v.texts).toEqual([
      'The conversation history before this point was compacted into the following summary:\n\n<summary>\nFile 1 was read.\n</summary>',
      'Read file 2.',
      'tool_use',
      'tool_result',
      'Read 2.',
      'Read file 3.',
      'Read 3.',
    ])
    expect(v.texts.join(' ')).not.toContain('Ignore this.')
    expect(v.stderr).toContain('note: pi compacted this session: the list starts with its summary')
    expect(v.stderr).not.toMatch(/does not know/)
    expect(v.checked.session).toMatchObject({ agent: 'pi', sessionId: 'pi-v3-1600-4000-8000-000000000016' })
    // The last reply's usage (the one kept across the compaction is not read).
    expect(v.checked.session.usage).toEqual({ input_tokens: 3, cache_read_input_tokens: 300, cache_creation_input_tokens: 20, output_tokens: 10 })
    const cwd = tempDir()
    const file = join(FIXTURES, 'pi-v3-1.6.jsonl')
    const run = await cli(['compact', file, '--limit', '1000000'], cwd)
    const toolResult = JSON.parse(run.stdout)[3].content[0]
    expect(toolResult).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: '[file 2 elided]' }] })
    const count = await cli(['count', file, '--json'], cwd)
    expect(count.code, count.stderr).toBe(0)
    const counted = JSON.parse(count.stdout)
    expect(counted.session).toMatchObject({ agent: 'pi', model: 'claude-sonnet-4-5', format: 'anthropic', recordedUsage: 2 })
    expect(counted.messages).toBe(7)
    // The compaction's system message with its section: "You are a coding agent." and the files line.
    expect(counted.systemTokens).toBeGreaterThan(0)
  })

  it('pi 1.6: an unknown entry type after the known 1.6 ones is skipped and counted', async () => {
    const cwd = tempDir()
    const lines = readFileSync(join(FIXTURES, 'pi-v3-1.6.jsonl'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l))
    const lastId = lines[lines.length - 1].id
    lines.push({ type: 'workspace_snapshot', id: 'ffff0001', parentId: lastId, timestamp: '2026-11-21T10:00:00.000Z', files: [] })
    const file = join(cwd, 'session.jsonl')
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'))
    const run = await cli(['count', file, '--json'], cwd)
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout).messages).toBe(7)
    const text = await cli(['count', file], cwd)
    expect(text.stderr).toContain('note: 1 pi entry of types this reader does not know skipped (workspace_snapshot ×1)')
  })

  it('an entry type or message role a newer pi adds is skipped and counted, the rest still read', async () => {
    const cwd = tempDir()
    const lines = readFileSync(join(FIXTURES, 'pi-v3.jsonl'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l))
    const lastId = lines[lines.length - 1].id
    lines.push({ type: 'workspace_snapshot', id: 'ffff0001', parentId: lastId, timestamp: '2026-11-20T10:00:00.000Z', files: [] })
    lines.push({ type: 'message', id: 'ffff0002', parentId: 'ffff0001', timestamp: '2026-11-20T10:00:00.000Z', message: { role: 'agentNote', content: 'x', timestamp: 1 } })
    const file = join(cwd, 'session.jsonl')
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'))
    const run = await cli(['count', file, '--json'], cwd)
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout).messages).toBe(8)
    const text = await cli(['count', file], cwd)
    expect(text.stderr).toContain('note: 2 pi entries of types this reader does not know skipped (workspace_snapshot ×1, message role agentNote ×1)')
  })
})
