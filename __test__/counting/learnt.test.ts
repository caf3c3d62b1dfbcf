// Windows and factors learnt and kept (issue 35): a refusal that states the model's maximum sets
// the window, usage sets the billed-to-counted factor, both are kept per model in the store
// (`learnt-models.json`) and used by a new Compactor or compactMessages call on the same store
// before it has any usage; overflow recovery compacts to the stated maximum and shrinks the tail
// rather than answer NOTHING_TO_COMPACT.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { startOpenAIServer } from '../../benchmark/servers/openai-chat.mjs'
import { compactMessages, Compactor, countTokens, type ArchiveStore, type Message } from '../../index'
import { tempDir, textOfTokens } from '../support/helpers'

const ROOT = join(__dirname, '..', '..')
const RECORD = 'learnt-models.json'

// `limit × ratio` rounded up, as the library computes budgets.
const budget = (limit: number, ratio: number) => Math.ceil(Math.round(limit * ratio * 1e6) / 1e6)

// Distinct text of about `k` o200k tokens (so that turns differ and summaries have something).
function words(tag: string, k: number): string {
  return `${tag}: ` + textOfTokens(k)
}

describe('a self-hosted model with a small context under an unknown name', () => {
  // An OpenAI-compatible server (vLLM) running a model with a 16K context that counts 1.2× o200k:
  // over its window it answers 400 with vLLM's own error body and text.
  const WINDOW = 16_384
  const FACTOR = 1.2
  const MAX_TOKENS = 512
  const MODEL = 'acme-local-7b'
  let server: Awaited<ReturnType<typeof startOpenAIServer>>
  beforeAll(async () => {
    server = await startOpenAIServer({
      respond: (body: any, { usage }: any) => {
        const counted = Math.ceil(usage.prompt_tokens * FACTOR)
        const completion = body.max_tokens ?? 0
        if (counted + completion > WINDOW) {
          return {
            status: 400,
            body: {
              object: 'error',
              message: `This model's maximum context length is ${WINDOW} tokens. However, you requested ${counted + completion} tokens (${counted} in the messages, ${completion} in the completion). Please reduce the length of the messages or completion.`,
              type: 'BadRequestError',
              param: null,
              code: 400,
            },
          }
        }
        return { content: words(`reply ${body.messages.length}`, 150) }
      },
    })
  })
  afterAll(() => server.close())

  async function send(messages: Message[]) {
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer test-key', 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages, max_tokens: MAX_TOKENS }),
    })
    const body: any = await response.json()
    if (response.ok) return { ok: true as const, message: body.choices[0].message as Message }
    // What the OpenAI SDK throws: the status, the body as `error`, "400 <message>".
    const error = Object.assign(new Error(`${response.status} ${body.message}`), { status: response.status, error: body })
    return { ok: false as const, error }
  }

  it('after the first refusal, no second one in 16 turns; the window is kept for the next conversation', async () => {
    const outputDir = tempDir()
    const compactor = new Compactor({ agentModel: MODEL, outputDir, provider: 'extractive' })
    let messages: Message[] = [{ role: 'system', content: 'You are a coding agent.' }]
    let refusals = 0
    let firstRefusalTurn = -1
    // Compactions the trigger fired after the refusal taught the window.
    let compactionsAfter = 0
    const stated = WINDOW - MAX_TOKENS
    for (let turn = 0; turn < 16; turn++) {
      messages = [...messages, { role: 'user', content: words(`turn ${turn}`, 1400) }]
      if (compactor.shouldCompact(messages)) {
        messages = (await compactor.compact(messages)).messages
        compactionsAfter += 1
      }
      let answer = await send(messages)
      if (!answer.ok) {
        refusals += 1
        if (firstRefusalTurn < 0) firstRefusalTurn = turn
        const result = await compactor.compact(messages, { overflow: answer.error })
        expect(result.compacted).toBe(true)
        // Compacted to the stated maximum (less the completion the request reserved).
        expect(result.threshold).toBe(budget(stated, 0.92))
        expect(compactor.measure(result.messages).tokens).toBeLessThan(result.threshold)
        messages = result.messages
        answer = await send(messages)
        if (!answer.ok) refusals += 1
      }
      if (answer.ok) messages = [...messages, answer.message]
    }
    // The 16K window was reached (the default window of an unknown model is 200K).
    expect(firstRefusalTurn).toBeGreaterThan(0)
    expect(firstRefusalTurn).toBeLessThan(12)
    expect(refusals).toBe(1)
    expect(compactionsAfter).toBeGreaterThanOrEqual(1)
    expect(compactor.calibration?.window).toBe(stated)

    // Kept in the store, with when.
    const record = JSON.parse(readFileSync(join(outputDir, RECORD), 'utf8'))
    expect(record.version).toBe(1)
    expect(record.models[MODEL].window).toBe(stated)
    expect(Date.parse(record.models[MODEL].windowLearntAt)).toBeGreaterThan(Date.now() - 600_000)

    // A new conversation on the same model and store starts with the window.
    const next = new Compactor({ agentModel: MODEL, outputDir, provider: 'extractive' })
    const short: Message[] = [{ role: 'user', content: words('hi', 100) }]
    expect(next.measure(short).threshold).toBe(budget(stated, 0.92))
    expect(next.calibration?.window).toBe(stated)
    // So does a stateless call; another model on the same store does not.
    const once = await compactMessages(short, { agentModel: MODEL, outputDir, provider: 'extractive' })
    expect(once.threshold).toBe(budget(stated, 0.92))
    expect(once.warnings).toEqual([])
    const other = new Compactor({ agentModel: 'another-model', outputDir })
    expect(other.measure(short).threshold).toBe(budget(200_000, 0.92))
  })
})

describe('the billed-to-counted factor', () => {
  const W = 100_000
  const BILLED = 1.55
  const MODEL = 'acme-large'

  // A loop on a model billing 1.55× o200k that passes usage, until its first compaction.
  const firstConversation = `
    const { Compactor, countTokens } = require(${JSON.stringify(join(ROOT, 'index.js'))})
    async function main(outputDir) {
      const c = new Compactor({ contextTokenLimit: ${W}, agentModel: ${JSON.stringify(MODEL)}, outputDir, provider: 'extractive' })
      let messages = [{ role: 'system', content: 'You are a coding agent.' }]
      for (let turn = 0; turn < 200; turn++) {
        const reply = { role: 'assistant', content: 'done ' + turn + ' ' + 'ok '.repeat(150) }
        const before = [...messages, { role: 'user', content: 'step ' + turn + ': ' + 'hello '.repeat(1800) }]
        const usage = { prompt_tokens: Math.ceil(countTokens(before) * ${BILLED}), completion_tokens: Math.ceil(countTokens([reply]) * ${BILLED}) }
        messages = [...before, reply, { role: 'user', content: 'go on' }]
        if (c.shouldCompact(messages, { usage })) {
          const result = await c.compact(messages, { usage })
          return { compacted: result.compacted, turn, slope: c.calibration.slope, warnings: result.warnings }
        }
      }
      return { compacted: false }
    }
    module.exports = main
  `

  // A new conversation at 97 % of the window as billed (63 % by o200k), no usage yet.
  function newConversation(): Message[] {
    const messages: Message[] = [{ role: 'system', content: 'You are a coding agent.' }]
    const target = Math.floor((0.97 * W) / BILLED)
    let i = 0
    while (countTokens(messages) < target - 1200) messages.push({ role: i % 2 ? 'assistant' : 'user', content: words(`m${i++}`, 1000) })
    messages.push({ role: 'user', content: textOfTokens(Math.max(1, target - countTokens(messages) - 8)) })
    return messages
  }

  function runFirst(outputDir: string) {
    const file = join(outputDir, 'first.cjs')
    writeFileSync(file, firstConversation)
    return require(file)(outputDir)
  }

  it('a second Compactor on the same store starts with the learnt factor', async () => {
    const outputDir = tempDir()
    const first = await runFirst(outputDir)
    expect(first.compacted).toBe(true)
    expect(first.slope).toBeCloseTo(BILLED, 2)
    const record = JSON.parse(readFileSync(join(outputDir, RECORD), 'utf8'))
    expect(record.models[MODEL].factor).toBeCloseTo(BILLED, 2)
    expect(typeof record.models[MODEL].factorLearntAt).toBe('string')

    const messages = newConversation()
    const raw = countTokens(messages)
    expect(raw / W).toBeGreaterThan(0.6)
    expect(raw / W).toBeLessThan(0.64)
    const fresh = new Compactor({ contextTokenLimit: W, agentModel: MODEL, outputDir })
    const m = fresh.measure(messages)
    expect(m.source).toBe('learnt')
    expect(m.factor).toBeCloseTo(BILLED, 2)
    expect(m.shouldCompact).toBe(true)
    // Without the record the same conversation is not compacted: the default estimate.
    const elsewhere = new Compactor({ contextTokenLimit: W, agentModel: MODEL, outputDir: tempDir() })
    expect(elsewhere.shouldCompact(messages)).toBe(false)
    // compactMessages on the same store compacts it too.
    const once = await compactMessages(messages, { contextTokenLimit: W, agentModel: MODEL, outputDir, provider: 'extractive' })
    expect(once.compacted).toBe(true)
    expect(once.measure?.source).toBe('learnt')
  })

  it('a loop that never compacted keeps its factor on close()', async () => {
    const outputDir = tempDir()
    const c = new Compactor({ contextTokenLimit: W, agentModel: MODEL, outputDir })
    let messages: Message[] = [{ role: 'system', content: 'You are a coding agent.' }]
    for (let turn = 0; turn < 8; turn++) {
      const before: Message[] = [...messages, { role: 'user', content: words(`step ${turn}`, 1800) }]
      const reply: Message = { role: 'assistant', content: words(`done ${turn}`, 150) }
      const usage = { prompt_tokens: Math.ceil(countTokens(before) * BILLED), completion_tokens: Math.ceil(countTokens([reply]) * BILLED) }
      messages = [...before, reply]
      expect(c.shouldCompact(messages, { usage })).toBe(false)
    }
    expect(existsSync(join(outputDir, RECORD))).toBe(false)
    await c.close()
    expect(JSON.parse(readFileSync(join(outputDir, RECORD), 'utf8')).models[MODEL].factor).toBeCloseTo(BILLED, 2)
  })

  it('across two processes on one store', async () => {
    const outputDir = tempDir()
    const file = join(outputDir, 'first.cjs')
    writeFileSync(file, firstConversation)
    const out = execFileSync(process.execPath, ['-e', `require(${JSON.stringify(file)})(${JSON.stringify(outputDir)}).then((r) => process.stdout.write(JSON.stringify(r)))`], {
      cwd: ROOT,
      encoding: 'utf8',
    })
    expect(JSON.parse(out).compacted).toBe(true)
    const fresh = new Compactor({ contextTokenLimit: W, agentModel: MODEL, outputDir })
    expect(fresh.shouldCompact(newConversation())).toBe(true)
    expect(fresh.calibration?.factor).toBeCloseTo(BILLED, 2)
  })
})

describe('the record', () => {
  const overflow = { status: 400, error: { object: 'error', message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.", type: 'BadRequestError', param: null, code: 400 } }
  const conversation = (n: number, k: number): Message[] =>
    Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: words(`m${i}`, k) }) as Message)

  it('lives in a JS archiveStore beside the sessions', async () => {
    const objects = new Map<string, Uint8Array>()
    const store: ArchiveStore = {
      async put(key, bytes, options) {
        if (options?.ifNotExists && objects.has(key)) return false
        objects.set(key, new Uint8Array(bytes))
        return true
      },
      async get(key) {
        return objects.get(key) ?? null
      },
      async list(prefix) {
        return [...objects.keys()].filter((k) => k.startsWith(prefix)).map((key) => ({ key, size: objects.get(key)!.length }))
      },
      async delete(key) {
        objects.delete(key)
      },
    }
    const messages = conversation(12, 900)
    const result = await compactMessages(messages, { agentModel: 'tiny', archiveStore: store, provider: 'extractive', overflow })
    expect(result.compacted).toBe(true)
    expect(result.threshold).toBe(budget(8192, 0.92))
    const record = JSON.parse(Buffer.from(objects.get(RECORD)!).toString('utf8'))
    expect(record.models.tiny.window).toBe(8192)
    // A Compactor on the same store uses it from its first compaction.
    const compactor = new Compactor({ agentModel: 'tiny', archiveStore: store, provider: 'extractive' })
    const next = await compactor.compact(conversation(4, 100))
    expect(next.threshold).toBe(budget(8192, 0.92))
    expect(compactor.calibration?.window).toBe(8192)
  })

  it('lives under an object-store URL (file://) beside the sessions', async () => {
    const dir = tempDir()
    const outputDir = pathToFileURL(dir).href
    const result = await compactMessages(conversation(12, 900), { agentModel: 'tiny', outputDir, sessionId: 's1', provider: 'extractive', overflow })
    expect(result.compacted).toBe(true)
    expect(JSON.parse(readFileSync(join(dir, RECORD), 'utf8')).models.tiny.window).toBe(8192)
    // Another session on the same store, in a new Compactor: read synchronously at its first call.
    const compactor = new Compactor({ agentModel: 'tiny', outputDir, sessionId: 's2' })
    expect(compactor.measure(conversation(2, 10)).threshold).toBe(budget(8192, 0.92))
  })

  it('a corrupt record is ignored with a warning, never a crash, and replaced', async () => {
    const outputDir = tempDir()
    writeFileSync(join(outputDir, RECORD), '{"version": 1, "models": ')
    const messages = conversation(12, 900)
    const result = await compactMessages(messages, { agentModel: 'tiny', outputDir, provider: 'extractive', overflow })
    expect(result.compacted).toBe(true)
    expect(result.warnings.some((w) => w.includes(RECORD) && w.includes('not valid JSON'))).toBe(true)
    expect(JSON.parse(readFileSync(join(outputDir, RECORD), 'utf8')).models.tiny.window).toBe(8192)
    // An unreadable location is a warning too.
    const compactor = new Compactor({ agentModel: 'tiny', outputDir: join(outputDir, RECORD, 'below-a-file') })
    expect(compactor.measure(messages).threshold).toBe(budget(200_000, 0.92))
  })

  it('without a model name nothing is kept', async () => {
    const outputDir = tempDir()
    await compactMessages(conversation(12, 900), { outputDir, provider: 'extractive', overflow })
    expect(existsSync(join(outputDir, RECORD))).toBe(false)
  })
})

describe('overflow recovery', () => {
  it('shrinks the tail rather than answer NOTHING_TO_COMPACT', async () => {
    // 10K tokens: the default tail budget (20K) holds all of them.
    const messages: Message[] = Array.from({ length: 8 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: words(`m${i}`, 1250) }) as Message)
    const overflow = { status: 400, code: 'context_length_exceeded', message: 'context too long' }
    const result = await compactMessages(messages, { outputDir: tempDir(), provider: 'extractive', overflow })
    expect(result.compacted).toBe(true)
    expect(result.error).toBeNull()
    expect(result.messages.length).toBeLessThan(messages.length)
    expect(countTokens(result.messages)).toBeLessThan(countTokens(messages))
  })
})
