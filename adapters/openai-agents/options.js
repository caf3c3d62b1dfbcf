'use strict'

// The checks of a CompactingSession's arguments: the session it wraps, and its options.

const { isAbortSignal } = require('../kit.js')

// The format the library reads the SDK's items in.
const FORMAT = 'openai-responses'
const SESSION_METHODS = ['getSessionId', 'getItems', 'addItems', 'popItem', 'clearSession']
// Options that say something about one call, not about the session.
const PER_CALL_OPTIONS = {
  usage: 'the session reads the usage of each run itself (see runUsage)',
  overflow: 'pass the overflow error to compact({ overflow }) instead',
  force: 'call compact({ force: true }) to compact now',
}

function describe(value) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value
}

function invalid(message) {
  return new TypeError(message)
}

// `Own`: the CompactingSession class (a CompactingSession is not wrapped in another).
function checkSession(session, Own) {
  if (session === null || typeof session !== 'object') {
    throw invalid(`session must be an OpenAI Agents SDK Session (an object with ${SESSION_METHODS.join(', ')}), got ${describe(session)}`)
  }
  if (session instanceof Own) {
    throw invalid('session is already a CompactingSession: wrap the session it wraps instead')
  }
  const missing = SESSION_METHODS.filter((name) => typeof session[name] !== 'function')
  if (missing.length > 0) {
    throw invalid(`session must be an OpenAI Agents SDK Session: it has no ${missing.join(', ')} method${missing.length > 1 ? 's' : ''}`)
  }
  return session
}

function checkSessionOptions(options) {
  if (options === undefined || options === null) return {}
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw invalid(`options must be an object, got ${describe(options)}`)
  }
  const opts = { ...options }
  if (opts.format !== undefined && opts.format !== null && opts.format !== FORMAT && opts.format !== 'auto') {
    throw invalid(`options.format must be left out: a CompactingSession's items are the Agents SDK's (read as '${FORMAT}'), got ${JSON.stringify(opts.format)}`)
  }
  for (const [name, why] of Object.entries(PER_CALL_OPTIONS)) {
    if (opts[name] !== undefined && opts[name] !== null) throw invalid(`options.${name} is not a session option: ${why}`)
  }
  if (opts.runUsage !== undefined && typeof opts.runUsage !== 'boolean') {
    throw invalid(`options.runUsage must be a boolean, got ${describe(opts.runUsage)}`)
  }
  if (opts.signal !== undefined && opts.signal !== null && !isAbortSignal(opts.signal)) {
    throw invalid(`options.signal must be an AbortSignal, got ${describe(opts.signal)}`)
  }
  return opts
}

module.exports = { FORMAT, PER_CALL_OPTIONS, describe, invalid, checkSession, checkSessionOptions }
