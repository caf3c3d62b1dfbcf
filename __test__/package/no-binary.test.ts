// When no native binary loads (a platform without a prebuilt package, or the optional
// dependency left out), require('context-compact') must say what is wrong and what to do.
import { spawnSync } from 'node:child_process'
import { copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

const root = join(__dirname, '..', '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

function load(cwd: string, env: NodeJS.ProcessEnv = {}, code = "require('./index.js')") {
  const child = spawnSync(process.execPath, ['-e', code], { cwd, env: { ...process.env, ...env }, encoding: 'utf8' })
  return { status: child.status, stderr: child.stderr }
}

function expectClearMessage(stderr: string) {
  expect(stderr).toContain('context-compact: no native binary could be loaded for this platform')
  expect(stderr).toContain(`(${process.platform} ${process.arch}`)
  for (const name of Object.keys(pkg.optionalDependencies)) {
    expect(stderr).toContain(name.replace(/^context-compact-/, ''))
  }
  expect(stderr).toContain('To build from source')
  expect(stderr).toContain('npm install')
  expect(stderr).toContain('Rust')
  expect(stderr).toContain('ERR_CONTEXT_COMPACT_NO_BINARY')
}

describe('no native binary', () => {
  const dir = mkdtempSync(join(tmpdir(), 'context-compact-no-binary-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('the JS files without any .node (and no platform package) throw a clear error', () => {
    for (const file of ['index.js', 'index.mjs', 'package.json']) copyFileSync(join(root, file), join(dir, file))
    // The JS layer the entry loads (the published package ships it: package.json "files").
    cpSync(join(root, 'lib'), join(dir, 'lib'), { recursive: true })
    const { status, stderr } = load(dir, { NAPI_RS_NATIVE_LIBRARY_PATH: '' })
    expect(status).not.toBe(0)
    expectClearMessage(stderr)
    // The ES module entry gives the same error.
    const esm = spawnSync(process.execPath, ['--input-type=module', '-e', "await import('./index.mjs')"], {
      cwd: dir,
      encoding: 'utf8',
    })
    expect(esm.status).not.toBe(0)
    expectClearMessage(esm.stderr)
  })

  it('a loader pointed at a missing file throws the same error, with the loader’s as its cause', () => {
    const code = "try { require('./index.js') } catch (e) { console.error(e.message + '\\n' + e.code); console.error('CAUSE ' + (e.cause && e.cause.message)); process.exit(1) }"
    const { status, stderr } = load(root, { NAPI_RS_NATIVE_LIBRARY_PATH: join(dir, 'missing.node') }, code)
    expect(status).toBe(1)
    expectClearMessage(stderr)
    expect(stderr).toMatch(/CAUSE .*native binding/i)
  })
})
