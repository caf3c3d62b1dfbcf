'use strict'

// The Agents SDK's tracing, loaded on first use: null when @openai/agents (an optional peer) is absent.
// From @openai/agents-core, beside @openai/agents: loading @openai/agents itself (its CommonJS
// build, when the app imported the ES module) would install its default trace exporter again,
// over the trace processors the app set.

const { createRequire } = require('node:module')

const { compactionFacts } = require('../../lib/compaction/otel.js')
const { optionalPeer } = require('../kit.js')

let agentsTracing
function tracing() {
  if (agentsTracing === undefined) {
    const agents = optionalPeer(() => createRequire(require.resolve('@openai/agents'))('@openai/agents-core'))
    agentsTracing = agents !== null && typeof agents.createCustomSpan === 'function' && typeof agents.getCurrentTrace === 'function' ? agents : null
  }
  return agentsTracing
}

// Each compaction as a custom span `context_compact.compact` of the run's trace (the SDK's own
// tracing: the Traces dashboard, or your trace processors), under the span current when the
// runner called runCompaction; its data is what the compaction did. Outside a trace the
// compaction just runs.
async function inCustomSpan(items, compact) {
  const agents = tracing()
  if (agents === null || agents.getCurrentTrace() === null) return compact()
  const span = agents.createCustomSpan({ data: { name: 'context_compact.compact', data: {} } })
  span.start()
  try {
    const result = await compact()
    span.spanData.data = compactionFacts(items, result)
    if (!result.compacted && result.error) span.setError({ message: result.error.message, data: { code: result.error.code } })
    return result
  } catch (error) {
    span.setError({ message: error && error.message ? String(error.message) : String(error) })
    throw error
  } finally {
    span.end()
  }
}

module.exports = { inCustomSpan }
