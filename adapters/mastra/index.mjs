// ES module entry of context-compact/mastra: the same API as mastra.js (which holds the implementation).
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const api = require('./index.js')

export const { ContextCompactProcessor } = api
export default api
