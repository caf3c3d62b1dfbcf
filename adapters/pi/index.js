'use strict'

// context-compact/pi: compaction as pi-agent-core's `AgentOptions.prepareRequest` (1.6 and later).
// Built on a Compactor (lib/compactor/compactor.js): this file hands it pi's messages in the
// Anthropic shape the core reads (messages.js converts them) and hands back what the next provider
// request should see.
// Types and documentation: adapters/pi/index.d.ts; guide: docs/pi.md.
//
// What pi-agent-core does with prepareRequest (read from its 1.6 declarations and loop):
// - it is called before every provider request of a run, the first included, with
//   `{ context: { messages, tools }, model, thinkingLevel }` and the run's AbortSignal;
// - a returned `context` replaces the runtime context "for this and later requests in the run", so
//   a compaction sticks until the run ends; `agent.state.messages` keeps the whole transcript, and
//   the next `prompt()` starts from it again, which the Compactor's checkpoints cover (the same
//   summary message again, no second summary call);
// - the transcript carries the system prompt and the tool declarations as `role: 'system'`
//   messages (`content`, `sections`, `toolsAdded`, `toolsRemoved`). They are counted into every
//   estimate and never summarized: they keep their place when it is kept, and move to where the
//   summary goes when what surrounded them was summarized;
// - the default `convertToLlm` passes `system`, `user`, `assistant` and `toolResult` and drops
//   every other role, so the summary is a `user` message. Messages of other roles (an app's own)
//   and failed replies without content are not sent as such: they are kept as they are, uncounted.

const { Compactor, createRecallTool, restoreMessages } = require('../../index.js')
const { describe, invalidArgument } = require('../../lib/addon/validate.js')
const { objectOptions, rejectOptions, count, startsWith, withCompactor } = require('../kit.js')
const { BUILT_BY_ADAPTER } = require('../../lib/compactor/compactor.js')
const { PiConversion, toAnthropic, fromAnthropic } = require('./messages.js')

// Options the adapter sets itself.
const REQUEST_OPTIONS = {
  format: 'is always Anthropic inside (the adapter converts pi messages)',
  system: "is read from the transcript's system messages",
  usage: "is read from the last assistant reply's `usage`",
  force: 'would compact before every request',
  overflow: 'belongs to one failed request: call `prepare.compact(messages, { overflow: error })` after it',
}

// pi's usage as billed: input + cacheRead + cacheWrite (the core's Usage reader reads this shape).
function usageOf(message) {
  const usage = message && message.usage
  if (usage === null || typeof usage !== 'object') return undefined
  const input = count(usage.input)
  if (input === undefined) return undefined
  return { input, cacheRead: count(usage.cacheRead) ?? 0, cacheWrite: count(usage.cacheWrite) ?? 0, output: count(usage.output) ?? 0 }
}

function compactionRequest(options) {
  const { tools, ...rest } = objectOptions(options, 'options')
  rejectOptions(rest, REQUEST_OPTIONS, (name, why) => `options.${name} cannot be given to compactionRequest: it ${why}`)
  if (tools !== undefined && tools !== null && !Array.isArray(tools)) {
    throw invalidArgument(`options.tools must be an array of pi tools or tool definitions, got ${describe(tools)}`)
  }
  const compactor = new Compactor({ ...rest, format: 'anthropic' })
  // The Anthropic messages are this adapter's conversions: it compares pi's messages.
  compactor[BUILT_BY_ADAPTER]()
  let lastResult = null

  // pi's messages as the core reads them, a step costing what was appended (messages.js).
  const conversion = new PiConversion(tools)
  // The messages a compaction was given: a reply among them was billed for the list before it.
  let stale = new WeakSet()

  // Compacts a pi message list; `{ messages, result }`, `messages` being the list itself when nothing changed.
  // The pi messages each Anthropic message stood for, by its JSON: restore gives back the very
  // messages this process saw (with their usage, timestamps, …); the archive holds the content.
  const known = new Map()
  const remember = (anthropic, sources) => {
    anthropic.forEach((message, i) => {
      const key = JSON.stringify(message)
      if (!known.has(key)) known.set(key, sources[i])
    })
  }

  // The last compaction, carried forward: `input`, the whole transcript it stood for (pi's own
  // message objects, as agent.state.messages holds them), and `output`, the list it gave. pi keeps
  // the whole transcript, so the next prompt() starts from it again: its start is then replaced by
  // the compacted list (no second summary call for the part already summarized), and a compaction
  // of a list that starts with `output` stands for `input` too.
  let carried = null
  const expand = (list) => (carried !== null && startsWith(list, carried.output) ? carried.input.concat(list.slice(carried.output.length)) : list)
  const shorten = (list) =>
    carried !== null && !startsWith(list, carried.output) && startsWith(list, carried.input) ? carried.output.concat(list.slice(carried.input.length)) : list

  async function compactList(given, overrides, decide) {
    const messages = shorten(given)
    let step = conversion.convert(messages, !decide)
    let call = conversion.callOf(messages, step.systems, overrides)
    if (decide) {
      if (!compactor.shouldCompact(step.anthropic, call)) return { messages, result: null }
      // A message edited in place where this step did not look is read before it is summarized.
      step = conversion.convert(messages, true)
      call = conversion.callOf(messages, step.systems, overrides)
    }
    // The step's list (the one shouldCompact was shown), with where each message came from.
    const anthropic = step.anthropic
    const { sources, aside } = conversion.layout(messages, step.entries)
    const result = await compactor.compact(anthropic, call)
    lastResult = result
    if (!result.compacted) return { messages, result }
    remember(anthropic, sources)
    const full = expand(messages)
    for (const message of messages) if (message && typeof message === 'object') stale.add(message)

    const now = Date.now()
    const toolResultsById = new Map()
    for (const message of messages) if (message && message.role === 'toolResult') toolResultsById.set(message.toolCallId, message)
    const indexOf = new Map(anthropic.map((message, i) => [message, i]))
    const out = result.messages
    const summaryAt = result.summary === null ? -1 : out.findIndex((message) => !indexOf.has(message) && message.role === 'user' && message.content === result.summary)
    // The input message each output message stands for: the same object, or by position (head
    // from the start, tail from the end, around the summary).
    const originOf = (message, j) => {
      if (indexOf.has(message)) return indexOf.get(message)
      if (summaryAt === -1 || j === summaryAt) return -1
      return j < summaryAt ? j : anthropic.length - (out.length - j)
    }
    const origins = out.map(originOf)
    const listed = new Set(origins.filter((i) => i >= 0))
    const list = []
    // Messages kept aside before a summarized message go where the summary is.
    const displaced = []
    for (let i = 0; i < anthropic.length; i++) if (!listed.has(i)) displaced.push(...aside[i])
    // Where they go: at the summary, or (strategies without one) before the first kept message
    // after the first removed one.
    let firstGone = -1
    for (let i = 0; i < anthropic.length; i++) if (!listed.has(i)) { firstGone = i; break }
    let placed = displaced.length === 0
    out.forEach((message, j) => {
      const origin = origins[j]
      if (!placed && (j === summaryAt || (summaryAt === -1 && origin > firstGone))) {
        list.push(...displaced)
        placed = true
      }
      if (origin < 0) {
        list.push(...[].concat(fromAnthropic(message, null, toolResultsById, now)))
        return
      }
      list.push(...aside[origin])
      if (message === anthropic[origin]) list.push(...sources[origin])
      else list.push(...[].concat(fromAnthropic(message, sources[origin], toolResultsById, now)))
    })
    if (!placed) list.push(...displaced)
    list.push(...aside[anthropic.length])
    // A copy: pi appends the run's next messages to the list it is given.
    carried = { input: full, output: list.slice() }
    return { messages: list, result }
  }

  async function prepare(request, signal) {
    if (request === null || typeof request !== 'object' || request.context === null || typeof request.context !== 'object') {
      throw invalidArgument(`prepareRequest's argument must be pi's request ({ context, model, thinkingLevel }), got ${describe(request)}`)
    }
    const messages = request.context.messages
    if (!Array.isArray(messages)) throw invalidArgument(`request.context.messages must be an array of pi messages, got ${describe(messages)}`)
    const overrides = { contextTools: request.context.tools }
    // The last reply's usage, when it was billed for this list (not for one before a compaction).
    for (let i = messages.length - 1; i >= 0; i--) {
      const message = messages[i]
      if (message && message.role === 'assistant') {
        const usage = usageOf(message)
        if (usage !== undefined && !stale.has(message) && usage.input + usage.cacheRead + usage.cacheWrite > 0) overrides.usage = usage
        break
      }
    }
    if (signal !== undefined && signal !== null) overrides.signal = signal
    const { messages: list } = await compactList(messages, overrides, true)
    if (list === messages) return undefined
    return { context: { ...request.context, messages: list } }
  }

  return withCompactor(prepare, compactor, () => lastResult, {
    compact: {
      value: async (messages, compactOptions) => {
        if (!Array.isArray(messages)) throw invalidArgument(`messages must be an array of pi messages, got ${describe(messages)}`)
        const { usage, system, format, tools: _tools, ...others } = objectOptions(compactOptions, 'options')
        for (const [name, value] of Object.entries({ usage, system, format, tools: _tools })) {
          if (value !== undefined && value !== null) throw invalidArgument(`options.${name} cannot be given to compact: the adapter reads it from the messages`)
        }
        return compactList(messages, others, false)
      },
      enumerable: true,
    },
    restore: {
      value: async (messages) => {
        if (!Array.isArray(messages)) throw invalidArgument(`messages must be an array of pi messages, got ${describe(messages)}`)
        const { anthropic, sources, aside } = toAnthropic(messages)
        const location = {}
        for (const key of ['outputDir', 'sessionId', 'archiveStore', 'storeOptions']) if (rest[key] !== undefined && rest[key] !== null) location[key] = rest[key]
        const restored = await restoreMessages(anthropic, { ...location, format: 'anthropic' })
        const indexOf = new Map(anthropic.map((message, i) => [message, i]))
        const toolResultsById = new Map()
        for (const list of known.values()) for (const message of list) if (message.role === 'toolResult') toolResultsById.set(message.toolCallId, message)
        const now = Date.now()
        const list = []
        // Messages kept aside before a summary go where its messages come back.
        const present = new Set(restored)
        let pending = anthropic.flatMap((message, i) => (present.has(message) ? [] : aside[i]))
        for (const message of restored) {
          if (!indexOf.has(message) && pending.length > 0) {
            list.push(...pending)
            pending = []
          }
          if (indexOf.has(message)) {
            const i = indexOf.get(message)
            list.push(...aside[i], ...sources[i])
            continue
          }
          const seen = known.get(JSON.stringify(message))
          list.push(...(seen ?? [].concat(fromAnthropic(message, null, toolResultsById, now))))
        }
        list.push(...pending, ...aside[anthropic.length])
        return list
      },
      enumerable: true,
    },
  })
}

// The recall tool (createRecallTool) as a pi AgentTool: `initialState: { tools: [recallTool(…)] }`.
function recallTool(options) {
  const { format, ...rest } = objectOptions(options, 'options')
  if (format !== undefined && format !== null && format !== 'anthropic') {
    throw invalidArgument(`options.format cannot be given to the pi recall tool (it is a pi AgentTool), got ${describe(format)}`)
  }
  const recall = createRecallTool({ ...rest, format: 'anthropic' })
  const { name, description, input_schema } = recall.definition
  return {
    name,
    label: 'Recall',
    description,
    parameters: input_schema,
    execute: async (_toolCallId, params) => {
      const text = await recall.run(params ?? {})
      return { content: [{ type: 'text', text }], details: undefined }
    },
  }
}

module.exports = {
  compactionRequest,
  recallTool,
}
