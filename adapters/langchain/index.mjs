// ES module entry of context-compact/langchain: the same API as langchain.js (which holds the
// implementation).
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const api = require('./index.js')

export const { contextCompactMiddleware, recallTool } = api
export default api
