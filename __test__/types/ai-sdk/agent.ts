// Type-level test of context-compact/ai-sdk with ToolLoopAgent (AI SDK 6 and 7; compiled by
// tsconfig.v6/v7.json, see step.ts).

import { jsonSchema, stepCountIs, tool, ToolLoopAgent, type LanguageModel, type ModelMessage } from 'ai'
import { compactionStep, recallTool } from 'context-compact/ai-sdk'

declare const model: LanguageModel
declare const messages: ModelMessage[]

const archive = { outputDir: '/tmp/cc-ai-sdk-types', sessionId: 'agent' }
const tools = {
  shell: tool({
    description: 'Runs a command.',
    inputSchema: jsonSchema<{ command: string }>({ type: 'object', properties: { command: { type: 'string' } }, required: ['command'] }),
    execute: async ({ command }) => `ran ${command}`,
  }),
  recall: recallTool(archive),
}

export async function agent() {
  const step = compactionStep({ contextTokenLimit: 128_000, tools, ...archive })
  const coder = new ToolLoopAgent({ model, instructions: 'You are a coding assistant.', tools, stopWhen: stepCountIs(40), prepareStep: step })
  const result = await coder.generate({ messages })
  void result
}
