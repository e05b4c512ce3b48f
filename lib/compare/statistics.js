// How sure a comparison is: for each metric, the ratio of a format to the baseline over paired
// trials, an interval, and one of four calls: better, worse, equivalent or inconclusive.
//
// Method: trials run in pairs (one trial of each format back to back, the order balanced in
// A B, B A blocks), so a pair shares the machine's state at that moment. Each pair gives a log
// ratio; their mean and a Student's t interval on it (df = pairs - 1), exponentiated, give the
// geometric-mean ratio and its interval. A metric that does not vary (bytes) gets a zero-width one.
//
// A call is a claim about the whole table, made at any of several looks at the data: the error
// rate ALPHA is split over the looks by an alpha-spending function (Lan-DeMets, O'Brien-Fleming type) and
// within a look over every cell of the table (Bonferroni), so every printed interval is a
// simultaneous one and the chance of any false call in the table, over all looks, is at most ALPHA.
// No Node.js imports: the browser client makes the same calls (jstat comes from its import map).
import jstatModule from 'jstat'

const { jStat } = jstatModule

/** The chance of at least one false call anywhere in a comparison's table, over all its looks. */
export const ALPHA = 0.05

/** Ratios whose whole interval lies within this fraction of 1 are equivalent, unless --equivalence says otherwise. */
export const DEFAULT_EQUIVALENCE = 0.05

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
 * @property {[number, number]|null} ci the simultaneous interval; null with a single pair (no spread to measure)
 * @property {number|null} resolution the interval's half-width as a fraction (0.12: ±12%): differences
 *   smaller than this could not be told from none by this run; null without an interval
 * @property {'better'|'worse'|'equivalent'|'inconclusive'} call for the user: lower latency, bytes and CPU, higher msgs/s
 * @property {number} pairs how many trial pairs the estimate rests on (those of the look that made the call)
 * @property {number} look which look made the call, from 1
 */

/**
 * The ratio candidate / baseline over paired trials, with a t interval on the log ratios at the
 * two-sided error rate `alpha`. Pairs where either side is missing, zero or not finite are left out.
 * @param {Array<number|null|undefined>} baseline one value per trial
 * @param {Array<number|null|undefined>} candidate one value per trial, same order
 * @param {number} [alpha] the interval misses the true ratio with at most this chance
 * @returns {{ratio: number, ci: [number, number]|null, resolution: number|null, pairs: number}|null} null when no pair is usable
 */
export function pairedRatio (baseline, candidate, alpha = ALPHA) {
  const logs = []
  for (let i = 0; i < Math.min(baseline.length, candidate.length); i++) {
    const a = baseline[i]
    const b = candidate[i]
    if (a > 0 && b > 0 && Number.isFinite(a) && Number.isFinite(b)) logs.push(Math.log(b / a))
  }
  if (logs.length === 0) return null
  const mean = logs.reduce((sum, value) => sum + value, 0) / logs.length
  if (logs.length === 1) return { ratio: Math.exp(mean), ci: null, resolution: null, pairs: 1 }
  const deviations = logs.map((value) => value - mean)
  const variance = deviations.reduce((sum, value) => sum + value ** 2, 0) / (logs.length - 1)
  // Neighbouring pairs share the machine's state: a positive lag-1 correlation between their
  // ratios widens the interval by the factor it adds to the variance of the mean (never narrows it).
  const lagged = deviations.slice(1).reduce((sum, value, i) => sum + value * deviations[i], 0) / (logs.length - 1)
  const inflation = variance > 0 ? 1 + 2 * Math.max(0, lagged / variance) : 1
  // Rounding leaves a constant metric a variance of ~1e-33, not 0: treat it as no spread at all.
  const spread = variance < 1e-20 ? 0 : Math.sqrt(inflation * variance / logs.length)
  const halfWidth = spread && jStat.studentt.inv(1 - alpha / 2, logs.length - 1) * spread
  return {
    ratio: Math.exp(mean),
    ci: [Math.exp(mean - halfWidth), Math.exp(mean + halfWidth)],
    resolution: Math.exp(halfWidth) - 1,
    pairs: logs.length
  }
}

/**
 * The call for one metric from its interval: equivalent when the whole interval lies within
 * ±margin of 1 (a difference too small to act on, even if real), better or worse when it excludes
 * 1, inconclusive otherwise (and always without an interval).
 * @param {'lower'|'higher'} better which direction is better for the user
 * @param {{ratio: number, ci: [number, number]|null}} estimate
 * @param {number} [margin] the equivalence margin, a fraction of 1
 * @returns {'better'|'worse'|'equivalent'|'inconclusive'}
 */
export function callOf (better, { ratio, ci }, margin = DEFAULT_EQUIVALENCE) {
  if (!ci) return 'inconclusive'
  if (ci[0] >= 1 / (1 + margin) && ci[1] <= 1 + margin) return 'equivalent'
  if (ci[0] <= 1 && ci[1] >= 1) return 'inconclusive'
  return (ratio < 1) === (better === 'lower') ? 'better' : 'worse'
}

/**
 * The error rate spent by the time a fraction of the planned pairs has been seen: Lan and
 * DeMets' O'Brien-Fleming-type function, 2 - 2Φ(z(1 - alpha/2) / √t). It spends almost nothing
 * at early looks, which stop only differences too large to doubt, and keeps nearly all of alpha
 * for the last, so a run that looks often loses almost no power against one that looks once.
 * @param {number} fraction of the planned pairs, 0 to 1
 * @param {number} [alpha]
 * @returns {number}
 */
export function spentAlpha (fraction, alpha = ALPHA) {
  if (fraction <= 0) return 0
  if (fraction >= 1) return alpha
  return 2 - 2 * jStat.normal.cdf(jStat.normal.inv(1 - alpha / 2, 0, 1) / Math.sqrt(fraction), 0, 1)
}

/**
 * @typedef {object} Design how a comparison's calls are made, recorded in its results
 * @property {number} family cells in the table (rows × formats after the first × metrics): the error is split over them
 * @property {number} plannedPairs the pairs the spending function is spread over (the most an adaptive run takes)
 * @property {number} [lookStep] pairs between looks, in an adaptive run
 * @property {number} margin the equivalence margin, a fraction of 1
 * @property {Record<string, number[]>} looks by row key (`test\nprofile`): the pairs seen at each look, in order
 */

/**
 * Each look's two-sided error rate per cell: the spending function's increment at that look
 * (a final look spends all that is left), split evenly over the table's cells.
 * @param {number[]} looks pairs seen at each look, increasing
 * @param {{family: number, plannedPairs: number}} design
 * @param {boolean} [final] whether the last look is the last there will be (false while a run goes on)
 * @returns {number[]} one rate per look
 */
export function lookLevels (looks, { family, plannedPairs }, final = true) {
  let spent = 0
  return looks.map((pairs, i) => {
    const total = final && i === looks.length - 1 ? ALPHA : spentAlpha(pairs / plannedPairs)
    const level = Math.max(0, total - spent)
    spent = Math.max(spent, total)
    return level / family
  })
}

/**
 * One metric's call over a sequence of looks: the first look whose interval decides it (better,
 * worse or equivalent) makes the call and gives the estimate shown; a metric no look decides is
 * inconclusive, with the estimate of the last look.
 * @param {Array<number|null>} baseline one value per pair, in pair order
 * @param {Array<number|null>} candidate
 * @param {'lower'|'higher'} better
 * @param {number[]} looks pairs seen at each look
 * @param {Design} design
 * @param {boolean} [final] see lookLevels
 * @returns {Estimate|null} null when no pair is usable
 */
export function sequentialEstimate (baseline, candidate, better, looks, design, final = true) {
  const levels = lookLevels(looks, design, final)
  let estimate = null
  for (let i = 0; i < looks.length; i++) {
    const seen = pairedRatio(baseline.slice(0, looks[i]), candidate.slice(0, looks[i]), levels[i])
    if (!seen) continue
    estimate = { ...seen, call: callOf(better, seen, design.margin), look: i + 1 }
    if (estimate.call !== 'inconclusive') break
  }
  return estimate
}

/**
 * Every metric's estimate and call for one format against the baseline.
 * @param {Array<Record<string, number|null>>} baselineTrials per pair, values by metric name
 * @param {Array<Record<string, number|null>>} candidateTrials per pair, same order
 * @param {number[]} looks pairs seen at each look (one look at every pair for a fixed number of trials)
 * @param {Design} design
 * @param {boolean} [final] see lookLevels
 * @returns {Record<string, Estimate>} by metric name; a metric with no usable pair is absent
 */
export function verdictsOf (baselineTrials, candidateTrials, looks, design, final = true) {
  const verdicts = {}
  for (const [name, { better }] of Object.entries(METRICS)) {
    const valuesOf = (trials) => trials.map((trial) => trial?.[name] ?? null)
    const [baseline, candidate] = [baselineTrials, candidateTrials].map(valuesOf)
    const estimate = sequentialEstimate(baseline, candidate, better, looks, design, final)
    if (estimate) verdicts[name] = estimate
  }
  return verdicts
}

/**
 * One call for a format over all its metrics: better or worse when every metric called either way
 * points that way, mixed when they disagree; with neither, equivalent when every metric is, else
 * inconclusive.
 * @param {Record<string, Estimate>} verdicts
 * @returns {'better'|'worse'|'mixed'|'equivalent'|'inconclusive'}
 */
export function overallCall (verdicts) {
  const calls = Object.values(verdicts).map((estimate) => estimate.call)
  const directions = new Set(calls.filter((call) => call === 'better' || call === 'worse'))
  if (directions.size === 2) return 'mixed'
  if (directions.size === 1) return [...directions][0]
  return calls.length > 0 && calls.every((call) => call === 'equivalent') ? 'equivalent' : 'inconclusive'
}

/**
 * The order of the formats in one trial pair, balanced in blocks of two: a rotation, then its
 * reverse (A B, B A, then B A, A B, ...), so over every two pairs each format sits at each
 * position equally often and a linear drift falls on every format alike.
 * @param {number} count formats
 * @param {number} pair 0-based
 * @returns {number[]} format indexes
 */
export function trialOrder (count, pair) {
  const rotated = Array.from({ length: count }, (_, i) => (i + Math.floor(pair / 2)) % count)
  return pair % 2 ? rotated.reverse() : rotated
}
