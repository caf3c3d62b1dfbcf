'use strict'

// The messages a compaction wrote (the summary, a shortened tool result), made the messages an
// agent's state holds: LangChain instances with an id, the summary marked as
// summarizationMiddleware marks its own. The caller's own messages need nothing here: the
// Compactor is given the state's instances themselves and knows what changed among them
// (lib/compactor/message-counts.js).

const { randomUUID } = require('node:crypto')

const { isMessageInstance, isSerializedMessage, serializedClassName } = require('../../lib/messages/langchain-forms.js')
const { langChain } = require('./peer.js')

// `additional_kwargs.lc_source` of the summary message, as summarizationMiddleware marks its own.
const SUMMARY_SOURCE = 'summarization'

// The instance of a serialized message (`{ lc: 1, type: 'constructor', id, kwargs }`): of the
// class `classes` maps its name to (the caller's copy of @langchain/core, e.g. its ES module
// build), else ours; the serialized form as it is when neither has that class.
function instanceOfSerialized(written, classes) {
  const name = serializedClassName(written).replace(/Chunk$/, '')
  const Class = classes?.get(name) ?? langChain().messages[name]
  return typeof Class === 'function' ? new Class({ ...written.kwargs }) : written
}

// A message the compaction wrote, given to the state. lib/messages/result.js made it an instance already
// (the list held instances); it is the library's own object, so it gets its id in place and
// the Compactor is told (`changed`), keeping it as a message it wrote. One without an id is a
// message of its own (the summary), not a changed copy of one of the state's (which keeps that
// one's id): an id, as LangChain gives every message of a state, and for the summary the mark
// LangChain gives a message the harness added rather than the user (`addNotificationMetadata`;
// chat model integrations do not send it), with summarizationMiddleware's source.
function adopt(message, compactor, classes) {
  if (isSerializedMessage(message)) message = instanceOfSerialized(message, classes)
  if (!isMessageInstance(message)) return message
  if (typeof message.id === 'string' && message.id !== '') return message
  const kwargs = message.lc_kwargs
  message.id = kwargs.id = randomUUID()
  let type
  try {
    type = message.getType()
  } catch {
    type = undefined
  }
  if (type === 'human') {
    message.additional_kwargs = kwargs.additional_kwargs = { ...(message.additional_kwargs ?? {}), lc_source: SUMMARY_SOURCE }
  }
  compactor.changed(message)
  return message
}

/**
 * The messages of a compaction's result as the state's messages: the caller's own (those of
 * `input`) as they are, the ones the compaction wrote adopted (see adopt).
 */
function stateMessages(output, input, compactor, classes) {
  const given = new Set(input)
  return output.map((message) => (given.has(message) ? message : adopt(message, compactor, classes)))
}

/**
 * A message of a summary request for the user's summarizer: the caller's instances as they are,
 * one the library wrote (an earlier round's summary, in its serialized form) as a new instance.
 */
function requestMessage(message) {
  return isSerializedMessage(message) ? instanceOfSerialized(message, null) : message
}

module.exports = { stateMessages, requestMessage }
