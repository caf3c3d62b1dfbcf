'use strict'

// `context-compact demo`: generates a long coding-agent session (the benchmark's generator),
// shows it against the threshold and compacts it with the zero-configuration provider.

const path = require('node:path')
const { pathToFileURL } = require('node:url')

const { CliError, oneLine } = require('../errors.js')
const { NAME, stdout, fmt, pct, table, writeJson, statsRows } = require('../output.js')
const { DEFAULT_OUTPUT_DIR, parse, number, storeOptions, STORE_FLAGS } = require('../args.js')
const { lib, compactorFor } = require('../library.js')
const { compactWithProgress } = require('../progress.js')

const DEMO_HELP = `Usage: ${NAME} demo [options]

Builds a realistic long coding-agent session (a system prompt, tasks, tool calls and results:
file reads, edits, shell commands, test output; the benchmark's generator), shows its tokens
against the threshold, compacts it with the zero-configuration provider and prints the summary,
the statistics and the archive path.

With neither ANTHROPIC_API_KEY nor OPENAI_API_KEY set, the summary is written by the built-in
extractive summarizer: offline, in a few seconds. With a key set, the zero-configuration
provider is that API (a real request with ~200K tokens of input).

Options:
  --tokens <n>         the session's size in tokens (default 200000)
  --seed <n>           the generator's seed (default 1)
  --output-dir <dir>   where the archive goes (default ${DEFAULT_OUTPUT_DIR}), or an object-store URL
  --store-option <k=v> object-store configuration (repeatable)
  --session-id <id>    the archive session (default "demo")
  --save <file>        also write the generated session to <file> (try the other commands on it)
  -q, --quiet          no progress on stderr
  -h, --help           show this help`

function bar(fraction, width = 30, mark = 0.92) {
  const filled = Math.min(width, Math.round(Math.min(fraction, 1) * width))
  const cells = Array.from({ length: width }, (_, i) => (i < filled ? '█' : '░'))
  const at = Math.min(width - 1, Math.round(mark * width))
  cells[at] = '|'
  return cells.join('')
}

function zeroConfigProvider() {
  if (process.env.ANTHROPIC_API_KEY) return 'anthropic (ANTHROPIC_API_KEY is set: a network request)'
  if (process.env.OPENAI_API_KEY) return 'openai (OPENAI_API_KEY is set: a network request)'
  return 'extractive (no ANTHROPIC_API_KEY / OPENAI_API_KEY: offline, built in)'
}

async function cmdDemo(argv) {
  const { values } = parse(argv, {
    tokens: { type: 'string' },
    seed: { type: 'string' },
    ...STORE_FLAGS,
    'session-id': { type: 'string' },
    save: { type: 'string' },
    quiet: { type: 'boolean', short: 'q' },
  })
  if (values.help) return stdout(DEMO_HELP)
  const targetTokens = number(values, 'tokens', { integer: true, min: 1000 }) ?? 200_000
  const seed = number(values, 'seed', { integer: true }) ?? 1
  const outputDir = values['output-dir'] ?? DEFAULT_OUTPUT_DIR
  const sessionId = values['session-id'] ?? 'demo'
  const contextTokenLimit = 200_000
  const thresholdRatio = lib().COMPACT_THRESHOLD_RATIO

  const generatorPath = path.join(__dirname, '..', '..', 'benchmark', 'generate.mjs')
  let generator
  try {
    generator = await import(pathToFileURL(generatorPath).href)
  } catch (error) {
    throw new CliError(`the demo needs the session generator ${generatorPath}: ${oneLine(error.message)}`)
  }
  const started = Date.now()
  stdout(`1. A long coding-agent session (generated, seed ${seed})`)
  const options = { contextTokenLimit, thresholdRatio, outputDir, sessionId, storeOptions: storeOptions(values) }
  // The generator counts each message as it adds it; with the Compactor's counter those counts
  // are cached, so measuring and compacting below count nothing again.
  const compactor = await compactorFor(options)
  const { messages, tokens } = generator.generateConversationWithCount({
    targetTokens,
    seed,
    countTokens: (list) => compactor.countTokens(list),
  })
  const toolCalls = messages.reduce((n, m) => n + (Array.isArray(m.content) ? m.content.filter((b) => b.type === 'tool_use').length : 0), 0)
  stdout(`   ${fmt(messages.length)} messages, ${fmt(toolCalls)} tool calls, ${fmt(tokens)} tokens (o200k_base), generated in ${Date.now() - started} ms`)
  if (values.save) {
    writeJson(values.save, messages)
    stdout(`   saved to ${values.save}`)
  }

  const measure = compactor.measure(messages)
  stdout(`\n2. Tokens vs the threshold`)
  stdout(`   context window ${fmt(contextTokenLimit)} × ${thresholdRatio} = threshold ${fmt(measure.threshold)}`)
  stdout(`   [${bar(measure.tokens / contextTokenLimit, 40, thresholdRatio)}] ${pct(measure.tokens / contextTokenLimit)} of the window`)
  stdout(
    measure.shouldCompact
      ? `   ${fmt(measure.tokens)} ≥ ${fmt(measure.threshold)}: over the threshold, compaction runs`
      : `   ${fmt(measure.tokens)} < ${fmt(measure.threshold)}: below the threshold (compacting anyway for the demo)`,
  )

  stdout(`\n3. Compacting with the zero-configuration provider: ${zeroConfigProvider()}`)
  const { result } = await compactWithProgress(compactor, messages, { force: !measure.shouldCompact }, {
    quiet: Boolean(values.quiet),
    label: 'writing the summary',
  })
  if (!result.compacted) {
    throw new CliError(`compaction failed: ${result.error ? `${result.error.code}: ${oneLine(result.error.message)}` : 'nothing was compacted'}`)
  }
  stdout(`   summary written by: ${result.provider}${result.model ? ' ' + result.model : ''}`)

  stdout(`\n4. The summary that replaces ${fmt(result.stats.compactedMessageCount)} messages`)
  const rule = '─'.repeat(72)
  stdout(rule)
  stdout(result.summary)
  stdout(rule)

  stdout(`\n5. Statistics`)
  stdout(table(statsRows(result, messages.length), '   '))
  // Step 3 said already that no key was set.
  for (const warning of result.warnings) if (!/^neither ANTHROPIC_API_KEY nor OPENAI_API_KEY/.test(warning)) stdout(`   warning: ${oneLine(warning)}`)

  stdout(`\n6. The originals are archived in ${result.archivePath ?? '(not written)'}`)
  stdout(`   ${NAME} history --output-dir ${outputDir} --session-id ${sessionId}`)
  stdout(`\nDone in ${((Date.now() - started) / 1000).toFixed(1)} s.`)
}

module.exports = { cmdDemo }
