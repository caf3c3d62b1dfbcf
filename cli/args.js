'use strict'

// Command-line arguments: parsing with node:util's parseArgs (an unknown flag is a usage
// error), checked numbers and choices, and the flags several commands share (encoding,
// format, threshold, archive store) with their help lines.

const { parseArgs } = require('node:util')

const { usageError, oneLine } = require('./errors.js')
const { optionRow } = require('./library.js')

const DEFAULT_OUTPUT_DIR = './.context-compact'

// A value that starts with "-" is read by parseArgs as the next option ("--older-than-days -1"):
// a negative number is taken as the value, so that the number check can say what is wrong.
function joinNegativeValues(argv, options) {
  const out = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const name = arg.startsWith('--') && !arg.includes('=') ? arg.slice(2) : null
    if (name && options[name]?.type === 'string' && /^-\d|^-\.\d/.test(argv[i + 1] ?? '')) {
      out.push(`${arg}=${argv[++i]}`)
    } else {
      out.push(arg)
    }
  }
  return out
}

/** The known option closest to `name` (by edit distance), when one is close enough. */
function closest(name, known) {
  const distance = require('../lib/options/suggest.js').editDistance
  let best = null
  for (const candidate of known) {
    const d = distance(name, candidate)
    if (d <= Math.max(2, Math.floor(candidate.length / 3)) && (!best || d < best.d)) best = { candidate, d }
  }
  return best?.candidate
}

// parseArgs's errors in the CLI's own words.
function argumentError(error, argv, options) {
  const flag = (name) => (name.length === 1 ? `-${name}` : `--${name}`)
  const known = Object.keys(options)
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const given = (/'(-[^']*)'/.exec(error.message) ?? [])[1] ?? argv.find((a) => a.startsWith('-')) ?? '?'
    const bare = given.replace(/^--?/, '').split('=')[0]
    const hint = closest(bare, known)
    return usageError(`unknown option ${given.split('=')[0]}${hint ? ` (did you mean ${flag(hint)}?)` : ''}`)
  }
  if (error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const name = known.find((k) => error.message.includes(`--${k} `) || error.message.includes(`--${k}'`) || error.message.includes(`--${k}=`))
    if (name && options[name].type === 'boolean') return usageError(`${flag(name)} takes no value`)
    if (name) return usageError(`${flag(name)} needs a value (${flag(name)} <value>, or ${flag(name)}=<value> for one that starts with "-")`)
  }
  return usageError(oneLine(error.message))
}

function parse(argv, options, { positionals = 0, positionalNames = [] } = {}) {
  const all = { help: { type: 'boolean', short: 'h' }, ...options }
  const args = joinNegativeValues(argv, all)
  let parsed
  try {
    parsed = parseArgs({ args, options: all, allowPositionals: true, strict: true })
  } catch (error) {
    throw argumentError(error, args, all)
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

// `--name`'s value, one of the names the library's `option` accepts (from the option table).
function choice(values, name, option) {
  const raw = values[name]
  if (raw === undefined) return undefined
  const choices = optionRow(option).values
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

// `--name`'s value as the integer the library's `option` takes, within its range (from the table).
function optionInteger(values, name, option) {
  const { min, max } = optionRow(option)
  return values[name] === undefined ? undefined : number(values, name, { integer: true, min, max })
}

const COMMON = {
  json: { type: 'boolean' },
  encoding: { type: 'string' },
  format: { type: 'string' },
}

// The `format` option of every library call: which API's messages the file holds (detected
// from the messages when absent).
const FORMAT_HELP = `  --format <name>     the messages' format: auto (default: detected), anthropic, openai,
                      openai-responses, ai-sdk, gemini, bedrock or langchain`

function formatOption(values, conversation) {
  const format = choice(values, 'format', 'format') ?? conversation?.format
  return format === undefined ? {} : { format }
}

// What <file> may be, said once for the main help and every command that reads one.
const INPUT_HELP = `<file> is recognised by its content (not its name); "-" reads stdin. It is one of:
  - a JSON array of messages in any supported format (Anthropic, OpenAI Chat or Responses,
    AI SDK, Gemini, Bedrock Converse, LangChain)
  - a request body: Anthropic {system, tools, messages}, OpenAI {model, messages, tools},
    OpenAI Responses {input}, Gemini {contents}
  - a session file an agent keeps, one JSON value a line: Claude Code
    (~/.claude/projects/<dir>/<session>.jsonl), pi (~/.pi/agent/sessions/<dir>/*.jsonl) or
    Codex (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl): the list the agent's model holds
    now, with the model and the usage the agent recorded`

// The trigger's flags (check, compact): the window, the ratio, the agent's model, its usage.
const THRESHOLD_FLAGS = {
  limit: { type: 'string' },
  ratio: { type: 'string' },
  'agent-model': { type: 'string' },
  usage: { type: 'string' },
}

// The library options those flags give, with the request body's system prompt, tools and
// model (which the estimate counts).
function thresholdOptions(values, conversation) {
  const options = {}
  const limit = number(values, 'limit', { integer: true, min: 1 })
  if (limit !== undefined) options.contextTokenLimit = limit
  const ratio = number(values, 'ratio', { min: 0, max: 1 })
  if (ratio !== undefined) options.thresholdRatio = ratio
  const agentModel = values['agent-model'] ?? conversation.model
  if (agentModel !== undefined) options.agentModel = agentModel
  // A session file's last reply carries the usage the API billed for it: the trigger's best
  // input. A usage given on the command line replaces it.
  const usage = jsonFlag(values, 'usage') ?? conversation.lastUsage
  if (usage !== undefined) options.usage = usage
  if (conversation.system !== undefined) options.system = conversation.system
  if (conversation.tools !== undefined) options.tools = conversation.tools
  return options
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

// Where archives are (compact, history, restore, prune, demo).
const STORE_FLAGS = { 'output-dir': { type: 'string' }, 'store-option': { type: 'string', multiple: true } }
const STORE_HELP = `  --output-dir <dir|url>   where archives are (default ${DEFAULT_OUTPUT_DIR}), or an object-store
                           URL (s3://bucket/prefix, gs://…, az://…, file:///path)
  --store-option <k=v>     object-store configuration (repeatable), e.g. aws_endpoint=…`

module.exports = {
  DEFAULT_OUTPUT_DIR,
  parse,
  number,
  choice,
  jsonFlag,
  optionInteger,
  COMMON,
  FORMAT_HELP,
  formatOption,
  INPUT_HELP,
  THRESHOLD_FLAGS,
  thresholdOptions,
  storeOptions,
  STORE_FLAGS,
  STORE_HELP,
}
