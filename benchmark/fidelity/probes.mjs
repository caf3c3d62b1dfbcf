// The probes of the fidelity benchmark: questions a compacted list must answer for the agent to
// take its next step, each checked by string and structure on the result (no LLM scores them).
// The truth of each probe comes from the events of the messages a compaction replaced
// (sessions.mjs): the probes ask only about what was compacted, since what was kept is
// in the list word for word anyway.
//
// - files: the files modified (created or changed, last operation not a delete) and the files
//   read by the compacted tool calls. Recall: each such file is named in the result (its path,
//   or a tail of it of two segments or more). Precision, where the result says which files it
//   claims (the library's ledger lists): the claimed files that the compacted calls did touch
//   so (a file modified in the compacted part and listed as read only is not a miss, and vice
//   versa the other way).
// - task: the session's first request (its first user message that is not a command, a
//   greeting or an acknowledgement: `isRequest`; the first user message when none is) is in
//   the result, word for word (when the library had to shorten it: its first 60 and last 30
//   characters).
// - user: each user message of the compacted part, word for word; constraints: each sentence of
//   those that states a constraint (must, never, always, do not, make sure, avoid, only, keep…).
// - error: the informative line of the last failed call of the compacted part.
// - plan: each open item of the last task list set in the compacted part.
// - value: for a value the user set twice, the later setting.
// - recall: every compacted message is reachable: the recall lines of the result cover it in
//   the archives (and `restoreMessages` gives the whole list back); each planted fact is in the
//   recall tool's answer for a range a recall line names.

/** Every string of a value, depth first (the text a model reads of a message, and then some). */
export function strings(value, out = []) {
  if (typeof value === 'string') out.push(value)
  else if (Array.isArray(value)) for (const v of value) strings(v, out)
  else if (value && typeof value === 'object') for (const v of Object.values(value)) strings(v, out)
  return out
}

const norm = (s) => s.replace(/\s+/g, ' ').trim()

const SMALL_TALK = new Set(
  'hi hello hey heya hiya howdy yo greetings morning afternoon evening good day there all thanks thank you thx ty cheers ok okay k kk okey sure yes yeah yep yup y no nope right alright great cool nice perfect awesome excellent fine got it understood sounds so far looks lgtm done agreed continue go on ahead proceed please pls again much very a lot that works wonderful neat welcome bye ciao'.split(' '),
)

/**
 * Whether a user's message asks for something, by this benchmark's reading of the rule in
 * docs/what-the-agent-keeps.md: not a slash command (`/mode`, `/model x`), not a command Claude
 * Code recorded (`<command-name>…`), not a few words of greeting or acknowledgement.
 */
export function isRequest(text) {
  const t = text.trim()
  if (t === '' || t.startsWith('[context-compact]')) return false
  if (/^\/[A-Za-z][\w:.-]*(\s|$)/.test(t)) return false
  if (/^<(command-name|command-message|command-args|local-command-stdout|local-command-stderr|local-command-caveat)>/.test(t)) return false
  const words = t
    .split(/[\s,.;!?…]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase().replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''))
  return !(words.length <= 6 && words.every((w) => w === '' || SMALL_TALK.has(w)))
}

/** Whether `text` holds `needle`, whitespace aside. */
export function holds(text, needle) {
  return norm(text).includes(norm(needle))
}

/** Whether a path is named in `text`: the whole path, or a tail of it of two segments or more. */
export function namesPath(text, path) {
  if (text.includes(path)) return true
  const parts = path.split('/').filter(Boolean)
  for (let k = Math.min(parts.length - 1, 4); k >= 2; k--) if (text.includes(parts.slice(-k).join('/'))) return true
  if (parts.length === 1) return new RegExp(`(^|[\\s\`'"(/])${parts[0].replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[\\s\`'"),:.])`).test(text)
  return false
}

const CONSTRAINT = /\b(must|never|always|do not|don't|make sure|avoid|only|keep|should|please|no more than|at most|at least)\b/i

/** The sentences of a user message that state constraints. */
export function constraints(text) {
  return text
    .split(/\n+|(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter((s) => s.length >= 12 && s.length <= 400 && CONSTRAINT.test(s))
}

/** What the compacted part holds, from the events of the compacted indices (in order). */
export function truthOf(events, compacted) {
  const files = new Map() // path -> last write op ('write' | 'delete')
  const read = new Set()
  const users = []
  let plan = null
  let failure = null
  const values = new Map()
  const facts = []
  for (const index of compacted) {
    for (const e of events[index] ?? []) {
      if (e.kind === 'user') users.push(e.text)
      else if (e.kind === 'file') {
        if (e.op === 'read') read.add(e.path)
        else files.set(e.path, e.op)
      } else if (e.kind === 'plan') plan = e.items
      else if (e.kind === 'failure') failure = e
      else if (e.kind === 'value') values.set(e.key, e)
      else if (e.kind === 'fact') facts.push(e.text)
    }
  }
  return {
    modified: [...files].filter(([, op]) => op === 'write').map(([p]) => p),
    deleted: [...files].filter(([, op]) => op === 'delete').map(([p]) => p),
    read: [...read],
    users,
    plan,
    failure,
    values: [...values.values()],
    facts,
  }
}

/** The lists of the library's ledger in a text (the last ledger wins): `{modified, read}`. */
export function ledgerLists(text) {
  const at = text.lastIndexOf('## Ledger (extracted from tool calls)\n')
  if (at < 0) return null
  const lists = { modified: [], read: [], deleted: [] }
  let current = null
  for (const line of text.slice(at).split('\n').slice(1)) {
    if (line.startsWith('## ')) break
    if (line.startsWith('- ')) {
      const item = line.slice(2)
      // A shortened ledger counts the files it does not name per folder: no file is claimed.
      if (/^\(\d+ more files? (under .*|elsewhere)\)$/.test(item)) continue
      // A file written more than once says how many times.
      if (current) lists[current].push(item.replace(/ \((\d+) edits\)$/, ''))
      continue
    }
    current = /^Files (created|modified):/.test(line) ? 'modified' : /^Files read:/.test(line) ? 'read' : /^Files deleted:/.test(line) ? 'deleted' : null
  }
  return lists
}

/** The library's sections of a summary, by header, with their text. */
export function sectionsOf(summary) {
  const headers = ['## Ledger (extracted from tool calls)', '## Task list (as the agent last set it)', '## User messages (verbatim)', '## Latest failure', '## Archived originals (recall)', '## Current file contents']
  const found = []
  for (const header of headers) {
    const at = summary.indexOf(`\n${header}\n`)
    if (at >= 0) found.push({ header, at: at + 1 })
  }
  found.sort((a, b) => a.at - b.at)
  return found.map((s, i) => ({ header: s.header, text: summary.slice(s.at, i + 1 < found.length ? found[i + 1].at : undefined).trimEnd() }))
}

/**
 * The recall lines of a text: `{archive, from, to}` (`from`/`to` null for a whole archive), and
 * the archives summaries name in their first line.
 */
export function recallLines(text) {
  const lines = [...text.matchAll(/^Recall: archive=(\S+)(?: from=(\d+) to=(\d+))?$/gm)].map((m) => ({ archive: m[1], from: m[2] === undefined ? null : Number(m[2]), to: m[3] === undefined ? null : Number(m[3]) }))
  // A summary whose recall lines gave way to a tight window still names its archive in its
  // first line: the whole archive is what the recall tool reads for it.
  for (const m of text.matchAll(/Originals archived in: (\S*?([^/\\\s]+\.json))\s*$/gm)) if (!lines.some((l) => l.archive === m[2])) lines.push({ archive: m[2], from: null, to: null })
  return lines
}

/**
 * Answers the probes for one compacted result.
 * - `text`: what the result says (every string of its messages, joined), or a summary's text;
 * - `summary`: the library's summary text (null for another system's summary);
 * - `truth`: from `truthOf`; `task`: the session's first user message (null when not compacted).
 * Returns `{probes: [{kind, name, ok}], files: {modified: {recall, precision}, read: …}}`.
 */
export function answer({ text, summary, truth, task }) {
  const probes = []
  const add = (kind, name, ok) => probes.push({ kind, name, ok: Boolean(ok) })
  const lists = summary ? ledgerLists(summary) : null
  const files = {}
  for (const kind of ['modified', 'read']) {
    for (const path of truth[kind]) add(`files ${kind}`, path, namesPath(text, path))
    if (lists) {
      const claimed = lists[kind]
      // A file both read and changed in the compacted part may be listed under either.
      const touched = new Set([...truth.modified, ...truth.read, ...truth.deleted])
      const right = kind === 'modified' ? new Set(truth.modified) : new Set(truth.read)
      const hits = claimed.filter((p) => right.has(p) || (kind === 'read' && touched.has(p)))
      files[kind] = {
        truth: truth[kind].length,
        found: truth[kind].filter((p) => claimed.includes(p)).length,
        claimed: claimed.length,
        hits: hits.length,
        recall: truth[kind].length === 0 ? null : truth[kind].filter((p) => claimed.includes(p)).length / truth[kind].length,
        precision: claimed.length === 0 ? null : hits.length / claimed.length,
        extra: claimed.filter((p) => !hits.includes(p)),
        missed: truth[kind].filter((p) => !claimed.includes(p)),
      }
    }
  }
  if (task !== null && task !== undefined) {
    const chars = Array.from(task)
    const whole = holds(text, task)
    const ends = holds(text, chars.slice(0, 60).join('')) && holds(text, chars.slice(-30).join(''))
    add('task', 'the task statement', whole || ends)
  }
  for (const u of truth.users) add('user message', u.slice(0, 60), holds(text, u))
  for (const u of truth.users) for (const c of constraints(u)) add('constraint', c.slice(0, 60), holds(text, c))
  // A long line is identified by its beginning (the library clips what it shows of one).
  if (truth.failure) add('error', truth.failure.line, holds(text, Array.from(truth.failure.line).slice(0, 200).join('')))
  if (truth.plan) for (const item of truth.plan.filter((i) => i.status !== 'completed' && i.status !== 'cancelled')) add('plan', item.text, holds(text, item.text))
  for (const v of truth.values) add('value', `${v.key}=${v.value}`, holds(text, v.text))
  return { probes, files }
}

/** Counts of answered probes by kind: `{kind: [answered, asked]}`. */
export function tally(probes) {
  const out = {}
  for (const p of probes) {
    out[p.kind] ??= [0, 0]
    out[p.kind][1]++
    if (p.ok) out[p.kind][0]++
  }
  return out
}
