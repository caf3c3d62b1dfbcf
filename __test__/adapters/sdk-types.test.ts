// index.d.ts against the SDKs' own message types: __test__/types/sdk-types.ts passes each SDK's
// message array (AI SDK ModelMessage, OpenAI Responses ResponseInputItem, Gemini Content,
// LangChain BaseMessage) without casts and asserts the same type comes back; its
// `@ts-expect-error` lines fail the compilation if the types start accepting non-messages.

import { spawn } from 'node:child_process'
import { join } from 'node:path'

import { describe, expect, it } from 'vitest'

const ROOT = join(__dirname, '..', '..')

describe('SDK message types', () => {
  it('tsc --strict -p __test__/types: each SDK type goes in and comes back unchanged', async () => {
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
    // Asynchronously: a long synchronous run would starve vitest's RPC with this worker.
    const result = await new Promise<{ status: number | null; output: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [tsc, '--noEmit', '--strict', '-p', join('__test__', 'types')], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
      let output = ''
      child.stdout.setEncoding('utf8').on('data', (d) => (output += d))
      child.stderr.setEncoding('utf8').on('data', (d) => (output += d))
      const timer = setTimeout(() => child.kill('SIGKILL'), 180_000)
      child.on('error', reject)
      child.on('close', (status) => {
        clearTimeout(timer)
        resolve({ status, output })
      })
    })
    expect(result.status, result.output).toBe(0)
  }, 180_000)
})
