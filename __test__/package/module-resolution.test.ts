// The package's types under every module resolution TypeScript users pick: `nodenext`, `node16`
// and `bundler`, each for an ES module project and a CommonJS one. Each cell is a consumer project
// in a temporary directory whose node_modules holds this package as `npm pack` publishes it (the
// files `npm pack --dry-run` lists, copied) and the frameworks as the repository installed them
// (links), and compiles (strict, exactOptionalPropertyTypes):
// - one file per entry point (`context-compact` and each adapter) that imports every name its
//   declarations export and hands the adapter to the framework's own types;
// - the type tests of __test__/types/ (each SDK's messages, each adapter in use);
// - every TypeScript block of the README and of docs/*.md.
// ES module projects have `"type": "module"` and `.mts` files; CommonJS ones have no `type` and
// `.cts` files. In CommonJS a block with a top-level `await` runs inside an async function, as a
// CommonJS user has to write it. The package's declarations are checked too (not skipped as
// skipLibCheck would): an error in them is an error for every project that does not skip them.
//
// The one kind of error allowed is what TypeScript forbids every CommonJS project under `node16`
// whatever our types, in the project's own files: importing an ES module from CommonJS (TS1479,
// TS1541, TS1542), e.g. AI SDK 7's `ai`. The entry files never get it: they import the AI SDK's
// types as such a project can (`import type … with { 'resolution-mode': 'import' }`).
//
// The adapters' declarations per module system (adapters/*.d.mts and *.d.cts, generated from
// adapters/*.d.ts by scripts/adapter-types.mjs) are checked up to date here as well.

import { spawn, spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'

import ts from 'typescript'
import { afterAll, describe, expect, it } from 'vitest'

import { codeBlocks, docFiles, moduleParts, readDoc, ROOT } from '../support/markdown'
import { generated, variants } from '../../scripts/adapter-types.mjs'

type Resolution = 'nodenext' | 'node16' | 'bundler'
type System = 'esm' | 'cjs'
interface Cell {
  resolution: Resolution
  system: System
}

const CELLS: Cell[] = (['nodenext', 'node16', 'bundler'] as const).flatMap((resolution) => (['esm', 'cjs'] as const).map((system) => ({ resolution, system })))
const cellName = (cell: Cell) => `${cell.resolution}-${cell.system}`

const COMPILER: Record<Resolution, { module: string; moduleResolution: string }> = {
  nodenext: { module: 'nodenext', moduleResolution: 'nodenext' },
  node16: { module: 'node16', moduleResolution: 'node16' },
  // `bundler` goes with `module: preserve` (or `esnext`): what a Vite / esbuild / webpack project uses.
  bundler: { module: 'preserve', moduleResolution: 'bundler' },
}

/** The package's entry points: the subpaths of its package.json `exports` (but ./package.json). */
const ENTRIES = Object.keys(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).exports)
  .filter((subpath) => subpath !== './package.json')
  .map((subpath) => (subpath === '.' ? 'context-compact' : `context-compact/${subpath.slice(2)}`))

/** The declaration file of an entry in this repository, the source its exported names are read from. */
function sourceDeclarations(entry: string): string {
  return entry === 'context-compact' ? join(ROOT, 'index.d.ts') : join(ROOT, 'adapters', `${entry.split('/')[1]}.d.ts`)
}

/** The names a declaration file exports, values (functions, classes, constants) apart from types. */
function exportedNames(source: string): { values: string[]; types: string[] } {
  const file = ts.createSourceFile('x.d.ts', source, ts.ScriptTarget.Latest)
  const values: string[] = []
  const types: string[] = []
  for (const statement of file.statements) {
    if (!ts.canHaveModifiers(statement) || !ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue
    if (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) types.push(statement.name.text)
    else if ((ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isEnumDeclaration(statement)) && statement.name) values.push(statement.name.text)
    else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) if (ts.isIdentifier(declaration.name)) values.push(declaration.name.text)
    }
  }
  // Overloaded functions are declared once per signature.
  return { values: [...new Set(values)], types: [...new Set(types)] }
}

/** What each entry file does with the framework's own types, beyond importing every name. */
function usage(entry: string, cell: Cell): string {
  switch (entry) {
    case 'context-compact':
      return `
export async function use(): Promise<CompactResult> {
  const messages: Message[] = [{ role: 'user', content: 'hello' }]
  return compactMessages(messages, { contextTokenLimit: 100_000, outputDir: './.context-compact' })
}`
    case 'context-compact/ai-sdk':
      // AI SDK 7 is an ES module only: a CommonJS project reads its types with `resolution-mode`.
      return `
import type { ModelMessage, PrepareStepFunction, Tool, ToolSet } from 'ai'${cell.system === 'cjs' ? " with { 'resolution-mode': 'import' }" : ''}
export const prepareStep: PrepareStepFunction<ToolSet> = compactionStep({ contextTokenLimit: 100_000 })
export const recall: Tool = recallTool({ outputDir: './.context-compact' })
export function lastMessages(step: CompactionStep): ModelMessage[] | undefined {
  return step.lastResult?.messages
}`
    case 'context-compact/langchain':
      return `
import { createAgent, type AgentMiddleware } from 'langchain'
import type { BaseMessage } from '@langchain/core/messages'
import type { DynamicStructuredTool } from '@langchain/core/tools'
export const middleware: AgentMiddleware = contextCompactMiddleware({ outputDir: './.context-compact' })
export const recall: DynamicStructuredTool = recallTool({ outputDir: './.context-compact' })
export const agent = createAgent({ model: 'anthropic:claude-sonnet-4-5', tools: [recall], middleware: [contextCompactMiddleware()] })
export function lastMessages(m: ContextCompactMiddleware): BaseMessage[] | undefined {
  return m.lastResult?.messages
}`
    case 'context-compact/openai-agents':
      return `
import { Agent, MemorySession, run, type AgentInputItem, type Session } from '@openai/agents'
export async function use(): Promise<AgentInputItem[]> {
  const session = new CompactingSession(new MemorySession(), { contextTokenLimit: 128_000 })
  const asSession: Session = session
  const agent = new Agent({ name: 'coder', instructions: 'Fix the bug.', tools: [session.recallTool(), recallTool({ outputDir: './.context-compact' })] })
  await run(agent, 'Refactor the parser', { session })
  void asSession
  return session.restoreItems()
}`
    case 'context-compact/pi':
      return `
import type { AgentOptions, AgentTool, PrepareRequest } from '@earendil-works/pi-agent-core'${cell.system === 'cjs' ? " with { 'resolution-mode': 'import' }" : ''}
export const prepareRequest: PrepareRequest = compactionRequest({ contextTokenLimit: 200_000 })
export const recall: AgentTool<any> = recallTool({ outputDir: './.context-compact' })
export const options: Pick<AgentOptions, 'prepareRequest'> = { prepareRequest: compactionRequest() }
export function lastTokens(p: CompactionRequest): number | undefined {
  return p.lastResult?.tokens
}`
    case 'context-compact/mastra': {
      // Mastra is an ES module package: a CommonJS project reads its types with `resolution-mode`,
      // and under node16 cannot import its values at all.
      const mode = cell.system === 'cjs' ? " with { 'resolution-mode': 'import' }" : ''
      const withAgent = !(cell.resolution === 'node16' && cell.system === 'cjs')
      return `
${withAgent ? "import { Agent } from '@mastra/core/agent'" : ''}
import type { Processor } from '@mastra/core/processors'${mode}
import type { CompactResult } from 'context-compact'
export function use(): CompactResult | null {
  const compaction = new ContextCompactProcessor({ contextTokenLimit: 200_000, outputDir: './.context-compact' })
  const asProcessor: Processor = compaction
  ${withAgent ? "void new Agent({ id: 'a', name: 'a', instructions: 'Help.', model: 'openai/gpt-5', inputProcessors: [compaction], errorProcessors: [compaction] })" : ''}
  void asProcessor
  return compaction.lastResult
}`
    }
    default:
      // An entry point without a use written here yet: its names are imported all the same.
      return ''
  }
}

/** The entry file of one entry point: every exported name imported, then used with the framework. */
function entryFile(entry: string, cell: Cell): string {
  const { values, types } = exportedNames(readFileSync(sourceDeclarations(entry), 'utf8'))
  return [
    `// Every name '${entry}' declares, and the entry used with the framework's own types.`,
    `import { ${values.join(', ')} } from '${entry}'`,
    `import type { ${types.join(', ')} } from '${entry}'`,
    usage(entry, cell),
    `export { ${values.join(', ')} }`,
    `export type { ${types.join(', ')} }`,
    '',
  ].join('\n')
}

/** The type tests of __test__/types/, compiled in every cell as they are. */
const TYPE_TESTS = (readdirSync(join(ROOT, '__test__', 'types'), { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).sort()

/** True when the statement's subtree has an `await` outside any function (a top-level await). */
function hasTopLevelAwait(node: ts.Node): boolean {
  if (ts.isAwaitExpression(node) || (ts.isForOfStatement(node) && node.awaitModifier)) return true
  if (ts.isFunctionLike(node) || ts.isClassLike(node)) return false
  return ts.forEachChild(node, hasTopLevelAwait) ?? false
}

/** Every TypeScript block of the README and the guides, as a module of the cell's system. */
function docModules(system: System): Array<{ name: string; text: string }> {
  const modules: Array<{ name: string; text: string }> = []
  for (const file of docFiles()) {
    for (const block of codeBlocks(readDoc(file), file)) {
      const { imports, body } = moduleParts(block)
      const wrap = system === 'cjs' && hasTopLevelAwait(ts.createSourceFile('x.ts', body, ts.ScriptTarget.Latest))
      // Inside the function its declarations are local: `export` goes (the module exports `example`).
      const code = wrap ? `export async function example(): Promise<void> {\n${body.replace(/^export (?=(async )?function |const |let |class |interface |type )/gm, '')}\n}` : body
      modules.push({ name: `doc_${block.where.replace(/[^A-Za-z0-9]+/g, '_')}`, text: `// ${block.where}\n${imports}\n${block.declarations}\n${code}\nexport {}\n` })
    }
  }
  return modules
}

/** TypeScript's errors for an ES module imported from CommonJS (value, type-only, `import('…')` type). */
const ESM_FROM_COMMONJS = new Set(['TS1479', 'TS1541', 'TS1542'])

interface Diagnostic {
  file: string
  line: number
  column: number
  code: string
  message: string
}

/** tsc's `--pretty false` output, one diagnostic per `file(line,col): error TSnnnn: …` line. */
function diagnostics(output: string): Diagnostic[] {
  const out: Diagnostic[] = []
  for (const match of output.matchAll(/^(.+?)\((\d+),(\d+)\): error (TS\d+): (.*)$/gm)) {
    out.push({ file: match[1], line: Number(match[2]), column: Number(match[3]), code: match[4], message: match[5] })
  }
  return out
}

/** Compiles a cell with __test__/support/typecheck.mjs (tsc -p, with the errors of our files and the project's). */
function typecheck(cwd: string): Promise<{ status: number | null; output: string }> {
  // Asynchronously: a long synchronous run would starve vitest's RPC with this worker.
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, '__test__', 'support', 'typecheck.mjs'), cwd], { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (d) => (output += d))
    child.stderr.setEncoding('utf8').on('data', (d) => (output += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), 400_000)
    child.on('error', reject)
    child.on('close', (status) => {
      clearTimeout(timer)
      resolve({ status, output })
    })
  })
}

/** npm's own settings from a surrounding `npm test` stay out of the nested npm run. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)))
}

/** The files `npm pack` puts in the package, relative to its root. */
function packedFiles(): string[] {
  const pack = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', env: cleanEnv() })
  if (pack.status !== 0) throw new Error(`npm pack --dry-run → ${pack.status}\n${pack.stdout}\n${pack.stderr}`)
  return JSON.parse(pack.stdout)[0].files.map((f: { path: string }) => f.path)
}

const WORK = mkdtempSync(join(tmpdir(), 'context-compact-resolution-'))
afterAll(() => rmSync(WORK, { recursive: true, force: true }))

/** node_modules shared by the cells: the packed package (copied), the repository's packages (links). */
function installPackage(files: string[]): void {
  const modules = join(WORK, 'node_modules')
  const pkg = join(modules, 'context-compact')
  for (const file of files) {
    mkdirSync(dirname(join(pkg, file)), { recursive: true })
    copyFileSync(join(ROOT, file), join(pkg, file))
  }
  for (const entry of readdirSync(join(ROOT, 'node_modules'))) {
    if (entry.startsWith('.') || entry === 'context-compact') continue
    symlinkSync(realpathSync(join(ROOT, 'node_modules', entry)), join(modules, entry))
  }
}

function writeCell(cell: Cell): string {
  const dir = join(WORK, cellName(cell))
  mkdirSync(dir)
  const ext = cell.system === 'esm' ? '.mts' : '.cts'
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `consumer-${cellName(cell)}`, private: true, ...(cell.system === 'esm' ? { type: 'module' } : {}) }))
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        ...COMPILER[cell.resolution],
        lib: ['ES2022', 'DOM'],
        types: ['node'],
        strict: true,
        exactOptionalPropertyTypes: true,
        noEmit: true,
        // Our declarations are checked; typecheck.mjs leaves the other packages' out.
        skipLibCheck: false,
        esModuleInterop: true,
      },
      include: [`./*${ext}`],
    }),
  )
  for (const entry of ENTRIES) writeFileSync(join(dir, `entry_${entry.replace(/\W+/g, '_')}${ext}`), entryFile(entry, cell))
  for (const test of TYPE_TESTS) copyFileSync(join(ROOT, '__test__', 'types', test), join(dir, `types_${test.replace(/\.ts$/, '').replace(/\W+/g, '_')}${ext}`))
  for (const module of docModules(cell.system)) writeFileSync(join(dir, module.name + ext), module.text)
  return dir
}

interface CellResult {
  dir: string
  status: number | null
  output: string
  files: string[]
}

let results: Promise<Map<string, CellResult>> | undefined
/** Every cell compiled once, two at a time (a cell takes tens of seconds on a small machine). */
function compileAll(): Promise<Map<string, CellResult>> {
  results ??= (async () => {
    installPackage(packedFiles())
    const dirs = CELLS.map(writeCell)
    const out = new Map<string, CellResult>()
    let next = 0
    const worker = async () => {
      while (next < CELLS.length) {
        const i = next++
        const result = await typecheck(dirs[i])
        out.set(cellName(CELLS[i]), { dir: dirs[i], ...result, files: readdirSync(dirs[i]) })
      }
    }
    await Promise.all([worker(), worker()])
    return out
  })()
  return results
}

describe('types under every module resolution (a consumer project of the packed package)', () => {
  it('the entry files import every exported name; a CommonJS block with a top-level await is wrapped', () => {
    const names = exportedNames('export declare function f(): void\nexport declare function f(x: number): void\nexport interface I {}\nexport type T = 1\nexport declare class C {}\nexport declare const K: 1\ninterface Hidden {}\n')
    expect(names).toEqual({ values: ['f', 'C', 'K'], types: ['I', 'T'] })
    expect(ENTRIES).toEqual(['context-compact', 'context-compact/ai-sdk', 'context-compact/langchain', 'context-compact/openai-agents', 'context-compact/pi', 'context-compact/mastra'])
    for (const test of ['ai-sdk/step.ts', 'langchain/adapter.ts', 'openai-agents/openai-agents.ts', 'sdk-types.ts']) expect(TYPE_TESTS).toContain(test)
    for (const entry of ENTRIES) expect(exportedNames(readFileSync(sourceDeclarations(entry), 'utf8')).values.length).toBeGreaterThan(0)
    const top = (code: string) => hasTopLevelAwait(ts.createSourceFile('x.ts', code, ts.ScriptTarget.Latest))
    expect(top('const x = await f()')).toBe(true)
    expect(top('for await (const x of y) {}')).toBe(true)
    expect(top('async function g() { await f() }\nconst h = async () => await f()')).toBe(false)
  })

  it.each(CELLS.map((cell) => [cellName(cell), cell] as const))(
    '%s: every entry point, the type tests and every block of the README and the guides compile',
    async (name, cell) => {
      const result = (await compileAll()).get(name)!
      // The cell compiled what it was given: the entries, the type tests and the docs' blocks.
      expect(result.files.filter((f) => f.startsWith('entry_'))).toHaveLength(ENTRIES.length)
      expect(result.files.filter((f) => f.startsWith('doc_')).length).toBeGreaterThan(10)
      const all = diagnostics(result.output)
      expect(all.length > 0 || result.status === 0, result.output).toBe(true)
      const forbiddenByTypeScript = (d: Diagnostic) => {
        if (!(cell.resolution === 'node16' && cell.system === 'cjs' && ESM_FROM_COMMONJS.has(d.code))) return false
        if (d.file.includes('node_modules') || basename(d.file).startsWith('entry_')) return false
        // The error points at the module specifier: an import of another package, never of ours.
        const line = readFileSync(join(result.dir, d.file), 'utf8').split('\n')[d.line - 1] ?? ''
        const specifier = /^['"]([^'"]+)['"]/.exec(line.slice(d.column - 1))?.[1]
        return specifier !== undefined && !specifier.startsWith('context-compact')
      }
      const errors = all.filter((d) => !forbiddenByTypeScript(d))
      expect(errors.map((d) => `${d.file}(${d.line}): ${d.code} ${d.message}`).join('\n')).toBe('')
    },
    600_000,
  )
})

describe('the adapters\' declarations per module system (adapters/*.d.mts, *.d.cts)', () => {
  it('what they prevent: an ES module project given the CommonJS declarations of the LangChain adapter fails', async () => {
    // The packed package, but with `import` given the .d.cts (as one declaration file for both
    // would do): the entry file of context-compact/langchain no longer compiles under nodenext.
    await compileAll()
    const dir = join(WORK, 'swapped')
    const pkgDir = join(dir, 'node_modules', 'context-compact')
    cpSync(join(WORK, 'node_modules', 'context-compact'), pkgDir, { recursive: true })
    const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'))
    manifest.exports['./langchain'].import.types = manifest.exports['./langchain'].require.types
    writeFileSync(join(pkgDir, 'package.json'), JSON.stringify(manifest))
    const cell: Cell = { resolution: 'nodenext', system: 'esm' }
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer-swapped', private: true, type: 'module' }))
    writeFileSync(join(dir, 'tsconfig.json'), readFileSync(join(WORK, cellName(cell), 'tsconfig.json')))
    writeFileSync(join(dir, 'entry_langchain.mts'), entryFile('context-compact/langchain', cell))
    const result = await typecheck(dir)
    const errors = diagnostics(result.output).filter((d) => d.file === 'entry_langchain.mts')
    expect(errors.length, result.output).toBeGreaterThan(0)
    expect(result.output).toMatch(/DynamicStructuredTool|AgentMiddleware/)
  }, 600_000)

  it('are what scripts/adapter-types.mjs makes of adapters/*.d.ts (npm run build:types)', () => {
    const check = spawnSync(process.execPath, [join(ROOT, 'scripts', 'adapter-types.mjs'), '--check'], { cwd: ROOT, encoding: 'utf8' })
    expect(check.status, check.stderr).toBe(0)
    const files = generated() as Array<{ path: string; text: string }>
    expect(files.map((f) => f.path).sort()).toEqual(['ai-sdk', 'langchain', 'mastra', 'openai-agents', 'pi'].flatMap((n) => [`adapters/${n}.d.cts`, `adapters/${n}.d.mts`]).sort())
    for (const file of files) expect(readFileSync(join(ROOT, file.path), 'utf8')).toBe(file.text)
  })

  it('the ES variant names the file it imports; the CommonJS one reads the AI SDK as an import; an ES default is declared', () => {
    const source = [
      "import type { ModelMessage } from 'ai'",
      "import type { BaseMessage } from '@langchain/core/messages'",
      "import type { CompactOptions } from '../index'",
      "// import { generateText } from 'ai' (a comment: unchanged)",
      'export declare function step(options?: CompactOptions): ModelMessage[]',
      'export declare class Session {}',
      'export interface Options {}',
      '',
    ].join('\n')
    const { mts, cts } = variants('x', source, true) as { mts: string; cts: string }
    expect(mts).toContain("import type { ModelMessage } from 'ai'\n")
    expect(cts).toContain("import type { ModelMessage } from 'ai' with { 'resolution-mode': 'import' }\n")
    for (const text of [mts, cts]) {
      expect(text).toContain("import type { BaseMessage } from '@langchain/core/messages'\n")
      expect(text).toContain("from '../index.js'")
      expect(text).toContain("// import { generateText } from 'ai' (a comment: unchanged)")
      expect(text).toMatch(/^\/\/ Generated from adapters\/x\.d\.ts/)
    }
    expect(mts).toMatch(/declare const _default: \{\n  step: typeof step\n  Session: typeof Session\n\}\nexport default _default\n$/)
    expect(cts).not.toContain('export default')
    expect((variants('x', source, false) as { mts: string }).mts).not.toContain('export default')
    // A value import of the AI SDK could not take resolution-mode: the generator refuses it.
    expect(() => variants('x', "import { ModelMessage } from 'ai'\n", false)).toThrow(/import type/)
    expect(() => variants('x', "export declare const m: import('ai').ModelMessage\n", false)).toThrow(/import\('…'\)/)
  })

  it.each(['ai-sdk', 'langchain', 'mastra', 'openai-agents', 'pi'])('%s: the declarations of each condition name what its module exports at run time', async (name) => {
    const cjs = Object.keys(createRequire(__filename)(join(ROOT, 'adapters', `${name}.js`))).sort()
    const esm = Object.keys(await import(join(ROOT, 'adapters', `${name}.mjs`))).sort()
    const declared = (file: string) => {
      const text = readFileSync(join(ROOT, 'adapters', file), 'utf8')
      const { values } = exportedNames(text)
      return [...values, ...(/^export default\b/m.test(text) ? ['default'] : [])].sort()
    }
    expect(declared(`${name}.d.cts`)).toEqual(cjs)
    expect(declared(`${name}.d.mts`)).toEqual(esm)
  })
})
