// Every code block of the README and of the guides in docs/ is either compiled, run or checked,
// or is plainly not code:
// - ```ts blocks are compiled by docs-code.test.ts;
// - ```sh blocks are commands. Each `npx context-compact …` line names a command of the CLI and
//   only options its `--help` lists; each `npm run <script>` names a script of package.json (and
//   the options and environment variables after or before it appear in that script's source);
//   each `node <file>` names a file of the repository. A block with CLI commands is then *run*, as
//   written, in a new directory holding `conversation.json` (a generated 200K-token agent
//   session, as `npx context-compact demo --save conversation.json` makes), with no API key in the
//   environment: every line must exit 0. A block that cannot run here (an object store, the npm
//   registry, a build of minutes) says why in a comment right above it: `<!-- not run: … -->`.
// - ```json and ```jsonc blocks must parse (jsonc after its comments are removed);
// - ```text blocks are diagrams, listings and output: not code.
// Any other fence, or one without a language, fails. The option and error tables of the guides
// are also checked against index.d.ts, and no block names a model the Anthropic SDK deprecates.

import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { ROOT, docFiles, fences, readDoc, type Fence } from '../support/markdown'

const CLI = join(ROOT, 'cli', 'context-compact.js')
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
const LANGUAGES = new Set(['ts', 'typescript', 'sh', 'text', 'json', 'jsonc'])
/** Shell utilities a block may use besides the commands checked below. */
const UTILITIES = new Set(['cd', 'cp', 'ls', 'cat', 'export', 'cargo'])

const ALL: Fence[] = docFiles().flatMap((file) => fences(readDoc(file), file))

// ---------------------------------------------------------------------------------------------
// Shell blocks

/** The command lines of a shell block: continuations joined, comments and blank lines dropped. */
export function commandLines(code: string): string[] {
  const joined = code.replace(/\\\n/g, ' ')
  const lines: string[] = []
  for (const raw of joined.split('\n')) {
    // A `#` starts a comment at the start of a word, outside quotes.
    let quote: string | null = null
    let cut = raw.length
    for (let i = 0; i < raw.length; i++) {
      const c = raw[i]
      if (quote) {
        if (c === quote) quote = null
      } else if (c === "'" || c === '"') quote = c
      else if (c === '#' && (i === 0 || /\s/.test(raw[i - 1]))) {
        cut = i
        break
      }
    }
    const line = raw.slice(0, cut).trim()
    if (line !== '') lines.push(line)
  }
  return lines
}

/** The words of one simple command (quotes removed; no expansion). */
function words(command: string): string[] {
  const out: string[] = []
  const re = /'([^']*)'|"([^"]*)"|(\S+)/g
  for (let m = re.exec(command); m; m = re.exec(command)) out.push(m[1] ?? m[2] ?? m[3])
  return out
}

const helpCache = new Map<string, string>()
function cliHelp(command: string | null): string {
  const key = command ?? ''
  if (!helpCache.has(key)) {
    const args = command === null ? ['--help'] : [command, '--help']
    const run = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' })
    helpCache.set(key, run.status === 0 ? run.stdout : '')
  }
  return helpCache.get(key)!
}

function cliCommands(): string[] {
  const help = cliHelp(null)
  const section = help.split(/^Commands:$/m)[1]?.split(/\n\s*\n/)[0] ?? ''
  return [...section.matchAll(/^\s{2}(\S+)/gm)].map((m) => m[1])
}

/** The source file a package.json script runs (`node <file>`), or null. */
function scriptSource(script: string): string | null {
  const m = /^node\s+(\S+)/.exec(pkg.scripts[script] ?? '')
  return m && existsSync(join(ROOT, m[1])) ? readFileSync(join(ROOT, m[1]), 'utf8') : null
}

/** What is wrong with one command line of a shell block, statically; `[]` when nothing is. */
export function checkCommand(line: string): string[] {
  const problems: string[] = []
  // `a && b`, `a | b`: each part on its own; redirections are not commands.
  for (const part of line.split(/&&|\|\||\|/)) {
    const all = words(part.replace(/\s[<>]\s*\S+/g, ' '))
    const env: string[] = []
    while (all.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(all[0])) env.push(all.shift()!.split('=')[0])
    const [program, ...args] = all
    if (program === undefined) continue
    if (program === 'npx' && args[0] === 'context-compact') {
      const [command, ...rest] = args.slice(1)
      if (!cliCommands().includes(command)) {
        problems.push(`context-compact has no command "${command}"`)
        continue
      }
      const help = cliHelp(command)
      for (const arg of rest) {
        const flag = /^(--?[A-Za-z][\w-]*)/.exec(arg)?.[1]
        if (flag && !help.includes(flag)) problems.push(`context-compact ${command} --help does not list ${flag}`)
      }
    } else if (program === 'npm') {
      const [verb, name, ...rest] = args
      if (verb === 'install' && (name === undefined || name === pkg.name)) continue
      // A package the guides name beside ours (an optional peer, e.g. @opentelemetry/api) is one
      // the project itself depends on: the name is real and its tests run against it.
      const known = { ...pkg.peerDependencies, ...pkg.devDependencies }
      if (verb === 'install' && [name, ...rest].every((n: string) => n in known)) continue
      if (verb === 'test' || verb === 'pack') continue
      if (verb !== 'run') {
        problems.push(`npm ${verb}: not a command the docs may use`)
        continue
      }
      if (!pkg.scripts[name]) {
        problems.push(`package.json has no script "${name}"`)
        continue
      }
      const source = scriptSource(name)
      const passed = rest[0] === '--' ? rest.slice(1).filter((a) => a.startsWith('--')) : []
      for (const needle of [...passed, ...env]) {
        if (!source || !source.includes(needle)) problems.push(`npm run ${name}: its source does not mention ${needle}`)
      }
    } else if (program === 'node') {
      if (!existsSync(join(ROOT, args[0] ?? ''))) problems.push(`node ${args[0]}: no such file`)
    } else if (!UTILITIES.has(program)) {
      problems.push(`"${program}" is not a command the docs may use (add it to the checker, or use a \`text\` block)`)
    }
  }
  return problems
}

const isCli = (line: string) => /^npx context-compact\b/.test(line)
const notRun = (fence: Fence) => /<!--\s*not run:\s*\S[^>]*-->/.test(fence.comment)
const shellBlocks = ALL.filter((f) => f.lang === 'sh')
const runnable = shellBlocks.filter((f) => !notRun(f) && commandLines(f.code).some(isCli))

let fixture = ''
beforeAll(() => {
  fixture = mkdtempSync(join(tmpdir(), 'context-compact-docs-fixture-'))
  const made = spawnSync(process.execPath, [join(ROOT, 'benchmark', 'generate.mjs'), '--tokens', '200000', '--out', join(fixture, 'conversation.json')], {
    encoding: 'utf8',
  })
  if (made.status !== 0) throw new Error(made.stderr)
})
const dirs: string[] = []
afterAll(() => {
  for (const dir of [fixture, ...dirs]) if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('code blocks of the README and docs/: compiled, run, checked, or plainly not code', () => {
  it('every fence names a language the tests know', () => {
    const unknown = ALL.filter((f) => !LANGUAGES.has(f.lang)).map((f) => `${f.where}: \`\`\`${f.lang}`)
    expect(unknown).toEqual([])
    expect(ALL.filter((f) => f.lang === 'sh').length).toBeGreaterThan(5)
  })

  it('the command checker accepts what exists and refuses what does not', () => {
    expect(commandLines('npx context-compact count a.json   # counts\n\n# a comment\nnpm run bench -- \\\n  --x')).toEqual([
      'npx context-compact count a.json',
      'npm run bench --    --x',
    ])
    expect(commandLines("echo 'a # b' # c")).toEqual(["echo 'a # b'"])
    expect(checkCommand('npx context-compact count conversation.json --top 3 --json')).toEqual([])
    expect(checkCommand('npx context-compact count conversation.json --no-such-flag')).toEqual([
      'context-compact count --help does not list --no-such-flag',
    ])
    expect(checkCommand('npx context-compact frobnicate x.json')).toEqual(['context-compact has no command "frobnicate"'])
    expect(checkCommand('BENCH_SAMPLES=3 npm run bench')).toEqual([])
    expect(checkCommand('BENCH_NOTHING=3 npm run bench')).toEqual(['npm run bench: its source does not mention BENCH_NOTHING'])
    expect(checkCommand('npm run bench:economics -- --thinking --no-such-flag')).toEqual([
      'npm run bench:economics: its source does not mention --no-such-flag',
    ])
    expect(checkCommand('npm run no-such-script')).toEqual(['package.json has no script "no-such-script"'])
    expect(checkCommand('node scripts/no-such-file.mjs')).toEqual(['node scripts/no-such-file.mjs: no such file'])
    expect(checkCommand('curl https://example.com | sh')).toHaveLength(2)
  })

  for (const fence of shellBlocks) {
    it(`${fence.where}: every command exists, with options it takes`, () => {
      const problems = commandLines(fence.code).flatMap((line) => checkCommand(line).map((p) => `${line}\n    ${p}`))
      expect(problems).toEqual([])
      if (!notRun(fence) && commandLines(fence.code).some(isCli)) {
        // A block that is run holds CLI commands only: anything else needs a reason not to run.
        expect(commandLines(fence.code).filter((l) => !isCli(l))).toEqual([])
      }
    })
  }

  for (const fence of runnable) {
    it(`${fence.where}: runs as written`, () => {
      const dir = mkdtempSync(join(tmpdir(), 'context-compact-docs-run-'))
      dirs.push(dir)
      copyFileSync(join(fixture, 'conversation.json'), join(dir, 'conversation.json'))
      const env: NodeJS.ProcessEnv = { ...process.env }
      for (const key of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_BASE_URL', 'OPENAI_BASE_URL']) delete env[key]
      for (const line of commandLines(fence.code)) {
        const command = line.replace(/^npx context-compact\b/, `"${process.execPath}" "${CLI}"`)
        const run = spawnSync('/bin/sh', ['-c', command], { cwd: dir, env, encoding: 'utf8', timeout: 120_000 })
        expect(run.status, `${line}\n${run.stdout}\n${run.stderr}`).toBe(0)
      }
    }, 300_000)
  }

  for (const fence of ALL.filter((f) => f.lang === 'json' || f.lang === 'jsonc')) {
    it(`${fence.where}: parses as ${fence.lang}`, () => {
      const text = fence.lang === 'jsonc' ? fence.code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '') : fence.code
      expect(() => JSON.parse(text)).not.toThrow()
    })
  }
})

// ---------------------------------------------------------------------------------------------
// The reference tables of the guides, against index.d.ts

const declarations = ts.createSourceFile('index.d.ts', readFileSync(join(ROOT, 'index.d.ts'), 'utf8'), ts.ScriptTarget.Latest, true)

function interfaceMembers(name: string): string[] {
  for (const statement of declarations.statements) {
    if (ts.isInterfaceDeclaration(statement) && statement.name.text === name) {
      return statement.members.flatMap((m) => (m.name ? [m.name.getText(declarations).replace(/^'|'$/g, '')] : []))
    }
  }
  throw new Error(`index.d.ts declares no interface ${name}`)
}

function unionMembers(name: string): string[] {
  for (const statement of declarations.statements) {
    if (ts.isTypeAliasDeclaration(statement) && statement.name.text === name && ts.isUnionTypeNode(statement.type)) {
      return statement.type.types.flatMap((t) => (ts.isLiteralTypeNode(t) && ts.isStringLiteral(t.literal) ? [t.literal.text] : []))
    }
  }
  throw new Error(`index.d.ts declares no union ${name}`)
}

/** The first cells of the rows of the Markdown tables of a guide: `` `name` `` → `name`. */
function tableKeys(file: string): Set<string> {
  const keys = new Set<string>()
  for (const line of readDoc(file).split('\n')) {
    const m = /^\|\s*`([^`]+)`\s*\|/.exec(line)
    if (m) keys.add(m[1])
  }
  return keys
}

describe('the reference tables of docs/ hold what index.d.ts declares', () => {
  it('docs/options.md has a row, with a default, for every option of CompactOptions', () => {
    const rows = readDoc('docs/options.md').split('\n')
    const missing: string[] = []
    for (const option of interfaceMembers('CompactOptions')) {
      const row = rows.find((r) => r.startsWith(`| \`${option}\` |`))
      // option | type | default | meaning: four cells, none empty.
      if (!row || row.split(/(?<!\\)\|/).slice(1, -1).filter((c) => c.trim() !== '').length < 4) missing.push(option)
    }
    expect(missing).toEqual([])
  })

  it('docs/errors.md has a row for every CompactErrorCode and RestoreErrorCode', () => {
    const keys = tableKeys('docs/errors.md')
    const codes = [...unionMembers('CompactErrorCode'), ...unionMembers('RestoreErrorCode')]
    expect(codes.length).toBeGreaterThan(20)
    expect(codes.filter((c) => !keys.has(c))).toEqual([])
  })
})

// ---------------------------------------------------------------------------------------------
// Model names

/** The models the installed Anthropic SDK warns about as deprecated. */
function deprecatedModels(): string[] {
  const data = join(ROOT, 'node_modules', '@anthropic-ai', 'sdk', 'internal', 'data', 'deprecated-models.js')
  if (existsSync(data)) return Object.keys(createRequire(__filename)(data).DEPRECATED_MODELS)
  const messages = readFileSync(join(ROOT, 'node_modules', '@anthropic-ai', 'sdk', 'resources', 'messages', 'messages.js'), 'utf8')
  const table = /DEPRECATED_MODELS\s*=\s*\{([^}]*)\}/.exec(messages)
  if (!table) throw new Error('the Anthropic SDK no longer lists its deprecated models where this test looks: update it')
  return [...table[1].matchAll(/['"]([^'"]+)['"]\s*:/g)].map((m) => m[1])
}

describe('model names', () => {
  it('no code block and nothing in the README names a model the Anthropic SDK deprecates', () => {
    const deprecated = deprecatedModels()
    expect(deprecated.length).toBeGreaterThan(0)
    const texts = [
      { where: 'README.md', text: readDoc('README.md') },
      ...ALL.filter((f) => f.lang !== 'text').map((f) => ({ where: f.where, text: f.code })),
    ]
    const found = texts.flatMap(({ where, text }) =>
      deprecated.filter((model) => new RegExp(`['"\\s]${model.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}['"\\s]`).test(text)).map((model) => `${where}: ${model}`),
    )
    expect(found).toEqual([])
  })
})
