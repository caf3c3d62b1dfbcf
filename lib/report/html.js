'use strict'

// The report's one way to write HTML: a tagged template that escapes every value it is given,
// unless the value is a fragment this tag built itself. Text from the session (messages, tool
// names, file paths, summaries, the audit log) is untrusted; with the tag it cannot become markup
// by forgetting an esc() call, only by being passed to `trusted()`, which takes the page's own
// constants (the CSS) and nothing else.
//
//   html`<td>${name}</td>`            name escaped
//   html`<ul>${items.map((i) => html`<li>${i}</li>`)}</ul>`   fragments kept, arrays joined
//   html`<code title="${path}">`      inside a quoted attribute value "=" is escaped too
//
// null, undefined, false and '' write nothing (`${cond && html`…`}`); numbers write as String(n).
// A value inside a tag but outside quotes (`<td class=${x}>`) is refused unless it is a fragment:
// escaping cannot make an unquoted attribute safe.

const FRAGMENT = Symbol('context-compact.html')

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '=': '&#61;' }
/** Text between tags. */
const esc = (value) => String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c])
// An attribute's value (a path in `title`): "=" too, so that no text of the session reads as an
// attribute of its own inside the tag, even to a reader that does not parse HTML.
const attr = (value) => String(value ?? '').replace(/[&<>"'=]/g, (c) => ESCAPES[c])

class Fragment {
  constructor(text) {
    this.text = text
    this[FRAGMENT] = true
  }
  toString() {
    return this.text
  }
}

const isFragment = (value) => value instanceof Fragment && value[FRAGMENT] === true

const TEXT = 0
const TAG = 1
const QUOTED = 2

/**
 * Where each value of a template goes (TEXT, TAG or QUOTED), read from its literal parts once
 * per call site (the strings array is the same object each time a template runs). Values never
 * change the state: an escaped one holds no markup, and a fragment is balanced.
 */
const contexts = new WeakMap()
function contextsOf(strings) {
  let found = contexts.get(strings)
  if (found) return found
  found = []
  let state = TEXT
  let quote = ''
  for (let s = 0; s < strings.length; s++) {
    const part = strings[s]
    for (let i = 0; i < part.length; i++) {
      const c = part[i]
      if (state === TEXT) {
        if (c === '<' && /[A-Za-z/!]/.test(part[i + 1] ?? '')) state = TAG
      } else if (state === TAG) {
        if (c === '"' || c === "'") {
          state = QUOTED
          quote = c
        } else if (c === '>') state = TEXT
      } else if (c === quote) state = TAG
    }
    if (s < strings.length - 1) found.push(state)
  }
  contexts.set(strings, found)
  return found
}

function write(value, where) {
  if (value === null || value === undefined || value === false || value === '') return ''
  if (isFragment(value)) return value.text
  if (Array.isArray(value)) return value.map((v) => write(v, where)).join('')
  if (where === QUOTED) return attr(value)
  if (where === TAG) throw new TypeError(`html: a value inside a tag must be quoted ("${String(value).slice(0, 40)}")`)
  return esc(value)
}

/** The tag: a fragment whose interpolated values are escaped for where they stand. */
function html(strings, ...values) {
  const where = contextsOf(strings)
  let out = strings[0]
  for (let i = 0; i < values.length; i++) out += write(values[i], where[i]) + strings[i + 1]
  return new Fragment(out)
}

/** The page's own constant markup or CSS, as a fragment. Never text that came from a session. */
const trusted = (text) => new Fragment(String(text))

/** Items (fragments or text) with `separator` (a fragment or text) between them. */
function join(items, separator) {
  const sep = write(separator, TEXT)
  return new Fragment(items.map((item) => write(item, TEXT)).join(sep))
}

module.exports = { html, trusted, join, esc, attr, isFragment }
