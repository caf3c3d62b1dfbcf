'use strict'

// Argument checks and error translation, shared by every entry point: a caller's mistake is a
// TypeError with code ERR_CONTEXT_COMPACT_INVALID_ARGUMENT naming the argument (and, for a
// message, its index and field), whether JS or the addon found it.

const native = require('./native.js')

function describe(value) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

// A value as an error shows it, the way the addon's checks do: `number 1.5`, `NaN`,
// `Infinity`, `string "big"`, `object`.
function shown(value) {
  if (typeof value === 'number') return Number.isFinite(value) ? `number ${value}` : String(value)
  if (typeof value === 'string') return value.length <= 40 ? `string ${JSON.stringify(value)}` : 'string'
  return describe(value)
}

// An integer option within [min, max]: anything else (another type, NaN, Infinity, a fraction, a
// value out of range) is one TypeError naming the option and its range. `undefined`/`null`:
// `fallback`.
function checkInteger(value, name, min, max, fallback) {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidArgument(`${name}: expected an integer from ${min} to ${max}, got ${shown(value)}`)
  }
  return value
}

// A ratio option: a number greater than 0 and at most 1.
function checkRatio(value, name, fallback) {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'number' || !(value > 0 && value <= 1)) {
    throw invalidArgument(`${name}: expected a number greater than 0 and at most 1, got ${shown(value)}`)
  }
  return value
}

function invalidArgument(message) {
  const error = new TypeError(message)
  error.code = 'ERR_CONTEXT_COMPACT_INVALID_ARGUMENT'
  return error
}

// Native InvalidArg errors are the caller's mistakes: rethrow them as TypeError.
function translateError(error, indexMap) {
  if (error && error.code === 'InvalidArg') {
    let message = error.message
    if (indexMap) {
      message = message.replace(/^messages\[(\d+)\]/, (_, i) => `messages[${indexMap[Number(i)]}]`)
    }
    return invalidArgument(message)
  }
  return error
}

// A synchronous addon call whose errors are translated; `indexMap` maps the index of each message
// passed to its index in the caller's list, when only some of them were passed.
function callNative(fn, indexMap) {
  try {
    return fn()
  } catch (error) {
    throw translateError(error, indexMap)
  }
}

// Messages cross into the addon as the objects themselves: the addon reads them with
// JSON.stringify's rules (crates/js-values), so no JSON text of the conversation is built on
// either side. Only the array itself is checked here, for a clear error.
function checkedMessages(messages, name = 'messages') {
  if (!Array.isArray(messages)) {
    throw invalidArgument(`${name} must be an array of message objects, got ${describe(messages)}`)
  }
  return messages
}

function checkOptions(options, name = 'options') {
  if (options === undefined || options === null) return {}
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw invalidArgument(`${name} must be an object, got ${describe(options)}`)
  }
  return options
}

function checkFunction(options, key) {
  const value = options[key]
  if (value !== undefined && value !== null && typeof value !== 'function') {
    throw invalidArgument(`options.${key} must be a function, got ${describe(value)}`)
  }
  return value ?? undefined
}

function checkSignal(options) {
  const signal = options.signal
  if (signal === undefined || signal === null) return undefined
  if (typeof signal !== 'object' || typeof signal.aborted !== 'boolean' || typeof signal.addEventListener !== 'function') {
    throw invalidArgument('options.signal must be an AbortSignal')
  }
  return signal
}

function checkOutputDir(outputDir, name = 'outputDir') {
  if (typeof outputDir !== 'string' || outputDir === '') {
    throw invalidArgument(`${name} must be a non-empty string, got ${describe(outputDir)}`)
  }
  return outputDir
}

function checkSessionId(sessionId, name = 'sessionId') {
  if (typeof sessionId !== 'string') throw invalidArgument(`${name} must be a string, got ${describe(sessionId)}`)
  callNative(() => native.validateSessionId(sessionId))
  return sessionId
}

// The same for an addon call that returns a Promise.
async function nativeAsync(run) {
  try {
    return await run()
  } catch (error) {
    throw translateError(error)
  }
}

module.exports = {
  describe,
  shown,
  checkInteger,
  checkRatio,
  invalidArgument,
  translateError,
  callNative,
  nativeAsync,
  checkedMessages,
  checkOptions,
  checkFunction,
  checkSignal,
  checkOutputDir,
  checkSessionId,
}
