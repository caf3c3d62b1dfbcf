'use strict'

// context-compact/langchain: compaction for LangChain.js v1 agents (`createAgent` of the
// `langchain` package), in place of LangChain's own `summarizationMiddleware`; and the recall
// tool as a LangChain tool. The compaction itself is a Compactor's (lib/compactor.js): this file
// only connects it to the agent.
//
// Where it hooks in (types: adapters/langchain/index.d.ts; guide: docs/langchain.md):
//   wrapModelCall  sees the request as the model will get it — the state's messages, the system
//                  prompt and the tools (counted, never summarized), the model (its name and
//                  profile), the run's signal. Below the threshold the request goes on untouched;
//                  at it, the model gets the compacted list.
//   afterModel     writes that list into the agent state (RemoveMessage REMOVE_ALL_MESSAGES,
//                  then the list, then what the model call added), as summarizationMiddleware
//                  does from beforeModel, so the thread's checkpoints shrink with it and the
//                  next step starts from the compacted list.
// summarizationMiddleware works in beforeModel, which never sees the system prompt or the
// tools: a request can be over the window by their size alone. wrapModelCall sees them.
//
// Cost below the threshold. LangChain messages are class instances that cross into the addon
// through `toJSON()`, which copies the whole message on every call: the Compactor's per-step
// check (lib/snapshot.js walks what the addon reads) would pay that for every message of the
// history on every step (tens of milliseconds on a 400K-token history). So the Compactor is
// given plain *shadows* of the messages instead (class Shadows): below the start point a lean
// one with only what is counted, from there on one equal to `toJSON()`, which is what gets
// compacted and archived. Shadows hold the messages' own values, so the Compactor's check sees
// changes inside them; this file finds a message's shadows by its id and checks, each step, the
// few fields that its check cannot see. A state read back from a checkpointer brings new
// objects for the same messages: they take over their shadows when equal to them, so the
// counts cached for them stay valid. The system prompt and the tools are counted from the
// model's reported usage, which bills them (by the tokenizer when there is no usage yet).
//
// Failures never reach the agent: an LLM, disk or store failure is in `lastResult.error` (and
// the Compactor's events and logs), and the model is called with the messages unchanged. Only
// an abort of the run (its signal) ends the step, with the run's own AbortError.

const { createRequire } = require('node:module')
const { createHash, randomUUID } = require('node:crypto')

const { Compactor, createRecallTool } = require('../../index.js')
const { describe, invalidArgument } = require('../../lib/validate.js')
const { notCompactedResult } = require('../../lib/result.js')
const { compactionFacts } = require('../../lib/otel.js')

// ---------------------------------------------------------------------------------------------
// LangChain's modules, loaded on first use (this file is loaded only by users of LangChain, and
// LangChain is an optional peer dependency of the package).

let modules = null

// The name of the custom event each compaction dispatches (see compactionEvent).
const COMPACTION_EVENT = 'context_compact.compaction'

function langChain() {
  if (modules !== null) return modules
  let langchain
  let messages
  try {
    langchain = require('langchain')
    messages = require('@langchain/core/messages')
  } catch (error) {
    const missing = new Error(
      "context-compact/langchain needs LangChain.js v1 (the packages 'langchain' and '@langchain/core'): npm install langchain @langchain/core",
    )
    missing.code = 'ERR_CONTEXT_COMPACT_MISSING_PEER'
    missing.cause = error
    throw missing
  }
  // REMOVE_ALL_MESSAGES is LangGraph's, a dependency of `langchain` (not ours): read from there.
  let removeAll = '__remove_all__'
  try {
    removeAll = createRequire(require.resolve('langchain'))('@langchain/langgraph').REMOVE_ALL_MESSAGES ?? removeAll
  } catch {
    // The sentinel is a documented constant of LangGraph; its value is the fallback.
  }
  let convertToOpenAITool = null
  try {
    convertToOpenAITool = require('@langchain/core/utils/function_calling').convertToOpenAITool
  } catch {
    // Tools are then counted by name and description only.
  }
  let dispatchCustomEvent = null
  try {
    dispatchCustomEvent = require('@langchain/core/callbacks/dispatch').dispatchCustomEvent
  } catch {
    // An older @langchain/core: the compactions are then not sent as custom events.
  }
  modules = { langchain, messages, removeAll, convertToOpenAITool, dispatchCustomEvent }
  return modules
}

// ---------------------------------------------------------------------------------------------
// Options

// summarizationMiddleware's options that have no direct counterpart here: a TypeError names the
// one to use instead (docs/langchain.md has the whole mapping), rather than a silent ignore.
const SUMMARIZATION_OPTIONS = {
  trigger:
    'the threshold is contextTokenLimit × thresholdRatio (e.g. trigger: { tokens: 100000 } is contextTokenLimit: 100000, thresholdRatio: 1; { fraction: 0.8 } is thresholdRatio: 0.8; { messages: 50 } is maxMessages: 49)',
  keep: 'the kept tail is tailRetentionRatio × contextTokenLimit tokens, or keepRecentTurns user turns',
  tokenCounter: 'messages are counted with an exact tokenizer (encoding) and the model’s reported usage',
  summaryPrompt: 'use customInstructions (added to the built-in instructions) or your own summarizer',
  summaryPrefix: 'the summary message starts with its own line saying what it is',
  trimTokensToSummarize: 'the summarizer input is bounded by itself (oversized tool results shortened, chunks folded)',
  maxTokensBeforeSummary: 'use contextTokenLimit and thresholdRatio',
  messagesToKeep: 'use tailRetentionRatio or keepRecentTurns',
}

// Options the middleware sets on each call from the model request or the run.
const PER_REQUEST_OPTIONS = {
  usage: 'the usage_metadata of the last AIMessage',
  system: 'the request’s system prompt',
  tools: 'the request’s tools',
  signal: 'the run’s signal',
  overflow: 'the run',
  force: 'the threshold',
}

// Options of this middleware that the Compactor does not take.
const MIDDLEWARE_OPTIONS = new Set(['model', 'maxSessions'])

const DEFAULT_MAX_SESSIONS = 128

// A chat model: what `model.invoke(prompt)` can be called on.
function isChatModel(value) {
  return value !== null && typeof value === 'object' && typeof value.invoke === 'function'
}

function checkMiddlewareOptions(options) {
  if (options === undefined || options === null) options = {}
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw invalidArgument(`contextCompactMiddleware: options must be an object, got ${describe(options)}`)
  }
  for (const [name, instead] of Object.entries(SUMMARIZATION_OPTIONS)) {
    if (options[name] !== undefined) {
      throw invalidArgument(`contextCompactMiddleware: options.${name} is summarizationMiddleware's; ${instead} (see docs/langchain.md)`)
    }
  }
  for (const [name, source] of Object.entries(PER_REQUEST_OPTIONS)) {
    if (options[name] !== undefined) {
      throw invalidArgument(`contextCompactMiddleware: options.${name} is not an option of the middleware: it comes from ${source}`)
    }
  }
  const compactorOptions = {}
  for (const [key, value] of Object.entries(options)) {
    if (!MIDDLEWARE_OPTIONS.has(key) && value !== undefined) compactorOptions[key] = value
  }
  const model = options.model
  let chatModel = null
  if (isChatModel(model)) {
    if (options.summarizer !== undefined && options.summarizer !== null) {
      throw invalidArgument('contextCompactMiddleware: pass options.model (a chat model that writes the summary) or options.summarizer, not both')
    }
    chatModel = model
    // The summary request stays within what that model reads (LangChain's profile of it), as
    // summarizationMiddleware's trimTokensToSummarize keeps its request small.
    if (options.summaryContextTokens === undefined) {
      const { maxInputTokens } = factsOf(model)
      if (maxInputTokens !== undefined) compactorOptions.summaryContextTokens = maxInputTokens
    }
  } else if (typeof model === 'string') {
    // The library's own meaning: the summary model of the HTTP providers.
    compactorOptions.model = model
  } else if (model !== undefined && model !== null) {
    throw invalidArgument(`contextCompactMiddleware: options.model must be a chat model (with invoke) or a model name, got ${describe(model)}`)
  }
  const format = options.format
  if (format !== undefined && format !== null && format !== 'auto' && format !== 'langchain') {
    throw invalidArgument(`contextCompactMiddleware: options.format must be 'langchain' (an agent's state holds LangChain messages), got ${JSON.stringify(format)}`)
  }
  compactorOptions.format = 'langchain'
  if (options.sessionId !== undefined && options.sessionId !== null && typeof options.sessionId !== 'string') {
    throw invalidArgument(`contextCompactMiddleware: options.sessionId must be a string, got ${describe(options.sessionId)}`)
  }
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS
  if (!Number.isSafeInteger(maxSessions) || maxSessions < 1) {
    throw invalidArgument(`contextCompactMiddleware: options.maxSessions must be a positive integer, got ${describe(maxSessions) === 'number' ? maxSessions : describe(maxSessions)}`)
  }
  return { compactorOptions, chatModel, maxSessions }
}

// ---------------------------------------------------------------------------------------------
// Sessions: one per conversation thread

const SESSION_ID = /^[A-Za-z0-9._-]{1,128}$/

// The archive session of a run: the `sessionId` option, else the run's thread (LangGraph's
// `configurable.thread_id`), so that the archives, checkpoints and recall of one thread are never
// another thread's. A thread id that is not a valid session id gets a stable one derived from it.
function threadSessionId(configurable) {
  const thread = configurable !== null && typeof configurable === 'object' ? configurable.thread_id : undefined
  if (thread === undefined || thread === null || thread === '') return 'default'
  const text = String(thread)
  if (SESSION_ID.test(text) && text !== '.' && text !== '..') return text
  return `thread-${createHash('sha256').update(text).digest('hex').slice(0, 32)}`
}

// ---------------------------------------------------------------------------------------------
// Shadows (see the header): the plain objects the Compactor counts in place of the instances.

function isMessageInstance(value) {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof value.toJSON === 'function' &&
    value.lc_kwargs !== null &&
    typeof value.lc_kwargs === 'object' &&
    Array.isArray(value.lc_namespace)
  )
}

// Structural equality of JSON values, for a message read back as a new object (strings compare
// by content). Anything but plain data (a class instance, a function) is not equal: the message
// then gets a new shadow, which is only slower.
function sameJson(a, b, depth = 0) {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || depth > 64) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i], depth + 1)) return false
    return true
  }
  if (Array.isArray(b)) return false
  const protoA = Object.getPrototypeOf(a)
  const protoB = Object.getPrototypeOf(b)
  if ((protoA !== Object.prototype && protoA !== null) || (protoB !== Object.prototype && protoB !== null)) return false
  const keys = Object.keys(a)
  if (Object.keys(b).length !== keys.length) return false
  for (const key of keys) {
    if (!Object.hasOwn(b, key) || !sameJson(a[key], b[key], depth + 1)) return false
  }
  return true
}

// Whether each field `toJSON()` reads from the instance (`key in message ? message[key] :
// lc_kwargs[key]`, for the keys of lc_kwargs) is the constructor's own, so that `lc_kwargs`
// serializes as the message does. A message whose `content` was reassigned (without its
// lc_kwargs) is not. The fields of LangChain's message classes are read by name (a keyed read per
// field would cost several times more on every step); `extra`: any other key of lc_kwargs.
function fieldsAreKwargs(message, extra) {
  const kwargs = message.lc_kwargs
  if (
    !(message.content === kwargs.content || !('content' in kwargs)) ||
    !(message.id === kwargs.id || !('id' in kwargs)) ||
    !(message.name === kwargs.name || !('name' in kwargs)) ||
    !(message.additional_kwargs === kwargs.additional_kwargs || !('additional_kwargs' in kwargs)) ||
    !(message.response_metadata === kwargs.response_metadata || !('response_metadata' in kwargs)) ||
    !(message.tool_calls === kwargs.tool_calls || !('tool_calls' in kwargs)) ||
    !(message.invalid_tool_calls === kwargs.invalid_tool_calls || !('invalid_tool_calls' in kwargs)) ||
    !(message.usage_metadata === kwargs.usage_metadata || !('usage_metadata' in kwargs)) ||
    !(message.tool_call_id === kwargs.tool_call_id || !('tool_call_id' in kwargs)) ||
    !(message.status === kwargs.status || !('status' in kwargs)) ||
    !(message.artifact === kwargs.artifact || !('artifact' in kwargs)) ||
    !(message.role === kwargs.role || !('role' in kwargs))
  ) {
    return false
  }
  for (let i = 0; i < extra.length; i++) {
    const key = extra[i]
    if (key in message && message[key] !== kwargs[key]) return false
  }
  return true
}

const KNOWN_FIELDS = new Set([
  'content',
  'id',
  'name',
  'additional_kwargs',
  'response_metadata',
  'tool_calls',
  'invalid_tool_calls',
  'usage_metadata',
  'tool_call_id',
  'status',
  'artifact',
  'role',
])

// The keys of a message's lc_kwargs that fieldsAreKwargs does not read by name.
function extraKeysOf(kwargs) {
  const extra = []
  for (const key of Object.keys(kwargs)) if (!KNOWN_FIELDS.has(key)) extra.push(key)
  return extra
}

const EMPTY_CLASSES = new Map()

// `additional_kwargs.lc_source` of the summary message, as summarizationMiddleware marks its own.
const SUMMARY_SOURCE = 'summarization'

// The message classes of a list by their LangChain name (`HumanMessage`, …).
function classesOf(messages) {
  const classes = new Map()
  for (const message of messages) {
    if (!isMessageInstance(message)) continue
    const ctor = message.constructor
    let name
    try {
      name = typeof ctor.lc_name === 'function' ? ctor.lc_name() : ctor.name
    } catch {
      name = ctor.name
    }
    if (typeof name === 'string' && !classes.has(name)) classes.set(name, ctor)
  }
  return classes
}

// The fields the library reads to count a LangChain message of each type (the stored form's
// `type`, as `getType()` names it): crates/core/src/formats/langchain.rs. Everything else of a
// message (ids, metadata, usage) counts nothing.
const COUNTED_FIELDS = {
  human: ['content'],
  system: ['content'],
  developer: ['content'],
  ai: ['content', 'tool_calls'],
  tool: ['content', 'tool_call_id', 'status'],
  function: ['content', 'name'],
  generic: ['content', 'role'],
}

// What `toJSON()` puts under `kwargs[key]` (for a key of lc_kwargs): the instance's own field when
// it has one — a chat model may replace, say, `response_metadata` on the instance after
// construction, leaving lc_kwargs behind — else lc_kwargs'.
function fieldOf(message, key) {
  return key in message ? message[key] : message.lc_kwargs[key]
}

// Whether the counted fields of `message` are still the ones its counting shadow holds (the
// instance's fields, which toJSON reads). Read by name, per type, and only those lc_kwargs had
// when the shadow was made (`has`): this runs for every message on every step.
function countedCurrent(record, message) {
  const data = record.count.data
  const has = record.has
  if (has.content && data.content !== message.content) return false
  switch (record.type) {
    case 'ai':
      return !has.tool_calls || data.tool_calls === message.tool_calls
    case 'tool':
      return (!has.tool_call_id || data.tool_call_id === message.tool_call_id) && (!has.status || data.status === message.status)
    case 'function':
      return !has.name || data.name === message.name
    case 'generic':
      return !has.role || data.role === message.role
    default:
      return true
  }
}

// Each message has two shadows, plain objects the Compactor is given in place of the instance:
// - the *counting* shadow, `{ type, data }` (LangChain's stored form) with only the fields the
//   library counts: what the trigger measures on every step below the threshold. About half the
//   size of the whole message for the Compactor's per-step check (lib/snapshot.js), which walks
//   every object of every message: that walk is most of what a step costs.
// - the *full* shadow, `{ lc: 1, type: 'constructor', id, kwargs }`, exactly what `toJSON()` gives
//   (checked when it is made): what is compacted, archived and restored. From the start point of
//   `background` (or the threshold) until the compaction, the trigger measures it instead, so
//   that the summary prepared in the background covers exactly what is then compacted.
// Both hold the message's own values — `kwargs` is the message's `lc_kwargs` object itself when
// the instance's fields are all lc_kwargs' (else an object of the instance's fields), `data` its
// counted fields — so that the Compactor's check of its cached counts sees any change inside them
// (text pushed into a content array, an edited tool input). What that check cannot see, a field
// reassigned on the instance or a new lc_kwargs object, is checked here by reference: the
// counted fields on every step, every field when the full shadows are used.
class Shadows {
  // Message id → record (see #record); messages without an id by object.
  #byId = new Map()
  #byObject = new WeakMap()
  // Shadow (either form) → record, to give the caller's instances back.
  #byShadow = new WeakMap()

  /** The counting shadows of `messages`, in order; anything that is not a message instance as it is. */
  of(messages) {
    const shadows = new Array(messages.length)
    const byId = this.#byId
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i]
      // The usual case first, with as few reads as can be (this runs for every message on
      // every step): the record of this very object, its counted fields unchanged.
      const record = message !== null && typeof message === 'object' ? byId.get(message.id) : undefined
      if (record !== undefined && record.instance === message && (!record.exact || (message.lc_kwargs === record.kwargs && countedCurrent(record, message)))) {
        shadows[i] = record.count
      } else {
        shadows[i] = isMessageInstance(message) ? this.#recordOf(message, false).count : message
      }
    }
    // Records of messages no longer in the list (compacted away, another branch) go, now and
    // then, so that the map follows the list rather than the whole history.
    if (this.#byId.size > 2 * messages.length + 256) this.#sweep(messages)
    return shadows
  }

  /** The full shadows of `messages`. */
  full(messages) {
    const shadows = new Array(messages.length)
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i]
      shadows[i] = isMessageInstance(message) ? this.#recordOf(message, true).full : message
    }
    return shadows
  }

  // The record of `message`, checked (the counted fields, or every field when `full`) or new.
  #recordOf(message, full) {
    const id = typeof message.id === 'string' && message.id !== '' ? message.id : null
    const record = id !== null ? this.#byId.get(id) : this.#byObject.get(message)
    if (record !== undefined) {
      if (record.instance === message) {
        // The shadows are the instance itself (see #record): nothing to check here.
        if (!record.exact) return record
        if (message.lc_kwargs === record.kwargs && countedCurrent(record, message) && (!full || fullCurrent(record, message))) return record
      } else if (this.#takeOver(record, message)) {
        return record
      }
    }
    return this.#record(message, id)
  }

  // A new object with the id of a message seen before (the state read back from a
  // checkpointer): when equal to it, it takes over the shadows, whose cached counts stay valid
  // (the Compactor compares them by value).
  #takeOver(record, message) {
    if (!record.exact || message.constructor !== record.ctor) return false
    const view = viewOf(message)
    if (!sameJson(view.fields, record.full.kwargs)) return false
    const data = record.count.data
    for (const key of Object.keys(data)) data[key] = fieldOf(message, key)
    record.full.kwargs = view.fields
    Object.assign(record, { instance: message, kwargs: message.lc_kwargs, keys: view.keys, extra: view.extra, shared: view.shared })
    return true
  }

  // A new record for `message`: { instance, ctor, type, kwargs, keys, extra, shared, has, count,
  // full, exact }; `full`: the object to make its full shadow (a message the library wrote,
  // which the Compactor knows as its own), else a new one.
  #record(message, id, full = null) {
    const view = viewOf(message)
    if (full === null) full = { lc: 1, type: 'constructor', id: message.lc_id, kwargs: view.fields }
    else full.kwargs = view.fields
    // The shadows stand for the message only if the addon reads the same JSON from the full one
    // as from the message: toJSON escapes values that look serialized, renames aliased keys and
    // adds secrets or attributes of some classes. Otherwise the message is its own shadow
    // (exact, only slower: the Compactor reads it through toJSON on every step).
    let exact
    try {
      exact = JSON.stringify(full) === JSON.stringify(message)
    } catch {
      exact = false
    }
    let type
    try {
      type = message.getType()
    } catch {
      type = undefined
    }
    const counted = COUNTED_FIELDS[type]
    if (counted === undefined) exact = false
    const kwargs = message.lc_kwargs
    const has = {}
    let count = message
    if (exact) {
      const data = {}
      for (const key of counted) {
        has[key] = key in kwargs
        if (has[key]) data[key] = fieldOf(message, key)
      }
      count = { type, data }
    }
    const record = { instance: message, ctor: message.constructor, type, kwargs, keys: view.keys, extra: view.extra, shared: view.shared, has, count, full: exact ? full : message, exact }
    if (id !== null) this.#byId.set(id, record)
    else this.#byObject.set(message, record)
    this.#byShadow.set(record.count, record)
    this.#byShadow.set(record.full, record)
    return record
  }

  /**
   * A message the library wrote (`{ lc: 1, type: 'constructor', id, kwargs }`) as an instance of
   * its class, with an id as LangChain gives every message of a state; the library's object
   * becomes its full shadow (the Compactor counted it already).
   */
  adopt(written, classes) {
    const known = this.#byShadow.get(written)
    if (known !== undefined) return known.instance
    const name = String(written.id[written.id.length - 1]).replace(/Chunk$/, '')
    // The class of the agent's own messages when the list has one (the caller's copy of
    // @langchain/core, e.g. its ES module build), else ours.
    const Class = classes.get(name) ?? langChain().messages[name]
    if (typeof Class !== 'function') return written
    const kwargs = { ...written.kwargs }
    if (typeof kwargs.id !== 'string' || kwargs.id === '') {
      // A message of its own (the summary), not a changed copy of one of the state's (which
      // keeps that one's id): an id, and the mark LangChain gives a message the harness added
      // rather than the user (`addNotificationMetadata`; chat model integrations do not send it),
      // with summarizationMiddleware's source, for whatever tells summaries apart by it.
      kwargs.id = randomUUID()
      if (name === 'HumanMessage') kwargs.additional_kwargs = { ...(kwargs.additional_kwargs ?? {}), lc_source: SUMMARY_SOURCE }
    }
    const instance = new Class(kwargs)
    return this.#record(instance, instance.id, written).instance
  }

  /**
   * The caller's instance a shadow stands for; a message the library wrote is adopted (an
   * instance of the class `classes` maps its name to, when there is one).
   */
  instanceOf(item, classes = EMPTY_CLASSES) {
    const record = this.#byShadow.get(item)
    if (record !== undefined) return record.instance
    if (isSerialized(item)) return this.adopt(item, classes)
    return item
  }

  /**
   * The instance a shadow stands for, without adopting anything: a message the library wrote
   * and not yet handed out (a summary of an earlier round of this compaction) as a new instance.
   */
  peek(item) {
    const record = this.#byShadow.get(item)
    if (record !== undefined) return record.instance
    if (isSerialized(item)) {
      const Class = langChain().messages[String(item.id[item.id.length - 1]).replace(/Chunk$/, '')]
      if (typeof Class === 'function') return new Class({ ...item.kwargs })
    }
    return item
  }

  #sweep(messages) {
    const live = new Set()
    for (const message of messages) if (isMessageInstance(message) && typeof message.id === 'string') live.add(message.id)
    for (const id of this.#byId.keys()) if (!live.has(id)) this.#byId.delete(id)
  }
}

// The fields toJSON serializes for `message`: its lc_kwargs object itself when every instance
// field is lc_kwargs' own (`shared`), else a new object of the instance's fields.
function viewOf(message) {
  const kwargs = message.lc_kwargs
  const keys = Object.keys(kwargs)
  const extra = extraKeysOf(kwargs)
  const shared = fieldsAreKwargs(message, extra)
  let fields = kwargs
  if (!shared) {
    fields = {}
    for (const key of keys) fields[key] = fieldOf(message, key)
  }
  return { fields, keys, extra, shared }
}

// Whether the full shadow of `record` still serializes as `message` does (besides the counted
// fields, which countedCurrent checks): its lc_kwargs with the same fields as the instance, or
// the instance's fields as the shadow holds them.
function fullCurrent(record, message) {
  if (record.shared) return fieldsAreKwargs(message, record.extra)
  const kwargs = message.lc_kwargs
  const keys = record.keys
  let n = 0
  for (const key in kwargs) {
    if (!Object.hasOwn(kwargs, key)) continue
    if (keys[n] !== key) return false
    n += 1
  }
  if (n !== keys.length) return false
  const fields = record.full.kwargs
  for (const key of keys) if (fields[key] !== fieldOf(message, key)) return false
  return true
}

function isSerialized(item) {
  return item !== null && typeof item === 'object' && item.lc === 1 && item.type === 'constructor' && Array.isArray(item.id) && item.kwargs !== null && typeof item.kwargs === 'object'
}

// ---------------------------------------------------------------------------------------------
// What the request adds to the count: the system prompt, the tools, the usage, the model

// Tool object → its definition (JSON schema), made once per tool.
const toolDefinitions = new WeakMap()

function definitionOf(tool) {
  if (tool === null || typeof tool !== 'object') return tool
  let definition = toolDefinitions.get(tool)
  if (definition !== undefined) return definition
  const { convertToOpenAITool } = langChain()
  definition = tool
  // A LangChain tool (a class instance with a schema) is sent as its JSON schema; a provider's
  // own tool (a plain object, e.g. { type: 'web_search_20250305' }) as it is.
  if (Object.getPrototypeOf(tool) !== Object.prototype && typeof tool.name === 'string') {
    try {
      definition = convertToOpenAITool ? convertToOpenAITool(tool) : { name: tool.name, description: String(tool.description ?? '') }
    } catch {
      definition = { name: tool.name, description: String(tool.description ?? '') }
    }
  }
  toolDefinitions.set(tool, definition)
  return definition
}

// The text of the request's system prompt, or undefined.
function systemTextOf(request) {
  const message = request.systemMessage
  let text
  if (message !== null && typeof message === 'object') {
    try {
      text = message.text
    } catch {
      text = undefined
    }
    if (typeof text !== 'string' && typeof message.content === 'string') text = message.content
  }
  if (typeof text !== 'string') text = request.systemPrompt
  return typeof text === 'string' && text !== '' ? text : undefined
}

function isAiMessage(message) {
  if (message === null || typeof message !== 'object') return false
  try {
    if (typeof message.getType === 'function') return message.getType() === 'ai'
    return typeof message._getType === 'function' ? message._getType() === 'ai' : message.type === 'ai'
  } catch {
    return false
  }
}

// The usage the model reported for the last AI message (LangChain's `usage_metadata`): its
// `input_tokens` are the whole prompt that produced the message — system prompt, tools and
// every message before it, cache reads and writes included — and `output_tokens` the message
// itself: together everything up to and including it, as billed.
function usageOf(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]
    if (!isAiMessage(message)) continue
    const usage = message.usage_metadata
    if (usage === null || typeof usage !== 'object') return undefined
    const input = usage.input_tokens
    const output = usage.output_tokens
    if (!Number.isFinite(input) || input < 0) return undefined
    return { input_tokens: input, output_tokens: Number.isFinite(output) && output >= 0 ? output : 0 }
  }
  return undefined
}

// What the agent's model says of itself: its name (the trigger's per-model factor and window)
// and LangChain's profile of it (`maxInputTokens`).
const modelFacts = new WeakMap()

function factsOf(model) {
  if (model === null || typeof model !== 'object') return { name: undefined, maxInputTokens: undefined }
  let facts = modelFacts.get(model)
  if (facts !== undefined) return facts
  let name
  let maxInputTokens
  try {
    const candidate = [model.model, model.modelName, model.model_name].find((v) => typeof v === 'string' && v !== '')
    name = candidate
    const profile = model.profile
    const max = profile !== null && typeof profile === 'object' ? profile.maxInputTokens : undefined
    maxInputTokens = Number.isSafeInteger(max) && max > 0 ? max : undefined
  } catch {
    // A model whose getters throw says nothing.
  }
  facts = { name, maxInputTokens }
  modelFacts.set(model, facts)
  return facts
}

// ---------------------------------------------------------------------------------------------
// Results

// A result for a compaction that did not get to an answer (aborted, or something the Compactor
// threw): the messages unchanged, and why.
function failedResult(messages, sessionId, code, error) {
  const message = error && error.message ? String(error.message) : String(error)
  return { ...notCompactedResult(messages, { error: { code, message, attempts: 0 } }), sessionId }
}

function isAbort(error, signal) {
  return (signal !== undefined && signal !== null && signal.aborted) || (error !== null && typeof error === 'object' && error.name === 'AbortError')
}

// The text of a chat model's reply.
function replyText(reply) {
  if (reply === null || typeof reply !== 'object') return typeof reply === 'string' ? reply : ''
  if (typeof reply.content === 'string') return reply.content
  if (Array.isArray(reply.content)) {
    return reply.content.map((part) => (typeof part === 'string' ? part : part && typeof part.text === 'string' ? part.text : '')).join('')
  }
  return typeof reply.text === 'string' ? reply.text : ''
}

// LangGraph's messages stream leaves out model calls tagged so (langchain's INTERNAL_CALL_TAG):
// the summary is not the agent's answer.
const INTERNAL_CALL_TAG = 'nostream'

// ---------------------------------------------------------------------------------------------
// The middleware

class Session {
  constructor(options, sessionId, chatModel, userSummarizer) {
    this.sessionId = sessionId
    this.shadows = new Shadows()
    // The signal of the compaction running now (a summary written by the chat model is aborted
    // with the run).
    this.signal = null
    // A compacted list waiting for afterModel: { input, output } (the request's messages, the
    // compacted ones).
    this.pending = null
    // Which shadows the trigger measures (see Shadows): 'count' below the start point, 'full'
    // from there until a compaction goes through.
    this.mode = 'count'
    const summarizer = chatModel ? this.#chatSummarizer(chatModel) : userSummarizer ? this.#mapped(userSummarizer) : undefined
    this.compactor = new Compactor({ ...options, sessionId, ...(summarizer ? { summarizer } : {}) })
  }

  // `model`: the summary written by the user's chat model, asked with the rendered prompt.
  #chatSummarizer(model) {
    return async (request) => {
      const signal = this.signal ?? undefined
      const reply = await model.invoke(request.prompt, {
        ...(signal ? { signal } : {}),
        tags: [INTERNAL_CALL_TAG],
        metadata: { lc_source: 'summarization' },
      })
      return replyText(reply)
    }
  }

  // The user's own summarizer gets the instances of the messages, not their shadows (`prompt`
  // stays rendered on first read).
  #mapped(summarizer) {
    return (request) => {
      const mapped = Object.defineProperties({}, Object.getOwnPropertyDescriptors(request))
      mapped.messages = request.messages.map((m) => this.shadows.peek(m))
      return summarizer(mapped)
    }
  }
}

function contextCompactMiddleware(options) {
  const { compactorOptions, chatModel, maxSessions } = checkMiddlewareOptions(options)
  const { langchain, messages: lcMessages, removeAll } = langChain()
  const fixedSessionId = compactorOptions.sessionId ?? null
  const userSummarizer = chatModel ? undefined : compactorOptions.summarizer
  if (userSummarizer !== undefined && userSummarizer !== null && typeof userSummarizer !== 'function') {
    throw invalidArgument(`contextCompactMiddleware: options.summarizer must be a function, got ${describe(userSummarizer)}`)
  }
  delete compactorOptions.sessionId
  delete compactorOptions.summarizer
  const log = logger(compactorOptions)

  // Sessions, most recently used last; the least recently used beyond maxSessions is closed.
  const sessions = new Map()
  function sessionFor(runtime) {
    const sessionId = fixedSessionId ?? threadSessionId(runtime && runtime.configurable)
    let session = sessions.get(sessionId)
    if (session !== undefined) {
      sessions.delete(sessionId)
      sessions.set(sessionId, session)
      return session
    }
    session = new Session(compactorOptions, sessionId, chatModel, userSummarizer)
    sessions.set(sessionId, session)
    if (sessions.size > maxSessions) {
      const [oldestId, oldest] = sessions.entries().next().value
      sessions.delete(oldestId)
      oldest.compactor.close().catch(() => {})
    }
    return session
  }
  // Invalid options fail here, not on the agent's first step.
  sessionFor({ configurable: fixedSessionId ? {} : { thread_id: 'default' } })

  let lastResult = null
  const tools = { input: null, definitions: undefined }

  // Where the trigger starts measuring the full shadows: the start point of `background` (the
  // Compactor starts its summary there: lib/background.js, 80 % of the threshold by default), or
  // the threshold.
  const background = compactorOptions.background
  function startPoint(threshold) {
    if (background === undefined || background === null || background === false) return threshold
    if (typeof background === 'object' && Number.isSafeInteger(background.atTokens)) return Math.min(background.atTokens, threshold)
    const ratio = typeof background === 'object' && typeof background.atRatio === 'number' ? background.atRatio : 0.8
    return Math.min(Math.ceil(ratio * threshold), threshold)
  }

  // What the request adds to the trigger: the usage, or else the system prompt and the tools;
  // the model's name and window (the user's options win).
  function overridesOf(request) {
    const overrides = {}
    const usage = usageOf(request.messages)
    if (usage !== undefined) {
      // The model billed the system prompt and the tools in that usage: counting them again
      // would only cost a tokenization of both on every step. (Calibration from usage then
      // learns billed tokens against the messages alone, consistently.)
      overrides.usage = usage
    } else {
      const system = systemTextOf(request)
      if (system !== undefined) overrides.system = system
      if (request.tools !== tools.input) {
        tools.input = request.tools
        tools.definitions = Array.isArray(request.tools) && request.tools.length > 0 ? request.tools.map(definitionOf) : undefined
      }
      if (tools.definitions !== undefined) overrides.tools = tools.definitions
    }
    const facts = factsOf(request.model)
    if (compactorOptions.agentModel === undefined && facts.name !== undefined) overrides.agentModel = facts.name
    if (compactorOptions.contextTokenLimit === undefined && facts.maxInputTokens !== undefined) overrides.contextTokenLimit = facts.maxInputTokens
    return overrides
  }

  // Each compaction on LangChain's own channel: the custom event `context_compact.compaction`
  // (`on_custom_event` in streamEvents, `handleCustomEvent` of a callback handler, an event in a
  // LangSmith trace), dispatched in the model call's run with what the compaction did. Sending it
  // never fails the step: a run without a parent run to attach it to gets nothing.
  async function compactionEvent(list, result, sessionId) {
    const dispatch = langChain().dispatchCustomEvent
    if (typeof dispatch !== 'function') return
    try {
      await dispatch(COMPACTION_EVENT, { ...compactionFacts(list, result), sessionId })
    } catch {
      // No run to attach it to (the hooks called outside a graph).
    }
  }

  async function wrapModelCall(request, handler) {
    const runtime = request.runtime ?? {}
    const messages = request.messages
    if (!Array.isArray(messages) || messages.length === 0) return handler(request)
    const session = sessionFor(runtime)
    session.pending = null
    const signal = runtime.signal ?? undefined
    let compacted = null
    // The model call is made after this block, so that its own errors never look like ours.
    try {
      const overrides = overridesOf(request)
      let full = null
      if (session.mode === 'full') {
        full = session.shadows.full(messages)
      } else {
        // Below the start point the counting shadows are enough to say so.
        const counting = session.shadows.of(messages)
        const measure = session.compactor.measure(counting, overrides)
        if (measure.shouldCompact || measure.tokens >= startPoint(measure.threshold)) {
          session.mode = 'full'
          full = session.shadows.full(messages)
          const counted = session.compactor.countTokens(counting)
          const exact = session.compactor.countTokens(full)
          if (counted !== exact) log('warn', `the counting shadows of the messages count ${counted} tokens, the messages ${exact}: the trigger may have been late by the difference`)
        }
      }
      if (full !== null && session.compactor.shouldCompact(full, overrides)) {
        session.signal = signal ?? null
        let result
        try {
          result = await session.compactor.compact(full, signal ? { ...overrides, signal } : overrides)
        } finally {
          session.signal = null
        }
        await compactionEvent(full, result, session.sessionId)
        const classes = result.compacted ? classesOf(messages) : EMPTY_CLASSES
        const instances = result.compacted ? result.messages.map((m) => session.shadows.instanceOf(m, classes)) : messages
        lastResult = { ...result, messages: instances, sessionId: session.sessionId }
        if (result.compacted) {
          compacted = instances
          session.pending = { input: messages, output: instances }
          session.mode = 'count'
        } else if (result.error) {
          log('warn', `compaction skipped (${result.error.code}): ${result.error.message}; the model gets the messages unchanged`)
        }
      }
    } catch (error) {
      if (isAbort(error, signal)) {
        lastResult = failedResult(messages, session.sessionId, 'ABORTED', error)
        throw error
      }
      const code = error && error.code === 'ERR_CONTEXT_COMPACT_INVALID_ARGUMENT' ? 'INVALID_INPUT' : 'UNEXPECTED'
      lastResult = failedResult(messages, session.sessionId, code, error)
      log('error', `compaction failed (${code}): ${lastResult.error.message}; the model gets the messages unchanged`)
    }
    return handler(compacted ? { ...request, messages: compacted } : request)
  }

  // Writes the list the model got into the state, with what the model call added after it — only
  // when the state is still the list that was compacted (a middleware before this one may have
  // given the model other messages than the state's: then the state is left as it is).
  function afterModel(state, runtime) {
    const session = sessions.get(fixedSessionId ?? threadSessionId(runtime && runtime.configurable))
    const pending = session ? session.pending : null
    if (!pending) return undefined
    session.pending = null
    const current = state.messages
    const { input, output } = pending
    if (!Array.isArray(current) || current.length < input.length) return undefined
    for (let i = 0; i < input.length; i++) if (current[i] !== input[i]) return undefined
    return {
      messages: [new lcMessages.RemoveMessage({ id: removeAll }), ...output, ...current.slice(input.length)],
    }
  }

  const middleware = langchain.createMiddleware({
    name: 'ContextCompactMiddleware',
    wrapModelCall,
    afterModel,
  })
  Object.defineProperties(middleware, {
    lastResult: { get: () => lastResult, enumerable: false },
    close: {
      value: async () => {
        const open = [...sessions.values()]
        await Promise.all(open.map((session) => session.compactor.close()))
      },
      enumerable: false,
    },
  })
  return middleware
}

// `onLog` / `logger` of the options, for what this middleware reports itself (the Compactor
// reports through them too). Quiet without them.
function logger(options) {
  const onLog = typeof options.onLog === 'function' ? options.onLog : null
  const target = options.logger !== null && typeof options.logger === 'object' ? options.logger : null
  return (level, message) => {
    try {
      if (onLog) onLog({ level, message, target: 'context_compact::langchain' })
      const method = target && (typeof target[level] === 'function' ? target[level] : target.log)
      if (typeof method === 'function') method.call(target, `context-compact: ${message}`)
    } catch {
      // A logger's bug must not break the agent.
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The recall tool as a LangChain tool

/**
 * The recall tool (createRecallTool) as a LangChain tool for `createAgent({ tools })`: the
 * agent reads back the archived originals a summary names, or searches them. Its session is
 * `options.sessionId`, else the run's thread, as for the middleware.
 */
function recallTool(options) {
  if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
    throw invalidArgument(`recallTool: options must be an object, got ${describe(options)}`)
  }
  const opts = { ...(options ?? {}) }
  const fixedSessionId = opts.sessionId ?? null
  const byThread = new Map()
  const recallFor = (sessionId) => {
    let recall = byThread.get(sessionId)
    if (recall === undefined) {
      recall = createRecallTool({ ...opts, sessionId, format: 'langchain' })
      byThread.set(sessionId, recall)
      if (byThread.size > DEFAULT_MAX_SESSIONS) byThread.delete(byThread.keys().next().value)
    }
    return recall
  }
  // Invalid options fail here, not when the agent calls the tool.
  const probe = recallFor(fixedSessionId ?? 'default')
  const { langchain } = langChain()
  return langchain.tool(
    async (input, config) => {
      const sessionId = fixedSessionId ?? threadSessionId(config && config.configurable)
      return recallFor(sessionId).run(input)
    },
    { name: probe.name, description: probe.description, schema: probe.inputSchema },
  )
}

module.exports = {
  contextCompactMiddleware,
  recallTool,
}
