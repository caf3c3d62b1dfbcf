// context-compact/openai-agents: CompactingSession in the OpenAI Agents SDK's own run loop
// (@openai/agents: Agent, run(), tool(), MemorySession), the model being the SDK's own test
// double (ScriptedModel of @openai/agents-core/testing, a `Model`: getResponse /
// getStreamedResponse), which records every request the runner sends.
//
// The conversations start from a real Claude Code session (../shared/data/real) turned into the
// SDK's items; the model reads a file each turn and reports as usage what each request holds.
// Checked on every request after a compaction: the library's checkMessages, an independent
// pairing check (agents-items.ts), the SDK's own item schema, the window; and that
// restoreItems() gives back every item ever appended, exactly.

import { spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { Agent, MemorySession, protocol, run, setTracingDisabled, tool, Usage, type AgentInputItem, type Session } from '@openai/agents'
import { ScriptedModel, assistantMessage, functionCall, modelResponder, type RecordedModelCall } from '@openai/agents-core/testing'
import { beforeAll, describe, expect, it } from 'vitest'

import { checkMessages, countTokens, restoreMessages } from '../../index'
import { CompactingSession, recallTool, type SessionCompactEvent } from '../../adapters/openai-agents'
import { startOpenAIServer } from '../../benchmark/servers/openai-chat.mjs'
import { FileSession, pairingProblems, realAgentItems } from '../support/agents-items'
import { tempDir } from '../support/helpers'

const ROOT = join(__dirname, '..', '..')
const REAL = join(ROOT, '..', 'shared', 'data', 'real')
const FORMAT = { format: 'openai-responses' as const }
const tokensOf = (items: readonly unknown[]) => countTokens(items as any[], FORMAT)

beforeAll(() => setTracingDisabled(true))

type Item = AgentInputItem & Record<string, any>

/** Source code of about `tokens` tokens, with a marker naming the file. */
function source(path: string, tokens: number): string {
  const lines = [`// ${path}: MARKER-${path.replace(/\W/g, '_')}`]
  for (let i = 0; lines.join('\n').length < tokens * 4; i++) {
    lines.push(`export function step${i}(input: number[]): number { return input.reduce((a, b) => a + b * ${i}, 0) }`)
  }
  return lines.join('\n')
}

const readFile = (tokens: number) =>
  tool({
    name: 'read_file',
    description: 'Reads a file of the repository.',
    strict: false,
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
    execute: async (input: any) => source(String(input.path), tokens),
  })

interface Script {
  /** Function calls per run before the answer (one a turn). */
  reads?: number
  /** Decides a turn's output instead (for the recall tool). */
  turn?: (input: Item[], call: number) => AgentInputItem[] | null
}

/**
 * A coding agent on the SDK's ScriptedModel: each run it calls read_file `reads` times, one
 * call a turn, then answers. Each response reports as usage what the request holds (items and
 * instructions, counted), as a real model's would.
 */
function scriptedAgent(script: Script, tools: any[], label = (n: number) => `n${n}`) {
  const reads = script.reads ?? 3
  let calls = 0
  const respond = (call: RecordedModelCall) => {
    calls += 1
    const input = call.request.input as Item[]
    const billed = tokensOf(input) + tokensOf([{ role: 'system', content: String(call.request.systemInstructions ?? '') }])
    const usage = new Usage({ requests: 1, inputTokens: billed, outputTokens: 25, totalTokens: billed + 25 })
    const custom = script.turn?.(input, calls)
    if (custom) return { usage, output: custom, responseId: `resp_${calls}` }
    let lastUser = input.length - 1
    while (lastUser >= 0 && input[lastUser].role !== 'user') lastUser--
    const turns = input.slice(lastUser + 1).filter((i) => i.type === 'function_call').length
    const output =
      turns < reads
        ? [functionCall('read_file', { path: `src/${label(calls)}.ts` }, { callId: `call_${label(calls)}` })]
        : [assistantMessage(`Read ${turns} files; the change is in place.`)]
    return { usage, output, responseId: `resp_${calls}` }
  }
  const model = new ScriptedModel(Array.from({ length: 1000 }, () => modelResponder(respond)))
  const agent = new Agent({ name: 'coder', instructions: 'You are a careful coding agent.', model, tools })
  return { agent, model }
}

/** The session the runner talks to, recording every item it appends (the ground truth). */
function recording<S extends object>(session: S): { session: S; appended: Item[] } {
  const appended: Item[] = []
  const proxy = new Proxy(session, {
    get(target, key) {
      // The runner appends through addItemsWithCompactionOwnership when the session has it.
      if (key === 'addItems' || key === 'addItemsWithCompactionOwnership') {
        return async (items: Item[], ...rest: unknown[]) => {
          appended.push(...structuredClone(items))
          return (target as any)[key](items, ...rest)
        }
      }
      const value = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  return { session: proxy, appended }
}

/** What a request of the runner must be, whatever was compacted before it. */
function expectValidRequest(input: Item[], where: string) {
  expect(checkMessages(input, FORMAT), where).toEqual([])
  expect(pairingProblems(input), where).toEqual([])
  for (const [i, item] of input.entries()) {
    const parsed = protocol.ModelItem.safeParse(item)
    expect(parsed.success, `${where}, item ${i}: ${JSON.stringify(item).slice(0, 200)}`).toBe(true)
  }
}

const isSummary = (item: Item) =>
  item.type === 'message' && item.role === 'user' && Array.isArray(item.content) && String(item.content[0]?.text ?? '').startsWith('[context-compact] ')

/** The first items of a real session adding up to about `tokens` tokens. */
function realPrefix(file: string, tokens: number): Item[] {
  const items = realAgentItems(join(REAL, file)) as Item[]
  let end = 0
  while (end < items.length && tokensOf(items.slice(0, end + 1)) < tokens) end++
  // End on a whole turn: after the last result of the calls before it.
  while (end < items.length && items[end].type === 'function_call_result') end++
  const prefix = items.slice(0, end)
  expect(pairingProblems(prefix)).toEqual([])
  return prefix
}

describe('CompactingSession in the Agents SDK run loop', () => {
  it('40+ model calls from a real session: each compaction at a crossing, every later request valid and within the window, restore exact', async () => {
    const initial = realPrefix('cc-spotter-fum-post.json', 20_000)
    const contextTokenLimit = 40_000
    const thresholdRatio = 0.7
    const threshold = contextTokenLimit * thresholdRatio
    const events: SessionCompactEvent[] = []
    const summaries: number[] = []
    const outputDir = tempDir('cc-agents-')
    const compacting = new CompactingSession(new MemorySession({ sessionId: 'real-fum', initialItems: initial }), {
      contextTokenLimit,
      thresholdRatio,
      outputDir,
      summarizer: async (request) => {
        summaries.push(request.messages.length)
        return `The user and the agent worked through ${request.messages.length} items: compiled, tested, read files.`
      },
      onEvent: (event) => events.push(event),
    })
    const { session, appended } = recording(compacting)
    const { agent, model } = scriptedAgent({ reads: 3 }, [readFile(1500)])
    // Requests the model received after each compaction (how many compactions preceded them).
    const seen: { compactions: number; input: Item[] }[] = []
    const completed = () => events.filter((e) => e.type === 'completed').length
    const results: { compacted: boolean; tokens: number; threshold: number; source: string | undefined }[] = []
    let calls = 0
    for (let runIndex = 0; runIndex < 12; runIndex++) {
      const before = completed()
      const result = await run(agent, `Task ${runIndex}: carry on with the refactoring of the parser.`, { session })
      expect(result.finalOutput).toMatch(/Read 3 files/)
      for (const call of model.calls.slice(calls)) seen.push({ compactions: before, input: call.request.input as Item[] })
      calls = model.calls.length
      if (completed() > before) {
        const last = compacting.lastResult!
        results.push({ compacted: last.compacted, tokens: last.tokens, threshold: last.threshold, source: last.measure?.source })
      }
    }
    expect(model.calls.length).toBeGreaterThanOrEqual(40)

    // Crossed at least twice; each compaction at a crossing, measured from the run's usage, with
    // one summary call each.
    expect(results.length).toBeGreaterThanOrEqual(2)
    for (const r of results) {
      expect(r.compacted).toBe(true)
      expect(r.tokens).toBeGreaterThanOrEqual(r.threshold)
      expect(r.threshold).toBe(threshold)
      expect(r.source).toBe('usage')
    }
    expect(summaries).toHaveLength(results.length)
    const types = events.map((e) => e.type)
    expect(types.filter((t) => t === 'started')).toHaveLength(results.length)
    expect(types.filter((t) => t === 'failed')).toEqual([])
    types.forEach((t, i) => {
      if (t === 'started') expect(types[i - 1]).toBe('token_limit_exceeded')
    })

    // Every request after a compaction: valid, the SDK's items, within the window; the first
    // one after each compaction is below the threshold.
    const after = seen.filter((s) => s.compactions > 0)
    expect(after.length).toBeGreaterThanOrEqual(30)
    for (const [i, s] of seen.entries()) {
      const tokens = tokensOf(s.input)
      expect(tokens, `request ${i}`).toBeLessThan(contextTokenLimit)
      if (s.compactions === 0) continue
      expectValidRequest(s.input, `request ${i}`)
      expect(s.input.some(isSummary), `request ${i} holds the summary`).toBe(true)
      if (seen[i - 1].compactions < s.compactions) expect(tokens, `first request after compaction ${s.compactions}`).toBeLessThan(threshold)
    }

    // The session holds the SDK's items: the summary is a user message item.
    const items = (await compacting.getItems()) as Item[]
    const summary = items.find(isSummary)!
    expect(protocol.ModelItem.safeParse(summary).success).toBe(true)
    expect(summary.content[0].text).toContain('Recall: archive=')
    expect(checkMessages(items, FORMAT)).toEqual([])

    // Everything ever appended comes back, exactly.
    const all = [...initial, ...appended]
    expect(await compacting.restoreItems()).toEqual(all)
    expect(await restoreMessages(items, { outputDir, sessionId: 'real-fum', ...FORMAT })).toEqual(all)
  }, 120_000)

  it('any Session: a file-backed one, streamed runs, and a second process that picks it up', async () => {
    const dir = tempDir('cc-agents-file-')
    const path = join(dir, 'session.jsonl')
    const initial = realPrefix('cc-spotter-4te-pre.json', 6_000)
    writeFileSync(path, initial.map((item) => `${JSON.stringify(item)}\n`).join(''))
    const options = { contextTokenLimit: 16_000, thresholdRatio: 0.75, outputDir: join(dir, 'archives'), summarizer: async () => 'Earlier: files read, tests run.' }
    const file = new FileSession(path, 'user:42/chat 7')
    const compacting = new CompactingSession(file, options)
    const { session, appended } = recording(compacting)
    const { agent, model } = scriptedAgent({ reads: 3 }, [readFile(900)], (n) => `a${n}`)
    let compactions = 0
    let validated = 0
    for (let i = 0; i < 6; i++) {
      const stream = await run(agent, `Streamed task ${i}`, { session, stream: true })
      for await (const _event of stream) {
        // drained
      }
      await stream.completed
      expect(stream.finalOutput).toMatch(/Read 3 files/)
      if (compacting.lastResult?.compacted) compactions++
    }
    expect(compactions).toBeGreaterThanOrEqual(2)
    // The runner's context reached the file session (one per run), its own writes included.
    expect(file.contexts.size).toBe(6)
    for (const call of model.calls) {
      const input = call.request.input as Item[]
      if (!input.some(isSummary)) continue
      expectValidRequest(input, `call ${call.index}`)
      validated++
    }
    expect(validated).toBeGreaterThan(0)
    // The file holds the compacted list, and the archives are the session's own (a digest of
    // its id, which has characters an archive name cannot).
    const inFile = readFileSync(path, 'utf8').trim().split('\n').map((line) => JSON.parse(line))
    expect(inFile).toEqual(await compacting.getItems())
    expect(inFile.some(isSummary)).toBe(true)
    const archived = compacting.lastResult!.archivePath!
    expect(archived).toMatch(/archives\/session-[0-9a-f]{32}\/compact-/)
    expect(await compacting.restoreItems()).toEqual([...initial, ...appended])

    // Another process: a new session object on the same file restores the same items, and the
    // conversation goes on from the compacted list.
    const again = new CompactingSession(new FileSession(path, 'user:42/chat 7'), options)
    expect(await again.restoreItems()).toEqual([...initial, ...appended])
    const next = await run(agent, 'One more task', { session: again })
    expect(next.finalOutput).toMatch(/Read 3 files/)
    expectValidRequest(model.calls.at(-1)!.request.input as Item[], 'after reopening')
  }, 120_000)

  it('the recall tool is an SDK function tool: the agent reads back what a summary replaced', async () => {
    const outputDir = tempDir('cc-agents-recall-')
    const compacting = new CompactingSession(new MemorySession({ sessionId: 'recall' }), {
      contextTokenLimit: 12_000,
      thresholdRatio: 0.6,
      outputDir,
      summarizer: async () => 'Files were read.',
    })
    let recallOutput: string | null = null
    const recallLine = /Recall: archive=(\S+) from=(\d+) to=(\d+)/
    const turn = (input: Item[], call: number) => {
      const result = input.at(-1)
      if (result?.type === 'function_call_result' && result.name === 'recall') {
        recallOutput = typeof result.output === 'string' ? result.output : JSON.stringify(result.output)
        return [assistantMessage('Found it.')]
      }
      const summary = input.find(isSummary)
      const last = input.at(-1)
      if (summary && last?.role === 'user' && String(last.content).startsWith('Recall')) {
        const [, archive, from, to] = recallLine.exec((summary as any).content[0].text)!
        return [functionCall('recall', { archive, from: Number(from), to: Number(to) }, { callId: `recall_${call}` })]
      }
      return null
    }
    const { agent } = scriptedAgent({ reads: 2, turn }, [readFile(1200), compacting.recallTool()], (n) => `r${n}`)
    for (let i = 0; i < 4 && !compacting.lastResult?.compacted; i++) await run(agent, `Task ${i}`, { session: compacting })
    expect(compacting.lastResult?.compacted).toBe(true)
    const answer = await run(agent, 'Recall what src/r1.ts said', { session: compacting })
    expect(answer.finalOutput).toBe('Found it.')
    expect(recallOutput).toContain('MARKER-src_r1_ts')
    // The standalone form reads the same archives.
    const standalone = recallTool({ outputDir, sessionId: 'recall' })
    expect(standalone.type).toBe('function')
    expect(standalone.name).toBe('recall')
  })

  it("the summary calls' usage is added to the run's usage (an OpenAI-compatible provider)", async () => {
    const server = await startOpenAIServer()
    try {
      const compacting = new CompactingSession(new MemorySession({ sessionId: 'usage' }), {
        contextTokenLimit: 10_000,
        thresholdRatio: 0.6,
        outputDir: tempDir('cc-agents-usage-'),
        provider: 'openai',
        apiKey: 'test-key',
        baseUrl: server.url,
        model: 'gpt-4.1-mini',
      })
      const { agent } = scriptedAgent({ reads: 3 }, [readFile(1500)])
      let result
      for (let i = 0; i < 4; i++) {
        result = await run(agent, `Task ${i}`, { session: compacting })
        if (compacting.lastResult?.compacted) break
      }
      const last = compacting.lastResult!
      expect(last.compacted).toBe(true)
      const summaryUsage = last.summaryUsage!
      expect(summaryUsage.requests).toBeGreaterThanOrEqual(1)
      const entries = result!.state.usage.requestUsageEntries ?? []
      const entry = entries.find((e) => e.endpoint === 'context-compact')!
      expect(entry).toBeDefined()
      expect(entry.inputTokens).toBe(summaryUsage.inputTokens + summaryUsage.cacheReadTokens + summaryUsage.cacheWriteTokens)
      expect(entry.outputTokens).toBe(summaryUsage.outputTokens)
      expect(server.requests.at(-1)!.body.model).toBe('gpt-4.1-mini')
    } finally {
      await server.close()
    }
  })
})

describe('CompactingSession with the rest of the SDK', () => {
  it('the summary can be written by an agent of the SDK itself', async () => {
    const prompts: string[] = []
    const summaryModel = new ScriptedModel([
      modelResponder((call) => {
        prompts.push(String((call.request.input as Item[])[0]?.content ?? ''))
        return [assistantMessage('## Goal\nRefactor the parser (written by the summary agent).')]
      }),
    ])
    const summarizer = new Agent({ name: 'summarizer', instructions: 'Follow the instructions exactly.', model: summaryModel })
    const initial = realPrefix('cc-spotter-gqc-pre.json', 9_000)
    const session = new CompactingSession(new MemorySession({ initialItems: initial }), {
      contextTokenLimit: 8_000,
      outputDir: tempDir('cc-agents-sdk-summary-'),
      summarizer: async ({ prompt }) => String((await run(summarizer, prompt)).finalOutput),
    })
    const result = await session.compact()
    expect(result.error).toBeNull()
    expect(result.compacted).toBe(true)
    expect(prompts).toHaveLength(1)
    const summary = (await session.getItems()).find((item) => isSummary(item as Item)) as Item
    expect(summary.content[0].text).toContain('written by the summary agent')
    summaryModel.assertComplete()
  })

  it('background: the summary is prepared before the crossing, and the run that crosses does not wait for it', async () => {
    const events: string[] = []
    let summaries = 0
    const session = new CompactingSession(new MemorySession({ sessionId: 'background' }), {
      contextTokenLimit: 12_000,
      thresholdRatio: 0.7,
      background: { atRatio: 0.5 },
      outputDir: tempDir('cc-agents-background-'),
      summarizer: async () => {
        summaries++
        return 'Prepared while the agent worked: files read.'
      },
      onEvent: (event) => events.push(event.type),
    })
    const { agent } = scriptedAgent({ reads: 2 }, [readFile(1000)], (n) => `b${n}`)
    for (let i = 0; i < 8 && !session.lastResult?.compacted; i++) await run(agent, `Task ${i}`, { session })
    const last = session.lastResult!
    expect(last.compacted).toBe(true)
    expect(events.indexOf('background_started')).toBeGreaterThanOrEqual(0)
    expect(events.indexOf('background_started')).toBeLessThan(events.indexOf('started'))
    expect(events).toContain('background_applied')
    expect(last.background?.state).toBe('applied')
    expect(summaries).toBe(1)
    await session.close()
  })

  it('a wrapped session that compacts by itself still does, first, and both usages reach the run', async () => {
    const calls: unknown[][] = []
    class SelfCompacting extends MemorySession {
      async runCompaction(...args: unknown[]) {
        calls.push(args)
        return { usage: { inputTokens: 100, outputTokens: 10, totalTokens: 110, inputTokensDetails: {}, outputTokensDetails: {}, endpoint: 'responses.compact' } }
      }
    }
    const server = await startOpenAIServer()
    try {
      const session = new CompactingSession(new SelfCompacting({ initialItems: realPrefix('cc-spotter-gqc-pre.json', 9_000) }), {
        contextTokenLimit: 8_000,
        outputDir: tempDir('cc-agents-inner-'),
        provider: 'openai',
        apiKey: 'test-key',
        baseUrl: server.url,
      })
      const { agent } = scriptedAgent({ reads: 0 }, [])
      const result = await run(agent, 'Go on', { session })
      expect(calls).toHaveLength(1)
      expect(session.lastResult!.compacted).toBe(true)
      const summary = session.lastResult!.summaryUsage!
      const entry = result.state.usage.requestUsageEntries!.at(-1)!
      expect(entry.inputTokens).toBe(100 + summary.inputTokens + summary.cacheReadTokens + summary.cacheWriteTokens)
      expect(entry.outputTokens).toBe(10 + summary.outputTokens)
    } finally {
      await server.close()
    }
  })
})

/** A session over a real history already past the threshold: the first run's end compacts it. */
function overThreshold(tokens = 9_000) {
  return realPrefix('cc-spotter-gqc-pre.json', tokens)
}

describe('CompactingSession never throws into the agent', () => {
  const small = { contextTokenLimit: 8_000, thresholdRatio: 0.8 }

  it('summarizer down: the run completes, the items are unchanged, lastResult and the event say why', async () => {
    const initial = overThreshold()
    const events: SessionCompactEvent[] = []
    const compacting = new CompactingSession(new MemorySession({ initialItems: initial }), {
      ...small,
      outputDir: tempDir('cc-agents-down-'),
      // Over the window: the failure itself is under test, so the summary written without an
      // LLM (summaryFallback, summary-fallback.test.ts) is off.
      summaryFallback: 'none',
      maxRetries: 1,
      retryBaseDelayMs: 1,
      summarizer: async () => {
        throw new Error('503 upstream unavailable')
      },
      onEvent: (event) => events.push(event),
    })
    const { session, appended } = recording(compacting)
    const { agent } = scriptedAgent({ reads: 1 }, [readFile(300)])
    const result = await run(agent, 'Go on', { session })
    expect(result.finalOutput).toMatch(/Read 1 files/)
    expect(compacting.lastResult!.compacted).toBe(false)
    expect(compacting.lastResult!.error!.code).toBe('SUMMARIZER_ERROR')
    expect(compacting.lastResult!.error!.attempts).toBe(2)
    expect(events.some((e) => e.type === 'failed')).toBe(true)
    expect(await compacting.getItems()).toEqual([...initial, ...appended])
  })

  it('archive directory unwritable: with requireArchive nothing changes; without it the compaction goes on and says so', async () => {
    const dir = tempDir('cc-agents-unwritable-')
    writeFileSync(join(dir, 'a-file'), 'not a directory')
    const outputDir = join(dir, 'a-file', 'archives')
    const initial = overThreshold()
    const strict = new CompactingSession(new MemorySession({ initialItems: initial }), {
      ...small,
      outputDir,
      requireArchive: true,
      summarizer: async () => 'summary',
    })
    const { agent } = scriptedAgent({ reads: 1 }, [readFile(300)])
    const first = await run(agent, 'Go on', { session: strict })
    expect(first.finalOutput).toMatch(/Read 1 files/)
    expect(strict.lastResult!.compacted).toBe(false)
    expect(strict.lastResult!.error!.code).toBe('ARCHIVE_FAILED')
    expect((await strict.getItems()).slice(0, initial.length)).toEqual(initial)

    const lenient = new CompactingSession(new MemorySession({ initialItems: initial }), { ...small, outputDir, summarizer: async () => 'summary' })
    const second = await run(agent, 'Go on', { session: lenient })
    expect(second.finalOutput).toMatch(/Read 1 files/)
    expect(lenient.lastResult!.compacted).toBe(true)
    expect(lenient.lastResult!.archivePath).toBeNull()
    expect(lenient.lastResult!.warnings.join('\n')).toMatch(/archive/i)
    expectValidRequest((await lenient.getItems()) as Item[], 'compacted without archive')
  })

  it('an aborted run aborts the compaction in progress: the run settles at once and the items are unchanged', async () => {
    const initial = overThreshold()
    const controller = new AbortController()
    let summarizing = false
    const compacting = new CompactingSession(new MemorySession({ initialItems: initial }), {
      ...small,
      outputDir: tempDir('cc-agents-abort-'),
      summarizer: () => {
        summarizing = true
        // The user presses stop while the summary is being written; it would never end.
        setTimeout(() => controller.abort(), 10)
        return new Promise<string>(() => {})
      },
    })
    compacting.signal = controller.signal
    const { session, appended } = recording(compacting)
    const { agent } = scriptedAgent({ reads: 1 }, [readFile(300)])
    const started = Date.now()
    const outcome = await run(agent, 'Go on', { session, signal: controller.signal }).then(
      () => 'completed',
      (error) => (error instanceof Error ? error.name : String(error)),
    )
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(summarizing).toBe(true)
    expect(['completed', 'AbortError']).toContain(outcome)
    expect(compacting.lastResult!.compacted).toBe(false)
    expect(compacting.lastResult!.error!.code).toBe('ABORTED')
    expect(await compacting.getItems()).toEqual([...initial, ...appended])
    // While the signal is aborted, no compaction starts.
    expect(await compacting.runCompaction()).toBeNull()
  })

  it('the wrapped session fails to write the compaction: its items are put back', async () => {
    const initial = overThreshold()
    class Flaky extends MemorySession {
      // Without history transactions: the compaction is written by clearSession and addItems.
      override applyHistoryTransaction = undefined as any
      failNextAdd = false
      override async addItems(items: AgentInputItem[]) {
        if (this.failNextAdd) {
          this.failNextAdd = false
          throw new Error('disk full')
        }
        return super.addItems(items)
      }
    }
    const inner = new Flaky({ initialItems: initial })
    const logs: { level: string; message: string }[] = []
    let writes = 0
    const compacting = new CompactingSession(inner, {
      ...small,
      outputDir: tempDir('cc-agents-flaky-'),
      summarizer: async () => {
        // The first compaction's write fails.
        if (writes++ === 0) inner.failNextAdd = true
        return 'summary'
      },
      onLog: (entry) => logs.push(entry),
    })
    const { session, appended } = recording(compacting)
    const { agent } = scriptedAgent({ reads: 1 }, [readFile(300)])
    const result = await run(agent, 'Go on', { session })
    expect(result.finalOutput).toMatch(/Read 1 files/)
    expect(compacting.lastResult!.error!.code).toBe('SESSION_WRITE_FAILED')
    expect(compacting.lastResult!.error!.message).toMatch(/disk full.*put back/)
    expect(await inner.getItems()).toEqual([...initial, ...appended])
    expect(logs.some((entry) => entry.level === 'warn' && /disk full/.test(entry.message))).toBe(true)
    // The next compaction goes through.
    const done = await compacting.compact()
    expect(done.error, JSON.stringify(done.error)).toBeNull()
    expect(done.compacted).toBe(true)
    expect(await compacting.restoreItems()).toEqual([...initial, ...appended])
  })

  it('the history changes while the summary is written: removed items stop the write, added ones follow it', async () => {
    const initial = overThreshold()
    const inner = new MemorySession({ initialItems: initial })
    let during: (() => Promise<unknown>) | null = null
    const compacting = new CompactingSession(inner, {
      ...small,
      outputDir: tempDir('cc-agents-changed-'),
      summarizer: async () => {
        await during?.()
        return 'summary'
      },
    })
    // Removed behind its back: nothing is written.
    during = () => inner.popItem()
    const changed = await compacting.compact()
    expect(changed.compacted).toBe(false)
    expect(changed.error!.code).toBe('SESSION_CHANGED')
    expect(await inner.getItems()).toEqual(initial.slice(0, -1))
    // Added through the session: kept after the compacted list.
    const late: AgentInputItem = { role: 'user', content: 'Sent while the summary was written' }
    during = () => compacting.addItems([late])
    const done = await compacting.compact()
    expect(done.compacted).toBe(true)
    const items = await inner.getItems()
    expect(items.at(-1)).toEqual(late)
    expect(items.slice(0, -1)).toEqual(done.messages)
    expect(await compacting.restoreItems()).toEqual([...initial.slice(0, -1), late])
  })

  it('a read that overlaps an append sees the session as the append leaves it, once', async () => {
    // A store that acknowledges a write some time after the write is visible to readers.
    class SlowAck extends MemorySession {
      override async addItems(items: AgentInputItem[]) {
        await super.addItems(items)
        await new Promise((resolve) => setTimeout(resolve, 30))
      }
    }
    const initial = overThreshold()
    const inner = new SlowAck({ initialItems: initial })
    const compacting = new CompactingSession(inner, { ...small, outputDir: tempDir('cc-agents-race-'), summarizer: async () => 'summary' })
    await compacting.getItems()
    const late: AgentInputItem = { role: 'user', content: 'appended while the runner read' }
    const [, read] = await Promise.all([compacting.addItems([late]), new Promise((resolve) => setTimeout(resolve, 5)).then(() => compacting.getItems())])
    expect(read).toEqual([...initial, late])
    const done = await compacting.compact({ force: true })
    expect(done.error).toBeNull()
    expect(done.compacted).toBe(true)
    expect(await compacting.restoreItems()).toEqual([...initial, late])
  })

  it('misuse is a TypeError when the session is made, naming what is wrong', () => {
    const inner = new MemorySession()
    expect(() => new CompactingSession({} as Session)).toThrow(/getSessionId, getItems, addItems, popItem, clearSession/)
    expect(() => new CompactingSession(new CompactingSession(inner) as Session)).toThrow(/already a CompactingSession/)
    expect(() => new CompactingSession(inner, { format: 'gemini' } as any)).toThrow(/options\.format/)
    expect(() => new CompactingSession(inner, { usage: { input_tokens: 5 } } as any)).toThrow(/options\.usage/)
    expect(() => new CompactingSession(inner, { contextTokenLimit: -1 })).toThrow(TypeError)
    expect(() => new CompactingSession(inner, { runUsage: 'yes' } as any)).toThrow(/runUsage/)
    const session = new CompactingSession(inner)
    expect(session.lastResult).toBeNull()
    expect(() => {
      session.signal = 'stop' as any
    }).toThrow(/AbortSignal/)
  })
})

describe('CompactingSession types', () => {
  it('tsc --strict --exactOptionalPropertyTypes: a Session and a compaction-aware session without a cast', async () => {
    // Without skipLibCheck, so that adapters/openai-agents.d.ts and index.d.ts are checked too:
    // the only errors allowed are in the SDK's own declarations, some of which do not compile
    // under exactOptionalPropertyTypes. (Asynchronous: a compilation of minutes must not block
    // the test worker.)
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [tsc, '--noEmit', '--skipLibCheck', 'false', '-p', join('__test__', 'types', 'openai-agents')], { cwd: ROOT })
      let text = ''
      child.stdout.setEncoding('utf8').on('data', (chunk) => (text += chunk))
      child.stderr.setEncoding('utf8').on('data', (chunk) => (text += chunk))
      child.on('error', reject)
      child.on('close', (exit) => resolve({ code: exit, output: text }))
    })
    const ours = output.split('\n').filter((line) => /error TS/.test(line) && !line.startsWith('node_modules/'))
    expect(ours).toEqual([])
    // It compiled: cleanly, or with errors in the SDK's declarations only.
    expect(code === 0 || /^node_modules\/.*error TS/m.test(output), output).toBe(true)
  }, 600_000)
})

/** A MemorySession (which has the SDK's own atomic applyHistoryTransaction) recording each transaction it is sent. */
class TransactionSession extends MemorySession {
  transactions: { operationId: string; transaction: any }[] = []
  /** Runs before the store applies a transaction (another writer, a lost acknowledgement, …). */
  before: ((call: number) => Promise<void>) | null = null
  after: ((call: number) => Promise<void>) | null = null
  override async applyHistoryTransaction(args: any) {
    const call = this.transactions.push(structuredClone(args))
    await this.before?.(call)
    await super.applyHistoryTransaction(args)
    await this.after?.(call)
  }
}

const textOf = (items: readonly unknown[]) => JSON.stringify(items)

describe("CompactingSession keeps the Agents runner's rules", () => {
  const small = { contextTokenLimit: 8_000, thresholdRatio: 0.8 }

  /** The real history with a user note the input filter hides, put between two whole turns. */
  function withHiddenNote(marker: string) {
    const initial = overThreshold()
    let at = Math.floor(initial.length / 2)
    while (at < initial.length && (initial[at] as Item).type === 'function_call_result') at++
    const note: AgentInputItem = { type: 'message', role: 'user', content: `${marker}: a note for the operators only` }
    return { items: [...initial.slice(0, at), note, ...initial.slice(at)], at, note }
  }

  const hide = (marker: string) => async ({ modelData }: { modelData: { input: AgentInputItem[]; instructions?: string } }) => ({
    ...modelData,
    input: modelData.input.filter((item) => !textOf([item]).includes(marker)),
  })

  it('a callModelInputFilter hides an item: it is never summarized and stays where it was; the part the model saw is compacted, in one transaction', async () => {
    const marker = 'HIDDEN-NOTE-7f3a'
    const { items: initial, at, note } = withHiddenNote(marker)
    const inner = new TransactionSession({ sessionId: 'filtered', initialItems: initial })
    const summarized: unknown[][] = []
    const compacting = new CompactingSession(inner, {
      ...small,
      outputDir: tempDir('cc-agents-filter-'),
      summarizer: async (request) => {
        summarized.push(request.messages)
        return 'What was done so far.'
      },
    })
    const { session, appended } = recording(compacting)
    const { agent, model } = scriptedAgent({ reads: 1 }, [readFile(300)])
    const result = await run(agent, 'Go on', { session, callModelInputFilter: hide(marker) })
    expect(result.finalOutput).toMatch(/Read 1 files/)
    // The model never saw the note.
    for (const call of model.calls ?? []) expect(textOf((call as any).request.input)).not.toContain(marker)
    const last = compacting.lastResult!
    expect(last.error, JSON.stringify(last.error)).toBeNull()
    expect(last.compacted).toBe(true)
    expect(summarized.length).toBeGreaterThan(0)
    for (const messages of summarized) expect(textOf(messages)).not.toContain(marker)
    // The note and everything after it are as they were, after the compacted part.
    const stored = (await inner.getItems()) as Item[]
    const kept = [note, ...initial.slice(at + 1), ...appended]
    expect(last.warnings.some((w) => w.startsWith(`${kept.length} items the model had not seen`)), JSON.stringify(last.warnings)).toBe(true)
    expect(stored.slice(-kept.length)).toEqual(kept)
    expect(stored.filter((item) => textOf([item]).includes(marker))).toHaveLength(1)
    expect(stored.some(isSummary)).toBe(true)
    expect(stored.length).toBeLessThan(initial.length + appended.length)
    // Written as one replace_suffix transaction of the whole history read.
    expect(inner.transactions).toHaveLength(1)
    const [tx] = inner.transactions
    expect(tx.transaction.type).toBe('replace_suffix')
    expect(tx.transaction.expectedSuffix).toEqual([...initial, ...appended])
    expect(tx.transaction.replacement).toEqual(stored)
    expect(tx.operationId).toMatch(/^context-compact-[0-9a-f]{40}$/)
    // Sent again, the same transaction is acknowledged and applied no second time.
    await inner.applyHistoryTransaction(tx)
    expect(await inner.getItems()).toEqual(stored)
    expect(await compacting.restoreItems()).toEqual([...initial, ...appended])
    // The next run reads the compacted history, the note still out of the model's sight.
    const next = await run(agent, 'And now?', { session, callModelInputFilter: hide(marker) })
    expect(next.finalOutput).toMatch(/Read 1 files/)
  })

  it("a wrapped session with its own compaction ownership: the runner's receipt and model exchange reach it through the session", async () => {
    const initial = overThreshold()
    const issued: object[] = []
    const appendedWith: (object | null)[] = []
    const compactedWith: { ownership: unknown; exchange: any }[] = []
    class OwningSession extends TransactionSession {
      async getItemsWithCompactionOwnership() {
        const ownership = { receipt: issued.length }
        issued.push(ownership)
        return { items: await this.getItems(), ownership }
      }
      async addItemsWithCompactionOwnership(items: AgentInputItem[], ownership: object | null) {
        appendedWith.push(ownership)
        await this.addItems(items)
      }
      async runCompaction(_args?: unknown, _context?: unknown, ownership?: unknown, exchange?: any) {
        compactedWith.push({ ownership, exchange })
        return null
      }
    }
    const inner = new OwningSession({ initialItems: initial })
    const compacting = new CompactingSession(inner, { ...small, outputDir: tempDir('cc-agents-owning-'), summarizer: async () => 'summary' })
    const { agent, model } = scriptedAgent({ reads: 1 }, [readFile(300)])
    await run(agent, 'Go on', { session: compacting })
    expect(issued).toHaveLength(1)
    expect(appendedWith.length).toBeGreaterThan(0)
    for (const receipt of appendedWith) expect(receipt).toBe(issued[0])
    expect(compactedWith).toHaveLength(1)
    expect(compactedWith[0].ownership).toBe(issued[0])
    // The exchange is the latest model call's input and output.
    const lastCall = model.calls.at(-1)!
    expect(compactedWith[0].exchange.items.slice(0, (lastCall.request.input as unknown[]).length)).toEqual(lastCall.request.input)
    // Its own compaction declined; the session's went on, through the transaction.
    expect(compacting.lastResult!.compacted).toBe(true)
    expect(inner.transactions).toHaveLength(1)
  })

  it('items a real model answers with (ids on calls and reasoning, in provider data too) count as seen though the session stores them without', async () => {
    const initial = overThreshold()
    const inner = new TransactionSession({ initialItems: initial })
    const compacting = new CompactingSession(inner, { ...small, outputDir: tempDir('cc-agents-ids-'), summarizer: async () => 'summary' })
    const { agent } = scriptedAgent(
      {
        reads: 1,
        turn: (_input, call) =>
          call === 1
            ? ([
                { type: 'reasoning', id: 'rs_1', content: [], providerData: { type: 'reasoning', id: 'rs_1', encrypted_content: 'gAAAAB-opaque' } },
                { type: 'function_call', id: 'fc_1', callId: 'call_ids_1', name: 'read_file', arguments: '{"path":"src/a.ts"}', status: 'completed', providerData: { type: 'function_call', id: 'fc_1' } },
              ] as AgentInputItem[])
            : null,
      },
      [readFile(300)],
    )
    await run(agent, 'Go on', { session: compacting })
    const last = compacting.lastResult!
    expect(last.error, JSON.stringify(last.error)).toBeNull()
    expect(last.compacted).toBe(true)
    expect(last.warnings.filter((w) => /had not seen/.test(w))).toEqual([])
  })

  it('a filter that hides the start of the history: the compaction is skipped, nothing changes', async () => {
    const initial = overThreshold()
    const first = textOf([initial[0]])
    const inner = new TransactionSession({ initialItems: initial })
    let summaries = 0
    const compacting = new CompactingSession(inner, {
      ...small,
      outputDir: tempDir('cc-agents-filter-start-'),
      summarizer: async () => {
        summaries++
        return 'summary'
      },
    })
    const { session, appended } = recording(compacting)
    const { agent } = scriptedAgent({ reads: 1 }, [readFile(300)])
    const dropFirst = async ({ modelData }: { modelData: { input: AgentInputItem[]; instructions?: string } }) => ({
      ...modelData,
      input: modelData.input.filter((item) => textOf([item]) !== first),
    })
    await run(agent, 'Go on', { session, callModelInputFilter: dropFirst })
    expect(summaries).toBe(0)
    expect(compacting.lastResult!.compacted).toBe(false)
    expect(compacting.lastResult!.error!.code).toBe('NOT_SEEN')
    expect(inner.transactions).toHaveLength(0)
    expect(await inner.getItems()).toEqual([...initial, ...appended])
    // Without the filter the same history compacts.
    await run(agent, 'Go on', { session })
    expect(compacting.lastResult!.compacted).toBe(true)
  })

  it('items after the latest model exchange are kept; a receipt another writer outdated, or no model exchange, skips the compaction', async () => {
    const initial = overThreshold()
    const inner = new MemorySession({ initialItems: initial })
    const summarized: unknown[][] = []
    const compacting = new CompactingSession(inner, {
      ...small,
      outputDir: tempDir('cc-agents-exchange-'),
      summarizer: async (request) => {
        summarized.push(request.messages)
        return 'summary'
      },
    })
    // As the runner does: read with a receipt, append, then runCompaction(args, context, receipt, exchange).
    const { items, ownership } = await compacting.getItemsWithCompactionOwnership()
    const exchange = { items: structuredClone(items) }
    const late: AgentInputItem[] = [{ type: 'message', role: 'user', content: 'LATE-1f2e: written after the model answered' }]
    await compacting.addItemsWithCompactionOwnership(late, ownership)
    // Someone else's write outdates the receipt.
    const other = await compacting.getItemsWithCompactionOwnership()
    await compacting.addItems([{ type: 'message', role: 'user', content: 'another writer' }])
    expect(await compacting.runCompaction(undefined, undefined, other.ownership, { items: structuredClone(other.items) })).toBeNull()
    expect(compacting.lastResult!.error!.code).toBe('NOT_OWNED')
    expect(summarized).toHaveLength(0)
    await compacting.popItem()
    // No successful model exchange: skipped too.
    const fresh = await compacting.getItemsWithCompactionOwnership()
    await compacting.runCompaction(undefined, undefined, fresh.ownership, undefined)
    expect(compacting.lastResult!.error!.code).toBe('NOT_SEEN')
    expect(await inner.getItems()).toEqual([...initial, ...late])
    // The model saw everything but the late item: it is kept, not summarized.
    const again = await compacting.getItemsWithCompactionOwnership()
    await compacting.runCompaction(undefined, undefined, again.ownership, exchange)
    expect(compacting.lastResult!.compacted).toBe(true)
    for (const messages of summarized) expect(textOf(messages)).not.toContain('LATE-1f2e')
    const stored = await inner.getItems()
    expect(stored.at(-1)).toEqual(late[0])
    expect(stored.filter((item) => textOf([item]).includes('LATE-1f2e'))).toHaveLength(1)
    expect(await compacting.restoreItems()).toEqual([...initial, ...late])
    // Called without a receipt (a compaction of the caller's own) it compacts the whole history.
    const forced = new CompactingSession(new MemorySession({ initialItems: [...initial, ...late] }), {
      ...small,
      outputDir: tempDir('cc-agents-exchange-manual-'),
      summarizer: async () => 'summary',
    })
    await forced.runCompaction({ force: true })
    expect(forced.lastResult!.compacted).toBe(true)
  })

  it('the operationId is the same for the same history replaced (whatever the summary), and differs for another', async () => {
    const initial = overThreshold()
    const ids: string[] = []
    for (const [sessionId, items] of [
      ['same', initial],
      ['same', initial],
      ['other', initial],
      ['same', initial.slice(0, -2)],
    ] as const) {
      const inner = new TransactionSession({ sessionId, initialItems: items })
      const compacting = new CompactingSession(inner, { ...small, outputDir: tempDir('cc-agents-opid-'), summarizer: async () => 'summary' })
      const done = await compacting.compact({ force: true })
      expect(done.compacted).toBe(true)
      expect(inner.transactions).toHaveLength(1)
      ids.push(inner.transactions[0].operationId)
    }
    expect(ids[1]).toBe(ids[0])
    expect(ids[2]).not.toBe(ids[0])
    expect(ids[3]).not.toBe(ids[0])
  })

  it('a lost acknowledgement: the retry reuses the operationId and the store applies the swap once', async () => {
    const initial = overThreshold()
    const inner = new TransactionSession({ initialItems: initial })
    inner.after = async (call) => {
      // Applied, but the answer never arrived.
      if (call === 1) throw new Error('connection reset')
    }
    const compacting = new CompactingSession(inner, { ...small, outputDir: tempDir('cc-agents-lostack-'), summarizer: async () => 'summary' })
    const done = await compacting.compact({ force: true })
    expect(done.error, JSON.stringify(done.error)).toBeNull()
    expect(done.compacted).toBe(true)
    expect(inner.transactions).toHaveLength(2)
    expect(inner.transactions[1]).toEqual(inner.transactions[0])
    expect(await inner.getItems()).toEqual(done.messages)
    expect(await compacting.restoreItems()).toEqual(initial)
  })

  it('a store that fails without applying: nothing changes, and the next compaction of the same history reuses the operationId', async () => {
    const initial = overThreshold()
    const inner = new TransactionSession({ initialItems: initial })
    inner.before = async (call) => {
      if (call <= 2) throw new Error('database is locked')
    }
    const compacting = new CompactingSession(inner, { ...small, outputDir: tempDir('cc-agents-locked-'), summarizer: async () => 'summary' })
    const failed = await compacting.compact({ force: true })
    expect(failed.compacted).toBe(false)
    expect(failed.error!.code).toBe('SESSION_WRITE_FAILED')
    expect(failed.error!.message).toMatch(/database is locked.*unchanged/)
    expect(await inner.getItems()).toEqual(initial)
    const done = await compacting.compact({ force: true })
    expect(done.compacted).toBe(true)
    expect(inner.transactions).toHaveLength(3)
    expect(new Set(inner.transactions.map((tx) => tx.operationId)).size).toBe(1)
    expect(await inner.getItems()).toEqual(done.messages)
    expect(await compacting.restoreItems()).toEqual(initial)
  })

  it('someone appends between the read and the swap: the store refuses the suffix, nothing changes, the compaction is skipped with a warning', async () => {
    const initial = overThreshold()
    const inner = new TransactionSession({ initialItems: initial })
    const late: AgentInputItem = { type: 'message', role: 'user', content: 'appended by another process' }
    inner.before = async (call) => {
      if (call === 1) await inner.addItems([late])
    }
    const logs: { level: string; message: string }[] = []
    const compacting = new CompactingSession(inner, {
      ...small,
      outputDir: tempDir('cc-agents-mismatch-'),
      summarizer: async () => 'summary',
      onLog: (entry) => logs.push(entry),
    })
    const done = await compacting.compact({ force: true })
    expect(done.compacted).toBe(false)
    expect(done.error!.code).toBe('SESSION_CHANGED')
    expect(done.error!.message).toMatch(/no longer matches/)
    expect(await inner.getItems()).toEqual([...initial, late])
    expect(done.messages).toEqual(initial)
    expect(logs.some((entry) => entry.level === 'warn' && /SESSION_CHANGED|changed before the compaction/.test(entry.message))).toBe(true)
    // Both sends were the same transaction, refused alike.
    expect(inner.transactions).toHaveLength(2)
    expect(inner.transactions[1]).toEqual(inner.transactions[0])
    // The next compaction reads the history as it is and goes through.
    const next = await compacting.compact({ force: true })
    expect(next.compacted).toBe(true)
    expect(await compacting.restoreItems()).toEqual([...initial, late])
  })
})
