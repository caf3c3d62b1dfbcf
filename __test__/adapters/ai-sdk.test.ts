// context-compact/ai-sdk in real AI SDK agent loops: AI SDK 5, 6 and 7 (the `ai` package and its
// `ai-v5` / `ai-v6` aliases), each with its own mock model from `ai/test` (MockLanguageModelV2,
// V3, V4), running `generateText`, `streamText` and `ToolLoopAgent` with `prepareStep` from
// `compactionStep`. The agent's initial history is a real Claude Code session
// (../shared/data/real) in ModelMessage form, and the mock model goes on with that session's
// later tool calls, whose tools give back the recorded results. The mock bills every request from
// what it receives (the library's count × 1.15, plus the tool definitions), as usage in its
// version's shape, and records every prompt, which is checked: tool calls paired with their
// results (an independent check, written here from the providers' rule, and `checkMessages`), the
// billed size below the threshold, the SDK's own message schema, and `restoreMessages` giving back
// the history exactly.
import { createServer } from 'node:net'
import { execFileSync } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

import * as ai7 from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
import * as ai5 from 'ai-v5'
import { MockLanguageModelV2 } from 'ai-v5/test'
import * as ai6 from 'ai-v6'
import { MockLanguageModelV3 } from 'ai-v6/test'
import { describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { z as z3 } from 'zod/v3'

import { checkMessages, countTokens, createRecallTool, listArchives, restoreMessages, type CompactEvent, type CompactResult } from '../../index'
import { compactionStep, recallTool, type CompactionStep, type CompactionStepOptions } from '../../adapters/ai-sdk/index'
import { loadReplay, REAL, type ReplaySession, type ScriptStep } from '../support/ai-sdk-session'
import { tempDir } from '../support/helpers'

vi.setConfig({ testTimeout: 180_000 })

const ROOT = join(__dirname, '..', '..')
const SESSION = 'cc-spotter-gqc-pre.json'
const present = existsSync(join(REAL, SESSION))
if (!present) {
  console.warn(`skipping the AI SDK agent loops: ${REAL} is absent (shared/ must sit beside the repository)`)
  it.skip(`${REAL} is absent: the AI SDK agent loops are skipped`, () => {}) // skipped only without ../shared/data: it is read at run time from beside the repository, never copied into it, and this names the skip instead of passing empty
}

type Json = Record<string, any>

interface Sdk {
  label: string
  major: 5 | 6 | 7
  ai: any
  Mock: any
}
const SDKS: Sdk[] = [
  { label: 'AI SDK 5', major: 5, ai: ai5, Mock: MockLanguageModelV2 },
  { label: 'AI SDK 6', major: 6, ai: ai6, Mock: MockLanguageModelV3 },
  { label: 'AI SDK 7', major: 7, ai: ai7, Mock: MockLanguageModelV4 },
]

const SYSTEM = 'You are a coding agent working in an Elixir/Phoenix repository. Use the tools; keep going until the task is done.'
const FINAL = 'All done: the feature is implemented and the tests pass.'
// The initial history: the session's messages before this index (about 37K tokens).
const SPLIT = 41
const LIMIT = 24_000
const THRESHOLD = LIMIT * 0.92
// What the mock bills per token the library counts: providers bill more than o200k counts.
const BILLING = 1.15

// ---------------------------------------------------------------------------------------------
// The mock model: replays a script, bills what it receives, records every call

interface ModelCall {
  prompt: Json[]
  tools: Json[]
  billed: number
}

interface ReplayOptions {
  /** The input tokens billed for a prompt (default: the library's count × BILLING, tools included). */
  bill?: (prompt: Json[], tools: Json[]) => number
  /** The usage reported, in the provider shape of the SDK version (default: usageFor, 70 % cache reads). */
  usage?: (billed: number, output: number) => Json
  providerMetadata?: (billed: number) => Json | undefined
  /** A reply that replaces the scripted one for call `n` (the script is not advanced). */
  reply?: (n: number, prompt: Json[]) => ScriptStep | undefined
}

function toolTokens(tools: Json[]): number {
  return tools.length === 0 ? 0 : countTokens([{ role: 'user', content: JSON.stringify(tools) }])
}

function defaultBill(prompt: Json[], tools: Json[]): number {
  return Math.ceil(BILLING * (countTokens(prompt as any, { format: 'ai-sdk' }) + toolTokens(tools)))
}

/** Usage in the shape each version's provider interface reports (LanguageModelV2 / V3 / V4). */
function usageFor(sdk: Sdk, billed: number, output: number, cacheRead = Math.floor(billed * 0.7)): Json {
  if (sdk.major === 5) return { inputTokens: billed, outputTokens: output, totalTokens: billed + output, cachedInputTokens: cacheRead }
  return {
    inputTokens: { total: billed, noCache: billed - cacheRead, cacheRead, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: undefined },
  }
}

const finishReason = (sdk: Sdk, reason: 'tool-calls' | 'stop') => (sdk.major === 5 ? reason : { unified: reason, raw: reason })

function replayModel(sdk: Sdk, script: ScriptStep[], options: ReplayOptions = {}) {
  const calls: ModelCall[] = []
  let scripted = 0
  const respond = (call: Json) => {
    const tools: Json[] = call.tools ?? []
    const billed = (options.bill ?? defaultBill)(call.prompt, tools)
    calls.push({ prompt: call.prompt, tools, billed })
    const step = options.reply?.(calls.length - 1, call.prompt) ?? script[scripted++]
    const parts: Json[] = step
      ? [
          ...(step.text ? [{ type: 'text', text: step.text }] : []),
          ...step.calls.map((c) => ({ type: 'tool-call', toolCallId: c.toolCallId, toolName: c.toolName, input: c.input })),
        ]
      : [{ type: 'text', text: FINAL }]
    const output = Math.ceil(BILLING * countTokens([{ role: 'assistant', content: parts } as any], { format: 'ai-sdk' }))
    const content = parts.map((p) => (p.type === 'tool-call' ? { ...p, input: JSON.stringify(p.input) } : p))
    const providerMetadata = options.providerMetadata?.(billed)
    return {
      content,
      finishReason: finishReason(sdk, step ? 'tool-calls' : 'stop'),
      usage: (options.usage ?? ((b: number, o: number) => usageFor(sdk, b, o)))(billed, output),
      ...(providerMetadata ? { providerMetadata } : {}),
    }
  }
  const model = new sdk.Mock({
    doGenerate: async (call: Json) => ({ ...respond(call), warnings: [] }),
    doStream: async (call: Json) => {
      const reply = respond(call)
      const chunks: Json[] = [{ type: 'stream-start', warnings: [] }]
      reply.content.forEach((part: Json, i: number) => {
        if (part.type === 'text') chunks.push({ type: 'text-start', id: `t${i}` }, { type: 'text-delta', id: `t${i}`, delta: part.text }, { type: 'text-end', id: `t${i}` })
        else chunks.push(part)
      })
      chunks.push({ type: 'finish', finishReason: reply.finishReason, usage: reply.usage, ...(reply.providerMetadata ? { providerMetadata: reply.providerMetadata } : {}) })
      return { stream: new ReadableStream({ start: (c) => (chunks.forEach((chunk) => c.enqueue(chunk)), c.close()) }) }
    },
  })
  return { model, calls }
}

/** The session's tools: each gives back the recorded result of the call it is asked for. */
function replayTools(sdk: Sdk, session: ReplaySession): Record<string, any> {
  const tools: Record<string, any> = {}
  for (const name of session.toolNames) {
    tools[name] = sdk.ai.tool({
      description: `${name}: gives back what the recorded session's tool answered.`,
      inputSchema: sdk.ai.jsonSchema({ type: 'object', additionalProperties: true }),
      execute: async (_input: unknown, { toolCallId }: { toolCallId: string }) => {
        const recorded = session.results.get(toolCallId)
        if (!recorded) throw new Error(`no recorded result for ${toolCallId}`)
        if (recorded.isError) throw new Error(recorded.text)
        return recorded.text
      },
    })
  }
  return tools
}

type Kind = 'generateText' | 'streamText' | 'ToolLoopAgent'

interface Run {
  steps: Json[]
  responseMessages: Json[]
}

async function runLoop(
  sdk: Sdk,
  kind: Kind,
  args: { model: any; tools: Json; messages: Json[]; steps: number; prepareStep: any; system?: string; abortSignal?: AbortSignal },
): Promise<Run> {
  const stopWhen = sdk.ai.stepCountIs(args.steps)
  const common = { model: args.model, tools: args.tools, stopWhen, prepareStep: args.prepareStep, ...(args.abortSignal ? { abortSignal: args.abortSignal } : {}) }
  if (kind === 'generateText') {
    const result = await sdk.ai.generateText({ ...common, system: args.system, messages: args.messages })
    return { steps: result.steps, responseMessages: responseMessagesOf(sdk, result) }
  }
  if (kind === 'streamText') {
    const errors: unknown[] = []
    const result = sdk.ai.streamText({ ...common, system: args.system, messages: args.messages, onError: ({ error }: { error: unknown }) => errors.push(error) })
    await result.consumeStream()
    if (errors.length > 0) throw errors[0]
    return { steps: await result.steps, responseMessages: sdk.major >= 7 ? await result.responseMessages : (await result.response).messages }
  }
  const agent = new sdk.ai.ToolLoopAgent({ ...common, instructions: args.system })
  const result = await agent.generate({ messages: args.messages, ...(args.abortSignal ? { abortSignal: args.abortSignal } : {}) })
  return { steps: result.steps, responseMessages: responseMessagesOf(sdk, result) }
}

/** Every response message of a run: AI SDK 7 keeps them in `responseMessages` (`response.messages` is the last step's). */
function responseMessagesOf(sdk: Sdk, result: any): Json[] {
  return sdk.major >= 7 ? result.responseMessages : result.response.messages
}

// ---------------------------------------------------------------------------------------------
// Independent checks

/**
 * What the providers reject in a prompt, written from their documented rule (Anthropic: "each
 * tool_result block must have a corresponding tool_use block in the previous message"; OpenAI:
 * "messages with role 'tool' must be a response to a preceding message with 'tool_calls'", and
 * every call answered): a tool result that answers no call of the assistant message right before
 * it (other tool messages may sit between), a call left without a result when the next user or
 * assistant message comes (or the prompt ends), and a tool call id used twice.
 */
function promptPairingProblems(prompt: Json[]): string[] {
  const problems: string[] = []
  let open: Set<string> | null = null
  prompt.forEach((m, i) => {
    const parts: Json[] = Array.isArray(m.content) ? m.content : []
    if (m.role === 'tool') {
      for (const p of parts) {
        if (p.type !== 'tool-result') continue
        if (!open || !open.has(p.toolCallId)) problems.push(`[${i}] tool-result ${p.toolCallId} answers no call of the assistant message before it`)
        else open.delete(p.toolCallId)
      }
      return
    }
    if (open && open.size > 0) problems.push(`[${i}] ${m.role} message while ${[...open].join(', ')} have no result`)
    open = m.role === 'assistant' ? new Set(parts.filter((p) => p.type === 'tool-call' && !p.providerExecuted).map((p) => p.toolCallId)) : null
  })
  if (open !== null && (open as Set<string>).size > 0) problems.push(`the prompt ends before the results of ${[...(open as Set<string>)].join(', ')}`)
  const ids = prompt.flatMap((m) => (Array.isArray(m.content) ? m.content.filter((p: Json) => p.type === 'tool-call').map((p: Json) => p.toolCallId) : []))
  if (new Set(ids).size !== ids.length) problems.push('a tool call id is used twice')
  return problems
}

const textOfPrompt = (prompt: Json[]) => JSON.stringify(prompt)

// ---------------------------------------------------------------------------------------------
// Recording what the step did (a prepareStep around it, as users compose it)

interface Compaction {
  stepNumber: number
  result: CompactResult<any>
  /** The whole history at that step, as JSON: what restoreMessages must give back. */
  original: string
}

function recorder(sdk: Sdk, step: CompactionStep) {
  const compactions: Compaction[] = []
  const sent: Array<{ stepNumber: number; messages: Json[] }> = []
  const prepareStep = async (args: any) => {
    const before = step.lastResult
    const out = await step(args)
    if (step.lastResult !== before && step.lastResult !== null) {
      // AI SDK 7 hands the step the list carried forward; the history is its initial messages
      // and every response message. AI SDK 5 and 6 hand it the history itself.
      const history = sdk.major >= 7 ? [...args.initialMessages, ...args.responseMessages] : args.messages
      compactions.push({ stepNumber: args.stepNumber, result: step.lastResult, original: JSON.stringify(history) })
    }
    sent.push({ stepNumber: args.stepNumber, messages: out?.messages ?? args.messages })
    return out
  }
  return { prepareStep, compactions, sent }
}

function summarizerCounting() {
  const requests: Json[] = []
  const summarizer = async (request: Json) => {
    requests.push(request)
    return `## Goal\nSummary ${requests.length} of ${request.messages.length} messages${request.previousSummary ? ', updating the previous one' : ''}.`
  }
  return { requests, summarizer }
}

const sessionOf = () => loadReplay(SESSION, SPLIT)
const kindsOf = (sdk: Sdk): Kind[] => (sdk.major === 5 ? ['generateText', 'streamText'] : ['generateText', 'streamText', 'ToolLoopAgent'])
const systemTokens = countTokens([{ role: 'user', content: SYSTEM }])

// ---------------------------------------------------------------------------------------------

describe.runIf(present).each(SDKS)('$label', (sdk) => {
  describe.each(kindsOf(sdk))('%s', (kind) => {
    it('40 model calls over a real session: compacts at each threshold crossing, every prompt valid and under the threshold, restorable', async () => {
      const session = sessionOf()
      const outputDir = tempDir('cc-ai-sdk-loop-')
      const sessionId = `loop-${sdk.major}-${kind}`
      const { requests, summarizer } = summarizerCounting()
      const events: CompactEvent[] = []
      const tools = replayTools(sdk, session)
      // The agent's system prompt: given to the step on AI SDK 5/6; on 7 the step reads the
      // instructions the SDK hands it (the agent run does that).
      const readsInstructions = sdk.major === 7 && kind === 'ToolLoopAgent'
      const step = compactionStep({
        contextTokenLimit: LIMIT,
        tools,
        ...(readsInstructions ? {} : { system: SYSTEM }),
        outputDir,
        sessionId,
        summarizer,
        onEvent: (event) => events.push(event),
      })
      const STEPS = 40
      const { model, calls } = replayModel(sdk, session.script)
      const rec = recorder(sdk, step)
      // ToolLoopAgent: the step as it is, `prepareStep: step`; the others through a recorder.
      const direct = kind === 'ToolLoopAgent'
      const run = await runLoop(sdk, kind, { model, tools, system: SYSTEM, messages: session.history, steps: STEPS, prepareStep: direct ? step : rec.prepareStep })

      expect(run.steps).toHaveLength(STEPS)
      expect(calls).toHaveLength(STEPS)
      // Every model call got the system prompt, which no summary request saw.
      for (const call of calls) expect(call.prompt[0]).toEqual(expect.objectContaining({ role: 'system', content: SYSTEM }))
      for (const request of requests) expect(JSON.stringify(request.messages)).not.toContain(SYSTEM)

      const completed = events.filter((e) => e.type === 'completed')
      expect(completed.length).toBeGreaterThanOrEqual(2)
      // One summary call per threshold crossing, none in between (nor in the step after one).
      expect(requests).toHaveLength(completed.length)
      expect(events.filter((e) => e.type === 'failed')).toEqual([])

      // The first compaction: from the recorder, or (direct) the first prompt with a summary.
      const firstCall = direct ? calls.findIndex((c) => textOfPrompt(c.prompt).includes('[context-compact]')) : rec.compactions[0].stepNumber
      expect(firstCall).toBeGreaterThanOrEqual(0)
      for (const [n, call] of calls.entries()) {
        if (n < firstCall) continue
        expect(promptPairingProblems(call.prompt), `model call ${n}`).toEqual([])
        expect(call.billed, `model call ${n}: billed ${call.billed} tokens, threshold ${THRESHOLD}`).toBeLessThan(THRESHOLD)
      }

      // System prompt and tools were counted into the trigger, besides the messages.
      const last = step.lastResult!
      expect(last.compacted).toBe(true)
      expect(last.tokens - last.stats.originalTokenCount).toBeGreaterThanOrEqual(systemTokens + 5 * session.toolNames.length)

      if (direct) {
        // The last compaction's history: the initial messages and the response messages of
        // the steps before it (each step answered one assistant and one tool message).
        const at = calls.findIndex((c) => textOfPrompt(c.prompt).includes(JSON.stringify(last.summary).slice(1, -1)))
        expect(at).toBeGreaterThan(firstCall)
        const restored = await restoreMessages(last.messages, { outputDir, sessionId })
        expect(JSON.stringify(restored)).toBe(JSON.stringify([...session.history, ...run.responseMessages.slice(0, 2 * at)]))
        expect(checkMessages(last.messages, { format: 'ai-sdk' })).toEqual([])
        return
      }

      expect(rec.compactions).toHaveLength(completed.length)
      for (const c of rec.compactions) {
        expect(c.result.compacted).toBe(true)
        expect(c.result.error).toBeNull()
        expect(c.result.archivePath).not.toBeNull()
        // restoreMessages on what the step produced gives back the whole history, exactly.
        const restored = await restoreMessages(c.result.messages, { outputDir, sessionId })
        expect(JSON.stringify(restored)).toBe(c.original)
      }
      // Every list the step sent after the first compaction: valid AI SDK messages, paired.
      for (const s of rec.sent) {
        if (s.stepNumber < firstCall) continue
        expect(checkMessages(s.messages as any, { format: 'ai-sdk' }), `step ${s.stepNumber}`).toEqual([])
        for (const m of s.messages) expect(sdk.ai.modelMessageSchema.safeParse(m).success, JSON.stringify(m).slice(0, 200)).toBe(true)
      }
      // The compaction is carried forward: the step after one sends the compacted list (the same
      // objects) and what was added since.
      for (const c of rec.compactions) {
        const next = rec.sent.find((s) => s.stepNumber === c.stepNumber + 1)
        if (!next) continue
        expect(next.messages.length).toBeGreaterThan(c.result.messages.length)
        c.result.messages.forEach((m: Json, i: number) => expect(next.messages[i]).toBe(m))
      }
    })
  })

  it("feeds the previous step's usage, cache reads included, to the trigger", async () => {
    const session = sessionOf()
    // 37K tokens of history under a 60K window: below its threshold by the count, but each
    // request is billed 30K more (a cached prefix the count cannot see: e.g. large tool
    // definitions), reported as cache reads.
    const hidden = 30_000
    const limit = 60_000
    const shapes: Array<{ name: string; usage: (billed: number, output: number) => Json; providerMetadata?: (billed: number) => Json; fires: boolean }> =
      sdk.major === 5
        ? [
            // OpenAI, Google…: inputTokens includes the cached tokens.
            { name: 'inputTokens with the cache', usage: (b, o) => usageFor(sdk, b, o, hidden), fires: true },
            // Anthropic on AI SDK 5: inputTokens leaves the cache out; the raw usage tells it.
            {
              name: 'Anthropic raw usage in providerMetadata',
              usage: (b, o) => ({ inputTokens: b - hidden, outputTokens: o, totalTokens: b - hidden + o }),
              providerMetadata: (b) => ({ anthropic: { usage: { input_tokens: b - hidden, cache_creation_input_tokens: hidden, cache_read_input_tokens: 0, output_tokens: 10 }, cacheCreationInputTokens: hidden } }),
              fires: true,
            },
            { name: 'no hidden tokens (control)', usage: (b, o) => usageFor(sdk, b - hidden, o), fires: false },
          ]
        : [
            { name: 'inputTokens.total with cache reads', usage: (b, o) => usageFor(sdk, b, o, hidden), fires: true },
            { name: 'no hidden tokens (control)', usage: (b, o) => usageFor(sdk, b - hidden, o), fires: false },
          ]
    for (const shape of shapes) {
      const outputDir = tempDir('cc-ai-sdk-usage-')
      const { requests, summarizer } = summarizerCounting()
      const tools = replayTools(sdk, session)
      const step = compactionStep({ contextTokenLimit: limit, system: SYSTEM, tools, outputDir, sessionId: 'usage', summarizer })
      const { model, calls } = replayModel(sdk, session.script, {
        bill: (prompt, t) => defaultBill(prompt, t) + hidden,
        usage: shape.usage,
        ...(shape.providerMetadata ? { providerMetadata: shape.providerMetadata } : {}),
      })
      const rec = recorder(sdk, step)
      await runLoop(sdk, 'generateText', { model, tools, system: SYSTEM, messages: session.history, steps: 3, prepareStep: rec.prepareStep })
      expect(calls).toHaveLength(3)
      if (shape.fires) {
        // Not at the first step (no usage yet, and the count is below the threshold), but at
        // the second, from the first step's usage.
        expect(rec.compactions.map((c) => c.stepNumber), shape.name).toEqual([1])
        expect(requests).toHaveLength(1)
        const result = rec.compactions[0].result
        expect(result.measure?.source).toBe('usage')
        expect(result.measure!.tokens).toBeGreaterThanOrEqual(calls[0].billed)
        expect(step.compactor.calibration?.samples).toBeGreaterThan(0)
      } else {
        expect(rec.compactions, shape.name).toEqual([])
        expect(requests).toHaveLength(0)
      }
    }
  })

  it('the next call of a chat: the same history is carried forward, one read back as new objects reuses the summary', async () => {
    const session = sessionOf()
    const outputDir = tempDir('cc-ai-sdk-chat-')
    const { requests, summarizer } = summarizerCounting()
    const events: CompactEvent[] = []
    const tools = replayTools(sdk, session)
    // A window that the first compaction leaves room in for the next turns.
    const options: CompactionStepOptions = { contextTokenLimit: 32_000, system: SYSTEM, tools, outputDir, sessionId: 'chat', summarizer, onEvent: (e) => events.push(e) }
    const step = compactionStep(options)
    const first = replayModel(sdk, session.script)
    const turn1 = await runLoop(sdk, 'generateText', { model: first.model, tools, system: SYSTEM, messages: session.history, steps: 2, prepareStep: step })
    expect(requests).toHaveLength(1)
    const compacted = step.lastResult!
    const summary = compacted.messages.find((m: Json) => typeof m.content === 'string' && m.content.startsWith('[context-compact]'))
    expect(summary).toBeDefined()
    const started = () => events.filter((e) => e.type === 'started').length
    expect(started()).toBe(1)

    // The application keeps the history as it is (the very objects) and adds the user's next
    // message: the compaction is carried forward, without compacting again.
    const kept = [...session.history, ...turn1.responseMessages, { role: 'user', content: 'Now run the whole test suite.' }]
    const second = replayModel(sdk, session.script.slice(2))
    await runLoop(sdk, 'generateText', { model: second.model, tools, system: SYSTEM, messages: kept, steps: 1, prepareStep: step })
    expect(requests).toHaveLength(1)
    expect(started()).toBe(1)
    expect(second.calls[0].prompt).toHaveLength(1 + compacted.messages.length + kept.length - session.history.length)
    expect(textOfPrompt(second.calls[0].prompt)).toContain(JSON.stringify(summary.content).slice(1, 200))
    for (const call of second.calls) expect(promptPairingProblems(call.prompt)).toEqual([])

    // Read back from a database: new objects with the same content. The checkpoint gives the
    // same summary message, without an LLM call; also to a new step (another process).
    const stored = JSON.parse(JSON.stringify(kept))
    for (const [label, s] of [['same step', step], ['new step', compactionStep(options)]] as const) {
      const third = replayModel(sdk, session.script.slice(2))
      await runLoop(sdk, 'generateText', { model: third.model, tools, system: SYSTEM, messages: stored, steps: 1, prepareStep: s })
      expect(requests, label).toHaveLength(1)
      expect(s.lastResult!.compacted, label).toBe(true)
      expect(s.lastResult!.checkpoint, label).toMatchObject({ reused: true, extended: false })
      expect(s.lastResult!.messages, label).toContainEqual(summary)
      expect(promptPairingProblems(third.calls[0].prompt), label).toEqual([])
      expect(third.calls[0].billed, label).toBeLessThan(32_000 * 0.92)
    }
    expect(events.some((e) => e.type === 'checkpoint_reused')).toBe(true)
  })

  it('with background, the summary is prepared before the threshold and swapped in at it', async () => {
    const session = sessionOf()
    const outputDir = tempDir('cc-ai-sdk-background-')
    const { requests, summarizer } = summarizerCounting()
    const events: CompactEvent[] = []
    const tools = replayTools(sdk, session)
    const step = compactionStep({ contextTokenLimit: 60_000, background: true, system: SYSTEM, tools, outputDir, sessionId: 'bg', summarizer, onEvent: (e) => events.push(e) })
    const { model, calls } = replayModel(sdk, session.script)
    const rec = recorder(sdk, step)
    await runLoop(sdk, 'generateText', { model, tools, system: SYSTEM, messages: session.history, steps: 24, prepareStep: rec.prepareStep })
    await step.close()
    const types = events.map((e) => e.type)
    expect(types).toContain('background_started')
    expect(types).toContain('background_applied')
    expect(rec.compactions.length).toBeGreaterThanOrEqual(1)
    expect(rec.compactions[0].result.background).toMatchObject({ state: 'applied' })
    // Every summary request was a background one (a later one may still be preparing when the
    // run ends: close() cancels it).
    expect(requests).toHaveLength(types.filter((t) => t === 'background_started').length)
    for (const call of calls.slice(rec.compactions[0].stepNumber)) expect(promptPairingProblems(call.prompt)).toEqual([])
  })

  describe.each(['plain', 'tool()'] as const)('the recall tool (%s) in the tool set', (wrap) => {
    it('after a compaction the agent reads back the range its summary names', async () => {
      const session = sessionOf()
      const outputDir = tempDir('cc-ai-sdk-recall-')
      const archive = { outputDir, sessionId: 'recall' }
      const { summarizer } = summarizerCounting()
      const recall = wrap === 'plain' ? recallTool(archive) : sdk.ai.tool(recallTool(archive))
      const tools = { ...replayTools(sdk, session), recall }
      const step = compactionStep({ contextTokenLimit: LIMIT, system: SYSTEM, tools, ...archive, summarizer })
      let asked: string | null = null
      const { model, calls } = replayModel(sdk, session.script, {
        // Once a prompt carries a summary's Recall line, the model calls recall with it (once).
        reply: (_n, prompt) => {
          const line = /Recall: archive=(\S+) from=(\d+) to=(\d+)/.exec(textOfPrompt(prompt))
          if (!line || asked !== null) return undefined
          asked = 'recall-1'
          return { text: 'Let me read what was compacted.', calls: [{ toolCallId: asked, toolName: 'recall', input: { archive: line[1], from: Number(line[2]), to: Number(line[2]) + 3 } }] }
        },
      })
      await runLoop(sdk, 'generateText', { model, tools, system: SYSTEM, messages: session.history, steps: 4, prepareStep: step })
      expect(asked).toBe('recall-1')
      const answer = calls
        .flatMap((c) => c.prompt)
        .flatMap((m) => (m.role === 'tool' ? m.content : []))
        .find((p: Json) => p.toolCallId === 'recall-1')
      expect(answer, 'the recall result reached the model').toBeDefined()
      expect(answer.output.type, JSON.stringify(answer.output)).toBe('text')
      const text: string = answer.output.value
      expect(text).toMatch(/Archive compact-\d{8}T\d{6}Z-1\.json, messages 0 to \d+ of \d+ \(from=0 to=3\)/)
      // The archived messages themselves: the session's first tool call, by name and input.
      const firstCall = session.history.flatMap((m) => (m.role === 'assistant' && Array.isArray(m.content) ? m.content : [])).find((p: Json) => p.type === 'tool-call')
      expect(text).toContain(firstCall.toolName)
      expect(text).toContain(JSON.stringify(firstCall.input).slice(0, 60))
    })
  })

  describe('failures leave the messages as they are and say why; the run goes on', () => {
    async function failingRun(options: Partial<CompactionStepOptions>, steps = 5) {
      const session = sessionOf()
      const events: CompactEvent[] = []
      const tools = replayTools(sdk, session)
      // The run grows over its window: the failure itself is under test here, so the summary
      // written without an LLM over the window (summaryFallback, summary-fallback.test.ts) is off.
      const step = compactionStep({ contextTokenLimit: LIMIT, system: SYSTEM, tools, sessionId: 'failing', onEvent: (e) => events.push(e), onLog: () => {}, summaryFallback: 'none', ...options })
      const { model, calls } = replayModel(sdk, session.script)
      const run = await runLoop(sdk, 'generateText', { model, tools, system: SYSTEM, messages: session.history, steps, prepareStep: step })
      expect(run.steps).toHaveLength(steps)
      return { step, events, calls, session }
    }

    /** Every model call got the whole history: nothing was compacted. */
    function expectUncompacted(calls: ModelCall[], session: ReplaySession) {
      calls.forEach((call, n) => {
        expect(call.prompt.length).toBe(1 + session.history.length + 2 * n)
        expect(textOfPrompt(call.prompt)).not.toContain('[context-compact]')
        expect(promptPairingProblems(call.prompt)).toEqual([])
      })
    }

    it('the summarizer rejects', async () => {
      const { step, events, calls, session } = await failingRun({
        outputDir: tempDir('cc-ai-sdk-fail-'),
        summarizer: async () => {
          throw new Error('summary service unavailable')
        },
        maxRetries: 0,
      })
      expect(step.lastResult).toMatchObject({ compacted: false, error: { code: 'SUMMARIZER_ERROR', message: expect.stringContaining('summary service unavailable') } })
      expect(events.filter((e) => e.type === 'failed')).toHaveLength(calls.length)
      expectUncompacted(calls, session)
    })

    it("the summary provider's port is closed", async () => {
      const port = await closedPort()
      const { step, calls, session } = await failingRun({ outputDir: tempDir('cc-ai-sdk-fail-'), provider: 'anthropic', apiKey: 'sk-ant-test', baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0 }, 3)
      expect(step.lastResult).toMatchObject({ compacted: false, error: { code: 'CONNECTION_FAILED' } })
      expectUncompacted(calls, session)
    })

    it('the archive directory cannot be created (outputDir under a regular file)', async () => {
      const file = join(tempDir('cc-ai-sdk-fail-'), 'not-a-directory')
      writeFileSync(file, 'x')
      const outputDir = join(file, 'archives')
      // The compaction goes on without its archive, and says so.
      const { step, calls } = await failingRun({ outputDir, summarizer: summarizerCounting().summarizer }, 3)
      expect(step.lastResult).toMatchObject({ compacted: true, archivePath: null })
      expect(step.lastResult!.warnings.join('\n')).toMatch(/could not archive/)
      for (const call of calls) expect(promptPairingProblems(call.prompt)).toEqual([])
      // With requireArchive, it does not compact.
      const strict = await failingRun({ outputDir, requireArchive: true, summarizer: summarizerCounting().summarizer }, 3)
      expect(strict.step.lastResult).toMatchObject({ compacted: false, error: { code: 'ARCHIVE_FAILED' } })
      expectUncompacted(strict.calls, strict.session)
    })

    // The same on every version as the unwritable directory above; once is enough (each
    // compaction waits for the store's retries, about 6 s).
    it.runIf(sdk.major === 7)('an archive store that throws', async () => {
      const store = {
        put: async () => {
          throw new Error('store down')
        },
        get: async () => {
          throw new Error('store down')
        },
        list: async () => {
          throw new Error('store down')
        },
        delete: async () => {},
      }
      const { step } = await failingRun({ archiveStore: store, summarizer: summarizerCounting().summarizer }, 2)
      expect(step.lastResult).toMatchObject({ compacted: true, archivePath: null })
      expect(step.lastResult!.warnings.join('\n')).toMatch(/could not archive/)
    })
  })

  it.each(['signal', 'signal()'] as const)('an aborted run (%s) aborts the compaction in progress, and the run ends', async (form) => {
    const session = sessionOf()
    const outputDir = tempDir('cc-ai-sdk-abort-')
    const controller = new AbortController()
    let summaryStarted = false
    const tools = replayTools(sdk, session)
    const step = compactionStep({
      contextTokenLimit: LIMIT,
      system: SYSTEM,
      tools,
      outputDir,
      sessionId: 'abort',
      signal: form === 'signal' ? controller.signal : () => controller.signal,
      // A summary that takes a minute; the user aborts the run while it is written.
      summarizer: () => {
        summaryStarted = true
        setTimeout(() => controller.abort(), 20)
        return new Promise((resolve) => setTimeout(() => resolve('too late'), 60_000).unref())
      },
    })
    const { model, calls } = replayModel(sdk, session.script)
    const started = Date.now()
    const run = runLoop(sdk, 'generateText', { model, tools, system: SYSTEM, messages: session.history, steps: 5, prepareStep: step, abortSignal: controller.signal })
    await expect(run).rejects.toMatchObject({ name: 'AbortError' })
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(summaryStarted).toBe(true)
    // The model was never called: the first step's compaction was aborted.
    expect(calls).toHaveLength(0)
    expect(await listArchives(outputDir, 'abort')).toEqual([])
  })
})

// ---------------------------------------------------------------------------------------------

async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe('compactionStep', () => {
  const list = (n: number): Json[] =>
    Array.from({ length: n }, (_, i) => [
      { role: 'user', content: `Please read file ${i}. ${'lorem ipsum dolor '.repeat(40)}` },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: `c${i}`, toolName: 'read_file', input: { path: `src/${i}.ts` } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: `c${i}`, toolName: 'read_file', output: { type: 'text', value: 'export const x = 1\n'.repeat(60) } }] },
    ]).flat()

  it('below the threshold: resolves with undefined (the SDK sends its own messages), and attempts nothing', async () => {
    const step = compactionStep({ contextTokenLimit: 200_000, outputDir: tempDir(), summarizer: async () => 'never' })
    const messages = list(5)
    const copy = structuredClone(messages)
    expect(await step({ messages: messages as any, steps: [] })).toBeUndefined()
    expect(step.lastResult).toBeNull()
    expect(messages).toEqual(copy)
  })

  it('over it: the compacted list, the same objects kept; restorable', async () => {
    const outputDir = tempDir()
    const step = compactionStep({ contextTokenLimit: 4000, outputDir, sessionId: 'unit', summarizer: async () => 'the summary' })
    const messages = list(12)
    const out = await step({ messages: messages as any, steps: [] })
    expect(out!.messages.length).toBeLessThan(messages.length)
    expect(out!.messages[out!.messages.length - 1]).toBe(messages[messages.length - 1])
    expect(step.lastResult!.messages).toBe(out!.messages)
    expect(await restoreMessages(out!.messages, { outputDir, sessionId: 'unit' })).toEqual(messages)
  })

  it('counts the tool set as the provider receives it: jsonSchema(), Zod 4, Zod 3, a provider tool', async () => {
    const tokensWith = async (tools: Json | undefined) => {
      const step = compactionStep({ contextTokenLimit: 4000, outputDir: tempDir(), summarizer: async () => 'the summary', ...(tools ? { tools } : {}) })
      await step({ messages: list(12) as any, steps: [] })
      return step.lastResult!.tokens - step.lastResult!.stats.originalTokenCount
    }
    const schema = { type: 'object', properties: { path: { type: 'string', description: 'The file to read, relative to the repository root.' } }, required: ['path'] }
    const expected = countTokens([{ role: 'user', content: JSON.stringify(schema) }])
    expect(await tokensWith(undefined)).toBe(0)
    const viaJsonSchema = await tokensWith({ read_file: ai7.tool({ description: 'Reads a file.', inputSchema: ai7.jsonSchema(schema as any), execute: async () => '' }) })
    expect(viaJsonSchema).toBeGreaterThanOrEqual(expected)
    const viaZod4 = await tokensWith({ read_file: ai7.tool({ description: 'Reads a file.', inputSchema: z.object({ path: z.string().describe('The file to read, relative to the repository root.') }), execute: async () => '' }) })
    expect(viaZod4).toBeGreaterThanOrEqual(expected)
    const viaZod3 = await tokensWith({ read_file: ai5.tool({ description: 'Reads a file.', inputSchema: z3.object({ path: z3.string().describe('The file to read, relative to the repository root.') }), execute: async () => '' }) })
    expect(viaZod3).toBeGreaterThanOrEqual(expected)
    const plain = await tokensWith({ read_file: { description: 'Reads a file.', inputSchema: schema } })
    expect(plain).toBeGreaterThanOrEqual(expected)
    const definitions = await tokensWith([{ name: 'read_file', description: 'Reads a file.', input_schema: schema }])
    expect(Math.abs(viaJsonSchema - definitions)).toBeLessThanOrEqual(2)
    const provider = await tokensWith({ web_search: { type: 'provider', id: 'anthropic.web_search_20250305', args: { maxUses: 3 } } })
    expect(provider).toBeGreaterThan(0)
  })

  it("the step's instructions (AI SDK 7) count as the system prompt when none is given", async () => {
    const instructions = 'You are a careful assistant. '.repeat(50)
    const read = async (args: Json, options: CompactionStepOptions = {}) => {
      const step = compactionStep({ contextTokenLimit: 4000, outputDir: tempDir(), summarizer: async () => 'the summary', ...options })
      await step({ messages: list(12) as any, steps: [], ...args })
      return step.lastResult!.tokens - step.lastResult!.stats.originalTokenCount
    }
    const tokens = countTokens([{ role: 'user', content: instructions }])
    expect(await read({ instructions })).toBe(tokens)
    expect(await read({ instructions: { role: 'system', content: instructions } })).toBe(tokens)
    // A system prompt given to the step wins.
    expect(await read({ instructions }, { system: 'Short.' })).toBe(countTokens([{ role: 'user', content: 'Short.' }]))
  })

  it('invalid options are a TypeError naming the option', () => {
    expect(() => compactionStep({ usage: { inputTokens: 5 } } as any)).toThrow(/options\.usage cannot be given to compactionStep/)
    expect(() => compactionStep({ force: true } as any)).toThrow(/options\.force/)
    expect(() => compactionStep({ format: 'anthropic' } as any)).toThrow(/options\.format must be 'ai-sdk'/)
    expect(() => compactionStep({ tools: 'read_file' } as any)).toThrow(/options\.tools must be/)
    expect(() => compactionStep({ tools: { read_file: null } } as any)).toThrow(/options\.tools\.read_file must be a tool object/)
    expect(() => compactionStep({ signal: 'stop' } as any)).toThrow(/options\.signal must be an AbortSignal/)
    expect(() => compactionStep({ system: [{ role: 'system', content: 5 }] } as any)).toThrow(/options\.system\[0\]/)
    expect(() => compactionStep({ contextTokenLimit: -1 })).toThrow(/options\.contextTokenLimit/)
    expect(() => compactionStep([] as any)).toThrow(/options must be an object/)
    expect(() => recallTool({ format: 'anthropic' } as any)).toThrow(/options\.format must be 'ai-sdk'/)
  })

  it('the recall tool is createRecallTool in the AI SDK shape', async () => {
    const outputDir = tempDir()
    const ours = recallTool({ outputDir, sessionId: 's', name: 'recall' }) as Json
    const theirs = createRecallTool({ outputDir, sessionId: 's', format: 'ai-sdk' }).definition as Json
    expect(ours.description).toBe(theirs.description)
    expect(await ai7.asSchema(ours.inputSchema).jsonSchema).toEqual(await ai7.asSchema(theirs.inputSchema).jsonSchema)
    expect(await ours.execute({ query: 'anything' })).toMatch(/no archive|No archive|not/i)
  })

  it("loads without the AI SDK: nothing is required from 'ai' for a step with JSON-schema tools", () => {
    const script = `
      const Module = require('node:module')
      const resolve = Module._resolveFilename
      Module._resolveFilename = function (request, ...rest) {
        if (request === 'ai' || request.startsWith('ai/')) throw new Error('required ai')
        return resolve.call(this, request, ...rest)
      }
      const { compactionStep } = require('context-compact/ai-sdk')
      const schema = { [Symbol.for('vercel.ai.schema')]: true, jsonSchema: { type: 'object' }, validate: undefined }
      const step = compactionStep({ contextTokenLimit: 100000, tools: { t: { description: 'd', inputSchema: schema } } })
      step({ messages: [{ role: 'user', content: 'hi' }], steps: [] }).then((out) => console.log('ok', out === undefined))
    `
    expect(execFileSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' }).trim()).toBe('ok true')
    const esm = `import { compactionStep, recallTool } from 'context-compact/ai-sdk'; console.log(typeof compactionStep, typeof recallTool)`
    expect(execFileSync(process.execPath, ['--input-type=module', '-e', esm], { cwd: ROOT, encoding: 'utf8' }).trim()).toBe('function function')
  })
})
