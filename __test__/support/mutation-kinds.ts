// Every kind of in-place change to a message (issue 11's list, SPEC §4.9): a Compactor's cache
// must follow each one (compactor-mutation.test.ts), and a summary prepared in the background
// over a changed message is stale (background.test.ts).

type M = any // messages are edited freely here

export const anthropicBase = (): M[] => [
  { role: 'user', content: 'Please fix the failing build in src/main.rs.' },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Reading the file first.' },
      { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'src/main.rs', limit: 40 } },
    ],
  },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'fn main() { println!("hi") }' }] },
  {
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 'The macro is fine; the build flags are not.', signature: 'sig' },
      { type: 'text', text: 'Running the build.' },
      { type: 'tool_use', id: 'toolu_2', name: 'bash', input: { command: 'cargo build' } },
    ],
  },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'error[E0425]: cannot find value `x`' }], is_error: true }] },
  { role: 'assistant', content: [{ type: 'text', text: 'Found it: a typo.' }] },
]

export const openaiBase = (): M[] => [
  { role: 'system', content: 'You are a coding agent.' },
  { role: 'user', content: 'Please fix the failing build in src/main.rs.' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"src/main.rs"}' } }],
  },
  { role: 'tool', tool_call_id: 'call_1', content: 'fn main() { println!("hi") }' },
  { role: 'assistant', content: 'Running the build.' },
  { role: 'user', content: [{ type: 'text', text: 'Go on.' }] },
]

// The same number of characters, tokenized very differently.
export const scrambled = (s: string) => Array.from(s, (_, i) => '#7@!'[i % 4]).join('')

export const LONG = ' and then the build failed again with a linker error in the release profile'.repeat(8)

export interface Kind {
  name: string
  /** The message changed (inserted first, in the middle or last). */
  make: () => M
  change: (m: M) => void
  /** The count does not depend on what changes (the cache must still give the right count). */
  uncounted?: boolean
}

export const userText = () => ({ role: 'user', content: 'Please look at the logs.' })
export const assistantBlocks = () => ({
  role: 'assistant',
  content: [
    { type: 'text', text: 'abcd efgh' },
    { type: 'tool_use', id: 'toolu_9', name: 'edit_file', input: { path: 'src/lib.rs', old_string: 'foo', new_string: 'bar', options: { replace_all: false, lines: [1, 2] } } },
    { type: 'text', text: 'Done.' },
  ],
})
export const toolResult = () => ({
  role: 'user',
  content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: 'ok: 1 file changed' }],
})
export const openaiCall = () => ({
  role: 'assistant',
  content: null,
  tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } }],
})
export const openaiTool = () => ({ role: 'tool', tool_call_id: 'call_9', content: 'README.md\nsrc' })

export const anthropicKinds: Kind[] = [
  { name: 'text appended to string content', make: userText, change: (m) => (m.content += LONG) },
  { name: 'string content replaced by an array', make: userText, change: (m) => (m.content = [{ type: 'text', text: 'Please look at the logs.' + LONG }]) },
  { name: 'string content replaced, same length', make: userText, change: (m) => (m.content = scrambled(m.content)) },
  { name: 'array content replaced by another array', make: assistantBlocks, change: (m) => (m.content = [{ type: 'text', text: 'Shorter.' }]) },
  { name: 'array content replaced by a string', make: assistantBlocks, change: (m) => (m.content = 'All done' + LONG) },
  { name: 'block pushed', make: assistantBlocks, change: (m) => m.content.push({ type: 'text', text: LONG }) },
  { name: 'block removed (pop)', make: assistantBlocks, change: (m) => m.content.pop() },
  { name: 'block spliced out of the middle', make: assistantBlocks, change: (m) => m.content.splice(1, 1) },
  { name: 'block spliced in', make: assistantBlocks, change: (m) => m.content.splice(1, 0, { type: 'text', text: LONG }) },
  { name: 'blocks reordered', make: assistantBlocks, change: (m) => m.content.reverse(), uncounted: true },
  { name: "a block's text appended", make: assistantBlocks, change: (m) => (m.content[0].text += LONG) },
  { name: "a block's text changed, same length", make: assistantBlocks, change: (m) => (m.content[0].text = scrambled(m.content[0].text)) },
  { name: "a tool input's field changed", make: assistantBlocks, change: (m) => (m.content[1].input.path = 'crates/core/src/lib.rs' + LONG) },
  { name: "a tool input's nested array pushed", make: assistantBlocks, change: (m) => m.content[1].input.options.lines.push(3, 4, 5, 600000) },
  { name: "a tool input's number changed", make: assistantBlocks, change: (m) => (m.content[1].input.options.lines[0] = 1234567890) },
  { name: "a tool input's boolean changed to null", make: assistantBlocks, change: (m) => (m.content[1].input.options.replace_all = null), uncounted: true },
  { name: "a tool input's key added", make: assistantBlocks, change: (m) => (m.content[1].input.extra = { note: LONG }) },
  { name: "a tool input's key deleted", make: assistantBlocks, change: (m) => delete m.content[1].input.old_string },
  { name: "a tool input's keys reordered", make: assistantBlocks, change: (m) => { const p = m.content[1].input.path; delete m.content[1].input.path; m.content[1].input.path = p }, uncounted: true },
  { name: 'a tool input replaced', make: assistantBlocks, change: (m) => (m.content[1].input = { path: 'x' }) },
  { name: "a tool result's content appended", make: toolResult, change: (m) => (m.content[0].content += LONG) },
  { name: "a tool result's content replaced by blocks", make: toolResult, change: (m) => (m.content[0].content = [{ type: 'text', text: LONG }]) },
  { name: 'a tool result marked as an error', make: toolResult, change: (m) => (m.content[0].is_error = true), uncounted: true },
  { name: 'a key added to the message', make: userText, change: (m) => (m.name = 'reviewer'), uncounted: true },
  { name: 'the content key deleted and added back (key order)', make: userText, change: (m) => { const c = m.content; delete m.content; m.content = c }, uncounted: true },
  { name: 'the role changed', make: userText, change: (m) => (m.role = 'assistant'), uncounted: true },
  { name: 'content emptied', make: assistantBlocks, change: (m) => (m.content.length = 0) },
  { name: 'content set to an equal copy', make: assistantBlocks, change: (m) => (m.content = structuredClone(m.content)), uncounted: true },
]

export const openaiKinds: Kind[] = [
  { name: 'text appended to string content', make: userText, change: (m) => (m.content += LONG) },
  { name: 'null content given text', make: openaiCall, change: (m) => (m.content = 'Let me check.' + LONG) },
  { name: 'tool_calls pushed', make: openaiCall, change: (m) => m.tool_calls.push({ id: 'call_10', type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } }) },
  { name: 'tool_calls removed', make: openaiCall, change: (m) => m.tool_calls.pop() },
  { name: 'tool_calls added to a message without them', make: userText, change: (m) => { m.role = 'assistant'; m.tool_calls = [{ id: 'call_11', type: 'function', function: { name: 'bash', arguments: '{}' } }] } },
  { name: 'tool_calls arguments appended', make: openaiCall, change: (m) => (m.tool_calls[0].function.arguments = m.tool_calls[0].function.arguments.slice(0, -1) + `,"more":"${LONG}"}`) },
  { name: 'tool_calls arguments changed, same length', make: openaiCall, change: (m) => (m.tool_calls[0].function.arguments = scrambled(m.tool_calls[0].function.arguments)) },
  { name: 'tool_calls function name changed', make: openaiCall, change: (m) => (m.tool_calls[0].function.name = 'run_a_long_shell_command_name') },
  { name: 'tool message content appended', make: openaiTool, change: (m) => (m.content += LONG) },
  { name: 'content parts pushed', make: () => ({ role: 'user', content: [{ type: 'text', text: 'Look.' }] }), change: (m) => m.content.push({ type: 'text', text: LONG }) },
  { name: 'a content part text changed', make: () => ({ role: 'user', content: [{ type: 'text', text: 'Look.' }] }), change: (m) => (m.content[0].text = scrambled(m.content[0].text)) },
  { name: 'the tool_calls key deleted', make: openaiCall, change: (m) => { delete m.tool_calls; m.content = 'never mind' } },
]
