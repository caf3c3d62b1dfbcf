// Anthropic Messages (what benchmark/generate.mjs writes and the real sessions in ../shared/data
// hold) as the OpenAI Agents SDK's items (`AgentInputItem` of @openai/agents, as its sessions
// store them). Used by benchmark/adapters/openai-agents.mjs and the adapter's tests.

function textOfResult(content) {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content.map((block) => (block.type === 'text' ? String(block.text ?? '') : `[${block.type}]`)).join('\n')
}

/**
 * Thinking → `reasoning`, text → assistant `message`, `tool_use` → `function_call` (`callId`,
 * JSON `arguments`), `tool_result` → `function_call_result` (the output alternately a string
 * and the SDK's structured text, so that both shapes occur), images → `input_image` with a data
 * URL. Calls without a result and results without a call (an aborted turn) are left out: the
 * SDK's runner drops them from a request too.
 */
export function toAgentItems(messages) {
  const answered = new Set()
  const called = new Map()
  for (const m of messages) {
    if (!Array.isArray(m.content)) continue
    for (const block of m.content) {
      if (block.type === 'tool_use') called.set(block.id, block.name)
      if (block.type === 'tool_result') answered.add(block.tool_use_id)
    }
  }
  const items = []
  let results = 0
  for (const m of messages) {
    if (m.role === 'system') {
      items.push({ role: 'system', content: typeof m.content === 'string' ? m.content : textOfResult(m.content) })
      continue
    }
    if (typeof m.content === 'string') {
      if (m.role === 'user') items.push({ role: 'user', content: m.content })
      else items.push({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: m.content }] })
      continue
    }
    if (m.role === 'assistant') {
      for (const block of m.content) {
        if (block.type === 'thinking' && block.thinking) items.push({ type: 'reasoning', content: [{ type: 'input_text', text: block.thinking }] })
        else if (block.type === 'redacted_thinking') items.push({ type: 'reasoning', content: [], providerData: { encryptedContent: block.data } })
        else if (block.type === 'text' && block.text) items.push({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: block.text }] })
        else if (block.type === 'tool_use' && answered.has(block.id)) {
          items.push({ type: 'function_call', callId: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}), status: 'completed' })
        }
      }
      continue
    }
    const parts = []
    for (const block of m.content) {
      if (block.type === 'tool_result') {
        if (!called.has(block.tool_use_id)) continue
        const text = textOfResult(block.content)
        results += 1
        items.push({
          type: 'function_call_result',
          callId: block.tool_use_id,
          name: called.get(block.tool_use_id),
          status: 'completed',
          output: results % 2 === 0 ? { type: 'text', text } : text,
        })
      } else if (block.type === 'text') parts.push({ type: 'input_text', text: block.text })
      else if (block.type === 'image' && block.source?.type === 'base64') {
        parts.push({ type: 'input_image', image: `data:${block.source.media_type};base64,${block.source.data}` })
      }
    }
    if (parts.length > 0) items.push({ role: 'user', content: parts })
  }
  return items
}
