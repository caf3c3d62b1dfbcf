// ES module entry of context-compact/ai-sdk: the same API as ai-sdk.js (which holds the implementation).
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const api = require('./index.js')

export const { compactionStep, recallTool } = api
export default api
