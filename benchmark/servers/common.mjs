// Plumbing shared by the local Anthropic and OpenAI servers: an HTTP server on 127.0.0.1 with a
// random port, a memoised token counter, hashing, and the default scripted reply.
//
// Tokens are counted with gpt-tokenizer's o200k_base, not with the library's own countTokens:
// the servers are the oracle the library is tested against, so they must not share its
// counting code. Neither provider's real tokenizer is public (Anthropic's is not o200k), so the
// numbers approximate the real ones; what the servers reproduce exactly are the accounting
// rules (which tokens are read, written or billed in full), not the tokenizer.
import { createHash, randomBytes } from 'node:crypto'
import { createServer } from 'node:http'

import { encode } from 'gpt-tokenizer/encoding/o200k_base'

// Special-token strings ("<|endoftext|>") in real tool output are ordinary text to an API.
const ENCODE_OPTIONS = { disallowedSpecial: new Set() }
const memo = new Map()
const MEMO_LIMIT = 20_000

function memoKey(text) {
  return text.length <= 128 ? text : createHash('sha1').update(text).digest('base64')
}

/** The o200k token ids of `text` (memoised: a conversation is re-sent on every request). */
export function tokenIds(text) {
  if (!text) return new Uint32Array(0)
  const key = memoKey(text)
  let ids = memo.get(key)
  if (ids === undefined) {
    ids = Uint32Array.from(encode(text, ENCODE_OPTIONS))
    if (memo.size >= MEMO_LIMIT) memo.clear()
    memo.set(key, ids)
  }
  return ids
}

/** How many o200k tokens `text` has. */
export function tokenCount(text) {
  return tokenIds(text).length
}

export function sha256(...parts) {
  const hash = createHash('sha256')
  for (const part of parts) hash.update(typeof part === 'string' ? part : Buffer.from(part.buffer, part.byteOffset, part.byteLength))
  return hash.digest('hex')
}

export function randomId(prefix) {
  return prefix + randomBytes(12).toString('base64url')
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** A deep copy through JSON (what the wire would give). */
export const clone = (value) => JSON.parse(JSON.stringify(value))

/**
 * Starts an HTTP server on 127.0.0.1 (random port). `handle(req, rawBody)` resolves to
 * `{ status, headers?, body }` (`body` a string) or `null` to leave the request hanging.
 */
export async function startHttpServer(handle) {
  const server = createServer((req, res) => {
    const chunks = []
    req.on('data', (chunk) => chunks.push(chunk))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      Promise.resolve()
        .then(() => handle(req, raw))
        .then((reply) => {
          if (reply === null || res.destroyed) return
          res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers })
          res.end(reply.body)
        })
        .catch((error) => {
          // A bug in the server must show as a failed request, not as a hang.
          if (res.headersSent || res.destroyed) return
          res.writeHead(500, { 'content-type': 'text/plain' })
          res.end(`local server error: ${error?.stack ?? error}`)
        })
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.()
        server.close(() => resolve())
      }),
  }
}

const PATH = /(?:~|\.{1,2})?(?:\/[\w.@+-]+){2,}/g

/**
 * The default reply: a plausible structured summary. It quotes the start and the end of the
 * last user message (so a test can see which instruction the model was given) and lists file
 * paths seen in the conversation (so a summary check that looks for them has something real).
 */
export function defaultSummary(conversationText, lastUserText) {
  const paths = [...new Set(conversationText.match(PATH) ?? [])].slice(0, 40)
  const flat = lastUserText.replace(/\s+/g, ' ').trim()
  const head = flat.slice(0, 160)
  const tail = flat.length > 320 ? flat.slice(-160) : ''
  const lines = [
    '## Goal',
    'Continue the task the user started in this conversation.',
    '',
    '## Instruction received',
    `> ${head}${tail ? ` … ${tail}` : ''}`,
    '',
    '## Files',
    ...(paths.length > 0 ? paths.map((p) => `- ${p}`) : ['- (no file paths mentioned)']),
    '',
    '## Current state',
    `The conversation so far holds ${conversationText.length.toLocaleString('en-US')} characters of messages.`,
    '',
    '## Next steps',
    '- Pick up from the last message that is kept after this summary.',
  ]
  return lines.join('\n')
}
