// How sure a comparison is: for each metric, the ratio of a format to the baseline over paired
// trials, a 95% confidence interval, and a call (better, worse, no difference) that is made only
// when the interval says so.
//
// Method: trials run in pairs (trial i of each format back to back, in alternating order), so a
// pair shares the machine's state at that moment. Each pair gives a log ratio; their mean and a
// Student's t interval on it (df = pairs - 1), exponentiated, give the geometric-mean ratio and
// its interval. A metric that does not vary between trials (bytes) gets a zero-width interval.
// No Node.js imports: the browser client makes the same calls (jstat comes from its import map).
import jstatModule from 'jstat'

const { jStat } = jstatModule

/** The confidence level of every interval. */
export const CONFIDENCE = 0.95

/**
 * Ratios within this margin of 1 are called `no difference` even when the interval excludes 1:
 * a 1% change is below what a team would act on, and below what these machines reproduce.
 */
export const EQUIVALENCE_MARGIN = 0.01

/**
 * The metrics a comparison calls, with the direction that is better for the user.
 * @type {Readonly<Record<string, {label: string, better: 'lower'|'higher', unit?: string}>>}
 */
export const METRICS = Object.freeze({
  p50: { label: 'p50', better: 'lower' },
  p99: { label: 'p99', better: 'lower' },
  rate: { label: 'msgs/s', better: 'higher' },
  bytes: { label: 'wire bytes', better: 'lower' },
  clientCpu: { label: 'client CPU', better: 'lower', unit: '/msg' },
  serverCpu: { label: 'server CPU', better: 'lower', unit: '/msg' }
})

/**
 * @typedef {object} Estimate a ratio of a format to the baseline, with its interval and call
 * @property {number} ratio geometric mean of the paired trial ratios
 * @property {[number, number]|null} ci the 95% interval; null with a single pair (no spread to measure)
 * @property {'better'|'worse'|'no difference'} call for the user: lower latency, bytes and CPU, higher msgs/s
 * @property {number} pairs how many trial pairs had the metric on both sides
 */

/**
 * The ratio candidate / baseline over paired trials, with a t interval on the log ratios.
 * Pairs where either side is missing, zero or not finite are left out.
 * @param {Array<number|null|undefined>} baseline one value per trial
 * @param {Array<number|null|undefined>} candidate one value per trial, same order
 * @returns {{ratio: number, ci: [number, number]|null, pairs: number}|null} null when no pair is usable
 */
export function pairedRatio (baseline, candidate) {
  const logs = []
  for (let i = 0; i < Math.min(baseline.length, candidate.length); i++) {
    const a = baseline[i]
    const b = candidate[i]
    if (a > 0 && b > 0 && Number.isFinite(a) && Number.isFinite(b)) logs.push(Math.log(b / a))
  }
  if (logs.length === 0) return null
  const mean = logs.reduce((sum, value) => sum + value, 0) / logs.length
  if (logs.length === 1) return { ratio: Math.exp(mean), ci: null, pairs: 1 }
  const variance = logs.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (logs.length - 1)
  const halfWidth = jStat.studentt.inv(1 - (1 - CONFIDENCE) / 2, logs.length - 1) * Math.sqrt(variance / logs.length)
  return { ratio: Math.exp(mean), ci: [Math.exp(mean - halfWidth), Math.exp(mean + halfWidth)], pairs: logs.length }
}

/**
 * The call for one metric: better or worse only when the interval excludes 1 and the ratio is
 * outside the equivalence margin; a single pair has no interval, so it is never called.
 * @param {'lower'|'higher'} better which direction is better for the user
 * @param {{ratio: number, ci: [number, number]|null}} estimate
 * @returns {'better'|'worse'|'no difference'}
 */
export function callOf (better, { ratio, ci }) {
  if (!ci) return 'no difference'
  const excludesOne = ci[0] > 1 || ci[1] < 1
  const beyondMargin = Math.abs(Math.log(ratio)) > Math.log(1 + EQUIVALENCE_MARGIN)
  if (!excludesOne || !beyondMargin) return 'no difference'
  const lower = ratio < 1
  return lower === (better === 'lower') ? 'better' : 'worse'
}

/**
 * Every metric's estimate and call for one format against the baseline.
 * @param {Array<Record<string, number|null>>} baselineTrials per trial, values by metric name
 * @param {Array<Record<string, number|null>>} candidateTrials per trial, same order
 * @returns {Record<string, Estimate>} by metric name; a metric with no usable pair is absent
 */
export function verdictsOf (baselineTrials, candidateTrials) {
  const verdicts = {}
  for (const [name, { better }] of Object.entries(METRICS)) {
    const valuesOf = (trials) => trials.map((trial) => trial[name])
    const estimate = pairedRatio(valuesOf(baselineTrials), valuesOf(candidateTrials))
    if (estimate) verdicts[name] = { ...estimate, call: callOf(better, estimate) }
  }
  return verdicts
}

/**
 * One call for a format over all its metrics: better or worse when every metric that could be
 * told apart points that way, mixed when they disagree, no difference when none could.
 * @param {Record<string, Estimate>} verdicts
 * @returns {'better'|'worse'|'mixed'|'no difference'}
 */
export function overallCall (verdicts) {
  const calls = new Set(Object.values(verdicts).map((estimate) => estimate.call).filter((call) => call !== 'no difference'))
  if (calls.size === 0) return 'no difference'
  return calls.size === 1 ? [...calls][0] : 'mixed'
}

/**
 * The order of the formats in one trial: rotated by one each trial (A B, B A, A B, ...), so each
 * format runs first as often as the others and drift and warm-up fall on every format alike.
 * @param {number} count formats
 * @param {number} trial 0-based
 * @returns {number[]} format indexes
 */
export function trialOrder (count, trial) {
  return Array.from({ length: count }, (_, i) => (i + trial) % count)
}
