// `npm install context-compact` without Rust (issue 12): the published packages are the root
// package (JS only) and one package per platform holding the `.node`. This packs both as a
// release would — the linux-x64-gnu binary placed into npm/linux-x64-gnu by `napi artifacts` —
// installs the two tarballs into a new project offline with no `cargo`/`rustc` on PATH, and
// uses the library there through require, import and the CLI.
//
// Runs on linux-x64 with glibc only (the one platform package this machine can build and load).
import { spawnSync, type SpawnSyncOptions } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { links } from '../support/markdown'

const root = join(__dirname, '..', '..')
const PLATFORM = 'linux-x64-gnu'
const BINARY = `context-compact.${PLATFORM}.node`
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

const glibc = (() => {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined
  return Boolean(report?.header?.glibcVersionRuntime)
})()
const supported = process.platform === 'linux' && process.arch === 'x64' && glibc
if (!supported) {
  console.warn(
    `skipping the install test: it packs and installs the ${PLATFORM} package, and this is ${process.platform}-${process.arch}${process.platform === 'linux' ? (glibc ? '-gnu' : '-musl') : ''}`,
  )
}

function run(command: string, args: string[], options: SpawnSyncOptions = {}) {
  const child = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options })
  const output = `${command} ${args.join(' ')} → ${child.status}\n${child.stdout}\n${child.stderr}${child.error ? `\n${child.error}` : ''}`
  return { status: child.status, stdout: String(child.stdout ?? ''), stderr: String(child.stderr ?? ''), output, error: child.error }
}

function which(name: string, path = process.env.PATH ?? ''): string | null {
  for (const dir of path.split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name)
  }
  return null
}

// npm's own settings from a surrounding `npm test` (npm_config_*, npm_lifecycle_*…) stay out of
// the nested npm runs.
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)))
}

function dirSize(dir: string): number {
  let total = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    total += entry.isDirectory() ? dirSize(path) : statSync(path).size
  }
  return total
}

const MB = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`

describe.skipIf(!supported)(`npm install of the packed packages (${PLATFORM}) without Rust`, () => {
  let work: string
  let project: string
  let env: NodeJS.ProcessEnv
  const tarballs: Record<'root' | 'platform', string> = { root: '', platform: '' }

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'context-compact-install-'))

    // 1. The release build `npm install` made (the `prepare` script); build only if it is missing.
    if (!existsSync(join(root, BINARY))) {
      const build = run('npx', ['napi', 'build', '--platform', '--release', '--no-js', '--dts', 'binding.d.ts'], { cwd: root, stdio: 'inherit' })
      expect(build.status, 'napi build').toBe(0)
    }

    // 2. `napi artifacts`, as the release workflow runs it, in a staging copy (so nothing is
    //    written into the clone): package.json, npm/linux-x64-gnu, and the binary as the one
    //    downloaded artifact. A config file limits the targets to this one platform.
    const stage = join(work, 'stage')
    mkdirSync(join(stage, 'artifacts'), { recursive: true })
    cpSync(join(root, 'package.json'), join(stage, 'package.json'))
    cpSync(join(root, 'npm', PLATFORM), join(stage, 'npm', PLATFORM), { recursive: true })
    // (napi artifacts skips symbolic links: a hard link, or a copy across file systems)
    try {
      linkSync(join(root, BINARY), join(stage, 'artifacts', BINARY))
    } catch {
      copyFileSync(join(root, BINARY), join(stage, 'artifacts', BINARY))
    }
    writeFileSync(join(stage, 'napi.json'), JSON.stringify({ binaryName: pkg.napi.binaryName, targets: ['x86_64-unknown-linux-gnu'] }))
    const napi = join(root, 'node_modules', '.bin', 'napi')
    const artifacts = run(napi, ['artifacts', '--cwd', stage, '-c', 'napi.json', '-o', 'artifacts', '--npm-dir', 'npm'], { env: cleanEnv() })
    expect(artifacts.status, artifacts.output).toBe(0)
    expect(existsSync(join(stage, 'npm', PLATFORM, BINARY))).toBe(true)

    // 3. npm pack both packages. --ignore-scripts: packing the clone must not run `prepare` (a
    //    rebuild); packing is all a release does with it.
    const packs = join(work, 'packs')
    mkdirSync(packs)
    for (const [key, dir] of [
      ['root', root],
      ['platform', join(stage, 'npm', PLATFORM)],
    ] as const) {
      const pack = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packs], { cwd: dir, env: cleanEnv() })
      expect(pack.status, pack.output).toBe(0)
      const [info] = JSON.parse(pack.stdout)
      tarballs[key] = join(packs, info.filename)
      if (key === 'platform') {
        console.log(`${info.filename}: packed ${MB(info.size)}, unpacked ${MB(info.unpackedSize)}`)
      }
    }

    // 4. A PATH without cargo and rustc: every directory holding either is left out; node, npm
    //    and sh come through a directory of links.
    const bin = join(work, 'bin')
    mkdirSync(bin)
    for (const name of ['node', 'npm', 'npx', 'sh']) {
      const target = name === 'node' ? process.execPath : which(name)
      if (target) symlinkSync(realpathSync(target), join(bin, name))
    }
    const path = [bin, ...(process.env.PATH ?? '').split(delimiter).filter((dir) => dir && !which('cargo', dir) && !which('rustc', dir))].join(delimiter)
    env = {
      ...cleanEnv(),
      PATH: path,
      // Offline, with an empty cache: anything the packages needed from a registry would fail.
      npm_config_offline: 'true',
      npm_config_cache: join(work, 'npm-cache'),
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    }

    project = join(work, 'project')
    mkdirSync(project)
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'install-test', version: '1.0.0', private: true }))
  }, 240_000)

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true })
  })

  it('the root package ships no .node and has no runtime dependencies', () => {
    expect(pkg.files.some((f: string) => f.endsWith('.node'))).toBe(false)
    expect(pkg.dependencies ?? {}).toEqual({})
    const list = run('tar', ['-tzf', tarballs.root])
    expect(list.status, list.output).toBe(0)
    const files = list.stdout.split('\n').filter(Boolean)
    expect(files.filter((f) => f.endsWith('.node'))).toEqual([])
    for (const file of ['package/index.js', 'package/index.mjs', 'package/index.d.ts', 'package/lib/addon/native.js', 'package/lib/compactor/compactor.js', 'package/cli/context-compact.js', 'package/benchmark/generate.mjs', 'package/adapters/langchain/index.js', 'package/adapters/langchain/index.mjs', 'package/adapters/langchain/index.d.mts', 'package/adapters/langchain/index.d.cts', 'package/adapters/langchain/written.js', 'package/adapters/kit.js']) {
      expect(files).toContain(file)
    }
    // Every file package.json "exports" names is in the package (the types of each condition too),
    // and the adapters' declarations only as the variants it names: adapters/*.d.ts is their source.
    const targets = (value: unknown): string[] => (typeof value === 'string' ? [value] : Object.values(value as object).flatMap(targets))
    for (const target of targets(pkg.exports)) expect(files).toContain(`package/${target.replace(/^\.\//, '')}`)
    expect(files.filter((f) => /^package\/adapters\/.*\.d\.ts$/.test(f))).toEqual([])
    // One platform package per target, at the root's version (`napi version` keeps npm/* in
    // step; `napi pre-publish` rewrites optionalDependencies when releasing).
    const dirs = readdirSync(join(root, 'npm')).sort()
    expect(Object.keys(pkg.optionalDependencies).sort()).toEqual(dirs.map((d) => `context-compact-${d}`))
    expect(dirs).toHaveLength(pkg.napi.targets.length)
    for (const dir of dirs) {
      const platformPkg = JSON.parse(readFileSync(join(root, 'npm', dir, 'package.json'), 'utf8'))
      expect(platformPkg.version).toBe(pkg.version)
      expect(platformPkg.main).toBe(`context-compact.${dir}.node`)
    }
  })

  it('cargo and rustc cannot be found on the PATH of the install', () => {
    expect(which('cargo', env.PATH)).toBeNull()
    expect(which('rustc', env.PATH)).toBeNull()
    expect(run('cargo', ['--version'], { env }).error).toBeDefined()
    expect(run('rustc', ['--version'], { env }).error).toBeDefined()
  })

  it('installs both tarballs offline, without building anything', () => {
    const install = run('npm', ['install', '--offline', tarballs.root, tarballs.platform], { cwd: project, env })
    expect(install.status, install.output).toBe(0)
    const installed = join(project, 'node_modules', 'context-compact')
    // `prepare` (napi build) does not run for a tarball dependency: nothing was compiled.
    expect(existsSync(join(installed, 'target'))).toBe(false)
    expect(readdirSync(installed).filter((f) => f.endsWith('.node'))).toEqual([])
    const platformDir = join(project, 'node_modules', `context-compact-${PLATFORM}`)
    expect(existsSync(join(platformDir, BINARY))).toBe(true)
    console.log(`installed context-compact-${PLATFORM}: ${MB(dirSize(platformDir))}; context-compact: ${MB(dirSize(installed))}`)
  })

  it('the README and the guides installed with it: every relative link leads to an installed file', () => {
    const installed = join(project, 'node_modules', 'context-compact')
    const guides = readdirSync(join(installed, 'docs')).filter((f) => f.endsWith('.md'))
    expect(guides).toContain('langchain.md')
    const dead: string[] = []
    for (const file of ['README.md', ...guides.map((g) => `docs/${g}`)]) {
      for (const { target, where } of links(readFileSync(join(installed, file), 'utf8'), file)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue
        const path = join(installed, dirname(file), decodeURIComponent(target.split('#')[0]))
        if (!existsSync(path)) dead.push(`${where}: ${target}`)
      }
    }
    expect(dead).toEqual([])
  })

  it('require() and compactMessages (force, extractive provider)', () => {
    const script = `
      const cc = require('context-compact')
      const messages = [{ role: 'system', content: 'You are a coding agent.' }]
      for (let i = 0; i < 12; i++) {
        messages.push({ role: 'user', content: 'Step ' + i + ': please fix the bug in src/file' + i + '.ts and run the tests. ' + 'x'.repeat(200) })
        messages.push({ role: 'assistant', content: 'Done with step ' + i + '. I edited src/file' + i + '.ts. ' + 'y'.repeat(200) })
      }
      cc.compactMessages(messages, { force: true, provider: 'extractive', outputDir: './archives', sessionId: 'install', contextTokenLimit: 4000 })
        .then((r) => console.log(JSON.stringify({ compacted: r.compacted, error: r.error, n: r.messages.length, summary: typeof r.summary, before: r.stats.originalTokenCount, after: r.stats.compactedTokenCount, tokens: cc.countTokens(messages), archive: r.archivePath !== null })))
        .catch((e) => { console.error(e); process.exit(1) })
    `
    const child = run('node', ['-e', script], { cwd: project, env })
    expect(child.status, child.output).toBe(0)
    const result = JSON.parse(child.stdout.trim().split('\n').pop()!)
    expect(result.compacted).toBe(true)
    expect(result.error).toBeNull()
    expect(result.summary).toBe('string')
    expect(result.n).toBeLessThan(25)
    expect(result.after).toBeLessThan(result.before)
    expect(result.tokens).toBeGreaterThan(0)
    expect(result.archive).toBe(true)
  })

  it('import (ES module)', () => {
    const script = `
      import cc, { countTokens, Compactor } from 'context-compact'
      console.log(JSON.stringify({ n: countTokens([{ role: 'user', content: 'hello world' }]), same: cc.countTokens === countTokens, compactor: typeof Compactor }))
    `
    const child = run('node', ['--input-type=module', '-e', script], { cwd: project, env })
    expect(child.status, child.output).toBe(0)
    expect(JSON.parse(child.stdout.trim())).toEqual({ n: 2, same: true, compactor: 'function' })
  })

  it('context-compact/ai-sdk: shipped, and loads without the AI SDK (an optional peer dependency, not installed)', () => {
    const list = run('tar', ['-tzf', tarballs.root])
    for (const file of ['package/adapters/ai-sdk/index.js', 'package/adapters/ai-sdk/index.mjs', 'package/adapters/ai-sdk/index.d.mts', 'package/adapters/ai-sdk/index.d.cts']) expect(list.stdout.split('\n')).toContain(file)
    expect(existsSync(join(project, 'node_modules', 'ai'))).toBe(false)
    const script = `
      const { compactionStep } = require('context-compact/ai-sdk')
      const step = compactionStep({ contextTokenLimit: 100000, outputDir: './archives', sessionId: 'ai-sdk' })
      step({ messages: [{ role: 'user', content: 'hello' }], steps: [] }).then((out) => console.log(JSON.stringify({ out: out === undefined, last: step.lastResult })))
    `
    const child = run('node', ['-e', script], { cwd: project, env })
    expect(child.status, child.output).toBe(0)
    expect(JSON.parse(child.stdout.trim())).toEqual({ out: true, last: null })
    const esm = run('node', ['--input-type=module', '-e', "import { compactionStep, recallTool } from 'context-compact/ai-sdk'; console.log(typeof compactionStep, typeof recallTool)"], { cwd: project, env })
    expect(esm.status, esm.output).toBe(0)
    expect(esm.stdout.trim()).toBe('function function')
  })

  it('context-compact/openai-agents: shipped, and loads without the Agents SDK (an optional peer dependency, not installed)', () => {
    const list = run('tar', ['-tzf', tarballs.root])
    for (const file of ['package/adapters/openai-agents/index.js', 'package/adapters/openai-agents/index.mjs', 'package/adapters/openai-agents/index.d.mts', 'package/adapters/openai-agents/index.d.cts', 'package/adapters/openai-agents/runner.js']) expect(list.stdout.split('\n')).toContain(file)
    expect(existsSync(join(project, 'node_modules', '@openai', 'agents'))).toBe(false)
    // Any object with the Session methods is a session: the SDK itself is not needed to use one.
    const script = `
      const { CompactingSession, recallTool } = require('context-compact/openai-agents')
      const items = []
      const inner = { getSessionId: async () => 'install', getItems: async () => items.slice(), addItems: async (more) => { items.push(...more) }, popItem: async () => items.pop(), clearSession: async () => { items.length = 0 } }
      const session = new CompactingSession(inner, { contextTokenLimit: 100000, outputDir: './archives' })
      let sdk = null
      try { recallTool() } catch (error) { sdk = { code: error.code, message: error.message } }
      session.addItems([{ role: 'user', content: 'hello' }])
        .then(() => session.runCompaction())
        .then((out) => console.log(JSON.stringify({ out, last: session.lastResult, items: items.length, sdk })))
    `
    const child = run('node', ['-e', script], { cwd: project, env })
    expect(child.status, child.output).toBe(0)
    const out = JSON.parse(child.stdout.trim())
    expect(out).toMatchObject({ out: null, last: null, items: 1 })
    expect(out.sdk.code).toBe('ERR_CONTEXT_COMPACT_MISSING_PEER')
    expect(out.sdk.message).toMatch(/npm install @openai\/agents/)
    const esm = run('node', ['--input-type=module', '-e', "import { CompactingSession, recallTool } from 'context-compact/openai-agents'; console.log(typeof CompactingSession, typeof recallTool)"], { cwd: project, env })
    expect(esm.status, esm.output).toBe(0)
    expect(esm.stdout.trim()).toBe('function function')
  })

  it('context-compact/pi: shipped, and loads and compacts without pi-agent-core (an optional peer dependency, not installed)', () => {
    const list = run('tar', ['-tzf', tarballs.root])
    for (const file of ['package/adapters/pi/index.js', 'package/adapters/pi/index.mjs', 'package/adapters/pi/index.d.mts', 'package/adapters/pi/index.d.cts']) expect(list.stdout.split('\n')).toContain(file)
    expect(existsSync(join(project, 'node_modules', '@earendil-works', 'pi-agent-core'))).toBe(false)
    // The adapter needs nothing of pi at run time: pi's messages are plain objects.
    const script = `
      const { compactionRequest, recallTool } = require('context-compact/pi')
      const prepare = compactionRequest({ contextTokenLimit: 100000, outputDir: './archives' })
      const messages = [{ role: 'system', content: 'You are terse.', timestamp: 1 }, { role: 'user', content: 'hello', timestamp: 2 }]
      prepare({ context: { messages }, model: {}, thinkingLevel: 'off' })
        .then((update) => console.log(JSON.stringify({ update: update ?? null, tool: recallTool({ outputDir: './archives' }).name })))
    `
    const child = run('node', ['-e', script], { cwd: project, env })
    expect(child.status, child.output).toBe(0)
    expect(JSON.parse(child.stdout.trim())).toEqual({ update: null, tool: 'recall' })
    const esm = run('node', ['--input-type=module', '-e', "import { compactionRequest, recallTool } from 'context-compact/pi'; console.log(typeof compactionRequest, typeof recallTool)"], { cwd: project, env })
    expect(esm.status, esm.output).toBe(0)
    expect(esm.stdout.trim()).toBe('function function')
  })

  it('context-compact/langchain in a project without LangChain: the subpath loads (require and import), the middleware says what to install', () => {
    const script = `
      const adapter = require('context-compact/langchain')
      import('context-compact/langchain').then((esm) => {
        let error = null
        try { adapter.contextCompactMiddleware({}) } catch (e) { error = { code: e.code, message: e.message } }
        console.log(JSON.stringify({ cjs: typeof adapter.contextCompactMiddleware, esm: esm.contextCompactMiddleware === adapter.contextCompactMiddleware, error }))
      })
    `
    const child = run('node', ['-e', script], { cwd: project, env })
    expect(child.status, child.output).toBe(0)
    const result = JSON.parse(child.stdout.trim().split('\n').pop()!)
    expect(result).toMatchObject({ cjs: 'function', esm: true, error: { code: 'ERR_CONTEXT_COMPACT_MISSING_PEER' } })
    expect(result.error.message).toMatch(/npm install langchain @langchain\/core/)
  })

  it('npx context-compact demo exits 0', () => {
    const child = run('npx', ['--offline', 'context-compact', 'demo'], { cwd: project, env })
    expect(child.status, child.output).toBe(0)
    expect(child.stdout).toContain('Statistics')
    expect(existsSync(join(project, '.context-compact', 'demo'))).toBe(true)
    expect(dirname(realpathSync(join(project, 'node_modules', '.bin', 'context-compact')))).toBe(join(realpathSync(project), 'node_modules', 'context-compact', 'cli'))
  })
})
