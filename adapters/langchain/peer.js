'use strict'

// LangChain's modules, loaded on first use (the LangChain adapter is loaded only by users of
// LangChain, and LangChain is an optional peer dependency of the package).

const { createRequire } = require('node:module')

let modules = null

function langChain() {
  if (modules !== null) return modules
  let langchain
  let messages
  try {
    langchain = require('langchain')
    messages = require('@langchain/core/messages')
  } catch (error) {
    const missing = new Error(
      "context-compact/langchain needs LangChain.js v1 (the packages 'langchain' and '@langchain/core'): npm install langchain @langchain/core",
    )
    missing.code = 'ERR_CONTEXT_COMPACT_MISSING_PEER'
    missing.cause = error
    throw missing
  }
  // REMOVE_ALL_MESSAGES is LangGraph's, a dependency of `langchain` (not ours): read from there.
  let removeAll = '__remove_all__'
  try {
    removeAll = createRequire(require.resolve('langchain'))('@langchain/langgraph').REMOVE_ALL_MESSAGES ?? removeAll
  } catch {
    // The sentinel is a documented constant of LangGraph; its value is the fallback.
  }
  let convertToOpenAITool = null
  try {
    convertToOpenAITool = require('@langchain/core/utils/function_calling').convertToOpenAITool
  } catch {
    // Tools are then counted by name and description only.
  }
  let dispatchCustomEvent = null
  try {
    dispatchCustomEvent = require('@langchain/core/callbacks/dispatch').dispatchCustomEvent
  } catch {
    // An older @langchain/core: the compactions are then not sent as custom events.
  }
  modules = { langchain, messages, removeAll, convertToOpenAITool, dispatchCustomEvent }
  return modules
}

module.exports = { langChain }
