'use strict'

// One measurement in a fresh Node.js process, spawned by bench.mjs:
//   node benchmark/counting/child.cjs fresh <library|gpt-tokenizer|js-tiktoken|tiktoken|@anthropic-ai/tokenizer> <conversation.json>
//     → { requireMs, firstCountMs, tokens }: loading the module, then the first count of the
//       conversation (which includes loading the tokenizer tables).
//   node benchmark/counting/child.cjs memory <compact|count> <conversation.json> <warmup.json> <outputDir>
//     → { jsonLength, jsonBytes, peakRssGrowth, heapGrowth, ms }: peak RSS growth during one
//       compactMessages (or countTokens) call (Linux: VmHWM after resetting it through /proc/self/clear_refs;
//       elsewhere: RSS polled every millisecond).
//   node benchmark/counting/child.cjs generate <dir> <targetTokens> <seed>...
//     → [{ seed, tokens, file }]: conversations from generate.mjs, written to <dir>.
// Prints one JSON line on stdout.

const { readFileSync, writeFileSync } = require('node:fs')
const { join } = require('node:path')

const root = join(__dirname, '..', '..')
const [mode, ...args] = process.argv.slice(2)

function fresh(impl, file) {
  const messages = JSON.parse(readFileSync(file, 'utf8'))
  const t0 = performance.now()
  if (impl === 'library') {
    const library = require(join(root, 'index.js'))
    const t1 = performance.now()
    const tokens = library.countTokens(messages)
    const t2 = performance.now()
    return { requireMs: t1 - t0, firstCountMs: t2 - t1, tokens }
  }
  const reference = require('./reference-count.cjs')
  // Loading the package's module is its `require`; building its encoder from the ranks (and,
  // for tiktoken, the WASM encoder) is its table loading, part of the first call.
  const modules = {
    'gpt-tokenizer': ['gpt-tokenizer/encoding/o200k_base'],
    'js-tiktoken': ['js-tiktoken/lite', 'js-tiktoken/ranks/o200k_base'],
    tiktoken: ['tiktoken'],
    '@anthropic-ai/tokenizer': ['@anthropic-ai/tokenizer'],
  }[impl]
  if (!modules) throw new Error(`unknown implementation ${impl}`)
  for (const name of modules) require(name)
  const t1 = performance.now()
  const text = reference.loadPeer(impl)
  const tokens = reference.makeMessageCounter(text)(messages)
  const t2 = performance.now()
  if (text.free) text.free()
  return { requireMs: t1 - t0, firstCountMs: t2 - t1, tokens }
}

// Conversations made in this process, so that the benchmark's own process has never counted
// them (its tokenizers' caches have not seen their text): writes <dir>/c<seed>.json for every
// seed and prints [{ seed, tokens, file }].
async function generate(dir, targetTokens, seeds) {
  const { pathToFileURL } = require('node:url')
  const { generateConversationWithCount } = await import(pathToFileURL(join(__dirname, '..', 'generate.mjs')).href)
  return seeds.map((seed) => {
    const { messages, tokens } = generateConversationWithCount({ targetTokens: Number(targetTokens), seed: Number(seed) })
    const file = join(dir, `c${targetTokens}-${seed}.json`)
    writeFileSync(file, JSON.stringify(messages))
    return { seed: Number(seed), tokens, file }
  })
}

function status() {
  const text = readFileSync('/proc/self/status', 'utf8')
  const kb = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(text)[1]) * 1024
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') }
}

async function memory(operation, file, warmupFile, outputDir) {
  const v8 = require('node:v8')
  const vm = require('node:vm')
  v8.setFlagsFromString('--expose-gc')
  const gc = vm.runInNewContext('gc')
  const library = require(join(root, 'index.js'))
  const options = { summarizer: async () => 'summary', force: true, outputDir, sessionId: 'memory' }
  // Warm up on a small conversation: tokenizer tables, thread pools, runtime.
  await library.compactMessages(JSON.parse(readFileSync(warmupFile, 'utf8')), { ...options, sessionId: 'warmup' })
  let messages = JSON.parse(readFileSync(file, 'utf8'))
  const json = JSON.stringify(messages)
  const jsonLength = json.length
  const jsonBytes = Buffer.byteLength(json)
  gc()
  gc()
  let linux = true
  try {
    writeFileSync('/proc/self/clear_refs', '5') // resets VmHWM to the current RSS
  } catch {
    linux = false
  }
  const before = process.memoryUsage()
  const rssBefore = linux ? status().rss : before.rss
  let polledRss = rssBefore
  let polledHeap = before.heapUsed
  const timer = setInterval(() => {
    const now = process.memoryUsage()
    if (now.rss > polledRss) polledRss = now.rss
    if (now.heapUsed > polledHeap) polledHeap = now.heapUsed
  }, 1)
  const t0 = performance.now()
  const result = operation === 'count' ? { compacted: library.countTokens(messages) > 0 } : await library.compactMessages(messages, options)
  const ms = performance.now() - t0
  clearInterval(timer)
  const after = process.memoryUsage()
  const peakRss = linux ? status().hwm : Math.max(polledRss, after.rss)
  const peakHeap = Math.max(polledHeap, after.heapUsed)
  if (!result.compacted) throw new Error(`${operation} failed`)
  return {
    jsonLength,
    jsonBytes,
    peakRssGrowth: peakRss - rssBefore,
    heapGrowth: peakHeap - before.heapUsed,
    externalGrowth: after.external + after.arrayBuffers - before.external - before.arrayBuffers,
    exactPeak: linux,
    ms,
  }
}

async function main() {
  let result
  if (mode === 'fresh') result = fresh(args[0], args[1])
  else if (mode === 'generate') result = await generate(args[0], args[1], args.slice(2))
  else if (mode === 'memory') result = await memory(args[0], args[1], args[2], args[3])
  else throw new Error(`unknown mode ${mode}`)
  process.stdout.write(JSON.stringify(result) + '\n')
}

main().catch((error) => {
  console.error(error && error.stack ? error.stack : error)
  process.exit(1)
})
