// The fidelity benchmark's probes (benchmark/fidelity/), run on a small set: what an agent
// needs next survives a compaction. With a summary writer that writes nothing useful, the
// library's own guarantees are asserted: the files modified and read (recall and precision of the
// ledger against the compacted tool calls), the task statement, the user's constraints (within
// their budget), the plan's open items, the latest error's informative line, and every compacted
// message reachable. The figures of the extractive summarizer and the comparison with Claude
// Code's own summaries are reported, not asserted (`npm run bench:fidelity` writes them all into
// docs/fidelity.md). Real sessions are read at test time from ../shared/data.
import { describe, expect, it, vi } from 'vitest'

import { countTokens, compactMessages } from '../../index'
// @ts-expect-error: the benchmark's modules are plain ES modules without declarations
import { tally } from '../../benchmark/fidelity/probes.mjs'
// @ts-expect-error: as above
import { answerText, runCase } from '../../benchmark/fidelity/run.mjs'
// @ts-expect-error: as above
import { AGENT_NAMES, realSessions, syntheticSession } from '../../benchmark/fidelity/sessions.mjs'
import { FORMATS, render, substantialArb } from '../support/format-conversations'
import fc from 'fast-check'
import { tempDir } from '../support/helpers'

vi.setConfig({ testTimeout: 600_000 })

type Probe = { kind: string; name: string; ok: boolean }

/** The probes the library guarantees with any summary writer. */
const GUARANTEED = ['task', 'plan', 'error', 'files modified', 'files read', 'recall', 'fact via recall', 'value']

function expectGuarantees(run: any, label: string) {
  const missed = (run.probes as Probe[]).filter((p) => GUARANTEED.includes(p.kind) && !p.ok)
  expect(missed, `${label}: ${JSON.stringify(missed)}`).toEqual([])
  for (const which of ['modified', 'read']) {
    const f = run.files[which]
    if (!f) continue
    expect(f.missed, `${label}: files ${which} missed`).toEqual([])
    expect(f.extra, `${label}: files ${which} listed but not touched so`).toEqual([])
  }
  // The user's constraints: all of them, unless the section says some messages were left out
  // for its budget (the task is kept then too).
  const section = run.result.summary.match(/^\((\d+) user messages? left out to stay within/m)
  if (!section) expect((run.probes as Probe[]).filter((p) => (p.kind === 'constraint' || p.kind === 'user message') && !p.ok), label).toEqual([])
  expect(run.restoreExact, label).toBe(true)
  expect(run.result.stats.compactedTokenCount, label).toBe(countTokens(run.result.messages, run.session.format === 'anthropic' || run.session.format === 'openai' ? {} : { format: run.session.format }))
}

describe.each(AGENT_NAMES as string[])('synthetic %s session', (agent) => {
  const session = syntheticSession(agent, { seed: 3, episodes: 90 })
  it.each([1, 3])('%i compaction(s): what the library guarantees survives with a summary writer that writes nothing', async (rounds) => {
    const run = await runCase(session, { rounds, kind: 'nothing' })
    expect(run.skipped).toBeUndefined()
    run.session = session
    // The probes the synthetic session plants are all asked.
    const kinds = new Set((run.probes as Probe[]).map((p) => p.kind))
    for (const kind of ['task', 'plan', 'error', 'files modified', 'files read', 'constraint', 'value', 'recall']) expect(kinds.has(kind), kind).toBe(true)
    expectGuarantees(run, `${agent} ×${rounds}`)
    // The extractive summarizer, reported.
    const extractive = await runCase(session, { rounds, kind: 'extractive' })
    console.log(`${session.name} ×${rounds}: nothing ${JSON.stringify(tally(run.probes))}; extractive ${JSON.stringify(tally(extractive.probes))}`)
  })
})

const real = realSessions()
describe.skipIf(real.length === 0)('real sessions', () => {
  const small = real.filter((s: any) => ['cc-spotter-gqc-pre', 'openhands-sdk-sonnet4-hello', 'mini-gemini3-pytest-6197'].includes(s.name))
  it.each(small.map((s: any) => [s.name, s]))('%s: the guarantees hold, once and three times in a row', async (_name, session: any) => {
    for (const rounds of [1, 3]) {
      const run = await runCase(session, { rounds, kind: 'nothing', options: { userMessagesMaxTokens: 100_000, summaryBudgetTokens: 400_000 } })
      if (run.skipped) continue
      run.session = session
      expectGuarantees(run, `${session.name} ×${rounds}`)
    }
  })

  it("against Claude Code's own summaries (reported, not asserted)", async () => {
    for (const session of real.filter((s: any) => s.claudeCodeSummary)) {
      const run = await runCase(session, { rounds: 1, kind: 'extractive' })
      const ours = (run.probes as Probe[]).filter((p) => !p.kind.includes('recall'))
      const theirs = answerText(run, session.claudeCodeSummary) as Probe[]
      const count = (ps: Probe[]) => ps.filter((p) => p.ok).length
      console.log(`${session.name}: context-compact (extractive) ${count(ours)}/${ours.length}, Claude Code ${count(theirs)}/${theirs.length}`)
      expect(theirs.length).toBe(ours.length)
    }
  })
})

// compactedTokenCount is countTokens(result.messages), in every format (the model turn written
// after the summary where roles must alternate included).
describe.each(FORMATS)('%s: the numbers agree', (format) => {
  it('compactedTokenCount equals countTokens(result.messages)', async () => {
    await fc.assert(
      fc.asyncProperty(substantialArb(3, 6, 2), async (c) => {
        const list = render(c, format)
        const opts: any = { format, force: true, provider: 'extractive', contextTokenLimit: Math.max(600, countTokens(list, { format } as any)), tailRetentionRatio: 0.2, thinking: 'keep', outputDir: tempDir() }
        const result = await compactMessages(list, opts)
        fc.pre(result.compacted)
        expect(result.stats.compactedTokenCount).toBe(countTokens(result.messages, { format } as any))
        expect(result.stats.compactionRatio).toBeCloseTo(result.stats.compactedTokenCount / result.stats.originalTokenCount, 12)
      }),
      { numRuns: 8 },
    )
  })
})
