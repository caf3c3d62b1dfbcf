/**
 * A LangChain.js agent (`createAgent` of the `langchain` package) whose conversation is compacted
 * by `contextCompactMiddleware`, in place of LangChain's `summarizationMiddleware`: the agent
 * reads one file per turn, the conversation outgrows a small window, and the middleware replaces
 * its middle with a summary each time it reaches the threshold, the originals archived. At the
 * end the archived originals are read back with `restoreMessages`.
 *
 *   npx tsx examples/langchain-middleware.ts
 *
 * Runs offline: the agent's model and the model that writes the summaries are LangChain's fake
 * chat model (`fakeModel`), scripted. With real models, only these two lines change, e.g.
 * `model: new ChatAnthropic({ model: 'claude-sonnet-4-5' })` for the agent and
 * `model: new ChatAnthropic({ model: 'claude-haiku-4-5' })` for the summaries.
 *
 * Environment:
 *   EXAMPLE_CONTEXT_LIMIT  the context window (default 6000, small so that compaction happens)
 *   EXAMPLE_OUTPUT_DIR     where the archives of compacted messages go (default ./.context-compact)
 */
import { createAgent, fakeModel, tool } from 'langchain'
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages'
import { MemorySaver } from '@langchain/langgraph'
import { restoreMessages, type CompactEvent } from 'context-compact'
import { contextCompactMiddleware, recallTool } from 'context-compact/langchain'

const FILES = Array.from({ length: 30 }, (_, i) => `src/module${i + 1}.ts`)
const FINAL = 'Every module validates its input; module 17 had the only off-by-one, now fixed.'
const outputDir = process.env.EXAMPLE_OUTPUT_DIR ?? './.context-compact'

// The agent's tool: a file's text (here made up, a few hundred tokens).
const readFile = tool(
  async ({ path }: { path: string }) =>
    Array.from({ length: 24 }, (_, line) => `export function ${path.replace(/\W/g, '_')}_${line}(input: string): number { return input.length * ${line} }`).join('\n'),
  {
    name: 'read_file',
    description: 'Reads a file of the repository.',
    schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
)

// The agent's model: reads one file per call, then answers. (A real chat model decides this.)
const agentModel = fakeModel()
FILES.forEach((path, i) =>
  agentModel.respond(new AIMessage({ content: `Reading ${path}.`, tool_calls: [{ name: 'read_file', args: { path }, id: `call_${i + 1}`, type: 'tool_call' }] })),
)
agentModel.respond(new AIMessage(FINAL))

// The model that writes the summaries: asked with the library's summary prompt.
const summaryModel = fakeModel()
for (let i = 1; i <= 10; i++) {
  summaryModel.respond((messages: BaseMessage[]) => {
    const prompt = String(messages[messages.length - 1]?.content ?? '')
    const read = new Set(prompt.match(/src\/module\d+\.ts/g) ?? [])
    return new AIMessage(`## Goal\nReview every module.\n\n## Progress\n${read.size} modules read so far (summary ${i}).`)
  })
}

let compactions = 0
const compaction = contextCompactMiddleware({
  model: summaryModel, // as summarizationMiddleware's `model`
  contextTokenLimit: Number(process.env.EXAMPLE_CONTEXT_LIMIT ?? 6000),
  outputDir,
  onEvent: (event: CompactEvent) => {
    if (event.type === 'completed') {
      compactions++
      console.log(`[compaction] ${event.originalTokens} → ${event.newTokens} tokens (${Math.round(event.savedRatio * 100)} % saved)`)
    }
  },
})

const agent = createAgent({
  model: agentModel,
  tools: [readFile, recallTool({ outputDir })], // recall: the agent may read the archived originals back
  systemPrompt: 'You are a code reviewer. Read the files one at a time.',
  middleware: [compaction], // first in the list
  checkpointer: new MemorySaver(),
})

const thread = 'review-1'
const question = new HumanMessage(`Review ${FILES.join(', ')} for off-by-one errors.`)
const state = await agent.invoke({ messages: [question] }, { configurable: { thread_id: thread }, recursionLimit: 100 })
const answer = state.messages[state.messages.length - 1]
console.log(`Final answer: ${String(answer?.content)}`)

// The state holds the compacted list; the archives give back every message of the run.
const restored = await restoreMessages(state.messages, { outputDir, sessionId: thread })
const identical = restored.length === 2 + 2 * FILES.length && restored[0]?.content === question.content && restored[restored.length - 1] === answer
console.log(
  `done: ${agentModel.callCount} model calls, ${compactions} compactions, ${summaryModel.callCount} summary calls; ` +
    `restored ${restored.length} messages, identical: ${identical}`,
)
await compaction.close()
