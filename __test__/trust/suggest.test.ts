// lib/options/suggest.js: the one edit distance behind the library's unknown-option warning and the CLI's
// unknown-flag hint.
import { createRequire } from 'node:module'

import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

const require = createRequire(import.meta.url)
const { editDistance } = require('../../lib/options/suggest.js')

/** The textbook recurrence, memoised: the reference the two-row version must agree with. */
function reference(a: string, b: string): number {
  const memo = new Map<string, number>()
  const d = (i: number, j: number): number => {
    if (i === 0) return j
    if (j === 0) return i
    const key = `${i},${j}`
    if (!memo.has(key)) memo.set(key, Math.min(d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1)))
    return memo.get(key)!
  }
  return d(a.length, b.length)
}

describe('editDistance', () => {
  it('counts insertions, deletions and substitutions, case-sensitive', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3)
    expect(editDistance('', 'abc')).toBe(3)
    expect(editDistance('abc', '')).toBe(3)
    expect(editDistance('contextTokenLimit', 'contextTokenLimit')).toBe(0)
    expect(editDistance('contextLimit', 'contextTokenLimit')).toBe(5)
    expect(editDistance('Format', 'format')).toBe(1)
  })

  it('agrees with the textbook recurrence, and is symmetric', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), (a, b) => {
        expect(editDistance(a, b)).toBe(reference(a, b))
        expect(editDistance(b, a)).toBe(editDistance(a, b))
      }),
      { numRuns: 300, seed: 38 },
    )
  })
})
