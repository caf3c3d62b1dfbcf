'use strict'

// context-compact/langchain: compaction for LangChain.js v1 agents (`createAgent` of the
// `langchain` package), in place of LangChain's own `summarizationMiddleware`; and the recall
// tool as a LangChain tool. The compaction itself is a Compactor's (lib/compactor/compactor.js): this file
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
// Cost below the threshold. The Compactor is given the state's message instances themselves: it
// knows what changed among them (lib/compactor/message-counts.js: an instance where it verified it last
// step is trusted, the tail and older ones re-checked in rotation; new objects for the same
// messages, a state read back from a checkpointer, keep their counts when they read the same),
// so a step costs what the model call and the tools appended. The system prompt and the tools
// are counted from the model's reported usage, which bills them (by the tokenizer when there is
// no usage yet).
//
// Failures never reach the agent: an LLM, disk or store failure is in `lastResult.error` (and
// the Compactor's events and logs), and the model is called with the messages unchanged. Only
// an abort of the run (its signal) ends the step, with the run's own AbortError.

const { Compactor } = require('../../index.js')
const { describe, invalidArgument } = require('../../lib/addon/validate.js')
const { compactionFacts } = require('../../lib/compaction/otel.js')
const { messageClassesOf } = require('../../lib/messages/langchain-forms.js')
const { objectOptions, rejectOptions, logger, archiveSessionId, SessionPool, recallPool, messageOf, isAbort, failedResult } = require('../kit.js')

const { langChain } = require('./peer.js')
const { stateMessages, requestMessage } = require('./written.js')

// The name of the custom event each compaction dispatches (see compactionEvent).
const COMPACTION_EVENT = 'context_compact.compaction'

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
  options = objectOptions(options, 'options', 'contextCompactMiddleware: ')
  const isGiven = (value) => value !== undefined
  rejectOptions(options, SUMMARIZATION_OPTIONS, (name, instead) => `contextCompactMiddleware: options.${name} is summarizationMiddleware's; ${instead} (see docs/langchain.md)`, isGiven)
  rejectOptions(options, PER_REQUEST_OPTIONS, (name, source) => `contextCompactMiddleware: options.${name} is not an option of the middleware: it comes from ${source}`, isGiven)
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

// The archive session of a run: the `sessionId` option, else the run's thread (LangGraph's
// `configurable.thread_id`), so that the archives, checkpoints and recall of one thread are never
// another thread's. A thread id that is not a valid session id gets a stable one derived from it.
function threadSessionId(configurable) {
  const thread = configurable !== null && typeof configurable === 'object' ? configurable.thread_id : undefined
  if (thread === undefined || thread === null || thread === '') return 'default'
  return archiveSessionId(thread, 'thread')
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
function failed(messages, sessionId, code, error) {
  return { ...failedResult(messages, { code, message: messageOf(error), attempts: 0 }), sessionId }
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
    // The signal of the compaction running now (a summary written by the chat model is aborted
    // with the run).
    this.signal = null
    // A compacted list waiting for afterModel: { input, output } (the request's messages, the
    // compacted ones).
    this.pending = null
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

  // The user's own summarizer gets instances only, an earlier round's summary too (`prompt`
  // stays rendered on first read).
  #mapped(summarizer) {
    return (request) => {
      const mapped = Object.defineProperties({}, Object.getOwnPropertyDescriptors(request))
      mapped.messages = request.messages.map(requestMessage)
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
  const log = logger(compactorOptions, 'context_compact::langchain')

  // Sessions, most recently used last; the least recently used beyond maxSessions is closed.
  const sessions = new SessionPool(
    maxSessions,
    (sessionId) => new Session(compactorOptions, sessionId, chatModel, userSummarizer),
    (oldest) => oldest.compactor.close().catch(() => {}),
  )
  const sessionFor = (runtime) => sessions.get(fixedSessionId ?? threadSessionId(runtime && runtime.configurable))
  // Invalid options fail here, not on the agent's first step.
  sessionFor({ configurable: fixedSessionId ? {} : { thread_id: 'default' } })

  let lastResult = null
  const tools = { input: null, definitions: undefined }

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
      if (session.compactor.shouldCompact(messages, overrides)) {
        session.signal = signal ?? null
        let result
        try {
          result = await session.compactor.compact(messages, signal ? { ...overrides, signal } : overrides)
        } finally {
          session.signal = null
        }
        await compactionEvent(messages, result, session.sessionId)
        const instances = result.compacted ? stateMessages(result.messages, messages, session.compactor, messageClassesOf(messages)) : messages
        lastResult = { ...result, messages: instances, sessionId: session.sessionId }
        if (result.compacted) {
          compacted = instances
          session.pending = { input: messages, output: instances }
        } else if (result.error) {
          log('warn', `compaction skipped (${result.error.code}): ${result.error.message}; the model gets the messages unchanged`)
        }
      }
    } catch (error) {
      if (isAbort(error, signal)) {
        lastResult = failed(messages, session.sessionId, 'ABORTED', error)
        throw error
      }
      const code = error && error.code === 'ERR_CONTEXT_COMPACT_INVALID_ARGUMENT' ? 'INVALID_INPUT' : 'UNEXPECTED'
      lastResult = failed(messages, session.sessionId, code, error)
      log('error', `compaction failed (${code}): ${lastResult.error.message}; the model gets the messages unchanged`)
    }
    return handler(compacted ? { ...request, messages: compacted } : request)
  }

  // Writes the list the model got into the state, with what the model call added after it — only
  // when the state is still the list that was compacted (a middleware before this one may have
  // given the model other messages than the state's: then the state is left as it is).
  function afterModel(state, runtime) {
    const session = sessions.peek(fixedSessionId ?? threadSessionId(runtime && runtime.configurable))
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
        const open = sessions.values()
        await Promise.all(open.map((session) => session.compactor.close()))
      },
      enumerable: false,
    },
  })
  return middleware
}

// ---------------------------------------------------------------------------------------------
// The recall tool as a LangChain tool

/**
 * The recall tool (createRecallTool) as a LangChain tool for `createAgent({ tools })`: the
 * agent reads back the archived originals a summary names, or searches them. Its session is
 * `options.sessionId`, else the run's thread, as for the middleware.
 */
function recallTool(options) {
  const opts = { ...objectOptions(options, 'options', 'recallTool: ') }
  const fixedSessionId = opts.sessionId ?? null
  const recallFor = recallPool(opts, 'langchain', DEFAULT_MAX_SESSIONS)
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
