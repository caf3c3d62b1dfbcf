'use strict'

// What the readers of agents' session files share.

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)

// Whitespace-only text blocks: Opus streams "\n\n" before a thinking block and Claude Code
// records it, but the API rejects a text block without text.
const blankText = (block) => isObject(block) && block.type === 'text' && (typeof block.text !== 'string' || block.text.trim() === '')

/** Anthropic usage, its fields as given (extra fields of the agent dropped). */
function anthropicUsage(u) {
  if (!isObject(u) || typeof u.input_tokens !== 'number') return null
  const out = { input_tokens: u.input_tokens }
  for (const key of ['cache_creation_input_tokens', 'cache_read_input_tokens', 'output_tokens']) {
    if (typeof u[key] === 'number') out[key] = u[key]
  }
  return out
}

module.exports = { isObject, blankText, anthropicUsage }
