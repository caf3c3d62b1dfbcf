// A real Claude Code session (../shared/data/real, Anthropic Messages form) as the Vercel AI SDK
// sees it: the first part as `ModelMessage[]` (the agent's initial history), and the rest as a
// script an AI SDK mock model replays one step at a time (the assistant's text and tool calls),
// with the recorded tool results for the tools' `execute` to give back. Written from the two
// APIs' documented shapes, independently of the library under test.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

type Json = Record<string, any>

export const REAL = join(__dirname, '..', '..', '..', 'shared', 'data', 'real')

export interface ScriptStep {
  text: string
  calls: Array<{ toolCallId: string; toolName: string; input: Record<string, unknown> }>
}

export interface ReplaySession {
  /** The initial history, `ModelMessage[]` (user, assistant and tool messages). */
  history: Json[]
  /** The later assistant turns that call tools, in order. */
  script: ScriptStep[]
  /** The recorded result of every tool call (text, and whether it was an error). */
  results: Map<string, { text: string; isError: boolean }>
  /** Every tool name the session uses. */
  toolNames: string[]
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .filter((b) => b && b.type === 'text')
    .map((b) => b.text)
    .join('\n')
}

/** One Anthropic message as AI SDK ModelMessages (a user message may become a tool message and a user message). */
function toModelMessages(m: Json, names: Map<string, string>): Json[] {
  if (m.role === 'assistant') {
    if (typeof m.content === 'string') return [{ role: 'assistant', content: m.content }]
    const parts: Json[] = []
    for (const b of m.content) {
      if (b.type === 'text') parts.push({ type: 'text', text: b.text })
      else if (b.type === 'thinking') parts.push({ type: 'reasoning', text: b.thinking, providerOptions: { anthropic: { signature: b.signature } } })
      else if (b.type === 'tool_use') parts.push({ type: 'tool-call', toolCallId: b.id, toolName: b.name, input: b.input })
    }
    return [{ role: 'assistant', content: parts }]
  }
  if (typeof m.content === 'string') return [{ role: 'user', content: m.content }]
  const results: Json[] = []
  const texts: Json[] = []
  for (const b of m.content) {
    if (b.type === 'tool_result') {
      const value = textOf(b.content)
      results.push({
        type: 'tool-result',
        toolCallId: b.tool_use_id,
        toolName: names.get(b.tool_use_id) ?? 'unknown',
        output: b.is_error ? { type: 'error-text', value } : { type: 'text', value },
      })
    } else if (b.type === 'text') texts.push({ type: 'text', text: b.text })
  }
  const out: Json[] = []
  if (results.length > 0) out.push({ role: 'tool', content: results })
  if (texts.length > 0) out.push({ role: 'user', content: texts })
  return out
}

/**
 * Loads `file` and splits it after message `split` (which must follow a tool result or a user
 * message): the history before, the script after.
 */
export function loadReplay(file: string, split: number): ReplaySession {
  const list: Json[] = JSON.parse(readFileSync(join(REAL, file), 'utf8'))
  const names = new Map<string, string>()
  const results = new Map<string, { text: string; isError: boolean }>()
  const toolNames = new Set<string>()
  for (const m of list) {
    if (!Array.isArray(m.content)) continue
    for (const b of m.content) {
      if (b.type === 'tool_use') {
        names.set(b.id, b.name)
        toolNames.add(b.name)
      }
      if (b.type === 'tool_result') results.set(b.tool_use_id, { text: textOf(b.content), isError: b.is_error === true })
    }
  }
  if (list[split - 1].role !== 'user') throw new Error(`message ${split - 1} of ${file} is not a user message: cannot start the loop after it`)
  const history = list.slice(0, split).flatMap((m) => toModelMessages(m, names))
  const script: ScriptStep[] = []
  let pendingText = ''
  for (const m of list.slice(split)) {
    if (m.role !== 'assistant' || typeof m.content === 'string') continue
    const text = [pendingText, textOf(m.content)].filter(Boolean).join('\n')
    const calls = m.content
      .filter((b: Json) => b.type === 'tool_use' && results.has(b.id))
      .map((b: Json) => ({ toolCallId: b.id, toolName: b.name, input: b.input }))
    // A turn without tool calls would end the SDK's loop: its text goes with the next turn.
    if (calls.length === 0) {
      pendingText = text
      continue
    }
    pendingText = ''
    script.push({ text, calls })
  }
  return { history, script, results, toolNames: [...toolNames].sort() }
}
