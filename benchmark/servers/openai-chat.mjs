// A local OpenAI Chat Completions API (`POST /v1/chat/completions`) that implements the
// documented request validation and automatic prompt caching, for tests and the economics
// benchmark. Every rule is cited in a comment and collected, with its source, in
// ../CACHE-RULES.md.
//
// Sources (read 2026-11-24):
//   [OPC] https://developers.openai.com/api/docs/guides/prompt-caching
//   [OER] https://platform.openai.com/docs/guides/error-codes, and API error texts quoted from
//         responses reported in public issue trackers (see CACHE-RULES.md).
import { decode } from 'gpt-tokenizer/encoding/o200k_base'

import { clone, defaultSummary, randomId, sha256, sleep, startHttpServer, tokenCount, tokenIds } from './common.mjs'

/** [OPC] "Caching is available for prompts containing 1024 tokens or more." */
export const MIN_CACHED_PROMPT = 1024
/** [OPC] "Cache hits occur in increments of 128 tokens" (after the first 1,024). */
export const CACHE_INCREMENT = 128
/**
 * [OPC] "Cached prefixes generally remain active for 5 to 10 minutes of inactivity, up to a
 * maximum of one hour"; `prompt_cache_retention: "24h"` keeps them "up to a maximum of 24 hours".
 * We use the short end of each.
 */
export const RETENTION_MS = { in_memory: 5 * 60_000, '24h': 24 * 60 * 60_000 }
/** An image's tokens (high detail, one 512-px tile plus the base: 85 + 170 × 4), an approximation. */
const IMAGE_TOKENS = 765
// Message framing as token ids (o200k's harmony <|start|>, <|message|>, <|end|>), so that the
// rendered prompt is one token sequence whose prefixes can be compared exactly.
const START = 200006
const MESSAGE = 200008
const END = 200007
const ROLES = ['system', 'assistant', 'user', 'function', 'tool', 'developer']

export function openaiErrorBody(status, message, { type, param = null, code = null } = {}) {
  const defaults = {
    400: ['invalid_request_error', 'Invalid request'],
    401: ['invalid_request_error', 'Incorrect API key provided.'],
    404: ['invalid_request_error', 'Not found'],
    429: ['requests', 'Rate limit reached for requests'],
    500: ['server_error', 'The server had an error while processing your request. Sorry about that!'],
    503: ['server_error', 'The engine is currently overloaded, please try again later.'],
  }
  const [defaultType, defaultMessage] = defaults[status] ?? ['server_error', 'Error']
  return { error: { message: message ?? defaultMessage, type: type ?? defaultType, param, code: code ?? (status === 429 ? 'rate_limit_exceeded' : null) } }
}

class Invalid extends Error {
  constructor(message, param = null, code = null, status = 400) {
    super(message)
    Object.assign(this, { param, code, status })
  }
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Validates as the API does; throws `Invalid` with its message, param and code. */
function validate(body) {
  if (!isObject(body)) throw new Invalid('We could not parse the JSON body of your request.')
  if (typeof body.model !== 'string' || body.model === '') throw new Invalid('you must provide a model parameter')
  if (body.messages === undefined) throw new Invalid("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter')
  if (!Array.isArray(body.messages)) throw new Invalid(`Invalid type for 'messages': expected an array of objects, but got ${typeof body.messages} instead.`, 'messages', 'invalid_type')
  if (body.messages.length === 0) throw new Invalid("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages', 'empty_array')
  if (body.stream === true) throw new Invalid('stream: this local server answers without streaming; send `stream: false`', 'stream')

  const toolNames = new Set()
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) throw new Invalid(`Invalid type for 'tools': expected an array of objects, but got ${typeof body.tools} instead.`, 'tools', 'invalid_type')
    body.tools.forEach((tool, i) => {
      if (!isObject(tool) || (tool.type ?? 'function') !== 'function' || !isObject(tool.function)) throw new Invalid(`Missing required parameter: 'tools[${i}].function'.`, `tools[${i}].function`, 'missing_required_parameter')
      if (typeof tool.function.name !== 'string' || tool.function.name === '') throw new Invalid(`Missing required parameter: 'tools[${i}].function.name'.`, `tools[${i}].function.name`, 'missing_required_parameter')
      toolNames.add(tool.function.name)
    })
  }
  const tc = body.tool_choice
  if (tc !== undefined) {
    if (toolNames.size === 0) throw new Invalid("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.", 'tool_choice')
    if (typeof tc === 'string') {
      if (!['none', 'auto', 'required'].includes(tc)) throw new Invalid(`Invalid value: '${tc}'. Supported values are: 'none', 'auto', and 'required'.`, 'tool_choice', 'invalid_value')
    } else if (!isObject(tc) || tc.type !== 'function' || typeof tc.function?.name !== 'string') {
      throw new Invalid("Invalid value for 'tool_choice': expected 'none', 'auto', 'required' or an object naming a function.", 'tool_choice')
    } else if (!toolNames.has(tc.function.name)) {
      // Our wording: we found no public copy of the API's message for an unknown function name.
      throw new Invalid(`Invalid value for 'tool_choice': function '${tc.function.name}' is not one of the request's tools.`, 'tool_choice')
    }
  }

  body.messages.forEach((message, i) => {
    if (!isObject(message)) throw new Invalid(`Invalid type for 'messages[${i}]': expected an object, but got ${typeof message} instead.`, `messages[${i}]`, 'invalid_type')
    if (!ROLES.includes(message.role)) {
      throw new Invalid(`Invalid value: '${message.role}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`, `messages[${i}].role`, 'invalid_value')
    }
    const c = message.content
    const hasCalls = message.role === 'assistant' && Array.isArray(message.tool_calls) && message.tool_calls.length > 0
    if (!(typeof c === 'string' || Array.isArray(c) || ((c === null || c === undefined) && hasCalls))) {
      throw new Invalid(`Invalid type for 'messages[${i}].content': expected one of a string or array of objects, but got ${c === null ? 'null' : typeof c} instead.`, `messages[${i}].content`, 'invalid_type')
    }
  })

  // Tool pairing: a `tool` message answers a call of the nearest preceding assistant message
  // with tool_calls (other tool messages may sit between), and every call is answered before
  // the next non-tool message. The API's texts (its "preceeding" is spelled so).
  body.messages.forEach((message, i) => {
    if (message.role === 'tool') {
      if (typeof message.tool_call_id !== 'string') throw new Invalid("Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.", `messages.[${i}].tool_call_id`)
      let j = i - 1
      while (j >= 0 && body.messages[j].role === 'tool') j--
      const owner = body.messages[j]
      const calls = owner?.role === 'assistant' && Array.isArray(owner.tool_calls) ? owner.tool_calls.map((c) => c?.id) : []
      if (calls.length === 0) throw new Invalid("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", `messages.[${i}].role`)
      if (!calls.includes(message.tool_call_id)) throw new Invalid(`Invalid parameter: 'tool_call_id' of '${message.tool_call_id}' not found in 'tool_calls' of previous message.`, `messages.[${i}].tool_call_id`)
    }
    if (message.role === 'assistant' && Array.isArray(message.tool_calls) && message.tool_calls.length > 0) {
      const answered = new Set()
      for (let j = i + 1; j < body.messages.length && body.messages[j].role === 'tool'; j++) answered.add(body.messages[j].tool_call_id)
      const missing = message.tool_calls.map((c) => c?.id).filter((id) => !answered.has(id))
      if (missing.length > 0) {
        throw new Invalid(
          `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`,
          `messages.[${i}].role`,
        )
      }
    }
  })
}

function partText(part) {
  if (typeof part === 'string') return part
  if (part?.type === 'text') return part.text ?? ''
  return null
}

function contentIds(content) {
  if (typeof content === 'string') return [tokenIds(content)]
  if (!Array.isArray(content)) return []
  return content.map((part) => {
    const text = partText(part)
    if (text !== null) return tokenIds(text)
    // [OPC] images are cached too: "Ensure the detail parameter is set identically, as it
    // impacts image tokenization." Its identity is its JSON; its size a fixed approximation.
    const ids = new Uint32Array(IMAGE_TOKENS)
    ids.set(tokenIds(sha256(JSON.stringify(part))).slice(0, IMAGE_TOKENS))
    return ids
  })
}

/**
 * The prompt as one token sequence: what changes the model's hidden instructions first
 * (reasoning effort and structured-output schema: [OPC] "The structured output schema serves as
 * a prefix to the system message"; the newer guide: "Modifying reasoning.effort can rewrite hidden
 * system instructions"), then the tools ([OPC] "Both the messages array and the list of available
 * tools can be cached"), then the messages in order. [OPC] "Cache hits are only possible for exact
 * prefix matches within a prompt."
 */
function render(body) {
  const parts = []
  const header = {}
  if (body.reasoning_effort !== undefined) header.reasoning_effort = body.reasoning_effort
  if (body.response_format !== undefined) header.response_format = body.response_format
  if (body.verbosity !== undefined) header.verbosity = body.verbosity
  if (Object.keys(header).length > 0) parts.push(tokenIds(JSON.stringify(header)))
  if (Array.isArray(body.tools) && body.tools.length > 0) parts.push(tokenIds(JSON.stringify(body.tools)))
  for (const message of body.messages) {
    parts.push(Uint32Array.of(START), tokenIds(message.role + (message.name ? `:${message.name}` : '')), Uint32Array.of(MESSAGE))
    parts.push(...contentIds(message.content))
    if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) parts.push(tokenIds(JSON.stringify(message.tool_calls)))
    if (message.tool_call_id) parts.push(tokenIds(message.tool_call_id))
    parts.push(Uint32Array.of(END))
  }
  const length = parts.reduce((n, p) => n + p.length, 0)
  const ids = new Uint32Array(length)
  let at = 0
  for (const p of parts) {
    ids.set(p, at)
    at += p.length
  }
  return ids
}

/**
 * The cache accounting of one request, without changing the cache. Prefixes are hashed at
 * every 128-token boundary; a hash chains the one before, so it identifies the whole prefix.
 * They are partitioned by API key (the organization: [OPC] "Prompt caches are not shared between
 * organizations"), model and `prompt_cache_key` ([OPC] "it is combined with the prefix hash" to
 * route the request: another key reaches another machine and its cache).
 */
function account(ids, body, apiKey, cache, now) {
  let hash = sha256('openai\n', apiKey, '\n', body.model, '\n', body.prompt_cache_key ?? '')
  const chain = []
  for (let k = 1; k * CACHE_INCREMENT <= ids.length; k++) {
    hash = sha256(hash, ids.subarray((k - 1) * CACHE_INCREMENT, k * CACHE_INCREMENT))
    chain.push(hash)
  }
  let best = 0
  while (best < chain.length) {
    const entry = cache.get(chain[best])
    if (!entry || entry.expiresAt <= now) break
    best++
  }
  // [OPC] "For requests under 1024 tokens, cached_tokens will be zero"; hits from 1,024 on, in
  // 128-token steps (its example: prompt_tokens 2006, cached_tokens 1920).
  const cached = best * CACHE_INCREMENT >= MIN_CACHED_PROMPT ? best * CACHE_INCREMENT : 0
  return {
    promptTokens: ids.length,
    cachedTokens: cached,
    hits: chain.slice(0, best),
    // [OPC] on a miss "the system processes your full prompt, caching the prefix afterward".
    writes: ids.length >= MIN_CACHED_PROMPT ? chain : [],
  }
}

function normalizeReply(reply, defaultText) {
  if (reply === undefined || reply === null) return { kind: 'message', content: defaultText() }
  if (typeof reply === 'string') return { kind: 'message', content: reply }
  if (typeof reply.status === 'number' && reply.status !== 200) {
    return { kind: 'http', status: reply.status, headers: reply.headers ?? {}, body: reply.body ?? openaiErrorBody(reply.status, reply.message), delayMs: reply.delayMs }
  }
  return {
    kind: 'message',
    content: reply.content === undefined ? (reply.tool_calls || reply.refusal ? null : defaultText()) : reply.content,
    tool_calls: reply.tool_calls,
    refusal: reply.refusal ?? null,
    finish_reason: reply.finish_reason,
    completion_tokens: reply.completion_tokens,
    headers: reply.headers ?? {},
    delayMs: reply.delayMs,
  }
}

function textOf(message) {
  const c = message.content
  const text = typeof c === 'string' ? c : Array.isArray(c) ? c.map((p) => partText(p) ?? '').join('\n') : ''
  return text + (message.tool_calls ? `\n${JSON.stringify(message.tool_calls)}` : '')
}

const mask = (key) => (key.length > 12 ? `${key.slice(0, 7)}${'*'.repeat(4)}${key.slice(-4)}` : '*'.repeat(key.length))

/**
 * Starts the server. Options as for `startAnthropicServer`: `apiKey`, `respond(request, context)`
 * (a string, `{ content?, tool_calls?, refusal?, finish_reason?, completion_tokens?, delayMs?, headers? }`,
 * or `{ status, body?, message?, headers?, delayMs? }`), `now()`, `delayMs`.
 */
export async function startOpenAIServer(options = {}) {
  const keys = new Set([options.apiKey ?? 'test-key'].flat())
  const now = options.now ?? (() => Date.now())
  const cache = new Map()
  const requests = []

  async function handle(req, raw) {
    const record = { index: requests.length, method: req.method, path: req.url, headers: req.headers, rawBody: raw, body: undefined, status: 0, response: undefined, usage: null }
    requests.push(record)
    const finish = (status, payload, headers = {}) => {
      record.status = status
      record.response = payload
      return { status, headers: { 'x-request-id': randomId('req_'), ...headers }, body: JSON.stringify(payload) }
    }

    if (req.method !== 'POST' || req.url.split('?')[0] !== '/v1/chat/completions') return finish(404, openaiErrorBody(404, `Invalid URL (${req.method} ${req.url})`))
    const auth = String(req.headers.authorization ?? '')
    const key = auth.startsWith('Bearer ') ? auth.slice(7).trim() : ''
    if (!key) {
      return finish(
        401,
        openaiErrorBody(401, "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username. You can obtain an API key from https://platform.openai.com/account/api-keys."),
      )
    }
    if (!keys.has(key)) {
      return finish(401, openaiErrorBody(401, `Incorrect API key provided: ${mask(key)}. You can find your API key at https://platform.openai.com/account/api-keys.`, { code: 'invalid_api_key' }))
    }
    let body
    try {
      body = JSON.parse(raw)
    } catch {
      return finish(400, openaiErrorBody(400, 'We could not parse the JSON body of your request. (HINT: This likely means you aren\'t using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)'))
    }
    record.body = body
    let accounting
    try {
      validate(body)
      accounting = account(render(body), body, key, cache, now())
    } catch (error) {
      if (error instanceof Invalid) return finish(error.status, openaiErrorBody(error.status, error.message, { param: error.param, code: error.code }))
      throw error
    }

    const defaultText = () => {
      const lastUser = [...body.messages].reverse().find((m) => m.role === 'user')
      return defaultSummary(body.messages.map(textOf).join('\n'), lastUser ? textOf(lastUser) : '')
    }
    const usageIn = { prompt_tokens: accounting.promptTokens, prompt_tokens_details: { cached_tokens: accounting.cachedTokens, audio_tokens: 0 } }
    const reply = normalizeReply(await options.respond?.(body, { index: record.index, headers: req.headers, usage: usageIn, defaultText }), defaultText)
    const delay = reply.delayMs ?? options.delayMs ?? 0
    if (delay > 0) await sleep(delay)
    if (reply.kind === 'http') {
      record.status = reply.status
      record.response = reply.body
      return { status: reply.status, headers: reply.headers, body: typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body) }
    }

    // The response begins: the prefix is cached now, and a hit refreshes what it read.
    const t = now()
    const ttlMs = RETENTION_MS[body.prompt_cache_retention === '24h' ? '24h' : 'in_memory']
    for (const hash of accounting.hits) {
      const entry = cache.get(hash)
      if (entry) entry.expiresAt = Math.max(entry.expiresAt, t + entry.ttlMs)
    }
    for (const hash of accounting.writes) {
      const entry = cache.get(hash)
      if (entry && entry.expiresAt > t) entry.expiresAt = Math.max(entry.expiresAt, t + ttlMs)
      else cache.set(hash, { expiresAt: t + ttlMs, ttlMs })
    }

    let content = reply.content
    let finishReason = reply.finish_reason ?? (reply.tool_calls ? 'tool_calls' : 'stop')
    let completion = reply.completion_tokens ?? tokenCount(content ?? '') + (reply.tool_calls ? tokenCount(JSON.stringify(reply.tool_calls)) : 0)
    const limit = body.max_completion_tokens ?? body.max_tokens
    if (reply.completion_tokens === undefined && reply.finish_reason === undefined && !reply.tool_calls && Number.isInteger(limit) && completion > limit) {
      content = decode(tokenIds(content ?? '').slice(0, limit))
      completion = limit
      finishReason = 'length'
    }
    // A refusal comes as `message.refusal` with `content: null` (the API's refusal field).
    const message = { role: 'assistant', content, refusal: reply.refusal }
    if (reply.tool_calls) message.tool_calls = clone(reply.tool_calls)
    const usage = {
      ...usageIn,
      completion_tokens: completion,
      total_tokens: accounting.promptTokens + completion,
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    }
    record.usage = usage
    return finish(
      200,
      {
        id: randomId('chatcmpl-'),
        object: 'chat.completion',
        created: Math.floor(t / 1000),
        model: body.model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
        usage,
        service_tier: 'default',
        system_fingerprint: null,
      },
      reply.headers,
    )
  }

  const http = await startHttpServer(handle)
  return {
    url: http.url,
    requests,
    reset() {
      requests.length = 0
      cache.clear()
    },
    close: http.close,
  }
}
