#!/usr/bin/env node
'use strict'

// The `context-compact` command line: count, check, compact, history, restore, prune, report,
// demo.
// Node built-ins only; all the work is done by the library (../index.js).
//
// Exit codes: 0 ok, 1 failure (unreadable or invalid input, an invalid conversation, a
// compaction that failed), 2 usage error (unknown command or option, a bad option value).
// Errors are one line on stderr (set CONTEXT_COMPACT_DEBUG=1 for a stack trace).
//
// This file is the bin entry: the command table, the main help and how a failure ends the
// process. The rest, each module requiring only the ones listed before it:
//   errors.js     CliError and its exit code
//   output.js     printing: numbers, tables, JSON, a compaction's statistics
//   library.js    the library, loaded on first use; its errors as exit codes
//   args.js       argument parsing and the flags commands share
//   input.js      reading a conversation (array, request body or an agent's session file, read
//                 by the library's lib/sessions/)
//   progress.js   progress on stderr while the summary is written
//   commands/     one module per command

const { CliError, usageError, oneLine } = require('./errors.js')
const { NAME, stdout, stderr } = require('./output.js')
const { INPUT_HELP } = require('./args.js')
const { cmdCount } = require('./commands/count.js')
const { cmdCheck } = require('./commands/check.js')
const { cmdCompact } = require('./commands/compact.js')
const { cmdHistory } = require('./commands/history.js')
const { cmdRestore } = require('./commands/restore.js')
const { cmdPrune } = require('./commands/prune.js')
const { cmdDemo } = require('./commands/demo.js')
const { cmdReport } = require('./commands/report.js')

const COMMANDS = {
  count: cmdCount,
  check: cmdCheck,
  compact: cmdCompact,
  history: cmdHistory,
  restore: cmdRestore,
  prune: cmdPrune,
  report: cmdReport,
  demo: cmdDemo,
}

const MAIN_HELP = `Usage: ${NAME} <command> [options]

Keeps LLM agent loops alive past their context window.

Commands:
  demo                  compact a generated 200K-token agent session (offline without API keys)
  count <file|->        tokens: total, per role, per block type, the largest messages
  check <file|->        threshold status and a validity report (orphan tool results, …)
  compact <file|->      compact a conversation (stdout or -o), with progress and statistics
  history               list a session's archives
  restore <file|->      restore the full conversation from a compacted one and its archives
  prune                 remove archives older than N days
  report <file|->       one HTML page of a session: token curve, compactions, what fills the list

${INPUT_HELP}

Run \`${NAME} <command> --help\` for its options.

Exit status: 0 ok, 1 failure (invalid input or conversation, failed compaction), 2 usage error.`

async function main(argv) {
  const [command, ...rest] = argv
  if (command === undefined) {
    stderr(MAIN_HELP)
    process.exitCode = 2
    return
  }
  if (command === '-h' || command === '--help' || command === 'help') {
    if (rest[0] && COMMANDS[rest[0]]) return COMMANDS[rest[0]](['--help'])
    return stdout(MAIN_HELP)
  }
  if (command === '-v' || command === '--version') {
    return stdout(require('../package.json').version)
  }
  const run = COMMANDS[command]
  if (!run) throw usageError(`unknown command ${JSON.stringify(command)} (expected ${Object.keys(COMMANDS).join(', ')})`)
  await run(rest)
}

process.stdout.on('error', (error) => {
  // `context-compact … | head`: the reader left; that is not our failure.
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0)
  throw error
})

main(process.argv.slice(2)).catch((error) => {
  const code = error instanceof CliError ? error.exitCode : 1
  const message = error instanceof CliError ? error.message : `unexpected error: ${oneLine(error && error.message)}`
  stderr(`${NAME}: ${oneLine(message)}${code === 2 ? ` (see ${NAME} --help)` : ''}`)
  if (process.env.CONTEXT_COMPACT_DEBUG && error && error.stack) stderr(error.stack)
  process.exitCode = code
})
