// npm run bench — context-compact against the JavaScript tokenizers, in one run: gpt-tokenizer,
// js-tiktoken and tiktoken (WASM), the exact o200k_base ones, and @anthropic-ai/tokenizer (a
// different vocabulary, for reference). Their versions are pinned in devDependencies and printed.
//
// Measures (SPEC §9), interleaved round by round (every measurement once per round, the order
// of the tokenizers rotated), and reports medians and ratios:
//   1. countTokens on 200K tokens, first call in a fresh process (child processes), with the
//      module's load time reported separately;
//   2. warm countTokens on 200K-token conversations not seen before: every round has its own
//      conversation (its own seed), generated in a child process so that no tokenizer in this
//      process has seen its text, and every tokenizer gets its own fresh objects (JSON.parse)
//      after a full GC; all count the same messages the same way, and the totals of the exact
//      tokenizers must be identical (to each other and to the generator's count);
//   3. Compactor.shouldCompact after appending one message to a 200K conversation, and after
//      appending text in place to its last message (a streamed reply: the cache must see it);
//   4. compactMessages on 200K with an instant summarizer: overhead, and peak memory (child
//      processes) against the messages' JSON size;
//   5. scaling of countTokens and compactMessages over 20K, 200K and 2M tokens;
//   6. the crossing: reading the message objects into Rust, and counting, against the whole
//      countTokens call (and JSON.stringify of the messages alone, for comparison);
//   7. never twice, never waiting (SPEC §4.11): the wait at the threshold crossing of a 200K
//      conversation, a Compactor in the foreground against one with `background`, with a local
//      OpenAI-compatible summary endpoint of realistic latency; and the LLM calls of the
//      chat-app pattern (compactMessages on the whole history, 20 requests past the threshold)
//      with and without checkpoints;
//   8. the step below the threshold (benchmark/counting/step.mjs): Compactor.shouldCompact after appending
//      1 and 8 messages to real sessions of 400K and 2M tokens, against counting the whole list.
//
// Environment:
//   BENCH_SAMPLES        rounds (default 21): samples of every in-process measurement
//   BENCH_FRESH_SAMPLES  rounds that also spawn fresh processes (default 7)
//   BENCH_2M_SAMPLES     rounds that also measure 2M tokens (default 5)
//   BENCH_INCREMENTAL    shouldCompact samples per round (default 20)
//   BENCH_SUMMARY_LATENCY_MS  how long the local summary endpoint takes to answer (default 3000)
//   BENCH_BACKGROUND_SAMPLES  threshold crossings measured each way (default 5)
//   BENCH_STEP_SAMPLES   steps measured at each size of section 8 (default 200)
//   NAPI_RS_NATIVE_LIBRARY_PATH  the .node file to measure (a release build!)

import { createRequire } from 'node:module'
import { createServer } from 'node:http'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import { tmpdir, cpus, totalmem, platform, release, arch } from 'node:os'
import { join, dirname, basename } from 'node:path'
import { fileURLToPath } from 'node:url'

import { stepBench } from './step.mjs'
import { env, fmt, gc, median, time, timeAsync } from '../timing.mjs'

const require = createRequire(import.meta.url)
const here = dirname(fileURLToPath(import.meta.url))
const library = require('../../index.js')
const native = require('../../lib/addon/native.js')
const reference = require('./reference-count.cjs')

const ROUNDS = env('BENCH_SAMPLES', 21)
const FRESH_ROUNDS = Math.min(ROUNDS, env('BENCH_FRESH_SAMPLES', 7))
const BIG_ROUNDS = Math.min(ROUNDS, env('BENCH_2M_SAMPLES', 5))
const INCREMENTAL = env('BENCH_INCREMENTAL', 20)

const started = performance.now()
const log = (...args) => console.error(...args)
const now = () => performance.now()
const ratio = (x) => `${x.toFixed(1)}×`
const mb = (bytes) => (bytes / 1048576).toFixed(1)

// ---------------------------------------------------------------------------------------------
// Machine and binary

const machine = `${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}, ${(totalmem() / 2 ** 30).toFixed(1)} GB, ${platform()} ${release()} ${arch()}, Node ${process.version}`
const binary = process.env.NAPI_RS_NATIVE_LIBRARY_PATH || '(the working tree\'s .node file, via lib/addon/native.js)'
log(`# context-compact benchmark`)
log(`machine: ${machine}`)
log(`addon:   ${binary}`)
log(`rounds:  ${ROUNDS} (fresh processes: ${FRESH_ROUNDS}, 2M: ${BIG_ROUNDS}, shouldCompact samples per round: ${INCREMENTAL})`)
if (!process.env.NAPI_RS_NATIVE_LIBRARY_PATH) {
  log('note: set NAPI_RS_NATIVE_LIBRARY_PATH to a release build; the tree\'s .node file may be a debug build')
}

// ---------------------------------------------------------------------------------------------
// Install size: the platform addon as installed and as downloaded (gzip -9), beside the installed
// size of the tokenizers users would pick instead (their package folders in node_modules).

function installSizes() {
  const addon = process.env.NAPI_RS_NATIVE_LIBRARY_PATH
    || readdirSync(join(here, '..')).filter((name) => /^context-compact\..+\.node$/.test(name)).map((name) => join(here, '..', name))[0]
  const bytes = addon ? statSync(addon).size : NaN
  const gzipped = addon ? gzipSync(readFileSync(addon), { level: 9 }).length : NaN
  const folderBytes = (path) => {
    let total = 0
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name)
      if (entry.isDirectory()) total += folderBytes(full)
      else if (entry.isFile()) total += statSync(full).size
    }
    return total
  }
  // A package's folder: its entry point's path up to `node_modules/<name>` (going up to the
  // nearest package.json stops too early: some packages have one in their dist folders).
  const packageDir = (name) => {
    const entry = require.resolve(name)
    const at = entry.lastIndexOf(join('node_modules', name))
    return at < 0 ? null : entry.slice(0, at + join('node_modules', name).length)
  }
  const peers = {}
  for (const name of ['tiktoken', 'js-tiktoken', 'gpt-tokenizer']) {
    let dir = null
    try {
      dir = packageDir(name)
    } catch {} // not installed
    peers[name] = dir ? folderBytes(dir) : null
  }
  return { addon, bytes, gzipped, peers }
}

function installSizeLines(sizes) {
  // Decimal megabytes, as npm reports package sizes; the addon's exact bytes beside them.
  const size = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`
  const exact = (bytes) => `${bytes.toLocaleString('en-US')} bytes`
  const row = [`| installed | ${size(sizes.bytes)} (${exact(sizes.bytes)}, \`${sizes.addon ? basename(sizes.addon) : 'no addon'}\`) |`]
  const download = [`| download (gzip, zlib level 9) | ${size(sizes.gzipped)} (${exact(sizes.gzipped)}) |`]
  for (const [name, bytes] of Object.entries(sizes.peers)) {
    row.push(bytes == null ? ' not installed |' : ` ${size(bytes)} (${ratio(bytes / sizes.bytes)}) |`)
    download.push(' |')
  }
  return [
    `| Install size | context-compact | ${Object.keys(sizes.peers).join(' | ')} | target |`,
    `|---|---:|${Object.keys(sizes.peers).map(() => '---:|').join('')}---|`,
    `${row.join('')} ≤ 15 MB ${mark(sizes.bytes <= 15e6)} |`,
    `${download.join('')} ≤ 6 MB ${mark(sizes.gzipped <= 6e6)} |`,
    '',
    'context-compact: the platform addon (one per platform, the only one installed); the others: their package folder in node_modules. Ratios: that package ÷ context-compact.',
  ]
}

// ---------------------------------------------------------------------------------------------
// Conversations

const countLibrary = library.countTokens
// The peers: `count(text)` of each, and `count(messages)` built from it the library's way.
const EXACT = ['gpt-tokenizer', 'js-tiktoken', 'tiktoken'] // o200k_base: identical totals required
const ANTHROPIC = '@anthropic-ai/tokenizer' // another vocabulary: its totals are only reported
const versions = Object.fromEntries(reference.PEERS.map((name) => [name, reference.versionOf(name)]))
const textCounters = Object.fromEntries(reference.PEERS.map((name) => [name, reference.loadPeer(name)]))
const messageCounters = Object.fromEntries(reference.PEERS.map((name) => [name, reference.makeMessageCounter(textCounters[name])]))
log(`peers:   ${reference.PEERS.map((name) => `${name} ${versions[name]}`).join(', ')}`)

const dir = mkdtempSync(join(tmpdir(), 'context-compact-bench-'))

// Conversations are generated in a child process (generate.mjs, seeded): this process's
// tokenizers have never counted their text, so the first count of each is of content not seen
// before. They arrive as JSON text, as an agent's history arrives from an API or a file, and
// are parsed into new objects for every use that must not be cached.
function generateAll(targetTokens, seeds) {
  const [ms, list] = time(() => child(['generate', dir, String(targetTokens), ...seeds.map(String)]))
  return list.map(({ seed, tokens, file }) => {
    const json = readFileSync(file, 'utf8')
    rmSync(file)
    return { seed, tokens, json, messages: null, generateMs: ms / list.length }
  })
}
const messagesOf = (c) => (c.messages ??= JSON.parse(c.json))

log('\ngenerating conversations (child process) …')
const K200 = Math.max(2, ROUNDS) // a distinct 200K conversation (seed) for every round
const conv20 = generateAll(20_000, [2000, 2001, 2002, 2003])
const conv200 = generateAll(200_000, Array.from({ length: K200 }, (_, i) => 1000 + i))
const conv2M = generateAll(2_000_000, [3000, 3001])
// The Compactor's conversation, and the messages appended to it.
const [base200, pool200] = generateAll(200_000, [4001, 4000])
log(`  20K: ${fmt(median(conv20.map((c) => c.generateMs)))} ms, 200K: ${fmt(median(conv200.map((c) => c.generateMs)))} ms, 2M: ${fmt(median(conv2M.map((c) => c.generateMs)))} ms to generate (median)`)

// ---------------------------------------------------------------------------------------------
// Correctness: identical totals. The round conversations (200K) are checked in the rounds, by
// the counts measured there, so that nothing counts them before.

log('\nchecking that the exact tokenizers give identical totals …')
const checks = []
let mismatch = false
function check(label, c, totals) {
  const lib = totals.library
  const ok = lib === c.tokens && EXACT.every((name) => totals[name] === undefined || totals[name] === lib)
  if (!ok) mismatch = true
  checks.push({ label, seed: c.seed, messages: messagesOf(c).length, totals, generator: c.tokens, ok })
  const peers = EXACT.map((name) => `${name} ${totals[name] ?? '(skipped)'}`).join(', ')
  const anthropic = totals[ANTHROPIC] === undefined ? '' : `; ${ANTHROPIC} (other vocabulary) ${totals[ANTHROPIC]}`
  log(`  ${ok ? 'ok      ' : 'MISMATCH'} ${label.padEnd(4)} seed ${c.seed}: ${messagesOf(c).length} messages, context-compact ${lib}, ${peers}, generator ${c.tokens}${anthropic}`)
}
for (const [label, list, peers] of [['20K', conv20, EXACT], ['2M', conv2M, ['gpt-tokenizer', 'tiktoken']], ['200K', [base200, pool200], EXACT]]) {
  for (const c of list) {
    const totals = { library: countLibrary(messagesOf(c)) }
    for (const name of peers) totals[name] = messageCounters[name](messagesOf(c))
    check(label, c, totals)
  }
}
const fail = () => {
  console.error('\nFAIL: the token counts differ between context-compact and the reference tokenizers (see above).')
  process.exit(1)
}
if (mismatch) fail()

// ---------------------------------------------------------------------------------------------
// Setup for the rounds

const file200 = join(dir, 'conversation-200k.json')
const file20 = join(dir, 'conversation-20k.json')
writeFileSync(file200, base200.json)
writeFileSync(file20, conv20[0].json)
const file2M = join(dir, 'conversation-2m.json')
writeFileSync(file2M, conv2M[0].json)
const MEMORY_2M_ROUNDS = Math.min(FRESH_ROUNDS, 3)
const compactOptions = (sessionId) => ({
  summarizer: async () => 'summary',
  force: true,
  outputDir: join(dir, 'archives'),
  sessionId,
})

function child(args) {
  const out = spawnSync(process.execPath, [join(here, 'child.cjs'), ...args], { encoding: 'utf8', env: process.env })
  if (out.status !== 0) throw new Error(`child ${args.join(' ')} failed:\n${out.stderr}`)
  return JSON.parse(out.stdout.trim().split('\n').pop())
}

const compactor = new library.Compactor({})
const base = messagesOf(base200).slice()
compactor.shouldCompact(base) // counts and caches every message once
let poolIndex = 0
function nextAppended() {
  const list = messagesOf(pool200)
  const i = 1 + (poolIndex++ % (list.length - 1))
  // A new object every time, so the Compactor cannot have seen it.
  return poolIndex < list.length ? list[i] : structuredClone(list[i])
}
// A streamed reply: an assistant message (a copy, counted once untimed), then a chunk of text
// appended in place to its last text block, as a streaming loop does before calling
// shouldCompact again.
const replies = messagesOf(pool200).filter((m) => m.role === 'assistant' && Array.isArray(m.content) && m.content.some((b) => b.type === 'text'))
const chunks = ['The test fails because the fixture', ' path is resolved relative to the', ' working directory, not the file; ', 'fixing it in `loadFixture`.\n']
let replyIndex = 0
function streamedReply() {
  return structuredClone(replies[replyIndex++ % replies.length])
}
function appendChunk(message, n) {
  const blocks = message.content
  for (let b = blocks.length - 1; b >= 0; b--) {
    if (blocks[b].type === 'text') {
      blocks[b].text += chunks[n % chunks.length]
      return
    }
  }
}

const implNames = ['library', ...reference.PEERS]
const perImpl = () => Object.fromEntries(implNames.map((name) => [name, []]))
const s = {
  fresh: perImpl(),
  freshRequire: perImpl(),
  warm: perImpl(),
  stringify: [],
  nativeParse: [],
  nativeCount: [],
  crossingWhole: [],
  incremental: [],
  streamed: [],
  memory: [],
  memoryCount: [],
  memory2M: [],
  count: { '20K': [], '200K': [], '2M': [] },
  compact: { '20K': [], '200K': [], '2M': [] },
}
const warmImpls = { library: countLibrary, ...messageCounters }

// Warm-up: JIT of every path, tables of every tokenizer, the addon's thread pools.
for (const c of [conv20[1], pool200]) for (const name of implNames) warmImpls[name](messagesOf(c))
await library.compactMessages(messagesOf(conv20[1]), compactOptions('warmup'))

// ---------------------------------------------------------------------------------------------
// Rounds

log(`\nmeasuring ${ROUNDS} rounds …`)
for (let round = 0; round < ROUNDS; round++) {
  const rotated = implNames.map((_, i) => implNames[(i + round) % implNames.length])

  // 1. First call in a fresh process.
  if (round < FRESH_ROUNDS) {
    for (const name of rotated) {
      const r = child(['fresh', name, file200])
      if (name !== ANTHROPIC && r.tokens !== base200.tokens) throw new Error(`fresh ${name} counted ${r.tokens}, expected ${base200.tokens}`)
      s.fresh[name].push(r.requireMs + r.firstCountMs)
      s.freshRequire[name].push(r.requireMs)
    }
    // 4b. Peak memory of compactMessages, in a fresh process.
    s.memory.push(child(['memory', 'compact', file200, file20, join(dir, 'archives')]))
    s.memoryCount.push(child(['memory', 'count', file200, file20, join(dir, 'archives')]))
    if (round < MEMORY_2M_ROUNDS) s.memory2M.push(child(['memory', 'compact', file2M, file20, join(dir, 'archives')]))
  }

  // 2. Warm countTokens on a conversation nothing in this process has counted before.
  const c = conv200[round % conv200.length]
  const totals = {}
  for (const name of rotated) {
    const messages = JSON.parse(c.json) // objects nobody has seen, so no per-object cache can help
    gc()
    const [ms, total] = time(() => warmImpls[name](messages))
    totals[name] = total
    s.warm[name].push(ms)
  }
  check('200K', c, totals)
  if (mismatch) fail()
  s.count['200K'].push(s.warm.library[s.warm.library.length - 1])

  // 6. The crossing: reading new objects (+ validation), then the native count and the whole
  // call on the same objects, and JSON.stringify alone.
  gc()
  const crossing = JSON.parse(c.json) // after the GC, so that its aftermath does not land in one row
  s.nativeParse.push(time(() => native.validateJson(crossing))[0])
  s.nativeCount.push(time(() => native.countTokensJson(crossing))[0])
  s.crossingWhole.push(time(() => countLibrary(crossing))[0])
  s.stringify.push(time(() => JSON.stringify(crossing))[0])

  // 3. Compactor.shouldCompact after one appended message.
  for (let i = 0; i < INCREMENTAL; i++) {
    base.push(nextAppended())
    const [ms] = time(() => compactor.shouldCompact(base))
    s.incremental.push(ms)
    base.pop()
  }

  // 3b. Compactor.shouldCompact after text is appended in place to the last message.
  for (let i = 0; i < INCREMENTAL; i++) {
    const reply = streamedReply()
    base.push(reply)
    compactor.shouldCompact(base)
    appendChunk(reply, i)
    const [ms] = time(() => compactor.shouldCompact(base))
    s.streamed.push(ms)
    base.pop()
  }

  // 4a. compactMessages overhead on 200K.
  gc()
  const [compactMs, result] = await timeAsync(() => library.compactMessages(crossing, compactOptions(`r${round}`)))
  if (!result.compacted) throw new Error(`compactMessages did not compact: ${result.error && result.error.message}`)
  s.compact['200K'].push(compactMs)

  // 5. Scaling: 20K and 2M.
  const c20 = conv20[round % conv20.length]
  gc()
  s.count['20K'].push(time(() => countLibrary(messagesOf(c20)))[0])
  gc()
  s.compact['20K'].push((await timeAsync(() => library.compactMessages(messagesOf(c20), compactOptions(`s${round}`))))[0])
  if (round < BIG_ROUNDS) {
    const c2M = conv2M[round % conv2M.length]
    gc()
    s.count['2M'].push(time(() => countLibrary(messagesOf(c2M)))[0])
    gc()
    s.compact['2M'].push((await timeAsync(() => library.compactMessages(messagesOf(c2M), compactOptions(`b${round}`))))[0])
  }
  log(`  round ${round + 1}/${ROUNDS}: warm 200K ${implNames.map((n) => `${n} ${fmt(s.warm[n].at(-1))} ms`).join(', ')}; compact ${fmt(compactMs)} ms (${((now() - started) / 1000).toFixed(0)} s)`)
}
// ---------------------------------------------------------------------------------------------
// 7. Never twice, never waiting

const LATENCY = env('BENCH_SUMMARY_LATENCY_MS', 3000)
const WAIT_ROUNDS = env('BENCH_BACKGROUND_SAMPLES', 5)

// An OpenAI-compatible Chat Completions endpoint on 127.0.0.1 that answers after `LATENCY` ms,
// as a summary model does, and counts its requests.
const endpoint = await new Promise((resolve) => {
  const state = { requests: 0, url: '', server: null }
  state.server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const n = ++state.requests
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({
          id: `chatcmpl-${n}`,
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: `## Goal\nFix the failing tests (summary ${n}).` }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1000, completion_tokens: 100 },
        }))
      }, LATENCY)
    })
  })
  state.server.listen(0, '127.0.0.1', () => {
    state.url = `http://127.0.0.1:${state.server.address().port}`
    resolve(state)
  })
})

// The index where the prefix of `counts` reaches `tokens`.
const prefixReaching = (counts, tokens) => {
  let total = 0
  for (let i = 0; i < counts.length; i++) {
    total += counts[i]
    if (total >= tokens) return i + 1
  }
  return counts.length
}

// One threshold crossing of a 200K conversation by a Compactor whose loop compacts every turn:
// at 85 % of the threshold (with `background`: the summary starts), at 95 % (it is ready: the
// agent's turns take longer than one summary call), then the whole conversation, which reaches
// the threshold. Returns how long that last call took and how many summary requests it made.
async function thresholdCrossing(c, background, round) {
  const full = JSON.parse(c.json)
  const counts = native.countEachJson(full)
  const total = counts.reduce((a, b) => a + b, 0)
  const limit = Math.floor(total / 0.92)
  const threshold = Math.ceil(limit * 0.92)
  let ready
  const isReady = new Promise((resolve) => (ready = resolve))
  const compactor = new library.Compactor({
    provider: 'openai',
    apiKey: 'sk-bench',
    baseUrl: endpoint.url,
    model: 'gpt-4o-mini',
    maxRetries: 0,
    contextTokenLimit: limit,
    outputDir: join(dir, 'background'),
    sessionId: `${background ? 'bg' : 'fg'}-${round}`,
    background: background ? { atRatio: 0.8 } : undefined,
    onEvent: (event) => event.type === 'background_ready' && ready(),
  })
  const first = await compactor.compact(full.slice(0, prefixReaching(counts, threshold * 0.85)))
  if (background && first.background?.state !== 'started') throw new Error(`the background summary did not start: ${JSON.stringify(first.background)}`)
  if (background) await isReady
  await compactor.compact(full.slice(0, prefixReaching(counts, threshold * 0.95)))
  const before = endpoint.requests
  gc()
  const [ms, result] = await timeAsync(() => compactor.compact(full))
  if (!result.compacted) throw new Error(`the threshold crossing did not compact: ${result.error && result.error.message}`)
  if (background && result.background?.state !== 'applied') throw new Error(`the background summary was not applied: ${JSON.stringify(result.background)}`)
  await compactor.close()
  return { ms, requests: endpoint.requests - before }
}

// The chat-app pattern: the whole history kept, `compactMessages` on it once per request for 20
// requests past the threshold (the first at half the conversation, each adding the next 1/40 of
// it, so that the history doubles and a new level is needed on the way), an instant summarizer
// counting its calls.
async function chatApp(c, checkpoints) {
  const full = JSON.parse(c.json)
  const start = Math.floor(full.length * 0.5)
  const step = Math.max(1, Math.floor((full.length - start) / 20))
  const limit = Math.floor(countLibrary(full.slice(0, start)) / 0.92)
  let calls = 0
  const summarizer = async () => {
    calls++
    return '## Goal\nFix the failing tests.'
  }
  const times = []
  for (let request = 0; request < 20; request++) {
    const history = full.slice(0, start + request * step)
    const [ms, result] = await timeAsync(() =>
      library.compactMessages(history, { summarizer, contextTokenLimit: limit, outputDir: join(dir, 'chat'), sessionId: `chat-${checkpoints}`, checkpoints }),
    )
    if (!result.compacted) throw new Error(`request ${request} did not compact: ${result.error && result.error.message}`)
    times.push(ms)
  }
  return { calls, ms: median(times) }
}

log(`\nnever twice, never waiting: ${WAIT_ROUNDS} threshold crossings each way, summary endpoint answering in ${LATENCY} ms …`)
const crossings = { foreground: [], background: [] }
for (let round = 0; round < WAIT_ROUNDS; round++) {
  const c = conv200[round % conv200.length]
  for (const mode of round % 2 ? ['background', 'foreground'] : ['foreground', 'background']) {
    crossings[mode].push(await thresholdCrossing(c, mode === 'background', round))
  }
  log(`  round ${round + 1}/${WAIT_ROUNDS}: foreground ${fmt(crossings.foreground.at(-1).ms)} ms, background ${fmt(crossings.background.at(-1).ms)} ms`)
}
const chat = { off: await chatApp(conv200[0], false), on: await chatApp(conv200[0], true) }
log(`  chat-app pattern: ${chat.off.calls} summary calls in 20 requests without checkpoints, ${chat.on.calls} with`)
endpoint.server.closeAllConnections?.()
endpoint.server.close()

rmSync(dir, { recursive: true, force: true })
for (const name of reference.PEERS) textCounters[name].free?.()

// ---------------------------------------------------------------------------------------------
// Report

const med = (xs) => median(xs)
const lib = {
  fresh: med(s.fresh.library),
  freshRequire: med(s.freshRequire.library),
  warm: med(s.warm.library),
  incremental: med(s.incremental),
  streamed: med(s.streamed),
  compact: med(s.compact['200K']),
}
const peer = Object.fromEntries(reference.PEERS.map((name) => [name, {
  fresh: med(s.fresh[name]),
  freshRequire: med(s.freshRequire[name]),
  warm: med(s.warm[name]),
  // The median of the per-round ratios (that round's time ÷ context-compact's).
  warmRatio: med(s.warm[name].map((ms, i) => ms / s.warm.library[i])),
}]))
const memRatio = med(s.memory.map((m) => m.peakRssGrowth / m.jsonLength))
const memRatioBytes = med(s.memory.map((m) => m.peakRssGrowth / m.jsonBytes))
const memPeak = med(s.memory.map((m) => m.peakRssGrowth))
const heapGrowth = med(s.memory.map((m) => m.heapGrowth))
const memCountRatio = med(s.memoryCount.map((m) => m.peakRssGrowth / m.jsonLength))
const memCountPeak = med(s.memoryCount.map((m) => m.peakRssGrowth))
const mem2MRatio = med(s.memory2M.map((m) => m.peakRssGrowth / m.jsonLength))
const mem2MPeak = med(s.memory2M.map((m) => m.peakRssGrowth))
const jsonLength = base200.json.length
const jsonBytes = Buffer.byteLength(base200.json)

const perScale = (label, list) => {
  const tokens = med(list.map((c) => c.tokens))
  const messages = med(list.map((c) => messagesOf(c).length))
  const json = med(list.map((c) => c.json.length))
  const count = med(s.count[label])
  const compact = med(s.compact[label])
  return { label, tokens, messages, json, count, compact, countPer100K: (count / tokens) * 1e5, compactPer100K: (compact / tokens) * 1e5 }
}
const scales = [perScale('20K', conv20), perScale('200K', conv200.slice(0, ROUNDS)), perScale('2M', conv2M)]
const linear = (key) => scales[2][key] / scales[1][key]

const warmRatio = peer['gpt-tokenizer'].warmRatio
const mark = (ok) => (ok ? '✅' : '❌')
const crossing = {
  stringify: med(s.stringify),
  parse: med(s.nativeParse),
  nativeCount: med(s.nativeCount),
  whole: med(s.crossingWhole),
}
const command = `${Object.entries(process.env).filter(([k]) => k.startsWith('BENCH_')).map(([k, v]) => `${k}=${v} `).join('')}npm run bench`

const lines = []
const out = (line = '') => lines.push(line)
out(`### Benchmark (\`${command}\`)`)
out()
out(`${machine}. o200k_base; medians of ${ROUNDS} interleaved rounds (fresh-process and memory rows: ${FRESH_ROUNDS}; 2M rows: ${BIG_ROUNDS}). `
  + `Peers: ${reference.PEERS.map((name) => `${name} ${versions[name]}`).join(', ')}. `
  + `Conversations from \`benchmark/generate.mjs\` (generated in a child process, a new one every round): 200K tokens is ${med(conv200.slice(0, ROUNDS).map((c) => messagesOf(c).length))} messages, ${mb(med(conv200.slice(0, ROUNDS).map((c) => c.json.length)))} M JSON characters.`)
out()
const exactHeader = EXACT.map((name) => `${name} ${versions[name]}`)
out(`| 200K-token conversation | context-compact | ${exactHeader.join(' | ')} | target |`)
out(`|---|---:|${EXACT.map(() => '---:|').join('')}---|`)
const cells = (key, withRatio) => EXACT.map((name) => `${fmt(peer[name][key])} ms${withRatio ? ` (${ratio(peer[name][key] / lib[key])})` : ''}`).join(' | ')
out(`| \`countTokens\`, first call in a fresh process (load + count) | ${fmt(lib.fresh)} ms | ${cells('fresh', true)} | ≤ 150 ms ${mark(lib.fresh <= 150)} (required: < 500 ms) |`)
out(`| … of which loading the module (\`require\`) | ${fmt(lib.freshRequire)} ms | ${cells('freshRequire', false)} | |`)
out(`| \`countTokens\`, warm, conversation not seen before | ${fmt(lib.warm)} ms | ${EXACT.map((name) => `${fmt(peer[name].warm)} ms (${ratio(peer[name].warmRatio)})`).join(' | ')} | ≥ 3× faster than gpt-tokenizer ${mark(warmRatio >= 3)} |`)
out(`| \`Compactor.shouldCompact\` after appending one message | ${fmt(lib.incremental)} ms | ${EXACT.map(() => '').join(' | ')} | < 1 ms ${mark(lib.incremental < 1)} |`)
out(`| \`Compactor.shouldCompact\` after appending text in place to the last message (streaming) | ${fmt(lib.streamed)} ms | ${EXACT.map(() => '').join(' | ')} | |`)
out(`| \`compactMessages\` overhead (instant summarizer) | ${fmt(lib.compact)} ms | ${EXACT.map(() => '').join(' | ')} | < 100 ms ${mark(lib.compact < 100)} |`)
out(`| \`compactMessages\` peak RSS growth ÷ JSON size | ${memRatio.toFixed(2)}× (${mb(memPeak)} MB for ${mb(jsonLength)} M chars; ${memRatioBytes.toFixed(2)}× of ${mb(jsonBytes)} MB UTF-8) | ${EXACT.map(() => '').join(' | ')} | ≤ 2× ${mark(memRatio <= 2)} |`)
out(`| \`countTokens\` peak RSS growth ÷ JSON size (for comparison) | ${memCountRatio.toFixed(2)}× (${mb(memCountPeak)} MB) | ${EXACT.map(() => '').join(' | ')} | |`)
out(`| \`compactMessages\` on 2M tokens, peak RSS growth ÷ JSON size (for comparison) | ${mem2MRatio.toFixed(2)}× (${mb(mem2MPeak)} MB for ${mb(conv2M[0].json.length)} M chars) | ${EXACT.map(() => '').join(' | ')} | |`)
out()
out(`Ratios in parentheses: that tokenizer's time ÷ context-compact's (warm row: the median of the per-round ratios). `
  + `Identical totals checked on every conversation, every round (e.g. 200K seed ${conv200[0].seed}: ${conv200[0].tokens} tokens from context-compact, ${EXACT.join(', ')} and the generator).`)
out()
for (const line of installSizeLines(installSizes())) out(line)
out()
const anthropic = peer[ANTHROPIC]
out(`| Another vocabulary (totals differ, not compared) | first call in a fresh process | … of which \`require\` | warm, not seen before |`)
out(`|---|---:|---:|---:|`)
out(`| ${ANTHROPIC} ${versions[ANTHROPIC]} (Claude's legacy tokenizer, WASM; made once, \`encode(text.normalize('NFKC'), 'all')\` as its \`countTokens\` does) | ${fmt(anthropic.fresh)} ms (${ratio(anthropic.fresh / lib.fresh)}) | ${fmt(anthropic.freshRequire)} ms | ${fmt(anthropic.warm)} ms (${ratio(anthropic.warmRatio)}) |`)
out()
out(`| Scaling | tokens | messages | JSON chars | \`countTokens\` (warm) | per 100K tokens | \`compactMessages\` | per 100K tokens |`)
out(`|---|---:|---:|---:|---:|---:|---:|---:|`)
for (const r of scales) {
  out(`| ${r.label} | ${r.tokens} | ${r.messages} | ${mb(r.json)} M | ${fmt(r.count)} ms | ${fmt(r.countPer100K)} ms | ${fmt(r.compact)} ms | ${fmt(r.compactPer100K)} ms |`)
}
out()
out(`2M ÷ 200K time per token: \`countTokens\` ${linear('countPer100K').toFixed(2)}, \`compactMessages\` ${linear('compactPer100K').toFixed(2)} (1.00 = linear) ${mark(linear('countPer100K') < 1.5 && linear('compactPer100K') < 1.5)}`)
out(`(200K \`countTokens\`: the not-seen-before row; 20K and 2M: conversations counted before.)`)
out()
out(`| Where warm \`countTokens\` (200K, new objects) spends its time (measured back to back) | ms | share |`)
out(`|---|---:|---:|`)
const share = (ms) => `${((ms / crossing.nativeCount) * 100).toFixed(0)} %`
out(`| reading the message objects into Rust + validation (native \`validateJson\`, new objects) | ${fmt(crossing.parse)} | ${share(crossing.parse)} |`)
out(`| counting (native \`countTokensJson\` on the same objects − \`validateJson\`) | ${fmt(crossing.nativeCount - crossing.parse)} | ${share(crossing.nativeCount - crossing.parse)} |`)
out(`| native \`countTokensJson\`, right after | ${fmt(crossing.nativeCount)} | 100 % |`)
out(`| the whole \`countTokens\` call, right after | ${fmt(crossing.whole)} | ${share(crossing.whole)} |`)
out(`| for comparison: \`JSON.stringify(messages)\` alone | ${fmt(crossing.stringify)} | ${share(crossing.stringify)} |`)

out()
const waitForeground = med(crossings.foreground.map((x) => x.ms))
const waitBackground = med(crossings.background.map((x) => x.ms))
const sum = (xs) => xs.reduce((a, b) => a + b, 0)
out(`| Never twice, never waiting | foreground | with \`background\` / checkpoints | target |`)
out(`|---|---:|---:|---|`)
out(`| The wait at the threshold crossing: \`Compactor.compact\` on 200K tokens, summary endpoint answering in ${LATENCY} ms (median of ${WAIT_ROUNDS}) | ${fmt(waitForeground)} ms (${sum(crossings.foreground.map((x) => x.requests))} summary requests) | ${fmt(waitBackground)} ms (${sum(crossings.background.map((x) => x.requests))} summary requests) | ≤ 50 ms ${mark(waitBackground <= 50)} |`)
out(`| LLM calls in the chat-app pattern: \`compactMessages\` on the whole history, 20 requests past the threshold | ${chat.off.calls} (\`checkpoints: false\`; ${fmt(chat.off.ms)} ms a request, instant summarizer) | ${chat.on.calls} (${fmt(chat.on.ms)} ms a request) | only when a new level is needed |`)

console.log('\n' + lines.join('\n'))

// ---------------------------------------------------------------------------------------------
// 8. The step below the threshold at 400K and 2M tokens (issue 39; benchmark/counting/step.mjs)

function stepSection() {
  const { markdown } = stepBench(library, { samples: env('BENCH_STEP_SAMPLES', 200) })
  console.log('\n' + markdown)
}
stepSection()
log(`\nheap growth during compactMessages (200K, median): ${mb(heapGrowth)} MB; peak RSS growth ${mb(memPeak)} MB (${s.memory[0]?.exactPeak ? 'VmHWM' : 'polled RSS'})`)
const minOf = (xs) => Math.min(...xs)
log(`warm 200K minimum: ${implNames.map((name) => `${name} ${fmt(minOf(s.warm[name]))} ms`).join(', ')}; ratio of the medians gpt-tokenizer ÷ context-compact: ${(peer['gpt-tokenizer'].warm / lib.warm).toFixed(2)}`)
log(`total time ${((now() - started) / 1000).toFixed(0)} s`)
