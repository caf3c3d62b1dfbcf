'use strict'

// `context-compact check`: the threshold status and the validity report (what the APIs would
// reject), exit 1 for an invalid conversation.

const { NAME, stdout, stderr, fmt, pct, table } = require('../output.js')
const { parse, choice, COMMON, INPUT_HELP, formatOption, THRESHOLD_FLAGS, thresholdOptions } = require('../args.js')
const { readConversation, describeInput } = require('../input.js')
const { lib, call } = require('../library.js')

const CHECK_HELP = `Usage: ${NAME} check <file|-> [options]

Reports whether a conversation is over the compaction threshold, and whether the LLM APIs would
accept it: orphan tool results, tool calls without results, duplicate tool ids, role problems,
empty content — each with its message index, by the rules of the list's own API and in the words
of its errors (an OpenAI Responses or Chat list is not held to Anthropic's role rules).
Exits 1 when the conversation is invalid (0 when it is valid, over the threshold or not).

${INPUT_HELP}

Options:
  --limit <tokens>        the context window (default 200000, or the agent model's window)
  --ratio <r>             the threshold ratio (default 0.92)
  --agent-model <model>   the model the agent talks to: scales the estimate by its billing
                          factor (default: the request body's "model", if any)
  --usage <json>          the usage the API reported for the last assistant message, e.g.
                          '{"input_tokens": 150000, "output_tokens": 800}'
  --encoding <name>       o200k_base (default) or cl100k_base
  --format <name>         the messages' format: auto (default: detected), anthropic, openai,
                          openai-responses, ai-sdk, gemini, bedrock or langchain
  --json                  print the report as JSON on stdout
  -h, --help              show this help`

const SOURCES = {
  usage: 'the usage reported for the last assistant message, plus the messages after it',
  calibration: 'calibration',
  model: "the agent model's billing factor",
  raw: 'the exact tokenizer count',
}

async function cmdCheck(argv) {
  const { values, positionals } = parse(argv, { ...COMMON, ...THRESHOLD_FLAGS }, { positionals: 1, positionalNames: ['<file|->'] })
  if (values.help) return stdout(CHECK_HELP)
  const encoding = choice(values, 'encoding', 'encoding')
  const conversation = await readConversation(positionals[0])
  const format = formatOption(values, conversation)
  const options = { ...thresholdOptions(values, conversation), encoding, ...format }
  const { checkMessages, measureTokens } = lib()
  const problems = await call(() => checkMessages(conversation.messages, format))
  const structural = problems.some((p) => p.kind === 'invalid_message')
  // Invalid messages cannot be counted; the validity report says what is wrong with them.
  const measure = structural ? null : await call(() => measureTokens(conversation.messages, options))
  const ratio = options.thresholdRatio ?? lib().COMPACT_THRESHOLD_RATIO
  const limit = measure ? Math.round(measure.threshold / ratio) : null
  if (values.json) {
    stdout(
      JSON.stringify(
        {
          valid: problems.length === 0,
          problems,
          measure,
          contextTokenLimit: limit,
          thresholdRatio: ratio,
          agentModel: options.agentModel ?? null,
          ...(conversation.session ? { session: { agent: conversation.session.agentName, sessionId: conversation.session.sessionId ?? null, usage: options.usage ?? null } } : {}),
        },
        null,
        2,
      ),
    )
  } else {
    for (const note of conversation.notes ?? []) stderr(`note: ${note}`)
    const what = describeInput(conversation)
    if (what) stdout(what)
    if (measure) {
      const over = measure.shouldCompact
      stdout(`${conversation.name}: ${fmt(conversation.messages.length)} messages`)
      stdout(
        table([
          ['raw tokens', fmt(measure.rawTokens), measure.rawTokens !== measure.messageTokens ? `(messages ${fmt(measure.messageTokens)} + system/tools)` : ''],
          ['estimated tokens', fmt(measure.tokens), `source: ${measure.source}${measure.factor !== 1 ? ` ×${measure.factor}` : ''} (${SOURCES[measure.source] ?? measure.source})`],
          ['threshold', fmt(measure.threshold), `= ${fmt(limit)} × ${ratio}`],
          ['of the window', pct(measure.tokens / limit)],
        ]),
      )
      stdout(
        over
          ? `status: OVER the threshold by ${fmt(measure.tokens - measure.threshold)} tokens: compaction would run`
          : `status: below the threshold (${fmt(measure.threshold - measure.tokens)} tokens to go): no compaction needed`,
      )
    }
    if (problems.length === 0) {
      stdout('validity: OK (no problems found)')
    } else {
      stdout(`validity: ${problems.length} problem${problems.length === 1 ? '' : 's'}`)
      for (const p of problems) stdout(`  messages[${p.index}] ${p.kind}: ${p.message}`)
    }
  }
  if (problems.length > 0) {
    if (!values.json) {
      const first = problems[0]
      stderr(`${NAME}: invalid conversation: messages[${first.index}]: ${first.message}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}`)
    }
    process.exitCode = 1
  }
}

module.exports = { cmdCheck }
