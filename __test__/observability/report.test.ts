// The session report (issue 24): `renderReport` and `context-compact report`, checked in a real
// browser — headless Chromium from the distribution's packages (scripts/setup-chromium.mjs
// installs it; `.ci/run` requires it), driven by playwright-core. For sessions compacted in the
// test, the page must load without a console error and without any request but its own file,
// show what the session's data holds (compactions, tokens before and after, the ledger's
// files), not be blank, and not overflow at phone width; with a real session and its usage
// file, a 2,000-message session with a 1 MB tool result, every message format, and archives on
// an object store (file:// URLs).
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

import fc from 'fast-check'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { Compactor, compactMessages, renderReport, type ArchiveStore, type CompactResult, type Message } from '../../index'
import { generateConversation } from '../../benchmark/generate.mjs'
import { conversationArb, extend, FORMATS, render } from '../support/format-conversations'
import { tempDir } from '../support/helpers'

const ROOT = join(__dirname, '..', '..')
const CLI = join(ROOT, 'cli', 'context-compact.js')
const REAL = join(ROOT, '..', 'shared', 'data', 'real')
const CHROMIUM = process.env.CONTEXT_COMPACT_CHROMIUM || '/usr/bin/chromium'
const browserPresent = existsSync(CHROMIUM)
if (!browserPresent) {
  if (process.env.CONTEXT_COMPACT_REQUIRE_CHROMIUM === '1') {
    throw new Error(`${CHROMIUM} is required (CONTEXT_COMPACT_REQUIRE_CHROMIUM=1): run node scripts/setup-chromium.mjs as root`)
  }
  console.warn(`SKIPPED: the browser tests of the session report need ${CHROMIUM} (as root: node scripts/setup-chromium.mjs)`)
}

const fmt = (n: number) => n.toLocaleString('en-US')
const SMALL = { provider: 'extractive' as const, force: true, contextTokenLimit: 4000 }

// ---------------------------------------------------------------------------------------------
// The browser

let context: BrowserContext
let profile: string
const pages = tempDir('cc-report-pages-')

beforeAll(async () => {
  if (!browserPresent) return
  profile = mkdtempSync(join(tmpdir(), 'cc-report-chromium-'))
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
})

afterAll(async () => {
  await context?.close()
  if (profile) rmSync(profile, { recursive: true, force: true })
  rmSync(pages, { recursive: true, force: true })
})

interface Loaded {
  page: Page
  errors: string[]
  /** Every request the page made besides loading its own file (all of them refused). */
  requests: string[]
}

let pageCount = 0

/** Opens `html` from a file at `width`: console errors and requests are recorded. */
async function open(html: string, width = 1280): Promise<Loaded> {
  const file = join(pages, `report-${++pageCount}.html`)
  writeFileSync(file, html)
  const url = pathToFileURL(file).href
  const page = await context.newPage()
  await page.setViewportSize({ width, height: 900 })
  const errors: string[] = []
  const requests: string[] = []
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text())
  })
  page.on('pageerror', (error) => errors.push(String(error)))
  await page.route('**/*', (route) => {
    if (route.request().url() === url) return route.continue()
    requests.push(route.request().url())
    return route.abort()
  })
  page.on('request', (request) => {
    if (request.url() !== url && !requests.includes(request.url())) requests.push(request.url())
  })
  await page.goto(url, { waitUntil: 'load' })
  return { page, errors, requests }
}

/** Distinct colours of a screenshot and the share of the commonest one (decoded by the browser). */
async function pixelVariety(png: Buffer): Promise<{ colours: number; commonest: number }> {
  const blank = await context.newPage()
  try {
    return await blank.evaluate(async (base64) => {
      const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))
      const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/png' }))
      const canvas = new OffscreenCanvas(bitmap.width, bitmap.height)
      const g = canvas.getContext('2d')!
      g.drawImage(bitmap, 0, 0)
      const data = g.getImageData(0, 0, bitmap.width, bitmap.height).data
      const counts = new Map<number, number>()
      for (let i = 0; i < data.length; i += 4) {
        const key = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2]
        counts.set(key, (counts.get(key) ?? 0) + 1)
      }
      return { colours: counts.size, commonest: Math.max(...counts.values()) / (data.length / 4) }
    }, png.toString('base64'))
  } finally {
    await blank.close()
  }
}

async function overflowAt(page: Page, width: number) {
  await page.setViewportSize({ width, height: 800 })
  return page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }))
}

// ---------------------------------------------------------------------------------------------
// Sessions

/** The "Files read:" … lists of a summary's ledger, read independently of the report. */
function ledgerFiles(summary: string): string[] {
  const ledger = summary.slice(summary.indexOf('## Ledger (extracted from tool calls)'))
  const files: string[] = []
  let inFiles = false
  for (const line of ledger.split('\n').slice(1)) {
    if (line.startsWith('## ')) break
    if (/^Files (read|created|modified|deleted):/.test(line)) inFiles = true
    else if (/^[A-Z][a-z ]+:/.test(line)) inFiles = false
    else if (inFiles && line.startsWith('- ')) files.push(line.slice(2))
  }
  return files
}

interface Session {
  outputDir: string
  sessionId: string
  /** The list the loop holds now. */
  messages: any[]
  /** The full conversation. */
  full: any[]
  results: CompactResult<any>[]
  /** The full conversation's length when each compaction ran. */
  positions: number[]
}

/** A conversation in `format` compacted twice (extractive, forced, a 4,000-token window), then grown. */
async function twiceCompacted(format: (typeof FORMATS)[number], outputDir: string, extra: Record<string, unknown> = {}): Promise<Session> {
  const [a, b, c] = fc.sample(conversationArb({ minEpisodes: 4, maxEpisodes: 5 }), { numRuns: 3, seed: 7 })
  const options = { ...SMALL, outputDir, sessionId: 's1', format, ...extra }
  const first = render(a, format)
  const r1 = await compactMessages(first, options)
  const second = render(extend(a, b, 1), format)
  const r2 = await compactMessages([...r1.messages, ...second.slice(first.length)], options)
  const third = render(extend(extend(a, b, 1), c, 2), format)
  expect(r1.compacted && r2.compacted).toBe(true)
  return {
    outputDir,
    sessionId: 's1',
    messages: [...r2.messages, ...third.slice(second.length)],
    full: third,
    results: [r1, r2],
    positions: [first.length, second.length],
  }
}

/** The before → after numbers of each compaction card, in order. */
function cardsOf(html: string) {
  return [...html.matchAll(/data-compaction="(\d+)".*?data-before="(\d+)".*?data-after="(\d+)"/gs)].map((m) => ({
    number: Number(m[1]),
    before: Number(m[2]),
    after: Number(m[3]),
  }))
}

function expectSelfContained(html: string) {
  // Nothing to fetch: no script, no external stylesheet, font, image or frame. Every "<" of
  // the text is escaped, so each one here starts a tag of the page's own.
  const tags = html.match(/<[^>]*>/g) ?? []
  expect(tags.length).toBeGreaterThan(100)
  for (const tag of tags) {
    expect(tag).not.toMatch(/^<\/?(script|link|img|iframe|object|embed|audio|video|source|base|form)\b/i)
    expect(tag).not.toMatch(/\s(src|srcset|action|background|on[a-z]+)=/i)
    expect(tag).not.toMatch(/href="(?!#)/)
  }
  const style = html.slice(html.indexOf('<style>'), html.indexOf('</style>'))
  expect(style).not.toMatch(/@import|url\(/i)
}

// ---------------------------------------------------------------------------------------------

describe.skipIf(!browserPresent)('in a browser', () => {
  it('a session compacted twice: no console error, no request, the numbers of the data, not blank, no overflow at 375 px', async () => {
    const session = await twiceCompacted('anthropic', tempDir())
    const html = await renderReport(session.messages, { outputDir: session.outputDir, sessionId: session.sessionId })
    expectSelfContained(html)
    const { page, errors, requests } = await open(html)
    expect(errors).toEqual([])
    expect(requests).toEqual([])

    // The compactions, their tokens before and after, their place and the files of their ledgers.
    const cards = await page.locator('article[data-compaction]').all()
    expect(cards).toHaveLength(2)
    for (const [i, result] of session.results.entries()) {
      const card = page.locator(`#compaction-${i + 1}`)
      expect(await card.locator('.before').innerText()).toBe(fmt(result.stats.originalTokenCount))
      expect(await card.locator('.after').innerText()).toBe(fmt(result.stats.compactedTokenCount))
      expect(await card.innerText()).toContain(`after message ${fmt(session.positions[i])} of the full conversation`)
      const files = ledgerFiles(result.summary!)
      expect(files.length).toBeGreaterThan(0)
      // Shown from their shared directory; the full path is the entry's data-path and title.
      const shown = await card.locator('ul.ledger li code[data-path]').evaluateAll((codes) => codes.map((c) => c.getAttribute('data-path')))
      for (const file of files) expect(shown).toContain(file)
      expect((await card.locator('dd').allInnerTexts()).join('\n')).toContain(result.archivePath!)
    }
    // The chart: a marker per compaction, linking to its card, and the curve's table.
    expect(await page.locator('svg a[href="#compaction-1"], svg a[href="#compaction-2"]').count()).toBe(2)
    const kpis = await page.locator('.kpi').allInnerTexts()
    expect(kpis.join('\n')).toContain(`full conversation\n${fmt(session.full.length)}`)
    expect(kpis.join('\n')).toContain(`messages now\n${fmt(session.messages.length)}`)
    // The list now: each largest message links to its row.
    const first = page.locator('table.largest a').first()
    const target = (await first.getAttribute('href'))!
    expect(await page.locator(target).count()).toBe(1)

    const png = await page.screenshot()
    const { colours, commonest } = await pixelVariety(png)
    expect(colours).toBeGreaterThan(50)
    expect(commonest).toBeLessThan(0.95)

    for (const width of [375, 768, 1280]) {
      const { scroll, inner } = await overflowAt(page, width)
      expect(scroll, `at ${width} px`).toBeLessThanOrEqual(inner)
    }
    await page.close()
  })

  it.skipIf(!existsSync(join(REAL, 'manifest.json')))('a real session with its usage file, through the CLI', async () => {
    const dir = tempDir()
    const out = join(dir, 'report.html')
    const usageFile = join(REAL, 'cc-spotter-gqc-pre.usage.json')
    const usage = JSON.parse(readFileSync(usageFile, 'utf8'))
    const run = spawnSync(
      process.execPath,
      [CLI, 'report', join(REAL, 'cc-spotter-gqc-pre.json'), '--usage', usageFile, '--agent-model', 'claude-opus-4-6', '--output-dir', join(dir, 'none'), '-o', out],
      { encoding: 'utf8' },
    )
    expect(run.status, run.stderr).toBe(0)
    expect(run.stderr).toMatch(/wrote .*report\.html: 205 messages, 0 compactions/)
    const html = readFileSync(out, 'utf8')
    expectSelfContained(html)
    const { page, errors, requests } = await open(html)
    expect(errors).toEqual([])
    expect(requests).toEqual([])
    // Billed usage beside the count: one circle per request, the last billed prompt.
    expect(await page.locator('svg circle.billed').count()).toBe(usage.length)
    const last = usage[usage.length - 1]
    const billed = last.input_tokens + last.cache_read_input_tokens + last.cache_creation_input_tokens
    expect((await page.locator('.kpis').innerText()).replace(/\s+/g, ' ')).toContain(`last billed prompt ${fmt(billed)}`)
    expect(await page.locator('#compactions').innerText()).toContain('No compaction recorded')
    // The list now: tool results by tool name, the largest first.
    const tools = await page.locator('#now table.largest').nth(1).locator('tbody tr').count()
    expect(tools).toBe(10)
    const png = await page.screenshot()
    expect((await pixelVariety(png)).colours).toBeGreaterThan(50)
    const { scroll, inner } = await overflowAt(page, 375)
    expect(scroll).toBeLessThanOrEqual(inner)
    await page.close()
  })

  it('a 2,000-message session compacted twice, with a 1 MB tool result: the page stays small and holds', async () => {
    const all = generateConversation({ targetTokens: 1_400_000, seed: 3 }) as any[]
    const isResults = (m: any) => Array.isArray(m.content) && m.content.some((b: any) => b.type === 'tool_result')
    let end = 2000
    while (isResults(all[end])) end++
    const full = all.slice(0, end)
    expect(full.length).toBeGreaterThanOrEqual(2000)
    let cut = 1000
    while (isResults(full[cut])) cut++
    const outputDir = tempDir()
    const options = { ...SMALL, contextTokenLimit: 100_000, outputDir, sessionId: 'big' }
    const r1 = await compactMessages(full.slice(0, cut), options)
    const r2 = await compactMessages([...r1.messages, ...full.slice(cut)], options)
    const huge = 'tail -f build.log\n' + 'error: something went wrong in a very long line of output '.repeat(17_500)
    expect(huge.length).toBeGreaterThan(1_000_000)
    const messages = [
      ...r2.messages,
      { role: 'assistant', content: [{ type: 'tool_use', id: 'huge', name: 'bash', input: { command: 'cat build.log' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'huge', content: huge }] },
    ]
    const html = await renderReport(messages, { outputDir, sessionId: 'big' })
    expect(html.length).toBeLessThan(300_000)
    // The chart is drawn from at most a bounded number of points per line.
    const longest = Math.max(...[...html.matchAll(/<path d="([^"]*)"/g)].map((m) => (m[1].match(/L/g) ?? []).length))
    expect(longest).toBeLessThan(1500)
    expect(cardsOf(html).map((c) => [c.before, c.after])).toEqual([
      [r1.stats.originalTokenCount, r1.stats.compactedTokenCount],
      [r2.stats.originalTokenCount, r2.stats.compactedTokenCount],
    ])

    // The 2,000 messages as the list itself (no archive): one row each, still bounded.
    const plain = await renderReport(full, { outputDir: join(outputDir, 'none') })
    expect(plain.length).toBeLessThan(1_000_000)

    for (const page_ of [html, plain]) {
      const { page, errors, requests } = await open(page_)
      expect(errors).toEqual([])
      expect(requests).toEqual([])
      expect(await page.locator('table.messages tbody tr').count()).toBe(page_ === html ? messages.length : full.length)
      const { scroll, inner } = await overflowAt(page, 375)
      expect(scroll).toBeLessThanOrEqual(inner)
      if (page_ === html) {
        // The 1 MB result is the largest tool result, its text clipped.
        const top = page.locator('#now table.largest').nth(1).locator('tbody tr').first()
        expect(await top.locator('a').innerText()).toBe(fmt(messages.length - 1))
        expect((await top.innerText()).length).toBeLessThan(400)
      }
      await page.close()
    }
  })

  it('untrusted text is escaped: nothing in a message, a tool name or a file path becomes markup', async () => {
    const evil = '"><img src=x onerror="window.hit=1"><script>window.hit=2</script>'
    const messages: Message[] = []
    for (let i = 0; i < 6; i++) {
      messages.push({ role: 'user', content: `${evil} question ${i} ${'word '.repeat(60)}` })
      messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: `read${evil}`, input: { path: `src/${evil}${i}.ts` } }] })
      messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: `${evil} ${'x '.repeat(80)}` }] })
      messages.push({ role: 'assistant', content: `${evil} answer ${i} ${'word '.repeat(60)}` })
    }
    const outputDir = tempDir()
    const result = await compactMessages(messages, { ...SMALL, outputDir, sessionId: 'evil' })
    expect(result.compacted).toBe(true)
    const html = await renderReport(result.messages, { outputDir, sessionId: 'evil', title: evil })
    expectSelfContained(html)
    const { page, errors, requests } = await open(html)
    expect(errors).toEqual([])
    expect(requests).toEqual([])
    expect(await page.locator('script, img').count()).toBe(0)
    expect(await page.evaluate(() => (window as any).hit)).toBeUndefined()
    expect(await page.locator('h1').innerText()).toBe(evil)
    expect(await page.locator('ul.ledger li code[data-path]').evaluateAll((codes) => codes.map((c) => c.getAttribute('data-path')))).toContain(`src/${evil}0.ts`)
    await page.close()
  })
})

// ---------------------------------------------------------------------------------------------
// At 1,280 and 375 px: what a reader sees of the chart, its labels, the ledger and the numbers.

/** A real Claude Code session replayed as a loop would run it (compact() before each request), with `window`. */
async function replayed(window: number, agentModel = 'claude-opus-4-6') {
  const conversation = JSON.parse(readFileSync(join(REAL, 'cc-spotter-gqc-pre.json'), 'utf8'))
  const usage = JSON.parse(readFileSync(join(REAL, 'cc-spotter-gqc-pre.usage.json'), 'utf8'))
  const outputDir = tempDir()
  const options = { agentModel, contextTokenLimit: window, provider: 'extractive' as const, outputDir, sessionId: 'replay' }
  const compactor = new Compactor(options)
  let held: any[] = []
  let given = 0
  for (const request of usage) {
    const upTo = request.message_index_after_which_the_request_was_made + 1
    held = [...held, ...conversation.slice(given, upTo)]
    given = upTo
    held = (await compactor.compact(held)).messages
  }
  return { messages: [...held, ...conversation.slice(given)], options }
}

/** The chart as drawn: label boxes, points of the curves, the window and threshold it draws. */
async function chartGeometry(page: Page) {
  return page.evaluate(() => {
    const svg = document.querySelector('.chart svg') as SVGSVGElement
    const box = svg.getBoundingClientRect()
    const labels = [...svg.querySelectorAll('text')]
      .filter((t) => getComputedStyle(t).display !== 'none')
      .map((t) => {
        const r = t.getBoundingClientRect()
        return { text: t.textContent ?? '', x0: r.left, x1: r.right, y0: r.top, y1: r.bottom, label: t.classList.contains('label') }
      })
      .filter((b) => b.x1 > b.x0)
    const points: [number, number][] = []
    for (const path of svg.querySelectorAll<SVGPathElement>('path.curve')) {
      const ctm = path.getScreenCTM()!
      const length = path.getTotalLength()
      for (let at = 0; at <= length; at += 1.5) {
        const p = path.getPointAtLength(at)
        points.push([ctm.a * p.x + ctm.c * p.y + ctm.e, ctm.b * p.x + ctm.d * p.y + ctm.f])
      }
    }
    for (const c of svg.querySelectorAll('circle.billed')) {
      const r = c.getBoundingClientRect()
      points.push([(r.left + r.right) / 2, (r.top + r.bottom) / 2])
    }
    const tokens = (cls: string) => Number(svg.querySelector(`line.${cls}`)!.getAttribute('data-tokens'))
    const legend = document.querySelector('ul.legend')!.getBoundingClientRect()
    const sizes = [...svg.querySelectorAll('text')].filter((t) => getComputedStyle(t).display !== 'none').map((t) => t.getBoundingClientRect().height)
    return { width: box.width, height: box.height, labels, points, window: tokens('window'), threshold: tokens('threshold'), legend: legend.height, smallestText: Math.min(...sizes) }
  })
}

const text = (page: Page, selector: string) => page.locator(selector).first().innerText()
const number = (s: string) => Number(s.replace(/[^\d]/g, ''))

describe.skipIf(!browserPresent || !existsSync(join(REAL, 'manifest.json')))('at 1,280 and 375 px', () => {
  it('the chart: legible, no label over another or over the curve, the window and threshold of the text, no overflow', async () => {
    const sessions: { name: string; html: string }[] = []
    // A loop whose window is 80K: three compactions, the billed usage of the first requests.
    const replay = await replayed(80_000)
    sessions.push({ name: 'replay 80K', html: await renderReport(replay.messages, { ...replay.options, title: 'replay' }) })
    // Compacted with a 100K window, reported with the agent's model (whose window is 200K).
    const issue = await replayed(100_000)
    sessions.push({ name: 'reported with --agent-model', html: await renderReport(issue.messages, { outputDir: issue.options.outputDir, sessionId: 'replay', agentModel: 'claude-opus-4-6' }) })
    // A list whose curve ends on the window line: the labels must go elsewhere.
    const conversation = JSON.parse(readFileSync(join(REAL, 'cc-spotter-gqc-pre.json'), 'utf8'))
    sessions.push({ name: 'the curve at the window', html: await renderReport(conversation, { outputDir: join(tempDir(), 'none'), contextTokenLimit: 110_000 }) })
    for (const { name, html } of sessions) {
      for (const width of [1280, 375]) {
        const { page, errors } = await open(html, width)
        expect(errors).toEqual([])
        const g = await chartGeometry(page)
        const where = `${name} at ${width} px`
        // Legible: no text smaller than 10 px; tall enough at phone width; the legend no taller than the chart.
        expect(g.smallestText, where).toBeGreaterThanOrEqual(10)
        if (width === 375) {
          expect(g.height, where).toBeGreaterThanOrEqual(240)
          expect(g.legend, where).toBeLessThanOrEqual(g.height)
        }
        // No label over another.
        for (let i = 0; i < g.labels.length; i++) {
          for (let j = i + 1; j < g.labels.length; j++) {
            const [a, b] = [g.labels[i], g.labels[j]]
            const overlap = a.x0 < b.x1 - 0.5 && b.x0 < a.x1 - 0.5 && a.y0 < b.y1 - 0.5 && b.y0 < a.y1 - 0.5
            expect(overlap, `${where}: "${a.text}" over "${b.text}"`).toBe(false)
          }
        }
        // No label over a curve or a billed request.
        for (const label of g.labels.filter((l) => l.label)) {
          const hit = g.points.find(([x, y]) => x > label.x0 + 0.5 && x < label.x1 - 0.5 && y > label.y0 + 0.5 && y < label.y1 - 0.5)
          expect(hit, `${where}: "${label.text}" over the curve at ${hit}`).toBeUndefined()
        }
        // The window and threshold the chart draws are those of the text, the legend and the numbers.
        expect(number(await text(page, '.text-window')), where).toBe(g.window)
        expect(number(await text(page, '.text-threshold')), where).toBe(g.threshold)
        expect(number(await text(page, '.legend-window')), where).toBe(g.window)
        expect(number(await text(page, '.legend-threshold')), where).toBe(g.threshold)
        expect(await text(page, '.kpis'), where).toContain(`threshold ${fmt(g.threshold)}`)
        expect(await text(page, '#now'), where).toContain(`(${fmt(g.threshold)})`)
        for (const label of g.labels) {
          if (label.text.startsWith('window ')) expect(label.text).toBe(`window ${Math.round(g.window / 1000)}K`)
          if (label.text.startsWith('threshold ')) expect(label.text).toBe(`threshold ${Math.round(g.threshold / 1000)}K`)
        }
        // Each compaction's reason names the same threshold, or says it was another one then.
        for (const why of await page.locator('article[data-compaction] dd').allInnerTexts()) {
          const m = /threshold ([\d,]+)/.exec(why)
          if (m && number(m[1]) !== g.threshold) expect(why).toContain(`its threshold then; the chart draws ${fmt(g.threshold)}`)
        }
        const { scroll, inner } = await overflowAt(page, width)
        expect(scroll, where).toBeLessThanOrEqual(inner)
        await page.close()
      }
    }
  })

  it('the ledger: the shared directory once, each path from there on one line or two, in columns, the full path kept', async () => {
    const outputDir = tempDir()
    const conversation = JSON.parse(readFileSync(join(REAL, 'cc-spotter-gqc-pre.json'), 'utf8'))
    const result = await compactMessages(conversation, { provider: 'extractive', contextTokenLimit: 100_000, outputDir, sessionId: 'ledger' })
    expect(result.compacted).toBe(true)
    const files = ledgerFiles(result.summary!)
    expect(files.length).toBeGreaterThan(20)
    const html = await renderReport(result.messages, { outputDir, sessionId: 'ledger', agentModel: 'claude-opus-4-6' })
    for (const width of [1280, 375]) {
      const { page } = await open(html, width)
      const card = page.locator('#compaction-1')
      // Every file of the ledger, its full path kept (on hover and in the list of full paths).
      const kept = await card.locator('ul.ledger code[data-path]').evaluateAll((codes) => codes.map((c) => [c.getAttribute('data-path'), c.getAttribute('title'), c.textContent]))
      expect(kept.map(([path]) => path)).toEqual(expect.arrayContaining(files))
      for (const [path, title, shown] of kept) {
        expect(title).toBe(path)
        // Shown from the shared directory, the file's name always whole.
        expect(shown!.length).toBeLessThan(path!.length)
        expect(shown!.endsWith(path!.split('/').pop()!)).toBe(true)
      }
      const shared = await card.locator('code.shared').innerText()
      expect(shared).toBe('/home/USER/projects/spotter-worktrees/spotter-gqc/')
      expect(await card.locator('details.full-paths li').allTextContents()).toEqual(expect.arrayContaining(files))
      // No taller than its entries: each on one line (two for the longest at phone width), the
      // lists in as many columns as fit, each column filled.
      const lists = await card.locator('ul.ledger').evaluateAll((uls) =>
        uls.map((ul) => {
          const lis = [...ul.querySelectorAll('li')].map((li) => li.getBoundingClientRect())
          const line = parseFloat(getComputedStyle(ul.querySelector('li')!).lineHeight)
          const columns = new Set(lis.map((r) => Math.round(r.left))).size
          return { height: ul.getBoundingClientRect().height, line, columns, items: lis.length, tallest: Math.max(...lis.map((r) => r.height)) }
        }),
      )
      for (const list of lists) {
        expect(list.tallest).toBeLessThanOrEqual(list.line * (width === 375 ? 3 : 2) + 1)
        expect(list.height).toBeLessThanOrEqual(Math.ceil(list.items / list.columns) * list.tallest + 2)
        if (width === 1280 && list.items > 4) expect(list.columns).toBeGreaterThanOrEqual(2)
      }
      const ledger = await card.locator('.ledger-groups').boundingBox()
      const entries = lists.reduce((n, l) => n + l.items, 0)
      expect(ledger!.height).toBeLessThan(entries * lists[0].line * (width === 375 ? 1.6 : 1) + lists.length * 48)
      const { scroll, inner } = await overflowAt(page, width)
      expect(scroll).toBeLessThanOrEqual(inner)
      await page.close()
    }
  })
})

describe('renderReport', () => {
  it.each(FORMATS)('%s: the compactions, their place and the full conversation, through the archives', async (format) => {
    const session = await twiceCompacted(format, tempDir())
    const html = await renderReport(session.messages, { outputDir: session.outputDir, sessionId: session.sessionId })
    expect(cardsOf(html)).toEqual(
      session.results.map((r, i) => ({ number: i + 1, before: r.stats.originalTokenCount, after: r.stats.compactedTokenCount })),
    )
    for (const position of session.positions) expect(html).toContain(`after message ${fmt(position)} of the full conversation`)
    expect(html).toContain(`<span>full conversation</span><b>${fmt(session.full.length)}</b>`)
    const named = { anthropic: 'Anthropic / OpenAI Chat', openai: 'Anthropic / OpenAI Chat', 'openai-responses': 'OpenAI Responses', 'ai-sdk': 'AI SDK', gemini: 'Gemini', bedrock: 'Bedrock Converse', langchain: 'LangChain' }
    expect(html).toContain(` · ${named[format]} messages · `)
    // Every message of the list now has its row, the summary linked to its compaction.
    expect((html.match(/<tr id="m-/g) ?? []).length).toBe(session.messages.length)
    expect(html).toMatch(/<b>summary<\/b> of compaction <a href="#compaction-2">#2<\/a>/)
  })

  it('archives on an object store (file:// URLs), like restoreMessages', async () => {
    const dir = tempDir()
    const outputDir = pathToFileURL(join(dir, 'store')).href
    const session = await twiceCompacted('openai', outputDir)
    expect(session.results[0].archivePath!.startsWith('file://')).toBe(true)
    const html = await renderReport(session.messages, { outputDir, sessionId: session.sessionId })
    expect(cardsOf(html).map((c) => [c.before, c.after])).toEqual(session.results.map((r) => [r.stats.originalTokenCount, r.stats.compactedTokenCount]))
    expect(html).toContain(`<span>full conversation</span><b>${fmt(session.full.length)}</b>`)
    // The audit log, one object per event on a store, is read too.
    expect(html).toMatch(/Audit log \(2 events\)/)
  })

  it("archives in the caller's archiveStore", async () => {
    const entries = new Map<string, Uint8Array>()
    const archiveStore: ArchiveStore = {
      put(key, value, { ifNotExists }) {
        if (ifNotExists && entries.has(key)) return false
        entries.set(key, Uint8Array.from(value))
        return true
      },
      get: (key) => entries.get(key) ?? null,
      list: (prefix) => [...entries.keys()].filter((k) => k.startsWith(prefix)).map((key) => ({ key, size: entries.get(key)!.byteLength })),
      delete(key) {
        entries.delete(key)
      },
    }
    const session = await twiceCompacted('gemini', 'unused', { archiveStore })
    expect(session.results[1].archivePath).toMatch(/^archiveStore:s1\//)
    const html = await renderReport(session.messages, { sessionId: session.sessionId, archiveStore })
    expect(cardsOf(html).map((c) => [c.before, c.after])).toEqual(session.results.map((r) => [r.stats.originalTokenCount, r.stats.compactedTokenCount]))
    expect(html).toContain(`<span>full conversation</span><b>${fmt(session.full.length)}</b>`)
  })

  it('an empty list and a list of one message', async () => {
    const empty = await renderReport([], { outputDir: join(tempDir(), 'none') })
    expect(empty).toContain('<span>messages now</span><b>0</b>')
    const one = await renderReport([{ role: 'user', content: 'hi' }], { outputDir: join(tempDir(), 'none') })
    expect(one).toContain('<tr id="m-0">')
  })

  it('why, how and at what cost: trigger, strategy, provider, summaryUsage and the cache-read share (a local Messages API)', async () => {
    const server = createServer((req, res) => {
      req.resume()
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(
          JSON.stringify({
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            content: [{ type: 'text', text: '## Goal\nRefactor the parser (written by the local server)' }],
            stop_reason: 'end_turn',
            usage: { input_tokens: 100, cache_read_input_tokens: 900, cache_creation_input_tokens: 0, output_tokens: 40 },
          }),
        )
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const outputDir = tempDir()
      const messages: Message[] = []
      for (let i = 0; i < 8; i++) {
        messages.push({ role: 'user', content: `question ${i} ${'word '.repeat(150)}` })
        messages.push({ role: 'assistant', content: `answer ${i} ${'word '.repeat(150)}` })
      }
      const result = await compactMessages(messages, {
        provider: 'anthropic',
        apiKey: 'test-key',
        baseUrl: url,
        model: 'claude-test',
        contextTokenLimit: 2000,
        outputDir,
        sessionId: 'paid',
      })
      expect(result.summaryUsage).toMatchObject({ requests: 1, inputTokens: 100, cacheReadTokens: 900, outputTokens: 40 })
      const events = readFileSync(join(outputDir, 'paid', 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
      // The summary model names a Claude family: its billing factor made the estimate.
      expect(events[0]).toMatchObject({ event: 'compacted', trigger: 'tokens', strategy: 'summary', estimate: 'model' })
      const html = await renderReport(result.messages, { outputDir, sessionId: 'paid' })
      const text = html.replace(/<[^>]+>/g, '')
      expect(text).toContain('trigger tokens')
      expect(text).toContain('strategy summary · provider anthropic (claude-test)')
      expect(text).toContain('1 request · input 1,000 tokens (100 full price, 900 cache read, 0 cache write) · 90.0% read from the cache · output 40 tokens')
      expect(text).toContain('Refactor the parser (written by the local server)')
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('offloaded texts and removed thinking are shown with their archives', async () => {
    const outputDir = tempDir()
    const messages: Message[] = []
    for (let i = 0; i < 6; i++) {
      messages.push({ role: 'user', content: `question ${i} ${'word '.repeat(120)}` })
      messages.push({
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: `thinking about ${i} `.repeat(20), signature: 'sig' },
          { type: 'tool_use', id: `t${i}`, name: 'bash', input: { command: `make ${i}` } },
        ],
      })
      messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: `output ${i} `.repeat(i === 5 ? 3000 : 50) }] })
    }
    const result = await compactMessages(messages, { ...SMALL, contextTokenLimit: 6000, thinking: 'strip', outputDir, sessionId: 'cut' })
    expect(result.compacted).toBe(true)
    expect(result.offloaded.length).toBeGreaterThan(0)
    expect(result.transformations.length).toBeGreaterThan(0)
    const html = (await renderReport(result.messages, { outputDir, sessionId: 'cut' })).replace(/<[^>]+>/g, '')
    const file = (p: string | null) => p!.split('/').pop()!
    expect(html).toContain(`${result.offloaded.length === 1 ? '1 text' : `${result.offloaded.length} texts`} shortened to fit`)
    expect(html).toContain(file(result.offloadArchivePath))
    expect(html).toContain(`${result.transformations.length} thinking block${result.transformations.length === 1 ? '' : 's'} removed from kept turns`)
    expect(html).toContain(file(result.thinkingArchivePath))
  })

  it('without archives, the list alone; billed usage recorded on the messages', async () => {
    const messages: any[] = [
      { role: 'user', content: 'hello there' },
      { role: 'assistant', content: 'hi', usage: { input_tokens: 12, cache_read_input_tokens: 30, cache_creation_input_tokens: 0, output_tokens: 2 } },
      { role: 'user', content: 'and now?' },
    ]
    const html = await renderReport(messages, { outputDir: join(tempDir(), 'missing') })
    expect(html).toContain('No compaction recorded')
    expect(html).toContain('<span>last billed prompt</span><b>42</b>')
    expect((html.match(/<circle class="billed"/g) ?? []).length).toBe(1)
  })

  it('invalid input: a TypeError naming the message or the option', async () => {
    await expect(renderReport([{ role: 'user', content: 3 }] as any)).rejects.toThrow(TypeError)
    await expect(renderReport([{ role: 'user', content: 3 }] as any)).rejects.toThrow(/messages\[0\]/)
    await expect(renderReport([], { usage: {} as any })).rejects.toThrow(/options\.usage must be an array/)
    await expect(renderReport([], { usage: [{ input_tokens: 3 }] as any })).rejects.toThrow(/options\.usage\[0\]\.message_index_after_which_the_request_was_made/)
    await expect(renderReport([], { sessionId: '../x' })).rejects.toThrow(/sessionId/)
    await expect(renderReport('nope' as any)).rejects.toThrow(/messages must be an array/)
  })

  it('the CLI: a bad usage file is exit 1, stdout by default, help', () => {
    const dir = tempDir()
    const conversation = join(dir, 'c.json')
    writeFileSync(conversation, JSON.stringify([{ role: 'user', content: 'hi' }]))
    const bad = join(dir, 'u.json')
    writeFileSync(bad, '{"not": "an array"}')
    const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: dir })
    const failed = cli('report', conversation, '--usage', bad)
    expect(failed.status).toBe(1)
    expect(failed.stderr).toContain('expected a JSON array of usage entries')
    const ok = cli('report', conversation, '-q')
    expect(ok.status).toBe(0)
    expect(ok.stdout.startsWith('<!doctype html>')).toBe(true)
    expect(ok.stderr).toBe('')
    expect(cli('report', '--help').stdout).toContain('Usage: context-compact report')
    expect(cli('report', conversation, '--limit', '0').status).toBe(2)
  })
})
