// Reading the README and the guides in docs/ as the documentation tests need them: their fenced
// code blocks (with the HTML comment right above each, which carries `declare:` or `not run:`),
// their links outside code, the anchors GitHub gives their headings, and their TypeScript blocks
// as modules to compile (docs-code.test.ts, module-resolution.test.ts).

import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export const ROOT = join(__dirname, '..', '..')

/** README.md and every docs/*.md (not docs/api/, which TypeDoc generates), relative to the root. */
export function docFiles(): string[] {
  const guides = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
  return ['README.md', ...guides.map((f) => `docs/${f}`)]
}

export function readDoc(file: string): string {
  return readFileSync(join(ROOT, file), 'utf8')
}

export interface Fence {
  /** `docs/cli.md:42`, the line of the opening fence. */
  where: string
  file: string
  /** 1-based line of the opening fence. */
  line: number
  /** The info string: `ts`, `sh`, `text`, … (`''` when there is none). */
  lang: string
  /** The block's text, its fence's indentation removed. */
  code: string
  /** The HTML comment right above the fence (blank lines allowed in between), or `''`. */
  comment: string
}

/**
 * Every fenced block of a Markdown text, including fences indented inside list items. An opening
 * fence is three backticks and an optional info string; the block ends at the next fence line.
 */
export function fences(markdown: string, file: string): Fence[] {
  const lines = markdown.split('\n')
  const found: Fence[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```\s*([^\s`]*)\s*$/.exec(lines[i])
    if (!open) continue
    const indent = open[1].length
    let end = i + 1
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end])) end++
    const code = lines
      .slice(i + 1, end)
      .map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length)))
      .join('\n')
    let j = i - 1
    while (j >= 0 && lines[j].trim() === '') j--
    let comment = ''
    if (j >= 0 && /-->\s*$/.test(lines[j])) {
      let start = j
      while (start >= 0 && !lines[start].includes('<!--')) start--
      comment = lines.slice(Math.max(start, 0), j + 1).join('\n')
    }
    found.push({ where: `${file}:${i + 1}`, file, line: i + 1, lang: open[2], code, comment })
    i = end
  }
  return found
}

/** The text with fenced blocks, inline code and HTML comments blanked (line numbers kept). */
export function proseOnly(markdown: string): string {
  const lines = markdown.split('\n')
  let inFence = false
  const kept = lines.map((line) => {
    if (/^\s*```/.test(line)) {
      inFence = !inFence
      return ''
    }
    return inFence ? '' : line
  })
  return kept
    .join('\n')
    .replace(/<!--[\s\S]*?-->/g, (c) => c.replace(/[^\n]/g, ' '))
    .replace(/`[^`\n]*`/g, (c) => ' '.repeat(c.length))
}

export interface Link {
  where: string
  text: string
  target: string
}

/** The Markdown links and images of a text outside code and comments: `[text](target)`. */
export function links(markdown: string, file: string): Link[] {
  const prose = proseOnly(markdown)
  const found: Link[] = []
  const re = /!?\[([^\]\n]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g
  for (let m = re.exec(prose); m; m = re.exec(prose)) {
    const line = prose.slice(0, m.index).split('\n').length
    found.push({ where: `${file}:${line}`, text: m[1], target: m[2] })
  }
  return found
}

/**
 * The anchor GitHub gives a heading: its text as rendered (code spans, links and emphasis reduced
 * to their text), lower-cased, every character that is not a letter, a mark, a digit, a connector,
 * a hyphen or a space removed, spaces turned into hyphens (github-slugger's rule).
 */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/(\*\*|\*)(.+?)\1/g, '$2')
    .trim()
    .toLowerCase()
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-')
}

/** The anchors of every heading of a Markdown text (outside code), duplicates numbered `-1`, `-2`. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  let inFence = false
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) inFence = !inFence
    if (inFence) continue
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (!heading) continue
    const base = slug(heading[1])
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    result.add(n === 0 ? base : `${base}-${n}`)
  }
  return result
}

/** A ```ts / ```typescript block, as the type tests compile it. */
export interface CodeBlock {
  /** Where the block starts, `README.md:57`. */
  where: string
  /** Ambient declarations from the comment before the block. */
  declarations: string
  code: string
}

/** The ```ts / ```typescript blocks of a Markdown text, each with its declarations. */
export function codeBlocks(markdown: string, file: string): CodeBlock[] {
  const blocks: CodeBlock[] = []
  const lines = markdown.split('\n')
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i])) continue
    let end = i + 1
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++
    let j = i - 1
    while (j >= 0 && lines[j].trim() === '') j--
    let declarations = ''
    if (j >= 0 && /-->\s*$/.test(lines[j])) {
      let start = j
      while (start >= 0 && !lines[start].includes('<!--')) start--
      const comment = lines.slice(start, j + 1).join('\n')
      const match = /<!--\s*declare:([\s\S]*?)-->/.exec(comment)
      if (match) declarations = match[1].trim()
    }
    blocks.push({ where: `${file}:${i + 1}`, declarations, code: lines.slice(i + 1, end).join('\n') })
    i = end
  }
  return blocks
}

/** A block split as a module needs it: its imports (which must come first), and the rest. */
export function moduleParts(block: CodeBlock): { imports: string; body: string } {
  const lines = block.code.split('\n')
  // Imports may span lines (`import {\n a,\n b,\n} from 'x'`): they end at the line with `from '…'`.
  let end = 0
  let inImport = false
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    if (!inImport && /^import\b/.test(line)) inImport = true
    if (inImport) {
      if (/\bfrom\s+['"][^'"]+['"]\s*;?\s*$/.test(line) || /^import\s+['"]/.test(line)) {
        inImport = false
        end = i + 1
      }
      continue
    }
    if (line.trim() === '' || line.trim().startsWith('//')) continue
    break
  }
  return { imports: lines.slice(0, end).join('\n'), body: lines.slice(end).join('\n') }
}

/** A block as a module: its imports first, then the declarations, then the rest. */
export function asModule(block: CodeBlock): string {
  const { imports, body } = moduleParts(block)
  return `// ${block.where}\n${imports}\n${block.declarations}\n${body}\nexport {}\n`
}
