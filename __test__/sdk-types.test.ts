// index.d.ts against the SDKs' own message types: __test__/types/sdk-types.ts passes each SDK's
// message array (AI SDK ModelMessage, OpenAI Responses ResponseInputItem, Gemini Content,
// LangChain BaseMessage) without casts and asserts the same type comes back; its
// `@ts-expect-error` lines fail the compilation if the types start accepting non-messages.

import { spawnSync } from 'node:child_process'
import { join } from 'node:path'

import { describe, expect, it } from 'vitest'

const ROOT = join(__dirname, '..')

describe('SDK message types', () => {
  it('tsc --strict -p __test__/types: each SDK type goes in and comes back unchanged', () => {
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
    const result = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '-p', join('__test__', 'types')], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 120_000,
    })
    expect(result.status, result.stdout + result.stderr).toBe(0)
  }, 120_000)
})
