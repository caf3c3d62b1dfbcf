'use strict'

// pi's messages in the Anthropic shape the core reads, and back (context-compact/pi, index.js).
// A step's conversion (PiConversion) costs what was appended: each message's conversion is kept
// while the message is unchanged (lib/compactor/list-cache.js), and the list is built again from
// where it changed.

const { ListCache } = require('../../lib/compactor/list-cache.js')

const LLM_ROLES = new Set(['user', 'assistant', 'toolResult'])

function textOf(content) {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .filter((block) => block && block.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text)
    .join('\n')
}

// The system prompt and tools the transcript's system messages declare, replayed in order.
function replaySystem(messages, contextTools, givenTools) {
  const parts = []
  const sections = new Map()
  const tools = new Map()
  for (const message of messages) {
    if (!message || message.role !== 'system') continue
    const text = textOf(message.content)
    if (text !== '') parts.push(text)
    if (message.sections && typeof message.sections === 'object') {
      for (const [name, value] of Object.entries(message.sections)) {
        if (value === null) sections.delete(name)
        else if (typeof value === 'string') sections.set(name, value)
      }
    }
    if (Array.isArray(message.toolsAdded)) {
      for (const tool of message.toolsAdded) if (tool && typeof tool.name === 'string') tools.set(tool.name, tool)
    }
    if (Array.isArray(message.toolsRemoved)) {
      for (const ref of message.toolsRemoved) tools.delete(typeof ref === 'string' ? ref : ref && ref.name)
    }
  }
  // The tools option, when given, is what is counted; else the transcript's, else the context's.
  const fallback = Array.isArray(givenTools) ? givenTools : tools.size === 0 && Array.isArray(contextTools) ? contextTools : null
  if (fallback !== null) {
    tools.clear()
    for (const tool of fallback) if (tool && typeof tool.name === 'string') tools.set(tool.name, tool)
  }
  const system = parts.concat([...sections.values()]).join('\n\n')
  const definitions = [...tools.values()].map((tool) => ({
    name: tool.name,
    ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
    input_schema: [tool.parameters, tool.input_schema].find((schema) => schema && typeof schema === 'object') ?? { type: 'object', properties: {} },
  }))
  return { system, tools: definitions }
}

function toAnthropicBlocks(content) {
  if (typeof content === 'string') return content
  return (Array.isArray(content) ? content : []).flatMap((block) => {
    if (!block || typeof block !== 'object') return []
    if (block.type === 'text') return [{ type: 'text', text: String(block.text ?? '') }]
    if (block.type === 'image') return [{ type: 'image', source: { type: 'base64', media_type: block.mimeType, data: block.data } }]
    if (block.type === 'thinking') {
      if (block.redacted) return [{ type: 'redacted_thinking', data: block.thinkingSignature ?? '' }]
      return [{ type: 'thinking', thinking: String(block.thinking ?? ''), signature: block.thinkingSignature ?? '' }]
    }
    if (block.type === 'toolCall') return [{ type: 'tool_use', id: block.id, name: block.name, input: block.arguments ?? {} }]
    return []
  })
}

function fromAnthropicBlocks(content, { assistant }) {
  if (typeof content === 'string') return assistant ? [{ type: 'text', text: content }] : content
  return content.flatMap((block) => {
    if (block.type === 'text') return [{ type: 'text', text: block.text }]
    if (block.type === 'image' && block.source) return [{ type: 'image', data: block.source.data, mimeType: block.source.media_type }]
    if (block.type === 'thinking') return [{ type: 'thinking', thinking: block.thinking, ...(block.signature ? { thinkingSignature: block.signature } : {}) }]
    if (block.type === 'redacted_thinking') return [{ type: 'thinking', thinking: '', thinkingSignature: block.data, redacted: true }]
    if (block.type === 'tool_use') return [{ type: 'toolCall', id: block.id, name: block.name, arguments: block.input }]
    return []
  })
}

// A message the model is sent and the core counts (and may summarize), or one kept aside.
function isConverted(message) {
  if (!message || typeof message !== 'object' || !LLM_ROLES.has(message.role)) return false
  if (message.role === 'assistant') return Array.isArray(message.content) && message.content.length > 0
  return true
}

// A pi message as the core reads it: an Anthropic message (user, assistant), a tool_result
// block (a toolResult: the results of one reply are one user message), or null (kept aside).
function unitOf(message) {
  if (!isConverted(message)) return null
  if (message.role === 'toolResult') {
    return { type: 'tool_result', tool_use_id: message.toolCallId, content: toAnthropicBlocks(message.content), is_error: Boolean(message.isError) }
  }
  return { role: message.role, content: toAnthropicBlocks(message.content) }
}

const isResult = (unit) => unit !== null && unit.type === 'tool_result'
const freshGroup = (blocks) => ({ role: 'user', content: blocks })

// pi's list → { anthropic, sources, aside, starts }: one Anthropic message per pi message, except
// that the results of one reply's tool calls are one user message, as the Anthropic API wants
// them. `sources[i]` lists the pi messages Anthropic message i came from, `starts[i]` the index
// of the first; `aside[j]` the messages kept aside (system, other roles) before the converted
// message j (index anthropic.length: at the end). `units[i]`: message i's unit (unitOf);
// `group(blocks)`: the user message of those results.
function toAnthropic(messages, units = messages.map(unitOf), group = freshGroup) {
  const anthropic = []
  const sources = []
  const starts = []
  const aside = [[]]
  let open = null // the results of the group not closed yet: { blocks, from, start }
  const close = () => {
    if (open === null) return
    anthropic.push(group(open.blocks))
    sources.push(open.from)
    starts.push(open.start)
    aside.push([])
    open = null
  }
  for (let i = 0; i < messages.length; i++) {
    const unit = units[i]
    if (unit === null) {
      close()
      aside[anthropic.length].push(messages[i])
    } else if (isResult(unit)) {
      if (open === null) open = { blocks: [], from: [], start: i }
      open.blocks.push(unit)
      open.from.push(messages[i])
    } else {
      close()
      anthropic.push(unit)
      sources.push([messages[i]])
      starts.push(i)
      aside.push([])
    }
  }
  close()
  return { anthropic, sources, aside, starts }
}

// A message the Compactor wrote or changed, back in pi's shape, with the pi message it stands for
// (`template`, when known) giving the fields the Anthropic shape has no place for.
function fromAnthropic(message, templates, toolResultsById, now) {
  if (message.role === 'assistant') {
    const template = templates && templates[0]
    return { ...(template ?? { api: 'unknown', provider: 'unknown', model: 'unknown', stopReason: 'stop', timestamp: now }), content: fromAnthropicBlocks(message.content, { assistant: true }) }
  }
  if (Array.isArray(message.content) && message.content.length > 0 && message.content.every((block) => block.type === 'tool_result')) {
    return message.content.map((block) => {
      const template = toolResultsById.get(block.tool_use_id)
      const content = fromAnthropicBlocks(typeof block.content === 'string' ? [{ type: 'text', text: block.content }] : block.content ?? [], { assistant: true })
      return { ...(template ?? { role: 'toolResult', toolCallId: block.tool_use_id, toolName: 'unknown', timestamp: now }), content, isError: Boolean(block.is_error) }
    })
  }
  const template = templates && templates.length === 1 && templates[0].role === 'user' ? templates[0] : undefined
  const content = fromAnthropicBlocks(message.content, { assistant: false })
  return { ...(template ?? { timestamp: now }), role: 'user', content }
}

class PiConversion {
  // What a step reads: each pi message's unit (unitOf), kept while the message is unchanged (the
  // last step's objects at their positions: what was appended, the tail and a rotation of older
  // ones are compared; every one with `exact`).
  #cache = new ListCache()
  // The user message of a group of tool results, by its first block: the same object while its
  // blocks are (the Compactor has counted it).
  #groups = new WeakMap()
  // The last list built: its Anthropic messages, the index of each one's first pi message, and
  // the system messages ({ index, entry }).
  #built = { anthropic: [], starts: [], systems: [] }
  // The system prompt and tools the system messages declare, and what they were replayed from.
  #replayed = { systems: [], contextTools: undefined, value: null }
  #tools

  /** `tools`: the adapter's `tools` option (counted instead of the transcript's). */
  constructor(tools) {
    this.#tools = tools
  }

  #groupOf = (blocks) => {
    const made = this.#groups.get(blocks[0])
    if (made !== undefined && made.content.length === blocks.length && made.content.every((block, i) => block === blocks[i])) return made
    const group = freshGroup(blocks)
    this.#groups.set(blocks[0], group)
    return group
  }

  /**
   * `{ entries, anthropic, systems }`: each message's entry (`unit`), the Anthropic list (the
   * same objects as the last step's for the messages unchanged since), and the system messages.
   * The list is never changed once returned (a compaction in flight holds it).
   */
  convert(messages, exact) {
    const { entries, missing, prefix } = this.#cache.lookup(messages, exact)
    for (const i of missing) entries[i] = { tape: null, unit: unitOf(messages[i]) }
    this.#cache.store(messages, entries, missing)
    // The last list's messages that start before the first changed one stay, but the last of
    // them (a group of tool results may go on after it): built again from where it starts.
    const last = this.#built
    let lo = 0
    let hi = last.starts.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (last.starts[mid] < prefix) lo = mid + 1
      else hi = mid
    }
    const keep = Math.max(0, lo - 1)
    const from = lo === 0 ? 0 : last.starts[lo - 1]
    const units = new Array(messages.length - from)
    for (let i = from; i < messages.length; i++) units[i - from] = entries[i].unit
    const rest = toAnthropic(messages.slice(from), units, this.#groupOf)
    // A new list; the positions are this object's own.
    const anthropic = last.anthropic.slice(0, keep)
    const starts = last.starts
    starts.length = keep
    for (let k = 0; k < rest.anthropic.length; k++) {
      anthropic.push(rest.anthropic[k])
      starts.push(rest.starts[k] + from)
    }
    const systems = last.systems.filter((system) => system.index < from)
    for (let i = from; i < messages.length; i++) if (messages[i] && messages[i].role === 'system') systems.push({ index: i, entry: entries[i] })
    this.#built = { anthropic, starts, systems }
    return { entries, anthropic, systems }
  }

  /** Where each message of `convert`'s list came from: `{ anthropic, sources, aside, starts }` (toAnthropic). */
  layout(messages, entries) {
    return toAnthropic(messages, entries.map((entry) => entry.unit), this.#groupOf)
  }

  /**
   * The call's options: `overrides` (but `contextTools`) with the system prompt and tools the
   * system messages declare (replayed again only when one of them, or the context's tools, changed).
   */
  callOf(messages, systems, overrides) {
    const replayed = this.#replayed
    const same =
      replayed.value !== null &&
      replayed.contextTools === overrides.contextTools &&
      replayed.systems.length === systems.length &&
      replayed.systems.every((system, i) => system.entry === systems[i].entry)
    if (!same) {
      const value = replaySystem(systems.map((system) => messages[system.index]), overrides.contextTools, this.#tools)
      this.#replayed = { systems, contextTools: overrides.contextTools, value }
    }
    const replay = this.#replayed.value
    const { contextTools: _tools, ...given } = overrides
    return { ...given, tools: replay.tools, ...(replay.system === '' ? {} : { system: replay.system }) }
  }
}

module.exports = {
  PiConversion,
  toAnthropic,
  fromAnthropic,
}
