'use strict'

// `context-compact compact`: compacts a conversation file with progress and statistics on
// stderr, the result in the input's envelope on stdout or -o.

const { NAME, stdout, stderr, fmt, table, writeJson, statsRows } = require('../output.js')
const { oneLine } = require('../errors.js')
const { DEFAULT_OUTPUT_DIR, parse, number, choice, optionInteger, COMMON, INPUT_HELP, formatOption, THRESHOLD_FLAGS, thresholdOptions, storeOptions } = require('../args.js')
const { readConversation, describeInput, validateMessages, envelope } = require('../input.js')
const { lib, compactorFor } = require('../library.js')
const { compactWithProgress } = require('../progress.js')


const COMPACT_HELP = `Usage: ${NAME} compact <file|-> [-o out.json] [options]

Compacts a conversation when it reaches the threshold (or always, with --force): keeps the
leading system messages and a recent tail, replaces the middle with a summary, archives the
originals. Writes the result in the input's envelope (array or request body; the list of an
agent's session file as a JSON array) to stdout or -o; progress and statistics go to stderr.

${INPUT_HELP}

API keys are read from the environment only (ANTHROPIC_API_KEY, OPENAI_API_KEY), never from a
flag. Without --provider: anthropic if ANTHROPIC_API_KEY is set, else openai if OPENAI_API_KEY
is set, else the built-in extractive summarizer (offline).

Options:
  -o, --output <file>             write the compacted conversation here instead of stdout
  --json                          print the whole CompactResult as JSON on stdout
  -q, --quiet                     nothing on stderr (except a failure)
  --limit <tokens>                contextTokenLimit (default 200000, or the agent model's window)
  --ratio <r>                     thresholdRatio (default 0.92)
  --tail-ratio <r>                tailRetentionRatio (default 0.1)
  --keep-recent-turns <n>         keepRecentTurns (default 0)
  --force                         compact even below the threshold
  --provider <name>               anthropic, openai, extractive or anthropic-compaction
                                  (default: from the environment)
  --model <model>                 the summary model (default claude-sonnet-4-6 / gpt-4o-mini)
  --agent-model <model>           the agent's model (default: the request body's "model")
  --usage <json>                  usage reported for the last assistant message
  --base-url <url>                the API base URL (default ANTHROPIC_BASE_URL / OPENAI_BASE_URL)
  --timeout-ms <ms>               per-request timeout (default 60000)
  --max-retries <n>               retries after the first attempt (default 2)
  --retry-base-delay-ms <ms>      the first retry's backoff (default 500)
  --summary-max-tokens <n>        the summary's output budget (default 4096)
  --summary-context-tokens <n>    how many tokens the summary model can read
  --custom-instructions <text>    appended to the summary prompt
  --prompt-style <style>          structured (default) or continuation
  --summary-request <kind>        auto (default), shared or transcript: with a request body
                                  as input, the body without its messages is the agentRequest,
                                  and the summary is asked for with that very request plus one
                                  instruction, which reads the provider's prompt cache
  --output-dir <dir|url>          where archives go (default ${DEFAULT_OUTPUT_DIR}), or an object
                                  store: s3://bucket/prefix, gs://…, az://…, file:///path
  --store-option <key=value>      object-store configuration (repeatable), e.g.
                                  aws_endpoint=http://127.0.0.1:9000; credentials are better
                                  left in the environment (AWS_SECRET_ACCESS_KEY, …), where
                                  other users' process lists cannot see them
  --session-id <id>               the archive session (default: an agent's session file's own
                                  id, else "default")
  --require-archive               skip the compaction when the archive cannot be written
  --offload <scope>               what may be shortened when the kept messages alone do not fit:
                                  tool-results (default), all (user text too) or off
  --thinking <policy>             thinking blocks of kept turns: auto (default, by the agent
                                  model), keep or strip
  --encoding <name>               o200k_base (default) or cl100k_base
  --format <name>                 the messages' format: auto (default: detected), anthropic,
                                  openai, openai-responses, ai-sdk, gemini, bedrock or langchain
  -h, --help                      show this help

Exit status: 0 compacted or below the threshold, 1 invalid input or a failed compaction
(the output is then the input unchanged) or a result still over the threshold
(STILL_OVER_LIMIT: the output is the smaller, compacted list), 2 usage error.`

const COMPACT_FLAGS = {
  ...COMMON,
  ...THRESHOLD_FLAGS,
  output: { type: 'string', short: 'o' },
  quiet: { type: 'boolean', short: 'q' },
  'tail-ratio': { type: 'string' },
  'keep-recent-turns': { type: 'string' },
  force: { type: 'boolean' },
  provider: { type: 'string' },
  model: { type: 'string' },
  'base-url': { type: 'string' },
  'timeout-ms': { type: 'string' },
  'max-retries': { type: 'string' },
  'retry-base-delay-ms': { type: 'string' },
  'summary-max-tokens': { type: 'string' },
  'summary-context-tokens': { type: 'string' },
  'custom-instructions': { type: 'string' },
  'prompt-style': { type: 'string' },
  'summary-request': { type: 'string' },
  'output-dir': { type: 'string' },
  'store-option': { type: 'string', multiple: true },
  'session-id': { type: 'string' },
  'require-archive': { type: 'boolean' },
  offload: { type: 'string' },
  thinking: { type: 'string' },
}

function compactOptions(values, conversation) {
  const options = thresholdOptions(values, conversation)
  const set = (key, value) => {
    if (value !== undefined) options[key] = value
  }
  set('encoding', choice(values, 'encoding', 'encoding'))
  set('tailRetentionRatio', number(values, 'tail-ratio', { min: 0, max: 1 }))
  set('keepRecentTurns', optionInteger(values, 'keep-recent-turns', 'keepRecentTurns'))
  set('provider', choice(values, 'provider', 'provider'))
  set('model', values.model)
  set('baseUrl', values['base-url'])
  set('timeoutMs', optionInteger(values, 'timeout-ms', 'timeoutMs'))
  set('maxRetries', optionInteger(values, 'max-retries', 'maxRetries'))
  set('retryBaseDelayMs', optionInteger(values, 'retry-base-delay-ms', 'retryBaseDelayMs'))
  set('summaryMaxTokens', optionInteger(values, 'summary-max-tokens', 'summaryMaxTokens'))
  set('summaryContextTokens', optionInteger(values, 'summary-context-tokens', 'summaryContextTokens'))
  set('customInstructions', values['custom-instructions'])
  set('promptStyle', choice(values, 'prompt-style', 'promptStyle'))
  set('summaryRequest', choice(values, 'summary-request', 'summaryRequest'))
  // A request body is the loop's own request: without its messages, it is the agentRequest
  // (Anthropic Messages and OpenAI Chat bodies, which hold the list under "messages").
  if (conversation.key === 'messages' && conversation.model !== undefined) {
    const { messages: _messages, ...agentRequest } = conversation.body
    options.agentRequest = agentRequest
  }
  set('offload', choice(values, 'offload', 'offload'))
  set('thinking', choice(values, 'thinking', 'thinking'))
  set('format', formatOption(values, conversation).format)
  set('outputDir', values['output-dir'])
  set('storeOptions', storeOptions(values))
  // An agent's session keeps its archives under its own id.
  set('sessionId', values['session-id'] ?? conversation.session?.sessionId)
  if (values.force) options.force = true
  if (values['require-archive']) options.requireArchive = true
  return options
}

async function cmdCompact(argv) {
  const { values, positionals } = parse(argv, COMPACT_FLAGS, { positionals: 1, positionalNames: ['<file|->'] })
  if (values.help) return stdout(COMPACT_HELP)
  const quiet = Boolean(values.quiet)
  const conversation = await readConversation(positionals[0])
  const { usage, ...options } = compactOptions(values, conversation)
  const compactor = await compactorFor(options)
  validateMessages(conversation, compactor)
  const info = (text) => quiet || stderr(text)
  const what = describeInput(conversation)
  if (what) info(what)
  for (const note of conversation.notes ?? []) info(`note: ${note}`)
  const problems = lib().checkMessages(conversation.messages, { format: options.format })
  if (problems.length > 0) {
    info(
      `warning: the input has ${problems.length} problem${problems.length === 1 ? '' : 's'} the APIs would reject (first: messages[${problems[0].index}] ${problems[0].kind}); run \`${NAME} check\``,
    )
  }
  const { measure, result } = await compactWithProgress(compactor, conversation.messages, usage === undefined ? {} : { usage }, {
    quiet,
    label: 'writing the summary',
  })
  if (!result.compacted && !result.error) {
    info(`${fmt(measure.tokens)} tokens < threshold ${fmt(measure.threshold)}: nothing to compact (use --force to compact anyway)`)
  } else if (result.compacted) {
    info(table(statsRows(result, conversation.messages.length)))
  }
  for (const warning of result.warnings) info(`warning: ${oneLine(warning)}`)
  const output = envelope(conversation, result.messages)
  if (values.json) {
    if (values.output !== undefined) writeJson(values.output, output)
    writeJson(undefined, { ...result, messages: result.messages })
  } else {
    writeJson(values.output, output)
  }
  if (result.error) {
    const what = result.compacted ? 'compacted, but the result does not fit' : 'compaction failed'
    const hint = result.error.code === 'NOTHING_TO_COMPACT' ? `; ${nothingToCompactHint(conversation.messages.length, options)}` : ''
    stderr(`${NAME}: ${what}: ${result.error.code}: ${oneLine(result.error.message)}${hint}`)
    process.exitCode = 1
  }
}

// What to change when the kept head and tail leave nothing between them to summarize.
function nothingToCompactHint(count, options) {
  const turns = options.keepRecentTurns ?? 0
  const ratio = options.tailRetentionRatio ?? lib().TAIL_RETENTION_RATIO ?? 0.1
  const changes = []
  if (turns > 0) changes.push(`a smaller --keep-recent-turns (now ${turns})`)
  changes.push(`a smaller --tail-ratio (now ${ratio})`)
  return `the ${count} message${count === 1 ? '' : 's'} are all kept (the leading system messages and the recent tail); to compact, try ${changes.join(' or ')}, or wait until the conversation is longer`
}

module.exports = { cmdCompact }
