'use strict'

// The caller's options as the addon reads them: which options stay in JS (functions, objects
// the addon cannot read), the JSON text of the rest, and the few plain values JS reads itself.

const native = require('../addon/native.js')
const { describe, invalidArgument, callNative } = require('../addon/validate.js')
const { takeSnapshot, unchangedSince } = require('../addon/snapshot.js')

// Every option, declared once in the core (crates/core/src/options/table.rs) and handed over by
// the addon: `{ name, kind, min?, max?, values?, default, read }` (`read: 'js'` for the functions
// and objects the addon never reads).
const OPTION_TABLE = Object.freeze(JSON.parse(native.optionTableJson()).map((row) => Object.freeze(row)))
const OPTION_ROWS = new Map(OPTION_TABLE.map((row) => [row.name, row]))

// The names an option accepts (`encoding`, `provider`, `offload`, ...), from the table.
function optionValues(name) {
  return OPTION_ROWS.get(name)?.values ?? []
}

// Options that stay in JS (the table's `read: 'js'` rows: functions, objects the addon cannot
// read); everything else is passed on. `overflow` crosses as `true` alone (the refusal itself stays
// in JS). `archiveStoreId`, `summaryDeclined` and `learntModels` are set by optionsJson alone (a
// store registered for the call; a Compactor declining to pay for a summary, see compactor.js;
// what the store's record holds of every model, see learnt.js), never by a caller.
const JS_ONLY_OPTIONS = new Set([
  ...OPTION_TABLE.filter((row) => row.read === 'js').map((row) => row.name),
  'overflow', 'archiveStoreId', 'summaryDeclined', 'learntModels',
])

// A custom strategy (an object with a `compress` method, type seed) runs in JS.
function isCustomStrategy(strategy) {
  return strategy !== null && typeof strategy === 'object' && typeof strategy.compress === 'function'
}

// JSON has no NaN or Infinity (JSON.stringify writes null, which would read as "not given"):
// they cross as `{ [NON_FINITE_KEY]: 'NaN' }`, so that the addon's check of the option says what
// was given (crates/core/src/options/mod.rs).
const NON_FINITE_KEY = '__contextCompactNonFinite'

function withNonFinite(key, value) {
  return typeof value === 'number' && !Number.isFinite(value) ? { [NON_FINITE_KEY]: String(value) } : value
}

// `archiveStoreId`: the id of the caller's `archiveStore` registered for this call (see
// withArchiveStore in store.js), which the addon uses instead of `outputDir`. `declined`: the
// `{ code, message }` of a Compactor that does not pay for a summary this call. `learntModels`:
// what the store's record holds of every model (`{ [model]: { window, factor } }`).
function optionsJson(options, archiveStoreId = null, declined = null, learntModels = null) {
  const plain = {}
  for (const [key, value] of Object.entries(options)) {
    if (key === 'strategy' && isCustomStrategy(value)) continue
    if (!JS_ONLY_OPTIONS.has(key) && value !== undefined) plain[key] = value
  }
  if (archiveStoreId != null) plain.archiveStoreId = archiveStoreId
  if (declined != null) plain.summaryDeclined = declined
  if (learntModels != null && Object.keys(learntModels).length > 0) plain.learntModels = learntModels
  // The refusal itself stays in JS (overflow.js reads it); the addon only needs to know there was one.
  if (options.overflow !== undefined && options.overflow !== null) plain.overflow = true
  try {
    return JSON.stringify(plain, withNonFinite)
  } catch (error) {
    throw invalidArgument(`options cannot be serialized as JSON: ${error.message}`)
  }
}

// A Compactor's options, held in the addon (src/options.rs): read and checked there once, with
// `system` and `tools` counted once, so that a step hands over a handle's `id` and only what the
// call changes (changesJson), not its options as JSON every time.
//
// What "changed" means. A Compactor's options are its own copy, fixed when it is made; a call's
// overrides change that call alone. What can still change is an object the caller gave as an
// option (`system`, `tools`, `agentRequest`, ...) and edits in place: each use compares those
// with their snapshot (snapshot.js: a walk over their keys, nothing serialised), and the
// options are read again, and `system` and `tools` counted again, only when one of them
// changed. The overrides that change what is counted beside the messages (STICKY: an adapter
// passes the step's `system` and `tools` at every call) are held the same way, in a second
// reading kept while the next call's are the same (or equal: compared with its snapshot).
const STICKY = ['system', 'tools', 'agentRequest', 'encoding']

class HeldOptions {
  #options
  // `{ keys, handle, tape }`: a reading by the addon, the options it watches (in order), and
  // their snapshot. `#plain`: the Compactor's options; `#with`: with the last STICKY overrides.
  #plain
  #with = null

  constructor(options) {
    this.#options = options
    this.#plain = this.#reading(null, options, null)
  }

  // The options of a reading that can change while it is held: those whose value is an object
  // (edited in place), and the STICKY overrides it was made with.
  #watched(options, sticky) {
    return Object.keys(options).filter((key) => {
      if (sticky !== null && Object.hasOwn(sticky, key)) return true
      const value = options[key]
      return !JS_ONLY_OPTIONS.has(key) && value !== null && typeof value === 'object' && !(key === 'strategy' && isCustomStrategy(value))
    })
  }

  // `last` when it still reads `options`, else a new reading.
  #reading(last, options, sticky) {
    const keys = this.#watched(options, sticky)
    const values = keys.map((key) => options[key])
    const same =
      last !== null &&
      last.keys.length === keys.length &&
      last.keys.every((key, i) => key === keys[i]) &&
      (keys.length === 0 || (last.tape !== null && unchangedSince(values, 0, last.tape)))
    if (same) return last
    const json = optionsJson(options)
    const handle = callNative(() => new native.HeldOptions(json))
    return { keys, handle, tape: keys.length > 0 ? takeSnapshot(values, 0) : null }
  }

  // The addon's handle for a call with `changes` (its overrides; its `id` is what the per-call
  // functions take), and the changes left to hand over with it. A call keeps the handle until
  // the addon is done with it.
  current(changes) {
    let sticky = null
    for (const key of STICKY) if (Object.hasOwn(changes, key)) (sticky ??= {})[key] = changes[key]
    if (sticky === null) {
      this.#plain = this.#reading(this.#plain, this.#options, null)
      return { handle: this.#plain.handle, rest: changes }
    }
    const rest = { ...changes }
    for (const key of STICKY) delete rest[key]
    this.#with = this.#reading(this.#with, { ...this.#options, ...sticky }, sticky)
    return { handle: this.#with.handle, rest }
  }
}

// What one call changes of a Compactor's held options, as JSON (null: nothing): `changes` are
// options as a caller passes them (`overrides`), `own` what the Compactor sets for the call
// itself (archiveStoreId, summaryDeclined, learntModels: see optionsJson). An option given as
// undefined unsets it, as `{ ...options, ...overrides }` does: it crosses as null.
function changesJson(changes, own = {}) {
  let plain = null
  for (const [key, value] of Object.entries(changes)) {
    if (key === 'overflow') {
      // The refusal itself stays in JS (as in optionsJson).
      ;(plain ??= {}).overflow = value === undefined || value === null ? null : true
    } else if (key === 'strategy' && isCustomStrategy(value)) {
      ;(plain ??= {}).strategy = null
    } else if (!JS_ONLY_OPTIONS.has(key)) {
      ;(plain ??= {})[key] = value === undefined ? null : value
    }
  }
  for (const [key, value] of Object.entries(own)) {
    if (value !== undefined && value !== null) (plain ??= {})[key] = value
  }
  if (plain === null) return null
  try {
    return JSON.stringify(plain, withNonFinite)
  } catch (error) {
    throw invalidArgument(`options cannot be serialized as JSON: ${error.message}`)
  }
}

// Every option of CompactOptions and of a Compactor (index.d.ts), `strict` among them. One
// options object may be passed to several functions, so each accepts them all.
const OPTION_NAMES = Object.freeze(OPTION_TABLE.map((row) => row.name))
const KNOWN_OPTIONS = new Set(OPTION_NAMES)

// The edit distance of two names (closestOption compares them in lower case: a misspelled option
// is usually a letter or a word away from the real one).
const { editDistance: distance } = require('./suggest.js')

// Whether the letters of `short` appear in `long` in order (`contextlimit` in `contexttokenlimit`).
function isSubsequence(short, long) {
  let at = 0
  for (const c of long) if (c === short[at]) at++
  return at === short.length
}

// The known option a misspelled name most likely means: the nearest by edit distance, or one
// whose name holds its letters in order, or whose letters it holds (a word left out or added:
// `contextLimit` → `contextTokenLimit`); null when none is close.
function closestOption(name, names = OPTION_NAMES) {
  let best = null
  let bestScore = Infinity
  const lower = name.toLowerCase()
  for (const known of names) {
    const k = known.toLowerCase()
    let score = distance(lower, k)
    if (Math.min(lower.length, k.length) >= 5 && (isSubsequence(lower, k) || isSubsequence(k, lower))) score = Math.min(score, 2)
    if (score < bestScore) {
      best = known
      bestScore = score
    }
  }
  return best !== null && bestScore <= Math.max(3, Math.floor(Math.max(name.length, best.length) / 3)) ? best : null
}

// The names in `opts` that are no option: one warning each, naming the closest known option.
// With `strict: true`, a TypeError instead. `names` are the options of the function called.
function unknownOptionWarnings(opts, name = 'options', names = OPTION_NAMES) {
  const strict = opts.strict
  if (strict !== undefined && strict !== null && typeof strict !== 'boolean') {
    throw invalidArgument(`${name}.strict must be a boolean, got ${describe(strict)}`)
  }
  const known = names === OPTION_NAMES ? KNOWN_OPTIONS : new Set([...names, 'strict'])
  const warnings = []
  for (const key of Object.keys(opts)) {
    if (known.has(key) || opts[key] === undefined) continue
    const near = closestOption(key, names)
    const hint = near ? ` (did you mean "${near}"?)` : ''
    if (strict === true) throw invalidArgument(`${name}.${key} is not an option${hint}`)
    warnings.push(`unknown option "${key}" was ignored${hint}`)
  }
  return warnings
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
  NON_FINITE_KEY,
  OPTION_NAMES,
  OPTION_TABLE,
  optionValues,
  isCustomStrategy,
  optionsJson,
  HeldOptions,
  changesJson,
  withNonFinite,
  closestOption,
  unknownOptionWarnings,
  formatOf,
  encodingOf,
  needsToolBytes,
}
