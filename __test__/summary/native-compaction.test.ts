// provider: 'anthropic-compaction' against a local server that speaks the documented request and
// response shapes of Anthropic's on-demand compaction (beta compact-2026-09-04), including the
// failures: the signed block placed first byte for byte, the ledger beside it, restore exact,
// kept thinking kept, and the fallback to our own summary remembered per model.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'

import { checkMessages, compactMessages, Compactor, restoreMessages, type Message } from '../../index'
import { otherWarnings, tempDir } from '../support/helpers'

type Mode = 'ok' | 'unavailable' | 'null-content' | 'overloaded-then-ok'
let mode: Mode = 'ok'
let server: Server
let baseUrl: string
const seen: { headers: Record<string, any>; body: any }[] = []

// A block as the API returns it, with the fields in the API's order (and characters a careless
// re-serialization would change).
const BLOCK = { type: 'compaction', content: 'Summary of the conversation: the agent fixed bugs 0–9 in src/ (é, 漢).', signature: 'EuYBCkQYAiJA/x+y=z/AbC==' }

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      const parsed = JSON.parse(body)
      seen.push({ headers: req.headers, body: parsed })
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(value))
      }
      const invalid = (message: string) => json(400, { type: 'error', error: { type: 'invalid_request_error', message }, request_id: 'req_invalid' })
      // The Messages API takes the system prompt as the top-level `system` parameter (a string
      // or an array of text blocks); a system role inside `messages` is a 400.
      const misplaced = (parsed.messages ?? []).findIndex((m: any) => m.role !== 'user' && m.role !== 'assistant')
      if (misplaced >= 0) return invalid(`messages.${misplaced}.role: Input should be 'user' or 'assistant'`)
      const system = parsed.system
      const textBlocks = Array.isArray(system) && system.every((b: any) => b && b.type === 'text' && typeof b.text === 'string' && b.text !== '')
      if (system !== undefined && typeof system !== 'string' && !textBlocks) return invalid('system: Input should be a valid string or a list of text blocks')
      if (!parsed.compaction) {
        // The plain Messages API: our own summary (the fallback).
        return json(200, { id: 'msg_2', type: 'message', role: 'assistant', model: parsed.model, content: [{ type: 'text', text: '## Goal\nfallback summary' }], stop_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: 5 } })
      }
      if (mode === 'unavailable') {
        return json(400, { type: 'error', error: { type: 'invalid_request_error', message: 'compaction: this model does not support on-demand compaction' } })
      }
      if (mode === 'overloaded-then-ok' && seen.filter((s) => s.body.compaction).length === 1) {
        return json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded', details: { error_code: 'compaction_unavailable' } } })
      }
      const content = mode === 'null-content' ? [{ type: 'compaction', content: null, signature: 'EuYB' }] : [BLOCK]
      return json(200, { id: 'msg_1', type: 'message', role: 'assistant', model: parsed.model, content, stop_reason: 'compaction', usage: { input_tokens: 0, output_tokens: 0, iterations: [{ type: 'compaction', input_tokens: 144, output_tokens: 276 }] } })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
beforeEach(() => {
  seen.length = 0
  mode = 'ok'
})

function session(turns: number): Message[] {
  const m: Message[] = []
  for (let t = 0; t < turns; t++) {
    m.push({ role: 'user', content: `fix bug ${t} in src/mod${t}.ts ${'please '.repeat(40)}` })
    m.push({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: `bug ${t}`, signature: `sig${t}+/=` },
        { type: 'tool_use', id: `t${t}`, name: 'Edit', input: { file_path: `src/mod${t}.ts`, old_string: 'a', new_string: 'b' } },
      ],
    } as Message)
    m.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${t}`, content: 'ok '.repeat(60) }] })
  }
  return m
}

const options = (dir: string) => ({
  provider: 'anthropic-compaction' as const,
  apiKey: 'sk-ant-test-key',
  baseUrl,
  model: 'claude-opus-5-5',
  contextTokenLimit: 2000,
  force: true,
  outputDir: dir,
  sessionId: 'n',
  retryBaseDelayMs: 1,
  system: 'You are a coding agent.',
  tools: [{ name: 'Edit', description: 'edit a file', input_schema: { type: 'object' } }],
  customInstructions: 'Keep file paths.',
})

describe("provider: 'anthropic-compaction'", () => {
  it('sends the documented request and puts the signed block first, exactly as returned', async () => {
    const dir = tempDir()
    const messages = session(12)
    const before = JSON.stringify(messages)
    const result = await compactMessages(messages, options(dir))
    expect(result.compacted).toBe(true)
    expect(result.provider).toBe('anthropic-compaction')
    expect(result.model).toBe('claude-opus-5-5')
    const [request] = seen
    expect(request.headers['anthropic-beta']).toBe('compact-2026-09-04')
    expect(request.headers['x-api-key']).toBe('sk-ant-test-key')
    expect(request.body.compaction.type).toBe('summarize')
    expect(request.body.compaction.instructions).toContain('Keep file paths.')
    expect(request.body.system).toBe('You are a coding agent.')
    expect(request.body.tools).toEqual(options(dir).tools)
    // The messages summarized are the caller's, byte for byte.
    expect(JSON.stringify(request.body.messages)).toBe(JSON.stringify(messages.slice(0, request.body.messages.length)))
    // The block comes first, as returned; the ledger is beside it.
    const first = result.messages[0] as any
    expect(first.role).toBe('assistant')
    expect(JSON.stringify(first.content[0])).toBe(JSON.stringify(BLOCK))
    expect(Object.keys(first.content[0])).toEqual(['type', 'content', 'signature'])
    expect(first.content[1].type).toBe('text')
    expect(first.content[1].text).toMatch(/^\[context-compact\] Earlier conversation \(\d+ messages\) was compacted by Anthropic/)
    expect(first.content[1].text).toContain('src/mod0.ts')
    expect(result.summary).toContain(BLOCK.content)
    // Kept turns keep their thinking (the API accepts it after its own summary).
    expect(result.transformations).toEqual([])
    expect(result.messages.slice(1).every((m) => messages.includes(m))).toBe(true)
    expect(checkMessages(result.messages)).toEqual([])
    expect(JSON.stringify(await restoreMessages(result.messages, { outputDir: dir, sessionId: 'n' }))).toBe(before)
    expect(JSON.stringify(result)).not.toContain('sk-ant-test-key')
  })

  it("the user's messages of the middle are beside the block, verbatim, and carried into the next compaction", async () => {
    const dir = tempDir()
    const messages = session(12)
    // userMessagesMaxTokens is a cap inside its quarter of the summary budget: room for it.
    const opts = { ...options(dir), contextTokenLimit: 8000, summaryBudgetTokens: 12_000, userMessagesMaxTokens: 3000 }
    const asked = (list: Message[]) => list.filter((m) => m.role === 'user' && typeof m.content === 'string').map((m) => m.content as string)
    /** The section beside the block holds `texts`, in this order. */
    const expectInOrder = (text: string, texts: string[]) => {
      const section = text.slice(text.indexOf('## User messages (verbatim)'))
      let at = 0
      for (const t of texts) {
        const found = section.indexOf(`characters]\n${t}`, at)
        expect(found, t).toBeGreaterThan(-1)
        at = found + t.length
      }
    }
    const once = await compactMessages(messages, opts)
    expect(once.provider).toBe('anthropic-compaction')
    expect(once.warnings).toEqual([])
    const first = asked(messages.slice(0, once.stats.compactedMessageCount))
    expect(first.length).toBeGreaterThan(3)
    expectInOrder((once.messages[0] as any).content[1].text, first)
    // More turns; the next compaction's middle holds the native summary message.
    const grown = [...once.messages, ...session(20).slice(36)]
    const twice = await compactMessages(grown, opts)
    expect(twice.provider).toBe('anthropic-compaction')
    const second = asked(grown.slice(1, twice.stats.compactedMessageCount))
    expectInOrder((twice.messages[0] as any).content[1].text, [...first, ...second])
    expect(JSON.stringify(await restoreMessages(twice.messages, { outputDir: dir, sessionId: 'n' }))).toBe(
      JSON.stringify([...messages, ...session(20).slice(36)]),
    )
  })

  it('a compaction_unavailable 529 is retried', async () => {
    mode = 'overloaded-then-ok'
    const result = await compactMessages(session(12), options(tempDir()))
    expect(result.provider).toBe('anthropic-compaction')
    expect(seen.filter((s) => s.body.compaction)).toHaveLength(2)
  })

  it('a failed compaction (content: null) falls back to our own summary for this call', async () => {
    mode = 'null-content'
    const result = await compactMessages(session(12), { ...options(tempDir()), maxRetries: 0 })
    expect(result.compacted).toBe(true)
    expect(result.provider).toBe('anthropic')
    expect(result.summary).toContain('fallback summary')
    expect(result.warnings.some((w) => w.includes('anthropic-compaction was not used'))).toBe(true)
    expect(result.compactionUnavailable).toBeNull()
  })

  it('unavailable: falls back, says so, and a Compactor does not try that model again', async () => {
    mode = 'unavailable'
    const dir = tempDir()
    // The same list twice: without checkpoints the second is a compaction of its own.
    const compactor = new Compactor({ ...options(dir), checkpoints: false })
    const first = await compactor.compact(session(12))
    expect(first.compacted).toBe(true)
    expect(first.provider).toBe('anthropic')
    expect(first.compactionUnavailable).toBe('claude-opus-5-5')
    expect(first.warnings.join('\n')).toMatch(/anthropic-compaction was not used \(unavailable for claude-opus-5-5/)
    // Under auto, our own summary means the kept turns' thinking is stripped.
    expect(first.transformations.length).toBeGreaterThan(0)
    seen.length = 0
    const second = await compactor.compact(session(12))
    expect(second.provider).toBe('anthropic')
    expect(seen.some((s) => s.body.compaction)).toBe(false)
    expect(second.warnings.join('\n')).toMatch(/found unavailable for claude-opus-5-5 earlier/)
  })

  it('a list that begins with a system message: the system prompt is the `system` parameter, the block first after it', async () => {
    const dir = tempDir()
    const { system: _, ...withoutSystem } = options(dir)
    const messages: Message[] = [{ role: 'system', content: 'You are a coding agent.' }, ...session(12)]
    const before = JSON.stringify(messages)
    const result = await compactMessages(messages, withoutSystem)
    expect(otherWarnings(result.warnings)).toEqual([])
    expect(result.provider).toBe('anthropic-compaction')
    const requests = seen.filter((s) => s.body.compaction)
    expect(requests).toHaveLength(1)
    const [request] = requests
    // The list's system message is sent as the request's system prompt, not as a message.
    expect(request.body.system).toBe('You are a coding agent.')
    expect(request.body.messages.every((m: any) => m.role === 'user' || m.role === 'assistant')).toBe(true)
    expect(JSON.stringify(request.body.messages)).toBe(JSON.stringify(messages.slice(1, 1 + request.body.messages.length)))
    // The system message stays first in the list (the caller sends it as `system`), the signed
    // block first among the messages after it, exactly as returned.
    expect(result.messages[0]).toBe(messages[0])
    const block = result.messages[1] as any
    expect(block.role).toBe('assistant')
    expect(JSON.stringify(block.content[0])).toBe(JSON.stringify(BLOCK))
    const header = /^\[context-compact\] Earlier conversation \((\d+) messages\) was compacted by Anthropic/.exec(block.content[1].text)
    expect(Number(header![1])).toBe(request.body.messages.length)
    expect(result.stats.compactedMessageCount).toBe(request.body.messages.length)
    expect(result.stats.compactedMessageCount + result.stats.retainedMessageCount + result.stats.removedMessageCount).toBe(messages.length)
    expect(result.messages.slice(2).every((m) => messages.includes(m))).toBe(true)
    expect(checkMessages(result.messages)).toEqual([])
    expect(JSON.stringify(await restoreMessages(result.messages, { outputDir: dir, sessionId: 'n' }))).toBe(before)
  })

  it('several leading system messages and a system option: one system parameter, the option first', async () => {
    const cached = [{ type: 'text' as const, text: 'Tools: Edit.', cache_control: { type: 'ephemeral' as const } }]
    const messages: Message[] = [
      { role: 'system', content: 'Work in src/ only.' },
      { role: 'system', content: cached } as Message,
      ...session(12),
    ]
    const result = await compactMessages(messages, options(tempDir()))
    expect(result.provider).toBe('anthropic-compaction')
    const [request] = seen.filter((s) => s.body.compaction)
    expect(request.body.system).toEqual([
      { type: 'text', text: 'You are a coding agent.' },
      { type: 'text', text: 'Work in src/ only.' },
      ...cached,
    ])
    expect(result.messages.slice(0, 2)).toEqual(messages.slice(0, 2))
    expect((result.messages[2] as any).content[0]).toEqual(BLOCK)
    expect(checkMessages(result.messages)).toEqual([])
  })

  it('a list that begins with a system message still falls back for the reasons the API gives', async () => {
    mode = 'unavailable'
    const messages: Message[] = [{ role: 'system', content: 'You are a coding agent.' }, ...session(12)]
    const result = await compactMessages(messages, options(tempDir()))
    expect(result.provider).toBe('anthropic')
    expect(result.compactionUnavailable).toBe('claude-opus-5-5')
    expect(result.warnings.join('\n')).toMatch(/anthropic-compaction was not used \(unavailable for claude-opus-5-5/)
    expect(result.warnings.join('\n')).not.toMatch(/system/)
    // The request was made, with the system prompt where the API wants it.
    const [request] = seen.filter((s) => s.body.compaction)
    expect(request.body.messages.some((m: any) => m.role === 'system')).toBe(false)
  })

  it('the local server answers a system message inside `messages` as the API does: 400 invalid_request_error', async () => {
    const response = await fetch(`${baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-opus-5-5', max_tokens: 10, messages: [{ role: 'system', content: 's' }, { role: 'user', content: 'hi' }], compaction: { type: 'summarize' } }),
    })
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: "messages.0.role: Input should be 'user' or 'assistant'" } })
  })
})
