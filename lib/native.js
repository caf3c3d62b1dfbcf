'use strict'

// The native addon, loaded once for every module of the JS layer: `require('./native.js')` is
// the binding's exports, or throws ERR_CONTEXT_COMPACT_NO_BINARY (so `require('context-compact')`
// fails with the same clear message wherever the addon is first needed).

// The addon is loaded by the generated loader (binding.js): the `.node` built beside it
// (a clone after `npm install`), else the platform package (`context-compact-<platform>`, an
// optional dependency of the published package). When neither loads, say which platform this is,
// which ones have prebuilt binaries, and how to build from source.
function loadBinding() {
  try {
    return require('../binding.js')
  } catch (error) {
    throw noBindingError(error)
  }
}

function libcOf() {
  if (process.platform !== 'linux') return null
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
    supported = Object.keys(require('../package.json').optionalDependencies || {})
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
