import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { getEncoding } from 'js-tiktoken'

import type { Message } from '../../index'

/** An independent tokenizer (js-tiktoken), special tokens treated as ordinary text. */
const o200k = getEncoding('o200k_base')
const cl100k = getEncoding('cl100k_base')
export function referenceCount(text: string, encoding: 'o200k_base' | 'cl100k_base' = 'o200k_base'): number {
  return (encoding === 'o200k_base' ? o200k : cl100k).encode(text, [], []).length
}

export function tempDir(prefix = 'cc-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/** `k` tokens of o200k text: "hello" then " hello" × (k − 1). */
export function textOfTokens(k: number): string {
  return k === 0 ? '' : 'hello' + ' hello'.repeat(k - 1)
}

type AnyMessage = Record<string, any>

/**
 * The pairing rules both APIs enforce, as the errors users search for:
 * - Anthropic: every tool_result must answer a tool_use of the immediately preceding assistant
 *   message, and every tool_use must be answered in the next message.
 * - OpenAI: every role:'tool' message must answer a tool_call of the preceding assistant message
 *   (other tool messages may sit between), and every tool_call must be answered.
 * Returns the problems found (empty when valid).
 */
export function pairingProblems(messages: Message[]): string[] {
  const problems: string[] = []
  const list = messages as AnyMessage[]
  for (let i = 0; i < list.length; i++) {
    const m = list[i]
    const blocks = Array.isArray(m.content) ? m.content : []
    const results = blocks.filter((b: AnyMessage) => b.type === 'tool_result')
    if (results.length > 0) {
      const prev = list[i - 1]
      const uses = new Set(
        (prev && prev.role === 'assistant' && Array.isArray(prev.content) ? prev.content : [])
          .filter((b: AnyMessage) => b.type === 'tool_use')
          .map((b: AnyMessage) => b.id),
      )
      for (const r of results) {
        if (!uses.has(r.tool_use_id)) problems.push(`messages[${i}]: unexpected tool_use_id ${r.tool_use_id} found in tool_result blocks`)
      }
    }
    const uses = m.role === 'assistant' ? blocks.filter((b: AnyMessage) => b.type === 'tool_use') : []
    if (uses.length > 0) {
      const next = list[i + 1]
      const answered = new Set(
        (next && Array.isArray(next.content) ? next.content : [])
          .filter((b: AnyMessage) => b.type === 'tool_result')
          .map((b: AnyMessage) => b.tool_use_id),
      )
      for (const u of uses) {
        if (!answered.has(u.id)) problems.push(`messages[${i}]: tool_use ids were found without tool_result blocks immediately after: ${u.id}`)
      }
    }
    if (m.role === 'tool') {
      let j = i - 1
      while (j >= 0 && list[j].role === 'tool') j--
      const calls = new Set(((list[j] && list[j].tool_calls) || []).map((c: AnyMessage) => c.id))
      if (!calls.has(m.tool_call_id)) problems.push(`messages[${i}]: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'`)
    }
    if (m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
      const answered = new Set<string>()
      for (let j = i + 1; j < list.length && list[j].role === 'tool'; j++) answered.add(list[j].tool_call_id)
      for (const c of m.tool_calls) {
        if (!answered.has(c.id)) problems.push(`messages[${i}]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id' (${c.id})`)
      }
    }
  }
  return problems
}

/**
 * Turns whose assistant messages hold thinking, a turn that holds only thinking, and a giant tool
 * result at the end: compacted with `thinking: 'strip'` under a small window, a compaction both
 * removes kept thinking and shortens the giant result (offload).
 */
export function thinkingSession(tag: string, turns = 8, giantLines = 600): Message[] {
  const m: any[] = [{ role: 'system', content: 'You are a coding agent.' }]
  for (let t = 0; t < turns; t++) {
    m.push({ role: 'user', content: `${tag} step ${t}: ${'please go on '.repeat(20)}`, z: t })
    m.push({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: `I should run step ${t}.`, signature: `EqQB${tag}sig${t}==` },
        { type: 'redacted_thinking', data: `Emw${tag}${t}+/==` },
        { type: 'text', text: `Running step ${t} 🦀.` },
        { type: 'tool_use', id: `${tag}t${t}`, name: 'bash', input: { command: `make step${t}` } },
      ],
    })
    m.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `${tag}t${t}`, content: 'ok '.repeat(60) }] })
  }
  m.push({ role: 'assistant', content: [{ type: 'thinking', thinking: 'only thinking here', signature: `E${tag}only==` }] })
  m.push({ role: 'user', content: `${tag} now build` })
  m.push({
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 'Build it.', signature: `E${tag}build==` },
      { type: 'tool_use', id: `${tag}giant`, name: 'bash', input: { command: 'cargo build -vv' } },
    ],
  })
  const log = Array.from({ length: giantLines }, (_, i) => `${tag} ${String(i).padStart(5, '0')} compiling crate ${i}`).join('\n')
  m.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `${tag}giant`, content: log }] })
  return m
}

/** Options under which a compaction of {@link thinkingSession} strips thinking and offloads. */
export const THINKING_WINDOW = { contextTokenLimit: 3000, tailRetentionRatio: 0.3, force: true, thinking: 'strip' as const, provider: 'extractive' as const }

/**
 * `warnings` without the one that says the summary's section of the user's messages could not
 * hold them all: the small windows of the tests leave that section a few tokens.
 */
export function otherWarnings(warnings: string[]): string[] {
  return warnings.filter((w) => !w.startsWith("the summary's section of the user's messages"))
}
