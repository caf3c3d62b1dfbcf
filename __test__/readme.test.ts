// The README's quick start is a promise: its two commands are exactly what CI runs (the test
// command) and what runs the main job (the demo), and both scripts exist.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

import { describe, expect, it } from 'vitest'

const root = join(__dirname, '..')
const readme = readFileSync(join(root, 'README.md'), 'utf8')
const ci = readFileSync(join(root, '.ci', 'run'), 'utf8')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

function quickStartCommands(): string[] {
  const section = readme.split(/^## Quick start$/m)[1]?.split(/^## /m)[0] ?? ''
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? ''
  return block
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '')
}

describe('README quick start', () => {
  it('has exactly two commands: one runs the demo, one runs every test', () => {
    const commands = quickStartCommands()
    expect(commands).toEqual(['npm install && npm run demo', 'npm install && npm test'])
  })

  it('the test command is the one .ci/run runs', () => {
    const [, testCommand] = quickStartCommands()
    const ciCommands = ci.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))
    expect(ciCommands).toContain(testCommand)
  })

  it('the scripts behind them exist', () => {
    expect(pkg.scripts.demo).toBe('node cli/context-compact.js demo')
    expect(pkg.scripts.test).toContain('cargo test')
    expect(pkg.scripts.test).toContain('vitest run')
    expect(pkg.scripts.prepare).toMatch(/^napi build .*--release/)
  })

  it('has no unfilled placeholders', () => {
    expect(readme).not.toMatch(/\b(OPTIONS_TABLE|ERROR_TABLE|PERF_TABLE|TRIGGER_TABLE|COMPARISON)\b/)
  })
})
