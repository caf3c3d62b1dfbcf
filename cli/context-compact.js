#!/usr/bin/env node
'use strict'

// The `context-compact` command line: count, check, compact, history, restore, prune, demo.
// Node built-ins only; all the work is done by the library (../index.js).
//
// Exit codes: 0 ok, 1 failure (unreadable or invalid input, an invalid conversation, a
// compaction that failed), 2 usage error (unknown command or option, a bad option value).
// Errors are one line on stderr (set CONTEXT_COMPACT_DEBUG=1 for a stack trace).

const { parseArgs } = require('node:util')
const fs = require('node:fs')
const path = require('node:path')
const { pathToFileURL } = require('node:url')

const NAME = 'context-compact'
const DEFAULT_OUTPUT_DIR = './.context-compact'

// ---------------------------------------------------------------------------------------------
// Errors and output

class CliError extends Error {
  constructor(message, exitCode = 1) {
    super(message)
    this.exitCode = exitCode
  }
}

const usageError = (message) => new CliError(message, 2)

function oneLine(text) {
  return String(text).replace(/\s*\n\s*/g, ' ').trim()
}

let library = null
function lib() {
  if (!library) {
    try {
      library = require('../index.js')
    } catch (error) {
      throw new CliError(`cannot load the native addon: ${oneLine(error.message)}`)
    }
  }
  return library
}

const stdout = (text = '') => process.stdout.write(text + '\n')
const stderr = (text = '') => process.stderr.write(text + '\n')

const fmt = (n) => (typeof n === 'number' && Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : String(n))
const pct = (x) => `${(x * 100).toFixed(1)} %`
const plural = (n, word) => `${fmt(n)} ${word}${n === 1 ? '' : 's'}`

/** Left column padded, right column right-aligned: a small two-column table. */
function table(rows, indent = '  ', { header = false } = {}) {
  // Numbers are right-aligned in their column; other values (paths, names) left-aligned. A
  // header row is aligned like the numbers below it.
  const numeric = (cell, i) => (header && i === 0) || /^[\d,.\s%×→-]+$/.test(String(cell))
  const w0 = Math.max(...rows.map((r) => String(r[0]).length))
  const w1 = Math.max(0, ...rows.filter((r, i) => numeric(r[1], i)).map((r) => String(r[1]).length))
  return rows
    .map((r, i) => {
      const rest = r.slice(2).filter((x) => x !== undefined && x !== '')
      const right = String(r[1])
      const cell = numeric(right, i) ? right.padStart(w1) : right
      return `${indent}${String(r[0]).padEnd(w0)}  ${cell}${rest.length ? '  ' + rest.join('  ') : ''}`.trimEnd()
    })
    .join('\n')
}

// ---------------------------------------------------------------------------------------------
// Arguments

function parse(argv, options, { positionals = 0, positionalNames = [] } = {}) {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      options: { help: { type: 'boolean', short: 'h' }, ...options },
      allowPositionals: true,
      strict: true,
    })
  } catch (error) {
    throw usageError(oneLine(error.message))
  }
  const { values, positionals: rest } = parsed
  if (!values.help) {
    if (rest.length < positionals) {
      throw usageError(`missing argument: ${positionalNames.slice(rest.length).join(' ')}`)
    }
    if (rest.length > positionals) throw usageError(`unexpected argument: ${rest[positionals]}`)
  }
  return { values, positionals: rest }
}

function number(values, name, { integer = false, min = 0, max = Infinity } = {}) {
  const raw = values[name]
  if (raw === undefined) return undefined
  const n = Number(raw)
  if (raw.trim() === '' || !Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min || n > max) {
    const what = integer ? 'an integer' : 'a number'
    const range = max === Infinity ? `≥ ${min}` : `between ${min} and ${max}`
    throw usageError(`--${name} must be ${what} ${range}, got ${JSON.stringify(raw)}`)
  }
  return n
}

function choice(values, name, choices) {
  const raw = values[name]
  if (raw === undefined) return undefined
  if (!choices.includes(raw)) {
    throw usageError(`--${name} must be one of ${choices.join(', ')}; got ${JSON.stringify(raw)}`)
  }
  return raw
}

function jsonFlag(values, name) {
  const raw = values[name]
  if (raw === undefined) return undefined
  try {
    const value = JSON.parse(raw)
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('expected a JSON object')
    return value
  } catch (error) {
    throw usageError(`--${name} must be a JSON object, e.g. '{"input_tokens": 150000}': ${oneLine(error.message)}`)
  }
}

const ENCODINGS = ['o200k_base', 'cl100k_base']
const PROVIDERS = ['anthropic', 'openai', 'extractive', 'anthropic-compaction']
const PROMPT_STYLES = ['structured', 'continuation']
const OFFLOAD_SCOPES = ['tool-results', 'all', 'off']
const THINKING_POLICIES = ['auto', 'keep', 'strip']
const FORMATS = ['auto', 'anthropic', 'openai', 'openai-responses', 'ai-sdk', 'gemini', 'bedrock', 'langchain']

const COMMON = {
  json: { type: 'boolean' },
  encoding: { type: 'string' },
  format: { type: 'string' },
}

// The `format` option of every library call: which API's messages the file holds (detected
// from the messages when absent).
const FORMAT_HELP = `  --format <name>     the messages' format: auto (default: detected), anthropic, openai,
                      openai-responses, ai-sdk, gemini, bedrock or langchain`

function formatOption(values) {
  const format = choice(values, 'format', FORMATS)
  return format === undefined ? {} : { format }
}

// ---------------------------------------------------------------------------------------------
// Input: a message array, an Anthropic body {system, tools, messages} or an OpenAI body {messages, tools}

async function readText(file) {
  if (file === '-') {
    const chunks = []
    for await (const chunk of process.stdin) chunks.push(chunk)
    return Buffer.concat(chunks).toString('utf8')
  }
  try {
    return fs.readFileSync(file, 'utf8')
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${error.code === 'ENOENT' ? 'no such file' : oneLine(error.message)}`)
  }
}

/**
 * Reads a conversation: `{ messages, body, system, tools, model, name }`, where `body` is the
 * request body object (null for a bare array) and `system` / `tools` / `model` come from it.
 */
async function readConversation(file) {
  const name = file === '-' ? 'stdin' : file
  const text = await readText(file)
  let value
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new CliError(`${name}: invalid JSON: ${oneLine(error.message)}`)
  }
  if (Array.isArray(value)) return { messages: value, body: null, name }
  // The list is under "messages" (Anthropic, OpenAI Chat, Bedrock Converse), "contents"
  // (Gemini) or "input" (OpenAI Responses, when it is an array of items).
  const key = value !== null && typeof value === 'object' ? MESSAGE_KEYS.find((k) => Array.isArray(value[k])) : undefined
  if (key === undefined) {
    throw new CliError(
      `${name}: expected a JSON array of messages or a request body with a "messages" array (Gemini: "contents", OpenAI Responses: "input"), got ${describe(value)}`,
    )
  }
  const conversation = { messages: value[key], body: value, key, name }
  if (value.system !== undefined && value.system !== null) {
    if (typeof value.system !== 'string' && !Array.isArray(value.system)) {
      throw new CliError(`${name}: "system" must be a string or an array of text blocks, got ${describe(value.system)}`)
    }
    conversation.system = value.system
  }
  if (value.tools !== undefined && value.tools !== null) {
    if (!Array.isArray(value.tools)) throw new CliError(`${name}: "tools" must be an array, got ${describe(value.tools)}`)
    conversation.tools = value.tools
  }
  if (typeof value.model === 'string' && value.model !== '') conversation.model = value.model
  return conversation
}

const MESSAGE_KEYS = ['messages', 'contents', 'input']

function describe(value) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object without a "messages" array' : `a ${typeof value}`
}

/**
 * Throws exit 1 for messages the library cannot read (naming the index and field); returns
 * their tokens. `counter` is an encoding name (or undefined) or a Compactor (which caches).
 */
function validateMessages(conversation, counter, format = {}) {
  try {
    return counter !== null && typeof counter === 'object'
      ? counter.countTokens(conversation.messages)
      : lib().countTokens(conversation.messages, { encoding: counter, ...format })
  } catch (error) {
    if (error instanceof TypeError) throw new CliError(`${conversation.name}: invalid conversation: ${oneLine(error.message)}`)
    throw error
  }
}

/** The same envelope with the messages replaced (a bare array stays an array). */
function envelope(conversation, messages) {
  return conversation.body ? { ...conversation.body, [conversation.key]: messages } : messages
}

function writeJson(file, value) {
  const text = JSON.stringify(value, null, 2) + '\n'
  if (file === undefined || file === '-') {
    process.stdout.write(text)
    return
  }
  try {
    fs.writeFileSync(file, text)
  } catch (error) {
    throw new CliError(`cannot write ${file}: ${oneLine(error.message)}`)
  }
}

// Library errors: a TypeError from options is a usage error; from messages, invalid input.
async function call(run) {
  try {
    return await run()
  } catch (error) {
    if (error instanceof CliError) throw error
    if (error instanceof TypeError && error.code === 'ERR_CONTEXT_COMPACT_INVALID_ARGUMENT') {
      const message = oneLine(error.message)
      throw new CliError(message, /^messages/.test(message) ? 1 : 2)
    }
    throw new CliError(`${error.code ? error.code + ': ' : ''}${oneLine(error.message)}`)
  }
}

// ---------------------------------------------------------------------------------------------
// count

const COUNT_HELP = `Usage: ${NAME} count <file|-> [options]

Counts the tokens of a conversation: the total, per role, per block type, and the largest
messages. <file> is a JSON message array, an Anthropic request body {system, tools, messages},
an OpenAI body {messages, tools}, a Gemini body {contents} or an OpenAI Responses body {input};
"-" reads stdin.

Options:
  --encoding <name>   o200k_base (default) or cl100k_base
  --top <n>           how many of the largest messages to list (default 5)
${FORMAT_HELP}
  --json              print the counts as JSON on stdout
  -h, --help          show this help`

function blockParts(message) {
  // [type, a one-part message that counts exactly that part]
  const parts = []
  const content = message.content
  if (typeof content === 'string') {
    parts.push([message.role === 'tool' ? 'tool_result' : 'text', { role: 'user', content }])
  } else if (Array.isArray(content)) {
    for (const block of content) parts.push([block.type, { role: 'user', content: [block] }])
  }
  for (const key of ['tool_calls', 'toolCalls']) {
    if (Array.isArray(message[key])) {
      for (const call of message[key]) parts.push(['tool_calls', { role: 'assistant', content: null, tool_calls: [call] }])
    }
  }
  return parts
}

function countReport(conversation, encoding, top, format = {}) {
  const { countTokens, measureTokens } = lib()
  const messages = conversation.messages
  const total = validateMessages(conversation, encoding, format)
  const perMessage = messages.map((m) => countTokens([m], { encoding, ...format }))
  const byRole = {}
  const byBlockType = {}
  messages.forEach((m, i) => {
    const role = (byRole[m.role] ??= { tokens: 0, messages: 0 })
    role.tokens += perMessage[i]
    role.messages += 1
    for (const [type, part] of blockParts(m)) {
      const n = countTokens([part], { encoding })
      const entry = (byBlockType[type] ??= { tokens: 0, blocks: 0 })
      entry.tokens += n
      entry.blocks += 1
    }
  })
  const extra = (options) => measureTokens([], { encoding, ...options }).rawTokens
  const system = conversation.system === undefined ? 0 : extra({ system: conversation.system })
  const tools = conversation.tools === undefined ? 0 : extra({ tools: conversation.tools })
  const largest = perMessage
    .map((tokens, index) => ({ index, role: messages[index].role, tokens }))
    .sort((a, b) => b.tokens - a.tokens || a.index - b.index)
    .slice(0, top)
  const sortEntries = (o) => Object.fromEntries(Object.entries(o).sort((a, b) => b[1].tokens - a[1].tokens))
  return {
    encoding: encoding ?? 'o200k_base',
    messages: messages.length,
    tokens: total,
    systemTokens: system,
    toolsTokens: tools,
    requestTokens: total + system + tools,
    byRole: sortEntries(byRole),
    byBlockType: sortEntries(byBlockType),
    largest,
  }
}

async function cmdCount(argv) {
  const { values, positionals } = parse(argv, { ...COMMON, top: { type: 'string' } }, { positionals: 1, positionalNames: ['<file|->'] })
  if (values.help) return stdout(COUNT_HELP)
  const encoding = choice(values, 'encoding', ENCODINGS)
  const top = number(values, 'top', { integer: true, min: 0 }) ?? 5
  const format = formatOption(values)
  const conversation = await readConversation(positionals[0])
  const report = countReport(conversation, encoding, top, format)
  if (values.json) return stdout(JSON.stringify(report, null, 2))
  stdout(`${conversation.name}: ${fmt(report.messages)} messages, ${fmt(report.tokens)} tokens (${report.encoding})`)
  if (conversation.system !== undefined || conversation.tools !== undefined) {
    stdout(
      `  + system ${fmt(report.systemTokens)}, tools ${fmt(report.toolsTokens)} = ${fmt(report.requestTokens)} tokens in the request`,
    )
  }
  const share = (n) => (report.tokens > 0 ? pct(n / report.tokens) : '-')
  stdout('\nBy role')
  stdout(table(Object.entries(report.byRole).map(([role, e]) => [role, fmt(e.tokens), share(e.tokens).padStart(7), plural(e.messages, 'message')])))
  stdout('\nBy block type')
  stdout(table(Object.entries(report.byBlockType).map(([type, e]) => [type, fmt(e.tokens), share(e.tokens).padStart(7), plural(e.blocks, 'block')])))
  if (report.largest.length > 0) {
    stdout(`\nLargest messages`)
    stdout(table([['index', 'tokens', 'role'], ...report.largest.map((m) => [`messages[${m.index}]`, fmt(m.tokens), m.role])], '  ', { header: true }))
  }
}

// ---------------------------------------------------------------------------------------------
// check

const CHECK_HELP = `Usage: ${NAME} check <file|-> [options]

Reports whether a conversation is over the compaction threshold, and whether the LLM APIs would
accept it: orphan tool results, tool calls without results, duplicate tool ids, role problems,
empty content — each with its message index, in the words of the API errors.
Exits 1 when the conversation is invalid (0 when it is valid, over the threshold or not).

Options:
  --limit <tokens>        the context window (default 200000, or the agent model's window)
  --ratio <r>             the threshold ratio (default 0.92)
  --agent-model <model>   the model the agent talks to: scales the estimate by its billing
                          factor (default: the request body's "model", if any)
  --usage <json>          the usage the API reported for the last assistant message, e.g.
                          '{"input_tokens": 150000, "output_tokens": 800}'
  --encoding <name>       o200k_base (default) or cl100k_base
  --format <name>         the messages' format: auto (default: detected), anthropic, openai,
                          openai-responses, ai-sdk, gemini, bedrock or langchain
  --json                  print the report as JSON on stdout
  -h, --help              show this help`

const THRESHOLD_FLAGS = {
  limit: { type: 'string' },
  ratio: { type: 'string' },
  'agent-model': { type: 'string' },
  usage: { type: 'string' },
}

function thresholdOptions(values, conversation) {
  const options = {}
  const limit = number(values, 'limit', { integer: true, min: 1 })
  if (limit !== undefined) options.contextTokenLimit = limit
  const ratio = number(values, 'ratio', { min: 0, max: 1 })
  if (ratio !== undefined) options.thresholdRatio = ratio
  const agentModel = values['agent-model'] ?? conversation.model
  if (agentModel !== undefined) options.agentModel = agentModel
  const usage = jsonFlag(values, 'usage')
  if (usage !== undefined) options.usage = usage
  if (conversation.system !== undefined) options.system = conversation.system
  if (conversation.tools !== undefined) options.tools = conversation.tools
  return options
}

const SOURCES = {
  usage: 'the usage reported for the last assistant message, plus the messages after it',
  calibration: 'calibration',
  model: "the agent model's billing factor",
  raw: 'the exact tokenizer count',
}

async function cmdCheck(argv) {
  const { values, positionals } = parse(argv, { ...COMMON, ...THRESHOLD_FLAGS }, { positionals: 1, positionalNames: ['<file|->'] })
  if (values.help) return stdout(CHECK_HELP)
  const encoding = choice(values, 'encoding', ENCODINGS)
  const format = formatOption(values)
  const conversation = await readConversation(positionals[0])
  const options = { ...thresholdOptions(values, conversation), encoding, ...format }
  const { checkMessages, measureTokens } = lib()
  const problems = await call(() => checkMessages(conversation.messages, format))
  const structural = problems.some((p) => p.kind === 'invalid_message')
  // Invalid messages cannot be counted; the validity report says what is wrong with them.
  const measure = structural ? null : await call(() => measureTokens(conversation.messages, options))
  const ratio = options.thresholdRatio ?? lib().COMPACT_THRESHOLD_RATIO
  const limit = measure ? Math.round(measure.threshold / ratio) : null
  if (values.json) {
    stdout(
      JSON.stringify(
        {
          valid: problems.length === 0,
          problems,
          measure,
          contextTokenLimit: limit,
          thresholdRatio: ratio,
          agentModel: options.agentModel ?? null,
        },
        null,
        2,
      ),
    )
  } else {
    if (measure) {
      const over = measure.shouldCompact
      stdout(`${conversation.name}: ${fmt(conversation.messages.length)} messages`)
      stdout(
        table([
          ['raw tokens', fmt(measure.rawTokens), measure.rawTokens !== measure.messageTokens ? `(messages ${fmt(measure.messageTokens)} + system/tools)` : ''],
          ['estimated tokens', fmt(measure.tokens), `source: ${measure.source}${measure.factor !== 1 ? ` ×${measure.factor}` : ''} (${SOURCES[measure.source] ?? measure.source})`],
          ['threshold', fmt(measure.threshold), `= ${fmt(limit)} × ${ratio}`],
          ['of the window', pct(measure.tokens / limit)],
        ]),
      )
      stdout(
        over
          ? `status: OVER the threshold by ${fmt(measure.tokens - measure.threshold)} tokens: compaction would run`
          : `status: below the threshold (${fmt(measure.threshold - measure.tokens)} tokens to go): no compaction needed`,
      )
    }
    if (problems.length === 0) {
      stdout('validity: OK (no problems found)')
    } else {
      stdout(`validity: ${problems.length} problem${problems.length === 1 ? '' : 's'}`)
      for (const p of problems) stdout(`  messages[${p.index}] ${p.kind}: ${p.message}`)
    }
  }
  if (problems.length > 0) {
    if (!values.json) {
      const first = problems[0]
      stderr(`${NAME}: invalid conversation: messages[${first.index}]: ${first.message}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}`)
    }
    process.exitCode = 1
  }
}

// ---------------------------------------------------------------------------------------------
// Progress while the summary is written

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']

function progress({ quiet, label }) {
  const start = Date.now()
  const tty = Boolean(process.stderr.isTTY)
  const state = { attempt: 1, provider: null, note: '', noteUntil: 0 }
  const elapsed = () => `${((Date.now() - start) / 1000).toFixed(1)}s`
  let timer = null
  let frame = 0
  const render = () => {
    const who = state.provider ? ` (${state.provider})` : ''
    const line = `${SPINNER[frame++ % SPINNER.length]} ${label}${who} ${elapsed()} · attempt ${state.attempt}${state.note && Date.now() < state.noteUntil ? ' · ' + state.note : ''}`
    process.stderr.write(`\r${line.slice(0, (process.stderr.columns || 120) - 1)}\x1b[K`)
  }
  const clear = () => tty && process.stderr.write('\r\x1b[K')
  const line = (text) => {
    if (quiet) return
    clear()
    stderr(text)
    if (timer && tty) render()
  }
  // Ctrl-C while the summary is written: leave a clean line, exit 130 like a shell would.
  const onSigint = () => {
    if (timer) clearInterval(timer)
    clear()
    stderr(`${NAME}: interrupted after ${elapsed()}`)
    process.exit(130)
  }
  process.once('SIGINT', onSigint)
  if (!quiet) {
    if (tty) {
      render()
      timer = setInterval(render, 80)
    } else {
      stderr(`${label}…`)
      // A heartbeat every 15 s so logs show the process is alive.
      timer = setInterval(() => stderr(`  still writing the summary: ${elapsed()}, attempt ${state.attempt}`), 15_000)
    }
  }
  return {
    line,
    onEvent(event) {
      if (!event || event.type !== 'retry') return
      state.attempt = event.attempt + 1
      const why = event.error ? `${event.error.code}${event.error.status ? ` (HTTP ${event.error.status})` : ''}` : 'failed'
      state.note = `attempt ${event.attempt} failed: ${why}, retrying in ${(event.delayMs / 1000).toFixed(1)}s`
      state.noteUntil = Date.now() + event.delayMs
      if (!tty) line(`  attempt ${event.attempt} failed: ${why}${event.error?.message ? ` — ${oneLine(event.error.message)}` : ''}; attempt ${state.attempt} in ${(event.delayMs / 1000).toFixed(1)}s`)
    },
    onLog(entry) {
      const provider = entry.fields && entry.fields.provider
      if (provider && !state.provider) state.provider = entry.fields.model ? `${provider} ${entry.fields.model}` : provider
      if (entry.level !== 'warn' && entry.level !== 'error') return
      // Shown elsewhere: retries (onEvent), the final failure (result.error), the zero-config
      // fallback (the provider in the statistics).
      if (entry.fields && entry.fields.delay_ms !== undefined) return
      if (/^(summary failed:|neither ANTHROPIC_API_KEY)/.test(entry.message)) return
      line(`warning: ${oneLine(entry.message)}`)
    },
    stop(result) {
      process.removeListener('SIGINT', onSigint)
      if (timer) clearInterval(timer)
      timer = null
      if (quiet) return
      clear()
      if (!tty || result) {
        const how = result && result.compacted ? 'summary written' : 'finished'
        stderr(`${how} in ${elapsed()} (${result ? result.attempts : state.attempt} attempt${(result ? result.attempts : state.attempt) === 1 ? '' : 's'})`)
      }
    },
  }
}

function statsRows(result, before) {
  const s = result.stats
  return [
    ['original tokens', fmt(s.originalTokenCount)],
    ['compacted tokens', fmt(s.compactedTokenCount)],
    ['compaction ratio', pct(s.compactionRatio), `(${pct(1 - s.compactionRatio)} saved)`],
    ['messages', `${fmt(before)} → ${fmt(result.messages.length)}`],
    ['compacted messages', fmt(s.compactedMessageCount)],
    ['retained messages', fmt(s.retainedMessageCount)],
    ['removed messages', fmt(s.removedMessageCount ?? 0)],
    ['provider', `${result.provider ?? '-'}${result.model ? ' ' + result.model : ''}`],
    ['attempts', fmt(result.attempts)],
    ['archive', result.archivePath ?? '(none)'],
  ]
}

// ---------------------------------------------------------------------------------------------
// compact

const COMPACT_HELP = `Usage: ${NAME} compact <file|-> [-o out.json] [options]

Compacts a conversation when it reaches the threshold (or always, with --force): keeps the
leading system messages and a recent tail, replaces the middle with a summary, archives the
originals. Writes the result in the input's envelope (array or request body) to stdout or -o;
progress and statistics go to stderr.

API keys are read from the environment only (ANTHROPIC_API_KEY, OPENAI_API_KEY), never from a
flag. Without --provider: anthropic if ANTHROPIC_API_KEY is set, else openai if OPENAI_API_KEY
is set, else the built-in extractive summarizer (offline).

Options:
  -o, --output <file>             write the compacted conversation here instead of stdout
  --json                          print the whole CompactResult as JSON on stdout
  -q, --quiet                     nothing on stderr (except a failure)
  --limit <tokens>                contextTokenLimit (default 200000, or the agent model's window)
  --ratio <r>                     thresholdRatio (default 0.92)
  --tail-ratio <r>                tailRetentionRatio (default 0.1)
  --keep-recent-turns <n>         keepRecentTurns (default 0)
  --force                         compact even below the threshold
  --provider <name>               anthropic, openai, extractive or anthropic-compaction
                                  (default: from the environment)
  --model <model>                 the summary model (default claude-sonnet-4-5 / gpt-4o-mini)
  --agent-model <model>           the agent's model (default: the request body's "model")
  --usage <json>                  usage reported for the last assistant message
  --base-url <url>                the API base URL (default ANTHROPIC_BASE_URL / OPENAI_BASE_URL)
  --timeout-ms <ms>               per-request timeout (default 60000)
  --max-retries <n>               retries after the first attempt (default 2)
  --retry-base-delay-ms <ms>      the first retry's backoff (default 500)
  --summary-max-tokens <n>        the summary's output budget (default 4096)
  --summary-context-tokens <n>    how many tokens the summary model can read
  --custom-instructions <text>    appended to the summary prompt
  --prompt-style <style>          structured (default) or continuation
  --output-dir <dir|url>          where archives go (default ${DEFAULT_OUTPUT_DIR}), or an object
                                  store: s3://bucket/prefix, gs://…, az://…, file:///path
  --store-option <key=value>      object-store configuration (repeatable), e.g.
                                  aws_endpoint=http://127.0.0.1:9000; credentials are better
                                  left in the environment (AWS_SECRET_ACCESS_KEY, …), where
                                  other users' process lists cannot see them
  --session-id <id>               the archive session (default "default")
  --require-archive               skip the compaction when the archive cannot be written
  --offload <scope>               what may be shortened when the kept messages alone do not fit:
                                  tool-results (default), all (user text too) or off
  --thinking <policy>             thinking blocks of kept turns: auto (default, by the agent
                                  model), keep or strip
  --encoding <name>               o200k_base (default) or cl100k_base
  --format <name>                 the messages' format: auto (default: detected), anthropic,
                                  openai, openai-responses, ai-sdk, gemini, bedrock or langchain
  -h, --help                      show this help

Exit status: 0 compacted or below the threshold, 1 invalid input or a failed compaction
(the output is then the input unchanged) or a result still over the threshold
(STILL_OVER_LIMIT: the output is the smaller, compacted list), 2 usage error.`

const COMPACT_FLAGS = {
  ...COMMON,
  ...THRESHOLD_FLAGS,
  output: { type: 'string', short: 'o' },
  quiet: { type: 'boolean', short: 'q' },
  'tail-ratio': { type: 'string' },
  'keep-recent-turns': { type: 'string' },
  force: { type: 'boolean' },
  provider: { type: 'string' },
  model: { type: 'string' },
  'base-url': { type: 'string' },
  'timeout-ms': { type: 'string' },
  'max-retries': { type: 'string' },
  'retry-base-delay-ms': { type: 'string' },
  'summary-max-tokens': { type: 'string' },
  'summary-context-tokens': { type: 'string' },
  'custom-instructions': { type: 'string' },
  'prompt-style': { type: 'string' },
  'output-dir': { type: 'string' },
  'store-option': { type: 'string', multiple: true },
  'session-id': { type: 'string' },
  'require-archive': { type: 'boolean' },
  offload: { type: 'string' },
  thinking: { type: 'string' },
}

/** `--store-option key=value` (repeatable) as `storeOptions`, or undefined when none is given. */
function storeOptions(values) {
  const pairs = values['store-option']
  if (!pairs || pairs.length === 0) return undefined
  const options = {}
  for (const pair of pairs) {
    const at = pair.indexOf('=')
    // Never echoed: without "=" the whole argument may be a credential.
    if (at <= 0) throw usageError(`--store-option expects key=value (an argument ${at < 0 ? 'without "="' : 'without a key'} was given)`)
    options[pair.slice(0, at)] = pair.slice(at + 1)
  }
  return options
}

const STORE_FLAGS = { 'output-dir': { type: 'string' }, 'store-option': { type: 'string', multiple: true } }
const STORE_HELP = `  --output-dir <dir|url>   where archives are (default ${DEFAULT_OUTPUT_DIR}), or an object-store
                           URL (s3://bucket/prefix, gs://…, az://…, file:///path)
  --store-option <k=v>     object-store configuration (repeatable), e.g. aws_endpoint=…`

function compactOptions(values, conversation) {
  const options = thresholdOptions(values, conversation)
  const set = (key, value) => {
    if (value !== undefined) options[key] = value
  }
  set('encoding', choice(values, 'encoding', ENCODINGS))
  set('tailRetentionRatio', number(values, 'tail-ratio', { min: 0, max: 1 }))
  set('keepRecentTurns', number(values, 'keep-recent-turns', { integer: true }))
  set('provider', choice(values, 'provider', PROVIDERS))
  set('model', values.model)
  set('baseUrl', values['base-url'])
  set('timeoutMs', number(values, 'timeout-ms', { integer: true, min: 1 }))
  set('maxRetries', number(values, 'max-retries', { integer: true }))
  set('retryBaseDelayMs', number(values, 'retry-base-delay-ms', { integer: true }))
  set('summaryMaxTokens', number(values, 'summary-max-tokens', { integer: true, min: 1 }))
  set('summaryContextTokens', number(values, 'summary-context-tokens', { integer: true, min: 1 }))
  set('customInstructions', values['custom-instructions'])
  set('promptStyle', choice(values, 'prompt-style', PROMPT_STYLES))
  set('offload', choice(values, 'offload', OFFLOAD_SCOPES))
  set('thinking', choice(values, 'thinking', THINKING_POLICIES))
  set('format', formatOption(values).format)
  set('outputDir', values['output-dir'])
  set('storeOptions', storeOptions(values))
  set('sessionId', values['session-id'])
  if (values.force) options.force = true
  if (values['require-archive']) options.requireArchive = true
  return options
}

/**
 * Compacts with progress on stderr. A `Compactor` counts each message once: validating,
 * measuring and compacting share its per-message cache.
 */
async function compactWithProgress(compactor, messages, overrides, { quiet, label }) {
  const measure = await call(() => compactor.measure(messages, overrides))
  const willRun = measure.shouldCompact || compactor.options.force || overrides.force
  const p = willRun ? progress({ quiet, label }) : null
  let result
  try {
    result = await call(() =>
      compactor.compact(messages, {
        ...overrides,
        onEvent: p ? p.onEvent : undefined,
        // Log entries are shown as one-line warnings (or not at all with --quiet), so they
        // never break the spinner's line.
        onLog: p ? p.onLog : () => {},
      }),
    )
  } finally {
    if (p) p.stop(result)
  }
  return { measure, result }
}

/** A Compactor for these options (a TypeError from them is a usage error). */
async function compactorFor(options) {
  return call(() => new (lib().Compactor)(options))
}

async function cmdCompact(argv) {
  const { values, positionals } = parse(argv, COMPACT_FLAGS, { positionals: 1, positionalNames: ['<file|->'] })
  if (values.help) return stdout(COMPACT_HELP)
  const quiet = Boolean(values.quiet)
  const conversation = await readConversation(positionals[0])
  const { usage, ...options } = compactOptions(values, conversation)
  const compactor = await compactorFor(options)
  validateMessages(conversation, compactor)
  const info = (text) => quiet || stderr(text)
  const problems = lib().checkMessages(conversation.messages, { format: options.format })
  if (problems.length > 0) {
    info(
      `warning: the input has ${problems.length} problem${problems.length === 1 ? '' : 's'} the APIs would reject (first: messages[${problems[0].index}] ${problems[0].kind}); run \`${NAME} check\``,
    )
  }
  const { measure, result } = await compactWithProgress(compactor, conversation.messages, usage === undefined ? {} : { usage }, {
    quiet,
    label: 'writing the summary',
  })
  if (!result.compacted && !result.error) {
    info(`${fmt(measure.tokens)} tokens < threshold ${fmt(measure.threshold)}: nothing to compact (use --force to compact anyway)`)
  } else if (result.compacted) {
    info(table(statsRows(result, conversation.messages.length)))
  }
  for (const warning of result.warnings) info(`warning: ${oneLine(warning)}`)
  const output = envelope(conversation, result.messages)
  if (values.json) {
    if (values.output !== undefined) writeJson(values.output, output)
    writeJson(undefined, { ...result, messages: result.messages })
  } else {
    writeJson(values.output, output)
  }
  if (result.error) {
    const what = result.compacted ? 'compacted, but the result does not fit' : 'compaction failed'
    stderr(`${NAME}: ${what}: ${result.error.code}: ${oneLine(result.error.message)}`)
    process.exitCode = 1
  }
}

// ---------------------------------------------------------------------------------------------
// history, restore, prune

const HISTORY_HELP = `Usage: ${NAME} history [--output-dir <dir>] [--session-id <id>] [--json]

Lists the archives of a session (oldest first): sequence, time, message count, size, path and the
first line of the summary that replaced them.

Options:
${STORE_HELP}
  --session-id <id>    the session (default "default")
  --json               print the list as JSON on stdout
  -h, --help           show this help`

async function cmdHistory(argv) {
  const { values } = parse(argv, { json: { type: 'boolean' }, ...STORE_FLAGS, 'session-id': { type: 'string' } })
  if (values.help) return stdout(HISTORY_HELP)
  const outputDir = values['output-dir'] ?? DEFAULT_OUTPUT_DIR
  const sessionId = values['session-id'] ?? 'default'
  const archives = await call(() => lib().listArchives(outputDir, sessionId, { storeOptions: storeOptions(values) }))
  if (values.json) return stdout(JSON.stringify(archives, null, 2))
  if (archives.length === 0) return stdout(`no archives for session "${sessionId}" in ${outputDir}`)
  stdout(`${archives.length} archive${archives.length === 1 ? '' : 's'} for session "${sessionId}" in ${outputDir}`)
  for (const a of archives) {
    const summary = a.summary ? oneLine(a.summary.split('\n').find((l) => l.trim() && !l.startsWith('[context-compact]') && !l.startsWith('#')) ?? '') : ''
    stdout(
      `  #${a.sequence}  ${a.createdAt}  ${a.messageCount === null ? '?' : fmt(a.messageCount)} messages  ${fmt(a.sizeBytes)} bytes  ${a.path}`,
    )
    if (summary) stdout(`      ${summary.slice(0, 100)}`)
  }
}

const RESTORE_HELP = `Usage: ${NAME} restore <file|-> [-o out.json] [--output-dir <dir>] [--session-id <id>]

Rolls a compacted conversation back: every summary written by context-compact is replaced by the
archived messages it names (recursively), giving the full original conversation, in the input's
envelope, on stdout or -o.

Options:
  -o, --output <file>  write the restored conversation here instead of stdout
${STORE_HELP}
  --session-id <id>    the session (default "default")
  --format <name>      the messages' format (default: detected; see \`${NAME} count --help\`)
  -q, --quiet          nothing on stderr (except a failure)
  -h, --help           show this help`

async function cmdRestore(argv) {
  const { values, positionals } = parse(
    argv,
    {
      output: { type: 'string', short: 'o' },
      quiet: { type: 'boolean', short: 'q' },
      ...STORE_FLAGS,
      'session-id': { type: 'string' },
      format: { type: 'string' },
    },
    { positionals: 1, positionalNames: ['<file|->'] },
  )
  if (values.help) return stdout(RESTORE_HELP)
  const format = formatOption(values)
  // Invalid messages are rejected by restoreMessages itself (a TypeError naming the index: exit 1).
  const conversation = await readConversation(positionals[0])
  const options = {
    outputDir: values['output-dir'] ?? DEFAULT_OUTPUT_DIR,
    sessionId: values['session-id'] ?? 'default',
    storeOptions: storeOptions(values),
    ...format,
  }
  const restored = await call(() => lib().restoreMessages(conversation.messages, options))
  writeJson(values.output, envelope(conversation, restored))
  if (!values.quiet) stderr(`restored ${fmt(conversation.messages.length)} → ${fmt(restored.length)} messages`)
}

const PRUNE_HELP = `Usage: ${NAME} prune --older-than-days <n> [--output-dir <dir>] [--session-id <id>] [--json]

Removes archives (and their metadata) written more than <n> days ago, in every session under
the output directory or in one. Audit logs and summary files are kept.

Options:
  --older-than-days <n>  required; fractions allowed, 0 removes every archive written before now
${STORE_HELP}
  --session-id <id>      only this session
  --json                 print the result as JSON on stdout
  -h, --help             show this help`

async function cmdPrune(argv) {
  const { values } = parse(argv, {
    json: { type: 'boolean' },
    'older-than-days': { type: 'string' },
    ...STORE_FLAGS,
    'session-id': { type: 'string' },
  })
  if (values.help) return stdout(PRUNE_HELP)
  const olderThanDays = number(values, 'older-than-days')
  if (olderThanDays === undefined) throw usageError('prune needs --older-than-days <n>')
  const outputDir = values['output-dir'] ?? DEFAULT_OUTPUT_DIR
  const options = { olderThanDays, storeOptions: storeOptions(values) }
  if (values['session-id'] !== undefined) options.sessionId = values['session-id']
  const result = await call(() => lib().pruneArchives(outputDir, options))
  if (values.json) return stdout(JSON.stringify(result, null, 2))
  stdout(`removed ${fmt(result.removed.length)} file${result.removed.length === 1 ? '' : 's'}, kept ${fmt(result.kept)} archive${result.kept === 1 ? '' : 's'}`)
  for (const file of result.removed) stdout(`  ${file}`)
}

// ---------------------------------------------------------------------------------------------
// demo

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

  const generatorPath = path.join(__dirname, '..', 'benchmark', 'generate.mjs')
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
  for (const warning of result.warnings) stdout(`   warning: ${oneLine(warning)}`)

  stdout(`\n6. The originals are archived in ${result.archivePath ?? '(not written)'}`)
  stdout(`   ${NAME} history --output-dir ${outputDir} --session-id ${sessionId}`)
  stdout(`\nDone in ${((Date.now() - started) / 1000).toFixed(1)} s.`)
}

// ---------------------------------------------------------------------------------------------
// main

const COMMANDS = {
  count: cmdCount,
  check: cmdCheck,
  compact: cmdCompact,
  history: cmdHistory,
  restore: cmdRestore,
  prune: cmdPrune,
  demo: cmdDemo,
}

const MAIN_HELP = `Usage: ${NAME} <command> [options]

Keeps LLM agent loops alive past their context window.

Commands:
  demo                  compact a generated 200K-token agent session (offline without API keys)
  count <file|->        tokens: total, per role, per block type, the largest messages
  check <file|->        threshold status and a validity report (orphan tool results, …)
  compact <file|->      compact a conversation (stdout or -o), with progress and statistics
  history               list a session's archives
  restore <file|->      restore the full conversation from a compacted one and its archives
  prune                 remove archives older than N days

<file> is a JSON message array, an Anthropic request body {system, tools, messages} or an
OpenAI body {messages, tools}; "-" reads stdin. Run \`${NAME} <command> --help\` for its options.

Exit status: 0 ok, 1 failure (invalid input or conversation, failed compaction), 2 usage error.`

async function main(argv) {
  const [command, ...rest] = argv
  if (command === undefined) {
    stderr(MAIN_HELP)
    process.exitCode = 2
    return
  }
  if (command === '-h' || command === '--help' || command === 'help') {
    if (rest[0] && COMMANDS[rest[0]]) return COMMANDS[rest[0]](['--help'])
    return stdout(MAIN_HELP)
  }
  if (command === '-v' || command === '--version') {
    return stdout(require('../package.json').version)
  }
  const run = COMMANDS[command]
  if (!run) throw usageError(`unknown command ${JSON.stringify(command)} (expected ${Object.keys(COMMANDS).join(', ')})`)
  await run(rest)
}

process.stdout.on('error', (error) => {
  // `context-compact … | head`: the reader left; that is not our failure.
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0)
  throw error
})

main(process.argv.slice(2)).catch((error) => {
  const code = error instanceof CliError ? error.exitCode : 1
  const message = error instanceof CliError ? error.message : `unexpected error: ${oneLine(error && error.message)}`
  stderr(`${NAME}: ${oneLine(message)}${code === 2 ? ` (see ${NAME} --help)` : ''}`)
  if (process.env.CONTEXT_COMPACT_DEBUG && error && error.stack) stderr(error.stack)
  process.exitCode = code
})
