// How sure a comparison is: for each cell of a table (a row, a format against the baseline, a
// metric), the ratio of the format to the baseline, an interval, and one of four calls: better,
// worse, equivalent or inconclusive.
//
// Method: a run is a number of generations, fixed by its time budget, not by the data; in each,
// every format runs every test once, so a generation gives each cell one log ratio. Their mean,
// exponentiated, is the geometric-mean ratio. The data are looked at once, at the end.
//
// A call is a claim about the whole table: the chance of any false call anywhere in it is held to
// ALPHA (near enough: the cells' correlation is itself estimated, see maxTQuantile). The cells of
// one table move together (a slow generation slows p50 and p99 on every network), so Bonferroni,
// which assumes nothing of them, wastes power. Instead every interval uses one critical value, the
// (1 - ALPHA) quantile of the largest |t| over the table's cells given how they correlate
// (single-step max-T, Hothorn, Bretz & Westfall 2008), found by simulation, each cell's t with its
// own spread. A cell whose ratio never varies (bytes) is exact: a zero-width interval, outside the family.
// No Node.js imports: the browser client makes the same calls (jstat and hdr-histogram-js come
// from its import map).
import jstatModule from 'jstat'
import { createLatencyHistogram, decodeHistogram, valueAtPercentile } from '../histogram.js'

const { jStat } = jstatModule

/** The chance of at least one false call anywhere in a comparison's table. */
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
  serverCpu: { label: 'server CPU', better: 'lower', unit: '/msg' },
  clientCodec: { label: 'client codec', better: 'lower', unit: '/msg' },
  serverCodec: { label: 'server codec', better: 'lower', unit: '/msg' }
})

/** Simulated tables the critical value is a quantile of: with 4000 it moves by 1-2% from one seed to another. */
const DRAWS = 4000

/** The simulation's seed, fixed so that the same data give the same intervals, run after run. */
const SEED = 0x5eed

/**
 * @typedef {object} Estimate a ratio of a format to the baseline, with its interval and call
 * @property {number} ratio geometric mean of the generations' ratios
 * @property {[number, number]|null} ci the simultaneous interval; null with a single generation (no spread to measure)
 * @property {number|null} resolution the interval's half-width as a fraction (0.12: ±12%): differences
 *   smaller than this could not be told from none by this run; null without an interval
 * @property {'better'|'worse'|'equivalent'|'inconclusive'} call for the user: lower latency, bytes and CPU, higher msgs/s
 * @property {number} generations how many generations the estimate rests on (those where both formats have a usable value)
 */

/**
 * @typedef {object} Family the cells that share the error rate, and the critical value they share
 * @property {'max-t'} method how the critical value was found
 * @property {number} cells in the family: those with at least two usable generations whose ratio varies
 * @property {number} exact cells whose ratio never varies (zero-width intervals, outside the family)
 * @property {number} generations the most usable generations of any cell
 * @property {number} rotations the most strata a cell's generations fell in (1: none, see stratified)
 * @property {number|null} df the fewest degrees of freedom of a family cell: its usable generations less its
 *   strata; null without a family
 * @property {number|null} critical the t value every family interval uses; null without a family
 * @property {number|null} bonferroni the t value Bonferroni would have used, t(1 - alpha / (2 cells), df), for comparison
 * @property {number} draws simulated tables the critical value is a quantile of
 * @property {number} alpha the chance of any false call in the table
 */

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
 * Estimates and calls for every cell of a table at once, with simultaneous intervals: the chance of
 * any false call anywhere in the table is at most alpha, accounting for how the cells correlate.
 * Every interval of the family is exp(mean ± q·sd/√n) on the cell's log ratios, with one critical
 * value q: the (1 - alpha) quantile of the largest |t| over the family, simulated (see maxTQuantile),
 * never below a lone cell's Student t value.
 * @param {Array<{baseline: Array<number|null>, candidate: Array<number|null>, strata?: Array<string|null>, better: 'lower'|'higher'}>} cells
 *   one value per generation (same index = same generation); null/undefined/0/non-finite values are unusable;
 *   strata: each generation's rotation, the processes the formats ran in (see stratified), when known
 * @param {{alpha?: number, margin?: number, draws?: number, seed?: number}} [options] margin: the equivalence
 *   margin, a fraction of 1; draws and seed: the simulation's size and seed
 * @returns {{estimates: Array<Estimate|null>, family: Family}} estimates in the order of cells, null where no
 *   generation is usable
 */
export function simultaneousEstimates (cells, options = {}) {
  const { alpha = ALPHA, margin = DEFAULT_EQUIVALENCE, draws = DRAWS, seed = SEED } = options
  const estimates = []
  const members = []
  let exact = 0
  let generations = 0
  let rotations = 1
  for (const { baseline, candidate, strata, better } of cells) {
    const { logs, at } = usableLogs(baseline, candidate)
    const n = logs.length
    generations = Math.max(generations, n)
    if (n === 0) {
      estimates.push(null)
      continue
    }
    if (n === 1) {
      estimates.push({ ratio: Math.exp(logs[0]), ci: null, resolution: null, call: 'inconclusive', generations: 1 })
      continue
    }
    const { mean, deviations, df, scale, groups } = stratified(logs, at.map((g) => strata?.[g] ?? null))
    const ratio = Math.exp(mean)
    const squares = deviations.reduce((sum, value) => sum + value ** 2, 0)
    // Rounding leaves a constant metric a variance of ~1e-33, not 0: treat it as no spread at all.
    if (squares / df < 1e-20) {
      exact++
      const call = callOf(better, { ratio, ci: [ratio, ratio] }, margin)
      estimates.push({ ratio, ci: [ratio, ratio], resolution: 0, call, generations: n })
      continue
    }
    rotations = Math.max(rotations, groups)
    members.push({ index: estimates.length, better, deviations, at, mean, squares, df, scale, n })
    estimates.push(null) // until the critical value is known
  }

  const family = {
    method: 'max-t', cells: members.length, exact, generations, rotations, df: null, critical: null, bonferroni: null, draws, alpha
  }
  if (members.length === 0) return { estimates, family }
  const df = Math.min(...members.map((member) => member.df))
  const lone = jStat.studentt.inv(1 - alpha / 2, df)
  // One cell is its own max: its Student t value is exact, no simulation needed.
  const critical = members.length === 1 ? lone : maxTQuantile(members, alpha, draws, seed, lone)
  Object.assign(family, { df, critical, bonferroni: jStat.studentt.inv(1 - alpha / (2 * members.length), df) })
  for (const { index, better, mean, squares, df, scale, n } of members) {
    const halfWidth = critical * Math.sqrt(squares / df) * scale
    const estimate = { ratio: Math.exp(mean), ci: [Math.exp(mean - halfWidth), Math.exp(mean + halfWidth)] }
    const call = callOf(better, estimate, margin)
    estimates[index] = { ...estimate, resolution: Math.exp(halfWidth) - 1, call, generations: n }
  }
  return { estimates, family }
}

/**
 * A cell's mean log ratio over rotations, and the spread within them. A rotation is a stratum of
 * generations that gave the formats the same processes (servers and clients swap formats between
 * generations): a process's own speed is then the same inside a stratum and cancels in
 * the mean of the strata's means, so it is no noise to the interval either. The estimate is that
 * mean (each rotation weighs the same, as the design intends), its variance σ² Σ(1/n_k) / S², σ²
 * pooled within strata on n - S degrees of freedom. Without strata (or too few generations to
 * spare a degree of freedom per stratum) it is the plain mean and standard error.
 * @param {number[]} logs the usable log ratios
 * @param {Array<string|number|null>} labels each one's stratum
 * @returns {{mean: number, deviations: number[], df: number, scale: number, groups: number}} deviations
 *   from their stratum's mean; the standard error is sqrt(Σ deviations² / df) · scale
 */
function stratified (logs, labels) {
  const n = logs.length
  const groups = membersOf(labels)
  if (groups.size === 1 || n - groups.size < 1) {
    const mean = logs.reduce((sum, value) => sum + value, 0) / n
    return { mean, deviations: logs.map((value) => value - mean), df: n - 1, scale: 1 / Math.sqrt(n), groups: 1 }
  }
  const deviations = new Array(n)
  let sum = 0
  let inverse = 0
  for (const members of groups.values()) {
    const mean = members.reduce((total, i) => total + logs[i], 0) / members.length
    for (const i of members) deviations[i] = logs[i] - mean
    sum += mean
    inverse += 1 / members.length
  }
  const S = groups.size
  return { mean: sum / S, deviations, df: n - S, scale: Math.sqrt(inverse) / S, groups: S }
}

/**
 * Points of the Harrell-Davis weighting a smooth percentile averages (stratified Beta quantiles):
 * with 16, a percentile moves by well under its resolution from one count to the next.
 */
const SMOOTH_POINTS = 16

/**
 * A percentile of a histogram that moves smoothly with its counts: the Harrell-Davis estimate,
 * the percentile's order statistics weighted by the Beta(p(n+1), (1-p)(n+1)) law of where the
 * p-th of n falls, taken at SMOOTH_POINTS of its quantiles. A plain percentile steps from one
 * recorded value to the next: where the 99th fell in a gap of the distribution (hiccups on 1% of
 * the messages), a jackknife of it (pooledPercentiles) made a false call in a third of simulated
 * null tables, of this one in 8-16% (and STEEP_TAIL keeps those cases out).
 * @param {import('hdr-histogram-js').Histogram} histogram values in microseconds, not empty
 * @param {number} percentile 0 to 100
 * @returns {number} ms
 */
export function smoothPercentile (histogram, percentile) {
  const n = histogram.totalCount
  const [a, b] = [percentile / 100 * (n + 1), (1 - percentile / 100) * (n + 1)]
  let sum = 0
  for (let k = 0; k < SMOOTH_POINTS; k++) {
    sum += valueAtPercentile(histogram, 100 * jStat.beta.inv((k + 0.5) / SMOOTH_POINTS, a, b))
  }
  return sum / SMOOTH_POINTS
}

/**
 * Past this ratio of the percentiles either side (p99.5 to p98.5 for p99), the tail is too steep
 * for a pooled percentile: the 99th falls in a gap between the usual tail and hiccups, moves by
 * whole modes, and the jackknife read it too narrow (in simulated null tables with hiccups on 1%
 * of the messages, 0.11-0.16 false calls against 0.05-0.09 with each generation's own p99).
 */
const STEEP_TAIL = 2

/**
 * A pooled percentile needs at least this many messages beyond it: `people` sends one message a
 * generation, and its pooled "p99" of 15 was their slowest, its interval ±130%.
 */
const TAIL_MESSAGES = 10

/**
 * A format's tail percentile over every message of its generations pooled, given as one value per
 * generation for the family to use in place of each generation's own percentile. A generation's
 * p99 is set by its dozen slowest messages, so a hiccup in one format's turn moved it 2-4x, and
 * those generations made p99's intervals the widest in the table; pooled, a hiccup weighs only as
 * the messages it held. The values are jackknife pseudo-values, n·log P - (n-1)·log P₋g (P the
 * smooth percentile of the stratum's generations pooled, P₋g without generation g, n their
 * number), centred on log P: their mean is the pooled percentile and their spread its standard
 * error, one generation left out at a time (each generation's messages stay together: they share
 * its moment of the machine). Strata as in stratified, within which each rotation's generations
 * are pooled; a stratum of one generation gives its own percentile. Not where the tail is steep
 * (STEEP_TAIL) or holds too few messages (TAIL_MESSAGES).
 * @param {Array<string|null>} histograms one per generation, encoded (lib/histogram.js)
 * @param {Array<string|number|null>} strata each generation's stratum
 * @param {number} percentile 0 to 100
 * @returns {number[]|null} one per generation, ms; null where a generation has no histogram or an
 *   empty one, or the tail is steep or thin (the caller keeps each generation's own figure)
 */
export function pooledPercentiles (histograms, strata, percentile) {
  if (histograms.length === 0 || histograms.some((histogram) => !histogram)) return null
  const decoded = histograms.map(decodeHistogram)
  if (decoded.some((histogram) => histogram.totalCount === 0)) return null
  const poolOf = (members) => {
    const pooled = createLatencyHistogram()
    for (const g of members) pooled.add(decoded[g])
    return pooled
  }
  const logPercentile = (members) => Math.log(smoothPercentile(poolOf(members), percentile))
  const all = poolOf(decoded.map((_, g) => g))
  if (all.totalCount * (100 - percentile) / 100 < TAIL_MESSAGES) return null
  const [below, above] = [-1, 1].map((side) => valueAtPercentile(all, percentile + side * (100 - percentile) / 2))
  if (above > STEEP_TAIL * below) return null
  const groups = membersOf(strata)
  const values = new Array(histograms.length)
  for (const members of groups.values()) {
    const n = members.length
    const whole = logPercentile(members)
    const without = (g) => logPercentile(members.filter((other) => other !== g))
    const pseudo = members.map((g) => n === 1 ? whole : n * whole - (n - 1) * without(g))
    // Centred on the pooled value: the pseudo-values' own mean (the jackknife's bias correction)
    // had 1.3x the pooled value's spread in simulations.
    const shift = whole - pseudo.reduce((sum, value) => sum + value, 0) / n
    members.forEach((g, i) => { values[g] = Math.exp(pseudo[i] + shift) })
  }
  return values
}

/**
 * Which positions share each stratum label, in order of first appearance.
 * @param {Array<string|number|null>} labels
 * @returns {Map<string|number|null, number[]>}
 */
function membersOf (labels) {
  const groups = new Map()
  labels.forEach((label, i) => {
    if (!groups.has(label)) groups.set(label, [])
    groups.get(label).push(i)
  })
  return groups
}

/**
 * A cell's log ratios candidate / baseline, leaving out generations where either side is missing,
 * zero or not finite.
 * @param {Array<number|null|undefined>} baseline one value per generation
 * @param {Array<number|null|undefined>} candidate
 * @returns {{logs: number[], at: number[]}} the log ratios, and the generation each comes from
 */
function usableLogs (baseline, candidate) {
  const logs = []
  const at = []
  for (let g = 0; g < Math.min(baseline.length, candidate.length); g++) {
    const a = baseline[g]
    const b = candidate[g]
    if (a > 0 && b > 0 && Number.isFinite(a) && Number.isFinite(b)) {
      logs.push(Math.log(b / a))
      at.push(g)
    }
  }
  return { logs, at }
}

/**
 * The (1 - alpha) quantile of max over cells of |t_c|, by simulation, for normal log ratios with
 * the cells' sample correlation. floor is a value the caller will not go below: a draw whose
 * maximum stays under it need not be resolved.
 *
 * With r_c a cell's residuals (from its strata's means) scaled to unit length (zero where a
 * generation is unusable), a draw is z_c = r_c · w with w standard normal per generation:
 * Var z_c = 1 and corr(z_c, z_d) = r_c · r_d, the sample correlation over shared generations, for
 * any number of generations against cells (no Cholesky). Each cell's t divides by its own spread,
 * s_c = |A r_c|² with A a df × generations
 * standard normal matrix: a χ² with df degrees of freedom, correlated between cells as they are.
 * That is the joint law of the t statistics of normal data with that correlation (exactly, when
 * every generation is usable in every cell). multcomp instead shares one χ² between all cells,
 * right for its linear models' one σ but not here, where each cell estimates its own: that made the
 * false-call rate of 40 independent cells over 10 generations 0.11; this way it is 0.06, and 0.05
 * when half the cells are correlated. The correlation is estimated from few generations, so with
 * many independent cells and very few generations the rate still runs over alpha (0.09 for 60
 * cells over 5 generations, 0.07 over 8 to 10); cells that move together, the case this is for,
 * stay at or under it.
 * |A r|² is computed as |T r|² with T the upper triangular factor of A (Bartlett: χ on the diagonal,
 * normal above it), a row at a time and only until it shows that the cell's |t| is not the largest.
 * A cell short of the most degrees of freedom gets a χ² of its own, drawn
 * independently: right for the cell alone, and if anything wider (independent spreads make the
 * maximum larger).
 * @param {Array<{deviations: number[], at: number[], squares: number, df: number}>} members the family's
 *   cells: deviations from the cell's (stratum) means, the generation each comes from, their sum of
 *   squares and degrees of freedom
 * @param {number} alpha
 * @param {number} draws
 * @param {number} seed
 * @param {number} floor
 * @returns {number} the quantile, or floor if it is lower
 */
function maxTQuantile (members, alpha, draws, seed, floor) {
  const cells = members.length
  const width = Math.max(...members.map(({ at }) => at[at.length - 1])) + 1
  const dfs = Int32Array.from(members, ({ df }) => df)
  const df = Math.max(...dfs)
  const residuals = new Float64Array(cells * width) // cell c's from c * width
  members.forEach(({ deviations, at, squares }, c) => {
    deviations.forEach((value, i) => { residuals[c * width + at[i]] = value / Math.sqrt(squares) })
  })
  const { normals, chiSquare } = randomSource(seed)
  // A draw's normal numbers: w, then the triangle's entries above the diagonal, row by row.
  const noise = new Float64Array(width + df * (width - 1) - df * (df - 1) / 2)
  const triangle = new Float64Array(df * width) // row i from i * width + i
  const z = new Float64Array(cells)
  const maxima = new Float64Array(draws)
  for (let draw = 0; draw < draws; draw++) {
    normals(noise)
    for (let i = 0, next = width; i < df; i++) {
      triangle[i * width + i] = Math.sqrt(chiSquare(df - i))
      for (let j = i + 1; j < width; j++) triangle[i * width + j] = noise[next++]
    }
    let top = 0
    for (let c = 0; c < cells; c++) {
      let sum = 0
      for (let g = 0, r = c * width; g < width; g++) sum += noise[g] * residuals[r + g]
      z[c] = sum
      if (Math.abs(sum) > Math.abs(z[top])) top = c
    }
    // The cell with the largest |z| first: it sets a high bar early, so the others stop sooner.
    let max = floor
    for (let k = -1; k < cells; k++) {
      const c = k < 0 ? top : k
      if (k === top) continue
      // |t_c| > max exactly while the cell's χ² stays below this.
      const limit = dfs[c] * (z[c] / max) ** 2
      let spread = 0
      if (dfs[c] < df) spread = chiSquare(dfs[c])
      for (let i = 0, r = c * width; dfs[c] === df && i < df && spread < limit; i++) {
        let row = 0
        for (let j = i, t = i * width; j < width; j++) row += triangle[t + j] * residuals[r + j]
        spread += row * row
      }
      if (spread < limit) max = Math.abs(z[c]) / Math.sqrt(spread / dfs[c])
    }
    maxima[draw] = max
  }
  maxima.sort()
  return maxima[Math.min(draws - 1, Math.ceil((1 - alpha) * draws) - 1)]
}

/**
 * Seeded random numbers, the same in every JavaScript engine so that a table's intervals can be
 * reproduced: mulberry32 uniforms, normals by Marsaglia's polar method, and χ² values as -2 log of
 * a product of uniforms (a sum of exponentials) plus, for an odd df, a squared Box-Muller normal:
 * one log per χ² instead of one per squared normal.
 * @param {number} seed
 * @returns {{normals: (buffer: Float64Array) => void, chiSquare: (df: number) => number}} normals fills a buffer
 */
export function randomSource (seed) {
  let state = seed >>> 0
  const uniform = () => {
    state = (state + 0x6D2B79F5) >>> 0
    let t = Math.imul(state ^ (state >>> 15), state | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return 1 - ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const normals = (buffer) => {
    for (let i = 0; i < buffer.length; i += 2) {
      let u, v, square
      do {
        u = 2 * uniform() - 1
        v = 2 * uniform() - 1
        square = u * u + v * v
      } while (square >= 1 || square === 0)
      const factor = Math.sqrt(-2 * Math.log(square) / square)
      buffer[i] = u * factor
      if (i + 1 < buffer.length) buffer[i + 1] = v * factor
    }
  }
  const chiSquare = (df) => {
    let product = 1
    for (let i = 1; i < df; i += 2) product *= uniform()
    const even = -2 * Math.log(product)
    return df % 2 ? even - 2 * Math.log(uniform()) * Math.cos(2 * Math.PI * uniform()) ** 2 : even
  }
  return { normals, chiSquare }
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
 * The order of the formats in one batch, balanced in blocks of two: a rotation, then its reverse
 * (A B, B A, then B A, A B, ...), so over every two batches each format sits at each position
 * equally often and a linear drift falls on every format alike.
 * @param {number} count formats
 * @param {number} batch 0-based
 * @returns {number[]} format indexes
 */
export function trialOrder (count, batch) {
  const rotated = Array.from({ length: count }, (_, i) => (i + Math.floor(batch / 2)) % count)
  return batch % 2 ? rotated.reverse() : rotated
}
