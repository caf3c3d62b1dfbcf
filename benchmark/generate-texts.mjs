// The texts a generated conversation is made of (see generate.mjs): seeded randomness, words,
// source files in several languages, logs, stack traces, test output, JSON documents and grep
// output. Split from generate.mjs, which assembles them into an agent's turns.

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

export function makeRandom(seed) {
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

export const NOUNS = [
  'user', 'session', 'token', 'cache', 'config', 'request', 'response', 'handler', 'buffer', 'stream',
  'parser', 'index', 'message', 'summary', 'budget', 'limit', 'ratio', 'archive', 'event', 'queue',
  'worker', 'payload', 'retry', 'client', 'server', 'router', 'schema', 'record', 'entry', 'batch',
  'chunk', 'window', 'context', 'tool', 'result', 'error', 'state', 'store', 'model', 'provider',
  'agent', 'turn', 'count', 'offset', 'cursor', 'file', 'path', 'line', 'span', 'invoice', 'order',
  'account', 'tenant', 'plugin', 'widget', 'metric', 'report', 'job', 'task', 'lease', 'lock',
  'snapshot', 'migration', 'query', 'row', 'column', 'table', 'field', 'key', 'value', 'node',
  'edge', 'graph', 'timer', 'deadline', 'signal', 'channel', 'socket', 'frame', 'header', 'body',
]
export const VERBS = [
  'get', 'set', 'load', 'save', 'parse', 'build', 'create', 'update', 'delete', 'find', 'resolve',
  'validate', 'compute', 'flush', 'merge', 'split', 'render', 'emit', 'handle', 'fetch', 'apply',
  'normalize', 'encode', 'decode', 'collect', 'schedule', 'retry', 'count', 'trim', 'compact',
  'register', 'dispatch', 'serialize', 'hydrate', 'refresh', 'sync', 'prune', 'estimate', 'open', 'close',
]
export const ADJECTIVES = [
  'pending', 'active', 'stale', 'raw', 'cached', 'next', 'last', 'max', 'min', 'total', 'local',
  'remote', 'default', 'current', 'previous', 'dirty', 'visible', 'partial', 'retained', 'expired',
]
export const DIRS = [
  'src', 'src/lib', 'src/core', 'src/api', 'src/utils', 'src/services', 'src/components', 'src/server',
  'lib', 'packages/core/src', 'packages/web/src', 'crates/core/src', 'crates/cli/src', 'app', 'app/models',
  'internal/store', 'internal/http', 'pkg/worker', 'tests', 'test/unit', 'scripts', 'server/routes',
]
export const LANGS = {
  ts: 'typescript', tsx: 'typescript', js: 'javascript', rs: 'rust', py: 'python', go: 'go',
}
export const PEOPLE = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi', 'ivan', 'judy']
export const MODULES = ['api', 'db', 'auth', 'queue', 'cache', 'scheduler', 'billing', 'search', 'ingest', 'gateway']

export const cap = (s) => s[0].toUpperCase() + s.slice(1)

export function ident(r, style = 'camel', words = r.int(1, 3)) {
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

export function filePath(r, ext) {
  ext = ext ?? r.weighted([[5, 'ts'], [2, 'tsx'], [1, 'js'], [3, 'rs'], [3, 'py'], [2, 'go']])
  const dir = r.pick(DIRS)
  const style = ext === 'ts' || ext === 'tsx' || ext === 'js' ? (r.chance(0.5) ? 'kebab' : 'camel') : 'snake'
  let name = ident(r, style, r.int(1, 2))
  if (ext === 'tsx') name = ident(r, 'pascal', 2)
  if (r.chance(0.12)) name += ext === 'py' ? '_test' : ext === 'go' ? '_test' : ext === 'rs' ? '' : '.test'
  return `${dir}/${name}.${ext}`
}

export function sentence(r) {
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

export function stringLiteral(r) {
  return r.pick([
    () => `${r.pick(NOUNS)} not found`,
    () => `invalid ${r.pick(NOUNS)}: expected ${r.pick(['a string', 'a number', 'an array', 'an object'])}`,
    () => `/${r.pick(MODULES)}/${r.pick(NOUNS)}s/${r.int(1, 999)}`,
    () => `${r.pick(MODULES)}.${ident(r, 'snake', 2)}`,
    () => `failed to ${r.pick(VERBS)} ${r.pick(NOUNS)}`,
    () => `${r.pick(ADJECTIVES)}-${r.pick(NOUNS)}-${r.hex(6)}`,
  ])()
}

export function tsStatement(r, depth) {
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

export function rsStatement(r, depth) {
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

export function pyStatement(r, depth) {
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

export function goStatement(r, depth) {
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

export function block(r, statement, depth, indent) {
  const lines = []
  const count = r.int(1, depth === 0 ? 7 : 3)
  for (let i = 0; i < count; i++) lines.push(statement(r, depth))
  return lines
    .join('\n')
    .split('\n')
    .map((line) => indent + line)
    .join('\n')
}

export function sourceFile(r, path, minLines) {
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

export function numbered(text, from = 1) {
  return text
    .split('\n')
    .map((line, i) => `${String(i + from).padStart(6)}\t${line}`)
    .join('\n')
}

// ---------------------------------------------------------------------------------------------
// Tool outputs

export function timestamp(r) {
  const p = (n, w = 2) => String(n).padStart(w, '0')
  return `2025-${p(r.int(1, 12))}-${p(r.int(1, 28))}T${p(r.int(0, 23))}:${p(r.int(0, 59))}:${p(r.int(0, 59))}.${p(r.int(0, 999), 3)}Z`
}

export function logLines(r, count) {
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

export function stackTrace(r) {
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

export function testOutput(r, failing) {
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

export function jsonValue(r, depth = 0) {
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

export function jsonDocument(r) {
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

export function grepOutput(r, pattern) {
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
