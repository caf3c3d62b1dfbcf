'use strict'

// The native addon, loaded once for every module of the JS layer: `require('./native.js')` is
// the binding's exports, or throws ERR_CONTEXT_COMPACT_NO_BINARY (so `require('context-compact')`
// fails with the same clear message wherever the addon is first needed).
//
// Where it is looked for, in order: NAPI_RS_NATIVE_LIBRARY_PATH (napi-rs's override, for a
// binary built elsewhere); the `.node` built beside the package (a clone after `npm install`);
// the platform package `context-compact-<platform>`, an optional dependency of the published
// package. This is napi-rs's loader reduced to the platforms napi-rs names, without its
// WebAssembly fallback (the addon is not built for WASI). When none loads, say which platform
// this is, which ones have prebuilt binaries, and how to build from source.
const { readFileSync } = require('node:fs')
const { join } = require('node:path')

function loadBinding() {
  const tried = []
  const override = process.env.NAPI_RS_NATIVE_LIBRARY_PATH
  const candidates = override ? [override] : platformNames().flatMap((name) => [join(__dirname, '..', '..', `context-compact.${name}.node`), `context-compact-${name}`])
  for (const candidate of candidates) {
    try {
      const binding = require(candidate)
      if (candidate.startsWith('context-compact-')) checkVersion(candidate)
      return binding
    } catch (error) {
      tried.push(error)
    }
  }
  const cause = new Error(`Cannot find native binding (tried ${candidates.join(', ')}): ${tried.map((e) => (e && e.message ? e.message.split('\n')[0] : String(e))).join('; ')}`)
  cause.cause = tried
  throw noBindingError(cause)
}

/** The platform names napi-rs gives this machine's binaries, most specific first. */
function platformNames() {
  const { platform, arch } = process
  if (platform === 'darwin') return ['darwin-universal', `darwin-${arch}`]
  if (platform === 'win32') return [`win32-${arch}-msvc`, `win32-${arch}-gnu`]
  if (platform === 'linux' || platform === 'openharmony') {
    const musl = libcOf() === 'musl'
    if (arch === 'arm') return [musl ? 'linux-arm-musleabihf' : 'linux-arm-gnueabihf']
    return [`linux-${arch}-${musl ? 'musl' : 'gnu'}`]
  }
  return [`${platform}-${arch}`]
}

/** A platform package of another version loads, but napi-rs's check can make it an error. */
function checkVersion(name) {
  const enforce = process.env.NAPI_RS_ENFORCE_VERSION_CHECK
  if (!enforce || enforce === '0') return
  const expected = require('../../package.json').version
  const found = require(`${name}/package.json`).version
  if (found !== expected) throw new Error(`Native binding package version mismatch, expected ${expected} but got ${found}. You can reinstall dependencies to fix this issue.`)
}

function libcOf() {
  if (process.platform !== 'linux') return null
  try {
    // napi-rs looks at ldd first: it names musl on Alpine, where the report may not.
    const ldd = readFileSync('/usr/bin/ldd', 'utf8')
    if (ldd.includes('musl')) return 'musl'
  } catch {
    // no ldd: ask the process report
  }
  try {
    if (process.report && typeof process.report.getReport === 'function') {
      process.report.excludeNetwork = true
      const header = process.report.getReport().header
      return header && header.glibcVersionRuntime ? 'glibc' : 'musl'
    }
  } catch {
    // unknown
  }
  return null
}

function noBindingError(cause) {
  const libc = libcOf()
  const platform = [process.platform, process.arch, libc].filter(Boolean).join(' ')
  const abi = process.platform === 'linux' ? (libc === 'musl' ? '-musl' : '-gnu') : process.platform === 'win32' ? '-msvc' : ''
  const expected = `context-compact-${process.platform}-${process.arch}${abi}`
  let supported = []
  try {
    supported = Object.keys(require('../../package.json').optionalDependencies || {})
  } catch {
    // a copy without its package.json: list nothing rather than fail here
  }
  const isSupported = supported.includes(expected)
  const error = new Error(
    [
      `context-compact: no native binary could be loaded for this platform (${platform}).`,
      isSupported
        ? `Its prebuilt binary comes in the optional dependency ${expected}, which is missing or failed to load: reinstall without --omit=optional / --no-optional (npm has a bug with optional dependencies and lockfiles made on another platform, https://github.com/npm/cli/issues/4828: remove node_modules and package-lock.json and run npm install again).`
        : `There is no prebuilt binary for this platform (the package would be ${expected}).`,
      `Prebuilt binaries: ${supported.length > 0 ? supported.map((name) => name.replace(/^context-compact-/, '')).join(', ') : 'see the README'}.`,
      'To build from source (Node.js >= 18, npm and a Rust toolchain from https://rustup.rs): clone the repository, run `npm install` in it (it builds the addon), then depend on that directory.',
      `Cause: ${cause && cause.message ? cause.message.split('\n')[0] : String(cause)}`,
    ].join('\n'),
  )
  error.code = 'ERR_CONTEXT_COMPACT_NO_BINARY'
  error.cause = cause
  return error
}

module.exports = loadBinding()
