// The report page's `html` tag (lib/report/html.js): every interpolated value is escaped for where
// it stands unless it is a fragment the tag built, so text from a session cannot become markup.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join as pathJoin } from 'node:path'

import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

const require = createRequire(import.meta.url)
const { html, trusted, join, isFragment } = require('../../lib/report/html.js')

const EVIL = `"><img src=x onerror='alert(1)'> & a=b`

describe('the html tag', () => {
  it('escapes text between tags, and "=" too inside a quoted attribute value', () => {
    expect(String(html`<td>${EVIL}</td>`)).toBe('<td>&quot;&gt;&lt;img src=x onerror=&#39;alert(1)&#39;&gt; &amp; a=b</td>')
    expect(String(html`<code title="${EVIL}">x</code>`)).toBe('<code title="&quot;&gt;&lt;img src&#61;x onerror&#61;&#39;alert(1)&#39;&gt; &amp; a&#61;b">x</code>')
    // A second value in the same attribute, and a single-quoted one.
    expect(String(html`<a title="${'a'} ${'b=c'}" data-x='${"it's"}'>`)).toBe(`<a title="a b&#61;c" data-x='it&#39;s'>`)
  })

  it('keeps fragments it built, joins arrays, and writes nothing for null, undefined, false and ""', () => {
    const items = ['<b>', html`<i>${'&'}</i>`]
    expect(String(html`<ul>${items.map((i) => html`<li>${i}</li>`)}</ul>`)).toBe('<ul><li>&lt;b&gt;</li><li><i>&amp;</i></li></ul>')
    expect(String(html`<p>${null}${undefined}${false}${''}${0}${12.5}</p>`)).toBe('<p>012.5</p>')
    expect(String(html`<table${false && html` class="x"`}>`)).toBe('<table>')
    expect(String(html`<table${html` class="${'a"b'}"`}>`)).toBe('<table class="a&quot;b">')
    expect(String(join(['<a>', html`<b></b>`], html`<br>`))).toBe('&lt;a&gt;<br><b></b>')
    expect(String(join(['x', 'y'], ' < '))).toBe('x &lt; y')
  })

  it('does not take a look-alike object, a string holding markup or a value in an unquoted attribute for a fragment', () => {
    const forged = { text: '<script>', toString: () => '<script>' }
    expect(String(html`<p>${forged}</p>`)).toBe('<p>&lt;script&gt;</p>')
    expect(isFragment(forged)).toBe(false)
    expect(isFragment(html`<p></p>`)).toBe(true)
    expect(() => html`<td class=${'x onmouseover=alert(1)'}>`).toThrow(TypeError)
    expect(() => html`<td ${'onclick="x"'}>`).toThrow(TypeError)
  })

  it('trusted() is the one way in for the page\'s own constants (the CSS)', () => {
    const css = trusted('body{font-family:"Segoe UI"}')
    expect(String(html`<style>${css}</style>`)).toBe('<style>body{font-family:"Segoe UI"}</style>')
  })
})

describe('the report page, every text of its data hostile', () => {
  // The tags and attributes the page's modules write (read from their source): anything else in
  // a page is markup that came from the data.
  const dir = pathJoin(__dirname, '..', '..', 'lib', 'report')
  const source = readdirSync(dir).filter((f) => f !== 'report.js').map((f) => readFileSync(pathJoin(dir, f), 'utf8')).join('\n')
  const TAGS = new Set([...source.matchAll(/<\/?([a-z][a-z0-9]*)/gi)].map((m) => m[1].toLowerCase()))
  const ATTRIBUTES = new Set([...source.matchAll(/\s([a-z][a-z0-9-]*)=["']/gi)].map((m) => m[1].toLowerCase()))
  const { reportData } = require('../../lib/report/report.js')
  const { renderHtml } = require('../../lib/report/page.js')

  const hostile = fc.oneof(
    fc.string(),
    fc.constantFrom('<x-evil onload="x()">', '"><x-evil a=b>', "'><x-evil>", '</style><x-evil>', '</title><x-evil>', '<!--', ']]>', '&lt;x-evil&gt;', 'a=b onerror=x', '<svg/onload=x>'),
    fc.tuple(fc.string(), fc.constantFrom('<x-evil>', '"', "'", '=', '&', '>'), fc.string()).map((parts) => parts.join('')),
  )

  /** `data` with every string (and every key that is a name from the session) replaced by `next()`. */
  function poisoned(data: any, next: () => string): any {
    const NAMED = new Set(['tools', 'byRole', 'ledger'])
    const walk = (value: any, key: string): any => {
      if (typeof value === 'string') return next()
      if (Array.isArray(value)) return value.map((v) => walk(v, ''))
      if (value && typeof value === 'object') {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [NAMED.has(key) ? `${next()}${k}` : k, walk(v, k)]))
      }
      return value
    }
    const out = walk(data, '')
    // Texts the sample does not hold: an error code and reason, notes, a model.
    out.notes = [next(), next()]
    for (const c of out.compactions) Object.assign(c, { code: next(), reason: next(), model: next() })
    for (const e of out.events) Object.assign(e, { code: next(), reason: next() })
    return out
  }

  it('only the page\'s own tags and attributes, whatever the texts', async () => {
    const dirOut = mkdtempSync(pathJoin(tmpdir(), 'cc-report-hostile-'))
    const { compactMessages } = require('../../index.js')
    const messages: any[] = []
    for (let i = 0; i < 6; i++) {
      messages.push({ role: 'user', content: `question ${i} ${'word '.repeat(60)}` })
      messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'read', input: { path: `/p/src/f${i}.ts` } }] })
      messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, is_error: i === 2, content: 'x '.repeat(80) }] })
      messages.push({ role: 'assistant', content: `answer ${i} ${'word '.repeat(60)}` })
    }
    const result = await compactMessages(messages, { provider: 'extractive', force: true, contextTokenLimit: 4000, outputDir: dirOut, sessionId: 's' })
    expect(result.compacted).toBe(true)
    const data = await reportData([...result.messages, ...messages.slice(0, 4)], { outputDir: dirOut, sessionId: 's', usage: [{ index: 1, input_tokens: 900 }] })
    expect(data.compactions.length).toBeGreaterThan(0)
    const style = (page: string) => page.slice(page.indexOf('<style>'), page.indexOf('</style>'))
    const baseline = style(renderHtml(data))
    fc.assert(
      fc.property(fc.array(hostile, { minLength: 1, maxLength: 40 }), (texts) => {
        let n = 0
        const page: string = renderHtml(poisoned(data, () => texts[n++ % texts.length]))
        expect(page).not.toMatch(/<x-evil|<svg\/|<!--/i)
        expect(style(page)).toBe(baseline)
        for (const [, body] of page.matchAll(/<([^>]*)>/g)) {
          const name = /^\/?([a-z][a-z0-9]*)/i.exec(body)?.[1]?.toLowerCase() ?? body.toLowerCase()
          expect(name === '!doctype html' || TAGS.has(name), `<${body}>`).toBe(true)
          for (const [, attribute] of body.matchAll(/\s([^\s=]+)=/g)) expect(ATTRIBUTES.has(attribute.toLowerCase()), `<${body}>`).toBe(true)
        }
      }),
      { numRuns: 60, seed: 38 },
    )
  })
})
