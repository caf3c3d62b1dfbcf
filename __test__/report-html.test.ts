// The report page's `html` tag (lib/report/html.js): every interpolated value is escaped for where
// it stands unless it is a fragment the tag built, so text from a session cannot become markup.
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'

const require = createRequire(import.meta.url)
const { html, trusted, join, isFragment } = require('../lib/report/html.js')

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
