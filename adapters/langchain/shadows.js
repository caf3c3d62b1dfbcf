'use strict'

// The plain objects the LangChain adapter's Compactor counts in place of LangChain's message
// instances (see the header of index.js: "Cost below the threshold").

const { randomUUID } = require('node:crypto')

const { isMessageInstance, isSerializedMessage, serializedClassName } = require('../../lib/messages/langchain-forms.js')
const { sameData } = require('../kit.js')
const { langChain } = require('./peer.js')

// Structural equality of JSON values, for a message read back as a new object (strings compare
// by content). Anything but plain data (a class instance, a function) is not equal: the message
// then gets a new shadow, which is only slower.
const sameJson = (a, b) => sameData(a, b, true)

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
//   size of the whole message for the Compactor's per-step check (lib/compactor/snapshot.js), which walks
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
    const name = serializedClassName(written).replace(/Chunk$/, '')
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
    if (isSerializedMessage(item)) return this.adopt(item, classes)
    // A message the library wrote, already made an instance by the result (lib/messages/result.js does
    // so when the list it was given holds instances: a message that is its own shadow). Each of
    // the caller's messages is a shadow of its record, so this one is the library's: adopted
    // like the others, to get its id and the summary's mark.
    if (isMessageInstance(item)) return this.adopt(item.toJSON(), classes)
    return item
  }

  /**
   * The instance a shadow stands for, without adopting anything: a message the library wrote
   * and not yet handed out (a summary of an earlier round of this compaction) as a new instance.
   */
  peek(item) {
    const record = this.#byShadow.get(item)
    if (record !== undefined) return record.instance
    if (isSerializedMessage(item)) {
      const Class = langChain().messages[serializedClassName(item).replace(/Chunk$/, '')]
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

module.exports = { Shadows, EMPTY_CLASSES }
