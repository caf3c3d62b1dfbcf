'use strict'

// context-compact/mastra: compaction as a Mastra processor (`@mastra/core` 1.x). Built on a
// Compactor (lib/compactor/compactor.js): this file only reads Mastra's message list, hands the Compactor
// the AI SDK messages the model will see, and writes the result back into the list. Types and
// documentation: adapters/mastra/index.d.ts; guide: docs/mastra.md.
//
// What Mastra does with a processor (read from @mastra/core 1.71's sources):
// - `processInputStep` runs before every model call of a run (tool-call continuations too), with
//   the run's `MessageList`. What it changes in the list stays for the later steps: it is the list
//   the next step starts from.
// - Mastra collects the steps of one run in a single assistant message (one `step-start` part per
//   step), which grows as the run goes. Dropping that message would drop the whole run, so the
//   Compactor sees each step of it as its own messages, and a compaction in the middle of a run
//   keeps the message with the parts of the kept steps only (same id: later steps still go to it).
// - The list is ordered by `createdAt`: the summary is stamped with the time of the first kept
//   message and added before it.
// - `processAPIError` (in `errorProcessors`) runs for a model call the provider rejected and
//   Mastra does not retry itself (a 400, not a 429 or 5xx), and only when the agent has
//   `errorProcessors` (or `maxProcessorRetries`). It may change the list and return
//   `{ retry: true }`: Mastra then repeats the call with the list as it is now.
//
// Nothing is required from `@mastra/core`: the list's own class converts messages (a new,
// empty list of the same class holds one message at a time).

const { Compactor, isContextOverflow } = require('../../index.js')
const { describe, invalidArgument } = require('../../lib/addon/validate.js')
const { takeSnapshot, unchangedSince } = require('../../lib/addon/snapshot.js')
const { ListCache } = require('../../lib/compactor/list-cache.js')
const { BUILT_BY_ADAPTER } = require('../../lib/compactor/compactor.js')
const { objectOptions, rejectOptions, aiSdkUsage, aiSdkToolDefinitions, readJsonSchema, startsWith } = require('../kit.js')

// Options the processor reads or sets per call itself.
const STEP_OPTIONS = {
  usage: "is read from each step (the previous step's billed usage)",
  force: 'would compact before every step',
  overflow: 'belongs to one rejected request: put the processor in `errorProcessors` and `processAPIError` passes it',
}

function isMessageList(value) {
  return value !== null && typeof value === 'object' && value.get && value.get.all && typeof value.get.all.db === 'function' && typeof value.removeByIds === 'function' && typeof value.add === 'function'
}

// One message of the list as the pieces the model sees separately: an assistant message holding
// several steps is one piece per step (its parts from one `step-start` to the next); any other
// message is one piece.
function piecesOf(message) {
  const parts = message.content && Array.isArray(message.content.parts) ? message.content.parts : null
  if (message.role !== 'assistant' || parts === null) return [{ message, parts }]
  const pieces = []
  let current = []
  for (const part of parts) {
    if (part && part.type === 'step-start' && current.some((p) => p && p.type !== 'step-start')) {
      pieces.push({ message, parts: current })
      current = []
    }
    current.push(part)
  }
  if (current.length > 0 || pieces.length === 0) pieces.push({ message, parts: current })
  return pieces
}

// A copy of `message` holding `parts` only (the string and legacy tool fields describe the whole
// message, so they are left out; the parts are what Mastra converts from).
function withParts(message, parts) {
  const { content: _text, toolInvocations: _tools, ...content } = message.content
  return { ...message, content: { ...content, parts } }
}

// The step's tools as the provider receives them (name, description, JSON schema), which is what
// every request is billed for: counted into the estimate like the Compactor's `tools`, never
// changed. Mastra hands the step its tools converted for the model: `{ type: 'function',
// description, parameters: { jsonSchema } }`, or a provider's own tool (`type: 'provider-defined'`).
// A schema that cannot be read without the framework: the tool is counted by its name and description.
function toolDefinitions(tools) {
  return aiSdkToolDefinitions(tools, async (tool) => {
    const schema = tool.parameters ?? tool.inputSchema
    if (schema === undefined || schema === null) return { type: 'object', properties: {} }
    try {
      return await readJsonSchema(schema)
    } catch {
      return undefined
    }
  })
}

class ContextCompactProcessor {
  constructor(options) {
    const { format, id, ...rest } = objectOptions(options)
    rejectOptions(rest, STEP_OPTIONS, (name, why) => `options.${name} cannot be given to ContextCompactProcessor: it ${why}`)
    if (format !== undefined && format !== null && format !== 'ai-sdk') {
      throw invalidArgument(`options.format must be 'ai-sdk' (the messages Mastra sends the model) or omitted, got ${typeof format === 'string' ? `'${format}'` : describe(format)}`)
    }
    if (id !== undefined && (typeof id !== 'string' || id === '')) throw invalidArgument(`options.id must be a non-empty string, got ${describe(id)}`)
    this.id = id ?? 'context-compact'
    this.name = 'Context compaction'
    this.description = 'Replaces the older part of the conversation with a summary when it nears the context window'
    Object.defineProperty(this, 'compactor', { value: new Compactor({ ...rest, format: 'ai-sdk' }), enumerable: true })
    // The model messages are this processor's conversions: it compares Mastra's messages.
    this.compactor[BUILT_BY_ADAPTER]()
    this.lastResult = null
    // The tools given in the options (counted at every step) win over the step's own.
    this.#fixedTools = rest.tools !== undefined && rest.tools !== null
  }

  #fixedTools
  // What the steps of a run read, per MessageList (a processor in an agent serves its runs, each
  // with its list): `messages`, each list message's conversion (`{ tape, pieces: [{ parts, tape,
  // model }] }`), which a step reuses for the messages list-cache.js finds unchanged (the last
  // step's objects at their positions: what was appended, the tail and a rotation of older ones
  // are compared), so a step costs what was appended, and a compaction compares every message
  // first; `model`, the last model list built, and where each message's model messages end in it;
  // `sent`, the model messages the previous step was sent: its usage describes them (and its reply).
  #runs = new WeakMap()
  #lastRun = null
  // The step's tool set last read, and its definitions (Mastra hands the same object each step).
  #tools = { from: undefined, definitions: undefined }

  /** Compacts the step's messages when the trigger fires; the change stays for the later steps. */
  async processInputStep(args) {
    const changed = await this.#run(args, 'processInputStep', {})
    return changed ? args.messageList : undefined
  }

  /**
   * A rejection that says the request is over the context window: compacts (as an overflow, so
   * the threshold is the rejected size) and asks Mastra to retry. Any other error: not ours.
   */
  async processAPIError(args) {
    if (args === null || typeof args !== 'object' || !isContextOverflow(args.error)) return undefined
    const changed = await this.#run(args, 'processAPIError', { overflow: args.error })
    return changed ? { retry: true } : undefined
  }

  async #run(args, hook, overrides) {
    if (args === null || typeof args !== 'object' || !isMessageList(args.messageList)) {
      throw invalidArgument(`${hook}'s argument must be Mastra's processor arguments with a messageList, got ${describe(args)}`)
    }
    const list = args.messageList
    const system = systemOf(args.systemMessages ?? safeSystemMessages(list))
    const call = { ...overrides }
    if (system !== undefined) call.system = system
    if (args.abortSignal) call.signal = args.abortSignal
    if (!this.#fixedTools && args.tools !== null && typeof args.tools === 'object') {
      if (this.#tools.from !== args.tools) this.#tools = { from: args.tools, definitions: await toolDefinitions(args.tools) }
      if (this.#tools.definitions.length > 0) call.tools = this.#tools.definitions
    } else if (!this.#fixedTools && this.#tools.definitions !== undefined && hook === 'processAPIError') {
      // processAPIError is not shown the tools: those of the step that was rejected.
      call.tools = this.#tools.definitions
    }

    const db = list.get.all.db()
    const Empty = list.constructor
    let run = this.#runs.get(list)
    if (run === undefined) {
      // A new run (its list holds the thread's messages read back from memory, new objects):
      // they are compared with those the last run read, not converted again.
      const last = this.#lastRun
      run = { messages: last ? last.messages.fork() : new ListCache(), model: last ? { model: last.model.model.slice(), ends: last.model.ends.slice() } : { model: [], ends: [] }, sent: null }
      this.#runs.set(list, run)
    }
    this.#lastRun = run
    const exact = overrides.overflow !== undefined
    let { entries, model } = this.#convert(run, db, exact, Empty)
    // The previous step's billed usage counts only for the list that step sent, grown by what it
    // added (the same objects: unchanged pieces keep their conversions; the very array when
    // nothing before was changed); any other list (after a compaction, messages changed by
    // another processor) is estimated alone.
    const steps = Array.isArray(args.steps) ? args.steps : []
    if (hook === 'processInputStep' && steps.length > 0 && run.sent !== null && (run.sent === model || startsWith(model, run.sent))) {
      const usage = aiSdkUsage(steps[steps.length - 1])
      if (usage !== undefined) call.usage = usage
    }
    if (hook === 'processInputStep') run.sent = model
    if (!exact) {
      if (!this.compactor.shouldCompact(model, call)) return false
      // A message edited in place where this step did not look is read before it is summarized.
      ;({ entries, model } = this.#convert(run, db, true, Empty))
      run.sent = model
    }
    const result = await this.compactor.compact(model, call)
    this.lastResult = result
    annotateSpan(args, hook, result)
    if (!result.compacted) return false
    const pieces = []
    const owner = new Map() // model message -> its piece
    entries.forEach((entry, i) => {
      for (const { parts, model: converted } of entry.pieces) {
        const piece = { message: db[i], parts, model: converted }
        pieces.push(piece)
        for (const m of converted) owner.set(m, piece)
      }
    })
    applyResult(list, db, pieces, result.messages, owner, Empty)
    run.sent = null
    return true
  }

  // The model messages of the list's messages, and each message's entry. A message that changed
  // keeps the conversions of its pieces that did not (Mastra edits parts in place and grows a
  // run's assistant message step by step: they are compared with their snapshots, a walk that
  // serialises nothing), so unchanged pieces give the same model objects, which the Compactor
  // has counted already.
  #convert(run, db, exact, Empty) {
    const { entries, missing, previous, prefix } = run.messages.lookup(db, exact)
    for (const i of missing) entries[i] = { tape: null, pieces: null }
    run.messages.store(db, entries, missing)
    for (const i of missing) {
      const before = previous[i]?.pieces ?? []
      const pieces = piecesOf(db[i])
      entries[i].pieces = pieces.map((piece, k) => {
        const one = piece.parts === null ? piece.message : withParts(piece.message, piece.parts)
        const old = before[k]
        if (old && old.tape !== null && unchangedSince(one, 0, old.tape)) return { parts: piece.parts, tape: old.tape, model: old.model }
        // A message of one piece is compared as a whole (its entry's snapshot) and converted again
        // when it changed.
        const tape = pieces.length > 1 ? takeSnapshot(one, 0) : null
        return { parts: piece.parts, tape, model: new Empty().add(one, 'memory').get.all.aiV5.model() }
      })
    }
    // The last model list up to the first message that is not the last list's, then the rest.
    // When the whole last list is kept, the same array grows (the array handed over last is not
    // kept by the Compactor, which copies what it keeps; `sent` then is where it starts).
    const last = run.model
    const same = Math.min(prefix, last.ends.length)
    const grown = same === last.ends.length && same > 0
    const model = grown ? last.model : last.model.slice(0, same === 0 ? 0 : last.ends[same - 1])
    const ends = grown ? last.ends : last.ends.slice(0, same)
    for (let i = same; i < entries.length; i++) {
      const pieces = entries[i].pieces
      for (let k = 0; k < pieces.length; k++) {
        const converted = pieces[k].model
        for (let j = 0; j < converted.length; j++) model.push(converted[j])
      }
      ends.push(model.length)
    }
    run.model = { model, ends }
    return { entries, model }
  }
}

// Mastra gives every processor run its own span (when the agent's Mastra instance has
// observability): the compaction's outcome goes into that span's metadata, under the names the
// library's own trace attributes use, so a trace shows what the processor did and at what size.
function annotateSpan(args, hook, result) {
  const span = (args.tracingContext && args.tracingContext.currentSpan) || (args.tracing && args.tracing.currentSpan)
  if (!span || typeof span.update !== 'function') return
  const still = result.error && result.error.code === 'STILL_OVER_LIMIT'
  const status = result.compacted ? (still ? 'still_over_limit' : 'compacted') : result.error ? 'failed' : 'below_threshold'
  const metadata = {
    'context_compact.hook': hook,
    'context_compact.trigger': hook === 'processAPIError' ? 'overflow' : 'threshold',
    'context_compact.strategy': result.strategy,
    'context_compact.status': status,
    'context_compact.tokens_before': result.tokens,
    'context_compact.tokens_after': result.compacted ? result.stats.compactedTokenCount : result.tokens,
    'context_compact.threshold': result.threshold,
    'context_compact.archive': result.archivePath,
    'gen_ai.conversation.compacted': result.compacted,
  }
  if (result.error) metadata['context_compact.error'] = result.error.code
  try {
    span.update({ metadata })
  } catch {
    // A tracer that throws does not break the step.
  }
}

// The system messages Mastra sends (the agent's instructions and the processors' tagged ones),
// counted into every estimate, never summarized.
function safeSystemMessages(list) {
  try {
    return typeof list.getSystemMessages === 'function' ? list.getSystemMessages() : []
  } catch {
    return []
  }
}

function systemOf(messages) {
  if (!Array.isArray(messages) || messages.length === 0) return undefined
  const blocks = []
  for (const message of messages) {
    if (!message || typeof message !== 'object') continue
    const content = message.content
    if (typeof content === 'string') blocks.push({ type: 'text', text: content })
    else if (Array.isArray(content)) {
      for (const part of content) if (part && typeof part.text === 'string') blocks.push({ type: 'text', text: part.text })
    }
  }
  return blocks.length === 0 ? undefined : blocks
}

// Writes the compacted model messages back as the list's messages: a piece all of whose model
// messages were kept stays (a message all of whose pieces stayed is the very object it was);
// everything else (the summary, messages the strategy changed) is converted from the AI SDK
// messages by the list's own class.
function applyResult(list, db, pieces, output, owner, Empty) {
  const present = new Set(output)
  const keptPiece = (piece) => piece.model.length > 0 && piece.model.every((m) => present.has(m))
  /** @type {Array<{ kind: 'piece', piece: object } | { kind: 'new', messages: object[] }>} */
  const items = []
  const seen = new Set()
  let pending = []
  const flush = () => {
    if (pending.length > 0) items.push({ kind: 'new', messages: pending })
    pending = []
  }
  for (const m of output) {
    const piece = owner.get(m)
    if (piece !== undefined && keptPiece(piece)) {
      if (seen.has(piece)) continue
      seen.add(piece)
      flush()
      items.push({ kind: 'piece', piece })
    } else {
      pending.push(m)
    }
  }
  flush()
  // Pieces the model never sees (no model message: a message of data parts only, an empty step)
  // were not the Compactor's to drop: those after the first kept piece stay where they were.
  const order = new Map(pieces.map((piece, i) => [piece, i]))
  const firstKept = Math.min(...items.filter((item) => item.kind === 'piece').map((item) => order.get(item.piece)))
  for (const [i, piece] of pieces.entries()) {
    if (piece.model.length > 0 || i < firstKept) continue
    const at = items.findIndex((item) => item.kind === 'piece' && order.get(item.piece) > i)
    items.splice(at === -1 ? items.length : at, 0, { kind: 'piece', piece })
  }
  const source = typeof list.makeMessageSourceChecker === 'function' ? list.makeMessageSourceChecker() : null
  const next = [] // { message, source }
  const used = new Set()
  for (let i = 0; i < items.length; i++) {
    const item = items[i]
    if (item.kind === 'piece') {
      const message = item.piece.message
      const last = next[next.length - 1]
      if (last && last.from === message) {
        last.parts.push(...item.piece.parts)
        continue
      }
      const id = used.has(message.id) ? `${message.id}-${i}` : message.id
      used.add(id)
      next.push({ from: message, id, parts: item.piece.parts === null ? null : [...item.piece.parts], source: (source && source.getSource(message)) || 'response' })
    } else {
      const converted = new Empty().add(item.messages, 'context').get.all.db()
      for (const message of converted) next.push({ created: message, source: 'context' })
    }
  }
  // The messages as they will be: kept objects as they are, shortened ones as copies.
  const finals = next.map((entry) => {
    if (entry.created) return entry
    const whole = entry.parts === null || (entry.id === entry.from.id && entry.parts.length === entry.from.content.parts.length)
    return { ...entry, message: whole ? entry.from : { ...withParts(entry.from, entry.parts), id: entry.id } }
  })
  // Re-add from the first difference, in order. New messages take the time of the message after
  // them (or of the one before, at the end): the list sorts by time, stably, in the order added.
  let first = 0
  while (first < finals.length && first < db.length && finals[first].message === db[first]) first++
  list.removeByIds(db.slice(first).map((m) => m.id))
  for (let i = first; i < finals.length; i++) {
    const entry = finals[i]
    if (entry.created) {
      const after = finals.slice(i + 1).find((e) => !e.created)
      const before = finals.slice(0, i).reverse().find((e) => !e.created)
      const at = after ? after.message.createdAt : before ? before.message.createdAt : new Date()
      entry.created.createdAt = new Date(at instanceof Date ? at.getTime() : Date.parse(at) || Date.now())
      list.add(entry.created, entry.source, { merge: false })
    } else {
      list.add(entry.message, entry.source, { merge: false })
    }
  }
}

module.exports = {
  ContextCompactProcessor,
}
