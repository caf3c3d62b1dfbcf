// What a compaction's summary request costs, shared against transcript (issue 21).
//
// For each real session in ../shared/data/real (Claude Code sessions against the local
// Anthropic server, mini-swe-agent and OpenHands sessions against the local OpenAI server, both
// implementing the providers' documented prompt-cache accounting: benchmark/CACHE-RULES.md):
//   1. the agent loop's last request before compaction is sent as the loop sends it (its
//      `agentRequest`, the messages up to that request, Claude Code's breakpoint on the last
//      block of the last message and on the system prompt), which writes the prompt cache; the
//      Claude sessions also run with the other ways a loop asks for caching (ANTHROPIC_LOOPS,
//      among them a loop that adds its breakpoints per request and passes only its `usage`);
//   2. compactMessages runs with that `agentRequest`, once with `summaryRequest: 'shared'`, once
//      with `'auto'` (the default: the cheaper of the two) and once with `'transcript'` (each after
//      a fresh server and a fresh loop request);
//   3. as a reference, the benchmark also sends the shared request itself, built as issue 21
//      specifies (the loop's request, every message byte for byte, one more user message with
//      the instruction, a breakpoint on it and one on the loop's last block), to show what that
//      shape costs under the same accounting whatever the library does;
//   4. the summary requests' usage is summed (from `result.summaryUsage` when the library
//      reports it, checked against what the server billed; else from the server's records), and
//      priced at dated list prices.
// No thinking by default (the target's condition); `--thinking` gives the Claude sessions'
// `agentRequest` `thinking: { type: 'enabled', budget_tokens: 4096 }`, to measure what stripping
// earlier thinking blocks costs on models that keep only the last turn's (Haiku 4.5 here).
// Target: at least 85 % of the shared summary request's input read from the cache.
//
// `--model <id>` replaces the Claude sessions' model (e.g. claude-sonnet-4-5 with --thinking).
//
// Usage: npm run bench:economics [-- --json results.json] [-- --thinking] [-- --model <id>]
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { startAnthropicServer } from '../servers/anthropic-messages.mjs'
import { startOpenAIServer } from '../servers/openai-chat.mjs'
import { CLAUDE_CODE_SYSTEM, CLAUDE_CODE_TOOLS, MINI_SWE_AGENT_TOOLS, OPENHANDS_TOOLS } from './synthetic-agent.mjs'

const require = createRequire(import.meta.url)
const { compactMessages, countTokens } = require('../../index.js')

const HERE = dirname(fileURLToPath(import.meta.url))
const REAL = join(HERE, '..', '..', '..', 'shared', 'data', 'real')
const TARGET_READ_SHARE = 0.85

// List prices in USD per million tokens, read 2026-11-24.
// Anthropic: https://platform.claude.com/docs/en/about-claude/pricing and the pricing table of
// https://platform.claude.com/docs/en/build-with-claude/prompt-caching ("5-minute cache write
// tokens are 1.25 times the base input tokens price … Cache read tokens are 0.1 times").
// OpenAI: https://developers.openai.com/api/docs/pricing (gpt-5: input $1.25, cached input
// $0.125, output $10; no charge for cache writes on gpt-5, [OPC] "no additional fees").
const PRICES = {
  'Sonnet 4.5': { input: 3, write: 3 * 1.25, read: 3 * 0.1, output: 15 },
  'Opus 4.6': { input: 5, write: 5 * 1.25, read: 5 * 0.1, output: 25 },
  'gpt-5': { input: 1.25, write: 1.25, read: 0.125, output: 10 },
}
const PRICE_DATE = '2026-11-24'

const args = process.argv.slice(2)
const jsonOut = args.includes('--json') ? args[args.indexOf('--json') + 1] : null
const THINKING = args.includes('--thinking')
const MODEL = args.includes('--model') ? args[args.indexOf('--model') + 1] : null

const manifest = JSON.parse(readFileSync(join(REAL, 'manifest.json'), 'utf8'))
const anthropicServer = await startAnthropicServer({ apiKey: 'test-key' })
const openaiServer = await startOpenAIServer({ apiKey: 'test-key' })

// Messages compared as the cache sees them: without `cache_control` (a breakpoint is not
// content), and a string content as the one text block it stands for (the loop sends its last
// message as blocks so it can carry the breakpoint).
const stripCacheControl = (message) => {
  const content = typeof message.content === 'string' && message.role !== 'system' && message.role !== 'tool' && !('tool_calls' in message) ? [{ type: 'text', text: message.content }] : message.content
  if (!Array.isArray(content)) return message
  return { ...message, content: content.map(({ cache_control: _c, ...block }) => block) }
}
const sameMessage = (a, b) => JSON.stringify(stripCacheControl(a)) === JSON.stringify(stripCacheControl(b))

// How the loop asks Anthropic for caching (the OpenAI sessions' loops need nothing: OpenAI caches
// every prompt of 1,024 tokens or more):
// - 'breakpoints': as Claude Code does, a breakpoint on the system prompt and one on the last block
//   of the last message;
// - 'per-request': the same breakpoints, but added as the loop builds each request, so neither the
//   messages it keeps nor the body it gives as `agentRequest` carry one (Claude Code's own loop
//   works so); it passes its last response's `usage`, which shows the cache writes;
// - 'per-request-no-usage': that loop without passing `usage`: nothing the compaction sees says
//   it caches;
// - 'top-level': the README's loop, Anthropic's top-level `cache_control` (automatic caching: the
//   breakpoint moves to the last cacheable block of each request);
// - 'none': a loop that never asks for caching, as the README's loop was first written.
const ANTHROPIC_LOOPS = ['breakpoints', 'per-request', 'per-request-no-usage', 'top-level', 'none']
const PER_REQUEST = new Set(['per-request', 'per-request-no-usage'])

/** The loop's request: its `agentRequest` with the messages it had sent, marked as the loop marks them. */
function loopRequest(format, loop, agentRequest, messages) {
  const sent = structuredClone(messages)
  if (format === 'anthropic' && (loop === 'breakpoints' || PER_REQUEST.has(loop))) {
    // Claude Code (and the Anthropic SDK examples) put a breakpoint on the last block of the
    // last message, so the next request reads the conversation so far.
    const last = sent.at(-1)
    if (typeof last.content === 'string') last.content = [{ type: 'text', text: last.content }]
    last.content.at(-1).cache_control = { type: 'ephemeral' }
  }
  if (format === 'anthropic' && PER_REQUEST.has(loop)) {
    // …and on the system prompt, as it builds the request: `agentRequest` has a plain one.
    return { ...agentRequest, system: [{ type: 'text', text: agentRequest.system, cache_control: { type: 'ephemeral' } }], messages: sent }
  }
  return { ...agentRequest, messages: sent }
}

function agentRequestFor(entry, format, loop, model, messages) {
  if (format === 'anthropic') {
    return {
      model,
      max_tokens: 32000,
      system: loop === 'breakpoints' ? [{ type: 'text', text: CLAUDE_CODE_SYSTEM, cache_control: { type: 'ephemeral' } }] : CLAUDE_CODE_SYSTEM,
      tools: CLAUDE_CODE_TOOLS,
      metadata: { user_id: 'economics-benchmark' },
      ...(loop === 'top-level' ? { cache_control: { type: 'ephemeral' } } : {}),
      ...(THINKING ? { thinking: { type: 'enabled', budget_tokens: 4096 } } : {}),
    }
  }
  const names = new Set(messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.function.name)))
  const tools = names.has('bash') ? MINI_SWE_AGENT_TOOLS : OPENHANDS_TOOLS
  return { model, tools, prompt_cache_key: entry.file.replace(/\.json$/, '') }
}

// The reference request's instruction: short, like the library's, and the same for every session.
const REFERENCE_INSTRUCTION = `Your task is to create a detailed summary of the conversation so far, which will replace the earlier part of it: the most recent messages stay verbatim after the summary. Stop the task you were working on and do not call any tool: answer with text only.

Write these sections: 1. Primary request and intent. 2. Key technical concepts. 3. Files and code sections (full paths, what changed and why). 4. Errors and fixes. 5. Problem solving. 6. All user messages that are not tool results. 7. Pending tasks. 8. Current work. 9. Optional next step, quoting the most recent request.`

/** The shared summary request of issue 21, built here as the reference for the library's. */
function referenceRequest(format, agentRequest, messages, loopCount) {
  const sent = structuredClone(messages)
  // Seed 002: the last assistant message's unanswered tool calls are removed.
  const last = sent.at(-1)
  if (last.role === 'assistant' && format === 'anthropic' && Array.isArray(last.content)) {
    last.content = last.content.filter((b) => b.type !== 'tool_use')
    if (last.content.length === 0) sent.pop()
  } else if (last.role === 'assistant' && format === 'openai' && last.tool_calls) {
    delete last.tool_calls
    if (!last.content) sent.pop()
  }
  if (format === 'anthropic') {
    // A breakpoint on the loop's own last block, so its entry is read however many blocks
    // follow it ([PC] the look-back is 20 blocks), and one on the instruction.
    const mark = sent[loopCount - 1]
    if (typeof mark.content === 'string') mark.content = [{ type: 'text', text: mark.content }]
    mark.content.at(-1).cache_control = { type: 'ephemeral' }
    sent.push({ role: 'user', content: [{ type: 'text', text: REFERENCE_INSTRUCTION, cache_control: { type: 'ephemeral' } }] })
    // With thinking, max_tokens must exceed the loop's budget ([ET]); the budget itself stays:
    // changing it would invalidate the cached messages.
    return { ...agentRequest, max_tokens: 4096 + (agentRequest.thinking?.budget_tokens ?? 0), messages: sent }
  }
  sent.push({ role: 'user', content: REFERENCE_INSTRUCTION })
  return { ...agentRequest, max_completion_tokens: 4096, messages: sent }
}

/** Sums the usage the server billed for the summary requests (all requests after the loop's). */
function billed(format, records) {
  const sum = { requests: records.length, ok: 0, inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0 }
  for (const r of records) {
    if (!r.usage) continue
    sum.ok++
    if (format === 'anthropic') {
      sum.inputTokens += r.usage.input_tokens
      sum.cacheReadTokens += r.usage.cache_read_input_tokens
      sum.cacheWriteTokens += r.usage.cache_creation_input_tokens
      sum.outputTokens += r.usage.output_tokens
    } else {
      const cached = r.usage.prompt_tokens_details?.cached_tokens ?? 0
      sum.inputTokens += r.usage.prompt_tokens - cached
      sum.cacheReadTokens += cached
      sum.outputTokens += r.usage.completion_tokens
    }
  }
  return sum
}

const cost = (usage, price) => (usage.inputTokens * price.input + usage.cacheWriteTokens * price.write + usage.cacheReadTokens * price.read + usage.outputTokens * price.output) / 1e6

const costsOf = (format, usage) =>
  format === 'anthropic' ? { 'Sonnet 4.5': cost(usage, PRICES['Sonnet 4.5']), 'Opus 4.6': cost(usage, PRICES['Opus 4.6']) } : { 'gpt-5': cost(usage, PRICES['gpt-5']) }

/** Which request shape the library sent: from the result when it says, else from the request. */
function requestKind(result, format, loopMessages, first) {
  if (result.summaryRequest !== undefined) return { kind: result.summaryRequest ?? 'none', reported: true }
  if (!first?.body) return { kind: 'none', reported: false }
  const sent = first.body.messages ?? []
  const shared = sent.length > loopMessages.length && loopMessages.every((m, i) => sameMessage(m, sent[i]))
  return { kind: shared ? 'shared' : 'transcript', reported: false }
}

/** The first message of the loop's request that the summary request did not repeat byte for byte, or -1. */
function firstDifference(loopMessages, first) {
  const sent = first?.body?.messages ?? []
  return loopMessages.findIndex((m, i) => !sent[i] || !sameMessage(m, sent[i]))
}

const rows = []
const started = Date.now()
let libraryReportsUsage = false
for (const entry of manifest) {
  const format = entry.format === 'anthropic' ? 'anthropic' : 'openai'
  const messages = JSON.parse(readFileSync(join(REAL, entry.file), 'utf8'))
  const usage = JSON.parse(readFileSync(join(REAL, entry.usage_file), 'utf8'))
  const lastRequest = usage.at(-1)
  // The loop's model and its last request: the last entry of the billed usage.
  const model = entry.format === 'anthropic' && MODEL ? MODEL : lastRequest.model
  const loopMessages = messages.slice(0, lastRequest.message_index_after_which_the_request_was_made + 1)
  const server = format === 'anthropic' ? anthropicServer : openaiServer
  // The conversation is at its limit: the threshold is its own size.
  const contextTokenLimit = Math.ceil(countTokens(messages) / 0.92)

  const url = format === 'anthropic' ? `${server.url}/v1/messages` : `${server.url}/v1/chat/completions`
  const headers = format === 'anthropic' ? { 'x-api-key': 'test-key', 'anthropic-version': '2023-06-01' } : { authorization: 'Bearer test-key' }
  const sendJson = async (body, what) => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
    if (!response.ok) throw new Error(`${entry.file}: ${what} was refused: ${response.status} ${await response.text()}`)
  }

  for (const loop of format === 'anthropic' ? ANTHROPIC_LOOPS : ['automatic']) {
  const agentRequest = agentRequestFor(entry, format, loop, model, messages)
  // The reference request is the breakpoints loop's (it adds the breakpoints itself).
  const modes = loop === 'breakpoints' || loop === 'automatic' ? ['shared', 'auto', 'transcript', 'reference'] : ['shared', 'auto', 'transcript']
  for (const mode of modes) {
    server.reset()
    await sendJson(loopRequest(format, loop, agentRequest, loopMessages), "the loop's own request")
    const loopUsage = billed(format, server.requests.slice(0, 1))
    if (mode === 'reference') {
      const t0 = Date.now()
      await sendJson(referenceRequest(format, agentRequest, messages, loopMessages.length), 'the reference shared request')
      const measured = billed(format, server.requests.slice(1))
      const input = measured.inputTokens + measured.cacheReadTokens + measured.cacheWriteTokens
      rows.push({
        session: entry.file.replace(/\.json$/, ''),
        format,
        loop,
        model,
        mode,
        used: 'shared (built by the benchmark)',
        prefixDiffersAt: firstDifference(server.requests[0].body.messages, server.requests[1]),
        loopPromptTokens: loopUsage.inputTokens + loopUsage.cacheReadTokens + loopUsage.cacheWriteTokens,
        usage: measured,
        input,
        readShare: input > 0 ? measured.cacheReadTokens / input : 0,
        costs: costsOf(format, measured),
        check: 'server records',
        error: null,
        compacted: null,
        ms: Date.now() - t0,
        statuses: [server.requests[1].status],
      })
      continue
    }

    const t0 = Date.now()
    const result = await compactMessages(messages, {
      provider: format,
      baseUrl: server.url,
      apiKey: 'test-key',
      model,
      agentRequest,
      summaryRequest: mode,
      // The loop's last response's usage, as the per-request loop passes it.
      ...(loop === 'per-request' ? { usage: server.requests[0].response.usage } : {}),
      force: true,
      contextTokenLimit,
      outputDir: mkdtempSync(join(tmpdir(), 'cc-economics-')),
      sessionId: 'economics',
    })
    const ms = Date.now() - t0
    const summaryRecords = server.requests.slice(1)
    const fromServer = billed(format, summaryRecords)
    let measured = fromServer
    let check = 'server records'
    if (result.summaryUsage !== undefined) {
      libraryReportsUsage = true
      const reported = result.summaryUsage
      if (reported === null) {
        check = summaryRecords.length === 0 ? 'summaryUsage null = no call' : 'summaryUsage null, but calls were made'
      } else {
        // `requests` may count every attempt or only the answered ones: either matches.
        const same = ['inputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'outputTokens'].every((k) => reported[k] === fromServer[k]) && (reported.requests === fromServer.requests || reported.requests === fromServer.ok)
        check = same ? 'summaryUsage = server' : `summaryUsage ≠ server (${JSON.stringify(reported)})`
        measured = { ...fromServer, ...reported }
      }
    }
    const loopSent = server.requests[0].body.messages
    const kind = requestKind(result, format, loopSent, summaryRecords[0])
    const input = measured.inputTokens + measured.cacheReadTokens + measured.cacheWriteTokens
    rows.push({
      session: entry.file.replace(/\.json$/, ''),
      format,
      loop,
      model,
      mode,
      warnings: result.warnings.filter((w) => w.includes('cache')).length,
      used: kind.kind + (kind.reported ? '' : ' (inferred)'),
      prefixDiffersAt: kind.kind === 'shared' ? firstDifference(loopSent, summaryRecords[0]) : null,
      loopPromptTokens: loopUsage.inputTokens + loopUsage.cacheReadTokens + loopUsage.cacheWriteTokens,
      usage: measured,
      input,
      readShare: input > 0 ? measured.cacheReadTokens / input : 0,
      costs: costsOf(format, measured),
      check,
      error: result.error?.code ?? null,
      compacted: result.compacted,
      ms,
      statuses: summaryRecords.map((r) => r.status),
    })
  }
  }
}
await anthropicServer.close()
await openaiServer.close()

const fmt = (n) => n.toLocaleString('en-US')
const pct = (x) => `${(x * 100).toFixed(1)} %`
const usd = (x) => `$${x.toFixed(4)}`

console.log(`# Summary-request economics (${new Date().toISOString().slice(0, 10)})`)
console.log('')
console.log(`Local servers implementing the documented prompt-cache accounting (benchmark/CACHE-RULES.md); tokens counted with o200k.`)
console.log(`Prices (USD per million tokens, list prices read ${PRICE_DATE}): Claude Sonnet 4.5 $3 input / $15 output, Claude Opus 4.6 $5 / $25,`)
console.log(`cache writes 1.25× input, cache reads 0.1× input (platform.claude.com/docs/en/about-claude/pricing); gpt-5 $1.25 / $10, cached input $0.125 (developers.openai.com/api/docs/pricing).`)
console.log(`System prompts and tools are synthetic stand-ins (benchmark/economics/synthetic-agent.mjs): the recordings have none. ${THINKING ? 'Thinking ON (budget 4,096) for the Claude sessions.' : 'No thinking.'}${MODEL ? ` Claude sessions run as ${MODEL}.` : ''}`)
console.log(`The library ${libraryReportsUsage ? 'reports result.summaryUsage; it is checked against what the server billed' : 'does not report result.summaryUsage yet: usage is read from the server\'s records'}.`)
console.log('')
for (const format of ['anthropic', 'openai']) {
  const priceNames = format === 'anthropic' ? ['Sonnet 4.5', 'Opus 4.6'] : ['gpt-5']
  console.log(format === 'anthropic' ? '## Claude Code sessions (Anthropic Messages)' : '## mini-swe-agent and OpenHands sessions (OpenAI Chat Completions)')
  console.log('')
  console.log(`| session | loop caching | asked | sent | requests (ok) | summary input | cache read | cache write | full price | read share | output | ${priceNames.map((p) => `cost ${p}`).join(' | ')} | result |`)
  console.log(`|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|${priceNames.map(() => '---:').join('|')}|---|`)
  for (const r of rows.filter((row) => row.format === format)) {
    const prefix = r.prefixDiffersAt === null ? '' : r.prefixDiffersAt === -1 ? ', loop prefix identical' : `, differs from the loop at message ${r.prefixDiffersAt}`
    const result = r.mode === 'reference' ? `reference; ${r.ms} ms` : [r.error ?? (r.compacted ? 'compacted' : 'not compacted'), r.check, `${r.ms} ms`].join('; ')
    console.log(
      `| ${r.session} | ${r.loop} | ${r.mode} | ${r.used}${prefix} | ${r.usage.requests} (${r.usage.ok}) | ${fmt(r.input)} | ${fmt(r.usage.cacheReadTokens)} | ${fmt(r.usage.cacheWriteTokens)} | ${fmt(r.usage.inputTokens)} | ${pct(r.readShare)} | ${fmt(r.usage.outputTokens)} | ${priceNames.map((p) => usd(r.costs[p])).join(' | ')} | ${result} |`,
    )
  }
  console.log('')
  console.log(`| session | loop's last prompt | ${priceNames.map((p) => `shared ${p}`).join(' | ')} | ${priceNames.map((p) => `transcript ${p}`).join(' | ')} | transcript ÷ shared | shared read share | target ≥ ${TARGET_READ_SHARE * 100} % | 'auto' sent | 'auto' ${priceNames[0]} | reference ${priceNames[0]} | transcript ÷ reference | reference read share |`)
  console.log(`|---|---:|${priceNames.map(() => '---:').join('|')}|${priceNames.map(() => '---:').join('|')}|---:|---:|---|---|---:|---:|---:|---:|`)
  const mainLoop = format === 'anthropic' ? 'breakpoints' : 'automatic'
  for (const session of [...new Set(rows.filter((r) => r.format === format).map((r) => r.session))]) {
    const of = (mode) => rows.find((r) => r.session === session && r.loop === mainLoop && r.mode === mode)
    const shared = of('shared')
    const transcript = of('transcript')
    const p0 = priceNames[0]
    const reference = of('reference')
    const auto = of('auto')
    const ratio = (a, b) => (b.costs[p0] > 0 ? `${(a.costs[p0] / b.costs[p0]).toFixed(2)}×` : '—')
    const met = shared.usage.ok === 0 ? 'no summary call' : shared.readShare >= TARGET_READ_SHARE ? 'met' : `not met (sent: ${shared.used})`
    console.log(
      `| ${session} | ${fmt(shared.loopPromptTokens)} | ${priceNames.map((p) => usd(shared.costs[p])).join(' | ')} | ${priceNames.map((p) => usd(transcript.costs[p])).join(' | ')} | ${ratio(transcript, shared)} | ${pct(shared.readShare)} | ${met} | ${auto.used} | ${usd(auto.costs[p0])} | ${usd(reference.costs[p0])} | ${ratio(transcript, reference)} | ${pct(reference.readShare)} |`,
    )
  }
  console.log('')
  if (format !== 'anthropic') continue
  // What the loop's own caching changes: 'auto' must never pay more than the transcript.
  console.log(`### What the loop's caching changes (${priceNames[0]} prices)`)
  console.log('')
  console.log(`| session | loop caching | 'auto' sent | 'auto' read share | 'auto' cost | transcript cost | 'auto' ÷ transcript | 'shared' read share | 'shared' cost | warnings about caching |`)
  console.log('|---|---|---|---:|---:|---:|---:|---:|---:|---:|')
  for (const session of [...new Set(rows.filter((r) => r.format === format).map((r) => r.session))]) {
    for (const loop of ANTHROPIC_LOOPS) {
      const of = (mode) => rows.find((r) => r.session === session && r.loop === loop && r.mode === mode)
      const [auto, transcript, shared] = [of('auto'), of('transcript'), of('shared')]
      const p0 = priceNames[0]
      const ratio = transcript.costs[p0] > 0 ? `${(auto.costs[p0] / transcript.costs[p0]).toFixed(2)}×` : '—'
      console.log(
        `| ${session} | ${loop} | ${auto.used} | ${pct(auto.readShare)} | ${usd(auto.costs[p0])} | ${usd(transcript.costs[p0])} | ${ratio} | ${pct(shared.readShare)} | ${usd(shared.costs[p0])} | ${auto.warnings} |`,
      )
    }
  }
  console.log('')
}
console.log(`Run time: ${((Date.now() - started) / 1000).toFixed(1)} s.`)
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ date: new Date().toISOString(), prices: PRICES, priceDate: PRICE_DATE, rows }, null, 2))
