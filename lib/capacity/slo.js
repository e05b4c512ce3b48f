// A latency objective as capacity takes it: `p99<10ms`, several comma-separated, each one
// percentile of the latency from the due time below a bound.
import { UsageError } from '../errors.js'

/** capacity's objective when none is given. */
export const DEFAULT_SLO = 'p99<10ms'

const UNITS = { us: 1, µs: 1, ms: 1000, s: 1e6 }

/**
 * @typedef {object} Slo
 * @property {string} text as the user wrote it, normalised: `p99<10ms`
 * @property {number} percentile 0 < p < 100 (p50, p99, p99.9)
 * @property {number} boundUs the latency it must stay below, µs
 */

/**
 * Parses `--slo`: one or more objectives, comma-separated.
 * @param {string} text e.g. `p99<10ms` or `p99<5ms,p99<25ms,p50<1ms`
 * @returns {Slo[]} in the order given, duplicates refused
 * @throws {UsageError} naming the part it could not read
 */
export function parseSlo (text) {
  const parts = String(text).split(',').map((part) => part.trim())
  const slos = parts.map((part) => {
    const match = /^p(\d+(?:\.\d+)?)\s*<\s*(\d+(?:\.\d+)?)\s*(us|µs|ms|s)$/.exec(part)
    const percentile = Number(match?.[1])
    const boundUs = Number(match?.[2]) * UNITS[match?.[3]]
    if (!match || !(percentile > 0 && percentile < 100) || !(boundUs > 0)) {
      throw new UsageError(`--slo takes objectives like p99<10ms (a percentile above 0 and below 100, a bound in us, ms or s), comma-separated; got '${part}'`)
    }
    return { text: `p${match[1]}<${match[2]}${match[3] === 'µs' ? 'us' : match[3]}`, percentile, boundUs }
  })
  const texts = slos.map((slo) => slo.text)
  const twice = texts.find((slo, i) => texts.indexOf(slo) !== i)
  if (twice) throw new UsageError(`--slo names ${twice} twice`)
  return slos
}
