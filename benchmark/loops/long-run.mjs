// A long-running agent loop, as issue 36 tried it: a `Compactor` drives a synthetic agent for many
// steps (a tool call and a 2–20K-character result each, several files touched, a new request of
// the user now and then, some calls failing), compacting whenever its threshold is reached. After
// every compaction it notes the summary message's size (tokens of its content, and of its
// sections), the budget, and the result's error code; at the end, whether `restoreMessages`
// gives the whole session back exactly.
//
// Shared by `npm run bench:long-run` (benchmark/loops/long-run-bench.mjs, which prints the figures) and
// __test__/pipeline/long-run.test.ts (which asserts them). The library is passed in, so the same loop
// can be run against another build.

import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { mulberry32 } from '../generate-texts.mjs'

const FOLDERS = ['src/parsers/', 'src/core/', 'src/net/http/', 'src/net/ws/', 'tests/unit/', 'tests/e2e/', 'docs/', 'scripts/', 'crates/engine/src/', 'crates/engine/tests/']
const WORDS = 'the parser reads each token and builds a tree of nodes while the checker walks it again to find errors in types names and scopes before the emitter writes code'.split(' ')

/** Text of about `chars` characters, lines of code-like words. */
function filler(rand, chars, tag) {
  const lines = []
  let n = 0
  let i = 0
  while (n < chars) {
    const words = Array.from({ length: 6 + Math.floor(rand() * 10) }, () => WORDS[Math.floor(rand() * WORDS.length)])
    const line = `${String(++i).padStart(5)}  ${tag} ${words.join(' ')}`
    lines.push(line)
    n += line.length + 1
  }
  return lines.join('\n')
}

/** The messages of one step of the synthetic agent (Anthropic format): a tool call and its result, sometimes a new request first. */
export function step(rand, i, { minChars = 2_000, maxChars = 20_000 } = {}) {
  const out = []
  if (i > 0 && i % 25 === 0) out.push({ role: 'user', content: `Next (step ${i}): now handle the case ${i} in the parser too, and keep the tests green. Never change the public API.` })
  // A pool of files that keeps growing: the session touches new files all along.
  const pool = 12 + Math.floor(i * 1.5)
  const file = () => `${FOLDERS[Math.floor(rand() * FOLDERS.length)]}f${Math.floor(rand() * pool)}.rs`
  const id = `call_${i}`
  const kind = i % 4
  let call
  let failed = false
  if (kind === 0) call = { name: 'Read', input: { file_path: file() } }
  else if (kind === 1) call = { name: 'Edit', input: { file_path: file(), old_string: `a${i}`, new_string: `b${i}` } }
  else if (kind === 2) call = { name: 'Write', input: { file_path: file(), content: `// step ${i}\n` } }
  else {
    const files = [file(), file(), file()]
    call = { name: 'Bash', input: { command: `sed -i 's/x${i}/y${i}/' ${files.join(' ')} && cargo test -p engine case_${i}` } }
    failed = i % 12 === 3
  }
  const chars = minChars + Math.floor(rand() * (maxChars - minChars))
  const result = failed ? `error[E0308]: mismatched types in case_${i}\n${filler(rand, chars, `s${i}`)}` : filler(rand, chars, `s${i}`)
  out.push({ role: 'assistant', content: [{ type: 'text', text: `Step ${i}: working on it.` }, { type: 'tool_use', id, ...call }] })
  out.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: result, ...(failed ? { is_error: true } : {}) }] })
  return out
}

/** A summarizer that rewrites the previous summary in about 150 tokens, as a disciplined LLM would. */
export async function fixedSummarizer(request) {
  const n = request.messages.length
  return `## Goal\n- Keep the parser handling every case the user asks for, tests green, public API unchanged.\n\n## Current state\n- ${n} more messages folded in; the latest cases are being handled one by one in src/parsers/ and crates/engine/.\n\n## Errors and fixes\n- Mismatched types in some test cases were met; each was fixed by the next edit.\n\n## Next steps\n- Continue with the latest request.`
}

/** The sections of a summary message's content, with their tokens. */
function sectionTokens(lib, content) {
  const out = {}
  const parts = content.split(/\n(?=## )/)
  for (const part of parts) {
    const header = /^## (.*)$/m.exec(part)?.[1] ?? '(first line)'
    out[header] = (out[header] ?? 0) + lib.countTokens([{ role: 'user', content: part }])
  }
  return out
}

/**
 * Runs the loop. `lib`: the library (its public API). Returns `{compactions: [{step, tokens,
 * headerTokens, sections, headers, code, listTokens}], restoreExact, steps, outputDir, sessionId}`.
 */
export async function runLongLoop(lib, { window, steps = 1_000, writer = 'extractive', seed = 1, minChars, maxChars, options = {} }) {
  const rand = mulberry32(seed)
  const outputDir = mkdtempSync(join(tmpdir(), 'cc-long-run-'))
  const sessionId = `long-${window}-${writer}`
  const compactor = new lib.Compactor({
    contextTokenLimit: window,
    outputDir,
    sessionId,
    ...(writer === 'extractive' ? { provider: 'extractive' } : { summarizer: fixedSummarizer }),
    ...options,
  })
  const all = [{ role: 'user', content: 'Port the parser of this repository to the new engine, case by case. Always run the tests after each change.' }]
  let list = [...all]
  const compactions = []
  for (let i = 0; i < steps; i++) {
    const added = step(rand, i, { minChars, maxChars })
    all.push(...added)
    list = [...list, ...added]
    if (!compactor.shouldCompact(list)) continue
    const result = await compactor.compact(list)
    if (!result.compacted) {
      compactions.push({ step: i, tokens: null, code: result.error?.code ?? 'not compacted' })
      continue
    }
    const content = result.summary ?? ''
    compactions.push({
      step: i,
      tokens: lib.countTokens([{ role: 'user', content }]),
      // The header line: how many messages were compacted, and the archive's path.
      headerTokens: lib.countTokens([{ role: 'user', content: content.split('\n')[0] }]),
      sections: sectionTokens(lib, content),
      headers: [...content.matchAll(/^## (.*)$/gm)].map((m) => m[1]),
      code: result.error?.code ?? null,
      listTokens: lib.countTokens(result.messages),
    })
    list = result.messages
  }
  const restored = await lib.restoreMessages(list, { outputDir, sessionId })
  const restoreExact = JSON.stringify(restored) === JSON.stringify(all)
  await compactor.close?.()
  return { compactions, restoreExact, steps, outputDir, sessionId }
}

/**
 * A recorded session replayed as a loop: its messages appended one by one to a `Compactor` at a
 * window of `window` tokens, compacting whenever the threshold is reached (the issue's
 * pi-session-large at 20K). Returns what {@link runLongLoop} returns.
 */
export async function replaySession(lib, messages, { window, writer = 'extractive', options = {} }) {
  const outputDir = mkdtempSync(join(tmpdir(), 'cc-long-run-'))
  const sessionId = `replay-${window}`
  const compactor = new lib.Compactor({ contextTokenLimit: window, outputDir, sessionId, ...(writer === 'extractive' ? { provider: 'extractive' } : { summarizer: fixedSummarizer }), ...options })
  let list = []
  const compactions = []
  for (const [i, message] of messages.entries()) {
    list = [...list, message]
    // A compaction cannot cut between a tool call and its result: wait for the result.
    if (message.role === 'assistant' && Array.isArray(message.content) && message.content.some((b) => b.type === 'tool_use')) continue
    if (!compactor.shouldCompact(list)) continue
    const result = await compactor.compact(list)
    if (!result.compacted) {
      compactions.push({ step: i, tokens: null, code: result.error?.code ?? 'not compacted' })
      continue
    }
    const content = result.summary ?? ''
    compactions.push({
      step: i,
      tokens: lib.countTokens([{ role: 'user', content }]),
      headerTokens: lib.countTokens([{ role: 'user', content: content.split('\n')[0] }]),
      sections: sectionTokens(lib, content),
      headers: [...content.matchAll(/^## (.*)$/gm)].map((m) => m[1]),
      code: result.error?.code ?? null,
    })
    list = result.messages
  }
  const restored = await lib.restoreMessages(list, { outputDir, sessionId })
  const restoreExact = JSON.stringify(restored) === JSON.stringify(messages)
  await compactor.close?.()
  return { compactions, restoreExact, steps: messages.length, outputDir, sessionId }
}
