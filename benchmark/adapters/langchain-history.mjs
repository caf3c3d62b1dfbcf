// Anthropic-style messages (the generator's conversations, the real sessions of
// ../shared/data) as the messages of a LangChain.js agent's state, the way @langchain/anthropic
// gives them back: a user text is a HumanMessage; the tool results of a user message are one
// ToolMessage each (`tool_call_id`, `status: 'error'` for an error); an assistant message is an
// AIMessage whose content blocks are Claude's (thinking, text, tool_use) and whose `tool_calls`
// are its tool_use blocks; `usage_metadata` as LangChain reports it when the source has usage.
// Every message gets an id, as the agent state gives every message one.
//
// Used by benchmark/adapters/langchain-middleware.mjs and __test__/adapters/langchain.test.ts. The
// classes are passed in (`@langchain/core/messages`), so that this file imports nothing.

/**
 * @param {object[]} messages Anthropic-style messages (`role`, `content`), optionally with
 *   `usage` (Anthropic's: `input_tokens`, `cache_read_input_tokens`, …) on assistant messages.
 * @param {{ AIMessage: Function, HumanMessage: Function, SystemMessage: Function, ToolMessage: Function }} classes
 * @param {{ idPrefix?: string }} [options]
 */
export function toLangChainMessages(messages, classes, { idPrefix = 'm' } = {}) {
  const { AIMessage, HumanMessage, SystemMessage, ToolMessage } = classes
  const out = []
  const nextId = () => `${idPrefix}-${out.length + 1}`
  for (const m of messages) {
    if (m.role === 'system') {
      out.push(new SystemMessage({ content: m.content, id: nextId() }))
      continue
    }
    if (m.role === 'user') {
      if (typeof m.content === 'string') {
        out.push(new HumanMessage({ content: m.content, id: nextId() }))
        continue
      }
      for (const block of m.content) {
        if (block.type !== 'tool_result') continue
        const content = typeof block.content === 'string' ? block.content : Array.isArray(block.content) ? block.content : ''
        out.push(new ToolMessage({ content, tool_call_id: block.tool_use_id, status: block.is_error ? 'error' : 'success', id: nextId() }))
      }
      const other = m.content.filter((block) => block.type !== 'tool_result')
      if (other.length > 0) out.push(new HumanMessage({ content: other, id: nextId() }))
      continue
    }
    // Assistant: Claude's blocks as @langchain/anthropic keeps them, the calls as tool_calls.
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content
    const toolCalls = blocks
      .filter((block) => block.type === 'tool_use')
      .map((block) => ({ name: block.name, args: block.input ?? {}, id: block.id, type: 'tool_call' }))
    const onlyText = blocks.every((block) => block.type === 'text')
    const fields = {
      content: onlyText ? blocks.map((block) => block.text).join('') : blocks,
      tool_calls: toolCalls,
      id: nextId(),
    }
    if (m.usage) {
      const u = m.usage
      const cacheRead = u.cache_read_input_tokens ?? 0
      const cacheWrite = u.cache_creation_input_tokens ?? 0
      // @langchain/anthropic counts cache reads and writes into input_tokens.
      const input = u.input_tokens + cacheRead + cacheWrite
      fields.usage_metadata = {
        input_tokens: input,
        output_tokens: u.output_tokens ?? 0,
        total_tokens: input + (u.output_tokens ?? 0),
        input_token_details: { cache_read: cacheRead, cache_creation: cacheWrite },
      }
    }
    out.push(new AIMessage(fields))
  }
  return out
}
