// ES module entry: the same API as index.js (which holds the implementation).
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const api = require('./index.js')

export const {
  CONTEXT_TOKEN_LIMIT,
  COMPACT_THRESHOLD_RATIO,
  TAIL_RETENTION_RATIO,
  COMPACT_MAX_RETRIES,
  countTokens,
  shouldCompact,
  measureTokens,
  partitionMessages,
  generateSummary,
  assembleMessages,
  persistMessages,
  compactMessages,
  offloadToolResults,
  listArchives,
  restoreMessages,
  pruneArchives,
  checkMessages,
  getCurrentBatchIndices,
  isModified,
  getBatchIndex,
  createMarkMap,
  Compactor,
  isContextOverflow,
  renderReport,
  readAgentSession,
  parseAgentSession,
  createRecallTool,
} = api
export default api
