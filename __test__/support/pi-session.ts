// Replays the real pi coding-agent sessions in ../shared/data as Anthropic Messages requests,
// with what the API billed for each one (see ../shared/data/README.md for the format).
import { readFileSync } from 'node:fs'

import type { Message } from '../../index'

export interface PiUsage {
  input: number
  output: number
  cacheRead: number
  cacheWrite: number
}

export interface ReplayRequest {
  /** Everything sent before this assistant reply (Anthropic messages). */
  messages: Message[]
  /** Input tokens the API billed for this request: input + cacheRead + cacheWrite. */
  billed: number
  /** The usage reported on the previous assistant reply in `messages`, if any. */
  previousUsage: { input_tokens: number; output_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number } | null
  model: string
}

export interface Replay {
  requests: ReplayRequest[]
  model: string
}

type Json = Record<string, any>

function convertUserContent(content: Json[] | string): Json[] | string {
  if (typeof content === 'string') return content
  return content.map((block) => {
    if (block.type === 'image') return { type: 'image', source: { type: 'base64', media_type: block.mimeType, data: block.data } }
    return block
  })
}

function convertAssistantContent(content: Json[]): Json[] {
  return content.map((block) => {
    if (block.type === 'toolCall') return { type: 'tool_use', id: block.id, name: block.name, input: block.arguments ?? {} }
    if (block.type === 'thinking') return { type: 'thinking', thinking: block.thinking ?? '', signature: block.thinkingSignature ?? '' }
    if (block.type === 'text') return { type: 'text', text: block.text ?? '' }
    return block
  })
}

/**
 * Loads a pi session and turns it into the Anthropic requests it made, in order, up to the
 * first point where the session's own compaction shrank the billed context.
 */
export function loadReplay(path: string): Replay {
  const lines = readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '')
  const messages: Message[] = []
  const requests: ReplayRequest[] = []
  let previousUsage: ReplayRequest['previousUsage'] = null
  let lastBilled = 0
  let model = ''
  for (const line of lines) {
    const entry = JSON.parse(line)
    if (entry.type === 'compaction') break
    if (entry.type !== 'message') continue
    const m = entry.message
    if (m.role === 'user') {
      messages.push({ role: 'user', content: convertUserContent(m.content) as any })
    } else if (m.role === 'bashExecution') {
      messages.push({ role: 'user', content: `Ran \`${m.command}\`\n\`\`\`\n${m.output ?? ''}\n\`\`\`` })
    } else if (m.role === 'toolResult') {
      const block = { type: 'tool_result', tool_use_id: m.toolCallId, content: convertUserContent(m.content), is_error: Boolean(m.isError) }
      const last = messages[messages.length - 1] as Json | undefined
      if (last && last.role === 'user' && Array.isArray(last.content) && last.content.every((b: Json) => b.type === 'tool_result')) {
        last.content.push(block)
      } else {
        messages.push({ role: 'user', content: [block] as any })
      }
    } else if (m.role === 'assistant') {
      const usage: PiUsage | undefined = m.usage
      const billed = usage ? usage.input + usage.cacheRead + usage.cacheWrite : 0
      const content = convertAssistantContent(m.content ?? [])
      if (billed > 0 && m.provider === 'anthropic') {
        if (lastBilled > 0 && billed < lastBilled * 0.5) break // an earlier compaction shrank the context
        requests.push({ messages: messages.slice(), billed, previousUsage, model: m.model })
        model = m.model
        lastBilled = billed
      }
      if (content.length === 0) continue // aborted before any output: never sent again
      messages.push({ role: 'assistant', content: content as any })
      previousUsage =
        usage && billed > 0
          ? { input_tokens: usage.input, output_tokens: usage.output, cache_read_input_tokens: usage.cacheRead, cache_creation_input_tokens: usage.cacheWrite }
          : null
    }
  }
  return { requests, model }
}
