'use strict'

// createRecallTool (SPEC §4.12): a tool the agent calls to read the archived originals of what
// was compacted — a range of an archive, as a summary's `Recall: archive=… from=… to=…` lines
// name it, or the passages of the session's archives that match a query. The reading and
// searching are the core's (crates/core/src/archive/recall.rs, through the archive history
// readers, on disk or on a store); this module gives the tool its shape in each API's tool
// list, and makes sure `run` always resolves with text the model can act on.

const native = require('../addon/native.js')
const { describe, invalidArgument, checkOptions, checkOutputDir, checkSessionId, checkInteger } = require('../addon/validate.js')
const { withNonFinite, unknownOptionWarnings } = require('../options/options.js')
const { checkArchiveStore, withArchiveStore, storeJson } = require('./store.js')

const DEFAULT_NAME = 'recall'
const DEFAULT_MAX_TOKENS = 8_000
const DEFAULT_OUTPUT_DIR = './.context-compact'

const DESCRIPTION =
  'Reads back the original messages of this conversation that were compacted into a summary, or searches them. ' +
  'A summary names each compacted range in a line "Recall: archive=<file> from=<first> to=<end>": pass those ' +
  'values to read exactly those messages (from inclusive, to exclusive; a part of the range is fine). Or pass ' +
  'query (words or a phrase, case-insensitive) to find the passages that mention it across every archive of ' +
  'the conversation (or in one archive, with archive). Or pass ledger: true for the full list of the files ' +
  'touched and the commands run, when the summary\'s ledger counts some of them per folder. Use it when the ' +
  'summary lacks a detail you need: an exact error message, a value, what the user said.'

const INPUT_SCHEMA = Object.freeze({
  type: 'object',
  properties: {
    archive: { type: 'string', description: 'An archive file name from a summary\'s "Recall:" line, e.g. compact-20260101T120000Z-3.json' },
    from: { type: 'integer', minimum: 0, description: 'The first message to read (inclusive); default 0' },
    to: { type: 'integer', minimum: 0, description: 'The message after the last one to read (exclusive); default the end of the archive' },
    query: { type: 'string', description: 'Words or a phrase to search the archived messages for (case-insensitive)' },
    ledger: { type: 'boolean', description: 'true for the full ledger of this conversation: every file read, created, modified or deleted, the commands run, the failed calls (a summary lists what fits it)' },
  },
  additionalProperties: false,
})

// The tool in each API's own tool shape.
const DEFINITIONS = {
  anthropic: (name) => ({ name, description: DESCRIPTION, input_schema: schema() }),
  openai: (name) => ({ type: 'function', function: { name, description: DESCRIPTION, parameters: schema() } }),
  'openai-responses': (name) => ({ type: 'function', name, description: DESCRIPTION, parameters: schema(), strict: false }),
  // The AI SDK's `tool()` shape: its JSON-schema wrapper (what `jsonSchema()` of `ai` makes,
  // recognised by the SDK through the same global symbol), and `execute`.
  'ai-sdk': (name, run) => ({ description: DESCRIPTION, inputSchema: aiSdkSchema(schema()), execute: (input) => run(input) }),
  gemini: (name) => ({ functionDeclarations: [{ name, description: DESCRIPTION, parametersJsonSchema: schema() }] }),
  bedrock: (name) => ({ toolSpec: { name, description: DESCRIPTION, inputSchema: { json: schema() } } }),
}
DEFINITIONS['openai-chat'] = DEFINITIONS.openai
DEFINITIONS.responses = DEFINITIONS['openai-responses']
// LangChain's bindTools takes the OpenAI tool shape.
DEFINITIONS.langchain = DEFINITIONS.openai

function schema() {
  return structuredClone(INPUT_SCHEMA)
}

// AI SDK 5 validates a tool's input through the wrapper's second marker (`vercel.ai.validator`,
// which its `jsonSchema()` sets too); without it every call of the tool fails there with "value is
// not a function". AI SDK 6 and 7 read the first one.
function aiSdkSchema(jsonSchema) {
  return { [Symbol.for('vercel.ai.schema')]: true, [Symbol.for('vercel.ai.validator')]: true, _type: undefined, jsonSchema, validate: undefined }
}

// The options of createRecallTool (RecallToolOptions in index.d.ts).
const RECALL_OPTIONS = ['outputDir', 'sessionId', 'archiveStore', 'storeOptions', 'format', 'maxTokens', 'name']

// The fewest tokens an answer may have: less could not say anything (the core's floor).
const MIN_MAX_TOKENS = 200

function createRecallTool(options) {
  const opts = checkOptions(options)
  // Unknown option names: in the tool's `warnings` (a TypeError with strict: true).
  const warnings = unknownOptionWarnings(opts, 'options', RECALL_OPTIONS)
  const outputDir = opts.outputDir == null ? DEFAULT_OUTPUT_DIR : checkOutputDir(opts.outputDir, 'options.outputDir')
  const sessionId = opts.sessionId == null ? 'default' : checkSessionId(opts.sessionId, 'options.sessionId')
  const store = checkArchiveStore(opts.archiveStore)
  if (opts.storeOptions != null && (typeof opts.storeOptions !== 'object' || Array.isArray(opts.storeOptions))) {
    throw invalidArgument(`options.storeOptions must be an object of strings, got ${describe(opts.storeOptions)}`)
  }
  const maxTokens = checkInteger(opts.maxTokens, 'options.maxTokens', MIN_MAX_TOKENS, 1_000_000_000, DEFAULT_MAX_TOKENS)
  const name = opts.name == null ? DEFAULT_NAME : opts.name
  if (typeof name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(name)) {
    throw invalidArgument(`options.name must be a tool name ([A-Za-z0-9_-], 1 to 64 characters), got ${describe(name)}`)
  }
  const format = opts.format == null || opts.format === 'auto' ? 'anthropic' : opts.format
  if (typeof format !== 'string' || !Object.hasOwn(DEFINITIONS, format)) {
    throw invalidArgument(
      `options.format must be one of ${Object.keys(DEFINITIONS)
        .map((f) => `'${f}'`)
        .join(', ')}, got ${describe(opts.format)}`,
    )
  }

  // Always resolves with text for the model: a mistake in the input is answered, and even a
  // failing store is reported, never thrown into the agent's loop.
  async function run(input) {
    try {
      let value = input
      if (typeof value === 'string') {
        try {
          value = value.trim() === '' ? {} : JSON.parse(value)
        } catch (error) {
          return `The recall tool's input is not valid JSON (${error.message}). Pass an object { archive?, from?, to?, query? }.`
        }
      }
      if (value === undefined || value === null) value = {}
      let json
      try {
        // NaN and Infinity cross as what they are, so that `from: NaN` is answered as a mistake
        // and never read as "not given" (which JSON.stringify would make of it).
        json = JSON.stringify(value, withNonFinite)
      } catch (error) {
        return `The recall tool's input cannot be read (${error.message}). Pass an object { archive?, from?, to?, query? }.`
      }
      return await withArchiveStore(store, (id) => native.recallJson(outputDir, sessionId, json, maxTokens, storeJson(opts, id)))
    } catch (error) {
      return `The recall tool could not read the archives: ${error && error.message ? error.message : String(error)}`
    }
  }

  return {
    name,
    description: DESCRIPTION,
    inputSchema: schema(),
    definition: DEFINITIONS[format](name, run),
    run,
    warnings,
  }
}

module.exports = {
  createRecallTool,
}
