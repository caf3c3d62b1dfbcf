'use strict'

// `context-compact count`: tokens of a conversation, in total, per role, per block type, and
// its largest messages.

const { NAME, stdout, stderr, fmt, pct, plural, table } = require('../output.js')
const { parse, number, choice, COMMON, FORMAT_HELP, INPUT_HELP, formatOption } = require('../args.js')
const { readConversation, describeInput, validateMessages } = require('../input.js')
const { lib } = require('../library.js')

const COUNT_HELP = `Usage: ${NAME} count <file|-> [options]

Counts the tokens of a conversation: the total, per role, per block type, and the largest
messages.

${INPUT_HELP}

Options:
  --encoding <name>   o200k_base (default) or cl100k_base
  --top <n>           how many of the largest messages to list (default 5)
${FORMAT_HELP}
  --json              print the counts as JSON on stdout
  -h, --help          show this help`

function blockParts(message) {
  // [type, a one-part message that counts exactly that part]
  const parts = []
  const content = message.content
  if (typeof content === 'string') {
    parts.push([message.role === 'tool' ? 'tool_result' : 'text', { role: 'user', content }])
  } else if (Array.isArray(content)) {
    for (const block of content) parts.push([block.type, { role: 'user', content: [block] }])
  }
  for (const key of ['tool_calls', 'toolCalls']) {
    if (Array.isArray(message[key])) {
      for (const call of message[key]) parts.push(['tool_calls', { role: 'assistant', content: null, tool_calls: [call] }])
    }
  }
  return parts
}

function countReport(conversation, encoding, top, format = {}) {
  const { countTokens, measureTokens } = lib()
  const messages = conversation.messages
  const total = validateMessages(conversation, encoding, format)
  const perMessage = messages.map((m) => countTokens([m], { encoding, ...format }))
  const byRole = {}
  const byBlockType = {}
  messages.forEach((m, i) => {
    // Items of the Responses API without a role (function calls, their outputs, reasoning)
    // are told by their type.
    const role = (byRole[m.role ?? m.type ?? '(none)'] ??= { tokens: 0, messages: 0 })
    role.tokens += perMessage[i]
    role.messages += 1
    for (const [type, part] of blockParts(m)) {
      const n = countTokens([part], { encoding })
      const entry = (byBlockType[type] ??= { tokens: 0, blocks: 0 })
      entry.tokens += n
      entry.blocks += 1
    }
  })
  const extra = (options) => measureTokens([], { encoding, ...options }).rawTokens
  const system = conversation.system === undefined ? 0 : extra({ system: conversation.system })
  const tools = conversation.tools === undefined ? 0 : extra({ tools: conversation.tools })
  const largest = perMessage
    .map((tokens, index) => ({ index, role: messages[index].role ?? messages[index].type ?? '(none)', tokens }))
    .sort((a, b) => b.tokens - a.tokens || a.index - b.index)
    .slice(0, top)
  const sortEntries = (o) => Object.fromEntries(Object.entries(o).sort((a, b) => b[1].tokens - a[1].tokens))
  const session = conversation.session
  return {
    encoding: encoding ?? 'o200k_base',
    ...(session ? { session: { agent: session.agentName, sessionId: session.sessionId ?? null, model: session.model ?? null, format: session.format, recordedUsage: session.usage.length } } : {}),
    messages: messages.length,
    tokens: total,
    systemTokens: system,
    toolsTokens: tools,
    requestTokens: total + system + tools,
    byRole: sortEntries(byRole),
    byBlockType: sortEntries(byBlockType),
    largest,
  }
}

async function cmdCount(argv) {
  const { values, positionals } = parse(argv, { ...COMMON, top: { type: 'string' } }, { positionals: 1, positionalNames: ['<file|->'] })
  if (values.help) return stdout(COUNT_HELP)
  const encoding = choice(values, 'encoding', 'encoding')
  const top = number(values, 'top', { integer: true, min: 0 }) ?? 5
  const conversation = await readConversation(positionals[0])
  const format = formatOption(values, conversation)
  const report = countReport(conversation, encoding, top, format)
  if (values.json) return stdout(JSON.stringify(report, null, 2))
  for (const note of conversation.notes ?? []) stderr(`note: ${note}`)
  const what = describeInput(conversation)
  if (what) stdout(what)
  stdout(`${conversation.name}: ${fmt(report.messages)} messages, ${fmt(report.tokens)} tokens (${report.encoding})`)
  if (conversation.system !== undefined || conversation.tools !== undefined) {
    stdout(
      `  + system ${fmt(report.systemTokens)}, tools ${fmt(report.toolsTokens)} = ${fmt(report.requestTokens)} tokens in the request`,
    )
  }
  const share = (n) => (report.tokens > 0 ? pct(n / report.tokens) : '-')
  stdout('\nBy role')
  stdout(table(Object.entries(report.byRole).map(([role, e]) => [role, fmt(e.tokens), share(e.tokens).padStart(7), plural(e.messages, 'message')])))
  stdout('\nBy block type')
  stdout(table(Object.entries(report.byBlockType).map(([type, e]) => [type, fmt(e.tokens), share(e.tokens).padStart(7), plural(e.blocks, 'block')])))
  if (report.largest.length > 0) {
    stdout(`\nLargest messages`)
    stdout(table([['index', 'tokens', 'role'], ...report.largest.map((m) => [`messages[${m.index}]`, fmt(m.tokens), m.role])], '  ', { header: true }))
  }
}

module.exports = { cmdCount }
