'use strict'

// The caller's options as the addon reads them: which options stay in JS (functions, objects
// the addon cannot read), the JSON text of the rest, and the few plain values JS reads itself.

const { invalidArgument } = require('./validate.js')

// Options that are functions or objects the addon cannot read; everything else is passed on.
// `archiveStoreId` is set by optionsJson alone (it names a store registered for the call).
const JS_ONLY_OPTIONS = new Set(['summarizer', 'signal', 'onEvent', 'onBeforeCompact', 'onLog', 'logger', 'logLevel', 'overflow', 'archiveStore', 'archiveStoreId'])

// A custom strategy (an object with a `compress` method, type seed) runs in JS.
function isCustomStrategy(strategy) {
  return strategy !== null && typeof strategy === 'object' && typeof strategy.compress === 'function'
}

// `archiveStoreId`: the id of the caller's `archiveStore` registered for this call (see
// withArchiveStore in store.js), which the addon uses instead of `outputDir`.
function optionsJson(options, archiveStoreId = null) {
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
