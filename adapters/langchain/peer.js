'use strict'

// LangChain's modules, loaded on first use (the LangChain adapter is loaded only by users of
// LangChain, and LangChain is an optional peer dependency of the package).

const { createRequire } = require('node:module')

const { requirePeer, optionalPeer } = require('../kit.js')

let modules = null

function langChain() {
  if (modules !== null) return modules
  const { langchain, messages } = requirePeer(
    () => ({ langchain: require('langchain'), messages: require('@langchain/core/messages') }),
    "context-compact/langchain needs LangChain.js v1 (the packages 'langchain' and '@langchain/core'): npm install langchain @langchain/core",
  )
  // REMOVE_ALL_MESSAGES is LangGraph's, a dependency of `langchain` (not ours): read from there;
  // the sentinel is a documented constant of LangGraph, its value the fallback.
  const removeAll = optionalPeer(() => createRequire(require.resolve('langchain'))('@langchain/langgraph').REMOVE_ALL_MESSAGES) ?? '__remove_all__'
  // Without it, tools are counted by name and description only.
  const convertToOpenAITool = optionalPeer(() => require('@langchain/core/utils/function_calling').convertToOpenAITool)
  // An older @langchain/core: the compactions are then not sent as custom events.
  const dispatchCustomEvent = optionalPeer(() => require('@langchain/core/callbacks/dispatch').dispatchCustomEvent)
  modules = { langchain, messages, removeAll, convertToOpenAITool, dispatchCustomEvent }
  return modules
}

module.exports = { langChain }
