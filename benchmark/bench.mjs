// npm run bench — context-compact against js-tiktoken and gpt-tokenizer, in one run.
//
// Measures (SPEC §9), interleaved round by round (every measurement once per round, the order
// of the three tokenizers rotated), and reports medians and ratios:
//   1. countTokens on 200K tokens, first call in a fresh process (child processes), with the
//      module's load time reported separately;
//   2. warm countTokens on 200K-token conversations not seen before (a different seed each
//      round), the three implementations counting the same messages the same way, with their
//      totals checked to be identical;
//   3. Compactor.shouldCompact after appending one message to a 200K conversation, and after
//      appending text in place to its last message (a streamed reply: the cache must see it);
//   4. compactMessages on 200K with an instant summarizer: overhead, and peak memory (child
//      processes) against the messages' JSON size;
//   5. scaling of countTokens and compactMessages over 20K, 200K and 2M tokens;
//   6. the crossing: reading the message objects into Rust, and counting, against the whole
//      countTokens call (and JSON.stringify of the messages alone, for comparison).
//
// Environment:
//   BENCH_SAMPLES        rounds (default 21): samples of every in-process measurement
//   BENCH_FRESH_SAMPLES  rounds that also spawn fresh processes (default 7)
//   BENCH_2M_SAMPLES     rounds that also measure 2M tokens (default 5)
//   BENCH_INCREMENTAL    shouldCompact samples per round (default 20)
//   NAPI_RS_NATIVE_LIBRARY_PATH  the .node file to measure (a release build!)

import { createRequire } from 'node:module'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs'
import { tmpdir, cpus, totalmem, platform, release, arch } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import v8 from 'node:v8'
import vm from 'node:vm'

import { generateConversationWithCount } from './generate.mjs'

const require = createRequire(import.meta.url)
const here = dirname(fileURLToPath(import.meta.url))
const library = require('../index.js')
const native = require('../binding.js')
const reference = require('./reference-count.cjs')

v8.setFlagsFromString('--expose-gc')
const gc = vm.runInNewContext('gc')

const env = (name, fallback) => {
  const value = Number(process.env[name])
  return Number.isFinite(value) && value > 0 ? Math.floor(value) : fallback
}
const ROUNDS = env('BENCH_SAMPLES', 21)
const FRESH_ROUNDS = Math.min(ROUNDS, env('BENCH_FRESH_SAMPLES', 7))
const BIG_ROUNDS = Math.min(ROUNDS, env('BENCH_2M_SAMPLES', 5))
const INCREMENTAL = env('BENCH_INCREMENTAL', 20)

const started = performance.now()
const log = (...args) => console.error(...args)
const now = () => performance.now()
const median = (xs) => {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}
const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3))
const ratio = (x) => `${x.toFixed(1)}×`
const mb = (bytes) => (bytes / 1048576).toFixed(1)
const time = (fn) => {
  const t0 = now()
  const value = fn()
  return [now() - t0, value]
}
const timeAsync = async (fn) => {
  const t0 = now()
  const value = await fn()
  return [now() - t0, value]
}

// ---------------------------------------------------------------------------------------------
// Machine and binary

const machine = `${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}, ${(totalmem() / 2 ** 30).toFixed(1)} GB, ${platform()} ${release()} ${arch()}, Node ${process.version}`
const binary = process.env.NAPI_RS_NATIVE_LIBRARY_PATH || '(the working tree\'s .node file, via binding.js)'
log(`# context-compact benchmark`)
log(`machine: ${machine}`)
log(`addon:   ${binary}`)
log(`rounds:  ${ROUNDS} (fresh processes: ${FRESH_ROUNDS}, 2M: ${BIG_ROUNDS}, shouldCompact samples per round: ${INCREMENTAL})`)
if (!process.env.NAPI_RS_NATIVE_LIBRARY_PATH) {
  log('note: set NAPI_RS_NATIVE_LIBRARY_PATH to a release build; the tree\'s .node file may be a debug build')
}

// ---------------------------------------------------------------------------------------------
// Conversations

const countLibrary = library.countTokens
const gptText = reference.loadGptTokenizer()
const jstText = reference.loadJsTiktoken()
const countGpt = reference.makeMessageCounter(gptText)
const countJst = reference.makeMessageCounter(jstText)

function generate(targetTokens, seed) {
  const [ms, generated] = time(() => generateConversationWithCount({ targetTokens, seed }))
  // Through JSON, as an agent's history arrives from an API or a file (flat strings, plain objects).
  const json = JSON.stringify(generated.messages)
  return { messages: JSON.parse(json), tokens: generated.tokens, seed, generateMs: ms, json }
}

log('\ngenerating conversations …')
const K200 = Math.max(2, ROUNDS) // a distinct 200K conversation (seed) for every round
const conv20 = Array.from({ length: 4 }, (_, i) => generate(20_000, 2000 + i))
const conv200 = Array.from({ length: K200 }, (_, i) => generate(200_000, 1000 + i))
const conv2M = Array.from({ length: 2 }, (_, i) => generate(2_000_000, 3000 + i))
const pool200 = generate(200_000, 4000) // messages appended to the Compactor's conversation
log(`  20K: ${fmt(median(conv20.map((c) => c.generateMs)))} ms, 200K: ${fmt(median(conv200.map((c) => c.generateMs)))} ms, 2M: ${fmt(median(conv2M.map((c) => c.generateMs)))} ms to generate (median)`)

// ---------------------------------------------------------------------------------------------
// Correctness: identical totals

log('\nchecking that the three tokenizers give identical totals …')
const checks = []
let mismatch = false
for (const [label, list, withJst] of [['20K', conv20, true], ['200K', conv200, true], ['2M', conv2M, false]]) {
  for (const c of list) {
    const lib = countLibrary(c.messages)
    const gpt = countGpt(c.messages)
    const jst = withJst ? countJst(c.messages) : null
    const ok = lib === gpt && lib === c.tokens && (jst === null || jst === lib)
    if (!ok) mismatch = true
    checks.push({ label, seed: c.seed, messages: c.messages.length, lib, gpt, jst, generator: c.tokens, ok })
  }
}
for (const c of checks) {
  log(`  ${c.ok ? 'ok      ' : 'MISMATCH'} ${c.label.padEnd(4)} seed ${c.seed}: ${c.messages} messages, context-compact ${c.lib}, gpt-tokenizer ${c.gpt}, js-tiktoken ${c.jst ?? '(skipped)'}, generator ${c.generator}`)
}
if (mismatch) {
  console.error('\nFAIL: the token counts differ between context-compact and the reference tokenizers (see above).')
  process.exit(1)
}

// ---------------------------------------------------------------------------------------------
// Setup for the rounds

const dir = mkdtempSync(join(tmpdir(), 'context-compact-bench-'))
const file200 = join(dir, 'conversation-200k.json')
const file20 = join(dir, 'conversation-20k.json')
writeFileSync(file200, conv200[0].json)
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
const base = conv200[0].messages.slice()
compactor.shouldCompact(base) // counts and caches every message once
let poolIndex = 0
function nextAppended() {
  const list = pool200.messages
  const i = 1 + (poolIndex++ % (list.length - 1))
  // A new object every time, so the Compactor cannot have seen it.
  return poolIndex < list.length ? list[i] : structuredClone(list[i])
}
// A streamed reply: an assistant message (a copy, counted once untimed), then a chunk of text
// appended in place to its last text block, as a streaming loop does before calling
// shouldCompact again.
const replies = pool200.messages.filter((m) => m.role === 'assistant' && Array.isArray(m.content) && m.content.some((b) => b.type === 'text'))
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

const s = {
  fresh: { library: [], 'gpt-tokenizer': [], 'js-tiktoken': [] },
  freshRequire: { library: [], 'gpt-tokenizer': [], 'js-tiktoken': [] },
  warm: { library: [], 'gpt-tokenizer': [], 'js-tiktoken': [] },
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
const warmImpls = {
  library: countLibrary,
  'gpt-tokenizer': countGpt,
  'js-tiktoken': countJst,
}
const implNames = Object.keys(warmImpls)

// Warm-up: JIT of every path, tables of every tokenizer, the addon's thread pools.
for (const c of [conv20[1], pool200]) for (const name of implNames) warmImpls[name](c.messages)
await library.compactMessages(conv20[1].messages, compactOptions('warmup'))

// ---------------------------------------------------------------------------------------------
// Rounds

log(`\nmeasuring ${ROUNDS} rounds …`)
for (let round = 0; round < ROUNDS; round++) {
  const rotated = implNames.map((_, i) => implNames[(i + round) % implNames.length])

  // 1. First call in a fresh process.
  if (round < FRESH_ROUNDS) {
    for (const name of rotated) {
      const r = child(['fresh', name, file200])
      if (r.tokens !== conv200[0].tokens) throw new Error(`fresh ${name} counted ${r.tokens}, expected ${conv200[0].tokens}`)
      s.fresh[name].push(r.requireMs + r.firstCountMs)
      s.freshRequire[name].push(r.requireMs)
    }
    // 4b. Peak memory of compactMessages, in a fresh process.
    s.memory.push(child(['memory', 'compact', file200, file20, join(dir, 'archives')]))
    s.memoryCount.push(child(['memory', 'count', file200, file20, join(dir, 'archives')]))
    if (round < MEMORY_2M_ROUNDS) s.memory2M.push(child(['memory', 'compact', file2M, file20, join(dir, 'archives')]))
  }

  // 2. Warm countTokens on a conversation this round has not counted before.
  const c = conv200[round % conv200.length]
  for (const name of rotated) {
    const messages = JSON.parse(c.json) // objects nobody has seen, so no per-object cache can help
    gc()
    const [ms, total] = time(() => warmImpls[name](messages))
    if (total !== c.tokens) throw new Error(`${name} counted ${total}, expected ${c.tokens}`)
    s.warm[name].push(ms)
  }
  s.count['200K'].push(s.warm.library[s.warm.library.length - 1])

  // 6. The crossing: reading the objects (+ validation), the native count, JSON.stringify alone.
  gc()
  s.stringify.push(time(() => JSON.stringify(c.messages))[0])
  s.nativeParse.push(time(() => native.validateJson(c.messages))[0])
  s.nativeCount.push(time(() => native.countTokensJson(c.messages))[0])
  s.crossingWhole.push(time(() => countLibrary(c.messages))[0])

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
  const [compactMs, result] = await timeAsync(() => library.compactMessages(c.messages, compactOptions(`r${round}`)))
  if (!result.compacted) throw new Error(`compactMessages did not compact: ${result.error && result.error.message}`)
  s.compact['200K'].push(compactMs)

  // 5. Scaling: 20K and 2M.
  const c20 = conv20[round % conv20.length]
  gc()
  s.count['20K'].push(time(() => countLibrary(c20.messages))[0])
  gc()
  s.compact['20K'].push((await timeAsync(() => library.compactMessages(c20.messages, compactOptions(`s${round}`))))[0])
  if (round < BIG_ROUNDS) {
    const c2M = conv2M[round % conv2M.length]
    gc()
    s.count['2M'].push(time(() => countLibrary(c2M.messages))[0])
    gc()
    s.compact['2M'].push((await timeAsync(() => library.compactMessages(c2M.messages, compactOptions(`b${round}`))))[0])
  }
  log(`  round ${round + 1}/${ROUNDS}: warm 200K ${implNames.map((n) => `${n} ${fmt(s.warm[n].at(-1))} ms`).join(', ')}; compact ${fmt(compactMs)} ms (${((now() - started) / 1000).toFixed(0)} s)`)
}
rmSync(dir, { recursive: true, force: true })

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
const gpt = { fresh: med(s.fresh['gpt-tokenizer']), freshRequire: med(s.freshRequire['gpt-tokenizer']), warm: med(s.warm['gpt-tokenizer']) }
const jst = { fresh: med(s.fresh['js-tiktoken']), freshRequire: med(s.freshRequire['js-tiktoken']), warm: med(s.warm['js-tiktoken']) }
const memRatio = med(s.memory.map((m) => m.peakRssGrowth / m.jsonLength))
const memRatioBytes = med(s.memory.map((m) => m.peakRssGrowth / m.jsonBytes))
const memPeak = med(s.memory.map((m) => m.peakRssGrowth))
const heapGrowth = med(s.memory.map((m) => m.heapGrowth))
const memCountRatio = med(s.memoryCount.map((m) => m.peakRssGrowth / m.jsonLength))
const memCountPeak = med(s.memoryCount.map((m) => m.peakRssGrowth))
const mem2MRatio = med(s.memory2M.map((m) => m.peakRssGrowth / m.jsonLength))
const mem2MPeak = med(s.memory2M.map((m) => m.peakRssGrowth))
const jsonLength = conv200[0].json.length
const jsonBytes = Buffer.byteLength(conv200[0].json)
const tokens200 = conv200[0].tokens

const perScale = (label, list) => {
  const tokens = med(list.map((c) => c.tokens))
  const messages = med(list.map((c) => c.messages.length))
  const json = med(list.map((c) => c.json.length))
  const count = med(s.count[label])
  const compact = med(s.compact[label])
  return { label, tokens, messages, json, count, compact, countPer100K: (count / tokens) * 1e5, compactPer100K: (compact / tokens) * 1e5 }
}
const scales = [perScale('20K', conv20), perScale('200K', conv200), perScale('2M', conv2M)]
const linear = (key) => scales[2][key] / scales[1][key]

const warmRatio = gpt.warm / lib.warm
const check = (ok) => (ok ? '✅' : '❌')
const crossing = {
  stringify: med(s.stringify),
  parse: med(s.nativeParse),
  nativeCount: med(s.nativeCount),
  whole: med(s.crossingWhole),
}

const lines = []
const out = (line = '') => lines.push(line)
out(`### Benchmark (\`npm run bench\`)`)
out()
out(`${machine}. o200k_base; medians of ${ROUNDS} interleaved rounds (fresh-process and memory rows: ${FRESH_ROUNDS}; 2M rows: ${BIG_ROUNDS}). `
  + `Conversations from \`benchmark/generate.mjs\`: the 200K one has ${conv200[0].messages.length} messages, ${tokens200} tokens, ${mb(jsonLength)} M JSON characters.`)
out()
out(`| 200K-token conversation | context-compact | gpt-tokenizer | js-tiktoken | target |`)
out(`|---|---:|---:|---:|---|`)
out(`| \`countTokens\`, first call in a fresh process (load + count) | ${fmt(lib.fresh)} ms | ${fmt(gpt.fresh)} ms (${ratio(gpt.fresh / lib.fresh)}) | ${fmt(jst.fresh)} ms (${ratio(jst.fresh / lib.fresh)}) | < 500 ms ${check(lib.fresh < 500)} |`)
out(`| … of which loading the module (\`require\`) | ${fmt(lib.freshRequire)} ms | ${fmt(gpt.freshRequire)} ms | ${fmt(jst.freshRequire)} ms | |`)
out(`| \`countTokens\`, warm, conversation not seen before | ${fmt(lib.warm)} ms | ${fmt(gpt.warm)} ms (${ratio(gpt.warm / lib.warm)}) | ${fmt(jst.warm)} ms (${ratio(jst.warm / lib.warm)}) | ≥ 3× faster than gpt-tokenizer ${check(warmRatio >= 3)} |`)
out(`| \`Compactor.shouldCompact\` after appending one message | ${fmt(lib.incremental)} ms | | | < 1 ms ${check(lib.incremental < 1)} |`)
out(`| \`Compactor.shouldCompact\` after appending text in place to the last message (streaming) | ${fmt(lib.streamed)} ms | | | |`)
out(`| \`compactMessages\` overhead (instant summarizer) | ${fmt(lib.compact)} ms | | | < 100 ms ${check(lib.compact < 100)} |`)
out(`| \`compactMessages\` peak RSS growth ÷ JSON size | ${memRatio.toFixed(2)}× (${mb(memPeak)} MB for ${mb(jsonLength)} M chars; ${memRatioBytes.toFixed(2)}× of ${mb(jsonBytes)} MB UTF-8) | | | ≤ 2× ${check(memRatio <= 2)} |`)
out(`| \`countTokens\` peak RSS growth ÷ JSON size (for comparison) | ${memCountRatio.toFixed(2)}× (${mb(memCountPeak)} MB) | | | |`)
out(`| \`compactMessages\` on 2M tokens, peak RSS growth ÷ JSON size (for comparison) | ${mem2MRatio.toFixed(2)}× (${mb(mem2MPeak)} MB for ${mb(conv2M[0].json.length)} M chars) | | | |`)
out()
out(`Ratios in parentheses: that tokenizer's time ÷ context-compact's. Identical totals checked on every conversation (e.g. 200K seed ${conv200[0].seed}: ${tokens200} tokens from all three).`)
out()
out(`| Scaling | tokens | messages | JSON chars | \`countTokens\` (warm) | per 100K tokens | \`compactMessages\` | per 100K tokens |`)
out(`|---|---:|---:|---:|---:|---:|---:|---:|`)
for (const r of scales) {
  out(`| ${r.label} | ${r.tokens} | ${r.messages} | ${mb(r.json)} M | ${fmt(r.count)} ms | ${fmt(r.countPer100K)} ms | ${fmt(r.compact)} ms | ${fmt(r.compactPer100K)} ms |`)
}
out()
out(`2M ÷ 200K time per token: \`countTokens\` ${linear('countPer100K').toFixed(2)}, \`compactMessages\` ${linear('compactPer100K').toFixed(2)} (1.00 = linear) ${check(linear('countPer100K') < 1.5 && linear('compactPer100K') < 1.5)}`)
out()
out(`| Where warm \`countTokens\` (200K) spends its time (measured back to back) | ms | share |`)
out(`|---|---:|---:|`)
const share = (ms) => `${((ms / crossing.whole) * 100).toFixed(0)} %`
out(`| reading the message objects into Rust + validation (native \`validateJson\`) | ${fmt(crossing.parse)} | ${share(crossing.parse)} |`)
out(`| counting (native \`countTokensJson\` − \`validateJson\`) | ${fmt(crossing.nativeCount - crossing.parse)} | ${share(crossing.nativeCount - crossing.parse)} |`)
out(`| the whole \`countTokens\` call, right after | ${fmt(crossing.whole)} | 100 % |`)
out(`| for comparison: \`JSON.stringify(messages)\` alone (the JSON-text crossing this replaced started with it) | ${fmt(crossing.stringify)} | ${share(crossing.stringify)} |`)

console.log('\n' + lines.join('\n'))
log(`\nheap growth during compactMessages (200K, median): ${mb(heapGrowth)} MB; peak RSS growth ${mb(memPeak)} MB (${s.memory[0]?.exactPeak ? 'VmHWM' : 'polled RSS'})`)
const minOf = (xs) => Math.min(...xs)
log(`warm 200K minimum: context-compact ${fmt(minOf(s.warm.library))} ms, gpt-tokenizer ${fmt(minOf(s.warm['gpt-tokenizer']))} ms, js-tiktoken ${fmt(minOf(s.warm['js-tiktoken']))} ms; per-round ratio gpt-tokenizer ÷ context-compact: median ${median(s.warm.library.map((x, i) => s.warm['gpt-tokenizer'][i] / x)).toFixed(2)}`)
log(`total time ${((now() - started) / 1000).toFixed(0)} s`)
