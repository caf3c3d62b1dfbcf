'use strict'

// `context-compact restore`: the full conversation back from a compacted one and its archives.

const { NAME, stdout, stderr, fmt, writeJson } = require('../output.js')
const { DEFAULT_OUTPUT_DIR, parse, formatOption, storeOptions, STORE_FLAGS, STORE_HELP } = require('../args.js')
const { readConversation, envelope } = require('../input.js')
const { lib, call } = require('../library.js')

const RESTORE_HELP = `Usage: ${NAME} restore <file|-> [-o out.json] [--output-dir <dir>] [--session-id <id>]

Rolls a compacted conversation back: every summary written by context-compact is replaced by the
archived messages it names (recursively), giving the full original conversation, in the input's
envelope, on stdout or -o.

Options:
  -o, --output <file>  write the restored conversation here instead of stdout
${STORE_HELP}
  --session-id <id>    the session (default "default")
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
  const format = formatOption(values)
  // Invalid messages are rejected by restoreMessages itself (a TypeError naming the index: exit 1).
  const conversation = await readConversation(positionals[0])
  const options = {
    outputDir: values['output-dir'] ?? DEFAULT_OUTPUT_DIR,
    sessionId: values['session-id'] ?? 'default',
    storeOptions: storeOptions(values),
    ...format,
  }
  const restored = await call(() => lib().restoreMessages(conversation.messages, options))
  writeJson(values.output, envelope(conversation, restored))
  if (!values.quiet) stderr(`restored ${fmt(conversation.messages.length)} → ${fmt(restored.length)} messages`)
}

module.exports = { cmdRestore }
