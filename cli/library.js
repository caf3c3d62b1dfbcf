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

/** A Compactor for these options (a TypeError from them is a usage error). */
async function compactorFor(options) {
  return call(() => new (lib().Compactor)(options))
}

module.exports = { lib, call, compactorFor }
