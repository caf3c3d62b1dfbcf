'use strict'

// `context-compact report`: one self-contained HTML page of a session (lib/report/report.js): the
// token curve, each compaction, and what fills the list now.

const fs = require('node:fs')
const path = require('node:path')

const { CliError, oneLine } = require('../errors.js')
const { NAME, stdout, stderr, fmt } = require('../output.js')
const { parse, number, choice, FORMAT_HELP, INPUT_HELP, formatOption, storeOptions, STORE_FLAGS, STORE_HELP } = require('../args.js')
const { readConversation, describeInput, archiveLocation } = require('../input.js')
const { lib, call } = require('../library.js')

const REPORT_HELP = `Usage: ${NAME} report <file|-> [-o report.html] [--output-dir <dir>] [--session-id <id>] [options]

Writes one self-contained HTML page (no network, no script, nothing to fetch) of a session:
- the token curve: the full conversation restored through the archives, message by message,
  the context the model held, the window and the threshold, each compaction, and the billed
  usage beside the count when it is known (--usage, or usage recorded on the messages);
- each compaction: when and why it fired, strategy and provider, what it replaced (messages by
  role, tool calls by name), the files its ledger names, the summary, offloads and thinking
  removed, what the summary cost, and its archive;
- the list as it is now: tokens by role and block type, the largest messages and tool results.

The input is the conversation, or the compacted list a loop holds now; its archives are looked
for where its summaries say they are, unless --output-dir names another place. Without
archives, the page shows the list alone. The usage an agent's session file recorded is drawn
beside the count (unless --usage names a file).

${INPUT_HELP}

Options:
  -o, --output <file>  write the page here instead of stdout
${STORE_HELP}
                       (default: where the summaries say the archives are)
  --session-id <id>    the session (default: the one the summaries name, an agent's session
                       file's own id, else "default")
  --usage <file>       billed usage (default: what an agent's session file recorded), a JSON
                       array with one entry per request:
                       {message_index_after_which_the_request_was_made (or index), input_tokens,
                       cache_read_input_tokens, cache_creation_input_tokens, output_tokens} or any
                       API's usage object (prompt_tokens, inputTokens, promptTokenCount, …)
  --limit <tokens>     the context window (default: the audit log's, else 200000)
  --ratio <r>          the threshold ratio (default 0.92)
  --agent-model <name> the agent's model (its window and billing factor)
  --title <text>       the page's title (default: the file name)
  --encoding <name>    o200k_base (default) or cl100k_base
${FORMAT_HELP}
  -q, --quiet          nothing on stderr (except a failure)
  -h, --help           show this help`

function readUsage(file) {
  let text
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${error.code === 'ENOENT' ? 'no such file' : oneLine(error.message)}`)
  }
  let value
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new CliError(`${file}: invalid JSON: ${oneLine(error.message)}`)
  }
  if (!Array.isArray(value)) throw new CliError(`${file}: expected a JSON array of usage entries, one per request`)
  return value
}

async function cmdReport(argv) {
  const { values, positionals } = parse(
    argv,
    {
      output: { type: 'string', short: 'o' },
      quiet: { type: 'boolean', short: 'q' },
      ...STORE_FLAGS,
      'session-id': { type: 'string' },
      usage: { type: 'string' },
      limit: { type: 'string' },
      ratio: { type: 'string' },
      'agent-model': { type: 'string' },
      title: { type: 'string' },
      encoding: { type: 'string' },
      format: { type: 'string' },
    },
    { positionals: 1, positionalNames: ['<file|->'] },
  )
  if (values.help) return stdout(REPORT_HELP)
  const encoding = choice(values, 'encoding', 'encoding')
  const limit = number(values, 'limit', { integer: true, min: 1 })
  const ratio = number(values, 'ratio', { min: 0, max: 1 })
  const conversation = await readConversation(positionals[0])
  const format = formatOption(values, conversation)
  const usage = values.usage === undefined ? conversation.usage : readUsage(values.usage)
  const location = archiveLocation(values, conversation)
  if (!values.quiet) {
    const what = describeInput(conversation)
    if (what) stderr(what)
    for (const note of conversation.notes ?? []) stderr(`note: ${note}`)
  }
  const options = {
    outputDir: location.outputDir,
    sessionId: location.sessionId,
    storeOptions: storeOptions(values),
    title: values.title ?? (conversation.name === 'stdin' ? undefined : path.basename(conversation.name)),
    ...format,
  }
  if (encoding !== undefined) options.encoding = encoding
  if (limit !== undefined) options.contextTokenLimit = limit
  if (ratio !== undefined) options.thresholdRatio = ratio
  const agentModel = values['agent-model'] ?? conversation.model
  if (agentModel !== undefined) options.agentModel = agentModel
  if (conversation.system !== undefined) options.system = conversation.system
  if (conversation.tools !== undefined) options.tools = conversation.tools
  if (usage !== undefined && (values.usage !== undefined || usage.length > 0)) options.usage = usage
  // The compactions shown are this list's: the session's records are read where its summaries
  // say, or where --output-dir / --session-id ask. A list whose summaries name no archive (an
  // agent's session file, a list never compacted) shows none: the audit log under its session
  // id is another run's.
  const asked = values['output-dir'] !== undefined || values['session-id'] !== undefined
  const records = asked || location.from === 'summary'
  // Loaded through lib() first, so that a missing addon is the CLI's one-line error.
  lib()
  // Invalid messages are a TypeError naming the index (exit 1); bad options exit 2.
  const { html, data } = await call(() => require('../../lib/report/report.js').renderReportWith(conversation.messages, options, { records }))
  if (values.output === undefined || values.output === '-') {
    process.stdout.write(html)
  } else {
    try {
      fs.writeFileSync(values.output, html)
    } catch (error) {
      throw new CliError(`cannot write ${values.output}: ${oneLine(error.message)}`)
    }
  }
  if (!values.quiet) {
    // Each compaction's card carries the attribute; text from the session is escaped, so
    // its quotes can never spell it.
    const compactions = (html.match(/data-compaction="/g) ?? []).length
    const fromList = data.compactions.filter((c) => c.origin === 'list').length
    const fromLog = data.compactions.length - fromList
    const origins = [fromList > 0 ? `${fmt(fromList)} from this list's summaries` : null, fromLog > 0 ? `${fmt(fromLog)} from the audit log of session "${data.sessionId}" in ${data.outputDir} only, not this list's` : null].filter(Boolean)
    stderr(
      `${values.output && values.output !== '-' ? `wrote ${values.output}` : 'report'}: ${fmt(conversation.messages.length)} messages, ${fmt(compactions)} compaction${compactions === 1 ? '' : 's'}${origins.length > 0 ? ` (${origins.join('; ')})` : records ? '' : ' (no summary in this list names an archive; --output-dir or --session-id reads a session\'s records)'}, ${fmt(Buffer.byteLength(html))} bytes`,
    )
  }
}

module.exports = { cmdReport }
