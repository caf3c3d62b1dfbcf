// `npm test` runs this first (the `pretest` script, after setup-moto.mjs): the session report's
// tests (__test__/observability/report.test.ts) load the page in a real browser, headless Chromium driven by
// playwright-core (a devDependency, which downloads no browser of its own). The browser is the
// distribution's package: on Debian or Ubuntu, as root, `apt-get install chromium` when
// /usr/bin/chromium is missing (or CONTEXT_COMPACT_CHROMIUM names another executable).
//
// Without it (not root, not Debian, no network) the browser tests skip with a message saying
// how to install it; with CONTEXT_COMPACT_REQUIRE_CHROMIUM=1 (CI) this fails instead.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'

const chromium = process.env.CONTEXT_COMPACT_CHROMIUM || '/usr/bin/chromium'
const required = process.env.CONTEXT_COMPACT_REQUIRE_CHROMIUM === '1'

function run(command, args) {
  const result = spawnSync(command, args, {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  })
  return result.status === 0
}

function give(message) {
  if (required) {
    console.error(`${message}; CONTEXT_COMPACT_REQUIRE_CHROMIUM=1 requires the browser tests`)
    process.exit(1)
  }
  console.warn(`${message}: the browser tests of the session report will skip`)
  process.exit(0)
}

if (existsSync(chromium)) process.exit(0)
if (process.platform !== 'linux' || !existsSync('/usr/bin/apt-get')) {
  give(`no ${chromium}, and no apt-get to install it (install Chromium, or set CONTEXT_COMPACT_CHROMIUM to its executable)`)
}
if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
  give(`no ${chromium} (as root: apt-get install chromium)`)
}
console.log('setting up the session report browser tests: apt-get install chromium')
const ok = run('apt-get', ['update']) && run('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'])
if (!ok || !existsSync(chromium)) give(`could not install chromium with apt-get`)
