// Issue 36: a thousand compactions later, the summary is still bounded. A `Compactor` drives a
// synthetic agent (benchmark/loops/long-run.mjs: a tool call and a 2–20K-character result each step,
// several files touched, a new request now and then, some calls failing) at windows of 20K, 100K
// and 1M tokens, with the extractive summarizer and with a summarizer that rewrites the previous
// summary in about 150 tokens. After every compaction: the summary message within the budget
// (`summaryBudgetTokens`, by default 10 % of the window, at least 4 000 tokens), its size flat
// after the first compactions, never STILL_OVER_LIMIT; at the end, restore exact. The timings and
// sizes are printed by `npm run bench:long-run`, not asserted here.
import { describe, expect, it, vi } from 'vitest'

import * as lib from '../../index'
import { createRecallTool } from '../../index'
// @ts-expect-error: the benchmark's modules are plain ES modules without declarations
import { runLongLoop } from '../../benchmark/loops/long-run.mjs'

vi.setConfig({ testTimeout: 300_000 })

type Compaction = { step: number; tokens: number | null; headerTokens: number; code: string | null; sections: Record<string, number>; headers: string[] }

const defaultBudget = (window: number) => Math.max(Math.floor(window / 10), Math.min(4_000, Math.floor((window * 15) / 100)))

const RUNS = [
  { window: 20_000, steps: 1_000 },
  { window: 100_000, steps: 1_000 },
  // Fewer steps with larger results: a 1M window still compacts many times.
  { window: 1_000_000, steps: 200, minChars: 150_000, maxChars: 350_000 },
]

describe.each(RUNS)('a long loop at a window of $window tokens', (run) => {
  it.each(['extractive', 'fixed'])('with the %s summarizer: the summary stays within its budget, flat, and restore is exact', async (writer) => {
    const { compactions, restoreExact, outputDir, sessionId } = await runLongLoop(lib, { ...run, writer })
    const budget = defaultBudget(run.window)
    expect(compactions.length).toBeGreaterThanOrEqual(8)
    for (const c of compactions as Compaction[]) {
      expect(c.code, `compaction at step ${c.step}`).not.toBe('STILL_OVER_LIMIT')
      expect(c.tokens, `compaction at step ${c.step}`).not.toBeNull()
      // Everything but the header line (the count of messages and the archive's path) is within the budget.
      expect(c.tokens! - c.headerTokens, `compaction at step ${c.step}: ${JSON.stringify(c.sections)}`).toBeLessThanOrEqual(budget)
      // No section is written with nothing to say.
      expect(Object.keys(c.sections).every((s) => c.sections[s] > 0)).toBe(true)
    }
    // Flat: the second half of the run grows the summary by less than a fifth of the budget,
    // however many compactions it holds.
    const sizes = (compactions as Compaction[]).map((c) => c.tokens!)
    const half = Math.floor(sizes.length / 2)
    expect(Math.max(...sizes.slice(half)) - Math.max(...sizes.slice(0, half)), sizes.join(' ')).toBeLessThanOrEqual(budget / 5)
    expect(restoreExact).toBe(true)

    // The full ledger is beside the archives: the recall tool gives it whole.
    const recall = createRecallTool({ outputDir, sessionId, maxTokens: 200_000 })
    const ledger = await recall.run({ ledger: true })
    expect(ledger).toMatch(/^## Ledger \(extracted from tool calls\)\nFiles read:/)
    expect(ledger).not.toContain('more files under')
    expect(ledger).toContain('- tests/unit/f')
  })
})

it('the extractive summary of a long loop is updated, not stacked: each header once, no empty section', async () => {
  const { compactions } = await runLongLoop(lib, { window: 20_000, steps: 200, writer: 'extractive' })
  const last = (compactions as Compaction[]).at(-1)!
  expect(compactions.length).toBeGreaterThan(20)
  // Every summary's headers, each once; the extractive text's sections, each with something to say.
  for (const c of compactions as Compaction[]) expect(new Set(c.headers).size, c.headers.join(', ')).toBe(c.headers.length)
  for (const header of ['Goal', 'Tool calls', 'Current state', 'Next steps']) expect(last.headers, header).toContain(header)
  expect(last.headers).not.toContain('File operations')
})
