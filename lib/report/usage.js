'use strict'

// The usage the API billed, for the report's chart and tables: the `usage` option (one entry per
// request, as agents' session files record it) or the usage recorded on the model's messages, in
// any SDK's shape, read as `{prompt, cacheRead, output}`.

const { isModelMessage } = require('../counting/counting.js')

/** The request was sent with messages 0..index. */
function usageIndex(entry) {
  return entry.message_index_after_which_the_request_was_made ?? entry.index
}

const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : 0)

/**
 * A usage report in any SDK's shape (index.d.ts `Usage`, the usage files' entries, pi's
 * `{input, cacheRead, cacheWrite}`) as `{prompt, cacheRead, output}`: the prompt as billed
 * (full price, cache reads and cache writes together). `null` when it says no input.
 */
function billedOf(u) {
  if (u === null || typeof u !== 'object') return null
  if (typeof u.input_tokens === 'number') {
    const details = u.input_tokens_details
    if (u.cache_read_input_tokens === undefined && details && typeof details.cached_tokens === 'number') {
      // OpenAI Responses: input_tokens includes the cached tokens.
      return { prompt: u.input_tokens, cacheRead: details.cached_tokens, output: num(u.output_tokens) }
    }
    const read = num(u.cache_read_input_tokens) || num(u.input_token_details && u.input_token_details.cache_read)
    // LangChain's usage_metadata counts cache reads inside input_tokens, Anthropic beside it.
    const beside = u.cache_read_input_tokens !== undefined || u.cache_creation_input_tokens !== undefined
    return {
      prompt: u.input_tokens + (beside ? num(u.cache_read_input_tokens) + num(u.cache_creation_input_tokens) : 0),
      cacheRead: read,
      output: num(u.output_tokens),
    }
  }
  if (typeof u.prompt_tokens === 'number') {
    return { prompt: u.prompt_tokens, cacheRead: num(u.prompt_tokens_details && u.prompt_tokens_details.cached_tokens), output: num(u.completion_tokens) }
  }
  if (typeof u.inputTokens === 'number') {
    // Bedrock counts cache reads and writes beside inputTokens; the AI SDK inside it.
    return {
      prompt: u.inputTokens + num(u.cacheReadInputTokens) + num(u.cacheWriteInputTokens),
      cacheRead: num(u.cacheReadInputTokens) || num(u.cachedInputTokens),
      output: num(u.outputTokens),
    }
  }
  if (typeof u.promptTokenCount === 'number') {
    return { prompt: u.promptTokenCount + num(u.toolUsePromptTokenCount), cacheRead: num(u.cachedContentTokenCount), output: num(u.candidatesTokenCount) }
  }
  if (typeof u.input === 'number') {
    return { prompt: u.input + num(u.cacheRead) + num(u.cacheWrite), cacheRead: num(u.cacheRead), output: num(u.output) }
  }
  return null
}

// The usage a model message carries: `usage` (pi, stored API responses), LangChain's
// `usage_metadata`, or `response_metadata.usage`.
function recordedUsage(message) {
  if (message === null || typeof message !== 'object') return null
  for (const u of [message.usage, message.usage_metadata, message.response_metadata && message.response_metadata.usage]) {
    const billed = billedOf(u)
    if (billed && billed.prompt > 0) return billed
  }
  return null
}

/** Billed requests: `{index, prompt, cacheRead, output, source}`, by index (the request was sent with messages 0..index). */
function billedRequests(full, fullItems, usage) {
  const byIndex = new Map()
  if (usage) {
    for (const entry of usage) {
      const billed = billedOf(entry)
      if (billed) byIndex.set(usageIndex(entry), { index: usageIndex(entry), ...billed, source: 'usage' })
    }
  } else {
    // A model message's usage is that of the request whose reply it is: sent with the
    // messages before it.
    fullItems.forEach((item, i) => {
      if (i === 0 || (item.role !== 'assistant' && item.role !== 'model' && item.role !== 'ai')) return
      const billed = recordedUsage(full[i])
      if (billed && !byIndex.has(i - 1)) byIndex.set(i - 1, { index: i - 1, ...billed, source: 'recorded' })
    })
  }
  return [...byIndex.values()].sort((a, b) => a.index - b.index)
}

/**
 * The usage the trigger reads for the list as it is: the last billed request's, when its reply
 * (one model message, or a run of Responses output items) is the list's last model output; as
 * `check` reads an agent's session file, so that both say the same estimate.
 */
function usageNow(list, fullIsList, usage) {
  if (!fullIsList || !Array.isArray(usage) || usage.length === 0) return undefined
  let last = null
  for (const entry of usage) if (billedOf(entry) && (last === null || usageIndex(entry) >= usageIndex(last))) last = entry
  if (last === null) return undefined
  const start = usageIndex(last) + 1
  if (start >= list.length || !isModelMessage(list[start])) return undefined
  let end = start
  while (end + 1 < list.length && isModelMessage(list[end + 1])) end++
  for (let i = end + 1; i < list.length; i++) if (isModelMessage(list[i])) return undefined
  const { message_index_after_which_the_request_was_made: _a, index: _b, ...u } = last
  return u
}

module.exports = { num, usageIndex, billedOf, billedRequests, usageNow }
