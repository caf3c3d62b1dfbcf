'use strict'

// Overflow recovery (SPEC §4.8): isContextOverflow, and the signals an error gives.
//
// The decision — which providers' texts and codes mean "the request did not fit the context
// window" — is made in Rust (crates/core/src/overflow.rs). This part only gathers what an error
// says about itself (statuses, codes, messages) from whatever was given: an SDK's error object,
// a raw body, a message string, a cause chain. It reads a fixed set of property names, bounded
// in depth and count, and never throws.

const native = require('../addon/native.js')

const OVERFLOW_MAX_DEPTH = 8
const OVERFLOW_MAX_NODES = 200
const OVERFLOW_MAX_TEXTS = 64
const OVERFLOW_MAX_TEXT_LENGTH = 64 * 1024
const OVERFLOW_MAX_JSON_LENGTH = 1024 * 1024
const OVERFLOW_MAX_ARRAY_ITEMS = 16

// Human texts: Error#message, Bedrock logs' `errorMessage`, FastAPI-style `detail`.
const MESSAGE_KEYS = ['message', 'errorMessage', 'detail', 'msg']
// Machine codes: OpenAI `.code`/`.type`, Anthropic `.type`/`.errorCode`, Bedrock `.name`
// (`ValidationException`), Google `status: 'INVALID_ARGUMENT'`, AWS `__type`.
const CODE_KEYS = ['code', 'type', 'name', 'error_code', 'errorCode', 'reason', '__type', 'status']
// HTTP statuses: SDKs `.status`, Vercel AI SDK `.statusCode`, AWS `$metadata.httpStatusCode`.
const STATUS_KEYS = ['status', 'statusCode', 'status_code', 'httpStatusCode']
// Where the rest is nested: the body (Anthropic and OpenAI `.error`, AI SDK `.responseBody`
// (a JSON string) and `.data`, axios `.response.data`), details, AWS `$metadata`, and the causes
// (`cause`, the AI SDK RetryError's `lastError`, AggregateError `errors`). Nothing else is read:
// in particular not `requestBodyValues` or `headers`, which hold the prompt and credentials.
const NESTED_KEYS = ['error', 'body', 'responseBody', 'data', 'details', 'response', '$metadata', 'cause', 'lastError', 'errors']

function gatherErrorSignals(input) {
  const statuses = []
  const codes = []
  const messages = []
  const seen = new Set()
  let nodes = 0
  let contextSize = null
  let promptSize = null

  const addText = (list, text) => {
    if (list.length < OVERFLOW_MAX_TEXTS && text.trim() !== '') {
      list.push(text.length > OVERFLOW_MAX_TEXT_LENGTH ? text.slice(0, OVERFLOW_MAX_TEXT_LENGTH) : text)
    }
  }
  const addStatus = (value) => {
    if (Number.isInteger(value) && value >= 100 && value <= 599 && statuses.length < OVERFLOW_MAX_TEXTS) statuses.push(value)
  }
  // A getter or a Proxy may throw; such a property simply says nothing.
  const read = (object, key) => {
    try {
      return object[key]
    } catch {
      return undefined
    }
  }

  // A text, and the JSON it is or ends with: a body string, Google's ApiError message (the body
  // as JSON), the SDKs' "400 {...}" messages.
  const visitText = (text, depth) => {
    addText(messages, text)
    const start = text.search(/[[{]/)
    if (start === -1 || text.length - start > OVERFLOW_MAX_JSON_LENGTH || depth >= OVERFLOW_MAX_DEPTH) return
    let parsed
    try {
      parsed = JSON.parse(text.slice(start))
    } catch {
      return
    }
    visit(parsed, depth + 1)
  }

  const visit = (value, depth) => {
    if (depth > OVERFLOW_MAX_DEPTH || nodes >= OVERFLOW_MAX_NODES) return
    nodes += 1
    if (typeof value === 'string') return visitText(value, depth)
    if (value === null || typeof value !== 'object' || seen.has(value)) return
    seen.add(value)
    try {
      if (Array.isArray(value)) {
        const length = Math.min(Number(read(value, 'length')) || 0, OVERFLOW_MAX_ARRAY_ITEMS)
        for (let i = 0; i < length; i += 1) visit(read(value, i), depth + 1)
        return
      }
      for (const key of MESSAGE_KEYS) {
        const text = read(value, key)
        if (typeof text === 'string') visitText(text, depth)
      }
      for (const key of STATUS_KEYS) addStatus(read(value, key))
      // llama.cpp states its context size and the prompt's in fields of the error body.
      const nCtx = read(value, 'n_ctx')
      if (Number.isSafeInteger(nCtx) && nCtx > 0) contextSize = nCtx
      const nPrompt = read(value, 'n_prompt_tokens')
      if (Number.isSafeInteger(nPrompt) && nPrompt > 0) promptSize = nPrompt
      for (const key of CODE_KEYS) {
        const code = read(value, key)
        if (typeof code === 'string') addText(codes, code)
        else addStatus(code)
      }
      for (const key of NESTED_KEYS) {
        const nested = read(value, key)
        if (nested !== undefined && nested !== null) visit(nested, depth + 1)
      }
    } catch {
      // A revoked Proxy and the like: keep what was gathered so far.
    }
  }

  visit(input, 0)
  return { statuses, codes, messages, contextSize, promptSize }
}

function isContextOverflow(error) {
  try {
    const { statuses, codes, messages } = gatherErrorSignals(error)
    if (codes.length === 0 && messages.length === 0) return false
    return native.isContextOverflowSignals(statuses, codes, messages) === true
  } catch {
    return false
  }
}

module.exports = {
  gatherErrorSignals,
  isContextOverflow,
}
