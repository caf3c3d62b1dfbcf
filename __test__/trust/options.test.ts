// Every option is checked one way (docs/trust.md, "Options are checked one way"): NaN, Infinity,
// a fraction where an integer is due, a negative or out-of-range number and a wrong type are each
// a TypeError naming the option and its documented range, or a documented acceptance (null: the
// default); nothing is silently replaced or capped. Unknown names are reported with the closest
// option, a TypeError under `strict: true`; nothing goes to stderr. A summarizer that returns a
// non-string fails at once. The recall tool checks `from`/`to`, and its header names what it shows.
import { afterEach, describe, expect, it, vi } from 'vitest'

import { tempDir } from '../support/helpers'

const cc = require('../../index.js')
const { compactMessages, Compactor, shouldCompact, countTokens, createRecallTool, partitionMessages, createMarkMap, pruneArchives, offloadToolResults } =
  cc

const MESSAGES = [
  { role: 'user', content: 'Fix the parser in src/parser.rs.' },
  { role: 'assistant', content: 'On it.' },
  { role: 'user', content: 'Thanks.' },
]

/** A conversation with a middle to summarize (force, a small tail). */
const LONG = Array.from({ length: 24 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i}: ${'word '.repeat(80)}` }))
const SMALL_TAIL = { compression: { targetTokens: 200 } }

/** Every kind of mistake, and values that are fine for some options. */
const VALUES: Array<[string, unknown]> = [
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity],
  ['negative', -1],
  ['zero', 0],
  ['fraction', 0.5],
  ['one and a half', 1.5],
  ['huge', 1e300],
  ['2^53', 2 ** 53],
  ['numeric string', '5'],
  ['boolean', true],
  ['object', {}],
  ['array', []],
]

/** What an error shows of a value (the same words in JS and in the addon). */
function shown(value: unknown): string {
  if (typeof value === 'number') return Number.isFinite(value) ? `number ${value}` : String(value)
  if (typeof value === 'string') return `string ${JSON.stringify(value)}`
  if (Array.isArray(value)) return 'array'
  if (value === null) return 'null'
  return typeof value
}

interface IntegerOption {
  /** The path in the options object, e.g. `rehydrate.maxFiles`. */
  path: string
  min: number
  max: number
  /** Other values the documentation accepts (booleans for userMessagesMaxTokens). */
  alsoAccepts?: (value: unknown) => boolean
}

const INTEGERS: IntegerOption[] = [
  { path: 'contextTokenLimit', min: 1, max: 1_000_000_000 },
  { path: 'maxRetries', min: 0, max: 100 },
  { path: 'retryBaseDelayMs', min: 0, max: 60_000 },
  { path: 'timeoutMs', min: 1, max: 3_600_000 },
  { path: 'summaryMaxTokens', min: 1, max: 1_000_000 },
  { path: 'summaryContextTokens', min: 1, max: 1_000_000_000 },
  { path: 'keepRecentTurns', min: 0, max: 100_000_000 },
  { path: 'keepRecentMessages', min: 1, max: 100_000_000 },
  { path: 'maxMessages', min: 0, max: 100_000_000 },
  { path: 'maxToolOutputBytes', min: 0, max: Number.MAX_SAFE_INTEGER },
  { path: 'summaryMaxChars', min: 1, max: 100_000_000 },
  { path: 'userMessagesMaxTokens', min: 0, max: 1_000_000_000, alsoAccepts: (v) => typeof v === 'boolean' },
  { path: 'rehydrate.maxFiles', min: 0, max: 1_000 },
  { path: 'rehydrate.maxTokensPerFile', min: 0, max: 1_000_000_000 },
  { path: 'rehydrate.maxTokens', min: 0, max: 1_000_000_000 },
  { path: 'compression.threshold', min: 1, max: 1_000_000_000 },
  { path: 'compression.targetTokens', min: 0, max: 1_000_000_000 },
  { path: 'selectiveRules.toolResults.keepRecent', min: 0, max: 100_000_000 },
  { path: 'usage.input_tokens', min: 0, max: 1_000_000_000 },
  { path: 'usage.output_tokens', min: 0, max: 1_000_000_000 },
  { path: 'usage.prompt_tokens', min: 0, max: 1_000_000_000 },
  { path: 'usage.inputTokens', min: 0, max: 1_000_000_000 },
]

// Each ratio, and whether it may be 0 (tailRetentionRatio: 0 is the PRD's empty tail).
const RATIOS: [string, boolean][] = [
  ['thresholdRatio', false],
  ['tailRetentionRatio', true],
]

/** `{a: {b: value}}` for the path `a.b`, with what a nested option needs beside it. */
function optionsAt(path: string, value: unknown): Record<string, any> {
  const parts = path.split('.')
  const top: Record<string, any> = {}
  let at = top
  for (const part of parts.slice(0, -1)) at = at[part] = {}
  at[parts.at(-1)!] = value
  if (parts[0] === 'selectiveRules') top.selectiveRules.toolResults.strategy = 'truncate'
  // usage.output_tokens alone says nothing of the input: give the input beside it.
  if (path === 'usage.output_tokens') top.usage.input_tokens = 10
  return top
}

function validInteger(option: IntegerOption, value: unknown): boolean {
  if (option.alsoAccepts?.(value)) return true
  return typeof value === 'number' && Number.isInteger(value) && value >= option.min && value <= option.max
}

async function attempt(options: Record<string, any>): Promise<{ ok: true; result: any } | { ok: false; error: any }> {
  try {
    const result = await compactMessages(MESSAGES, { provider: 'extractive', outputDir: tempDir('cc-opt-'), ...options })
    return { ok: true, result }
  } catch (error) {
    return { ok: false, error }
  }
}

afterEach(() => vi.restoreAllMocks())

describe('every numeric option: one TypeError per kind of mistake, naming the option and its range', () => {
  for (const option of INTEGERS) {
    it(option.path, async () => {
      for (const [label, value] of VALUES) {
        const outcome = await attempt(optionsAt(option.path, value))
        if (validInteger(option, value)) {
          expect(outcome.ok, `${option.path} = ${label}: ${!outcome.ok && outcome.error?.message}`).toBe(true)
          continue
        }
        expect(outcome.ok, `${option.path} = ${label} was accepted`).toBe(false)
        const error = (outcome as any).error
        expect(error).toBeInstanceOf(TypeError)
        expect(error.code).toBe('ERR_CONTEXT_COMPACT_INVALID_ARGUMENT')
        const range = `an integer from ${option.min} to ${option.max}`
        expect(error.message, `${option.path} = ${label}`).toContain(`options.${option.path}: expected ${range}`)
        expect(error.message, `${option.path} = ${label}`).toContain(`got ${shown(value)}`)
      }
      // null is "not given": the default, as documented (a usage without its input count is
      // one the trigger cannot use, said as such).
      if (!option.path.startsWith('usage.') || option.path === 'usage.output_tokens') {
        expect((await attempt(optionsAt(option.path, null))).ok).toBe(true)
      }
      // The bounds themselves are accepted.
      for (const bound of [option.min, option.max]) {
        const outcome = await attempt(optionsAt(option.path, bound))
        expect(outcome.ok, `${option.path} = ${bound}: ${!outcome.ok && outcome.error?.message}`).toBe(true)
      }
    })
  }

  for (const [name, zero] of RATIOS) {
    it(name, async () => {
      const range = zero ? 'a number from 0 to 1' : 'a number greater than 0 and at most 1'
      for (const [label, value] of [...VALUES, ['just over one', 1.0000001] as [string, unknown], ['five', 5] as [string, unknown]]) {
        const outcome = await attempt({ [name]: value })
        const valid = typeof value === 'number' && (zero ? value >= 0 : value > 0) && value <= 1
        expect(outcome.ok, `${name} = ${label}`).toBe(valid)
        if (!valid) {
          expect((outcome as any).error).toBeInstanceOf(TypeError)
          expect((outcome as any).error.message).toBe(`options.${name}: expected ${range}, got ${shown(value)}`)
        }
      }
      expect((await attempt({ [name]: 1 })).ok).toBe(true)
      expect((await attempt({ [name]: 0 })).ok).toBe(zero)
    })
  }

  it('maxRetries above its bound is refused, never capped; within it, honoured', async () => {
    const outcome = await attempt({ maxRetries: 1e9 })
    expect(outcome.ok).toBe(false)
    expect((outcome as any).error.message).toBe('options.maxRetries: expected an integer from 0 to 100, got number 1000000000')
    // 100 is honoured: 101 attempts of a failing summarizer.
    let calls = 0
    const result = await compactMessages(LONG, {
      ...SMALL_TAIL,
      force: true,
      outputDir: tempDir('cc-opt-'),
      maxRetries: 100,
      retryBaseDelayMs: 0,
      summarizer: async () => {
        calls++
        throw new Error('down')
      },
    })
    expect(result.error.code).toBe('SUMMARIZER_ERROR')
    expect(calls).toBe(101)
    expect(result.error.attempts).toBe(101)
  })

  it('contextTokenLimit: NaN and Infinity are refused like 1.5, -1 and 1e300, with the same sentence', async () => {
    const messages = new Set<string>()
    for (const value of [NaN, Infinity, 1.5, -1, 1e300, 0]) {
      const outcome = await attempt({ contextTokenLimit: value })
      expect(outcome.ok).toBe(false)
      messages.add((outcome as any).error.message.replace(/, got .*$/, ''))
    }
    expect([...messages]).toEqual(['options.contextTokenLimit: expected an integer from 1 to 1000000000'])
  })

  it('the same checks hold in every entry point', () => {
    for (const call of [
      () => shouldCompact(MESSAGES, { thresholdRatio: 5 }),
      () => new Compactor({ thresholdRatio: 5 }),
      () => cc.measureTokens(MESSAGES, { thresholdRatio: 5 }),
    ]) {
      expect(call).toThrow('options.thresholdRatio: expected a number greater than 0 and at most 1, got number 5')
    }
    expect(() => new Compactor({ background: { atRatio: NaN } })).toThrow(
      'options.background.atRatio: expected a number greater than 0 and at most 1, got NaN',
    )
    expect(() => new Compactor({ background: { atTokens: 1.5 } })).toThrow(
      'options.background.atTokens: expected an integer from 1 to 1000000000, got number 1.5',
    )
    expect(() => partitionMessages(MESSAGES, NaN)).toThrow('tailRetentionTokens: expected an integer from 0 to 1000000000, got NaN')
    expect(() => partitionMessages(MESSAGES, Infinity)).toThrow('got Infinity')
    expect(() => createMarkMap(1.5)).toThrow('length: expected an integer from 0 to 100000000, got number 1.5')
    expect(() => createRecallTool({ maxTokens: 50 })).toThrow('options.maxTokens: expected an integer from 200 to 1000000000, got number 50')
  })

  it('the asynchronous entry points reject the same way', async () => {
    await expect(pruneArchives(tempDir(), { olderThanDays: NaN })).rejects.toThrow('options.olderThanDays: expected a number from 0 to 36500, got NaN')
    await expect(pruneArchives(tempDir(), { olderThanDays: Infinity })).rejects.toThrow('got Infinity')
    await expect(offloadToolResults(MESSAGES, { maxTokens: NaN })).rejects.toThrow('options.maxTokens: expected an integer from 1 to 1000000000, got NaN')
    await expect(offloadToolResults(MESSAGES, {})).rejects.toThrow('options.maxTokens')
  })
})

describe('usage is checked like an option', () => {
  it('a usage the trigger cannot use is reported, never read as a few tokens', async () => {
    const big = await attempt({ usage: { input_tokens: 1e20, output_tokens: 5 } })
    expect(big.ok).toBe(false)
    expect((big as any).error.message).toBe('options.usage.input_tokens: expected an integer from 0 to 1000000000, got number 100000000000000000000')
    const infinite = await attempt({ usage: { input_tokens: Infinity } })
    expect((infinite as any).error.message).toBe('options.usage.input_tokens: expected an integer from 0 to 1000000000, got Infinity')
    const outputOnly = await attempt({ usage: { output_tokens: 12 } })
    expect((outputOnly as any).error.message).toContain('options.usage: expected an API usage object that says how many input tokens')
    expect(() => shouldCompact(MESSAGES, { usage: { prompt_tokens: NaN } })).toThrow('options.usage.prompt_tokens: expected an integer from 0 to 1000000000, got NaN')
    // A Compactor learns from usage: the same check.
    const compactor = new Compactor({ outputDir: tempDir() })
    expect(() => compactor.shouldCompact([...MESSAGES, { role: 'assistant', content: 'ok' }], { usage: { input_tokens: -3 } })).toThrow(
      'options.usage.input_tokens: expected an integer from 0 to 1000000000, got number -3',
    )
    // A valid one is what the trigger counts.
    const measured = cc.measureTokens([...MESSAGES, { role: 'assistant', content: 'ok' }], { usage: { input_tokens: 150_000, output_tokens: 10 } })
    expect(measured.source).toBe('usage')
    expect(measured.tokens).toBeGreaterThanOrEqual(150_010)
  })
})

describe('unknown option names', () => {
  it('are reported with the closest known option, in the result and never on stderr', async () => {
    const stderr = vi.spyOn(process.stderr, 'write')
    const result = await compactMessages(MESSAGES, { provider: 'extractive', outputDir: tempDir(), contextLimit: 1000, tresholdRatio: 0.5 })
    expect(result.warnings).toContain('unknown option "contextLimit" was ignored (did you mean "contextTokenLimit"?)')
    expect(result.warnings).toContain('unknown option "tresholdRatio" was ignored (did you mean "thresholdRatio"?)')
    const unrelated = await compactMessages(MESSAGES, { provider: 'extractive', outputDir: tempDir(), zzzqqq: 1 })
    expect(unrelated.warnings).toContain('unknown option "zzzqqq" was ignored')
    expect(stderr).not.toHaveBeenCalled()
  })

  it('are a TypeError with strict: true, before anything runs', async () => {
    let called = false
    await expect(
      compactMessages(MESSAGES, { strict: true, force: true, contextLimit: 1000, outputDir: tempDir(), summarizer: async () => ((called = true), 'S') }),
    ).rejects.toThrow('options.contextLimit is not an option (did you mean "contextTokenLimit"?)')
    expect(called).toBe(false)
    expect(() => new Compactor({ strict: true, maxRetry: 3 })).toThrow('options.maxRetry is not an option (did you mean "maxRetries"?)')
    expect(() => shouldCompact(MESSAGES, { strict: true, encodng: 'o200k_base' })).toThrow('did you mean "encoding"?')
    expect(() => shouldCompact(MESSAGES, { strict: 'yes' })).toThrow('options.strict must be a boolean, got string')
  })

  it('go to onLog for a call without a result, and to each result of a Compactor', async () => {
    const entries: any[] = []
    expect(countTokens(MESSAGES, { encodng: 'cl100k_base', onLog: (e: any) => entries.push(e) })).toBeGreaterThan(0)
    expect(entries).toEqual([{ level: 'warn', message: 'unknown option "encodng" was ignored (did you mean "encoding"?)', target: 'context_compact::options' }])
    const compactor = new Compactor({ provider: 'extractive', outputDir: tempDir(), keepRecentTurn: 2 })
    const result = await compactor.compact(MESSAGES, { force: true })
    expect(result.warnings).toContain('unknown option "keepRecentTurn" was ignored (did you mean "keepRecentTurns"?)')
    const tool = createRecallTool({ outputDir: tempDir(), maxToken: 500 })
    expect(tool.warnings).toEqual(['unknown option "maxToken" was ignored (did you mean "maxTokens"?)'])
    expect(() => createRecallTool({ strict: true, sesionId: 's' })).toThrow('options.sesionId is not an option (did you mean "sessionId"?)')
  })
})

describe('a summarizer that returns something other than a string', () => {
  for (const [label, value] of [['a number', 42], ['an object', { text: 'S' }], ['undefined', undefined], ['null', null]] as Array<[string, unknown]>) {
    it(`${label}: SUMMARIZER_ERROR at once, not retried`, async () => {
      let calls = 0
      const retries: any[] = []
      const result = await compactMessages(LONG, {
        ...SMALL_TAIL,
        force: true,
        outputDir: tempDir(),
        maxRetries: 3,
        retryBaseDelayMs: 1000,
        onEvent: (e: any) => e.type === 'retry' && retries.push(e),
        summarizer: async () => {
          calls++
          return value as any
        },
      })
      expect(result.compacted).toBe(false)
      expect(result.error.code).toBe('SUMMARIZER_ERROR')
      expect(result.error.message).toContain('the summarizer must resolve with a string')
      expect(result.error.attempts).toBe(1)
      expect(calls).toBe(1)
      expect(retries).toEqual([])
    })
  }

  it('a rejection or an empty text is still retried', async () => {
    let calls = 0
    const result = await compactMessages(LONG, {
      ...SMALL_TAIL,
      force: true,
      outputDir: tempDir(),
      maxRetries: 2,
      retryBaseDelayMs: 0,
      summarizer: async () => (++calls === 1 ? '   ' : calls === 2 ? Promise.reject(new Error('busy')) : '## Goal\nfix the parser'),
    })
    expect(result.compacted).toBe(true)
    expect(calls).toBe(3)
  })
})

describe('the recall tool', () => {
  async function archived() {
    const outputDir = tempDir('cc-recall-trust-')
    const messages: any[] = []
    for (let i = 0; i < 30; i++) {
      messages.push({ role: 'user', content: `question ${i}: ${'word '.repeat(60)}` })
      messages.push({ role: 'assistant', content: `answer ${i}: ${'word '.repeat(60)}` })
    }
    const result = await compactMessages(messages, { ...SMALL_TAIL, force: true, outputDir, sessionId: 'r', summarizer: async () => '## Goal\nanswer' })
    expect(result.compacted).toBe(true)
    const archive = /Recall: archive=(\S+) from=0 to=(\d+)/.exec(result.summary)!
    return { outputDir, archive: archive[1], length: Number(archive[2]) }
  }

  it('takes from/to as integers: NaN, Infinity, negative and fractional values are answered as mistakes', async () => {
    const { outputDir, archive } = await archived()
    const tool = createRecallTool({ outputDir, sessionId: 'r' })
    for (const [key, value, says] of [
      ['from', NaN, 'got NaN'],
      ['to', Infinity, 'got Infinity'],
      ['from', -5, 'got -5'],
      ['to', 2.5, 'got 2.5'],
      ['from', 'x', 'got "x"'],
    ] as Array<[string, unknown, string]>) {
      const text = await tool.run({ archive, [key]: value })
      expect(text, `${key}=${String(value)}`).toContain(`\`${key}\` must be a message index (an integer, 0 or more), ${says}`)
      expect(text).not.toContain('--- message')
    }
  })

  it('names in its first line exactly the messages it shows', async () => {
    const { outputDir, archive, length } = await archived()
    const tool = createRecallTool({ outputDir, sessionId: 'r', maxTokens: 400 })
    const text = await tool.run({ archive, from: 0, to: length })
    const shownIndices = [...text.matchAll(/--- message (\d+) ·/g)].map((m) => Number(m[1]))
    expect(shownIndices.length).toBeGreaterThan(0)
    expect(shownIndices.length).toBeLessThan(length)
    const header = text.split('\n')[0]
    const last = shownIndices.at(-1)!
    expect(header).toBe(`Archive ${archive}, messages 0 to ${last} of ${length} (from=0 to=${last + 1}):`)
    expect(text).toContain(`Ask again with archive=${archive} from=${last + 1} to=${length}.`)
    // All of it when it fits.
    const whole = await createRecallTool({ outputDir, sessionId: 'r', maxTokens: 100_000 }).run({ archive, from: 2, to: 5 })
    expect(whole.split('\n')[0]).toBe(`Archive ${archive}, messages 2 to 4 of ${length} (from=2 to=5):`)
  })
})
