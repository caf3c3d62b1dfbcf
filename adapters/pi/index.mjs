// ES module entry of context-compact/pi: the same API as pi.js (which holds the implementation).
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const api = require('./index.js')

export const { compactionRequest, recallTool } = api
export default api
