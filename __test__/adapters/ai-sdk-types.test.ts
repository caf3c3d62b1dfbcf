// The types of context-compact/ai-sdk, compiled by tsc (never run): __test__/types/ai-sdk/ against
// AI SDK 5, 6 and 7 in turn (each tsconfig maps `ai` to one version), under `strict` and
// `exactOptionalPropertyTypes`; and adapters/ai-sdk/index.d.ts itself checked without skipLibCheck (the
// SDKs' own declarations have errors under exactOptionalPropertyTypes, so only errors in this
// package's files count).

import { spawn } from 'node:child_process'
import { join } from 'node:path'

import { describe, expect, it } from 'vitest'

const ROOT = join(__dirname, '..', '..')
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')

function tsc(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [TSC, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (d) => (output += d))
    child.stderr.setEncoding('utf8').on('data', (d) => (output += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, output }))
  })
}

const VERSIONS = [5, 6, 7]
const OWN_FILE_ARGS = [
  '--noEmit',
  '--strict',
  '--exactOptionalPropertyTypes',
  '--module', 'preserve',
  '--moduleResolution', 'bundler',
  '--target', 'ES2022',
  '--lib', 'ES2022,DOM',
  '--types', 'node',
  join('adapters', 'ai-sdk', 'index.d.ts'),
]

describe('context-compact/ai-sdk types', () => {
  // The four compilations run two at a time (each takes 20 to 60 s on a small machine).
  let results: Promise<Array<{ code: number | null; output: string }>>
  const all = () =>
    (results ??= (async () => {
      const jobs = [...VERSIONS.map((major) => ['--noEmit', '-p', join('__test__', 'types', 'ai-sdk', `tsconfig.v${major}.json`)]), OWN_FILE_ARGS]
      const out: Array<{ code: number | null; output: string }> = new Array(jobs.length)
      let next = 0
      const worker = async () => {
        while (next < jobs.length) {
          const i = next++
          out[i] = await tsc(jobs[i])
        }
      }
      await Promise.all([worker(), worker()])
      return out
    })())

  it.each(VERSIONS.map((major, i) => [major, i]))('AI SDK %i: prepareStep: compactionStep(…) with no cast, strict + exactOptionalPropertyTypes', async (_major, i) => {
    const result = (await all())[i]
    expect(result.code, result.output).toBe(0)
  }, 300_000)

  it('adapters/ai-sdk/index.d.ts has no error of its own, without skipLibCheck', async () => {
    const result = (await all())[VERSIONS.length]
    const ours = result.output.split('\n').filter((line) => /^(adapters\/|index\.d\.ts)/.test(line))
    expect(ours).toEqual([])
    // The file was compiled: tsc either passed or only reported the SDK's own declarations.
    expect(result.code === 0 || /node_modules\//.test(result.output), result.output.slice(0, 2000)).toBe(true)
  }, 300_000)
})
