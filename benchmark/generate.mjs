// A seeded, deterministic generator of realistic coding-agent conversations (Anthropic-style
// messages), used by the benchmark (`npm run bench`), the CLI's `demo` command and the tests.
//
//   import { generateConversation } from './benchmark/generate.mjs'
//   const messages = generateConversation({ targetTokens: 200_000, seed: 1 })
//
// What a conversation holds: a system prompt; user tasks in English and Chinese; assistant text,
// occasional thinking blocks and `tool_use` blocks (read_file, write_file, edit_file, bash, grep)
// with realistic inputs, sometimes several in parallel; the matching `tool_result` blocks in the
// next user message, in order (source code in several languages, JSON, logs, stack traces, test
// output; some with `is_error: true`). Every tool_use is answered, so the list is always valid.
//
// Generation stops as soon as the o200k_base token count (the library's own `countTokens`,
// counted message by message, which is exact because a list counts as the sum of its messages)
// reaches `targetTokens`; the last step may overshoot it by one step's tokens.
//
// No dependency but the library itself (loaded lazily from the package root), and no
// Math.random: the same seed gives the same conversation on every machine.
//
// CLI: node benchmark/generate.mjs [--tokens 200000] [--seed 1] [--out conversation.json]

import { createRequire } from 'node:module'
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { resolve } from 'node:path'

import { makeRandom, NOUNS, VERBS, ADJECTIVES, DIRS, LANGS, PEOPLE, MODULES, cap, ident, filePath, sentence, stringLiteral, tsStatement, rsStatement, pyStatement, goStatement, block, sourceFile, numbered, timestamp, logLines, stackTrace, testOutput, jsonValue, jsonDocument, grepOutput } from './generate-texts.mjs'

export { mulberry32 } from './generate-texts.mjs'

// ---------------------------------------------------------------------------------------------
// Tools: inputs and results

function toolUseId(r) {
  return `toolu_01${r.base62(22)}`
}

function bashCall(r) {
  const kind = r.weighted([[4, 'test'], [2, 'build'], [2, 'git'], [2, 'logs'], [1, 'ls'], [1, 'curl'], [1, 'install']])
  switch (kind) {
    case 'test': {
      const command = r.pick(['npm test', 'npx vitest run', 'cargo test --workspace', 'pytest -x -q', `npx vitest run ${filePath(r, 'ts')}`, `cargo test ${ident(r, 'snake', 2)} -- --nocapture`, `go test ./...`])
      const failing = r.chance(0.35)
      return { input: { command, description: 'Run the tests' }, content: testOutput(r, failing), isError: failing && r.chance(0.6) }
    }
    case 'build': {
      const failing = r.chance(0.3)
      const command = r.pick(['npm run build', 'cargo build --release', 'npx tsc --noEmit', 'go build ./...'])
      const content = failing
        ? Array.from({ length: r.int(1, 6) }, () => `${filePath(r, 'ts')}(${r.int(1, 500)},${r.int(1, 80)}): error TS${r.int(2000, 2800)}: ${r.pick([`Property '${ident(r)}' does not exist on type '${ident(r, 'pascal', 2)}'.`, `Argument of type 'string' is not assignable to parameter of type 'number'.`, `Cannot find name '${ident(r)}'.`])}`).join('\n')
        : `${command.startsWith('cargo') ? `   Compiling ${ident(r, 'kebab', 2)} v0.1.0 (/home/dev/project)\n    Finished \`release\` profile [optimized] target(s) in ${(r.next() * 90).toFixed(2)}s` : `> build\n> tsc -p .\n`}`
      return { input: { command, description: 'Build the project' }, content, isError: failing }
    }
    case 'git': {
      const command = r.pick(['git status', 'git diff --stat', `git log --oneline -n ${r.int(5, 30)}`, `git diff ${filePath(r)}`])
      let content
      if (command.startsWith('git log')) {
        content = Array.from({ length: r.int(5, 30) }, () => `${r.hex(7)} ${r.pick(['fix', 'feat', 'chore', 'refactor', 'test'])}(${r.pick(MODULES)}): ${r.pick(VERBS)} ${r.pick(ADJECTIVES)} ${r.pick(NOUNS)}`).join('\n')
      } else if (command.startsWith('git diff ') && !command.includes('--stat')) {
        content = `diff --git a/${command.slice(9)} b/${command.slice(9)}\nindex ${r.hex(7)}..${r.hex(7)} 100644\n--- a/${command.slice(9)}\n+++ b/${command.slice(9)}\n@@ -${r.int(1, 300)},${r.int(3, 12)} +${r.int(1, 300)},${r.int(3, 12)} @@\n${Array.from({ length: r.int(4, 30) }, () => `${r.pick([' ', ' ', '+', '-'])}${tsStatement(r, 2).split('\n')[0]}`).join('\n')}`
      } else {
        content = `On branch ${r.pick(['main', `fix/${ident(r, 'kebab', 2)}`, `feat/${ident(r, 'kebab', 2)}`])}\nChanges not staged for commit:\n${Array.from({ length: r.int(1, 8) }, () => `\tmodified:   ${filePath(r)}`).join('\n')}\n\nUntracked files:\n\t${filePath(r)}\n`
      }
      return { input: { command, description: 'Check the repository state' }, content, isError: false }
    }
    case 'logs': {
      const command = r.pick([`docker compose logs ${r.pick(MODULES)} --tail ${r.int(50, 300)}`, `tail -n ${r.int(50, 300)} logs/${r.pick(MODULES)}.log`, `kubectl logs deploy/${r.pick(MODULES)} --since=1h`])
      let content = logLines(r, r.int(20, 160))
      if (r.chance(0.3)) content += '\n' + stackTrace(r)
      return { input: { command, description: 'Read the service logs' }, content, isError: false }
    }
    case 'ls': {
      const dir = r.pick(DIRS)
      const content = `total ${r.int(8, 400)}\n` + Array.from({ length: r.int(4, 30) }, () => `${r.pick(['-rw-r--r--', 'drwxr-xr-x', '-rwxr-xr-x'])} 1 dev dev ${String(r.int(0, 90000)).padStart(6)} ${r.pick(['Jan', 'Mar', 'Jun', 'Sep', 'Nov'])} ${String(r.int(1, 28)).padStart(2)} ${String(r.int(0, 23)).padStart(2, '0')}:${String(r.int(0, 59)).padStart(2, '0')} ${filePath(r).split('/').pop()}`).join('\n')
      return { input: { command: `ls -la ${dir}` }, content, isError: false }
    }
    case 'curl': {
      const body = JSON.stringify(jsonDocument(r), null, r.chance(0.5) ? 2 : undefined)
      return { input: { command: `curl -s http://localhost:${r.int(3000, 9000)}/${r.pick(MODULES)}/${r.pick(NOUNS)}s | jq .`, description: 'Query the local API' }, content: body, isError: false }
    }
    default: {
      const content = `\nadded ${r.int(1, 400)} packages, and audited ${r.int(400, 1200)} packages in ${r.int(2, 40)}s\n\n${r.int(50, 200)} packages are looking for funding\n  run \`npm fund\` for details\n\nfound ${r.pick(['0 vulnerabilities', `${r.int(1, 9)} moderate severity vulnerabilities`])}`
      return { input: { command: `npm install ${ident(r, 'kebab', r.int(1, 2))}`, description: 'Install a dependency' }, content, isError: false }
    }
  }
}

function toolCall(r, files) {
  const name = r.weighted([[8, 'read_file'], [2, 'write_file'], [4, 'edit_file'], [6, 'bash'], [3, 'grep']])
  switch (name) {
    case 'read_file': {
      const path = files.length > 0 && r.chance(0.4) ? r.pick(files) : filePath(r)
      if (!files.includes(path)) files.push(path)
      if (r.chance(0.06)) {
        return { name, input: { path }, content: `Error: ENOENT: no such file or directory, open '/home/dev/project/${path}'`, isError: true }
      }
      const ext = path.slice(path.lastIndexOf('.') + 1)
      if (r.chance(0.1)) {
        const json = JSON.stringify(jsonDocument(r), null, 2)
        return { name, input: { path: path.replace(/\.\w+$/, '.json') }, content: numbered(json), isError: false }
      }
      const input = { path }
      let from = 1
      if (r.chance(0.25)) {
        from = r.int(1, 400)
        input.offset = from
        input.limit = r.int(50, 300)
      }
      const lines = r.weighted([[4, r.int(20, 80)], [4, r.int(80, 200)], [2, r.int(200, 450)]])
      const code = sourceFile(r, ext in LANGS ? path : 'x.ts', lines)
      return { name, input, content: numbered(code, from), isError: false }
    }
    case 'write_file': {
      const path = filePath(r)
      files.push(path)
      const content = sourceFile(r, path, r.int(15, 120))
      return { name, input: { path, content }, content: `File created successfully at: ${path} (${Buffer.byteLength(content)} bytes)`, isError: false }
    }
    case 'edit_file': {
      const path = files.length > 0 ? r.pick(files) : filePath(r)
      const statement = path.endsWith('.rs') ? rsStatement : path.endsWith('.py') ? pyStatement : path.endsWith('.go') ? goStatement : tsStatement
      const input = {
        path,
        old_string: block(r, statement, 1, '  '),
        new_string: block(r, statement, 1, '  '),
      }
      if (r.chance(0.1)) input.replace_all = true
      if (r.chance(0.12)) {
        return { name, input, content: `Error: old_string not found in ${path}. Make sure it matches the file exactly, including whitespace.`, isError: true }
      }
      return { name, input, content: `The file ${path} has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n${numbered(input.new_string, r.int(1, 400))}`, isError: false }
    }
    case 'bash': {
      const call = bashCall(r)
      return { name, input: call.input, content: call.content, isError: call.isError }
    }
    default: {
      const pattern = r.pick([ident(r), ident(r, 'snake'), `${ident(r)}\\(`, `TODO|FIXME`, `class ${ident(r, 'pascal', 2)}`])
      const input = { pattern, path: r.pick(['.', 'src', ...DIRS.slice(0, 6)]) }
      if (r.chance(0.5)) input.glob = r.pick(['*.ts', '*.rs', '*.py', '**/*.{ts,tsx}'])
      if (r.chance(0.3)) input.output_mode = 'content'
      const content = r.chance(0.1) ? 'No matches found' : grepOutput(r, pattern)
      return { name, input, content, isError: false }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Turns

const TASKS_EN = [
  (r, p) => `The ${r.pick(NOUNS)} ${r.pick(NOUNS)} in ${p} is broken: ${r.pick(['it returns stale data after a restart', 'requests time out under load', 'the tests fail on CI but pass locally', 'it double-counts retries', 'memory keeps growing'])}. Can you find out why and fix it? Add a regression test.`,
  (r, p) => `Please refactor ${p} so that ${ident(r)}() no longer depends on the global ${r.pick(NOUNS)}. Keep the public API the same.`,
  (r, p) => `Add a \`${ident(r)}\` option to ${p}. It should default to ${r.int(1, 1000)} and be validated (throw a clear error for negative values). Update the docs too.`,
  (r) => `CI is red on main. Here's the failing job output:\n\n\`\`\`\n${testOutput(r, true)}\n\`\`\`\n\nPlease fix it.`,
  (r, p) => `Users report this error in production:\n\n\`\`\`\n${stackTrace(r)}\n\`\`\`\n\nIt started after we deployed ${r.hex(7)}. The relevant code is probably in ${p}.`,
  (r, p) => `Can you write tests for ${p}? Cover the edge cases: empty input, a single ${r.pick(NOUNS)}, and more than ${r.int(100, 10000)} ${r.pick(NOUNS)}s.`,
  (r, p) => `Why is ${ident(r)} so slow? Profile it and make it at least ${r.int(2, 10)}x faster. The hot path is in ${p}.`,
]
const FOLLOW_UPS_EN = [
  (r) => `ok, looks good. now ${r.pick(VERBS)} the ${r.pick(NOUNS)} handling the same way and run the full test suite`,
  (r) => `Thanks. One more thing: the ${r.pick(NOUNS)} error message should say which ${r.pick(NOUNS)} failed.`,
]
const TASKS_ZH = [
  (r, p) => `请帮我看一下 ${p} 里的 ${ident(r)} 函数，${r.pick(['它在并发请求时会返回错误的结果', '重启以后缓存的数据不对', '在 CI 上测试失败，但本地可以通过', '内存一直在增长', '处理中文文件名的时候会报错'])}。找到原因并修复，顺便加一个回归测试。`,
  (r, p) => `把 ${p} 重构一下：${ident(r)}() 不要再依赖全局的 ${r.pick(NOUNS)}，对外的接口保持不变。改完之后跑一遍测试。`,
  (r, p) => `给 ${p} 加一个 \`${ident(r)}\` 参数，默认值是 ${r.int(1, 1000)}，负数要报一个清楚的错误。文档也要更新。`,
  (r) => `线上报了这个错误：\n\n\`\`\`\n${stackTrace(r)}\n\`\`\`\n\n是部署 ${r.hex(7)} 之后开始的，麻烦排查一下。`,
  (r, p) => `${p} 的性能太差了，处理 ${r.int(1, 50)} 万条 ${r.pick(NOUNS)} 要好几秒。请先分析瓶颈在哪里，再优化，至少快 ${r.int(2, 10)} 倍。`,
]
const FOLLOW_UPS_ZH = [
  () => `可以，就按这个方案来。改完记得更新 CHANGELOG，并且确认所有测试都通过。`,
  (r) => `继续。另外 ${r.pick(NOUNS)} 的错误信息写得清楚一点，用户看不懂现在的提示。`,
]

const ASSISTANT_STEPS = [
  (r, p) => `I'll start by reading ${p} to see how the ${r.pick(NOUNS)} is ${r.pick(VERBS)}d.`,
  (r) => `Let me run the tests to see the current state.`,
  (r, p) => `Found it: \`${ident(r)}\` in ${p} ${r.pick(['never resets the counter', 'reads the cached value before it is refreshed', 'swallows the error from the retry', 'sorts by the wrong key'])}. I'll fix that and add a test.`,
  (r) => `The build fails because of a type error. I'll update the signature of \`${ident(r)}\`.`,
  (r) => `Let me search for other callers of \`${ident(r)}\` before changing it.`,
  (r) => `${sentence(r)}. I'll check the logs to confirm.`,
  () => `Now let me verify the fix.`,
]
const ASSISTANT_STEPS_ZH = [
  (r, p) => `我先看一下 ${p}，弄清楚 ${r.pick(NOUNS)} 是怎么处理的。`,
  () => `先跑一下测试，看看现在的状态。`,
  (r, p) => `找到原因了：${p} 里的 \`${ident(r)}\` ${r.pick(['没有重置计数器', '在刷新之前就读取了缓存的值', '吞掉了重试时的错误', '按错误的字段排序'])}。我来修复它并加一个测试。`,
  () => `现在验证一下修复是否有效。`,
]

function finalReport(r, files, zh) {
  const changed = files.slice(-r.int(1, 4))
  if (zh) {
    return `已经完成。\n\n**改动：**\n${changed.map((f) => `- \`${f}\`：${r.pick(['修复了', '重构了', '补充了', '简化了'])} ${ident(r)} 的逻辑`).join('\n')}\n\n**测试：** 全部 ${r.int(20, 400)} 个测试通过，新增了 ${r.int(1, 6)} 个回归测试。\n\n${r.chance(0.5) ? `需要注意：${sentence(r)}。` : ''}`
  }
  return `Done. Summary of the changes:\n\n${changed.map((f) => `- \`${f}\`: ${r.pick(['fixed', 'refactored', 'extended', 'simplified'])} ${ident(r)} (${sentence(r).toLowerCase()})`).join('\n')}\n\nAll ${r.int(20, 400)} tests pass, including ${r.int(1, 6)} new regression tests.${r.chance(0.4) ? `\n\nOne thing to watch: ${sentence(r)}.` : ''}`
}

function thinking(r) {
  const parts = []
  for (let i = 0, n = r.int(2, 8); i < n; i++) parts.push(sentence(r) + '.')
  parts.push(`So the fix is to ${r.pick(VERBS)} the ${r.pick(NOUNS)} in \`${ident(r)}\` before ${r.pick(VERBS)}ing it, and to keep the ${r.pick(NOUNS)} check.`)
  return parts.join(' ')
}

const SYSTEM_PROMPT = `You are an expert software engineering agent working in the user's repository at /home/dev/project.

# Tools
- read_file(path, offset?, limit?): read a file; output is numbered like \`cat -n\`.
- write_file(path, content): create or overwrite a file.
- edit_file(path, old_string, new_string, replace_all?): replace an exact string in a file.
- bash(command, description?, timeout?): run a shell command; output is truncated at 30000 characters.
- grep(pattern, path, glob?, output_mode?): search file contents with ripgrep.

# Rules
1. Read a file before editing it. Prefer editing existing files to creating new ones.
2. Run the tests after every change and report failures honestly; never claim a test passes without running it.
3. Keep changes minimal and focused on the task; follow the repository's style (formatting, naming, error handling).
4. Never commit, push or rewrite git history unless the user asks.
5. Answer in the user's language (English or 中文).
6. When a command fails, read the error carefully, form a hypothesis, verify it, then fix the root cause.
7. Do not add secrets, tokens or credentials to files or commands.

# Environment
Platform: linux. Shell: bash. Node 20, Rust 1.88, Python 3.12, Go 1.23.
The repository is a monorepo with TypeScript packages (packages/*), Rust crates (crates/*), Python services (app/) and Go workers (internal/, pkg/).
`

// ---------------------------------------------------------------------------------------------
// The generator

let libraryCountTokens = null
function defaultCountTokens() {
  if (!libraryCountTokens) {
    const require = createRequire(import.meta.url)
    libraryCountTokens = require('../index.js').countTokens
  }
  return libraryCountTokens
}

/**
 * Generates a conversation and returns `{ messages, tokens }` (tokens: the exact o200k_base count).
 * @param {{ targetTokens?: number, seed?: number, countTokens?: (messages: object[]) => number }} [options]
 *   `countTokens` defaults to the library's own; pass another exact counter to avoid loading it.
 */
export function generateConversationWithCount({ targetTokens = 200_000, seed = 1, countTokens } = {}) {
  if (!(targetTokens >= 0)) throw new TypeError(`targetTokens must be a non-negative number, got ${targetTokens}`)
  const count = countTokens ?? defaultCountTokens()
  const r = makeRandom(seed)
  const messages = []
  let tokens = 0
  const push = (message) => {
    messages.push(message)
    tokens += count([message])
  }
  push({ role: 'system', content: SYSTEM_PROMPT })
  const files = []
  while (tokens < targetTokens) {
    // One task: a user request, several agent steps (tool calls and their results), a report.
    const zh = r.chance(0.3)
    const path = files.length > 0 && r.chance(0.3) ? r.pick(files) : filePath(r)
    const followUp = messages.length > 1 && r.chance(0.2)
    const task = r.pick(followUp ? (zh ? FOLLOW_UPS_ZH : FOLLOW_UPS_EN) : zh ? TASKS_ZH : TASKS_EN)(r, path)
    push({ role: 'user', content: r.chance(0.8) ? task : [{ type: 'text', text: task }] })
    const steps = r.int(2, 12)
    for (let step = 0; step < steps && tokens < targetTokens; step++) {
      const content = []
      if (r.chance(0.15)) content.push({ type: 'thinking', thinking: thinking(r), signature: r.base62(r.int(200, 400)) })
      if (r.chance(0.75)) content.push({ type: 'text', text: r.pick(zh ? ASSISTANT_STEPS_ZH : ASSISTANT_STEPS)(r, path) })
      const parallel = r.chance(0.2) ? r.int(2, 4) : 1
      const calls = []
      for (let i = 0; i < parallel; i++) {
        const call = toolCall(r, files)
        call.id = toolUseId(r)
        calls.push(call)
        content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.input })
      }
      push({ role: 'assistant', content })
      push({
        role: 'user',
        content: calls.map((call) => {
          const block = { type: 'tool_result', tool_use_id: call.id }
          // Most results are strings; some are lists of text blocks, as some SDKs send them.
          block.content = r.chance(0.85) ? call.content : [{ type: 'text', text: call.content }]
          if (call.isError) block.is_error = true
          return block
        }),
      })
    }
    if (tokens < targetTokens) push({ role: 'assistant', content: [{ type: 'text', text: finalReport(r, files, zh) }] })
  }
  return { messages, tokens }
}

/**
 * Generates a conversation of about `targetTokens` o200k_base tokens (it stops at the first step
 * that reaches the target). Same seed, same conversation.
 * @param {{ targetTokens?: number, seed?: number, countTokens?: (messages: object[]) => number }} [options]
 * @returns {object[]} Anthropic-style messages, starting with a `system` message.
 */
export function generateConversation(options) {
  return generateConversationWithCount(options).messages
}

/**
 * Writes a generated conversation to `path` as JSON (pretty when `pretty`), and returns
 * `{ path, tokens, messages, bytes }` (messages: how many).
 */
export function writeConversation(path, { targetTokens = 200_000, seed = 1, pretty = false, countTokens } = {}) {
  const { messages, tokens } = generateConversationWithCount({ targetTokens, seed, countTokens })
  const text = JSON.stringify(messages, null, pretty ? 2 : undefined)
  writeFileSync(path, text)
  return { path, tokens, messages: messages.length, bytes: Buffer.byteLength(text) }
}

// CLI: node benchmark/generate.mjs [--tokens N] [--seed S] [--out file.json] [--pretty]
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const flag = (name, fallback) => {
    const i = args.indexOf(name)
    return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback
  }
  const targetTokens = Number(flag('--tokens', '200000'))
  const seed = Number(flag('--seed', '1'))
  const out = flag('--out', `conversation-${targetTokens}-${seed}.json`)
  const info = writeConversation(out, { targetTokens, seed, pretty: args.includes('--pretty') })
  console.log(`${info.path}: ${info.messages} messages, ${info.tokens} o200k tokens, ${info.bytes} bytes`)
}
