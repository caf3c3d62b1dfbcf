// A local Anthropic Messages API (`POST /v1/messages`) that implements the documented request
// validation and prompt-cache accounting, for tests and the economics benchmark. It is not a
// server that accepts anything: requests the real API refuses get its status, error body and
// (where we found it) its exact message; cache reads and writes follow the documented rules.
// Every rule is cited in a comment and collected, with its source, in ../CACHE-RULES.md.
//
//   const server = await startAnthropicServer({ respond: (request) => [...content blocks] })
//   fetch(`${server.url}/v1/messages`, …); server.requests[0].usage; await server.close()
//
// Sources (read 2026-11-24):
//   [PC]  https://platform.claude.com/docs/en/build-with-claude/prompt-caching
//   [ET]  https://platform.claude.com/docs/en/build-with-claude/extended-thinking
//   [ERR] https://platform.claude.com/docs/en/api/errors
//   [TU]  https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use
//   Error texts quoted from API responses reported in public issue trackers (see CACHE-RULES.md).
import { decode } from 'gpt-tokenizer/encoding/o200k_base'

import { clone, defaultSummary, randomId, sha256, sleep, startHttpServer, tokenCount, tokenIds } from './common.mjs'

/** [PC] "The lookback window is 20 blocks. The system checks at most 20 positions per breakpoint, counting the breakpoint itself as the first." */
export const LOOKBACK_BLOCKS = 20
/** [PC] "You can define up to 4 cache breakpoints"; the automatic breakpoint "uses one of the 4 available breakpoint slots". */
export const MAX_BREAKPOINTS = 4
/** [PC] "By default, the cache has a 5-minute lifetime. The cache is refreshed for no additional cost each time the cached content is used." `ttl: "1h"` gives one hour. */
export const TTL_MS = { '5m': 5 * 60_000, '1h': 60 * 60_000 }
/** An image's tokens: [vision docs] tokens ≈ width × height / 750, about 1,600 for a 1.15-megapixel image. We do not decode images, so every image counts as that upper bound. */
export const IMAGE_TOKENS = 1600
/** Framing tokens per rendered block (role and block delimiters), an approximation. */
const BLOCK_OVERHEAD = 3

/**
 * What the docs say about a model, from its id (`claude-opus-4-6`, `claude-haiku-4-5-20251001`,
 * `claude-3-7-sonnet-20250219`, …). Unknown models get the most common values, marked `known: false`.
 */
export function modelInfo(model) {
  const id = String(model ?? '').toLowerCase()
  let family = null
  let major = 0
  let minor = 0
  let m = /claude-(opus|sonnet|haiku|fable|mythos)-(\d+)(?:[-.](\d+))?/.exec(id)
  if (m) {
    family = m[1]
    major = Number(m[2])
    // `claude-opus-4-20250514`: the second number is a date, not a minor version.
    minor = m[3] !== undefined && m[3].length <= 2 ? Number(m[3]) : 0
  } else if ((m = /claude-(\d)(?:-(\d))?-(opus|sonnet|haiku)/.exec(id))) {
    family = m[3]
    major = Number(m[1])
    minor = m[2] !== undefined ? Number(m[2]) : 0
  } else if (/claude-mythos-preview/.test(id)) {
    family = 'mythos'
    major = 4
    minor = 99
  }
  const v = major * 100 + minor
  const known = family !== null
  // [PC] Cache limitations, "The minimum cacheable prompt length is: 512 tokens for Claude Opus 5,
  // Claude Fable 5, and Claude Mythos 5; 2,048 tokens for Claude Mythos Preview and Claude Opus
  // 4.7; 4,096 tokens for Claude Opus 4.6 and Claude Opus 4.5; 1,024 tokens for Claude Opus 4.8,
  // Claude Sonnet 5, Claude Sonnet 4.6, Claude Sonnet 4.5, Claude Opus 4.1, Claude Opus 4, and
  // Claude Sonnet 4; 4,096 tokens for Claude Haiku 4.5; 2,048 tokens for Claude Haiku 3.5 and
  // Claude Haiku 3". The model pages give 512 for Opus 5.5 and Haiku 5.5 too.
  let minCacheableTokens = 1024
  if (family === 'mythos' && v === 499) minCacheableTokens = 2048
  else if (major >= 5) minCacheableTokens = family === 'sonnet' && v === 500 ? 1024 : 512
  else if (family === 'opus') minCacheableTokens = v === 407 ? 2048 : v === 405 || v === 406 ? 4096 : 1024
  else if (family === 'haiku') minCacheableTokens = v >= 405 ? 4096 : 2048
  // [ET] "Opus: Claude Opus 4.5 and later Opus models keep all prior thinking blocks; Claude Opus
  // 4.1 (deprecated) and earlier Opus models keep only the last assistant turn's thinking. Sonnet:
  // Claude Sonnet 4.6 and later Sonnet models keep all; Claude Sonnet 4.5 and earlier Sonnet models
  // keep only the last turn. Haiku: all Haiku models through Claude Haiku 4.5 keep only the last
  // turn. Claude Mythos Preview also keeps all prior thinking blocks."
  const keepsAllThinking =
    (family === 'opus' && v >= 405) || (family === 'sonnet' && v >= 406) || family === 'mythos' || family === 'fable' || major >= 5
  // [ERR] "Prefilling assistant messages is not supported for this model." — on Claude Opus 4.6,
  // 4.7, 4.8, Sonnet 4.6, Sonnet 5, Fable 5, Mythos 5 and Mythos Preview (errors page and the
  // models' migration notes). Earlier models accept a final assistant message as a prefill.
  const rejectsPrefill = (family === 'opus' && v >= 406) || (family === 'sonnet' && v >= 406) || family === 'mythos' || family === 'fable' || major >= 5
  // Mid-conversation system messages: "Claude Opus 4.8 accepts role: "system" messages
  // immediately after a user turn" (what's new in Claude Opus 4.8); earlier models reject them.
  const acceptsMidConversationSystem = (family === 'opus' && v >= 408) || major >= 5 || family === 'fable'
  return { known, family, major, minor, minCacheableTokens, keepsAllThinking, rejectsPrefill, acceptsMidConversationSystem }
}

// Error bodies: [ERR] `{"type":"error","error":{"type":…,"message":…},"request_id":…}`.
const ERROR_TYPES = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
}
const DEFAULT_MESSAGES = {
  400: 'Invalid request',
  401: 'invalid x-api-key',
  403: 'Your API key does not have permission to use the specified resource.',
  404: 'Not found',
  413: 'Request exceeds the maximum allowed number of bytes.',
  429: 'Number of request tokens has exceeded your per-minute rate limit',
  500: 'Internal server error',
  529: 'Overloaded',
}

export function anthropicErrorBody(status, message, type = ERROR_TYPES[status] ?? 'api_error') {
  return { type: 'error', error: { type, message: message ?? DEFAULT_MESSAGES[status] ?? 'Error' }, request_id: randomId('req_') }
}

class Invalid extends Error {
  constructor(message, status = 400) {
    super(message)
    this.status = status
  }
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)
const isThinking = (b) => b?.type === 'thinking' || b?.type === 'redacted_thinking'
const blocksOf = (message) => (typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content)

function checkCacheControl(cc, where) {
  if (cc === undefined || cc === null) return null
  if (!isObject(cc) || cc.type !== 'ephemeral') throw new Invalid(`${where}.cache_control.type: Input should be 'ephemeral'`)
  if (cc.ttl !== undefined && !(cc.ttl in TTL_MS)) throw new Invalid(`${where}.cache_control.ttl: Input should be '5m' or '1h'`)
  return cc.ttl ?? '5m'
}

/** Validates the request as the API does; throws `Invalid` with the API's message. */
function validate(body, headers, info) {
  if (!isObject(body)) throw new Invalid('body: Input should be a valid dictionary')
  if (typeof body.model !== 'string' || body.model === '') throw new Invalid('model: Field required')
  if (body.max_tokens === undefined) throw new Invalid('max_tokens: Field required')
  if (!Number.isInteger(body.max_tokens)) throw new Invalid('max_tokens: Input should be a valid integer')
  if (body.max_tokens < 1) throw new Invalid('max_tokens: Input should be greater than or equal to 1')
  if (body.messages === undefined) throw new Invalid('messages: Field required')
  if (!Array.isArray(body.messages)) throw new Invalid('messages: Input should be a valid list')
  if (body.messages.length === 0) throw new Invalid('messages: at least one message is required')
  if (body.stream === true) throw new Invalid('stream: this local server answers without streaming; send `stream: false`')

  // system: a string or a list of text blocks.
  if (body.system !== undefined && typeof body.system !== 'string') {
    if (!Array.isArray(body.system)) throw new Invalid('system: Input should be a valid string')
    body.system.forEach((b, j) => {
      if (!isObject(b) || b.type !== 'text' || typeof b.text !== 'string') throw new Invalid(`system.${j}: Input should be a valid text block`)
      if (b.text === '') throw new Invalid('system: text content blocks must be non-empty')
    })
  }

  // tools: custom tools need a name and an input_schema; names are unique.
  const toolNames = new Set()
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) throw new Invalid('tools: Input should be a valid list')
    body.tools.forEach((tool, i) => {
      if (!isObject(tool)) throw new Invalid(`tools.${i}: Input should be a valid dictionary`)
      const custom = tool.type === undefined || tool.type === 'custom'
      if (typeof tool.name !== 'string' || tool.name === '') throw new Invalid(`tools.${i}.${custom ? 'custom.' : ''}name: Field required`)
      if (custom && !isObject(tool.input_schema)) throw new Invalid(`tools.${i}.custom.input_schema: Field required`)
      if (toolNames.has(tool.name)) throw new Invalid('tools: Tool names must be unique.')
      toolNames.add(tool.name)
    })
  }

  // tool_choice: {type: auto | any | tool | none}; `tool` names one of the tools.
  const tc = body.tool_choice
  if (tc !== undefined) {
    if (!isObject(tc) || !['auto', 'any', 'tool', 'none'].includes(tc.type)) {
      // The API's validation message for an unknown tag (the same form it uses for `tools.N`).
      throw new Invalid(`tool_choice: Input tag '${isObject(tc) ? tc.type : tc}' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'`)
    }
    if (tc.type === 'tool') {
      if (typeof tc.name !== 'string') throw new Invalid('tool_choice.tool.name: Field required')
      // Our wording: we found no public copy of the API's message for an unknown tool name.
      if (!toolNames.has(tc.name)) throw new Invalid(`tool_choice.tool.name: '${tc.name}' is not one of the tools in this request`)
    }
    if ((tc.type === 'any' || tc.type === 'tool') && toolNames.size === 0) {
      throw new Invalid(`tool_choice: '${tc.type}' needs at least one tool in \`tools\``)
    }
  }

  // thinking: [ET] "The minimum budget is 1,024 tokens"; max_tokens must exceed the budget,
  // except with interleaved thinking ("the budget_tokens can exceed the max_tokens parameter").
  const th = body.thinking
  const thinkingOn = isObject(th) && (th.type === 'enabled' || th.type === 'adaptive')
  if (th !== undefined) {
    if (!isObject(th) || !['enabled', 'disabled', 'adaptive'].includes(th.type)) {
      throw new Invalid(`thinking: Input tag '${isObject(th) ? th.type : th}' found using 'type' does not match any of the expected tags: 'adaptive', 'disabled', 'enabled'`)
    }
    if (th.type === 'enabled') {
      if (!Number.isInteger(th.budget_tokens)) throw new Invalid('thinking.enabled.budget_tokens: Field required')
      if (th.budget_tokens < 1024) throw new Invalid('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024')
      const interleaved = String(headers['anthropic-beta'] ?? '').includes('interleaved-thinking-2025-05-14')
      if (!interleaved && body.max_tokens <= th.budget_tokens) throw new Invalid('`max_tokens` must be greater than `thinking.budget_tokens`.')
    }
    // [ET] "Thinking isn't compatible with … forced tool use."
    if (thinkingOn && (tc?.type === 'any' || tc?.type === 'tool')) throw new Invalid('Thinking may not be enabled when tool_choice forces tool use.')
  }

  // messages: roles, content, and turns (the API combines consecutive messages of one role).
  const turns = []
  body.messages.forEach((message, i) => {
    if (!isObject(message)) throw new Invalid(`messages.${i}: Input should be a valid dictionary`)
    if (message.role === 'system') {
      if (!info.acceptsMidConversationSystem) {
        throw new Invalid('messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.')
      }
      // Our wording for the placement rule ("immediately after a user turn").
      if (i === 0 || body.messages[i - 1]?.role !== 'user') throw new Invalid(`messages.${i}: a system message must come immediately after a user turn`)
    } else if (message.role !== 'user' && message.role !== 'assistant') {
      throw new Invalid(`messages.${i}.role: Input should be 'user' or 'assistant'`)
    }
    if (typeof message.content !== 'string' && !Array.isArray(message.content)) throw new Invalid(`messages.${i}.content: Input should be a valid string`)
    const last = i === body.messages.length - 1
    const empty = typeof message.content === 'string' ? message.content === '' : message.content.length === 0
    if (empty && !(last && message.role === 'assistant')) {
      throw new Invalid(`messages.${i}: all messages must have non-empty content except for the optional final assistant message`)
    }
    if (Array.isArray(message.content)) {
      message.content.forEach((b, j) => {
        if (!isObject(b) || typeof b.type !== 'string') throw new Invalid(`messages.${i}.content.${j}.type: Field required`)
        if (b.type === 'text' && (typeof b.text !== 'string' || b.text === '')) throw new Invalid('messages: text content blocks must be non-empty')
      })
    }
    const prev = turns.at(-1)
    if (prev && prev.role === message.role && message.role !== 'system') {
      prev.parts.push(i)
    } else {
      turns.push({ role: message.role, first: i, parts: [i] })
    }
  })
  if (body.messages[0].role !== 'user') throw new Invalid('messages: first message must use the "user" role')

  // Tool pairing, [TU]: "Tool result blocks must immediately follow their corresponding tool use
  // blocks in the message history … the tool_result blocks must come FIRST in the content array."
  const blocksOfTurn = (turn) => turn.parts.flatMap((i) => (typeof body.messages[i].content === 'string' ? [{ b: { type: 'text' }, i, j: 0 }] : body.messages[i].content.map((b, j) => ({ b, i, j }))))
  turns.forEach((turn, t) => {
    const blocks = blocksOfTurn(turn)
    if (turn.role === 'user') {
      const results = blocks.filter(({ b }) => b.type === 'tool_result')
      if (results.length > 0) {
        const prev = turns[t - 1]
        const uses = prev?.role === 'assistant' ? blocksOfTurn(prev).filter(({ b }) => b.type === 'tool_use').map(({ b }) => b.id) : []
        if (uses.length === 0) throw new Invalid(`messages.${turn.first}: \`tool_result\` block(s) provided when previous message does not contain any \`tool_use\` blocks`)
        for (const { b, i, j } of results) {
          if (!uses.includes(b.tool_use_id)) {
            throw new Invalid(`messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`)
          }
        }
      }
    }
    if (turn.role === 'assistant') {
      const uses = blocks.filter(({ b }) => b.type === 'tool_use').map(({ b }) => b.id)
      if (uses.length > 0) {
        const next = turns[t + 1]
        const leading = []
        if (next?.role === 'user') {
          for (const { b } of blocksOfTurn(next)) {
            if (b.type !== 'tool_result') break
            leading.push(b.tool_use_id)
          }
        }
        const missing = uses.filter((id) => !leading.includes(id))
        if (missing.length > 0) {
          throw new Invalid(`messages.${turn.first}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`)
        }
      }
    }
  })

  // A final assistant message is a prefill. [ET] "You can't pre-fill responses when thinking is
  // enabled" (our wording of the error); [ERR] newer models refuse prefills with this message.
  if (turns.at(-1).role === 'assistant') {
    if (thinkingOn) throw new Invalid('Prefilling the assistant response is not compatible with extended thinking.')
    if (info.rejectsPrefill) throw new Invalid('Prefilling assistant messages is not supported for this model.')
  }

  // cache_control: where it may sit, its TTL, and at most 4 breakpoints including the automatic one.
  let count = 0
  ;(body.tools ?? []).forEach((tool, i) => {
    if (checkCacheControl(tool.cache_control, `tools.${i}`)) count++
  })
  if (Array.isArray(body.system)) {
    body.system.forEach((b, j) => {
      if (checkCacheControl(b.cache_control, `system.${j}`)) count++
    })
  }
  body.messages.forEach((message, i) => {
    if (!Array.isArray(message.content)) return
    message.content.forEach((b, j) => {
      if (!checkCacheControl(b.cache_control, `messages.${i}.content.${j}`)) return
      // [PC] "Thinking blocks cannot be cached directly with cache_control." (our wording)
      if (isThinking(b)) throw new Invalid(`messages.${i}.content.${j}: thinking blocks cannot be marked with cache_control`)
      count++
    })
  })
  if (body.cache_control !== undefined) {
    checkCacheControl(body.cache_control, 'body')
    count++ // Adjusted below when it coincides with an explicit breakpoint of the same TTL.
  }
  return { thinkingOn, explicitBreakpoints: count - (body.cache_control !== undefined ? 1 : 0) }
}

/** The text whose tokens a block is billed for (images counted separately). */
function blockText(b) {
  switch (b.type) {
    case 'text':
      return b.text
    case 'thinking':
      return b.thinking ?? ''
    case 'redacted_thinking':
      return b.data ?? ''
    case 'tool_use':
    case 'server_tool_use':
      return `${b.name} ${JSON.stringify(b.input ?? {})}`
    case 'tool_result':
      return typeof b.content === 'string' ? b.content : Array.isArray(b.content) ? b.content.map(blockText).join('\n') : ''
    case 'image':
      return ''
    case 'document':
      return b.source?.type === 'text' ? b.source.data : JSON.stringify(b.source ?? {})
    default:
      return JSON.stringify(b)
  }
}

function imagesIn(b) {
  if (b.type === 'image') return 1
  if (b.type === 'tool_result' && Array.isArray(b.content)) return b.content.reduce((n, c) => n + imagesIn(c), 0)
  return 0
}

/**
 * A block's identity for the cache: its fields without `cache_control` ([PC] the breakpoint
 * marks where to cache, it is not content: moving it does not change the prefix). The block's
 * own keys are sorted, since the API parses the envelope; nested values (`input`,
 * `input_schema`, tool-result content) keep their key order, since they are rendered as text.
 */
function canonical(b) {
  const { cache_control: _ignored, ...rest } = b
  return JSON.stringify(Object.keys(rest).sort().map((k) => [k, rest[k]]))
}

/**
 * Renders the prompt as the cache sees it: [PC] "Prompt caching references the entire prompt -
 * tools, system, and messages (in that order) up to and including the block designated with
 * cache_control", one entry per content block, a string content being one text block.
 *
 * Each block's hash chains the previous one, so it identifies the whole prefix. What
 * invalidates a level is mixed into that level's blocks ([PC] "What invalidates the cache":
 * tool definitions → everything; `speed` → system and messages; `tool_choice`, thinking
 * parameters, and adding or removing images anywhere → messages only). `output_config.effort`
 * goes with the messages too: the Opus 5 notes say "Effort shapes the rendered prompt, so
 * changing it between requests invalidates cached prefixes" without naming a level.
 */
function render(body, apiKey, info, thinkingOn) {
  const blocks = []
  ;(body.tools ?? []).forEach((tool, i) => {
    const { cache_control: _c, ...definition } = tool
    const text = tool.type === undefined || tool.type === 'custom' ? `${tool.name}\n${tool.description ?? ''}\n${JSON.stringify(tool.input_schema)}` : JSON.stringify(definition)
    blocks.push({ kind: 'tools', where: `tools.${i}`, block: tool, text, images: 0 })
  })
  const system = typeof body.system === 'string' ? (body.system === '' ? [] : [{ type: 'text', text: body.system }]) : (body.system ?? [])
  system.forEach((b, j) => blocks.push({ kind: 'system', where: `system.${j}`, block: b, text: b.text, images: 0 }))

  // Thinking blocks in context, [ET]: with thinking off they are stripped ("If thinking becomes
  // disabled and you pass thinking content in the current tool use turn, the thinking content
  // will be stripped"); models that keep only the last turn drop every thinking block before the
  // last user turn that is not only tool results ("When a non-tool-result user block is included,
  // all previous thinking blocks are ignored and stripped from context"). Stripped blocks are not
  // in the prompt: they are neither billed nor part of the cached prefix.
  let lastHumanTurn = -1
  body.messages.forEach((message, i) => {
    if (message.role === 'user' && blocksOf(message).some((b) => b.type !== 'tool_result')) lastHumanTurn = i
  })
  const stripped = []
  body.messages.forEach((message, i) => {
    blocksOf(message).forEach((b, j) => {
      if (isThinking(b) && (!thinkingOn || (!info.keepsAllThinking && i < lastHumanTurn))) {
        stripped.push(`messages.${i}.content.${j}`)
        return
      }
      blocks.push({ kind: 'messages', where: `messages.${i}.content.${j}`, block: b, text: blockText(b), images: imagesIn(b) })
    })
  })

  const th = body.thinking
  const thinkingKey = th?.type === 'enabled' ? { type: 'enabled', budget_tokens: th.budget_tokens } : th?.type === 'adaptive' ? { type: 'adaptive' } : { type: 'disabled' }
  const images = blocks.reduce((n, b) => n + b.images, 0)
  const salt = {
    tools: '',
    system: JSON.stringify({ speed: body.speed ?? 'standard' }),
    messages: JSON.stringify({ speed: body.speed ?? 'standard', tool_choice: body.tool_choice ?? null, thinking: thinkingKey, effort: body.output_config?.effort ?? null, images }),
  }
  // Caches are isolated per organization/workspace ([PC] "Caches are isolated between
  // organizations"): the API key stands for the workspace here. The model is part of the prefix.
  let hash = sha256('anthropic\n', apiKey, '\n', body.model)
  let total = 0
  for (const b of blocks) {
    b.tokens = BLOCK_OVERHEAD + tokenCount(b.text) + b.images * IMAGE_TOKENS
    total += b.tokens
    b.cumulative = total
    hash = sha256(hash, '\n', salt[b.kind], '\n', canonical(b.block))
    b.hash = hash
  }
  return { blocks, stripped, total }
}

/** The breakpoints of a rendered prompt, in order: explicit ones, then the automatic one. */
function breakpoints(body, rendered) {
  const points = []
  rendered.blocks.forEach((b, index) => {
    const ttl = b.block.cache_control ? (b.block.cache_control.ttl ?? '5m') : null
    if (ttl) points.push({ index, ttl, automatic: false })
  })
  let extra = 0
  if (body.cache_control !== undefined) {
    const ttl = body.cache_control.ttl ?? '5m'
    // [PC] "If the last block is not eligible as an automatic cache breakpoint target, the system
    // silently walks backwards to find the nearest eligible block. If none is found, caching is
    // skipped." Thinking blocks and empty text cannot be cached ([PC] "What cannot be cached").
    let index = rendered.blocks.length - 1
    while (index >= 0 && (isThinking(rendered.blocks[index].block) || rendered.blocks[index].text === '')) index--
    if (index >= 0) {
      const existing = points.find((p) => p.index === index)
      // [PC] "If the last block already has an explicit cache_control with the same TTL,
      // automatic caching is a no-op. If the last block has an explicit cache_control with a
      // different TTL, the API returns a 400 error."
      if (existing && existing.ttl !== ttl) throw new Invalid(`cache_control: the automatic breakpoint's ttl '${ttl}' differs from the explicit ttl '${existing.ttl}' on the last cacheable block`)
      if (!existing) {
        points.push({ index, ttl, automatic: true })
        extra = 1
      }
    }
  }
  return { points: points.sort((a, b) => a.index - b.index), extra }
}

/**
 * The cache accounting of one request, without changing the cache (a request that fails writes
 * nothing). [PC] "Cache writes happen only at your breakpoint … Cache reads look backward for
 * entries that prior requests wrote … The lookback window is 20 blocks." Usage, [PC]:
 * `cache_read_input_tokens` = "tokens before breakpoint already cached (reads)",
 * `cache_creation_input_tokens` = "tokens before breakpoint being cached now (writes)",
 * `input_tokens` = "tokens after your last breakpoint (not eligible for cache)". A prefix shorter
 * than the model's minimum is not cached: "Shorter prompts cannot be cached, even if marked with
 * cache_control … processed without caching, and no error is returned."
 */
function account(rendered, points, cache, now, minTokens) {
  const { blocks, total } = rendered
  let readEnd = -1
  const hits = []
  for (const point of points) {
    for (let p = point.index; p >= 0 && p > point.index - LOOKBACK_BLOCKS; p--) {
      const entry = cache.get(blocks[p].hash)
      if (entry && entry.expiresAt > now) {
        hits.push(blocks[p].hash)
        if (p > readEnd) readEnd = p
        break
      }
    }
  }
  const writes = points.filter((point) => blocks[point.index].cumulative >= minTokens)
  const lastWrite = writes.length > 0 ? writes.at(-1).index : -1
  const read = readEnd >= 0 ? blocks[readEnd].cumulative : 0
  const covered = Math.max(readEnd, lastWrite)
  const creation = { '5m': 0, '1h': 0 }
  let from = read
  for (const point of writes) {
    const upto = blocks[point.index].cumulative
    if (upto > from) {
      creation[point.ttl] += upto - from
      from = upto
    }
  }
  return {
    readTokens: read,
    writeTokens: creation['5m'] + creation['1h'],
    creation,
    inputTokens: total - (covered >= 0 ? blocks[covered].cumulative : 0),
    readEndBlock: readEnd,
    lastWriteBlock: lastWrite,
    hits,
    writes: writes.map((point) => ({ hash: blocks[point.index].hash, ttl: point.ttl, block: point.index, tokens: blocks[point.index].cumulative })),
  }
}

/** Turns whatever `respond` returned into `{ kind: 'message' | 'http', … }`. */
function normalizeReply(reply, body, defaultText) {
  if (reply === undefined || reply === null) return { kind: 'message', content: [{ type: 'text', text: defaultText() }] }
  if (typeof reply === 'string') return { kind: 'message', content: [{ type: 'text', text: reply }] }
  if (Array.isArray(reply)) return { kind: 'message', content: reply }
  if (typeof reply.status === 'number' && reply.status !== 200) {
    return { kind: 'http', status: reply.status, headers: reply.headers ?? {}, body: reply.body ?? anthropicErrorBody(reply.status, reply.message), delayMs: reply.delayMs }
  }
  return {
    kind: 'message',
    content: reply.content ?? [{ type: 'text', text: defaultText() }],
    stop_reason: reply.stop_reason,
    output_tokens: reply.output_tokens,
    headers: reply.headers ?? {},
    delayMs: reply.delayMs,
  }
}

function lastUserText(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === 'user') return blocksOf(messages[i]).map(blockText).join('\n')
  }
  return ''
}

/**
 * Starts the server. Options:
 * - `apiKey`: the accepted key(s) (default `'test-key'`);
 * - `respond(request, context)`: the reply — content blocks, a string, `{ content, stop_reason?,
 *   output_tokens?, delayMs?, headers? }`, or `{ status, body?, message?, headers?, delayMs? }` for
 *   an HTTP error (the body defaults to the API's error shape for that status). `context` holds
 *   `{ index, headers, usage, defaultText() }`. Default: a structured summary (`defaultSummary`);
 * - `now()`: the clock in ms, for cache expiry (default `Date.now`);
 * - `minCacheableTokens`: overrides the model's minimum (a number, or `(model) => number`);
 * - `delayMs`: latency before every reply.
 */
export async function startAnthropicServer(options = {}) {
  const keys = new Set([options.apiKey ?? 'test-key'].flat())
  const now = options.now ?? (() => Date.now())
  const cache = new Map()
  const requests = []

  async function handle(req, raw) {
    const record = { index: requests.length, method: req.method, path: req.url, headers: req.headers, rawBody: raw, body: undefined, status: 0, response: undefined, usage: null, cache: null }
    requests.push(record)
    const finish = (status, payload, headers = {}) => {
      record.status = status
      record.response = payload
      const requestId = payload?.request_id ?? randomId('req_')
      return { status, headers: { 'request-id': requestId, ...headers }, body: JSON.stringify(payload) }
    }
    const fail = (status, message, type) => finish(status, anthropicErrorBody(status, message, type))

    if (req.method !== 'POST' || req.url.split('?')[0] !== '/v1/messages') return fail(404, `${req.method} ${req.url}: not found`)
    // Authentication first, then the version header, as the API answers them. The key comes in
    // `x-api-key` (the documented header, which the library sends) or as `Authorization: Bearer`,
    // which the official TypeScript SDK sends for its `apiKey` since 1.x and the API accepts.
    const bearer = /^Bearer\s+(\S+)$/i.exec(String(req.headers.authorization ?? ''))?.[1]
    const key = req.headers['x-api-key'] ?? bearer
    if (!key) return fail(401, 'x-api-key header is required')
    if (!keys.has(key)) return fail(401, 'invalid x-api-key')
    if (!req.headers['anthropic-version']) return fail(400, 'anthropic-version: header is required')
    let body
    try {
      body = JSON.parse(raw)
    } catch {
      return fail(400, 'There was an issue with the request body: it is not valid JSON')
    }
    record.body = body

    const info = modelInfo(body?.model)
    let rendered
    let accounting
    try {
      const { thinkingOn, explicitBreakpoints } = validate(body, req.headers, info)
      rendered = render(body, key, info, thinkingOn)
      const { points, extra } = breakpoints(body, rendered)
      const found = explicitBreakpoints + extra
      if (found > MAX_BREAKPOINTS) throw new Invalid(`A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${found}.`)
      const min = typeof options.minCacheableTokens === 'function' ? options.minCacheableTokens(body.model) : (options.minCacheableTokens ?? info.minCacheableTokens)
      accounting = account(rendered, points, cache, now(), min)
      record.cache = {
        blocks: rendered.blocks.length,
        totalTokens: rendered.total,
        breakpoints: points.map((p) => ({ block: p.index, where: rendered.blocks[p.index].where, ttl: p.ttl, automatic: p.automatic, tokens: rendered.blocks[p.index].cumulative })),
        readEndBlock: accounting.readEndBlock,
        lastWriteBlock: accounting.lastWriteBlock,
        minCacheableTokens: min,
        strippedThinking: rendered.stripped,
      }
    } catch (error) {
      if (error instanceof Invalid) return fail(error.status, error.message)
      throw error
    }

    const usageIn = {
      input_tokens: accounting.inputTokens,
      cache_creation_input_tokens: accounting.writeTokens,
      cache_read_input_tokens: accounting.readTokens,
      cache_creation: { ephemeral_5m_input_tokens: accounting.creation['5m'], ephemeral_1h_input_tokens: accounting.creation['1h'] },
    }
    const defaultText = () =>
      defaultSummary(
        body.messages.map((m) => blocksOf(m).map(blockText).join('\n')).join('\n'),
        lastUserText(body.messages),
      )
    const reply = normalizeReply(await options.respond?.(body, { index: record.index, headers: req.headers, usage: usageIn, defaultText }), body, defaultText)
    const delay = reply.delayMs ?? options.delayMs ?? 0
    if (delay > 0) await sleep(delay)
    if (reply.kind === 'http') {
      record.status = reply.status
      record.response = reply.body
      return { status: reply.status, headers: { 'request-id': reply.body?.request_id ?? randomId('req_'), ...reply.headers }, body: typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body) }
    }

    // The response begins: [PC] "a cache entry only becomes available after the first response
    // begins", and reading an entry refreshes its lifetime at no cost.
    const t = now()
    for (const hash of accounting.hits) {
      const entry = cache.get(hash)
      if (entry) entry.expiresAt = Math.max(entry.expiresAt, t + entry.ttlMs)
    }
    for (const write of accounting.writes) {
      const ttlMs = TTL_MS[write.ttl]
      const entry = cache.get(write.hash)
      if (entry && entry.expiresAt > t) entry.expiresAt = Math.max(entry.expiresAt, t + ttlMs)
      else cache.set(write.hash, { expiresAt: t + ttlMs, ttlMs, tokens: write.tokens, model: body.model })
    }

    let content = clone(reply.content)
    let stopReason = reply.stop_reason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn')
    let outputTokens = reply.output_tokens ?? content.reduce((n, b) => n + tokenCount(blockText(b)), 0)
    // The model stops at max_tokens: a longer scripted text is cut there.
    if (reply.output_tokens === undefined && reply.stop_reason === undefined && outputTokens > body.max_tokens) {
      let budget = body.max_tokens
      const cut = []
      for (const b of content) {
        if (budget <= 0) break
        if (b.type === 'text') {
          const ids = tokenIds(b.text)
          cut.push({ ...b, text: decode(ids.slice(0, budget)) })
          budget -= Math.min(ids.length, budget)
        } else {
          cut.push(b)
          budget -= tokenCount(blockText(b))
        }
      }
      content = cut
      outputTokens = body.max_tokens
      stopReason = 'max_tokens'
    }
    const usage = { ...usageIn, output_tokens: outputTokens, service_tier: 'standard' }
    record.usage = usage
    return finish(
      200,
      { id: randomId('msg_'), type: 'message', role: 'assistant', model: body.model, content, stop_reason: stopReason, stop_sequence: null, usage },
      reply.headers,
    )
  }

  const http = await startHttpServer(handle)
  return {
    url: http.url,
    requests,
    /** Live cache entries (for inspection): `{ hash, expiresAt, tokens, model }`. */
    cacheEntries: () => [...cache.entries()].filter(([, e]) => e.expiresAt > now()).map(([hash, e]) => ({ hash, ...e })),
    reset() {
      requests.length = 0
      cache.clear()
    },
    close: http.close,
  }
}
