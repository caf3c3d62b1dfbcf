'use strict'

// context-compact/ai-sdk: compaction as the Vercel AI SDK's `prepareStep` (AI SDK 5, 6 and 7),
// for `generateText`, `streamText` and `ToolLoopAgent`. Built on a Compactor (lib/compactor/compactor.js):
// this file only reads what the SDK hands `prepareStep` and hands back what the next model call
// should see. Types and documentation: adapters/ai-sdk/index.d.ts; guide: docs/ai-sdk.md.
//
// What the SDK gives prepareStep, and what it does with the answer (read from its sources):
// - every version: `messages` (the list the step will send unless prepareStep returns other
//   `messages`) and `steps` (the finished steps, each with the `usage` its request was billed);
//   no AbortSignal, no tools;
// - AI SDK 5 and 6 build every step's `messages` from the call's initial messages plus all the
//   response messages so far: a list returned by prepareStep is used for that one step only, and
//   the next step starts from the whole history again;
// - AI SDK 7 carries a returned list forward: the next step's `messages` are that list plus the
//   new response messages. It also passes the step's `instructions` (the system prompt).
// So that both behave the same, this adapter carries its compaction forward itself: when a
// step's messages start with the very message objects it compacted before, that prefix is
// replaced by the compacted list (on AI SDK 7 the SDK has already done it, and the prefix never
// matches). The Compactor's checkpoints cover the rest: a history that comes back as new objects
// (a new call with the history read from a database) starts with what a checkpoint covers, and
// gets the same summary message again without an LLM call.
//
// Nothing is required from `ai` at load time. It is required (lazily, once) only to read the
// JSON schema of a tool whose schema the SDK alone knows how to convert (e.g. Zod 3).

const { Compactor, createRecallTool } = require('../../index.js')
const { describe, invalidArgument } = require('../../lib/addon/validate.js')
const { objectOptions, rejectOptions, isAbortSignal, aiSdkUsage, aiSdkToolDefinitions, readJsonSchema, logger, startsWith, withCompactor } = require('../kit.js')

// Options the adapter reads each step itself: passing them would fix what must follow the run.
const STEP_OPTIONS = {
  usage: "is read from each step (the previous step's `usage`)",
  force: 'would compact before every step',
  overflow: 'belongs to one failed request: call `step.compactor.compact(messages, { overflow: error })` after it',
}

function checkSignalOption(signal) {
  if (signal === undefined || signal === null) return () => undefined
  if (typeof signal === 'function') {
    return () => {
      const value = signal()
      if (value === undefined || value === null) return undefined
      if (!isAbortSignal(value)) throw invalidArgument(`options.signal() must return an AbortSignal or undefined, got ${describe(value)}`)
      return value
    }
  }
  if (!isAbortSignal(signal)) {
    throw invalidArgument(`options.signal must be an AbortSignal or a function returning one, got ${describe(signal)}`)
  }
  return () => signal
}

// The AI SDK's system prompt (`system` of AI SDK 5/6, `instructions` of 7): a string, a system
// message, or an array of system messages; as the Compactor counts it (a string, or text blocks).
function systemOf(value, name) {
  if (typeof value === 'string') return value
  const messages = Array.isArray(value) ? value : [value]
  const blocks = []
  for (const [i, message] of messages.entries()) {
    const where = Array.isArray(value) ? `${name}[${i}]` : name
    if (message === null || typeof message !== 'object' || typeof message.content !== 'string') {
      throw invalidArgument(`${where} must be a string or a system message { role: 'system', content: string }, got ${describe(message)}`)
    }
    blocks.push({ type: 'text', text: message.content })
  }
  return typeof value === 'object' && !Array.isArray(value) ? blocks[0].text : blocks
}

// `tools`: the tool set given to generateText (`{ name: tool(…) }`), or definitions as the
// Compactor's `tools` option takes them (an array). Checked now; the schemas are read at the
// first step, since the SDK allows them to resolve asynchronously.
function checkTools(tools) {
  if (tools === undefined || tools === null) return null
  if (Array.isArray(tools)) {
    tools.forEach((definition, i) => {
      if (definition === null || typeof definition !== 'object') {
        throw invalidArgument(`options.tools[${i}] must be a tool definition object, got ${describe(definition)}`)
      }
    })
    return tools
  }
  if (typeof tools !== 'object') {
    throw invalidArgument(`options.tools must be the tool set given to the AI SDK (an object of tools) or an array of tool definitions, got ${describe(tools)}`)
  }
  for (const [name, tool] of Object.entries(tools)) {
    if (tool === null || typeof tool !== 'object') throw invalidArgument(`options.tools.${name} must be a tool object, got ${describe(tool)}`)
  }
  return tools
}

// The tool set as the provider receives it (name, description, JSON schema); definitions given
// as an array as they are.
async function toolDefinitions(tools, warn) {
  if (Array.isArray(tools)) return tools
  return aiSdkToolDefinitions(tools, async (tool, name) => {
    try {
      return await jsonSchemaOf(tool.inputSchema ?? tool.parameters)
    } catch (error) {
      warn(`the input schema of tool '${name}' could not be read (${error && error.message}); only its name and description are counted`)
      return undefined
    }
  })
}

async function jsonSchemaOf(schema) {
  // No schema: the SDK sends an empty object schema.
  if (schema === undefined || schema === null) return { type: 'object', properties: {}, additionalProperties: false }
  // AI SDK 7's lazy schema: a function returning the wrapper.
  if (typeof schema === 'function') schema = schema()
  const json = await readJsonSchema(schema)
  if (json !== undefined) return json
  // Zod 3 and the like: only the SDK knows how (it bundles the converter).
  const { asSchema } = requireAi()
  return await asSchema(schema).jsonSchema
}

let ai = null
function requireAi() {
  ai ??= require('ai')
  return ai
}

function compactionStep(options) {
  const { tools, system, signal, format, ...rest } = objectOptions(options)
  rejectOptions(rest, STEP_OPTIONS, (name, why) => `options.${name} cannot be given to compactionStep: it ${why}`)
  if (format !== undefined && format !== null && format !== 'ai-sdk' && format !== 'auto') {
    throw invalidArgument(`options.format must be 'ai-sdk' (the AI SDK's ModelMessage), got ${typeof format === 'string' ? `'${format}'` : describe(format)}`)
  }
  const toolSet = checkTools(tools)
  const fixedSystem = system === undefined || system === null ? undefined : systemOf(system, 'options.system')
  const signalOf = checkSignalOption(signal)
  const compactor = new Compactor({
    ...rest,
    format: 'ai-sdk',
    ...(fixedSystem === undefined ? {} : { system: fixedSystem }),
  })
  const log = logger(rest, 'context_compact::ai_sdk')
  const warn = (message) => log('warn', message)

  let definitions = null // the tool set's definitions, read once
  let lastResult = null
  // The last compaction, to carry forward: the step's messages it was given, and what it returned.
  let carried = null
  // What the previous step sent: its usage describes this list (and what the model added to it).
  let sent = null
  // AI SDK 7's `instructions`, as last read (the same object is read once).
  let instructions = { from: undefined, system: undefined }

  async function step(args) {
    if (args === null || typeof args !== 'object') {
      throw invalidArgument(`prepareStep's argument must be the AI SDK's step options ({ messages, steps, … }), got ${describe(args)}`)
    }
    const given = args.messages
    if (!Array.isArray(given)) throw invalidArgument(`messages must be an array of ModelMessage objects, got ${describe(given)}`)
    if (toolSet !== null && definitions === null) definitions = await toolDefinitions(toolSet, warn)

    // The list the model would see if the earlier compaction carried forward (AI SDK 5/6).
    let list = given
    if (carried !== null && startsWith(given, carried.input)) list = carried.output.concat(given.slice(carried.input.length))

    const overrides = {}
    const steps = Array.isArray(args.steps) ? args.steps : []
    // The previous step's usage counts only for the list that step sent, grown by what it
    // added; any other list (a new history, messages changed by other code) is measured alone.
    if (steps.length > 0 && sent !== null && startsWith(list, sent)) {
      const usage = aiSdkUsage(steps[steps.length - 1])
      if (usage !== undefined) overrides.usage = usage
    }
    if (fixedSystem === undefined && args.instructions !== undefined && args.instructions !== null) {
      if (instructions.from !== args.instructions) {
        let read
        try {
          read = systemOf(args.instructions, 'instructions')
        } catch {
          read = undefined
        }
        instructions = { from: args.instructions, system: read }
      }
      if (instructions.system !== undefined) overrides.system = instructions.system
    }
    if (definitions !== null) overrides.tools = definitions
    const abortSignal = signalOf()
    if (abortSignal !== undefined) overrides.signal = abortSignal

    // The trigger first: below it, nothing more is done (a compact() would read the whole list).
    if (compactor.shouldCompact(list, overrides)) {
      // Resolves for a failed summary, an unwritable archive or store (the result says why);
      // rejects only when the run's signal aborts it, which ends the run as the SDK would.
      const result = await compactor.compact(list, overrides)
      lastResult = result
      if (result.compacted) {
        carried = { input: given, output: result.messages }
        list = result.messages
      }
    }
    sent = list
    return list === given ? undefined : { messages: list }
  }

  return withCompactor(step, compactor, () => lastResult)
}

// The recall tool (createRecallTool) in the AI SDK's tool shape: `tools: { recall: recallTool(…) }`.
function recallTool(options) {
  objectOptions(options)
  if (options && options.format !== undefined && options.format !== null && options.format !== 'ai-sdk') {
    throw invalidArgument(`options.format must be 'ai-sdk' (or omitted), got ${describe(options.format) === 'string' ? `'${options.format}'` : describe(options.format)}`)
  }
  return createRecallTool({ ...options, format: 'ai-sdk' }).definition
}

module.exports = {
  compactionStep,
  recallTool,
}
