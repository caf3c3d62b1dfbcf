// Every relative link of the README and of the guides in docs/ resolves: the file or directory
// exists in the repository, and an anchor (`#…`) names a heading of the Markdown file it points
// to, as GitHub renders it. Links to other sites are not fetched (the tests run offline); they
// must at least be https. Every guide is reachable from the README.
//
// The same links work from the published package (the README on the registry page and in
// node_modules): every Markdown file of the package (`npm pack --dry-run`) links only to files the
// package holds, and package.json names the repository the registry resolves the README's relative
// links against.

import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'

import { describe, expect, it } from 'vitest'

import { ROOT, anchors, docFiles, links, readDoc, slug } from '../support/markdown'

function check(markdown: string, file: string): string[] {
  const problems: string[] = []
  for (const link of links(markdown, file)) {
    const { target, where } = link
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
      if (!/^https:\/\//.test(target) && !/^mailto:/.test(target)) problems.push(`${where}: ${target} is not https`)
      continue
    }
    const hash = target.indexOf('#')
    const path = hash === -1 ? target : target.slice(0, hash)
    const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1))
    const resolved = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)))
    if (relative(ROOT, join(ROOT, resolved)).startsWith('..')) {
      problems.push(`${where}: ${target} leaves the repository`)
      continue
    }
    if (!existsSync(join(ROOT, resolved))) {
      problems.push(`${where}: ${target}: ${resolved} does not exist`)
      continue
    }
    if (anchor !== null) {
      if (!resolved.endsWith('.md')) {
        problems.push(`${where}: ${target}: an anchor into a file that is not Markdown`)
        continue
      }
      const known = anchors(resolved === file ? markdown : readDoc(resolved))
      if (!known.has(anchor)) problems.push(`${where}: ${target}: no heading of ${resolved} has the anchor #${anchor}`)
    }
  }
  return problems
}

describe('links of the README and docs/', () => {
  it('the anchors are GitHub’s', () => {
    expect(slug('Measured: `npm run bench:economics`')).toBe('measured-npm-run-bencheconomics')
    expect(slug("The user's words, verbatim")).toBe('the-users-words-verbatim')
    expect(slug('Never waiting at the threshold: `background`')).toBe('never-waiting-at-the-threshold-background')
    expect(slug('Chat apps and serverless: checkpoints')).toBe('chat-apps-and-serverless-checkpoints')
    expect([...anchors('# A\n## B\n```\n# not a heading\n```\n## B\n')]).toEqual(['a', 'b', 'b-1'])
  })

  it('the checker finds a missing file, a missing anchor, a link that is not https, and nothing in code', () => {
    const markdown = [
      '# Title',
      '[a](docs/no-such-guide.md) [b](#no-such-heading) [c](http://example.com) `[d](not-a-link.md)`',
      '[e](#title) [f](docs/cli.md#the-commands) [g](docs/cli.md#no-such-heading) [h](LICENSE#x) [i](../outside.md)',
      '```sh',
      '[j](in-a-code-block.md)',
      '```',
      '<!-- [k](in-a-comment.md) -->',
    ].join('\n')
    expect(check(markdown, 'README.md')).toEqual([
      'README.md:2: docs/no-such-guide.md: docs/no-such-guide.md does not exist',
      'README.md:2: #no-such-heading: no heading of README.md has the anchor #no-such-heading',
      'README.md:2: http://example.com is not https',
      'README.md:3: docs/cli.md#no-such-heading: no heading of docs/cli.md has the anchor #no-such-heading',
      'README.md:3: LICENSE#x: an anchor into a file that is not Markdown',
      'README.md:3: ../outside.md leaves the repository',
    ])
  })

  for (const file of docFiles()) {
    it(`${file}: every relative link and anchor resolves`, () => {
      expect(check(readDoc(file), file)).toEqual([])
    })
  }

  it('every guide in docs/ is linked from the README', () => {
    const linked = new Set(
      links(readDoc('README.md'), 'README.md')
        .map((l) => l.target.split('#')[0])
        .filter((t) => t.startsWith('docs/')),
    )
    const guides = docFiles().filter((f) => f !== 'README.md')
    expect(guides.filter((g) => !linked.has(g))).toEqual([])
  })
})

/**
 * The relative links of a Markdown file of the package that point outside it: to a file the
 * package does not hold (nor a directory holding one of its files). `shipped` are the package's
 * paths, relative to its root.
 */
export function deadInPackage(markdown: string, file: string, shipped: ReadonlySet<string>): string[] {
  const problems: string[] = []
  for (const { target, where } of links(markdown, file)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue
    const path = decodeURIComponent(target.split('#')[0])
    const resolved = normalize(join(dirname(file), path)).replace(/\\/g, '/').replace(/\/$/, '')
    const isDir = [...shipped].some((f) => f.startsWith(`${resolved}/`))
    if (!shipped.has(resolved) && !isDir) problems.push(`${where}: ${target}: ${resolved} is not in the package`)
  }
  return problems
}

/** The files `npm pack` would publish, relative to the package root. */
function packedFiles(): string[] {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)))
  const pack = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', env, maxBuffer: 16 * 1024 * 1024 })
  if (pack.status !== 0) throw new Error(`npm pack --dry-run → ${pack.status}\n${pack.stderr}`)
  const [info] = JSON.parse(pack.stdout) as Array<{ files: Array<{ path: string }> }>
  return info.files.map((f) => f.path)
}

describe('links of the published package', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  const files = packedFiles()
  const shipped = new Set(files)

  it('the checker finds a link to a file the package does not hold', () => {
    const inPackage = new Set(['README.md', 'docs/cli.md', 'examples/a.ts'])
    const markdown = '[a](docs/cli.md#the-commands) [b](docs/api/index.html) [c](examples) [d](src/lib.rs) [e](https://x.dev) [f](#top)'
    expect(deadInPackage(markdown, 'README.md', inPackage)).toEqual([
      'README.md:1: docs/api/index.html: docs/api/index.html is not in the package',
      'README.md:1: src/lib.rs: src/lib.rs is not in the package',
    ])
    expect(deadInPackage('[g](../examples/a.ts) [h](../ARCHITECTURE.md)', 'docs/cli.md', inPackage)).toEqual([
      'docs/cli.md:1: ../ARCHITECTURE.md: ARCHITECTURE.md is not in the package',
    ])
  })

  it('ships the README and every guide of docs/, not the generated API reference', () => {
    expect(docFiles().filter((f) => !shipped.has(f))).toEqual([])
    expect(files.filter((f) => f.startsWith('docs/api/'))).toEqual([])
  })

  it('every relative link of a Markdown file of the package leads to a file of the package', () => {
    const markdownFiles = files.filter((f) => f.endsWith('.md'))
    expect(markdownFiles).toContain('README.md')
    expect(markdownFiles.flatMap((f) => deadInPackage(readDoc(f), f, shipped))).toEqual([])
  })

  it('package.json names the repository, its home page and where to report a bug, all on GitHub', () => {
    const repo = /^git\+https:\/\/github\.com\/([\w.-]+\/[\w.-]+)\.git$/.exec(pkg.repository?.url ?? '')?.[1]
    expect(pkg.repository?.type).toBe('git')
    expect(repo, 'repository.url: git+https://github.com/<owner>/<name>.git').toBeDefined()
    expect(pkg.homepage).toBe(`https://github.com/${repo}#readme`)
    expect(pkg.bugs?.url).toBe(`https://github.com/${repo}/issues`)
  })
})
