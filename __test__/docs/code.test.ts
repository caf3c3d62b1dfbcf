// Every TypeScript code block of the README and of docs/*.md compiles as written, against the
// SDKs' own types, under `strict` and `exactOptionalPropertyTypes`: what a user copies must not
// need a cast. Each block is compiled as a module of its own. A block that uses names it does
// not define (the user's tools, their `runTools`) is preceded by an HTML comment, invisible on
// the rendered page, that declares them:
//
//   <!-- declare: declare function runTools(content: Anthropic.ContentBlock[]): Promise<Anthropic.ToolResultBlockParam[]> -->
//
// The declarations are compiled before the block, so they must type-check too.

import { spawn } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import { asModule, codeBlocks } from '../support/markdown'

const ROOT = join(__dirname, '..', '..')

/** Runs a command without blocking this worker (a long synchronous run starves vitest's RPC). */
function runAsync(command: string, args: string[], cwd: string, timeoutMs: number): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', reject)
    child.on('close', (status) => {
      clearTimeout(timer)
      resolve({ status, stdout, stderr })
    })
  })
}

const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]
const OUT = join(ROOT, `.docs-build-${process.pid}`)
afterAll(() => rmSync(OUT, { recursive: true, force: true }))

describe('code blocks of the README and docs/', () => {
  it('the extractor finds blocks, their declarations and multi-line imports', () => {
    const markdown = [
      'Text',
      '<!-- declare: declare const tools: string[] -->',
      '```ts',
      'import {',
      '  Compactor,',
      "} from 'context-compact'",
      'const c = new Compactor({ tools })',
      '```',
      '```sh',
      'npm test',
      '```',
      '```typescript',
      'const x: number = 1',
      '```',
    ].join('\n')
    const blocks = codeBlocks(markdown, 'x.md')
    expect(blocks.map((b) => b.where)).toEqual(['x.md:3', 'x.md:12'])
    expect(blocks[0].declarations).toBe('declare const tools: string[]')
    expect(blocks[1].declarations).toBe('')
    const module = asModule(blocks[0])
    expect(module.indexOf("} from 'context-compact'")).toBeLessThan(module.indexOf('declare const tools'))
    expect(module.indexOf('declare const tools')).toBeLessThan(module.indexOf('new Compactor'))
  })

  it('tsc --noEmit, strict, exactOptionalPropertyTypes: every block compiles as written', async () => {
    mkdirSync(OUT, { recursive: true })
    const written: string[] = []
    for (const file of DOCS) {
      for (const block of codeBlocks(readFileSync(join(ROOT, file), 'utf8'), file)) {
        const name = `${block.where.replace(/[^A-Za-z0-9]+/g, '_')}.ts`
        writeFileSync(join(OUT, name), asModule(block))
        written.push(name)
      }
    }
    expect(written.length).toBeGreaterThan(3)
    writeFileSync(
      join(OUT, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'preserve',
          moduleResolution: 'bundler',
          lib: ['ES2022', 'DOM'],
          types: ['node'],
          strict: true,
          exactOptionalPropertyTypes: true,
          noEmit: true,
          skipLibCheck: true,
          esModuleInterop: true,
        },
        include: ['./*.ts'],
      }),
    )
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
    const result = await runAsync(process.execPath, [tsc, '--noEmit', '-p', OUT], ROOT, 180_000)
    // tsc names the generated file; each starts with a comment naming the README line.
    expect(result.status, result.stdout + result.stderr).toBe(0)
  }, 180_000)
})
