// Every relative link of the README and of the guides in docs/ resolves: the file or directory
// exists in the repository, and an anchor (`#…`) names a heading of the Markdown file it points
// to, as GitHub renders it. Links to other sites are not fetched (the tests run offline); they
// must at least be https. Every guide is reachable from the README.

import { existsSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'

import { describe, expect, it } from 'vitest'

import { ROOT, anchors, docFiles, links, readDoc, slug } from './markdown'

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
