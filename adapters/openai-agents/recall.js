'use strict'

// The recall tool (createRecallTool) as an Agents SDK function tool, made with the SDK's `tool()`.

const { createRecallTool } = require('../../index.js')
const { requirePeer, messageOf } = require('../kit.js')
const { describe, invalid } = require('./options.js')

// The Agents SDK's `tool()`, loaded when a recall tool is made: nothing of the SDK is loaded
// for the rest of this module.
function sdkTool(recall, run) {
  const agents = requirePeer(() => require('@openai/agents'), 'context-compact/openai-agents needs the OpenAI Agents SDK for recallTool(): npm install @openai/agents')
  return agents.tool({
    name: recall.name,
    description: recall.description,
    parameters: recall.inputSchema,
    // Every property is optional, which strict mode does not allow.
    strict: false,
    execute: (input) => run(input),
  })
}

/**
 * The recall tool (see createRecallTool) as an Agents SDK function tool: the agent reads back
 * the archived originals of what was compacted. Give it the session's outputDir and sessionId
 * (or use `session.recallTool()`).
 */
function recallTool(options) {
  const recall = createRecallTool(options)
  return sdkTool(recall, (input) => recall.run(input))
}

/**
 * A CompactingSession's recall tool (`session.recallTool(options)`): over its archives
 * (`sessionOptions`: the session's options), in the session the Compactor names once it is ready
 * (`ready()`), when neither gives a sessionId.
 */
function sessionRecallTool(options, sessionOptions, ready) {
  const opts = options ?? {}
  if (typeof opts !== 'object' || Array.isArray(opts)) throw invalid(`options must be an object, got ${describe(options)}`)
  const base = {
    outputDir: sessionOptions.outputDir,
    archiveStore: sessionOptions.archiveStore,
    storeOptions: sessionOptions.storeOptions,
    ...opts,
  }
  if (base.sessionId == null && sessionOptions.sessionId != null) base.sessionId = sessionOptions.sessionId
  if (base.sessionId != null) return recallTool(base)
  // The archive's session id is the wrapped session's, known once it is asked.
  const probe = createRecallTool({ ...base, sessionId: 'default' })
  let tool = null
  return sdkTool(probe, async (input) => {
    if (tool === null) {
      try {
        const compactor = await ready()
        tool = createRecallTool({ ...base, sessionId: compactor.options.sessionId })
      } catch (error) {
        return `The recall tool could not read the archives: ${messageOf(error)}`
      }
    }
    return tool.run(input)
  })
}

module.exports = { recallTool, sessionRecallTool }
