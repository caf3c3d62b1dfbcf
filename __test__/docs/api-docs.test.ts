// The API reference is generated from index.d.ts by TypeDoc (`npm run docs:api`, configured in
// typedoc.json, written to docs/api/, which is not committed). This test builds it the same way
// into a temporary directory with the same configuration, whose validation makes an undocumented
// export, a `{@link}` that resolves to nothing, a path that does not exist or a type that is used
// but not exported an error (`treatWarningsAsErrors`). A second run on a small declaration file
// with one undocumented export and one broken link shows that the configuration catches both, so
// the first run passing means something.

import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

const ROOT = join(__dirname, '..', '..')
const TYPEDOC = join(ROOT, 'node_modules', 'typedoc', 'bin', 'typedoc')
const work = mkdtempSync(join(tmpdir(), 'context-compact-api-docs-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

interface Run {
  code: number | null
  output: string
}

function typedoc(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    // NO_COLOR: TypeDoc's messages without escape codes, so they can be read in a failure.
    const child = spawn(process.execPath, [TYPEDOC, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (d) => (output += d))
    child.stderr.setEncoding('utf8').on('data', (d) => (output += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, output: output.replace(/\x1b\[[0-9;]*m/g, '') }))
  })
}

// Each run takes tens of seconds on a loaded two-core machine. They start when the file is
// loaded, one after the other: two TypeDoc processes at once starve the other test workers.
const out = join(work, 'api')
const negative = join(work, 'negative.d.ts')
writeFileSync(
  negative,
  [
    '/** Documented, but its link names nothing: {@link NoSuchThing}. */',
    'export declare function documented(): void',
    'export declare function undocumented(): void',
    '',
  ].join('\n'),
)
const build = typedoc(['--options', 'typedoc.json', '--out', out])
const check = build.then(() => typedoc(['--options', 'typedoc.json', '--entryPoints', negative, '--emit', 'none']))

describe('the API reference (TypeDoc, from index.d.ts)', () => {
  it('npm run docs:api is TypeDoc with the repository configuration, writing docs/api/ (ignored by git)', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
    expect(pkg.scripts['docs:api']).toBe('typedoc')
    const config = JSON.parse(readFileSync(join(ROOT, 'typedoc.json'), 'utf8'))
    // The package's entry and each framework adapter's (its subpath export): the types of every
    // condition, an adapter's `.d.mts` and `.d.cts` by the `.d.ts` they are generated from.
    const types = (value: unknown): string[] =>
      typeof value !== 'object' || value === null
        ? []
        : Object.entries(value).flatMap(([key, v]) => (key === 'types' && typeof v === 'string' ? [v] : types(v)))
    const pkgExports = [...new Set(types(pkg.exports).map((t) => t.replace(/^\.\//, '').replace(/\.d\.[cm]ts$/, '.d.ts')))]
    expect(pkgExports).toHaveLength(6)
    expect([...config.entryPoints].sort()).toEqual(pkgExports.sort())
    expect(config.out).toBe('docs/api')
    expect(config.treatWarningsAsErrors).toBe(true)
    expect(config.validation).toMatchObject({ notDocumented: true, invalidLink: true, notExported: true })
    expect(readFileSync(join(ROOT, '.gitignore'), 'utf8').split('\n')).toContain('docs/api/')
  })

  it('builds with no warning: every export documented, every link resolved', async () => {
    const { code, output } = await build
    expect(output, output).not.toMatch(/\[(warning|error)\]/)
    expect(code, output).toBe(0)
    expect(existsSync(join(out, 'index.html'))).toBe(true)
    // A page per main entry point, with its doc comment rendered.
    // With several entry points (the package and each adapter) each page is named by its module.
    const compactor = readFileSync(join(out, 'classes', 'index.Compactor.html'), 'utf8')
    expect(compactor).toContain('The stateful form')
    expect(existsSync(join(out, 'functions', 'index.compactMessages.html'))).toBe(true)
    expect(readFileSync(join(out, 'types', 'index.CompactErrorCode.html'), 'utf8')).toContain('TOOL_CALL')
    expect(existsSync(join(out, 'functions', 'adapters_ai-sdk.compactionStep.html'))).toBe(true)
    expect(existsSync(join(out, 'functions', 'adapters_langchain.contextCompactMiddleware.html'))).toBe(true)
  }, 300_000)

  it('the same configuration fails on an undocumented export and on a broken link', async () => {
    const { code, output } = await check
    expect(code).not.toBe(0)
    expect(output).toMatch(/undocumented .*does not have any documentation/)
    expect(output).toMatch(/Failed to resolve link to "NoSuchThing"/)
    expect(output).not.toMatch(/\bdocumented \(.*does not have any documentation/)
  }, 600_000)
})
