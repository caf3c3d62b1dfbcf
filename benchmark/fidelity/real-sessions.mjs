// Compacts every real session in ../shared/data/real at 90 % of its size with the extractive
// summarizer and prints one row per session: tokens, threshold, tokens after, error, shortened
// messages, whether restore is exact, and the manifest's modified files named in the summary.
// Usage: npm run real-sessions
import { mkdtempSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const require = createRequire(import.meta.url)
const { compactMessages, countTokens, restoreMessages } = require('../../index.js')

const REAL = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..', '..', 'shared', 'data', 'real')
const manifest = JSON.parse(readFileSync(join(REAL, 'manifest.json'), 'utf8'))
console.log('| session | tokens | threshold | after | error | offloaded | restore exact | modified files in summary |')
console.log('|---|---:|---:|---:|---|---:|---|---:|')
for (const entry of manifest) {
  const messages = JSON.parse(readFileSync(join(REAL, entry.file), 'utf8'))
  const total = countTokens(messages)
  const outputDir = mkdtempSync(join(tmpdir(), 'cc-real-'))
  const result = await compactMessages(messages, { contextTokenLimit: Math.floor(total * 0.9), provider: 'extractive', outputDir, sessionId: 'real' })
  const restored = await restoreMessages(result.messages, { outputDir, sessionId: 'real' })
  const named = entry.files_modified.filter((file) => (result.summary ?? '').includes(file)).length
  const row = [
    entry.file.replace(/\.json$/, ''),
    total.toLocaleString('en-US'),
    result.threshold.toLocaleString('en-US'),
    countTokens(result.messages).toLocaleString('en-US'),
    result.error?.code ?? '—',
    result.offloaded.length,
    JSON.stringify(restored) === JSON.stringify(messages) ? 'yes' : 'NO',
    `${named}/${entry.files_modified.length}`,
  ]
  console.log(`| ${row.join(' | ')} |`)
}
