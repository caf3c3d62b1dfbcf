'use strict'

// The caller's options as the addon reads them: which options stay in JS (functions, objects
// the addon cannot read), the JSON text of the rest, and the few plain values JS reads itself.

const { invalidArgument } = require('./validate.js')

// Options that are functions or objects the addon cannot read; everything else is passed on.
// `archiveStoreId` is set by optionsJson alone (it names a store registered for the call).
const JS_ONLY_OPTIONS = new Set(['summarizer', 'signal', 'onEvent', 'onBeforeCompact', 'onLog', 'logger', 'overflow', 'archiveStore', 'archiveStoreId'])

// A custom strategy (an object with a `compress` method, type seed) runs in JS.
function isCustomStrategy(strategy) {
  return strategy !== null && typeof strategy === 'object' && typeof strategy.compress === 'function'
}

// Budgets of the sections carried after a summary: a number here crosses as JSON, where NaN and
// Infinity would become null (the default) without a word, so they are refused here; the addon
// checks the rest (an integer, its range, the types).
const SECTION_BUDGETS = ['planMaxTokens', 'latestFailureMaxTokens']

function checkSectionOptions(options) {
  for (const name of SECTION_BUDGETS) {
    const value = options[name]
    if (typeof value === 'number' && !Number.isFinite(value)) {
      throw invalidArgument(`options.${name}: expected an integer from 0 to 10000000, or a boolean, got number ${value}`)
    }
  }
  const tools = options.planTools
  if (tools !== undefined && tools !== null && (!Array.isArray(tools) || tools.some((name) => typeof name !== 'string' || name.trim() === ''))) {
    throw invalidArgument('options.planTools: expected an array of tool names (non-empty strings)')
  }
}

// `archiveStoreId`: the id of the caller's `archiveStore` registered for this call (see
// withArchiveStore in store.js), which the addon uses instead of `outputDir`.
function optionsJson(options, archiveStoreId = null) {
  checkSectionOptions(options)
  const plain = {}
  for (const [key, value] of Object.entries(options)) {
    if (key === 'strategy' && isCustomStrategy(value)) continue
    if (!JS_ONLY_OPTIONS.has(key) && value !== undefined) plain[key] = value
  }
  if (archiveStoreId != null) plain.archiveStoreId = archiveStoreId
  try {
    return JSON.stringify(plain)
  } catch (error) {
    throw invalidArgument(`options cannot be serialized as JSON: ${error.message}`)
  }
}

// `format` (SPEC "Message formats"): which API's messages the list holds; detected when absent.
function formatOf(options) {
  return options.format === undefined || options.format === null ? undefined : String(options.format)
}

function encodingOf(options) {
  return options.encoding === undefined || options.encoding === null ? undefined : String(options.encoding)
}

// The tool output of a list is read only when `maxToolOutputBytes` may fire: it costs a pass
// over every message.
function needsToolBytes(opts) {
  return opts.maxToolOutputBytes !== undefined && opts.maxToolOutputBytes !== null
}

module.exports = {
  isCustomStrategy,
  optionsJson,
  formatOf,
  encodingOf,
  needsToolBytes,
}
