import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

// Every temporary directory of a run (tests, the CLI and servers they start) under one root,
// removed when the run ends: a run makes thousands, one or more per compaction, which would
// otherwise stay behind in the system's temporary folder. The workers and the processes they
// spawn inherit TMPDIR, which os.tmpdir() reads.
export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'context-compact-tests-'))
  const previous = process.env.TMPDIR
  process.env.TMPDIR = root
  return () => {
    if (previous === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = previous
    rmSync(root, { recursive: true, force: true })
  }
}
