'use strict'

// Counting messages with the JavaScript tokenizers, exactly the way the library counts them
// (SPEC §4.2), for the benchmark's side-by-side comparison and correctness check:
// - a string content, a `text` block, a `thinking` block: the tokens of the text;
// - `tool_use`: `name` + `JSON.stringify(input)`;
// - `tool_result`: its content, recursively (a string or a list of blocks);
// - anything else (not produced by benchmark/generate.mjs): 0.
// Special-token text such as `<|endoftext|>` is ordinary text, as in the library.

/** Builds `count(messages) → number` from `countText(text) → number`. */
function makeMessageCounter(countText) {
  const text = (value) => (typeof value === 'string' && value.length > 0 ? countText(value) : 0)
  function content(value, depth) {
    if (typeof value === 'string') return text(value)
    if (!Array.isArray(value)) return 0
    let total = 0
    for (let i = 0; i < value.length; i++) total += block(value[i], depth)
    return total
  }
  function block(b, depth) {
    if (b === null || typeof b !== 'object') return 0
    switch (b.type) {
      case 'text':
        return text(b.text)
      case 'thinking':
        return text(b.thinking)
      case 'tool_use':
        return text(b.name) + (b.input === undefined ? 0 : text(JSON.stringify(b.input)))
      case 'tool_result':
        return depth < 64 && b.content != null ? content(b.content, depth + 1) : 0
      default:
        return 0
    }
  }
  return function countMessages(messages) {
    let total = 0
    for (let i = 0; i < messages.length; i++) total += content(messages[i].content, 0)
    return total
  }
}

/** The peers the benchmark compares against, in the order of its tables. */
const PEERS = ['gpt-tokenizer', 'js-tiktoken', 'tiktoken', '@anthropic-ai/tokenizer']

/** The installed version of a package (the benchmark pins them in devDependencies). */
function versionOf(name) {
  const { readFileSync } = require('node:fs')
  const { dirname, join } = require('node:path')
  let dir = dirname(require.resolve(name))
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
      if (manifest.name === name && manifest.version) return manifest.version
    } catch {}
    const parent = dirname(dir)
    if (parent === dir) return 'unknown'
    dir = parent
  }
}

/** gpt-tokenizer's o200k_base `countTokens`, with special tokens as ordinary text. */
function loadGptTokenizer() {
  const { countTokens } = require('gpt-tokenizer/encoding/o200k_base')
  const options = { disallowedSpecial: new Set() }
  return (text) => countTokens(text, options)
}

/** js-tiktoken (lite) with the o200k_base ranks, with special tokens as ordinary text. */
function loadJsTiktoken() {
  const { Tiktoken } = require('js-tiktoken/lite')
  const ranks = require('js-tiktoken/ranks/o200k_base')
  const encoder = new Tiktoken(ranks)
  return (text) => encoder.encode(text, [], []).length
}

/**
 * tiktoken (OpenAI's tokenizer compiled to WebAssembly) with o200k_base, with special tokens as
 * ordinary text (`encode(text, [], [])`: none allowed, none refused). The encoder holds WASM
 * memory: call `count.free()` when done.
 */
function loadTiktoken() {
  const { get_encoding } = require('tiktoken')
  const encoding = get_encoding('o200k_base')
  const count = (text) => encoding.encode(text, [], []).length
  count.free = () => encoding.free()
  return count
}

/**
 * @anthropic-ai/tokenizer: the tokenizer of Anthropic's older models (a different vocabulary:
 * its totals differ from the o200k_base ones and are not checked). Its `countTokens(text)`
 * builds the tokenizer from its ranks on every call (~100 ms); this makes it once and counts
 * exactly as `countTokens` does (`encode(text.normalize('NFKC'), 'all')`). Call `count.free()`
 * when done.
 */
function loadAnthropicTokenizer() {
  const { getTokenizer } = require('@anthropic-ai/tokenizer')
  const tokenizer = getTokenizer()
  const count = (text) => tokenizer.encode(text.normalize('NFKC'), 'all').length
  count.free = () => tokenizer.free()
  return count
}

/** `count(text)` of a peer by package name. */
function loadPeer(name) {
  switch (name) {
    case 'gpt-tokenizer':
      return loadGptTokenizer()
    case 'js-tiktoken':
      return loadJsTiktoken()
    case 'tiktoken':
      return loadTiktoken()
    case '@anthropic-ai/tokenizer':
      return loadAnthropicTokenizer()
    default:
      throw new Error(`unknown tokenizer ${name}`)
  }
}

module.exports = {
  PEERS,
  versionOf,
  makeMessageCounter,
  loadGptTokenizer,
  loadJsTiktoken,
  loadTiktoken,
  loadAnthropicTokenizer,
  loadPeer,
}
