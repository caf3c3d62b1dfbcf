// What docs/langchain.md says about LangGraph's step budget, measured: the middleware's
// `afterModel` hook is a node of the agent's graph, so every model call costs one more graph step
// (a superstep): a run of n tool turns (then an answer) takes 3n + 3 steps with the middleware
// and 2n + 2 without, so LangGraph's default `recursionLimit` (25) stops a run at its 8th tool
// turn with the middleware, at its 12th without. Run with LangChain's own fake chat model, offline.
import { AIMessage } from '@langchain/core/messages'
import { createAgent, fakeModel, tool } from 'langchain'
import { rmSync } from 'node:fs'

import { afterAll, describe, expect, it } from 'vitest'

import { contextCompactMiddleware } from '../../adapters/langchain'
import { tempDir } from '../support/helpers'

const readFile = tool(async (input: { path: string }) => `contents of ${input.path}`, {
  name: 'read_file',
  description: 'Reads a file',
  schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
})

/** A model that calls read_file `turns` times, one call per reply, then answers. */
function model(turns: number) {
  const m = fakeModel()
  for (let i = 0; i < turns; i++) {
    m.respond(new AIMessage({ content: '', tool_calls: [{ name: 'read_file', args: { path: `f${i}.ts` }, id: `call_${i}`, type: 'tool_call' }] }))
  }
  m.respond(new AIMessage('done'))
  return m
}

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** Whether a run of `turns` tool turns completes under the default recursionLimit. */
async function completes(turns: number, withMiddleware: boolean, recursionLimit?: number): Promise<boolean> {
  const outputDir = tempDir('cc-lc-steps-')
  dirs.push(outputDir)
  const middleware = withMiddleware ? [contextCompactMiddleware({ summarizer: async () => 'summary', contextTokenLimit: 200_000, outputDir })] : []
  const agent = createAgent({ model: model(turns), tools: [readFile], middleware })
  try {
    const state = await agent.invoke({ messages: [{ role: 'user', content: 'Read the files.' }] }, recursionLimit ? { recursionLimit } : {})
    expect(state.messages[state.messages.length - 1].content).toBe('done')
    return true
  } catch (error) {
    expect((error as Error).name).toBe('GraphRecursionError')
    expect((error as Error).message).toMatch(new RegExp(`Recursion limit of ${recursionLimit ?? 25} reached`))
    return false
  }
}

/** The most tool turns a run completes with under the default recursionLimit. */
async function mostTurns(withMiddleware: boolean, recursionLimit?: number): Promise<number> {
  let n = 0
  while (await completes(n + 1, withMiddleware, recursionLimit)) n++
  return n
}

describe('LangGraph’s default recursionLimit (25) with and without the middleware', () => {
  it('without it, 11 tool turns complete and the 12th fails; with it, 7 complete and the 8th fails', async () => {
    expect({ without: await mostTurns(false), with: await mostTurns(true) }).toEqual({ without: 11, with: 7 })
  }, 60_000)

  it('a run of n tool turns takes 3n + 3 steps with it, 2n + 2 without: the recursionLimit the guide gives', async () => {
    for (const n of [8, 20]) {
      expect(await completes(n, true, 3 * n + 3)).toBe(true)
      expect(await completes(n, true, 3 * n + 2)).toBe(false)
      expect(await completes(n, false, 2 * n + 2)).toBe(true)
      expect(await completes(n, false, 2 * n + 1)).toBe(false)
    }
  }, 60_000)
})
