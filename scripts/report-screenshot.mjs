// Makes the pictures of a session report in docs/: report.png (the top of the page, 1,000 px
// wide, shown in docs/report.md), report-1280.png and report-375.png (the numbers, the curve,
// its legend and the first compaction with its ledger, at a laptop's width and a phone's). The
// session is a real Claude Code session (../shared/data/real/cc-spotter-gqc-pre.json) replayed
// through a Compactor as an agent loop would run it — compact() before each of its real
// requests — with an 80,000-token window so that it compacts more than once (offline: the
// extractive summarizer). Until the first compaction the replay holds exactly what the real run
// sent, so the compactor is given the real billed usage of those requests (the trigger's best
// input) and the report draws it; later requests of the real run sent a list this replay no
// longer holds.
//
//   node scripts/report-screenshot.mjs [out-dir] [--html out.html]
//
// Needs the built addon, playwright-core and Chromium (scripts/setup-chromium.mjs).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const require = createRequire(import.meta.url)
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const { Compactor, renderReport } = require(join(root, 'index.js'))
const { chromium } = require('playwright-core')

const args = process.argv.slice(2)
const htmlAt = args.indexOf('--html')
const htmlOut = htmlAt >= 0 ? resolve(args.splice(htmlAt, 2)[1]) : null
const outDir = resolve(args[0] ?? join(root, 'docs'))

const real = join(root, '..', 'shared', 'data', 'real')
const name = 'cc-spotter-gqc-pre'
const conversation = JSON.parse(readFileSync(join(real, `${name}.json`), 'utf8'))
const usage = JSON.parse(readFileSync(join(real, `${name}.usage.json`), 'utf8'))

const work = mkdtempSync(join(tmpdir(), 'cc-report-screenshot-'))
// Archives under the default directory, relative to a scratch working directory: the page (and
// the summaries' first lines, which the counts include) then say the same on every run.
process.chdir(work)
const options = { agentModel: 'claude-opus-4-6', contextTokenLimit: 80_000, provider: 'extractive', outputDir: '.context-compact', sessionId: name }
try {
  const compactor = new Compactor(options)
  let held = []
  let given = 0
  let firstCompaction = Infinity
  // The usage of the last request: it covers the list up to its reply.
  let previous
  for (const request of usage) {
    const upTo = request.message_index_after_which_the_request_was_made + 1
    held = [...held, ...conversation.slice(given, upTo)]
    given = upTo
    const same = firstCompaction === Infinity
    const result = await compactor.compact(held, same ? { usage: previous } : {})
    if (result.compacted && same) firstCompaction = upTo - 1
    previous = request
    held = result.messages
  }
  held = [...held, ...conversation.slice(given)]
  const html = await renderReport(held, {
    ...options,
    title: `${name}.json — a Claude Code session, replayed with an 80K window`,
    usage: usage.filter((u) => u.message_index_after_which_the_request_was_made < firstCompaction),
  })
  if (htmlOut) writeFileSync(htmlOut, html)
  const page = join(work, 'report.html')
  writeFileSync(page, html)
  const profile = join(work, 'chromium')
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CONTEXT_COMPACT_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
  const tab = await context.newPage()
  const shoot = async (name, width, until) => {
    await tab.setViewportSize({ width, height: 900 })
    await tab.goto(pathToFileURL(page).href)
    const end = await tab.locator(until).boundingBox()
    const file = join(outDir, name)
    await tab.screenshot({ path: file, fullPage: true, clip: { x: 0, y: 0, width, height: Math.ceil(end.y + end.height + 16) } })
    console.log(`wrote ${file}`)
  }
  // The README's picture: the numbers, the curve and its legend.
  await shoot('report.png', 1000, 'ul.legend')
  // Each width: down to the end of the first compaction's ledger.
  await shoot('report-1280.png', 1280, '#compaction-1 .ledger-groups')
  await shoot('report-375.png', 375, '#compaction-1 .ledger-groups')
  await context.close()
} finally {
  process.chdir(root)
  rmSync(work, { recursive: true, force: true })
}
