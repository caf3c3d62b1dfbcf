// The OpenAI Agents SDK's side of the adapter tests: real conversations (Anthropic Messages, as
// the real sessions in ../shared/data hold them) turned into the SDK's own items
// (AgentInputItem, as its sessions store them; the conversion is benchmark/adapters/agents-items.mjs,
// shared with the benchmark), a pairing checker written from the SDK's and the Responses API's
// rules (it knows nothing of the library), and a small file-backed session.

import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'

import type { AgentInputItem, RunContext, RunContextAwareSession } from '@openai/agents'

import { toAgentItems as convert } from '../../benchmark/adapters/agents-items.mjs'

type Json = Record<string, any>

/** Anthropic messages as the SDK's items (see benchmark/adapters/agents-items.mjs). */
export function toAgentItems(messages: Json[]): AgentInputItem[] {
  return convert(messages) as AgentInputItem[]
}

/** A real Claude Code conversation of ../shared/data/real as the SDK's items. */
export function realAgentItems(file: string): AgentInputItem[] {
  return toAgentItems(JSON.parse(readFileSync(file, 'utf8')))
}

const CALL_TYPES = new Set(['function_call', 'computer_call', 'shell_call', 'apply_patch_call'])
const RESULT_TYPES = new Set(['function_call_result', 'computer_call_result', 'shell_call_output', 'apply_patch_call_output'])

/**
 * What the Responses API refuses in a request's input, from its documented rules: an output
 * whose call is not before it ("No tool call found for function call output with call_id …"),
 * a call never answered ("No tool output found for function call …"), and a reasoning item not
 * followed by the item it led to ("Item … of type 'reasoning' was provided without its required
 * following item"). Returns one line per problem.
 */
export function pairingProblems(items: readonly Json[]): string[] {
  const problems: string[] = []
  const open = new Map<string, number>()
  items.forEach((item, i) => {
    if (CALL_TYPES.has(item.type)) open.set(item.callId, i)
    if (RESULT_TYPES.has(item.type)) {
      if (!open.has(item.callId)) problems.push(`item ${i}: ${item.type} ${item.callId} answers no earlier call`)
      open.delete(item.callId)
    }
    if (item.type === 'reasoning') {
      const next = items[i + 1]
      const follows = next && (CALL_TYPES.has(next.type) || next.type === 'reasoning' || (next.role === 'assistant' && (next.type ?? 'message') === 'message'))
      if (!follows) problems.push(`item ${i}: reasoning not followed by the call or message it led to`)
    }
  })
  for (const [id, i] of open) problems.push(`item ${i}: call ${id} has no output`)
  return problems
}

/**
 * A Session kept in a JSON Lines file, one item a line, read from the file on every call: a
 * store the adapter knows nothing of (it returns new objects on every read, as a database
 * would). It takes the run context, as a session that needs it (per-user storage) does, and
 * refuses a call whose arguments are not in their places.
 */
export class FileSession implements RunContextAwareSession {
  readonly acceptsRunContext = true as const
  /** The run contexts it was called with. */
  readonly contexts = new Set<RunContext>()

  constructor(
    readonly path: string,
    readonly id = 'file-session',
  ) {}

  #context(runContext: RunContext | undefined) {
    if (runContext === undefined) return
    if (typeof runContext !== 'object' || !('usage' in runContext)) throw new Error(`not a run context: ${JSON.stringify(runContext)}`)
    this.contexts.add(runContext)
  }

  async getSessionId(): Promise<string> {
    return this.id
  }

  async getItems(limit?: number, runContext?: RunContext): Promise<AgentInputItem[]> {
    if (limit !== undefined && typeof limit !== 'number') throw new Error(`limit must be a number, got ${typeof limit}`)
    this.#context(runContext)
    let text = ''
    try {
      text = readFileSync(this.path, 'utf8')
    } catch {
      return []
    }
    const items = text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as AgentInputItem)
    return limit === undefined ? items : items.slice(Math.max(0, items.length - limit))
  }

  async addItems(items: AgentInputItem[], runContext?: RunContext): Promise<void> {
    this.#context(runContext)
    appendFileSync(this.path, items.map((item) => `${JSON.stringify(item)}\n`).join(''))
  }

  async popItem(runContext?: RunContext): Promise<AgentInputItem | undefined> {
    this.#context(runContext)
    const items = await this.getItems()
    const last = items.pop()
    writeFileSync(this.path, items.map((item) => `${JSON.stringify(item)}\n`).join(''))
    return last
  }

  async clearSession(runContext?: RunContext): Promise<void> {
    this.#context(runContext)
    writeFileSync(this.path, '')
  }
}
