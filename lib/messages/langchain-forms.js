'use strict'

// LangChain's message forms, read and made here only. A LangChain message reaches the library as
// - an instance of a class of @langchain/core/messages (HumanMessage, AIMessage, ToolMessage, …);
// - its serialized form, what `toJSON()` gives: `{ lc: 1, type: 'constructor', id: [...namespace,
//   'HumanMessage'], kwargs }`. The addon hands a message the library wrote (the summary, a
//   shortened tool result) back in this form;
// - its stored form, `{ type: 'human', data }` (LangChain's mapChatMessagesToStoredMessages).
// A compaction's result (lib/messages/result.js) and the LangChain adapter (adapters/langchain/) both turn
// the serialized form back into the form the caller's list holds.

const STORED_TYPES = { HumanMessage: 'human', AIMessage: 'ai', SystemMessage: 'system', ToolMessage: 'tool' }

// A LangChain class name of a message (`HumanMessage`, `AIMessageChunk`, …).
const MESSAGE_CLASS = /Message(Chunk)?$/

/** Whether `value` is a LangChain message instance (a Serializable with its constructor's fields). */
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

/** Whether `item` is a message in the serialized form. */
function isSerializedMessage(item) {
  return item !== null && typeof item === 'object' && item.lc === 1 && item.type === 'constructor' && Array.isArray(item.id) && item.kwargs !== null && typeof item.kwargs === 'object'
}

/** The class a serialized message names: its id's last element (`AIMessageChunk`, …). */
function serializedClassName(serialized) {
  return String(serialized.id[serialized.id.length - 1])
}

// The LangChain name of a message's class (`lc_name()`, which minifiers leave alone), else the
// constructor's own name; undefined for a plain object.
function classNameOf(message) {
  const ctor = message !== null && typeof message === 'object' ? message.constructor : undefined
  if (!ctor || ctor === Object) return undefined
  try {
    if (typeof ctor.lc_name === 'function') return ctor.lc_name()
  } catch {
    // fall through to the constructor's own name
  }
  return ctor.name
}

/**
 * The message classes of a list by their LangChain name (`HumanMessage`, …), the first of each:
 * the caller's own copy of @langchain/core (e.g. its ES module build), to revive a message in.
 */
function messageClassesOf(messages) {
  const classes = new Map()
  for (const message of messages) {
    const name = classNameOf(message)
    if (typeof name === 'string' && MESSAGE_CLASS.test(name) && !classes.has(name)) classes.set(name, message.constructor)
  }
  return classes
}

// Whether a list holds messages in the stored form (and no serialized ones).
function holdsStoredForms(messages) {
  return messages.some((message) => message !== null && typeof message === 'object' && message.lc === undefined && message.data && typeof message.type === 'string')
}

/** A serialized message in the stored form (`{ type, data }`); an unknown class is a human message. */
function storedForm(serialized) {
  return { type: STORED_TYPES[serializedClassName(serialized)] ?? 'human', data: { ...serialized.kwargs } }
}

// @langchain/core's message classes as the caller's project resolves them, loaded on first use
// (null when it has none: LangChain is an optional peer of the package).
let library
function libraryClass(name) {
  if (library === undefined) {
    try {
      const { createRequire } = require('node:module')
      const path = require('node:path')
      library = createRequire(path.join(process.cwd(), 'index.js'))('@langchain/core/messages')
    } catch {
      library = null
    }
  }
  return library ? library[name] : undefined
}

/**
 * How to give back a serialized message the library wrote, in the form `messages` holds: an
 * instance when it holds instances (of its own class for that name, else @langchain/core's), the
 * stored form when it holds stored forms, else the serialized form as it is.
 */
function formOfList(messages) {
  const classes = messageClassesOf(messages)
  const stored = holdsStoredForms(messages)
  return (serialized) => {
    if (classes.size > 0) {
      const name = serializedClassName(serialized)
      const Class = classes.get(name) ?? libraryClass(name)
      if (typeof Class === 'function') return new Class(serialized.kwargs)
    }
    if (stored) return storedForm(serialized)
    return serialized
  }
}

module.exports = {
  isMessageInstance,
  isSerializedMessage,
  serializedClassName,
  messageClassesOf,
  storedForm,
  formOfList,
}
