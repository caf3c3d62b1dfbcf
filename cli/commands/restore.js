'use strict'

// `context-compact restore`: the full conversation back from a compacted one and its archives.

const { NAME, stdout, stderr, fmt, writeJson } = require('../output.js')
const { parse, formatOption, storeOptions, STORE_FLAGS, STORE_HELP, INPUT_HELP } = require('../args.js')
const { readConversation, envelope, archiveLocation, namedArchives } = require('../input.js')
const { CliError } = require('../errors.js')
const { lib, call } = require('../library.js')

const RESTORE_HELP = `Usage: ${NAME} restore <file|-> [-o out.json] [--output-dir <dir>] [--session-id <id>]

Rolls a compacted conversation back: every summary written by context-compact is replaced by the
archived messages it names (recursively), giving the full original conversation, in the input's
envelope, on stdout or -o. The archives are looked for where the summaries say they are, unless
--output-dir names another place.

${INPUT_HELP}

Options:
  -o, --output <file>  write the restored conversation here instead of stdout
${STORE_HELP}
                       (default: where the summaries say the archives are)
  --session-id <id>    the session (default: the one the summaries name, else "default")
  --format <name>      the messages' format (default: detected; see \`${NAME} count --help\`)
  -q, --quiet          nothing on stderr (except a failure)
  -h, --help           show this help`

async function cmdRestore(argv) {
  const { values, positionals } = parse(
    argv,
    {
      output: { type: 'string', short: 'o' },
      quiet: { type: 'boolean', short: 'q' },
      ...STORE_FLAGS,
      'session-id': { type: 'string' },
      format: { type: 'string' },
    },
    { positionals: 1, positionalNames: ['<file|->'] },
  )
  if (values.help) return stdout(RESTORE_HELP)
  // Invalid messages are rejected by restoreMessages itself (a TypeError naming the index: exit 1).
  const conversation = await readConversation(positionals[0])
  const format = formatOption(values, conversation)
  const location = archiveLocation(values, conversation)
  const options = { outputDir: location.outputDir, sessionId: location.sessionId, storeOptions: storeOptions(values), ...format }
  const restored = await call(() => lib().restoreMessages(conversation.messages, options))
  // Only the summaries the archives record are expanded; one they do not record stays as it is
  // (text that merely looks like a summary is not trusted). With no archive at all where it
  // looked, nothing could be restored: that is a failure, not a quiet copy of the input.
  const left = restored.filter((message) => namedArchives([message]).length > 0).length
  if (left > 0) {
    const archives = await call(() => lib().listArchives(location.outputDir, location.sessionId, { storeOptions: options.storeOptions }))
    if (archives.length === 0) {
      throw new CliError(`ARCHIVE_NOT_FOUND: no archive of session "${location.sessionId}" in ${location.outputDir}: the summaries cannot be restored (give --output-dir and --session-id of the compaction that wrote them)`)
    }
    if (!values.quiet) stderr(`${fmt(left)} message(s) that look like summaries are not recorded in the archives of session "${location.sessionId}": kept as they are`)
  }
  writeJson(values.output, envelope(conversation, restored))
  if (!values.quiet) {
    const where = location.from === 'summary' ? ` (archives of session "${location.sessionId}" in ${location.outputDir}, as the summaries say)` : ''
    stderr(`restored ${fmt(conversation.messages.length)} → ${fmt(restored.length)} messages${where}`)
  }
}

module.exports = { cmdRestore }
