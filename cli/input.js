'use strict'

// Reading conversations, from a file or stdin: a message array, or a request body that holds
// one (Anthropic {system, tools, messages}, OpenAI {messages, tools}, Gemini {contents}, OpenAI
// Responses {input}); and writing a result back into the same envelope.

const fs = require('node:fs')

const { CliError, oneLine } = require('./errors.js')
const { lib } = require('./library.js')

async function readText(file) {
  if (file === '-') {
    const chunks = []
    for await (const chunk of process.stdin) chunks.push(chunk)
    return Buffer.concat(chunks).toString('utf8')
  }
  try {
    return fs.readFileSync(file, 'utf8')
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${error.code === 'ENOENT' ? 'no such file' : oneLine(error.message)}`)
  }
}

/**
 * Reads a conversation: `{ messages, body, system, tools, model, name }`, where `body` is the
 * request body object (null for a bare array) and `system` / `tools` / `model` come from it.
 */
async function readConversation(file) {
  const name = file === '-' ? 'stdin' : file
  const text = await readText(file)
  let value
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new CliError(`${name}: invalid JSON: ${oneLine(error.message)}`)
  }
  if (Array.isArray(value)) return { messages: value, body: null, name }
  // The list is under "messages" (Anthropic, OpenAI Chat, Bedrock Converse), "contents"
  // (Gemini) or "input" (OpenAI Responses, when it is an array of items).
  const key = value !== null && typeof value === 'object' ? MESSAGE_KEYS.find((k) => Array.isArray(value[k])) : undefined
  if (key === undefined) {
    throw new CliError(
      `${name}: expected a JSON array of messages or a request body with a "messages" array (Gemini: "contents", OpenAI Responses: "input"), got ${describe(value)}`,
    )
  }
  const conversation = { messages: value[key], body: value, key, name }
  if (value.system !== undefined && value.system !== null) {
    if (typeof value.system !== 'string' && !Array.isArray(value.system)) {
      throw new CliError(`${name}: "system" must be a string or an array of text blocks, got ${describe(value.system)}`)
    }
    conversation.system = value.system
  }
  if (value.tools !== undefined && value.tools !== null) {
    if (!Array.isArray(value.tools)) throw new CliError(`${name}: "tools" must be an array, got ${describe(value.tools)}`)
    conversation.tools = value.tools
  }
  if (typeof value.model === 'string' && value.model !== '') conversation.model = value.model
  return conversation
}

const MESSAGE_KEYS = ['messages', 'contents', 'input']

function describe(value) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object without a "messages" array' : `a ${typeof value}`
}

/**
 * Throws exit 1 for messages the library cannot read (naming the index and field); returns
 * their tokens. `counter` is an encoding name (or undefined) or a Compactor (which caches).
 */
function validateMessages(conversation, counter, format = {}) {
  try {
    return counter !== null && typeof counter === 'object'
      ? counter.countTokens(conversation.messages)
      : lib().countTokens(conversation.messages, { encoding: counter, ...format })
  } catch (error) {
    if (error instanceof TypeError) throw new CliError(`${conversation.name}: invalid conversation: ${oneLine(error.message)}`)
    throw error
  }
}

/** The same envelope with the messages replaced (a bare array stays an array). */
function envelope(conversation, messages) {
  return conversation.body ? { ...conversation.body, [conversation.key]: messages } : messages
}

module.exports = { readConversation, validateMessages, envelope }
