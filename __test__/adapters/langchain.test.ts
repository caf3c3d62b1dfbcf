// context-compact/langchain (adapters/langchain/) with the real `langchain` package: agents made
// by createAgent, run by LangGraph, talking to LangChain's own fake chat model (`fakeModel` of
// @langchain/core/testing, re-exported by langchain) — the agent's model scripted to call a tool
// on every turn, another fake writing the summaries.
//
// - A real pi session (../shared/data, read at test time) is the agent's initial history, as
//   LangChain messages; the agent then runs 36 model calls with tools and crosses a small
//   window's threshold more than twice. Every request the model gets after a compaction is
//   checked: valid (the library's checkMessages and an independent pairing check), under the
//   threshold with the system prompt and the tools, made of LangChain message instances with
//   ids, and restorable to the originals exactly; one summary call per crossing; the state
//   holds the compacted list.
// - The failure paths: the summary model down, the archive directory unwritable (under a
//   regular file: tests run as root, so permissions would not stop a write), an aborted run.
// - The recall tool as a tool of createAgent, threads as sessions, the options' TypeErrors, the
//   type test (strict, exactOptionalPropertyTypes), and the example.

import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { BaseChatModel } from '@langchain/core/language_models/chat_models'
import { AIMessage, BaseMessage, getNotificationMetadata, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages'
import type { ChatResult } from '@langchain/core/outputs'
import { MemorySaver } from '@langchain/langgraph'
import { build } from 'esbuild'
import { createAgent, createMiddleware, fakeModel, tool } from 'langchain'
import { afterAll, describe, expect, it, vi } from 'vitest'

import { contextCompactMiddleware, recallTool, type LangChainCompactResult } from '../../adapters/langchain'
import { toLangChainMessages } from '../../benchmark/adapters/langchain-history.mjs'
import { checkMessages, countTokens, listArchives, restoreMessages, type CompactEvent } from '../../index'
import { tempDir } from '../support/helpers'
import { loadReplay } from '../support/pi-session'

const ROOT = join(__dirname, '..', '..')
const DATA = join(ROOT, '..', 'shared', 'data')
// The session of a Claude Opus agent refactoring a TypeScript code base (990 messages, thinking
// blocks, parallel tool calls); pi-session-large has an early aborted turn whose calls were
// never answered, so no prefix of it is a valid request.
const PI_SESSION = join(DATA, 'pi-session-before-compaction.jsonl')
const present = existsSync(PI_SESSION)
if (!present) {
  console.warn(`skipping the real-session agent run: ${PI_SESSION} is absent (shared/ must sit beside the repository)`)
}

const lc = { AIMessage, HumanMessage, SystemMessage, ToolMessage }
type Msg = BaseMessage

// ---------------------------------------------------------------------------------------------
// The agent's tools and models

/** Real files of this repository, each ≥ 6 000 characters: what read_file returns. */
const FILES = readdirSync(join(ROOT, 'crates', 'core', 'src'), { recursive: true, encoding: 'utf8' })
  .map((file) => join('crates', 'core', 'src', file))
  .concat(readdirSync(join(ROOT, 'lib'), { recursive: true, encoding: 'utf8' }).map((file) => join('lib', file)))
  .filter((file) => /\.(rs|js)$/.test(file) && statSync(join(ROOT, file)).size >= 6000)
  .sort()

/** ≈ 1 100 tokens of a real source file. */
const fileText = (path: string) => readFileSync(join(ROOT, path), 'utf8').slice(0, 4400)

const READ_FILE_SCHEMA = {
  type: 'object',
  properties: { path: { type: 'string', description: 'A path relative to the repository root' } },
  required: ['path'],
  additionalProperties: false,
} as const
const readFile = tool(async (input: { path: string }) => fileText(input.path), {
  name: 'read_file',
  description: 'Reads a file of the repository and returns its text.',
  schema: READ_FILE_SCHEMA,
})

const SYSTEM_PROMPT = 'You are a coding agent. Read the files you need, one call at a time, then answer.'

/** The tokens of the tool definitions, as the library counts `tools` (compact JSON of each). */
function toolTokens(tools: Array<{ name: string; description: string; schema: unknown }>): number {
  return tools.reduce(
    (sum, t) =>
      sum +
      countTokens([
        { role: 'user', content: JSON.stringify({ type: 'function', function: { name: t.name, description: t.description, parameters: t.schema } }) },
      ]),
    0,
  )
}

/**
 * The agent's model: LangChain's fakeModel, scripted to read `paths` one per call (then answer),
 * reporting `usage_metadata` as a provider does: input_tokens the whole request (system prompt,
 * tools and messages), output_tokens its own message.
 */
function agentModel(paths: string[], toolsTokens: number, answer = 'All files read.') {
  const model = fakeModel()
  paths.forEach((path, i) =>
    model.respond((messages: Msg[]) => {
      const message = new AIMessage({
        content: `Reading ${path}.`,
        tool_calls: [{ name: 'read_file', args: { path }, id: `call_${i + 1}`, type: 'tool_call' }],
      })
      return withUsage(message, messages, toolsTokens)
    }),
  )
  model.respond((messages: Msg[]) => withUsage(new AIMessage(answer), messages, toolsTokens))
  return model
}

function withUsage(message: AIMessage, request: Msg[], toolsTokens: number): AIMessage {
  const input = countTokens(request) + toolsTokens
  const output = countTokens([message])
  message.usage_metadata = { input_tokens: input, output_tokens: output, total_tokens: input + output }
  return message
}

/** The summary model: a fakeModel that writes a short summary naming how much it read. */
function summaryModel(count: number) {
  const model = fakeModel()
  for (let i = 0; i < count; i++) {
    model.respond((messages: Msg[]) => {
      const prompt = String(messages[messages.length - 1].content)
      const files = [...new Set(prompt.match(/(?:crates\/core\/src|lib)\/[\w/.-]+\.(?:rs|js)/g) ?? [])]
      return new AIMessage(`## Goal\nRead the repository's files.\n\n## Progress\nSummary ${i + 1}: ${files.length} files read so far.`)
    })
  }
  return model
}

// ---------------------------------------------------------------------------------------------
// Checks written out here, independent of the library

/**
 * The pairing rules of the chat APIs, for LangChain messages: every ToolMessage answers a
 * tool_call of the AIMessage it follows (other ToolMessages may sit between), each call once,
 * and every tool_call is answered before any other message.
 */
function pairingProblems(list: Msg[]): string[] {
  const problems: string[] = []
  let open: Set<string> | null = null
  list.forEach((m, i) => {
    const type = m.getType()
    if (type === 'tool') {
      const id = (m as ToolMessage).tool_call_id
      if (!open || !open.has(id)) problems.push(`[${i}] ToolMessage ${id} answers no open tool call`)
      else open.delete(id)
      return
    }
    if (open && open.size > 0) problems.push(`[${i}] ${type} message before the answers to ${[...open].join(', ')}`)
    open = type === 'ai' ? new Set(((m as AIMessage).tool_calls ?? []).map((c) => c.id as string)) : null
  })
  return problems
}

const isSummary = (m: Msg) => typeof m.content === 'string' && m.content.startsWith('[context-compact]')

// ---------------------------------------------------------------------------------------------
// The initial history: a real pi session as LangChain messages

/**
 * The first request of the pi session whose history reaches `minTokens`, as LangChain messages
 * (with the usage pi recorded on its assistant messages), valid as a request.
 */
function piHistory(minTokens: number): Msg[] {
  const replay = loadReplay(PI_SESSION)
  // The usage each assistant message was reported with: on the request after it.
  for (const request of replay.requests) {
    const usage = request.previousUsage
    if (!usage) continue
    const last = [...request.messages].reverse().find((m) => m.role === 'assistant') as Record<string, unknown> | undefined
    if (last) last.usage = usage
  }
  for (const request of replay.requests) {
    if (checkMessages(request.messages).length > 0 || countTokens(request.messages) < minTokens) continue
    const history = toLangChainMessages(request.messages, lc, { idPrefix: 'pi' }) as Msg[]
    if (checkMessages(history, { format: 'langchain' }).length === 0 && pairingProblems(history).length === 0) return history
  }
  throw new Error(`no valid request of ${minTokens} tokens in ${PI_SESSION}`)
}

// ---------------------------------------------------------------------------------------------

const cleanup: string[] = []
afterAll(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true })
})
function dirForTest(): string {
  const dir = tempDir('cc-langchain-')
  cleanup.push(dir)
  return dir
}

describe.skipIf(!present)('a createAgent run on a real session', () => {
  it('36 model calls with tools cross the threshold three times: every request valid, under the threshold, instances with ids, restorable; one summary call per crossing', async () => {
    const outputDir = dirForTest()
    const thread = 'pi-large-1'
    const limit = 24_000
    const threshold = Math.floor(limit * 0.92)
    const history = piHistory(30_000)
    const historyTokens = countTokens(history)
    expect(historyTokens).toBeGreaterThan(threshold)

    const paths = FILES.slice(0, 35)
    expect(paths).toHaveLength(35)
    const tokensOfTools = toolTokens([{ name: readFile.name, description: readFile.description, schema: READ_FILE_SCHEMA }])
    const model = agentModel(paths, tokensOfTools)
    const summaries = summaryModel(20)
    const events: CompactEvent[] = []
    const compaction = contextCompactMiddleware({ model: summaries, contextTokenLimit: limit, outputDir, onEvent: (event) => events.push(event) })

    // A middleware after it sees what the model is asked (`request.messages`) and the state
    // (`request.state.messages`): the originals are every message the state ever held, in order.
    const originals: Msg[] = []
    const seen = new Set<string>()
    const originalsAtCall: number[] = []
    const requests: Msg[][] = []
    const recorder = createMiddleware({
      name: 'Recorder',
      wrapModelCall: async (request, handler) => {
        for (const m of request.state.messages) {
          if (isSummary(m) || seen.has(m.id!)) continue
          seen.add(m.id!)
          originals.push(m)
        }
        originalsAtCall.push(originals.length)
        requests.push(request.messages)
        return handler(request)
      },
    })

    const agent = createAgent({
      model,
      tools: [readFile],
      systemPrompt: SYSTEM_PROMPT,
      middleware: [compaction, recorder],
      checkpointer: new MemorySaver(),
    })
    const task = new HumanMessage({ content: `Now read these files one by one: ${paths.join(', ')}.`, id: 'task-1' })
    const state = await agent.invoke({ messages: [...history, task] }, { configurable: { thread_id: thread }, recursionLimit: 200 })

    // The run: every scripted call made, the final answer last.
    expect(model.callCount).toBe(paths.length + 1)
    expect(state.messages[state.messages.length - 1].content).toBe('All files read.')

    // Compactions: at least two crossings (here three), each one summary call, each at the
    // threshold, each in its own archive of the thread's session.
    const completed = events.filter((e): e is Extract<CompactEvent, { type: 'completed' }> => e.type === 'completed')
    expect(completed.length).toBeGreaterThanOrEqual(3)
    expect(events.filter((e) => e.type === 'failed')).toEqual([])
    expect(summaries.callCount).toBe(completed.length)
    for (const e of events.filter((e) => e.type === 'started')) expect((e as { tokens: number }).tokens).toBeGreaterThanOrEqual(threshold)
    const archives = await listArchives(outputDir, thread)
    expect(archives).toHaveLength(completed.length)
    expect(compaction.lastResult?.sessionId).toBe(thread)

    // Every request the model got after the first compaction (the first one included).
    const calls = model.calls.map((call) => call.messages as Msg[])
    const first = calls.findIndex((messages) => messages.some(isSummary))
    expect(first).toBe(0) // the history alone is over the threshold
    let compactedRequests = 0
    for (let j = first; j < calls.length; j++) {
      const [system, ...messages] = calls[j]
      expect(system).toBeInstanceOf(SystemMessage)
      expect(system.text).toBe(SYSTEM_PROMPT)
      // What the middleware handed on is what the model got.
      expect(messages).toEqual(requests[j])
      // Valid, by the library and by the rules written out above.
      expect(checkMessages(messages, { format: 'langchain' })).toEqual([])
      expect(pairingProblems(messages)).toEqual([])
      // Under the threshold, system prompt and tools included.
      expect(countTokens(calls[j]) + tokensOfTools).toBeLessThan(threshold)
      // LangChain message instances, with ids.
      for (const m of messages) {
        expect(BaseMessage.isInstance(m)).toBe(true)
        expect([HumanMessage, AIMessage, ToolMessage].some((Class) => m instanceof Class)).toBe(true)
        expect(typeof m.id).toBe('string')
      }
      expect(new Set(messages.map((m) => m.id)).size).toBe(messages.length)
      // The originals, exactly: every message the state held up to this call.
      const restored = await restoreMessages(messages, { outputDir, sessionId: thread })
      expect(restored).toHaveLength(originalsAtCall[j])
      expect(JSON.stringify(restored)).toBe(JSON.stringify(originals.slice(0, originalsAtCall[j])))
      restored.forEach((m, i) => expect(m.constructor.name).toBe(originals[i].constructor.name))
      if (messages.some(isSummary)) compactedRequests++
    }
    expect(compactedRequests).toBe(calls.length - first)

    // The state holds the compacted list (then the last answer): far shorter than the run. The
    // summary is marked as LangChain marks a message the harness added (as
    // summarizationMiddleware marks its own); the kept messages are not.
    expect(state.messages.filter(isSummary)).toHaveLength(1)
    console.log("SUMMARY", JSON.stringify(state.messages.filter(isSummary).map((m) => [m.id, m.additional_kwargs, m.constructor.name])))
    for (const m of state.messages) expect(getNotificationMetadata(m)).toEqual(isSummary(m) ? { source: 'summarization' } : undefined)
    expect(state.messages.length).toBeLessThan(originals.length / 3)
    const restoredState = await restoreMessages(state.messages as Msg[], { outputDir, sessionId: thread })
    expect(JSON.stringify(restoredState)).toBe(JSON.stringify([...originals, state.messages[state.messages.length - 1]]))
    await compaction.close()
  })
})

describe('background', () => {
  it('the summary is prepared from the start point and swapped in at the threshold: no second summary call, the same guarantees', async () => {
    const outputDir = dirForTest()
    const events: CompactEvent[] = []
    const logs: string[] = []
    const summaries = summaryModel(10)
    const compaction = contextCompactMiddleware({
      model: summaries,
      contextTokenLimit: 14_000,
      background: { atRatio: 0.6 },
      outputDir,
      onEvent: (event) => events.push(event),
      onLog: (entry) => logs.push(`${entry.level}: ${entry.message}`),
    })
    const paths = FILES.slice(0, 24)
    const model = agentModel(paths, 0)
    const agent = createAgent({ model, tools: [readFile], systemPrompt: SYSTEM_PROMPT, middleware: [compaction] })
    const state = await agent.invoke({ messages: [new HumanMessage('Read the files.')] }, { configurable: { thread_id: 'background' }, recursionLimit: 100 })
    expect(state.messages[state.messages.length - 1].content).toBe('All files read.')

    const types = events.map((e) => e.type)
    const completed = types.filter((t) => t === 'completed').length
    expect(completed).toBeGreaterThanOrEqual(2)
    // Every compaction took the summary prepared in the background (never stale: it covered
    // exactly the messages then compacted), and no compaction asked for another one: the
    // summary model was called once per background job (the last one may still be running).
    expect(types.filter((t) => t === 'background_applied').length).toBe(completed)
    expect(types).not.toContain('background_stale')
    expect(summaries.callCount).toBeGreaterThanOrEqual(completed)
    expect(summaries.callCount).toBeLessThanOrEqual(types.filter((t) => t === 'background_started').length)
    for (const call of model.calls) {
      const messages = (call.messages as Msg[]).slice(1)
      expect(checkMessages(messages, { format: 'langchain' })).toEqual([])
      expect(pairingProblems(messages)).toEqual([])
      expect(countTokens(call.messages as Msg[])).toBeLessThan(14_000 * 0.92)
    }
    // Nothing went wrong on the way.
    expect(logs.filter((line) => /^(warn|error):/.test(line))).toEqual([])
    await compaction.close()
  })
})

describe('failure paths: the run goes on, lastResult says why', () => {
  /** A generated coding-agent history of ~12K tokens, as LangChain messages. */
  async function history(): Promise<Msg[]> {
    const { generateConversation } = await import('../../benchmark/generate.mjs')
    const conversation = generateConversation({ targetTokens: 12_000, seed: 11 }) as Array<{ role: string; content: unknown }>
    return toLangChainMessages(conversation.filter((m) => m.role !== 'system'), lc, { idPrefix: 'g' }) as Msg[]
  }

  async function runAgent(compaction: ReturnType<typeof contextCompactMiddleware>, messages: Msg[], paths: string[], signal?: AbortSignal) {
    const model = agentModel(paths, 0)
    const agent = createAgent({ model, tools: [readFile], systemPrompt: SYSTEM_PROMPT, middleware: [compaction] })
    const state = await agent.invoke(
      { messages: [...messages, new HumanMessage(`Read ${paths.join(', ')}.`)] },
      { configurable: { thread_id: 'failures' }, recursionLimit: 50, ...(signal ? { signal } : {}) },
    )
    return { model, state }
  }

  it('the summary model down: every request gets the messages unchanged, the run completes, lastResult says SUMMARIZER_ERROR', async () => {
    const outputDir = dirForTest()
    const down = fakeModel().alwaysThrow(new Error('503 Service Unavailable: the summary model is down'))
    const events: CompactEvent[] = []
    // The state grows over its window: the failure itself is under test, so the summary written
    // without an LLM over the window (summaryFallback, summary-fallback.test.ts) is off.
    const compaction = contextCompactMiddleware({ model: down, contextTokenLimit: 8000, maxRetries: 1, retryBaseDelayMs: 1, outputDir, summaryFallback: 'none', onEvent: (e) => events.push(e) })
    const start = await history()
    const { model, state } = await runAgent(compaction, start, FILES.slice(0, 3))

    expect(state.messages[state.messages.length - 1].content).toBe('All files read.')
    // No compaction: each request is the whole state, growing.
    model.calls.forEach((call, j) => {
      expect(call.messages.some(isSummary)).toBe(false)
      expect(call.messages).toHaveLength(1 + start.length + 1 + 2 * j)
    })
    const last = compaction.lastResult as LangChainCompactResult
    expect(last.compacted).toBe(false)
    expect(last.error?.code).toBe('SUMMARIZER_ERROR')
    expect(last.error?.message).toMatch(/summary model is down/)
    expect(last.messages).toHaveLength(start.length + 1 + 2 * (model.callCount - 1))
    // Two attempts (maxRetries: 1) on every step over the threshold, each reported.
    expect(down.callCount).toBe(2 * model.callCount)
    expect(events.filter((e) => e.type === 'failed')).toHaveLength(model.callCount)
    expect(await listArchives(outputDir, 'failures')).toEqual([])
  })

  it('the model’s own error is the run’s, untouched: the model is called once, nothing is reported as a compaction failure', async () => {
    const compaction = contextCompactMiddleware({ model: summaryModel(2), contextTokenLimit: 100_000, outputDir: dirForTest() })
    const failing = fakeModel().respond(new Error('429 Too Many Requests from the agent model'))
    const agent = createAgent({ model: failing, tools: [readFile], systemPrompt: SYSTEM_PROMPT, middleware: [compaction] })
    await expect(agent.invoke({ messages: [new HumanMessage('Read a file.')] }, { configurable: { thread_id: 'model-error' } })).rejects.toThrow(/429 Too Many Requests from the agent model/)
    expect(failing.callCount).toBe(1)
    expect(compaction.lastResult).toBeNull()
  })

  it('the archive directory unwritable: compaction goes on without its archive (a warning), or with requireArchive is skipped (ARCHIVE_FAILED)', async () => {
    const dir = dirForTest()
    const file = join(dir, 'not-a-directory')
    writeFileSync(file, 'a regular file')
    const outputDir = join(file, 'archives')
    const start = await history()

    const lenient = contextCompactMiddleware({ model: summaryModel(5), contextTokenLimit: 8000, outputDir })
    const first = await runAgent(lenient, start, FILES.slice(0, 2))
    expect(first.state.messages[first.state.messages.length - 1].content).toBe('All files read.')
    const compacted = lenient.lastResult as LangChainCompactResult
    expect(compacted.compacted).toBe(true)
    expect(compacted.archivePath).toBeNull()
    expect(compacted.warnings.join('\n')).toMatch(/archive/i)
    expect(first.model.calls[0].messages.some(isSummary)).toBe(true)

    const strict = contextCompactMiddleware({ model: summaryModel(5), contextTokenLimit: 8000, outputDir, requireArchive: true })
    const second = await runAgent(strict, start, FILES.slice(0, 2))
    expect(second.state.messages[second.state.messages.length - 1].content).toBe('All files read.')
    const skipped = strict.lastResult as LangChainCompactResult
    expect(skipped.compacted).toBe(false)
    expect(skipped.error?.code).toBe('ARCHIVE_FAILED')
    for (const call of second.model.calls) expect(call.messages.some(isSummary)).toBe(false)
  })

  it('the archive store failing: the run completes, lastResult says why', async () => {
    const failing = {
      put: async () => {
        throw new Error('503 from the object store')
      },
      get: async () => {
        throw new Error('503 from the object store')
      },
      list: async () => {
        throw new Error('503 from the object store')
      },
      delete: async () => {},
    }
    const start = await history()
    const strict = contextCompactMiddleware({ model: summaryModel(5), contextTokenLimit: 8000, archiveStore: failing, requireArchive: true, retryBaseDelayMs: 1 })
    const { model, state } = await runAgent(strict, start, FILES.slice(0, 2))
    expect(state.messages[state.messages.length - 1].content).toBe('All files read.')
    for (const call of model.calls) expect(call.messages.some(isSummary)).toBe(false)
    const last = strict.lastResult as LangChainCompactResult
    expect(last.compacted).toBe(false)
    expect(last.error?.code).toBe('ARCHIVE_FAILED')
    expect(last.error?.message).toMatch(/503 from the object store/)
  })

  it('an aborted run aborts the compaction in progress and its summary call; the run ends with the abort, lastResult says ABORTED', async () => {
    // A chat model that answers only when its call is aborted (then with the abort).
    let started!: () => void
    const summaryStarted = new Promise<void>((resolve) => (started = resolve))
    class HangingChatModel extends BaseChatModel {
      aborted = false
      _llmType() {
        return 'hanging'
      }
      async _generate(_messages: Msg[], options: this['ParsedCallOptions']): Promise<ChatResult> {
        started()
        const signal = options.signal
        await new Promise<void>((_, reject) => {
          if (!signal) return
          signal.addEventListener('abort', () => {
            this.aborted = true
            reject(signal.reason ?? new Error('aborted'))
          })
        })
        throw new Error('unreachable')
      }
    }
    const hanging = new HangingChatModel({})
    const compaction = contextCompactMiddleware({ model: hanging, contextTokenLimit: 8000, outputDir: dirForTest() })
    const controller = new AbortController()
    const start = await history()
    const t0 = Date.now()
    const run = runAgent(compaction, start, FILES.slice(0, 2), controller.signal)
    await summaryStarted
    controller.abort()
    await expect(run).rejects.toThrow(/abort/i)
    expect(Date.now() - t0).toBeLessThan(20_000)
    expect(hanging.aborted).toBe(true)
    const last = compaction.lastResult as LangChainCompactResult
    expect(last.compacted).toBe(false)
    expect(last.error?.code).toBe('ABORTED')
    expect(last.messages).toHaveLength(start.length + 1)
  })
})

describe('the recall tool as a tool of createAgent', () => {
  it('after a compaction the agent reads back the range its summary names, from its thread’s archive', async () => {
    const outputDir = dirForTest()
    const thread = 'recall-thread'
    const codeword = 'Remember the codeword PELICAN-42 for later.'
    const recall = recallTool({ outputDir })
    // The agent reads files; once a request carries a summary's recall line, it calls recall
    // with that line's values, then answers.
    const paths = FILES.slice(0, 12)
    const model = fakeModel()
    let recallCallId: string | null = null
    for (let i = 0; i < paths.length + 2; i++) {
      model.respond((messages: Msg[]) => {
        const line = recallCallId === null ? /Recall: archive=(compact-[0-9TZ-]+\.json) from=(\d+) to=(\d+)/.exec(messages.map((m) => String(m.content)).join('\n')) : null
        if (line) {
          recallCallId = `recall_${i}`
          return new AIMessage({ content: '', tool_calls: [{ name: 'recall', args: { archive: line[1], from: Number(line[2]), to: Number(line[3]) }, id: recallCallId, type: 'tool_call' }] })
        }
        const next = paths[i - (recallCallId === null ? 0 : 1)]
        if (next === undefined) return new AIMessage('Done.')
        return new AIMessage({ content: '', tool_calls: [{ name: 'read_file', args: { path: next }, id: `read_${i}`, type: 'tool_call' }] })
      })
    }
    const compaction = contextCompactMiddleware({ model: summaryModel(5), contextTokenLimit: 6000, outputDir })
    const agent = createAgent({ model, tools: [readFile, recall], systemPrompt: SYSTEM_PROMPT, middleware: [compaction] })
    const state = await agent.invoke({ messages: [new HumanMessage(`${codeword} Then read ${paths.join(', ')}.`)] }, { configurable: { thread_id: thread }, recursionLimit: 100 })

    expect(recallCallId).not.toBeNull()
    const answer = model.calls
      .flatMap((call) => call.messages as Msg[])
      .find((m) => m.getType() === 'tool' && (m as ToolMessage).tool_call_id === recallCallId)
    expect(answer).toBeDefined()
    // The archived first message, word for word, from this thread's session.
    expect(String(answer!.content)).toContain(codeword)
    expect(String(answer!.content)).toMatch(/Archive compact-\d{8}T\d{6}Z-1\.json, messages 0 to \d+ of \d+/)
    expect(state.messages[state.messages.length - 1].content).toBe('Done.')
    expect(compaction.lastResult?.archivePath).toContain(join(outputDir, thread))
  })
})

describe('the count cache follows the messages', () => {
  // The middleware's hooks called as createAgent calls them, step after step on one list: the
  // trigger must see every change to a message, whatever way it was made, and nothing else.
  const request = (messages: Msg[]) => ({
    model: { model: 'gpt-4o' },
    messages,
    systemPrompt: SYSTEM_PROMPT,
    systemMessage: new SystemMessage(SYSTEM_PROMPT),
    tools: [],
    state: { messages },
    runtime: { configurable: { thread_id: 'cache' } },
  })
  /** One step: the messages the model gets. */
  async function step(compaction: ReturnType<typeof contextCompactMiddleware>, messages: Msg[]): Promise<Msg[]> {
    let got: Msg[] = []
    const wrap = compaction.wrapModelCall as unknown as (request: unknown, handler: (request: { messages: Msg[] }) => Promise<AIMessage>) => Promise<unknown>
    await wrap(request(messages), async (r) => {
      got = r.messages
      return new AIMessage('ok')
    })
    return got
  }
  const big = 'The build failed again; the log says the fixture path is wrong. '.repeat(150) // ≈ 2 000 tokens

  function conversation(): Msg[] {
    const list: Msg[] = [new HumanMessage({ content: [{ type: 'text', text: 'Fix the tests.' }], id: 'u1' })]
    for (let i = 0; i < 8; i++) {
      list.push(new AIMessage({ content: `Reading f${i}.`, tool_calls: [{ name: 'read_file', args: { path: `src/f${i}.ts` }, id: `c${i}`, type: 'tool_call' }], id: `a${i}` }))
      list.push(new ToolMessage({ content: `contents of f${i}: ` + 'lorem ipsum dolor sit amet '.repeat(60), tool_call_id: `c${i}`, id: `t${i}` }))
    }
    return list
  }

  const changes: Array<[string, (list: Msg[]) => void]> = [
    ['a field reassigned on the instance (content)', (list) => ((list[2] as ToolMessage).content = `${list[2].content}${big}`)],
    ['text pushed into a content array', (list) => (list[0].content as Array<{ type: string; text: string }>).push({ type: 'text', text: big })],
    ['a tool call’s input edited in place', (list) => ((list[1] as AIMessage).tool_calls![0].args.path = big)],
    ['lc_kwargs and the instance both reassigned', (list) => {
      const m = list[4] as ToolMessage
      m.lc_kwargs.content = big
      m.content = big
    }],
    ['the message replaced by a new object with the same id', (list) => (list[6] = new ToolMessage({ content: big, tool_call_id: 'c2', id: 't2' }))],
  ]

  it.each(changes)('%s: the next step compacts', async (_, change) => {
    const list = conversation()
    const tokens = countTokens(list)
    // The threshold 1 000 tokens above the list: only the change can reach it.
    const compaction = contextCompactMiddleware({ summarizer: async () => 'Summary.', contextTokenLimit: Math.ceil((tokens + countTokens([new SystemMessage(SYSTEM_PROMPT)]) + 1000) / 0.92), outputDir: dirForTest() })
    expect((await step(compaction, list)).some(isSummary)).toBe(false)
    expect((await step(compaction, list)).some(isSummary)).toBe(false)
    change(list)
    expect(countTokens(list)).toBeGreaterThan(tokens + 1000)
    const got = await step(compaction, list)
    expect(got.some(isSummary)).toBe(true)
    // The archive holds the messages as they are now.
    const restored = await restoreMessages(got, { outputDir: compaction.lastResult!.archivePath!.replace(/\/cache\/[^/]+$/, ''), sessionId: 'cache' })
    expect(JSON.stringify(restored)).toBe(JSON.stringify(list))
  })

  it('below the threshold a step reads only the new messages through toJSON (the history is compared by the fields toJSON reads)', async () => {
    const { Serializable } = await import('@langchain/core/load/serializable')
    const history = conversation()
    const compaction = contextCompactMiddleware({ model: summaryModel(1), contextTokenLimit: 1_000_000, outputDir: dirForTest() })
    // A model that reports no usage (counting the request itself would read every message).
    const model = fakeModel()
    const paths = FILES.slice(0, 20)
    paths.forEach((path, i) => model.respond(new AIMessage({ content: '', tool_calls: [{ name: 'read_file', args: { path }, id: `r${i}`, type: 'tool_call' }] })))
    model.respond(new AIMessage('Done.'))
    const agent = createAgent({ model, tools: [readFile], systemPrompt: SYSTEM_PROMPT, middleware: [compaction] })
    const toJSON = vi.spyOn(Serializable.prototype, 'toJSON')
    try {
      const state = await agent.invoke({ messages: [...history, new HumanMessage('Read the files.')] }, { configurable: { thread_id: 'to-json' }, recursionLimit: 100 })
      expect(state.messages).toHaveLength(history.length + 1 + 2 * paths.length + 1)
      // Once per message, when it is first counted — not once per message per step (21 steps ×
      // 18 to 58 messages, each compared with its snapshot).
      expect(toJSON.mock.calls.length).toBeLessThanOrEqual(state.messages.length)
      expect(toJSON.mock.calls.length).toBeGreaterThanOrEqual(history.length)
    } finally {
      toJSON.mockRestore()
    }
  })

  it('the same messages read back as new objects (a new run of the thread) count as before: nothing compacts', async () => {
    const list = conversation()
    const tokens = countTokens(list)
    const compaction = contextCompactMiddleware({ summarizer: async () => 'Summary.', contextTokenLimit: Math.ceil((tokens + countTokens([new SystemMessage(SYSTEM_PROMPT)]) + 200) / 0.92), outputDir: dirForTest() })
    expect((await step(compaction, list)).some(isSummary)).toBe(false)
    const { mapChatMessagesToStoredMessages, mapStoredMessagesToChatMessages } = await import('@langchain/core/messages')
    const readBack = mapStoredMessagesToChatMessages(mapChatMessagesToStoredMessages(list))
    readBack.forEach((m, i) => expect(m).not.toBe(list[i]))
    expect((await step(compaction, readBack)).some(isSummary)).toBe(false)
    readBack.push(new HumanMessage({ content: big, id: 'u2' }))
    expect((await step(compaction, readBack)).some(isSummary)).toBe(true)
  })
})

describe('threads and options', () => {
  it('each thread is its own archive session (a thread id that is not a session id gets a stable one)', async () => {
    const outputDir = dirForTest()
    const compaction = contextCompactMiddleware({ model: summaryModel(10), contextTokenLimit: 5000, outputDir })
    const sessions: string[] = []
    for (const thread of ['alpha', 'user:42/chat 7']) {
      const model = agentModel(FILES.slice(0, 8), 0)
      const agent = createAgent({ model, tools: [readFile], middleware: [compaction] })
      await agent.invoke({ messages: [new HumanMessage('Read the files.')] }, { configurable: { thread_id: thread }, recursionLimit: 50 })
      const last = compaction.lastResult as LangChainCompactResult
      expect(last.compacted).toBe(true)
      sessions.push(last.sessionId)
    }
    expect(sessions[0]).toBe('alpha')
    expect(sessions[1]).toMatch(/^thread-[0-9a-f]{32}$/)
    for (const sessionId of sessions) expect((await listArchives(outputDir, sessionId)).length).toBeGreaterThanOrEqual(1)
  })

  it('a thread over two runs (a checkpointer in between): the second run crosses the threshold, restores both runs exactly', async () => {
    const outputDir = dirForTest()
    const thread = 'two-runs'
    const compaction = contextCompactMiddleware({ model: summaryModel(5), contextTokenLimit: 12_000, outputDir })
    const originals = new Map<string, Msg>()
    const recorder = createMiddleware({
      name: 'Recorder',
      wrapModelCall: async (request, handler) => {
        for (const m of request.state.messages) if (!isSummary(m) && !originals.has(m.id!)) originals.set(m.id!, m)
        return handler(request)
      },
    })
    const checkpointer = new MemorySaver()
    const run = async (paths: string[], question: string) => {
      const agent = createAgent({ model: agentModel(paths, 0), tools: [readFile], systemPrompt: SYSTEM_PROMPT, middleware: [compaction, recorder], checkpointer })
      return agent.invoke({ messages: [new HumanMessage(question)] }, { configurable: { thread_id: thread }, recursionLimit: 60 })
    }
    const first = await run(FILES.slice(0, 5), 'Read the first files.')
    expect(first.messages.some(isSummary)).toBe(false)
    expect(compaction.lastResult).toBeNull()
    const second = await run(FILES.slice(5, 12), 'Now the next ones.')
    expect(second.messages.filter(isSummary)).toHaveLength(1)
    const restored = await restoreMessages(second.messages as Msg[], { outputDir, sessionId: thread })
    const expected = [...originals.values(), second.messages[second.messages.length - 1]]
    expect(restored.map((m) => m.id)).toEqual(expected.map((m) => m.id))
    expect(JSON.stringify(restored)).toBe(JSON.stringify(expected))
    // The first run's messages as the checkpointer gave them back, the same JSON as when first seen.
    expect(restored.slice(0, first.messages.length).map((m) => JSON.stringify(m))).toEqual(first.messages.map((m) => JSON.stringify(m)))
  })

  it('invalid options are a TypeError naming the option, before any run', () => {
    const invalid: Array<[Record<string, unknown>, RegExp]> = [
      [{ trigger: { tokens: 4000 } }, /options\.trigger is summarizationMiddleware's; .*contextTokenLimit/],
      [{ keep: { messages: 20 } }, /options\.keep .*tailRetentionRatio/],
      [{ summaryPrompt: 'Summarize' }, /options\.summaryPrompt .*customInstructions/],
      [{ usage: { input_tokens: 1 } }, /options\.usage .*usage_metadata/],
      [{ system: 'You are…' }, /options\.system .*system prompt/],
      [{ format: 'openai' }, /options\.format must be 'langchain'/],
      [{ model: 42 }, /options\.model must be a chat model/],
      [{ model: fakeModel(), summarizer: async () => 'x' }, /options\.model .* or options\.summarizer, not both/],
      [{ maxSessions: 0 }, /options\.maxSessions must be a positive integer/],
      [{ sessionId: '../escape' }, /sessionId/],
      [{ contextTokenLimit: -5 }, /contextTokenLimit/],
    ]
    for (const [options, message] of invalid) {
      expect(() => contextCompactMiddleware(options as never), JSON.stringify(options)).toThrow(TypeError)
      expect(() => contextCompactMiddleware(options as never)).toThrow(message)
    }
    expect(() => recallTool({ sessionId: '..' })).toThrow(TypeError)
  })
})

/** Runs a command without blocking this worker (tsc takes a while on LangChain's types). */
function run(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; output: string; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), 280_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, output: stdout + stderr, stdout })
    })
  })
}

describe('types and the example', () => {
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')

  it('tsc -p __test__/types/langchain (strict, exactOptionalPropertyTypes): an element of createAgent’s middleware with no cast', async () => {
    const result = await run([tsc, '--noEmit', '-p', join('__test__', 'types', 'langchain')])
    expect(result.code, result.output).toBe(0)
  }, 300_000)

  it('adapters/langchain/index.d.ts on its own, strict and exactOptionalPropertyTypes, without skipLibCheck: no error of its own', async () => {
    const result = await run([
      tsc,
      '--noEmit',
      '--strict',
      '--exactOptionalPropertyTypes',
      '--module',
      'preserve',
      '--moduleResolution',
      'bundler',
      '--target',
      'ES2022',
      '--types',
      'node',
      join('adapters', 'langchain', 'index.d.ts'),
    ])
    // LangChain's own declarations do not all compile under exactOptionalPropertyTypes (their
    // errors are under node_modules/); ours must.
    const ours = result.output.split('\n').filter((line) => /error TS/.test(line) && !line.startsWith('node_modules/'))
    expect(ours).toEqual([])
    expect(result.output).not.toMatch(/adapters\/langchain\/index\.d\.ts\(/)
  }, 300_000)

  it('examples/langchain-middleware.ts runs against the fake models: compactions, the final answer, the originals restored', async () => {
    // Built inside the package, so that `context-compact/langchain` resolves to it.
    const outDir = mkdtempSync(join(ROOT, '.examples-build-langchain-'))
    cleanup.push(outDir)
    await build({
      entryPoints: [join(ROOT, 'examples', 'langchain-middleware.ts')],
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'esm',
      target: 'node18',
      outdir: outDir,
      outExtension: { '.js': '.mjs' },
      logLevel: 'silent',
    })
    const archives = dirForTest()
    const result = await run([join(outDir, 'langchain-middleware.mjs')], { ...process.env, EXAMPLE_OUTPUT_DIR: archives })
    expect(result.code, result.output).toBe(0)
    expect(result.stdout).toMatch(/\[compaction\] \d+ → \d+ tokens \(\d+ % saved\)/)
    const done = /done: (\d+) model calls, (\d+) compactions, (\d+) summary calls; restored (\d+) messages, identical: (\w+)/.exec(result.stdout)
    expect(done, result.stdout).not.toBeNull()
    expect(Number(done![2])).toBeGreaterThanOrEqual(2)
    expect(done![3]).toBe(done![2])
    expect(done![5]).toBe('true')
    expect(result.stdout).toContain('Final answer: ')
  }, 120_000)
})
