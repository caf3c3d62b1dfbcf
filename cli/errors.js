'use strict'

// How the CLI fails: a CliError carries its exit code (1 failure, 2 usage error) and becomes
// one line on stderr in the entry (cli/context-compact.js).

class CliError extends Error {
  constructor(message, exitCode = 1) {
    super(message)
    this.exitCode = exitCode
  }
}

const usageError = (message) => new CliError(message, 2)

function oneLine(text) {
  return String(text).replace(/\s*\n\s*/g, ' ').trim()
}

module.exports = { CliError, usageError, oneLine }
