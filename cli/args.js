'use strict'

// Command-line arguments: parsing with node:util's parseArgs (an unknown flag is a usage
// error), checked numbers and choices, and the flags several commands share (encoding,
// format, threshold, archive store) with their help lines.

const { parseArgs } = require('node:util')

const { usageError, oneLine } = require('./errors.js')

const DEFAULT_OUTPUT_DIR = './.context-compact'

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
  const usage = jsonFlag(values, 'usage')
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
  ENCODINGS,
  COMMON,
  FORMAT_HELP,
  formatOption,
  THRESHOLD_FLAGS,
  thresholdOptions,
  storeOptions,
  STORE_FLAGS,
  STORE_HELP,
}
