// readAgentSession / parseAgentSession (lib/sessions/): the session files Claude Code, pi and
// Codex keep, read by the library as the list the agent's model holds now, with the usage it
// recorded. The files are made at test time from the real conversations of ../shared/data/real
// in the shapes those agents write (./agent-sessions.ts, written independently of the reader),
// and pi's two real session files of ../shared/data are read as they are. Bad input is a clear
// error, never a crash: a file that cannot be read, text that is not JSON lines, JSON lines no
// agent wrote, and any mangling of a real file.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'

import { checkMessages, parseAgentSession, readAgentSession, type AgentSession } from '../../index'
import { claudeCodeSession, codexRollout, piSession, type Made } from '../support/agent-sessions'
import { tempDir } from '../support/helpers'

const DATA = join(__dirname, '..', '..', '..', 'shared', 'data')
const REAL = join(DATA, 'real')
const present = existsSync(join(REAL, 'manifest.json')) && existsSync(join(DATA, 'pi-session-large.jsonl'))
const load = (name: string) => JSON.parse(readFileSync(join(REAL, name), 'utf8'))

interface Case {
  file: string
  made: Made
  agent: AgentSession['agent']
  format: AgentSession['format']
}

let dir: string
const cases: Case[] = []

beforeAll(() => {
  dir = tempDir('cc-agent-session-')
  if (!present) return
  const write = (name: string, made: Made, agent: Case['agent'], format: Case['format']) => {
    const file = join(dir, name)
    writeFileSync(file, made.text)
    cases.push({ file, made, agent, format })
  }
  write('claude.jsonl', claudeCodeSession(load('cc-spotter-gqc-pre.json'), { usage: load('cc-spotter-gqc-pre.usage.json') }), 'claude-code', 'anthropic')
  write('pi.jsonl', piSession(load('cc-spotter-4te-pre.json'), { usage: load('cc-spotter-4te-pre.usage.json'), compactAt: 150, kept: 6 }), 'pi', 'anthropic')
  write('rollout.txt', codexRollout(load('mini-gemini3-pytest-6197.json'), { usage: load('mini-gemini3-pytest-6197.usage.json'), compactAt: 99 }), 'codex', 'openai-responses')
})

/** The billed prompt of a recorded usage entry, in Anthropic's or the Responses API's fields. */
const billed = (u: Record<string, any>) => u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0)

describe.skipIf(!present)('readAgentSession', () => {
  it('reads each agent\'s file as the list its model holds, in its format, with the usage of each request', async () => {
    expect(cases).toHaveLength(3)
    for (const { file, made, agent, format } of cases) {
      const session = await readAgentSession(file)
      expect(session.agent).toBe(agent)
      expect(session.agentName).toBe({ 'claude-code': 'Claude Code', pi: 'pi', codex: 'Codex' }[agent])
      expect(session.format).toBe(format)
      expect(session.messages).toEqual(made.messages)
      expect(session.usage.map((u) => [u.message_index_after_which_the_request_was_made, billed(u)])).toEqual(made.usage.map((u) => [u.index, u.prompt]))
      expect(session.sessionId).toBe(made.sessionId)
      expect(session.model).toBe(made.model)
      expect(checkMessages(session.messages, { format })).toEqual([])
      // The same from the text, and from a file: URL.
      expect(parseAgentSession(made.text)).toEqual(session)
      expect(await readAgentSession(pathToFileURL(file))).toEqual(session)
    }
  })

  it('reads pi\'s real session files as they are', async () => {
    for (const name of ['pi-session-large.jsonl', 'pi-session-before-compaction.jsonl']) {
      const session = await readAgentSession(join(DATA, name))
      expect(session.agent).toBe('pi')
      expect(session.messages.length).toBeGreaterThan(400)
      expect(session.usage.length).toBeGreaterThan(100)
      expect(checkMessages(session.messages, { format: 'anthropic' })).toEqual([])
      for (const u of session.usage) expect(u.message_index_after_which_the_request_was_made).toBeLessThan(session.messages.length)
    }
  })

  it('a torn last line is skipped and said in the notes', () => {
    const { made } = cases[1]
    const session = parseAgentSession(`${made.text}{"type":"message","message":{"role":"assis`)
    expect(session.messages).toEqual(made.messages)
    expect(session.notes.at(-1)).toMatch(/^1 line that is not JSON skipped \(line \d+\)$/)
  })
})

describe('errors: clear, never a crash', () => {
  it('a file that cannot be read rejects with the system\'s code and names the file', async () => {
    await expect(readAgentSession(join(dir, 'missing.jsonl'))).rejects.toMatchObject({ code: 'ENOENT', message: `cannot read ${join(dir, 'missing.jsonl')}: no such file` })
    mkdirSync(join(dir, 'a-directory'), { recursive: true })
    await expect(readAgentSession(join(dir, 'a-directory'))).rejects.toMatchObject({ code: 'EISDIR', message: expect.stringMatching(/a directory, not a file$/) })
  })

  it('text that is no agent\'s session is a TypeError naming the input and the line', async () => {
    const invalid = { name: 'TypeError', code: 'ERR_CONTEXT_COMPACT_INVALID_ARGUMENT' }
    const file = join(dir, 'not-a-session.json')
    writeFileSync(file, '[\n  {"role": "user", "content": "hi"}\n]\n')
    await expect(readAgentSession(file)).rejects.toMatchObject({ ...invalid, message: `${file}: line 1 is not JSON: a session file of Claude Code, pi or Codex holds one JSON value a line` })
    expect(() => parseAgentSession('')).toThrow(expect.objectContaining({ ...invalid, message: 'session: empty: a session file of Claude Code, pi or Codex holds one JSON value a line' }))
    expect(() => parseAgentSession('{"a":1}\n{"b":2}\n', { name: 'x.jsonl' })).toThrow(/^x\.jsonl: one JSON value a line, but not a session file of Claude Code, pi or Codex \(line 1: /)
    // Most lines are Codex records: the error names the one that is not.
    const codex = '{"timestamp":"t","type":"session_meta","payload":{"id":"a"}}\n{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[]}}\n[1]\n'
    expect(() => parseAgentSession(codex)).toThrow(/line 3 \(an array\) is not a Codex record/)
  })

  it('wrong arguments are TypeErrors naming the argument', async () => {
    expect(() => parseAgentSession(42 as any)).toThrow(/^text must be a string/)
    expect(() => parseAgentSession('', { name: 3 } as any)).toThrow(/^options\.name must be a string/)
    await expect(readAgentSession(undefined as any)).rejects.toThrow(/^file must be a path/)
    await expect(readAgentSession('')).rejects.toThrow(/^file must be a path, got an empty string/)
    await expect(readAgentSession(join(dir, 'missing.jsonl'), { name: 3 } as any)).rejects.toThrow(/^options\.name must be a string/)
    await expect(readAgentSession(join(dir, 'missing.jsonl'), { name: 'my file' })).rejects.toThrow(/^cannot read my file: no such file$/)
  })

  it.skipIf(!present)('any mangling of a real file reads as a session or throws the invalid-argument TypeError, nothing else', () => {
    const texts = cases.map((c) => c.made.text.split('\n').filter((l) => l !== ''))
    const value = fc.oneof(fc.jsonValue(), fc.constant(null), fc.record({ type: fc.constantFrom('message', 'session', 'compaction', 'user', 'assistant', 'response_item', 'event_msg', 'compacted'), message: fc.jsonValue(), payload: fc.jsonValue(), id: fc.string(), parentId: fc.option(fc.string()) }))
    const edit = fc.oneof(
      fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), value }),
      fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('cut' as const), at: fc.nat(), length: fc.nat(200) }),
      fc.record({ kind: fc.constant('field' as const), at: fc.nat(), key: fc.constantFrom('message', 'content', 'payload', 'parentId', 'parentUuid', 'uuid', 'id', 'usage', 'role', 'type', 'firstKeptEntryId'), value }),
    )
    fc.assert(
      fc.property(fc.nat(texts.length - 1), fc.array(edit, { minLength: 1, maxLength: 6 }), (which, edits) => {
        const lines = [...texts[which]]
        for (const e of edits) {
          const at = e.at % lines.length
          if (e.kind === 'replace') lines[at] = JSON.stringify(e.value)
          else if (e.kind === 'drop' && lines.length > 1) lines.splice(at, 1)
          else if (e.kind === 'cut') lines[at] = lines[at].slice(0, e.length)
          else if (e.kind === 'field') {
            try {
              const entry = JSON.parse(lines[at])
              const target = e.key in (entry.message ?? {}) ? entry.message : e.key in (entry.payload ?? {}) ? entry.payload : entry
              if (target && typeof target === 'object') target[e.key] = e.value
              lines[at] = JSON.stringify(entry)
            } catch {
              // a line cut before stays cut
            }
          }
        }
        try {
          const session = parseAgentSession(lines.join('\n'))
          expect(Array.isArray(session.messages) && Array.isArray(session.usage) && Array.isArray(session.notes)).toBe(true)
        } catch (error: any) {
          expect(error).toBeInstanceOf(TypeError)
          expect(error.code, error.stack).toBe('ERR_CONTEXT_COMPACT_INVALID_ARGUMENT')
        }
      }),
      { numRuns: 300, seed: 38 },
    )
  })
})
