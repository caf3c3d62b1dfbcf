// ES module entry of context-compact/openai-agents: the same API as openai-agents.js.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const api = require('./index.js')

export const { CompactingSession, recallTool } = api
