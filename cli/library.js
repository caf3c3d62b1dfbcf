'use strict'

// The CLI's access to the library (../index.js): loaded on first use, so `--help` and usage
// errors work even without the native addon, and its errors translated into exit codes.

const { CliError, oneLine } = require('./errors.js')

let library = null
function lib() {
  if (!library) {
    try {
      library = require('../index.js')
    } catch (error) {
      throw new CliError(`cannot load the native addon: ${oneLine(error.message)}`)
    }
  }
  return library
}

// Library errors: a TypeError from options is a usage error; from messages, invalid input.
async function call(run) {
  try {
    return await run()
  } catch (error) {
    if (error instanceof CliError) throw error
    if (error instanceof TypeError && error.code === 'ERR_CONTEXT_COMPACT_INVALID_ARGUMENT') {
      const message = oneLine(error.message)
      throw new CliError(message, /^messages/.test(message) ? 1 : 2)
    }
    throw new CliError(`${error.code ? error.code + ': ' : ''}${oneLine(error.message)}`)
  }
}

// The option table (lib/options/options.js, from the addon): the names, ranges and accepted names of
// the options, so that the flags check what the library checks. Loaded on first use too.
let optionsModule = null
function optionRow(name) {
  if (!optionsModule) {
    try {
      optionsModule = require('../lib/options/options.js')
    } catch (error) {
      throw new CliError(`cannot load the native addon: ${oneLine(error.message)}`)
    }
  }
  const row = optionsModule.OPTION_TABLE.find((r) => r.name === name)
  if (!row) throw new Error(`no option ${name}`)
  return row
}

/** A Compactor for these options (a TypeError from them is a usage error). */
async function compactorFor(options) {
  return call(() => new (lib().Compactor)(options))
}

module.exports = { lib, call, compactorFor, optionRow }
