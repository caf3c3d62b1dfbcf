// What the benchmarks share to measure: rounds from the environment, a garbage collection before
// a measurement, medians and quantiles, wall and CPU time.
import v8 from 'node:v8'
import vm from 'node:vm'

v8.setFlagsFromString('--expose-gc')
/** A full garbage collection, so that no collection owed by earlier work lands in a measurement. */
export const gc = vm.runInNewContext('gc')

/** The positive integer in the environment variable `name`, else `fallback`. */
export const env = (name, fallback) => {
  const value = Number(process.env[name])
  return Number.isFinite(value) && value > 0 ? Math.floor(value) : fallback
}

/** The median (the mean of the middle two for an even count; NaN for none). */
export const median = (xs) => {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/** The value below which a fraction `q` of `xs` lies (0.9: the 90th percentile). */
export const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]

/** Milliseconds with the digits that mean something. */
export const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3))

/**
 * The process's CPU time (user + system), in ms. Over a span, it leaves out the time the process
 * waited for a core: on a machine shared with other work it is the steadier of the two.
 */
export const cpuNow = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

/** `[wall ms, value, CPU ms]` of `fn()`. */
export function time(fn) {
  const c0 = cpuNow()
  const t0 = performance.now()
  const value = fn()
  return [performance.now() - t0, value, cpuNow() - c0]
}

/** `[wall ms, value, CPU ms]` of `await fn()`. */
export async function timeAsync(fn) {
  const c0 = cpuNow()
  const t0 = performance.now()
  const value = await fn()
  return [performance.now() - t0, value, cpuNow() - c0]
}
