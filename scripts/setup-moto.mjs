// `npm test` runs this first (the `pretest` script): the object-store tests start moto's
// S3-compatible server on 127.0.0.1 (crates/core/tests/object_store.rs,
// __test__/archive/object-store.test.ts), so the one test command sets it up too: moto's standalone
// server from PyPI, pinned to a release that answers a PutObject with `If-None-Match: *` on an
// existing key with 412, in a virtualenv under the repository (gitignored).
//
// Without Python (or without the network) the object-store tests skip with a message saying
// how to install it; with CONTEXT_COMPACT_REQUIRE_MOTO=1 (CI) this fails instead.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const MOTO = 'moto[server]==5.2.5'
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const venv = join(root, '.venv-moto')
const server = join(venv, 'bin', 'moto_server')
const required = process.env.CONTEXT_COMPACT_REQUIRE_MOTO === '1'

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] })
  return result.status === 0
}

if (process.env.CONTEXT_COMPACT_MOTO_SERVER || existsSync(server)) process.exit(0)
console.log(`setting up the object-store tests' S3 server: ${MOTO} in .venv-moto/`)
const ok =
  run('python3', ['-m', 'venv', venv]) &&
  run(join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', MOTO])
if (!ok) {
  const message = `could not install ${MOTO} into .venv-moto/ (python3 -m venv, pip): the object-store tests will skip`
  if (required) {
    console.error(`${message}; CONTEXT_COMPACT_REQUIRE_MOTO=1 requires them`)
    process.exit(1)
  }
  console.warn(message)
}
