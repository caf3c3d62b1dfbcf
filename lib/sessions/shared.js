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

// A caller's mistake (a file that is no session, a wrong argument), as the rest of the library
// says it (lib/addon/validate.js, which this module does not load: it loads the addon, and the CLI
// reads session files before it needs the addon).
function invalidArgument(message) {
  const error = new TypeError(message)
  error.code = 'ERR_CONTEXT_COMPACT_INVALID_ARGUMENT'
  return error
}

module.exports = { isObject, blankText, anthropicUsage, invalidArgument }
