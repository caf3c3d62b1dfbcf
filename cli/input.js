'use strict'

// Reading conversations, from a file or stdin, recognised by their content (never by the file's
// name): a message array, a request body that holds one (Anthropic {system, tools, messages},
// OpenAI {model, messages, tools}, Gemini {contents}, OpenAI Responses {input}), or a session
// file an agent keeps (Claude Code, pi or Codex JSONL: lib/sessions/); and writing a result back
// into the same envelope. Also where a list's archives are: the directory its summaries name.

const fs = require('node:fs')

const path = require('node:path')

const { CliError, oneLine } = require('./errors.js')
const { lib, optionRow } = require('./library.js')
const { detectAgent, sessionOfText, describeValue: describe } = require('../lib/sessions/index.js')

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
 * request body object (null for a bare array or a session file) and `system` / `tools` /
 * `model` come from it. A session file adds `session` (which agent, its id, the usage it
 * recorded: see lib/sessions/), `format`, `usage` (one entry per request, for the report) and
 * `lastUsage` (the trigger's input).
 */
async function readConversation(file) {
  const name = file === '-' ? 'stdin' : file
  const text = await readText(file)
  let value
  try {
    value = JSON.parse(text)
  } catch (error) {
    // One JSON value a line: the session file of an agent.
    const conversation = sessionConversation(text, name)
    if (conversation) return conversation
    throw new CliError(`${name}: invalid JSON: ${oneLine(error.message)}`)
  }
  if (Array.isArray(value)) return { messages: value, body: null, name }
  // A session file of one line is one JSON value.
  if (value !== null && typeof value === 'object' && !MESSAGE_KEYS.some((k) => Array.isArray(value[k])) && detectAgent([value])) {
    return sessionConversation(text, name)
  }
  // The list is under "messages" (Anthropic, OpenAI Chat, Bedrock Converse), "contents"
  // (Gemini) or "input" (OpenAI Responses, when it is an array of items).
  const key = value !== null && typeof value === 'object' ? MESSAGE_KEYS.find((k) => Array.isArray(value[k])) : undefined
  if (key === undefined) {
    throw new CliError(`${name}: expected a JSON array of messages or a request body with a "messages" array (Gemini: "contents", OpenAI Responses: "input"), or an agent's session file (JSONL), got ${describe(value)}`)
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

/** A session file's conversation, or null when the text is not one (no line is JSON). */
function sessionConversation(text, name) {
  let session
  try {
    session = sessionOfText(text, name)
  } catch (error) {
    if (error instanceof TypeError && error.code === 'ERR_CONTEXT_COMPACT_INVALID_ARGUMENT') {
      throw new CliError(`${error.message}; a conversation is a JSON array of messages, a request body or such a session file`)
    }
    throw error
  }
  if (!session) return null
  const conversation = { messages: session.messages, body: null, name, session, format: session.format, usage: session.usage, notes: session.notes }
  if (session.model) conversation.model = session.model
  if (session.system) conversation.system = session.system
  if (session.lastUsage) conversation.lastUsage = session.lastUsage
  return conversation
}

/** What the input is, for a line on stderr: "a Claude Code session (id …): 205 messages". */
function describeInput(conversation) {
  const s = conversation.session
  if (!s) return null
  const id = s.sessionId ? ` ${s.sessionId}` : ''
  return `${conversation.name}: a ${s.agentName} session${id}${s.model ? `, model ${s.model}` : ''}: the ${conversation.messages.length} message${conversation.messages.length === 1 ? '' : 's'} its model holds now, ${s.usage.length} recorded usage${s.usage.length === 1 ? '' : 's'}`
}

const MESSAGE_KEYS = ['messages', 'contents', 'input']

// -----------------------------------------------------------------------------------------
// Where the archives are

// The first line of a summary this library wrote names the archive: "[context-compact] Earlier
// conversation (N messages) was … Originals archived in: <outputDir>/<sessionId>/<file>".
const ARCHIVE_NAMED = /\[context-compact\] Earlier conversation \([^)]*\) was [^\n]*?Originals archived in: ([^\n]+)/

/** The text of a message in any format, enough to find a summary's first line. */
function texts(value, out = []) {
  if (typeof value === 'string') out.push(value)
  else if (Array.isArray(value)) for (const v of value) texts(v, out)
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) texts(v, out)
  return out
}

/** The archive directories the list's summaries name: `[{ outputDir, sessionId }]`, oldest first. */
function namedArchives(messages) {
  const named = []
  for (const message of messages) {
    for (const text of texts(message)) {
      const match = ARCHIVE_NAMED.exec(text.slice(0, 4000))
      if (!match) continue
      const parts = match[1].trim().split(/[\\/]/)
      if (parts.length < 3) continue
      const sessionId = parts[parts.length - 2]
      const outputDir = match[1].trim().slice(0, match[1].trim().length - parts[parts.length - 1].length - sessionId.length - 2)
      if (outputDir !== '' && !named.some((n) => n.outputDir === outputDir && n.sessionId === sessionId)) named.push({ outputDir, sessionId })
    }
  }
  return named
}

/**
 * Where a list's archives are (restore, report): `--output-dir` and `--session-id` when given;
 * otherwise the directory the list's summaries name (the one of the session asked for), tried
 * as written and, when relative, from the input file's directory; otherwise the defaults (the
 * session's own id for an agent's session file).
 */
function archiveLocation(values, conversation) {
  let outputDir = values['output-dir']
  let sessionId = values['session-id']
  let from = 'options'
  if (outputDir === undefined) {
    const named = namedArchives(conversation.messages).filter((n) => sessionId === undefined || n.sessionId === sessionId)
    const chosen = named[named.length - 1]
    if (chosen) {
      outputDir = chosen.outputDir
      sessionId = chosen.sessionId
      from = 'summary'
      const isUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(outputDir)
      if (!isUrl && !path.isAbsolute(outputDir) && conversation.name !== 'stdin' && !fs.existsSync(path.join(outputDir, sessionId))) {
        const beside = path.join(path.dirname(conversation.name), outputDir)
        if (fs.existsSync(path.join(beside, sessionId))) outputDir = beside
      }
    }
  }
  return {
    // The library's defaults (the option table) when nothing names the archives.
    outputDir: outputDir ?? optionRow('outputDir').default,
    sessionId: sessionId ?? conversation.session?.sessionId ?? optionRow('sessionId').default,
    from,
  }
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

module.exports = { readConversation, describeInput, validateMessages, envelope, archiveLocation, namedArchives }
