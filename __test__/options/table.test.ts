// Every option is declared once, in the core's option table (crates/core/src/options/table.rs),
// which the addon hands to the JS layer. This test holds the three places a user reads about an
// option to that table: the members of `CompactOptions` in index.d.ts, the options table of
// docs/options.md, and the names the JS layer checks against (`OPTION_NAMES`). A default the
// table states is the one index.d.ts's `@default` and the docs' default column open with.

import { readFileSync } from 'node:fs'
import { join } from 'node:path'

import { describe, expect, it } from 'vitest'

const ROOT = join(__dirname, '..', '..')
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { OPTION_TABLE, OPTION_NAMES, optionValues } = require('../../lib/options/options.js')

type Row = { name: string; kind: string; default: unknown; read: string; min?: number; max?: number; values?: string[] }
const table: Row[] = OPTION_TABLE

/** `CompactOptions`'s members in index.d.ts, each with the `@default` of its doc comment. */
function declared(): Map<string, string | undefined> {
  const text = readFileSync(join(ROOT, 'index.d.ts'), 'utf8')
  const start = text.indexOf('export interface CompactOptions {')
  const body = text.slice(start, text.indexOf('\n}\n', start))
  const members = new Map<string, string | undefined>()
  let comment = ''
  for (const line of body.split('\n').slice(1)) {
    if (/^ {2}\/\*\*/.test(line)) comment = ''
    comment += line + '\n'
    const member = /^ {2}(\w+)\??:/.exec(line)
    if (member) {
      members.set(member[1], /@default (.*)/.exec(comment)?.[1])
      comment = ''
    }
  }
  return members
}

/** The rows of docs/options.md's options table: name → default column. */
function documented(): Map<string, string> {
  const text = readFileSync(join(ROOT, 'docs', 'options.md'), 'utf8')
  const start = text.indexOf('| option | type | default | meaning |')
  const rows = new Map<string, string>()
  for (const line of text.slice(start).split('\n').slice(2)) {
    if (!line.startsWith('|')) break
    // Cells split on `|` outside backticks (types hold `a \| b`).
    const cells = line.replace(/\\\|/g, '\u0000').split('|').map((c) => c.trim().replace(/\u0000/g, '|'))
    const name = /^`(\w+)`$/.exec(cells[1])?.[1]
    if (name) rows.set(name, cells[3])
  }
  return rows
}

/** The literal a default text opens with (`'auto'`, `200000`, `false`, `[]`), as a value. */
function leadingLiteral(text: string | undefined): unknown {
  if (text === undefined) return undefined
  const t = text.replace(/`/g, '').trim()
  const m = /^('[^']*'|-?\d[\d_]*(\.\d+)?|true|false|\[\])/.exec(t)
  if (!m) return undefined
  const s = m[1]
  if (s.startsWith("'")) return s.slice(1, -1)
  if (s === 'true' || s === 'false') return s === 'true'
  if (s === '[]') return []
  return Number(s.replace(/_/g, ''))
}

describe('the option table', () => {
  it('names the same options as index.d.ts and docs/options.md, and the JS layer checks those', () => {
    const names = table.map((r) => r.name).sort()
    expect([...declared().keys()].sort()).toEqual(names)
    expect([...documented().keys()].sort()).toEqual(names)
    expect([...OPTION_NAMES].sort()).toEqual(names)
  })

  it('states the defaults index.d.ts and the docs state', () => {
    const dts = declared()
    const docs = documented()
    let compared = 0
    for (const row of table.filter((r) => r.default !== null)) {
      expect(leadingLiteral(dts.get(row.name)), `index.d.ts @default of ${row.name}`).toEqual(row.default)
      expect(leadingLiteral(docs.get(row.name)), `docs/options.md default of ${row.name}`).toEqual(row.default)
      compared++
    }
    // Most options have a plain default: the comparison is not vacuous.
    expect(compared).toBeGreaterThan(20)
  })

  it('says each choice and range the way index.d.ts types it', () => {
    const dts = readFileSync(join(ROOT, 'index.d.ts'), 'utf8')
    for (const row of table.filter((r) => r.values && r.kind !== 'choice' && r.kind !== 'choice-or-boolean')) {
      throw new Error(`${row.name}: values on a ${row.kind}`)
    }
    for (const name of ['encoding', 'provider', 'promptStyle', 'summaryRequest', 'summaryFallback']) {
      const member = new RegExp(`\\n {2}${name}\\?: ([^\\n]*)`).exec(dts)?.[1] ?? ''
      const quoted = [...member.matchAll(/'([^']+)'/g)].map((m) => m[1])
      expect(quoted, name).toEqual(optionValues(name))
    }
    const integers = table.filter((r) => r.kind === 'integer')
    expect(integers.length).toBeGreaterThan(8)
    for (const row of integers) expect(row.min! <= row.max!, row.name).toBe(true)
  })
})
