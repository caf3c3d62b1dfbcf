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

// ---------------------------------------------------------------------------------------------
// Randomness

/** mulberry32: a small, fast, seeded 32-bit PRNG returning floats in [0, 1). */
export function mulberry32(seed) {
  let a = seed >>> 0
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function makeRandom(seed) {
  // Mix the seed so that nearby seeds give unrelated streams.
  let s = (Number(seed) | 0) ^ 0x9e3779b9
  s = Math.imul(s ^ (s >>> 16), 0x85ebca6b)
  s = Math.imul(s ^ (s >>> 13), 0xc2b2ae35)
  const next = mulberry32(s ^ (s >>> 16))
  const r = {
    next,
    /** Integer in [min, max]. */
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (list) => list[Math.floor(next() * list.length)],
    chance: (p) => next() < p,
    hex: (n) => {
      let out = ''
      for (let i = 0; i < n; i++) out += '0123456789abcdef'[Math.floor(next() * 16)]
      return out
    },
    base62: (n) => {
      const abc = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
      let out = ''
      for (let i = 0; i < n; i++) out += abc[Math.floor(next() * 62)]
      return out
    },
    /** Picks by weight from [[weight, value], …]. */
    weighted: (entries) => {
      let total = 0
      for (const [w] of entries) total += w
      let x = next() * total
      for (const [w, v] of entries) {
        x -= w
        if (x < 0) return v
      }
      return entries[entries.length - 1][1]
    },
  }
  return r
}

// ---------------------------------------------------------------------------------------------
// Vocabulary

const NOUNS = [
  'user', 'session', 'token', 'cache', 'config', 'request', 'response', 'handler', 'buffer', 'stream',
  'parser', 'index', 'message', 'summary', 'budget', 'limit', 'ratio', 'archive', 'event', 'queue',
  'worker', 'payload', 'retry', 'client', 'server', 'router', 'schema', 'record', 'entry', 'batch',
  'chunk', 'window', 'context', 'tool', 'result', 'error', 'state', 'store', 'model', 'provider',
  'agent', 'turn', 'count', 'offset', 'cursor', 'file', 'path', 'line', 'span', 'invoice', 'order',
  'account', 'tenant', 'plugin', 'widget', 'metric', 'report', 'job', 'task', 'lease', 'lock',
  'snapshot', 'migration', 'query', 'row', 'column', 'table', 'field', 'key', 'value', 'node',
  'edge', 'graph', 'timer', 'deadline', 'signal', 'channel', 'socket', 'frame', 'header', 'body',
]
const VERBS = [
  'get', 'set', 'load', 'save', 'parse', 'build', 'create', 'update', 'delete', 'find', 'resolve',
  'validate', 'compute', 'flush', 'merge', 'split', 'render', 'emit', 'handle', 'fetch', 'apply',
  'normalize', 'encode', 'decode', 'collect', 'schedule', 'retry', 'count', 'trim', 'compact',
  'register', 'dispatch', 'serialize', 'hydrate', 'refresh', 'sync', 'prune', 'estimate', 'open', 'close',
]
const ADJECTIVES = [
  'pending', 'active', 'stale', 'raw', 'cached', 'next', 'last', 'max', 'min', 'total', 'local',
  'remote', 'default', 'current', 'previous', 'dirty', 'visible', 'partial', 'retained', 'expired',
]
const DIRS = [
  'src', 'src/lib', 'src/core', 'src/api', 'src/utils', 'src/services', 'src/components', 'src/server',
  'lib', 'packages/core/src', 'packages/web/src', 'crates/core/src', 'crates/cli/src', 'app', 'app/models',
  'internal/store', 'internal/http', 'pkg/worker', 'tests', 'test/unit', 'scripts', 'server/routes',
]
const LANGS = {
  ts: 'typescript', tsx: 'typescript', js: 'javascript', rs: 'rust', py: 'python', go: 'go',
}
const PEOPLE = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi', 'ivan', 'judy']
const MODULES = ['api', 'db', 'auth', 'queue', 'cache', 'scheduler', 'billing', 'search', 'ingest', 'gateway']

const cap = (s) => s[0].toUpperCase() + s.slice(1)

function ident(r, style = 'camel', words = r.int(1, 3)) {
  const parts = []
  if (r.chance(0.5)) parts.push(r.pick(VERBS))
  else if (r.chance(0.3)) parts.push(r.pick(ADJECTIVES))
  while (parts.length < words) parts.push(r.pick(NOUNS))
  switch (style) {
    case 'snake':
      return parts.join('_')
    case 'pascal':
      return parts.map(cap).join('')
    case 'kebab':
      return parts.join('-')
    case 'upper':
      return parts.join('_').toUpperCase()
    default:
      return parts[0] + parts.slice(1).map(cap).join('')
  }
}

function filePath(r, ext) {
  ext = ext ?? r.weighted([[5, 'ts'], [2, 'tsx'], [1, 'js'], [3, 'rs'], [3, 'py'], [2, 'go']])
  const dir = r.pick(DIRS)
  const style = ext === 'ts' || ext === 'tsx' || ext === 'js' ? (r.chance(0.5) ? 'kebab' : 'camel') : 'snake'
  let name = ident(r, style, r.int(1, 2))
  if (ext === 'tsx') name = ident(r, 'pascal', 2)
  if (r.chance(0.12)) name += ext === 'py' ? '_test' : ext === 'go' ? '_test' : ext === 'rs' ? '' : '.test'
  return `${dir}/${name}.${ext}`
}

function sentence(r) {
  const noun = r.pick(NOUNS)
  const other = r.pick(NOUNS)
  return r.pick([
    `The ${noun} ${r.pick(['is', 'gets', 'ends up'])} ${r.pick(ADJECTIVES)} after the ${other} is ${r.pick(VERBS)}d`,
    `We ${r.pick(VERBS)} the ${noun} before the ${other} so the ${r.pick(NOUNS)} stays consistent`,
    `If the ${noun} is missing, ${ident(r)}() falls back to the ${r.pick(ADJECTIVES)} ${other}`,
    `This keeps the ${noun} bounded by ${r.int(2, 4096)} entries`,
    `Each ${noun} carries its own ${other} id, so ${r.pick(VERBS)}ing twice is harmless`,
    `The ${noun} ${other} has to stay below ${r.int(1, 64)} ${r.pick(['MB', 'KB', 'ms', 'seconds', 'items'])}`,
  ])
}

// ---------------------------------------------------------------------------------------------
// Source code

function stringLiteral(r) {
  return r.pick([
    () => `${r.pick(NOUNS)} not found`,
    () => `invalid ${r.pick(NOUNS)}: expected ${r.pick(['a string', 'a number', 'an array', 'an object'])}`,
    () => `/${r.pick(MODULES)}/${r.pick(NOUNS)}s/${r.int(1, 999)}`,
    () => `${r.pick(MODULES)}.${ident(r, 'snake', 2)}`,
    () => `failed to ${r.pick(VERBS)} ${r.pick(NOUNS)}`,
    () => `${r.pick(ADJECTIVES)}-${r.pick(NOUNS)}-${r.hex(6)}`,
  ])()
}

function tsStatement(r, depth) {
  const a = ident(r), b = ident(r), c = ident(r, 'camel', 1)
  const n = r.int(0, 5000)
  const options = [
    () => `const ${a} = ${b}(${c}, ${n})`,
    () => `const ${a} = await this.${b}.${r.pick(VERBS)}(${c})`,
    () => `let ${a}: ${ident(r, 'pascal', 2)} | undefined = ${r.chance(0.5) ? 'undefined' : `${b}.get('${c}')`}`,
    () => `${a}.${r.pick(VERBS)}(${c}, { ${ident(r)}: ${n}, ${ident(r)}: '${stringLiteral(r)}' })`,
    () => `if (!${a}) throw new ${r.pick(['Error', 'TypeError', 'RangeError'])}(\`${stringLiteral(r)}: \${${c}}\`)`,
    () => `logger.${r.pick(['debug', 'info', 'warn'])}('${stringLiteral(r)}', { ${c}, ${ident(r)} })`,
    () => `${a} += ${b}.length * ${r.int(2, 16)}`,
    () => `return ${a}.filter((${c}) => ${c}.${ident(r)} ${r.pick(['>', '<', '===', '!=='])} ${n})`,
    () => `const { ${ident(r)}, ${ident(r)} } = ${c}`,
    () => `// ${sentence(r)}.`,
  ]
  if (depth < 2) {
    options.push(
      () => `if (${a}.${ident(r)} ${r.pick(['>', '>=', '<', '==='])} ${n}) {\n${block(r, tsStatement, depth + 1, '  ')}\n}`,
      () => `for (const ${c} of ${a}) {\n${block(r, tsStatement, depth + 1, '  ')}\n}`,
      () => `try {\n${block(r, tsStatement, depth + 1, '  ')}\n} catch (error) {\n  ${c}.${r.pick(VERBS)}(error)\n}`,
    )
  }
  return r.pick(options)()
}

function rsStatement(r, depth) {
  const a = ident(r, 'snake'), b = ident(r, 'snake'), c = ident(r, 'snake', 1)
  const n = r.int(0, 5000)
  const options = [
    () => `let ${a} = ${b}(&${c}, ${n})?;`,
    () => `let mut ${a}: Vec<${ident(r, 'pascal', 2)}> = Vec::with_capacity(${n});`,
    () => `self.${a}.${r.pick(['push', 'insert', 'extend', 'retain'])}(${c});`,
    () => `tracing::${r.pick(['debug', 'info', 'warn'])}!(${c}, "${stringLiteral(r)}");`,
    () => `let ${a} = ${c}.iter().map(|x| x.${b}).sum::<usize>();`,
    () => `if ${a}.is_empty() {\n    return Err(Error::${ident(r, 'pascal', 2)}(format!("${stringLiteral(r)}: {}", ${c})));\n}`,
    () => `let ${a} = ${c}.get("${ident(r, 'snake', 1)}").and_then(Value::as_str).unwrap_or("");`,
    () => `// ${sentence(r)}.`,
  ]
  if (depth < 2) {
    options.push(
      () => `for ${c} in &${a} {\n${block(r, rsStatement, depth + 1, '    ')}\n}`,
      () => `match ${a} {\n    Some(${c}) => {\n${block(r, rsStatement, depth + 2, '        ')}\n    }\n    None => return Ok(${n}),\n}`,
    )
  }
  return r.pick(options)()
}

function pyStatement(r, depth) {
  const a = ident(r, 'snake'), b = ident(r, 'snake'), c = ident(r, 'snake', 1)
  const n = r.int(0, 5000)
  const options = [
    () => `${a} = ${b}(${c}, ${n})`,
    () => `${a} = self.${b}.get("${ident(r, 'snake', 1)}", ${r.pick(['None', '0', '[]', '{}'])})`,
    () => `logger.${r.pick(['debug', 'info', 'warning'])}("${stringLiteral(r)} %s", ${c})`,
    () => `${a} = [x.${b} for x in ${c} if x.${ident(r, 'snake', 1)} > ${n}]`,
    () => `raise ${r.pick(['ValueError', 'KeyError', 'RuntimeError'])}(f"${stringLiteral(r)}: {${c}!r}")`,
    () => `${a}.update({"${ident(r, 'snake', 1)}": ${n}, "${ident(r, 'snake', 1)}": ${c}})`,
    () => `# ${sentence(r)}.`,
  ]
  if (depth < 2) {
    options.push(
      () => `if ${a} is None:\n${block(r, pyStatement, depth + 1, '    ')}`,
      () => `for ${c} in ${a}:\n${block(r, pyStatement, depth + 1, '    ')}`,
      () => `with open(${c}, "${r.pick(['r', 'w', 'rb'])}") as fh:\n${block(r, pyStatement, depth + 1, '    ')}`,
    )
  }
  return r.pick(options)()
}

function goStatement(r, depth) {
  const a = ident(r), b = ident(r, 'pascal'), c = ident(r, 'camel', 1)
  const n = r.int(0, 5000)
  const options = [
    () => `${a}, err := ${c}.${b}(ctx, ${n})\nif err != nil {\n\treturn nil, fmt.Errorf("${stringLiteral(r)}: %w", err)\n}`,
    () => `${a} := make([]${ident(r, 'pascal', 2)}, 0, ${n})`,
    () => `log.Printf("${stringLiteral(r)}: %v", ${c})`,
    () => `${a} = append(${a}, ${c}.${b})`,
    () => `// ${sentence(r)}.`,
  ]
  if (depth < 2) {
    options.push(
      () => `for _, ${c} := range ${a} {\n${block(r, goStatement, depth + 1, '\t')}\n}`,
      () => `if ${a} == nil {\n${block(r, goStatement, depth + 1, '\t')}\n}`,
    )
  }
  return r.pick(options)()
}

function block(r, statement, depth, indent) {
  const lines = []
  const count = r.int(1, depth === 0 ? 7 : 3)
  for (let i = 0; i < count; i++) lines.push(statement(r, depth))
  return lines
    .join('\n')
    .split('\n')
    .map((line) => indent + line)
    .join('\n')
}

function sourceFile(r, path, minLines) {
  const ext = path.slice(path.lastIndexOf('.') + 1)
  const lang = LANGS[ext] ?? 'typescript'
  const parts = []
  let lines = 0
  const add = (text) => {
    parts.push(text)
    lines += text.split('\n').length
  }
  if (lang === 'typescript' || lang === 'javascript') {
    add(`import { ${ident(r)}, ${ident(r)} } from '${r.pick(['../', './', '@/'])}${ident(r, 'kebab', 2)}'`)
    add(`import type { ${ident(r, 'pascal', 2)} } from './types'\n`)
    add(`export interface ${ident(r, 'pascal', 2)} {\n${Array.from({ length: r.int(2, 6) }, () => `  ${ident(r)}${r.chance(0.3) ? '?' : ''}: ${r.pick(['string', 'number', 'boolean', 'string[]', `Map<string, ${ident(r, 'pascal', 1)}>`])}`).join('\n')}\n}\n`)
    while (lines < minLines) {
      if (r.chance(0.3)) {
        add(`export class ${ident(r, 'pascal', 2)} {\n  private ${ident(r)} = new Map<string, number>()\n\n  ${ident(r)}(${ident(r, 'camel', 1)}: string): number {\n${block(r, tsStatement, 0, '    ')}\n    return ${r.int(0, 100)}\n  }\n}\n`)
      } else {
        add(`${r.chance(0.7) ? 'export ' : ''}${r.chance(0.4) ? 'async ' : ''}function ${ident(r)}(${ident(r, 'camel', 1)}: ${ident(r, 'pascal', 2)}, ${ident(r, 'camel', 1)} = ${r.int(1, 500)}) {\n${block(r, tsStatement, 0, '  ')}\n}\n`)
      }
    }
  } else if (lang === 'rust') {
    add(`use std::collections::${r.pick(['HashMap', 'BTreeMap', 'HashSet'])};\nuse crate::${ident(r, 'snake', 1)}::{${ident(r, 'pascal', 2)}, Error};\n`)
    add(`#[derive(Debug, Clone, Default)]\npub struct ${ident(r, 'pascal', 2)} {\n${Array.from({ length: r.int(2, 5) }, () => `    pub ${ident(r, 'snake')}: ${r.pick(['usize', 'String', 'Option<u64>', 'Vec<String>', 'bool'])},`).join('\n')}\n}\n`)
    while (lines < minLines) {
      add(`pub fn ${ident(r, 'snake')}(${ident(r, 'snake', 1)}: &${ident(r, 'pascal', 2)}, ${ident(r, 'snake', 1)}: usize) -> Result<usize, Error> {\n${block(r, rsStatement, 0, '    ')}\n    Ok(${r.int(0, 100)})\n}\n`)
      if (r.chance(0.15)) {
        add(`#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn ${ident(r, 'snake', 3)}() {\n        assert_eq!(${ident(r, 'snake')}(&Default::default(), ${r.int(0, 99)}).unwrap(), ${r.int(0, 99)});\n    }\n}\n`)
      }
    }
  } else if (lang === 'python') {
    add(`from __future__ import annotations\n\nimport ${r.pick(['json', 'logging', 'os', 're', 'asyncio'])}\nfrom .${ident(r, 'snake', 1)} import ${ident(r, 'pascal', 2)}\n\nlogger = logging.getLogger(__name__)\n`)
    if (r.chance(0.25)) {
      // A tokenizer test: special-token text inside source code is ordinary text.
      add(`def test_special_tokens_are_text():\n    assert count("<|endoftext|> and <|fim_prefix|>") == ${r.int(8, 14)}\n`)
    }
    while (lines < minLines) {
      if (r.chance(0.3)) {
        add(`class ${ident(r, 'pascal', 2)}:\n    """${sentence(r)}."""\n\n    def ${ident(r, 'snake')}(self, ${ident(r, 'snake', 1)}):\n${block(r, pyStatement, 0, '        ')}\n        return ${r.int(0, 100)}\n`)
      } else {
        add(`def ${ident(r, 'snake')}(${ident(r, 'snake', 1)}, ${ident(r, 'snake', 1)}=${r.int(1, 500)}):\n    """${sentence(r)}."""\n${block(r, pyStatement, 0, '    ')}\n`)
      }
    }
  } else {
    add(`package ${ident(r, 'snake', 1)}\n\nimport (\n\t"context"\n\t"fmt"\n\t"log"\n)\n`)
    while (lines < minLines) {
      add(`func ${ident(r, 'pascal')}(ctx context.Context, ${ident(r, 'camel', 1)} *${ident(r, 'pascal', 2)}) ([]${ident(r, 'pascal', 1)}, error) {\n${block(r, goStatement, 0, '\t')}\n\treturn nil, nil\n}\n`)
    }
  }
  return parts.join('\n')
}

function numbered(text, from = 1) {
  return text
    .split('\n')
    .map((line, i) => `${String(i + from).padStart(6)}\t${line}`)
    .join('\n')
}

// ---------------------------------------------------------------------------------------------
// Tool outputs

function timestamp(r) {
  const p = (n, w = 2) => String(n).padStart(w, '0')
  return `2025-${p(r.int(1, 12))}-${p(r.int(1, 28))}T${p(r.int(0, 23))}:${p(r.int(0, 59))}:${p(r.int(0, 59))}.${p(r.int(0, 999), 3)}Z`
}

function logLines(r, count) {
  const lines = []
  for (let i = 0; i < count; i++) {
    const level = r.weighted([[10, 'INFO'], [4, 'DEBUG'], [2, 'WARN'], [1, 'ERROR']])
    const module = r.pick(MODULES)
    const message = r.pick([
      () => `${r.pick(VERBS)} ${r.pick(NOUNS)} ok`,
      () => `request completed status=${r.pick([200, 200, 200, 201, 204, 400, 404, 500, 503])} method=${r.pick(['GET', 'POST', 'PUT', 'DELETE'])} path=/${r.pick(MODULES)}/${r.pick(NOUNS)}s/${r.int(1, 99999)}`,
      () => `${stringLiteral(r)} attempt=${r.int(1, 5)} backoff_ms=${r.int(100, 8000)}`,
      () => `pool stats active=${r.int(0, 64)} idle=${r.int(0, 64)} waiting=${r.int(0, 12)}`,
      () => `slow query took ${r.int(200, 9000)}ms: SELECT ${ident(r, 'snake', 1)}, ${ident(r, 'snake', 1)} FROM ${ident(r, 'snake', 1)}s WHERE id = $1`,
      () => `user=${r.pick(PEOPLE)}@example.com tenant=${r.hex(8)} ${r.pick(VERBS)}d ${r.int(1, 500)} ${r.pick(NOUNS)}s`,
    ])()
    lines.push(`${timestamp(r)} ${level.padEnd(5)} [${module}] ${message} request_id=${r.hex(16)} duration_ms=${r.int(0, 2500)}`)
  }
  return lines.join('\n')
}

function stackTrace(r) {
  const kind = r.pick(['node', 'python', 'rust'])
  const frames = r.int(4, 14)
  if (kind === 'node') {
    const head = r.pick([
      `TypeError: Cannot read properties of undefined (reading '${ident(r)}')`,
      `Error: ${stringLiteral(r)}`,
      `RangeError: Maximum call stack size exceeded`,
      `SyntaxError: Unexpected token '}' in JSON at position ${r.int(1, 90000)}`,
    ])
    const lines = [head]
    for (let i = 0; i < frames; i++) {
      lines.push(r.chance(0.7)
        ? `    at ${r.chance(0.5) ? ident(r, 'pascal', 2) + '.' : ''}${ident(r)} (/home/dev/project/${filePath(r, 'ts')}:${r.int(1, 900)}:${r.int(1, 80)})`
        : `    at process.processTicksAndRejections (node:internal/process/task_queues:${r.int(60, 105)}:${r.int(5, 9)})`)
    }
    return lines.join('\n')
  }
  if (kind === 'python') {
    const lines = ['Traceback (most recent call last):']
    for (let i = 0; i < frames; i++) {
      lines.push(`  File "/home/dev/project/${filePath(r, 'py')}", line ${r.int(1, 900)}, in ${ident(r, 'snake')}`)
      lines.push(`    ${pyStatement(r, 2).split('\n')[0]}`)
    }
    lines.push(`${r.pick(['KeyError', 'ValueError', 'AttributeError', 'TypeError'])}: ${stringLiteral(r)}`)
    return lines.join('\n')
  }
  const lines = [
    `thread '${r.chance(0.5) ? 'main' : `tokio-runtime-worker`}' panicked at ${filePath(r, 'rs')}:${r.int(1, 900)}:${r.int(1, 80)}:`,
    `called \`Result::unwrap()\` on an \`Err\` value: ${ident(r, 'pascal', 2)}("${stringLiteral(r)}")`,
    'stack backtrace:',
  ]
  for (let i = 0; i < frames; i++) {
    lines.push(`  ${String(i).padStart(2)}: ${ident(r, 'snake', 1)}::${ident(r, 'snake')}::${ident(r, 'snake')}`)
    lines.push(`             at ./${filePath(r, 'rs')}:${r.int(1, 900)}:${r.int(1, 80)}`)
  }
  lines.push('note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.')
  return lines.join('\n')
}

function testOutput(r, failing) {
  const style = r.pick(['vitest', 'cargo', 'pytest'])
  const lines = []
  const total = r.int(8, 60)
  const failed = failing ? r.int(1, Math.min(4, total)) : 0
  if (style === 'vitest') {
    lines.push(`\n RUN  v3.2.4 /home/dev/project\n`)
    for (let i = 0; i < r.int(3, 10); i++) {
      const ok = !(failing && i === 0)
      lines.push(` ${ok ? '✓' : '❯'} ${filePath(r, 'ts').replace(/\.ts$/, '.test.ts')} (${r.int(1, 40)} tests${ok ? '' : ` | ${failed} failed`}) ${r.int(3, 900)}ms`)
    }
    if (failing) {
      for (let i = 0; i < failed; i++) {
        lines.push(`\n FAIL  ${filePath(r, 'ts')} > ${ident(r, 'snake', 3).replace(/_/g, ' ')}`)
        lines.push(`AssertionError: expected ${r.int(0, 99999)} to be ${r.int(0, 99999)} // Object.is equality\n`)
        lines.push(`- Expected\n+ Received\n\n- ${r.int(0, 99999)}\n+ ${r.int(0, 99999)}\n`)
        lines.push(` ❯ ${filePath(r, 'ts')}:${r.int(1, 400)}:${r.int(1, 40)}`)
      }
    }
    lines.push(`\n Test Files  ${failing ? `1 failed | ` : ''}${r.int(3, 10)} passed (${r.int(3, 12)})`)
    lines.push(`      Tests  ${failing ? `${failed} failed | ` : ''}${total - failed} passed (${total})`)
    lines.push(`   Duration  ${(r.next() * 9 + 0.5).toFixed(2)}s (transform ${r.int(20, 900)}ms, setup 0ms, collect ${r.int(20, 900)}ms, tests ${r.int(20, 5000)}ms)`)
  } else if (style === 'cargo') {
    lines.push(`   Compiling ${ident(r, 'kebab', 2)} v0.${r.int(1, 9)}.${r.int(0, 20)} (/home/dev/project)`)
    lines.push(`    Finished \`test\` profile [unoptimized + debuginfo] target(s) in ${(r.next() * 40).toFixed(2)}s`)
    lines.push(`     Running unittests src/lib.rs (target/debug/deps/${ident(r, 'snake', 2)}-${r.hex(16)})\n\nrunning ${total} tests`)
    const failedNames = []
    for (let i = 0; i < total; i++) {
      const name = `${ident(r, 'snake', 1)}::tests::${ident(r, 'snake', 3)}`
      const ok = i >= failed
      if (!ok) failedNames.push(name)
      lines.push(`test ${name} ... ${ok ? 'ok' : 'FAILED'}`)
    }
    for (const name of failedNames) {
      lines.push(`\n---- ${name} stdout ----\n${stackTrace(r).split('\n').slice(0, 3).join('\n')}`)
    }
    lines.push(`\ntest result: ${failing ? 'FAILED' : 'ok'}. ${total - failed} passed; ${failed} failed; 0 ignored; 0 measured; 0 filtered out; finished in ${(r.next() * 3).toFixed(2)}s`)
  } else {
    lines.push(`============================= test session starts ==============================\nplatform linux -- Python 3.12.${r.int(0, 8)}, pytest-8.3.${r.int(0, 5)}, pluggy-1.5.0\nrootdir: /home/dev/project\ncollected ${total} items\n`)
    for (let i = 0; i < r.int(2, 8); i++) {
      lines.push(`${filePath(r, 'py').replace(/\.py$/, '_test.py')} ${'.'.repeat(r.int(1, 20))}${failing && i === 0 ? 'F'.repeat(failed) : ''}   [${String(r.int(5, 100)).padStart(3)}%]`)
    }
    if (failing) lines.push(`\n=================================== FAILURES ===================================\n${stackTrace(r)}`)
    lines.push(`\n${failing ? `${failed} failed, ` : ''}${total - failed} passed in ${(r.next() * 20).toFixed(2)}s`)
  }
  return lines.join('\n')
}

function jsonValue(r, depth = 0) {
  if (depth >= 3 || r.chance(0.3)) {
    return r.pick([
      () => r.int(0, 100000),
      () => stringLiteral(r),
      () => r.chance(0.5),
      () => null,
      () => `${r.hex(8)}-${r.hex(4)}-${r.hex(4)}-${r.hex(4)}-${r.hex(12)}`,
      () => timestamp(r),
    ])()
  }
  if (r.chance(0.3)) return Array.from({ length: r.int(1, 5) }, () => jsonValue(r, depth + 1))
  const object = {}
  for (let i = 0, n = r.int(2, 7); i < n; i++) object[ident(r, r.chance(0.5) ? 'camel' : 'snake', r.int(1, 2))] = jsonValue(r, depth + 1)
  return object
}

function jsonDocument(r) {
  return r.pick([
    () => ({
      name: `@${r.pick(PEOPLE)}/${ident(r, 'kebab', 2)}`,
      version: `${r.int(0, 4)}.${r.int(0, 30)}.${r.int(0, 30)}`,
      private: true,
      scripts: { build: 'tsc -p .', test: 'vitest run', lint: 'eslint . --max-warnings 0', dev: `tsx watch src/${ident(r, 'kebab', 1)}.ts` },
      dependencies: Object.fromEntries(Array.from({ length: r.int(3, 12) }, () => [ident(r, 'kebab', r.int(1, 2)), `^${r.int(0, 20)}.${r.int(0, 30)}.${r.int(0, 30)}`])),
      devDependencies: { typescript: '^5.9.3', vitest: '^3.2.4', '@types/node': `^${r.int(18, 24)}.0.0` },
    }),
    () => ({
      data: Array.from({ length: r.int(3, 20) }, () => jsonValue(r, 1)),
      page: { cursor: r.base62(24), hasMore: r.chance(0.5), total: r.int(0, 100000) },
    }),
    () => jsonValue(r, 0),
  ])()
}

function grepOutput(r, pattern) {
  const lines = []
  const word = pattern.replace(/\\\($/, '')
  for (let i = 0, n = r.int(2, 40); i < n; i++) {
    const indent = r.pick(['  ', '    ', ''])
    let line
    if (pattern === 'TODO|FIXME') line = `// ${r.pick(['TODO', 'FIXME'])}: ${sentence(r).toLowerCase()}`
    else if (pattern.startsWith('class ')) line = `export ${pattern} extends ${ident(r, 'pascal', 2)} {`
    else line = r.pick([
      () => `const ${ident(r)} = ${word}(${ident(r, 'camel', 1)}, ${r.int(0, 500)})`,
      () => `${word}(${ident(r, 'camel', 1)})?;`,
      () => `return ${word}.${ident(r, 'camel', 1)}`,
      () => `import { ${word} } from './${ident(r, 'kebab', 2)}'`,
      () => `def ${word}(self, ${ident(r, 'snake', 1)}):`,
    ])()
    lines.push(`${filePath(r)}:${r.int(1, 900)}:${indent}${line}`)
  }
  return lines.join('\n')
}

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
