'use strict'

// `context-compact history`: a session's archives, oldest first.

const { oneLine } = require('../errors.js')
const { NAME, stdout, fmt } = require('../output.js')
const { DEFAULT_OUTPUT_DIR, parse, storeOptions, STORE_FLAGS, STORE_HELP } = require('../args.js')
const { lib, call } = require('../library.js')

const HISTORY_HELP = `Usage: ${NAME} history [--output-dir <dir>] [--session-id <id>] [--json]

Lists the archives of a session (oldest first): sequence, time, message count, size, path and the
first line of the summary that replaced them.

Options:
${STORE_HELP}
  --session-id <id>    the session (default "default")
  --json               print the list as JSON on stdout
  -h, --help           show this help`

async function cmdHistory(argv) {
  const { values } = parse(argv, { json: { type: 'boolean' }, ...STORE_FLAGS, 'session-id': { type: 'string' } })
  if (values.help) return stdout(HISTORY_HELP)
  const outputDir = values['output-dir'] ?? DEFAULT_OUTPUT_DIR
  const sessionId = values['session-id'] ?? 'default'
  const archives = await call(() => lib().listArchives(outputDir, sessionId, { storeOptions: storeOptions(values) }))
  if (values.json) return stdout(JSON.stringify(archives, null, 2))
  if (archives.length === 0) return stdout(`no archives for session "${sessionId}" in ${outputDir}`)
  stdout(`${archives.length} archive${archives.length === 1 ? '' : 's'} for session "${sessionId}" in ${outputDir}`)
  for (const a of archives) {
    const summary = a.summary ? oneLine(a.summary.split('\n').find((l) => l.trim() && !l.startsWith('[context-compact]') && !l.startsWith('#')) ?? '') : ''
    stdout(
      `  #${a.sequence}  ${a.createdAt}  ${a.messageCount === null ? '?' : fmt(a.messageCount)} messages  ${fmt(a.sizeBytes)} bytes  ${a.path}`,
    )
    if (summary) stdout(`      ${summary.slice(0, 100)}`)
  }
}

module.exports = { cmdHistory }
