'use strict'

// `context-compact prune`: removes archives older than N days (retention).

const { usageError } = require('../errors.js')
const { NAME, stdout, fmt } = require('../output.js')
const { DEFAULT_OUTPUT_DIR, parse, number, storeOptions, STORE_FLAGS, STORE_HELP } = require('../args.js')
const { lib, call } = require('../library.js')

const PRUNE_HELP = `Usage: ${NAME} prune --older-than-days <n> [--output-dir <dir>] [--session-id <id>] [--json]

Removes archives (and their metadata) written more than <n> days ago, in every session under
the output directory or in one. Audit logs and summary files are kept.

Options:
  --older-than-days <n>  required; fractions allowed, 0 removes every archive written before now
${STORE_HELP}
  --session-id <id>      only this session
  --json                 print the result as JSON on stdout
  -h, --help             show this help`

async function cmdPrune(argv) {
  const { values } = parse(argv, {
    json: { type: 'boolean' },
    'older-than-days': { type: 'string' },
    ...STORE_FLAGS,
    'session-id': { type: 'string' },
  })
  if (values.help) return stdout(PRUNE_HELP)
  const olderThanDays = number(values, 'older-than-days')
  if (olderThanDays === undefined) throw usageError('prune needs --older-than-days <n>')
  const outputDir = values['output-dir'] ?? DEFAULT_OUTPUT_DIR
  const options = { olderThanDays, storeOptions: storeOptions(values) }
  if (values['session-id'] !== undefined) options.sessionId = values['session-id']
  const result = await call(() => lib().pruneArchives(outputDir, options))
  if (values.json) return stdout(JSON.stringify(result, null, 2))
  stdout(`removed ${fmt(result.removed.length)} file${result.removed.length === 1 ? '' : 's'}, kept ${fmt(result.kept)} archive${result.kept === 1 ? '' : 's'}`)
  for (const file of result.removed) stdout(`  ${file}`)
}

module.exports = { cmdPrune }
