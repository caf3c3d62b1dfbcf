// The sessions the fidelity benchmark compacts: the real ones in ../shared/data (pi's own .jsonl
// sessions and real/*.json, read at run time, never copied), and long synthetic sessions of five
// agents, each in its own tool vocabulary and message format, with facts planted where the probes
// look for them. Every session comes with its events: for each message (item) index, what it
// holds that a probe asks about — the user's words, file operations, the plan tool's state, a
// failure and the line that says why, a value the user set, a fact.
//
// The events of a synthetic session are written down as the session is generated (the truth
// is planted); those of a real session are read from its messages by `nativeEvents` below, a
// reading independent of the library's (a few rules per agent tool, written for this
// benchmark).
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

import { mulberry32 } from '../generate-texts.mjs'

export const DATA = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..', '..', 'shared', 'data')
export const REAL = join(DATA, 'real')

// ---------------------------------------------------------------------------------------------
// Real sessions

function piMessages(path) {
  // pi's own format as Anthropic Messages (../shared/data/README.md), up to the session's own
  // first compaction.
  const lines = readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '')
  const messages = []
  for (const line of lines) {
    const entry = JSON.parse(line)
    if (entry.type === 'compaction') break
    if (entry.type !== 'message') continue
    const m = entry.message
    if (m.role === 'user') {
      const content = typeof m.content === 'string' ? m.content : m.content.map((b) => (b.type === 'image' ? { type: 'image', source: { type: 'base64', media_type: b.mimeType, data: b.data } } : b))
      messages.push({ role: 'user', content })
    } else if (m.role === 'bashExecution') {
      messages.push({ role: 'user', content: `Ran \`${m.command}\`\n\`\`\`\n${m.output ?? ''}\n\`\`\`` })
    } else if (m.role === 'toolResult') {
      const content = typeof m.content === 'string' ? m.content : m.content.map((b) => (b.type === 'image' ? { type: 'image', source: { type: 'base64', media_type: b.mimeType, data: b.data } } : b))
      const block = { type: 'tool_result', tool_use_id: m.toolCallId, content, is_error: Boolean(m.isError) }
      const last = messages[messages.length - 1]
      if (last && last.role === 'user' && Array.isArray(last.content) && last.content.every((b) => b.type === 'tool_result')) last.content.push(block)
      else messages.push({ role: 'user', content: [block] })
    } else if (m.role === 'assistant') {
      const content = (m.content ?? []).map((b) => {
        if (b.type === 'toolCall') return { type: 'tool_use', id: b.id, name: b.name, input: b.arguments ?? {} }
        if (b.type === 'thinking') return { type: 'thinking', thinking: b.thinking ?? '', signature: b.thinkingSignature ?? '' }
        if (b.type === 'text') return { type: 'text', text: b.text ?? '' }
        return b
      })
      if (content.length === 0) continue
      messages.push({ role: 'assistant', content })
    }
  }
  // A call left without a result (an aborted turn) is not a list an API accepts: answer it.
  return answerDangling(messages)
}

function answerDangling(messages) {
  const out = []
  for (let i = 0; i < messages.length; i++) {
    out.push(messages[i])
    const m = messages[i]
    if (m.role !== 'assistant' || !Array.isArray(m.content)) continue
    const ids = m.content.filter((b) => b.type === 'tool_use').map((b) => b.id)
    if (ids.length === 0) continue
    const next = messages[i + 1]
    const answered = new Set(next && Array.isArray(next.content) ? next.content.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id) : [])
    const missing = ids.filter((id) => !answered.has(id))
    if (missing.length === 0) continue
    const blocks = missing.map((id) => ({ type: 'tool_result', tool_use_id: id, content: 'aborted', is_error: true }))
    if (answered.size > 0) next.content = [...next.content, ...blocks]
    else out.push({ role: 'user', content: blocks })
  }
  return out
}

/** The real sessions: `{name, agent, format, messages, events, claudeCodeSummary?}`. */
export function realSessions() {
  const out = []
  for (const file of ['pi-session-before-compaction.jsonl', 'pi-session-large.jsonl']) {
    const path = join(DATA, file)
    if (!existsSync(path)) continue
    const messages = piMessages(path)
    out.push({ name: file.replace(/\.jsonl$/, ''), agent: 'pi', format: 'anthropic', messages, events: nativeEvents(messages) })
  }
  const manifestPath = join(REAL, 'manifest.json')
  if (existsSync(manifestPath)) {
    for (const entry of JSON.parse(readFileSync(manifestPath, 'utf8'))) {
      const messages = JSON.parse(readFileSync(join(REAL, entry.file), 'utf8'))
      const summaryPath = entry.claude_code_summary_file ? join(REAL, entry.claude_code_summary_file) : null
      out.push({
        name: entry.file.replace(/\.json$/, ''),
        agent: entry.agent,
        format: entry.format === 'anthropic' ? 'anthropic' : 'openai',
        messages,
        events: nativeEvents(messages),
        claudeCodeSummary: summaryPath && existsSync(summaryPath) ? readFileSync(summaryPath, 'utf8') : undefined,
      })
    }
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// What a native (Anthropic / OpenAI Chat) session holds, read for the probes

const PLAN_TOOLS = ['todowrite', 'update_plan', 'write_todos']

/** The text the user wrote in a native message (not tool results, not the library's own). */
export function userText(m) {
  if (m.role !== 'user') return null
  let text
  if (typeof m.content === 'string') text = m.content
  else if (Array.isArray(m.content))
    text = m.content
      .filter((b) => b.type === 'text')
      .map((b) => b.text)
      .join('\n\n')
  else return null
  if (text.startsWith('[context-compact]') || text.trim() === '') return null
  return text
}

function resultText(content) {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) return content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n')
  return ''
}

/**
 * Whether a tool output says the call failed, by this benchmark's own reading: a flag, a non-zero
 * exit status in the agents' forms, or the error prefixes of their editors. (Exit status 1 with
 * no output is grep finding nothing.)
 */
export function saysFailure(text, flagged) {
  if (flagged) return true
  const t = text.trimStart()
  if (/^(ERROR:|Error:|\[An error occurred during execution\.\]|<tool_use_error>|No replacement was performed|Your proposed edit has introduced new syntax error)/.test(t)) return true
  if (/^Invalid `[^`]+` parameter/.test(t) || /^Ran into .* while trying to /.test(t.split('\n')[0])) return true
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean)
  const ends = [...lines.slice(0, 2), ...lines.slice(-5)]
  for (const line of ends) {
    const m =
      /^Exit code:? (-?\d+)$/i.exec(line) ||
      /^<returncode>(-?\d+)<\/returncode>$/.exec(line) ||
      /^\[The command completed with exit code (-?\d+)\.\]$/.exec(line) ||
      /^Command exited with code (-?\d+)$/.exec(line)
    if (m) {
      const code = Number(m[1])
      if (code === 0 || code === -1) return false
      const rest = lines.filter((l) => !/^(<\/?output>|<returncode>.*|Exit code.*|\[.*exit code.*\]|\[Current working directory.*\]|\[Python interpreter.*\])$/i.test(l))
      return !(code === 1 && rest.length === 0)
    }
  }
  // Said in words on the first line (an indented line is content): `Error executing script: …`
  // (pi's browser tool), `Error [ERR_X]: …`, `Pre-commit validation failed: …`, an exception
  // class with its message; or a Python traceback that ends the output.
  const first = text.split('\n').find((l) => l.trim() !== '') ?? ''
  if (/^Error (\w+ing|in|while|during|when|\[[A-Z0-9_]+\]|\d{3})\b[^\n]*?:/.test(first) && !/^Error (handling|reporting|logging|tracking|tracing|messaging)\b/.test(first)) return true
  if (/^[A-Z][\w'./ -]{0,80}? failed(:| with \S|\s*$|\.\s*$)/.test(first)) return true
  if (/^(Exception(:| in thread )|(Uncaught|Unhandled) |([a-z_]\w*\.)*[A-Z]\w*(Error|Exception)(:\s|:?$))/.test(first)) return true
  const tb = text.lastIndexOf('Traceback (most recent call last):')
  if (tb >= 0 && (tb === 0 || text[tb - 1] === '\n')) {
    const tail = text.slice(tb).split('\n').filter((l) => l.trim() !== '' && !/^<\/?output>$/.test(l.trim()))
    const last = tail[tail.length - 1]
    if (tail.length > 1 && !/^\s/.test(last) && /^([A-Za-z_]\w*\.)*[A-Za-z_]\w*(:\s.*|:)?$/.test(last)) return true
  }
  return false
}

/**
 * The line of a failed output that says what went wrong, by this benchmark's rule: the first
 * line naming an error (an exception or error class, `error:` / `error[`, `FAILED`, `fatal:`,
 * `panicked`, "not found", "No such file", "denied", "cannot") — the last one after a Python
 * traceback — that is not a status line; else the first line that is not one.
 */
export function informativeLine(text) {
  const lines = text
    .split('\n')
    .map((l) => l.replace(/<\/?tool_use_error>/g, '').trim())
    .filter((l) => l && !/^(<\/?output>|<returncode>.*|Exit code.*|ERROR:|Error:|Output:|Wall time:.*|Traceback \(most recent call last\):|\[.*\]|[=_\-*~#+ ]+)$/i.test(l))
  const names = (l) =>
    !/^[=_-]{3,}\s*\w+\s*[=_-]{3,}$/.test(l) &&
    !/^[=_\s-]*\d+ (failed|passed|errors?)\b.*$/.test(l) &&
    !/^collected \d+ items?/.test(l) &&
    /(\b\w*(Error|Exception)\b|\berror(\[|:)|\bfailed\b|^FAIL\b|fatal:|panicked|not found|No such file|denied|[Cc]annot|undefined|Invalid|^E\s)/i.test(l)
  const named = lines.filter(names)
  if (named.length) return /Traceback \(most recent call last\)/.test(text) ? named[named.length - 1] : named[0]
  return lines[0] ?? text.trim().split('\n')[0]
}

/**
 * Shell commands as the benchmark reads them, with the scripts a session wrote (`cat <<'EOF' >
 * run.sh … EOF`) remembered, so that running one later (`bash run.sh`, `./run.sh`) counts what
 * it writes, relative to the directories it `cd`s into.
 */
function shellReader() {
  const scripts = new Map()
  return (command) => {
    // Relative paths after a `cd DIR &&` are under DIR.
    let cwd = ''
    const ops = []
    for (const part of command.split(/&&|;|\n/)) {
      const cd = /^\s*cd\s+([\w./~-]+)\s*$/.exec(part)
      if (cd) {
        cwd = cd[1].startsWith('/') ? `${cd[1].replace(/\/$/, '')}/` : `${cwd}${cd[1].replace(/\/$/, '')}/`
        continue
      }
      for (const op of shellFileOps(part)) ops.push({ ...op, path: op.path.startsWith('/') || op.path.startsWith('~') ? op.path : `${cwd}${op.path}` })
    }
    for (const m of command.matchAll(/cat\s+<<\s*'?(\w+)'?\s*>\s*([\w./-]+)\n([\s\S]*?)\n\1(?:\n|$)/g)) scripts.set(m[2].replace(/^\.\//, ''), m[3])
    for (const m of command.matchAll(/(?:^|&&|;|\n)\s*(?:bash|sh)\s+([\w./-]+\.sh)|(?:^|&&|;|\n)\s*\.\/([\w./-]+\.sh)/g)) {
      const body = scripts.get((m[1] ?? m[2]).replace(/^\.\//, ''))
      if (!body) continue
      let dir = ''
      for (const line of body.split('\n')) {
        const cd = /^\s*cd\s+([\w./-]+)\s*$/.exec(line)
        if (cd) {
          dir = `${dir}${cd[1].replace(/\/$/, '')}/`
          continue
        }
        for (const op of shellFileOps(line)) ops.push({ ...op, path: op.path.startsWith('/') ? op.path : `${dir}${op.path}` })
      }
    }
    return ops
  }
}

function shellFileOps(command) {
  // The obvious forms only: `sed -i … FILE`, redirections `> FILE` / `>> FILE`, `tee FILE`,
  // `touch`, `rm`, `cat FILE` / `head` / `tail` / `nl` / `sed -n … FILE` reads.
  const ops = []
  const path = String.raw`([\w./~-]+\.\w+)`
  for (const part of command.split(/&&|\|\||;|\n/)) {
    const p = part.trim()
    let c
    if ((c = new RegExp(String.raw`^(?:cp|mv)\s+(?:-\w+\s+)*\S+\s+${path}\s*$`).exec(p))) ops.push({ op: 'write', path: c[1] })
    if ((c = /^rm\s+((?:-\w+\s+)*)((?:[\w./~-]+\.\w+\s*)+)$/.exec(p))) for (const f of c[2].trim().split(/\s+/)) ops.push({ op: 'delete', path: f })
    // A read at the head of a pipe (`cat package.json | jq .`) is a read too.
    if ((c = new RegExp(String.raw`^(?:cat|head|tail|nl)\s+(?:-\S+(?:\s+\d+)?\s+)*${path}\s*(?:$|\|)`).exec(p))) ops.push({ op: 'read', path: c[1] })
    let m
    if ((m = /^sed\s+-i\S*\s+(?:'[^']*'|"[^"]*"|\S+)(?:\s+-e\s+(?:'[^']*'|"[^"]*"))*\s+([\w./-]+\.\w+)\s*$/.exec(p))) ops.push({ op: 'write', path: m[1] })
    for (const r of p.matchAll(/(?:^|[^<>&\d])>>?\s*([\w./-]+\.\w+)/g)) if (!r[1].startsWith('/dev/')) ops.push({ op: 'write', path: r[1] })
    if ((m = /^tee\s+(?:-a\s+)?([\w./-]+\.\w+)/.exec(p))) ops.push({ op: 'write', path: m[1] })
    if ((m = /^sed\s+-n\s+(?:'[^']*'|"[^"]*"|\S+)\s+([\w./-]+\.\w+)\s*$/.exec(p))) ops.push({ op: 'read', path: m[1] })
  }
  return ops
}

/** The file operations of one call, by the agents' tool names (see fidelity.mjs for the list). */
function callFileOps(name, input, shell) {
  const n = String(name).toLowerCase()
  const path = input?.file_path ?? input?.path ?? input?.filePath ?? input?.notebook_path
  if (['write', 'write_file', 'create_file', 'write_to_file'].includes(n) && path) return [{ op: 'write', path }]
  if (['edit', 'multiedit', 'replace', 'notebookedit', 'replace_in_file', 'edit_file'].includes(n) && path) return [{ op: 'write', path }]
  if (['read', 'read_file'].includes(n) && path) return [{ op: 'read', path }]
  if (['str_replace_editor', 'str_replace_based_edit_tool', 'file_editor'].includes(n) && path) {
    if (input.command === 'view') return [{ op: 'read', path }]
    if (['create', 'str_replace', 'insert', 'undo_edit'].includes(input.command)) return [{ op: 'write', path }]
  }
  const command = input?.command ?? input?.cmd
  if (typeof command === 'string' && ['bash', 'shell', 'terminal', 'run_shell_command', 'execute_command'].includes(n)) return shell(command)
  return []
}

/** Events of a native list (see the module docs), by message index. */
export function nativeEvents(messages) {
  const events = messages.map(() => [])
  const calls = new Map()
  const shell = shellReader()
  messages.forEach((m, i) => {
    const user = userText(m)
    if (user !== null) events[i].push({ kind: 'user', text: user })
    const uses = []
    if (Array.isArray(m.content)) for (const b of m.content) if (b.type === 'tool_use') uses.push({ id: b.id, name: b.name, input: b.input })
    for (const c of m.tool_calls ?? []) {
      let input
      try {
        input = JSON.parse(c.function?.arguments ?? '{}')
      } catch {
        input = {}
      }
      uses.push({ id: c.id, name: c.function?.name, input })
    }
    for (const u of uses) calls.set(u.id, u)
    const results = []
    if (m.role === 'tool') results.push({ id: m.tool_call_id, text: resultText(m.content), flagged: m.is_error === true })
    if (Array.isArray(m.content)) for (const b of m.content) if (b.type === 'tool_result') results.push({ id: b.tool_use_id, text: resultText(b.content), flagged: b.is_error === true })
    for (const r of results) {
      const call = calls.get(r.id)
      if (!call) continue
      const failed = saysFailure(r.text, r.flagged)
      const isShell = typeof (call.input?.command ?? call.input?.cmd) === 'string' && !['str_replace_editor', 'file_editor', 'str_replace_based_edit_tool'].includes(String(call.name).toLowerCase())
      if (!failed || isShell) for (const op of callFileOps(call.name, call.input, shell)) events[i].push({ kind: 'file', ...op })
      if (failed) events[i].push({ kind: 'failure', line: informativeLine(r.text), tool: call.name })
      if (!failed && PLAN_TOOLS.includes(String(call.name).toLowerCase())) {
        const list = call.input?.todos ?? call.input?.plan ?? []
        events[i].push({ kind: 'plan', items: list.map((t) => ({ text: t.content ?? t.step ?? t.description, status: t.status })) })
      }
    }
  })
  return events
}

// ---------------------------------------------------------------------------------------------
// Synthetic sessions

const WORDS = 'invoice ledger account settle batch retry queue parser token stream buffer schema migrate handler client server route cache payload adapter export import config module field record'.split(' ')

function prose(random, words) {
  const out = []
  for (let i = 0; i < words; i++) out.push(WORDS[Math.floor(random() * WORDS.length)])
  return out.join(' ')
}

function codeFile(random, path, lines) {
  const out = [`# ${path}`]
  for (let i = 0; i < lines; i++) out.push(`def ${WORDS[Math.floor(random() * WORDS.length)]}_${i}(x):  # ${prose(random, 6)}\n    return x + ${i}`)
  return out.join('\n') + '\n'
}

/**
 * The agents: their tool names and how they speak. `call(name, input)` and `output(text, failed)`
 * shape one step in the agent's vocabulary; `format` is the list's format.
 */
const AGENTS = {
  'claude-code': {
    format: 'anthropic',
    shell: (command) => ['Bash', { command, description: 'Run a command' }],
    read: (path) => ['Read', { file_path: path }],
    edit: (path) => ['Edit', { file_path: path, old_string: 'return x + 1', new_string: 'return x + 2' }],
    write: (path, content) => ['Write', { file_path: path, content }],
    plan: (items) => ['TodoWrite', { todos: items.map((i) => ({ content: i.text, status: i.status, activeForm: `Working on: ${i.text}` })) }],
    shellOutput: (text, code) => (code === 0 ? text : `Exit code ${code}\n${text}`),
    editFailure: 'String to replace not found in file.\nString: return x + 1',
    createFailure: 'EACCES: permission denied, open',
    flagsFailures: true,
  },
  codex: {
    format: 'openai-responses',
    shell: (command) => ['shell', { command: ['bash', '-lc', command], workdir: '/repo', timeout_ms: 120000 }],
    read: (path) => ['shell', { command: ['bash', '-lc', `cat ${path}`], workdir: '/repo' }],
    edit: (path) => ['apply_patch', { input: `*** Begin Patch\n*** Update File: ${path}\n@@\n-    return x + 1\n+    return x + 2\n*** End Patch\n` }],
    write: (path, content) => ['apply_patch', { input: `*** Begin Patch\n*** Add File: ${path}\n${content.split('\n').map((l) => `+${l}`).join('\n')}\n*** End Patch\n` }],
    plan: (items, explanation) => ['update_plan', { explanation, plan: items.map((i) => ({ step: i.text, status: i.status })) }],
    shellOutput: (text, code) => `Exit code: ${code}\nWall time: 0.4 seconds\nOutput:\n${text}`,
    editFailure: 'Exit code: 1\nWall time: 0.0 seconds\nOutput:\nerror: patch failed: context not found',
    createFailure: 'Exit code: 1\nWall time: 0.0 seconds\nOutput:\nerror: Permission denied (os error 13)',
    flagsFailures: false,
  },
  'gemini-cli': {
    format: 'gemini',
    shell: (command) => ['run_shell_command', { command, description: 'Run' }],
    read: (path) => ['read_file', { file_path: path }],
    edit: (path) => ['replace', { file_path: path, old_string: 'return x + 1', new_string: 'return x + 2' }],
    write: (path, content) => ['write_file', { file_path: path, content }],
    plan: (items) => ['write_todos', { todos: items.map((i) => ({ description: i.text, status: i.status })) }],
    shellOutput: (text, code, command) => `Command: ${command}\nDirectory: (root)\nOutput: ${text}\nError: (none)\nExit Code: ${code}\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 4242`,
    editFailure: 'Error: Failed to edit, 0 occurrences found for old_string in the file.',
    createFailure: 'Error: Permission denied writing the file.',
    flagsFailures: false,
  },
  opencode: {
    format: 'ai-sdk',
    shell: (command) => ['bash', { command, description: 'Run' }],
    read: (path) => ['read', { filePath: path }],
    edit: (path) => ['edit', { filePath: path, oldString: 'return x + 1', newString: 'return x + 2' }],
    write: (path, content) => ['write', { filePath: path, content }],
    plan: (items) => ['todowrite', { todos: items.map((i, n) => ({ content: i.text, status: i.status, priority: n < 2 ? 'high' : 'medium' })) }],
    shellOutput: (text, code) => (code === 0 ? text : `${text}\n\n<bash_metadata>\nexit code ${code}\n</bash_metadata>`),
    editFailure: 'oldString not found in content',
    createFailure: 'EACCES: permission denied',
    flagsFailures: true,
  },
  openhands: {
    format: 'openai',
    shell: (command) => ['terminal', { command, security_risk: 'LOW' }],
    read: (path) => ['str_replace_editor', { command: 'view', path, security_risk: 'LOW' }],
    edit: (path) => ['str_replace_editor', { command: 'str_replace', path, old_str: 'return x + 1', new_str: 'return x + 2', security_risk: 'LOW' }],
    write: (path, content) => ['str_replace_editor', { command: 'create', path, file_text: content, security_risk: 'LOW' }],
    // OpenHands' own plan tool, named to the library with `planTools` (the caller's option).
    plan: (items) => ['task_tracker', { command: 'plan', task_list: items.map((i) => ({ title: i.text, notes: '', status: { pending: 'todo', in_progress: 'in_progress', completed: 'done' }[i.status] })) }],
    shellOutput: (text, code) => `${text}\n[The command completed with exit code ${code}.]\n[Current working directory: /workspace/repo]`,
    editFailure: 'ERROR:\nNo replacement was performed, old_str `return x + 1` did not appear verbatim in the file.',
    createFailure: 'Ran into [Errno 13] Permission denied while trying to write to the file',
    flagsFailures: false,
    planTools: ['task_tracker'],
    openStatus: { pending: 'todo', in_progress: 'in_progress', completed: 'done' },
  },
}

export const AGENT_NAMES = Object.keys(AGENTS)

/** Writes one step (user text, or an assistant turn with a call and its output) in a format. */
function writer(format) {
  let n = 0
  const id = () => `call_${++n}`
  const user = (text) => {
    switch (format) {
      case 'openai-responses':
        return [{ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }]
      case 'gemini':
        return [{ role: 'user', parts: [{ text }] }]
      default:
        return [{ role: 'user', content: text }]
    }
  }
  const step = (say, name, input, output, failed, flagged) => {
    const callId = id()
    switch (format) {
      case 'anthropic':
        return [
          { role: 'assistant', content: [{ type: 'text', text: say }, { type: 'tool_use', id: callId, name, input }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: callId, content: output, ...(failed && flagged ? { is_error: true } : {}) }] },
        ]
      case 'openai':
        return [
          { role: 'assistant', content: say, tool_calls: [{ id: callId, type: 'function', function: { name, arguments: JSON.stringify(input) } }] },
          { role: 'tool', tool_call_id: callId, content: output },
        ]
      case 'openai-responses':
        return [
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: say }] },
          { type: 'function_call', call_id: callId, name, arguments: JSON.stringify(input) },
          { type: 'function_call_output', call_id: callId, output },
        ]
      case 'gemini':
        return [
          { role: 'model', parts: [{ text: say }, { functionCall: { id: callId, name, args: input } }] },
          { role: 'user', parts: [{ functionResponse: { id: callId, name, response: { output } } }] },
        ]
      case 'ai-sdk':
        return [
          { role: 'assistant', content: [{ type: 'text', text: say }, { type: 'tool-call', toolCallId: callId, toolName: name, input }] },
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: callId, toolName: name, output: failed && flagged ? { type: 'error-text', value: output } : { type: 'text', value: output } }] },
        ]
    }
  }
  return { user, step }
}

/**
 * A long synthetic session of `agent` (see AGENTS): `episodes` steps of reading, editing, running
 * tests and updating the plan, with, planted: the task (with its constraints) as the first user
 * message, more constraints later, a value the user changes (the dev server port), facts only a
 * tool output holds, failures whose informative line is known, a failed edit and a failed
 * create (whose files must never count as changed). Returns `{name, agent, format, messages,
 * events, planTools}`.
 */
export function syntheticSession(agent, { seed = 1, episodes = 150 } = {}) {
  const spec = AGENTS[agent]
  const random = mulberry32(seed * 7919 + agent.length)
  const { user, step } = writer(spec.format)
  const messages = []
  const events = []
  const push = (items, evs = []) => {
    // Events go with the item that completes the step (the output).
    items.forEach((item, k) => {
      messages.push(item)
      events.push(k === items.length - 1 ? evs : [])
    })
  }
  const files = Array.from({ length: 24 }, (_, i) => `src/billing/${WORDS[i % WORDS.length]}_${i}.py`)
  const task =
    `Task (${agent}, session ${seed}): migrate the billing service's invoice export from the REST client to the new gRPC client.\n` +
    'Constraints: do not change the public HTTP API of the service; keep Python 3.9 compatibility; every new function needs type hints.\n' +
    'Acceptance: `pytest tests/billing` passes and the export of invoice INV-2291 matches the golden file.'
  push(user(task), [{ kind: 'user', text: task }])
  let plan = [
    { text: 'Read the current REST export path', status: 'in_progress' },
    { text: 'Add the gRPC client wrapper', status: 'pending' },
    { text: 'Switch the invoice export to gRPC', status: 'pending' },
    { text: 'Update the golden-file test for INV-2291', status: 'pending' },
    { text: 'Run pytest tests/billing and fix failures', status: 'pending' },
  ]
  const planStep = (say) => {
    const [name, input] = spec.plan(plan, say)
    const output = agent === 'gemini-cli' ? `Successfully updated the todo list. The current list is now:\n${plan.map((p, i) => `${i + 1}. [${p.status}] ${p.text}`).join('\n')}` : 'Todos have been modified successfully.'
    push(step(say, name, input, output, false, false), [{ kind: 'plan', items: plan.map((p) => ({ ...p })) }])
  }
  planStep('Planning the migration.')
  const userLines = {
    12: 'Please never commit directly to main; open a branch for this.',
    30: 'Use port 8080 for the local dev server.',
    55: 'Make sure the export keeps the invoice currency as ISO 4217 codes.',
    80: 'Change of plan: use port 9091 for the local dev server, not 8080.',
    105: 'Avoid adding new dependencies beyond grpcio.',
    130: 'Only touch files under src/billing and tests/billing.',
  }
  const values = { 30: { key: 'port', value: '8080' }, 80: { key: 'port', value: '9091' } }
  let fact = 0
  let failure = 0
  for (let e = 1; e <= episodes; e++) {
    if (userLines[e]) {
      const evs = [{ kind: 'user', text: userLines[e] }]
      if (values[e]) evs.push({ kind: 'value', ...values[e], text: userLines[e] })
      push(user(userLines[e]), evs)
    }
    const file = files[Math.floor(random() * files.length)]
    const say = `${prose(random, 18)}.`
    const r = random()
    if (e % 17 === 0) {
      // Progress on the plan: the first open item done, the next in progress, sometimes a new one.
      const open = plan.findIndex((p) => p.status !== 'completed')
      if (open >= 0) plan[open].status = 'completed'
      const next = plan.findIndex((p) => p.status === 'pending')
      if (next >= 0) plan[next].status = 'in_progress'
      if (e % 34 === 0) plan.push({ text: `Follow-up ${e}: handle the ${WORDS[e % WORDS.length]} edge case in the gRPC export`, status: 'pending' })
      planStep('Updating the plan.')
    } else if (e % 23 === 0) {
      // A failure with a planted informative line.
      failure++
      const line = `E   AssertionError: invoice INV-${2200 + failure} total expected ${1000 + failure * 7} got ${990 + failure * 3}`
      const noise = Array.from({ length: 12 }, (_, i) => `tests/billing/test_export_${i}.py ${'.'.repeat(8)} [${Math.round(((i + 1) / 12) * 100)}%]`).join('\n')
      const body = `============================= test session starts ==============================\ncollected 96 items\n\n${noise}\n\n=================================== FAILURES ===================================\n    def test_invoice_total():\n>       assert total == expected\n${line}\n========================= 1 failed, 95 passed in 3.21s =========================`
      const command = 'pytest tests/billing -q'
      const [name, input] = spec.shell(command)
      push(step(say, name, input, spec.shellOutput(body, 1, command), true, spec.flagsFailures), [
        { kind: 'failure', line, tool: name },
        ...(agent === 'codex' ? [] : []),
      ])
    } else if (e === 40) {
      // A failed edit: the file is not modified.
      const target = 'src/billing/never_edited.py'
      const [name, input] = spec.edit(target)
      push(step(say, name, input, spec.editFailure, true, spec.flagsFailures), [{ kind: 'failure', line: informativeLine(spec.editFailure), tool: name, ambiguous: true }])
    } else if (e === 60) {
      const target = 'src/billing/never_created.py'
      const [name, input] = spec.write(target, 'x = 1\n')
      push(step(say, name, input, spec.createFailure, true, spec.flagsFailures), [{ kind: 'failure', line: informativeLine(spec.createFailure), tool: name, ambiguous: true }])
    } else if (r < 0.4) {
      const content = codeFile(random, file, 30)
      const factLine = e % 9 === 0 ? `# FACT-${++fact}: the ${WORDS[fact % WORDS.length]} service listens on shard-${fact * 13}.internal` : null
      const shown = factLine ? content.replace('\n', `\n${factLine}\n`) : content
      const [name, input] = spec.read(file)
      const output = agent === 'codex' ? spec.shellOutput(shown, 0) : agent === 'gemini-cli' ? shown : agent === 'openhands' ? `Here's the result of running \`cat -n\` on ${file}:\n${shown.split('\n').map((l, i) => `${String(i + 1).padStart(6)}\t${l}`).join('\n')}` : shown
      const evs = [{ kind: 'file', op: 'read', path: file }]
      if (factLine) evs.push({ kind: 'fact', text: factLine.slice(2) })
      push(step(say, name, input, output, false, false), evs)
    } else if (r < 0.6) {
      const [name, input] = spec.edit(file)
      const output = agent === 'codex' ? 'Exit code: 0\nWall time: 0.1 seconds\nOutput:\nSuccess. Updated the following files:\nM ' + file : agent === 'openhands' ? `The file ${file} has been edited.` : `The file ${file} has been updated.`
      push(step(say, name, input, output, false, false), [{ kind: 'file', op: 'write', path: file }])
    } else if (r < 0.68) {
      const created = `src/billing/grpc_${e}.py`
      const [name, input] = spec.write(created, codeFile(random, created, 12))
      const output = agent === 'codex' ? 'Exit code: 0\nWall time: 0.1 seconds\nOutput:\nSuccess. Updated the following files:\nA ' + created : `File created successfully at: ${created}`
      push(step(say, name, input, output, false, false), [{ kind: 'file', op: 'write', path: created }])
    } else {
      const command = `python -m pytest tests/billing/test_${WORDS[e % WORDS.length]}.py -q`
      const [name, input] = spec.shell(command)
      const out = `${'.'.repeat(20)}\n20 passed in 0.${e % 10}1s`
      push(step(say, name, input, spec.shellOutput(out, 0, command), false, false), [])
    }
  }
  // The session ends with the agent's last words (so the tail is not a bare tool result).
  const end = spec.format === 'openai-responses' ? [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Continuing with the migration.' }] }] : spec.format === 'gemini' ? [{ role: 'model', parts: [{ text: 'Continuing with the migration.' }] }] : [{ role: 'assistant', content: 'Continuing with the migration.' }]
  push(end, [])
  return { name: `synthetic-${agent}-${seed}`, agent, format: spec.format, messages, events, planTools: spec.planTools ?? [], syntheticOpen: spec.openStatus }
}
