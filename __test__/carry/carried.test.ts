// What the agent needs next is carried after every summary: its task list (the latest state of
// its plan tool), its latest failure with the lines that say what went wrong, and the task it was
// given (the user's first request) among the user's words. In every message format, with every
// kind of summary writer, through successive compactions; restore stays exact and the result
// fits. The failure forms are read from the agents' real sessions in ../shared/data where one
// exists (read at test time, never copied).
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'

import { compactMessages, countTokens, measureTokens, restoreMessages, type CompactOptions, type Message } from '../../index'
import { type Conversation, extend, FORMATS, type FormatName, render, substantialArb, textOf } from '../support/format-conversations'
import { tempDir } from '../support/helpers'
import { loadReplay } from '../support/pi-session'

type Msg = any

vi.setConfig({ testTimeout: 300_000 })

const REAL = join(__dirname, '..', '..', '..', 'shared', 'data', 'real')
const PLAN = '## Task list (as the agent last set it)'
const FAILURE = '## Latest failure'
const USERS = '## User messages (verbatim)'
const PI_LARGE = join(__dirname, '..', '..', '..', 'shared', 'data', 'pi-session-large.jsonl')

/** The code points after `from` up to `n` of them (entries state lengths in characters). */
function pastChars(s: string, from: number, n: number): number {
  let i = from
  for (let k = 0; k < n; k++) i += (s.codePointAt(i) ?? 0) > 0xffff ? 2 : 1
  return i
}

/** The entries of a section (`[label · N characters · notes]` then N characters), read by their lengths. */
function entries(summary: string, header: string): { intro: string[]; entries: Array<{ label: string; notes: string[]; text: string }> } | null {
  const at = summary.indexOf(`\n${header}\n`)
  if (at < 0) return null
  const out = { intro: [] as string[], entries: [] as Array<{ label: string; notes: string[]; text: string }> }
  let pos = at + header.length + 2
  while (pos < summary.length) {
    const nl = summary.indexOf('\n', pos)
    const line = summary.slice(pos, nl < 0 ? undefined : nl)
    const m = /^\[(.*?) · (\d+) characters((?: · [^\]]*)?)\]$/.exec(line)
    if (!m) {
      if (out.entries.length > 0 || line.startsWith('## ')) break
      out.intro.push(line)
      pos = nl < 0 ? summary.length : nl + 1
      continue
    }
    const end = pastChars(summary, nl + 1, Number(m[2]))
    out.entries.push({ label: m[1], notes: m[3] ? m[3].slice(3).split(' · ') : [], text: summary.slice(nl + 1, end) })
    // Entries follow each other after a newline (a blank line in the user's messages).
    if (summary.startsWith('\n[', end)) pos = end + 1
    else if (summary.startsWith('\n\n[', end)) pos = end + 2
    else break
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Across formats, summary writers and successive compactions

/**
 * `c` with a TodoWrite call and a failing `shell` call in its first tool step, and no other
 * failure (so that, once that step is compacted, they are the latest of each).
 */
function withPlanAndFailure(c: Conversation, round: number, items: Array<{ content: string; status: string }>, error: string): Conversation {
  const episodes = structuredClone(c.episodes)
  const steps = episodes.flatMap((e) => e.steps)
  for (const step of steps) for (const call of step.calls) call.isError = false
  steps[0].calls.push({ id: `plan_${round}`, name: 'TodoWrite', args: { todos: items.map((i) => ({ ...i, activeForm: `Doing: ${i.content}` })) }, output: 'Todos have been modified successfully.', isError: false, approval: false })
  steps[0].calls.push({ id: `fail_${round}`, name: 'shell', args: { command: `make test-${round}` }, output: `Exit code 2\n${'compiling module\n'.repeat(30)}${error}\nmake: *** [test] Error 2`, isError: true, approval: false })
  return { ...c, episodes }
}

/** `c` without failures (the turns appended when no newer plan or failure is wanted). */
function withoutFailures(c: Conversation): Conversation {
  const episodes = structuredClone(c.episodes)
  for (const step of episodes.flatMap((e) => e.steps)) for (const call of step.calls) call.isError = false
  return { ...c, episodes }
}

const planArb = (round: number) =>
  fc.array(fc.record({ content: fc.lorem({ maxCount: 6, mode: 'words' }).map((w) => `${w || 'step'} r${round}`), status: fc.constantFrom('pending', 'in_progress', 'completed') }), { minLength: 1, maxLength: 6 })

describe.each(FORMATS)('%s', (format) => {
  it('the task list and the latest failure are carried after the summary, and forward through a second compaction', async () => {
    await fc.assert(
      fc.asyncProperty(substantialArb(4, 6, 3), substantialArb(3, 5, 3), planArb(1), planArb(2), fc.boolean(), fc.boolean(), async (first, more, plan1, plan2, custom, secondPlan) => {
        const dir = tempDir()
        const sessionId = `${format}-${Math.random().toString(36).slice(2)}`
        const summarizer = custom ? async () => 'Nothing to report.' : undefined
        const options = (list: Msg[]): CompactOptions =>
          ({
            format,
            contextTokenLimit: Math.max(600, countTokens(list, { format } as any)),
            // The sections' own budgets (planMaxTokens, latestFailureMaxTokens) rather than
            // their shares of a window this small.
            summaryBudgetTokens: 20_000,
            tailRetentionRatio: 0.05,
            force: true,
            provider: 'extractive',
            summarizer,
            thinking: 'keep',
            outputDir: dir,
            sessionId,
          }) as any
        const c1 = withPlanAndFailure(first, 1, plan1, 'error[E0425]: cannot find value `planted_one` in this scope')
        const list = render(c1, format)
        const once = await compactMessages(list, options(list))
        fc.pre(once.compacted && once.error === null)
        const summary1 = once.summary!
        // The first tool step was compacted (the tail is short): its calls are the latest.
        fc.pre(!once.messages.some((m: Msg) => JSON.stringify(m).includes('plan_1')))
        // A section left out for the result to fit says so in a warning (a window this tight
        // may need its tokens); the test asks for a result that kept them.
        const leftOut = (what: string) => once.warnings.some((w) => w.includes(what))
        if (!summary1.includes(`\n${PLAN}\n`)) expect(leftOut("the agent's task list was left out")).toBe(true)
        if (!summary1.includes(`\n${FAILURE}\n`)) expect(leftOut('the latest failed tool call was left out')).toBe(true)
        fc.pre(summary1.includes(`\n${PLAN}\n`) && summary1.includes(`\n${FAILURE}\n`))
        // The plan: each item with its status, open items first, in the agent's order.
        const open = plan1.filter((i) => i.status !== 'completed')
        const shown = entries(summary1, PLAN)
        expect(shown).not.toBeNull()
        if (open.length === 0) {
          expect(shown!.entries).toEqual([])
          expect(shown!.intro[0]).toContain(`set ${plan1.length} item`)
        } else {
          const ordered = [...open, ...plan1.filter((i) => i.status === 'completed')]
          expect(shown!.entries.map((e) => [e.label, e.text])).toEqual(ordered.map((i) => [i.status, i.content]))
        }
        // The failure: its command and the line that names the error, not the status line.
        const failure = entries(summary1, FAILURE)!
        expect(failure.entries[0].text).toBe('make test-1')
        expect(failure.entries[1].text).toContain('error[E0425]: cannot find value `planted_one` in this scope')
        expect(failure.entries[1].text).not.toContain('Exit code 2')
        expect(failure.intro.some((l) => /^Recall: archive=compact-\S+ from=\d+ to=\d+$/.test(l))).toBe(true)
        expect(once.stats.compactedTokenCount).toBe(countTokens(once.messages, { format } as any))

        // More turns: with or without a newer plan and failure.
        const c2 = secondPlan ? withPlanAndFailure(more, 2, plan2, 'FAILED tests/test_two.py::test_x - AssertionError: planted_two') : withoutFailures(more)
        const grown = extend(c1, c2, 1)
        const appended = render(grown, format).slice(list.length)
        const list2 = [...once.messages, ...appended]
        const twice = await compactMessages(list2, options(list2))
        fc.pre(twice.compacted && twice.error === null)
        const summary2 = twice.summary!
        // The second summary's middle holds the first summary: its sections are carried, or
        // replaced by the newer plan and failure when their step was compacted too.
        const firstSummary = list2.find((m) => textOf(m).startsWith('[context-compact]'))
        if (!twice.messages.includes(firstSummary) && summary2.includes(`\n${PLAN}\n`) && summary2.includes(`\n${FAILURE}\n`)) {
          const plan = entries(summary2, PLAN)!
          const failure2 = entries(summary2, FAILURE)!
          const newer = secondPlan && !twice.messages.some((m: Msg) => JSON.stringify(m).includes('plan_2'))
          if (newer) {
            const ordered = [...plan2.filter((i) => i.status !== 'completed'), ...plan2.filter((i) => i.status === 'completed')]
            if (ordered.some((i) => i.status !== 'completed')) expect(plan.entries.map((e) => e.text)).toEqual(ordered.map((i) => i.content))
            expect(failure2.entries[0].text).toBe('make test-2')
            expect(failure2.entries[1].text).toContain('FAILED tests/test_two.py::test_x - AssertionError: planted_two')
          } else if (!secondPlan) {
            expect(plan.entries.map((e) => e.text)).toEqual(shown!.entries.map((e) => e.text))
            expect(failure2.entries[0].text).toBe('make test-1')
            expect(failure2.intro).toEqual(failure.intro)
          }
        }
        expect(twice.stats.compactedTokenCount).toBe(countTokens(twice.messages, { format } as any))
        // Restore through both compactions is exact; the result fits.
        const restored = await restoreMessages(twice.messages, { format, outputDir: dir, sessionId } as any)
        expect(JSON.stringify(restored)).toBe(JSON.stringify([...list, ...appended]))
        expect(measureTokens(twice.messages, { ...options(list2), usage: undefined } as any).tokens).toBeLessThan(twice.threshold)
      }),
      { numRuns: 3 },
    )
  })
})

// ---------------------------------------------------------------------------------------------
// Strategies, the caller's own plan tool, a tight window

function planSession(): Message[] {
  const m: Message[] = [{ role: 'user', content: 'Task: port the exporter to gRPC. Never change the public API.' }]
  let id = 0
  const step = (name: string, input: Record<string, unknown>, output: string, isError = false) => {
    id++
    m.push({ role: 'assistant', content: [{ type: 'text', text: `Step ${id}. ${'Working through the exporter code. '.repeat(20)}` }, { type: 'tool_use', id: `t${id}`, name, input }] } as Message)
    m.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${id}`, content: output, ...(isError ? { is_error: true } : {}) }] } as Message)
  }
  step('set_tasks', { tasks: [{ title: 'Write the client', done: true }, { title: 'Switch the exporter', done: false }, { title: 'Update the golden test', done: false }] }, 'ok')
  for (let i = 0; i < 12; i++) step('Read', { file_path: `/r/src/f${i}.py` }, `def f${i}():\n${'    pass\n'.repeat(60)}`)
  step('Bash', { command: 'pytest -q' }, `Exit code 1\n${'.'.repeat(40)}\nE   ModuleNotFoundError: No module named 'grpc_tools'\n1 failed, 40 passed in 1.2s`, true)
  for (let i = 0; i < 4; i++) step('Read', { file_path: `/r/tests/t${i}.py` }, `def test_${i}():\n${'    assert True\n'.repeat(40)}`)
  m.push({ role: 'user', content: 'Go on.' })
  m.push({ role: 'assistant', content: 'Continuing.' })
  return m
}

describe('the task list and the latest failure', () => {
  it('read the caller own plan tool (planTools), with the summary and selective strategies', async () => {
    const session = planSession()
    for (const strategy of ['summary', 'selective'] as const) {
      const without = await compactMessages(session, { provider: 'extractive', force: true, contextTokenLimit: 8_000, outputDir: tempDir(), strategy })
      expect(without.compacted).toBe(true)
      if (without.summary) expect(without.summary).not.toContain(PLAN)
      const dir = tempDir()
      // A summary budget with room for both sections (an 8 000-token window gives it 1 200).
      const result = await compactMessages(session, { provider: 'extractive', force: true, contextTokenLimit: 8_000, summaryBudgetTokens: 20_000, outputDir: dir, strategy, planTools: ['set_tasks'], selective: { toolResults: 'drop' } as any })
      expect(result.compacted).toBe(true)
      if (result.summary === null) continue // a selective compaction that did not need a summary
      const plan = entries(result.summary, PLAN)!
      expect(plan.entries.map((e) => [e.label, e.text])).toEqual([
        ['pending', 'Switch the exporter'],
        ['pending', 'Update the golden test'],
        ['completed', 'Write the client'],
      ])
      const failure = entries(result.summary, FAILURE)!
      expect(failure.entries[1].text).toContain("E   ModuleNotFoundError: No module named 'grpc_tools'")
      // The ledger names the failure by that line too, not by "Exit code 1".
      expect(result.summary).toContain("- Bash `pytest -q`: E   ModuleNotFoundError: No module named 'grpc_tools'")
      const restored = await restoreMessages(result.messages, { outputDir: dir, sessionId: 'default' })
      expect(JSON.stringify(restored)).toBe(JSON.stringify(session))
    }
  })

  it('give way last when the window is tight, with a warning, and the result still fits', async () => {
    const session = planSession()
    const total = countTokens(session)
    let sawGiveWay = false
    for (const limit of [4, 5, 6, 7, 8, 9].map((d) => Math.floor(total / d))) {
      const dir = tempDir()
      const result = await compactMessages(session, { summarizer: async () => 'x', force: true, contextTokenLimit: limit, tailRetentionRatio: 0.05, outputDir: dir, planTools: ['set_tasks'] })
      if (!result.compacted) continue
      if (result.error === null) expect(measureTokens(result.messages, { contextTokenLimit: limit }).tokens).toBeLessThan(result.threshold)
      else expect(result.error.code).toBe('STILL_OVER_LIMIT')
      if (!result.summary!.includes(FAILURE)) expect(result.warnings.some((w) => w.includes('latest failed tool call was left out'))).toBe(true)
      if (!result.summary!.includes(PLAN)) {
        sawGiveWay = true
        expect(result.warnings.some((w) => w.includes("agent's task list was left out"))).toBe(true)
      }
      const restored = await restoreMessages(result.messages, { outputDir: dir, sessionId: 'default' })
      expect(JSON.stringify(restored)).toBe(JSON.stringify(session))
    }
    expect(sawGiveWay).toBe(true)
  })

  it('budgets and tool names are validated: a TypeError naming the option', async () => {
    const session = planSession()
    const base = { force: true, provider: 'extractive' as const, contextTokenLimit: 8_000, summaryBudgetTokens: 20_000, outputDir: tempDir() }
    for (const [name, value] of [
      ['planMaxTokens', Number.NaN],
      ['planMaxTokens', Number.POSITIVE_INFINITY],
      ['planMaxTokens', -1],
      ['planMaxTokens', 1.5],
      ['planMaxTokens', 'many'],
      ['planMaxTokens', 1e12],
      ['latestFailureMaxTokens', Number.NaN],
      ['latestFailureMaxTokens', Number.NEGATIVE_INFINITY],
      ['latestFailureMaxTokens', -3],
      ['latestFailureMaxTokens', {}],
      ['summaryBudgetTokens', 0],
      ['summaryBudgetTokens', -5],
      ['summaryBudgetTokens', 1.5],
      ['summaryBudgetTokens', true],
      ['summaryBudgetTokens', Number.NaN],
      ['planTools', 'TodoWrite'],
      ['planTools', [1]],
      ['planTools', ['']],
    ] as const) {
      await expect(compactMessages(session, { ...base, [name]: value } as any)).rejects.toThrow(TypeError)
      await expect(compactMessages(session, { ...base, [name]: value } as any)).rejects.toThrow(new RegExp(`options\\.${name}`))
    }
    // 0 and false turn the sections off; true is the default.
    for (const off of [0, false]) {
      const result = await compactMessages(session, { ...base, outputDir: tempDir(), planTools: ['set_tasks'], planMaxTokens: off, latestFailureMaxTokens: off })
      expect(result.summary).not.toContain(PLAN)
      expect(result.summary).not.toContain(FAILURE)
    }
    const on = await compactMessages(session, { ...base, outputDir: tempDir(), planTools: ['set_tasks'], planMaxTokens: true, latestFailureMaxTokens: true })
    expect(on.summary).toContain(PLAN)
    expect(on.summary).toContain(FAILURE)
  })
})

// ---------------------------------------------------------------------------------------------
// The task statement

describe('the task statement', () => {
  const session = (n: number, taskWords = 40): Message[] => {
    const m: Message[] = [{ role: 'user', content: `THE TASK: ${'migrate the exporter '.repeat(taskWords)}END OF TASK` }]
    for (let i = 0; i < n; i++) {
      m.push({ role: 'assistant', content: `ok ${i} ${'working '.repeat(60)}` })
      m.push({ role: 'user', content: `request ${i}: ${'please also adjust the thing '.repeat(12)}` })
    }
    m.push({ role: 'assistant', content: 'done' })
    return m
  }

  it('is always among the user messages, beside the most recent, through successive compactions', async () => {
    const dir = tempDir()
    const list = session(20)
    const opts = { provider: 'extractive' as const, force: true, contextTokenLimit: 12_000, summaryBudgetTokens: 20_000, userMessagesMaxTokens: 600, outputDir: dir }
    const once = await compactMessages(list, opts)
    const section1 = entries(once.summary!, USERS)!
    expect(section1.entries[0].label).toBe("task (the user's first request)")
    expect(section1.entries[0].text).toBe(list[0].content)
    expect(section1.entries.length).toBeGreaterThan(1)
    expect(section1.intro.some((l) => /^\(\d+ user messages left out to stay within 600 tokens/.test(l))).toBe(true)
    expect(once.warnings.some((w) => w.includes("the summary's section of the user's messages"))).toBe(true)
    // Two more compactions: the task stays first.
    let current = once.messages
    for (let round = 0; round < 2; round++) {
      const more = session(10).slice(1).map((m) => (typeof m.content === 'string' ? { ...m, content: `${m.content} (round ${round})` } : m))
      const next = await compactMessages([...current, ...more], opts)
      expect(next.compacted).toBe(true)
      const section = entries(next.summary!, USERS)!
      expect(section.entries[0].label).toBe("task (the user's first request)")
      expect(section.entries[0].text).toBe(list[0].content)
      current = next.messages
    }
  })

  it('is the first message that asks for something: commands, greetings and acknowledgements are skipped', async () => {
    const task = 'Add a --json flag to the export command and document it in docs/cli.md'
    const opening: Record<string, Msg[]> = {
      command: [{ role: 'user', content: '/model claude-opus-4-6' }, { role: 'assistant', content: 'Set model to claude-opus-4-6' }, { role: 'user', content: task }],
      'Claude Code command': [
        { role: 'user', content: '<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>' },
        { role: 'user', content: [{ type: 'text', text: task }] },
      ],
      greeting: [{ role: 'user', content: 'hi!' }, { role: 'assistant', content: 'Hello! What can I do?' }, { role: 'user', content: 'ok' }, { role: 'assistant', content: 'Ready.' }, { role: 'user', content: task }],
    }
    for (const [name, start] of Object.entries(opening)) {
      const list: Msg[] = [...start]
      for (let i = 0; i < 12; i++) {
        list.push({ role: 'assistant', content: `step ${i} ${'working on it '.repeat(60)}` })
        list.push({ role: 'user', content: `request ${i}: ${'please also adjust the thing '.repeat(12)}` })
      }
      list.push({ role: 'assistant', content: 'done' })
      // A budget that leaves most of the user's messages out: the task is never among them.
      const result = await compactMessages(list, { provider: 'extractive', force: true, contextTokenLimit: 12_000, userMessagesMaxTokens: 400, outputDir: tempDir() })
      const section = entries(result.summary!, USERS)!
      const tasks = section.entries.filter((e) => e.label === "task (the user's first request)")
      expect(tasks.map((e) => e.text), name).toEqual([task])
      // The opening command or greeting is older than the task: left out before it.
      expect(section.entries[0].label, name).toBe("task (the user's first request)")
      expect(section.intro.some((l) => /user messages left out to stay within 400 tokens/.test(l)), name).toBe(true)
    }
    // Nothing asks for anything: the first user message is the task.
    const idle: Msg[] = [{ role: 'user', content: '/mode' }, { role: 'assistant', content: `mode ${'x '.repeat(4000)}` }, { role: 'user', content: 'hi' }, { role: 'assistant', content: `hello ${'y '.repeat(4000)}` }, { role: 'user', content: 'continue' }, { role: 'assistant', content: 'ok' }]
    const result = await compactMessages(idle, { provider: 'extractive', force: true, contextTokenLimit: 12_000, tailRetentionRatio: 0.005, userMessagesMaxTokens: 1_000, outputDir: tempDir() })
    expect(entries(result.summary!, USERS)!.entries[0]).toMatchObject({ label: "task (the user's first request)", text: '/mode' })
  })

  it.skipIf(!existsSync(PI_LARGE))('on pi-session-large (it opens with /mode) is the real request, kept through tight budgets and three compactions', async () => {
    const { requests } = loadReplay(PI_LARGE)
    const list = requests[requests.length - 1].messages
    expect(textOf(list[0])).toBe('/mode')
    const request = textOf(list[1])
    expect(request.startsWith('read packages/coding-agent/docs/theme.md in full, then theme.ts')).toBe(true)
    const taskOf = (summary: string) => {
      const tasks = entries(summary, USERS)!.entries.filter((e) => e.label === "task (the user's first request)")
      expect(tasks.length).toBe(1)
      return tasks[0]
    }
    for (const userMessagesMaxTokens of [undefined, 1_500, 400]) {
      const result = await compactMessages(list, { provider: 'extractive', force: true, contextTokenLimit: 60_000, outputDir: tempDir(), ...(userMessagesMaxTokens ? { userMessagesMaxTokens } : {}) })
      expect(result.compacted).toBe(true)
      const task = taskOf(result.summary!)
      // Whole, or its beginning and end when even it is over the budget.
      if (task.notes.length === 0) expect(task.text).toBe(request)
      else expect(task.text.startsWith('read packages/coding-agent/docs/theme.md in full, then theme.ts')).toBe(true)
      expect(task.text).not.toBe('/mode')
    }
    // Three compactions as the session grows: the request stays the task.
    const dir = tempDir()
    const stages = [300, 600, list.length]
    let current: Msg[] = list.slice(0, stages[0])
    for (let i = 0; i < stages.length; i++) {
      const next = await compactMessages(current, { provider: 'extractive', force: true, contextTokenLimit: 40_000, userMessagesMaxTokens: 800, outputDir: dir, sessionId: 'pi-large' })
      expect(next.compacted).toBe(true)
      expect(taskOf(next.summary!).text.startsWith('read packages/coding-agent/docs/theme.md in full')).toBe(true)
      current = [...next.messages, ...list.slice(stages[i], stages[i + 1])]
    }
  })

  it('keeps its beginning and end when even it cannot fit; a budget smaller than the header still says how many were left out', async () => {
    const long = session(6, 800)
    const result = await compactMessages(long, { provider: 'extractive', force: true, contextTokenLimit: 40_000, tailRetentionRatio: 0.005, userMessagesMaxTokens: 300, outputDir: tempDir() })
    const task = entries(result.summary!, USERS)!.entries[0]
    expect(task.label).toBe("task (the user's first request)")
    expect(task.notes[0]).toMatch(/^shortened from \d+ characters$/)
    expect(task.text.startsWith('THE TASK: migrate')).toBe(true)
    expect(task.text.endsWith('END OF TASK')).toBe(true)
    expect(result.warnings.some((w) => w.includes('the task among them'))).toBe(true)

    const tiny = await compactMessages(session(6), { provider: 'extractive', force: true, contextTokenLimit: 40_000, tailRetentionRatio: 0.005, userMessagesMaxTokens: 5, outputDir: tempDir() })
    const note = new RegExp(`${USERS.replace(/[()]/g, '\\$&')}\\n\\((\\d+) user messages left out to stay within 5 tokens; the archived originals hold them\\.\\)`).exec(tiny.summary!)
    expect(note).not.toBeNull()
    // Every user message of the compacted part: the task and the requests before the kept tail.
    const compacted = session(6).slice(0, tiny.stats.compactedMessageCount).filter((m) => m.role === 'user').length
    expect(Number(note![1])).toBe(compacted)
    expect(tiny.warnings.some((w) => w.includes(`${compacted} of the user`))).toBe(true)
  })
})

// ---------------------------------------------------------------------------------------------
// The failure forms of the real sessions

const real = (file: string) => (existsSync(join(REAL, file)) ? (JSON.parse(readFileSync(join(REAL, file), 'utf8')) as Message[]) : null)

describe.skipIf(!existsSync(REAL))('failures as the agents report them', () => {
  it('OpenHands (an OpenAI Chat list, no is_error): the failed create of hello.py makes no file created', async () => {
    const messages = real('openhands-sdk-sonnet4-hello.json')!
    const result = await compactMessages(messages, { summarizer: async () => 'Nothing to report.', force: true, contextTokenLimit: 8_000, tailRetentionRatio: 0.01, outputDir: tempDir() })
    expect(result.compacted).toBe(true)
    const ledger = result.summary!.slice(result.summary!.indexOf('## Ledger'))
    // No file was created: the ledger has no such list (an empty list is left out).
    expect(ledger).not.toContain('Files created:')
    expect(ledger).toContain("- str_replace_editor `/workspace/hello.py`: Ran into [Errno 2] No such file or directory: '/workspace/hello.py' while trying to write to /workspace/hello.py")
    expect(ledger).toContain('- str_replace_editor `hello.py`: Invalid `path` parameter: hello.py. The path should be an absolute path, starting with `/`.')
  })

  it('mini-swe-agent (<returncode>): the latest failure is the traceback line, and grep finding nothing is no failure', async () => {
    const messages = real('mini-gemini3-requests-1142.json')!
    // Messages 47 and 53 are its failing runs (`<returncode>1</returncode>` and a traceback);
    // whichever of them is the last one compacted is the latest failure.
    const list = messages.slice(0, 60)
    const result = await compactMessages(list, { summarizer: async () => 'Nothing to report.', force: true, contextTokenLimit: 30_000, tailRetentionRatio: 0.02, outputDir: tempDir() })
    const failure = entries(result.summary!, FAILURE)!
    const compactedUpTo = 1 + result.stats.compactedMessageCount // after the system message
    const line = compactedUpTo > 53 ? "AttributeError: module 'collections' has no attribute 'MutableMapping'" : "ImportError: cannot import name 'MutableMapping' from 'collections'"
    expect(compactedUpTo).toBeGreaterThan(47)
    expect(failure.entries[1].text).toContain(line)
    expect(failure.entries[1].text).not.toContain('<returncode>')
    const pytest = real('mini-gemini3-pytest-6197.json')!.slice(0, 39)
    const grep = await compactMessages(pytest, { summarizer: async () => 'x', force: true, contextTokenLimit: 30_000, tailRetentionRatio: 0.02, outputDir: tempDir() })
    // Message 37 is `<returncode>1</returncode>` with empty output (grep): not the latest failure.
    expect(entries(grep.summary!, FAILURE)!.intro.join('\n')).not.toMatch(/from=3[67] to=38/)
  })

  it('Claude Code (Exit code 2): each failed Bash call is listed by its informative line', async () => {
    const messages = real('cc-spotter-gqc-pre.json')!
    const result = await compactMessages(messages, { summarizer: async () => 'Nothing to report.', contextTokenLimit: Math.floor(countTokens(messages) * 0.9), outputDir: tempDir() })
    const failed = result.summary!.slice(result.summary!.indexOf('Failed tool calls:'), result.summary!.indexOf('\n\n', result.summary!.indexOf('Failed tool calls:')))
    const items = failed.split('\n').filter((l) => l.startsWith('- Bash'))
    expect(items.length).toBeGreaterThan(0)
    for (const item of items) expect(item).not.toMatch(/: Exit code \d+$/)
  })
})
