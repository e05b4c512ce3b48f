// A capacity run's results: per test and objective, each format's capacity with its interval (over
// the confirming rounds), per server core, the cores a target rate needs, and each format's ratio
// to the first with its call (compare's four words, family-wise controlled over the table).
import jstatModule from 'jstat'
import { ALPHA, DEFAULT_EQUIVALENCE, simultaneousEstimates } from '../compare/statistics.js'
import { int } from '../display.js'
import { disturbances } from '../compare/results.js'

const { jStat } = jstatModule

/**
 * What capacity measures, as lib/provenance.js dates it: the search (step up, bisect, confirming
 * rounds), the judge and the server's CPU budget. Bump it, with the time, when a change alters what
 * capacity measures; the docs then refuse its older tables until they are remade.
 * @type {import('../provenance.js').Method}
 */
export const CAPACITY_METHOD = Object.freeze({ name: 'capacity', version: 4, since: '2026-11-29T03:22:40.000Z' })

/**
 * What a capacity counts: messages, or for fan-out deliveries (each publish once at every subscriber):
 * its search offers publishes/s, and `perRate` deliveries come of each.
 * @param {{direction?: string, connections?: number}} settings the run's
 * @returns {{name: string, per: string, perRate: number, fanout: boolean}} name: the rate's unit; per: the costs' unit
 */
export function capacityUnit ({ direction, connections }) {
  return direction === 'fanout'
    ? { name: 'deliveries/s', per: 'delivery', perRate: connections, fanout: true }
    : { name: 'msgs/s', per: 'msg', perRate: 1, fanout: false }
}

/** Probes this close below the capacity (a share of it) give the CPU per message "at the knee". */
const KNEE_SHARE = 0.85

/**
 * @typedef {object} CapacityFigure one format at one objective on one test
 * @property {string} format its label
 * @property {'found'|'generator-bound'|'below'|'above'} status
 * @property {number|null} msgsPerS the mean of the rounds' estimates, in the run's unit (capacityUnit: deliveries/s
 *   for fan-out, which then has `unit`, `publishesPerS` (the rate searched) and `subscribers` too)
 * @property {[number, number]|null} ci its 95% interval (Student t over the rounds), msgs/s
 * @property {number|null} halfWidth the interval's half-width, a share of msgsPerS
 * @property {number|null} perCore msgsPerS per core of the server's budget
 * @property {number|null} limitRate where a search without a capacity stopped
 * @property {number|null} serverUs the server's CPU per message (fan-out: delivery) at the knee, µs
 * @property {number|null} generatorUs the generator's CPU per message at the knee (pacing left out), µs
 * @property {{rate: number, cores: number, ci: [number, number]|null}|null} coresFor the server cores --target-rate needs
 * @property {boolean} generatorAtLimit the generator was saturated at the pass below the knee in at
 *   least half the rounds: the server may take more than this, a lower bound
 * @property {number} saturatedRounds the rounds whose pass below the knee had the generator saturated
 */

/**
 * Builds the results document from the searches.
 * @param {object[]} searches measureCapacity's, in row, objective, format order
 * @param {{labels: string[], serverCores: number, targetRate: number|null, margin?: number, unit?: object}} how
 *   unit: capacityUnit's (msgs/s unless given); targetRate in it
 * @returns {{rows: object[], family: object}}
 */
export function capacityRows (searches, how) {
  const { labels, serverCores, targetRate, margin = DEFAULT_EQUIVALENCE, unit = capacityUnit({}) } = how
  const rows = []
  for (let i = 0; i < searches.length; i += labels.length) {
    const group = searches.slice(i, i + labels.length)
    rows.push({
      test: group[0].row,
      profile: group[0].profile,
      slo: group[0].slo,
      figures: group.map((search) => figureOf(search, serverCores, targetRate, unit)),
      estimates: group
    })
  }
  // One cell per row and candidate: the rounds pair up, the baseline's and the candidate's taken in turn.
  const cells = rows.flatMap((row) => row.figures.slice(1).map((_, c) => ({
    baseline: usable(row.estimates[0]), candidate: usable(row.estimates[c + 1]), better: 'higher'
  })))
  const { estimates, family } = simultaneousEstimates(cells, { margin })
  let next = 0
  return {
    rows: rows.map(({ estimates: searched, ...row }) => {
      const [baseline, ...candidates] = row.figures
      const ratios = candidates.map((figure) => [figure.format, bounded(estimates[next++], baseline, figure)])
      return { ...row, ratios: Object.fromEntries(ratios) }
    }),
    family
  }
}

/**
 * A ratio whose capacities are lower bounds (the generator saturated at a knee: "at least") is a
 * bound itself: at least the ratio found when only the candidate's is, at most when only the
 * baseline's is, and neither when both are. Only a call the bound cannot undo stands (better when
 * at least, worse when at most); any other becomes inconclusive.
 * @param {object|null} estimate simultaneousEstimates'
 * @param {CapacityFigure} baseline
 * @param {CapacityFigure} candidate
 * @returns {object|null} the estimate, with `bound` ('at least', 'at most' or 'neither') when it is one
 */
function bounded (estimate, baseline, candidate) {
  if (!estimate || (!baseline.generatorAtLimit && !candidate.generatorAtLimit)) return estimate
  const bound = !baseline.generatorAtLimit ? 'at least' : !candidate.generatorAtLimit ? 'at most' : 'neither'
  const stands = (bound === 'at least' && estimate.call === 'better') || (bound === 'at most' && estimate.call === 'worse')
  return { ...estimate, bound, call: stands ? estimate.call : 'inconclusive' }
}

/** A search's estimates as a ratio's cell takes them: none unless it found its capacity. */
const usable = (search) => search.status === 'found' ? search.estimates : []

/** @returns {CapacityFigure} */
function figureOf (search, serverCores, targetRate, unit) {
  const { estimates, brackets, status, limitRate, format, probes } = search
  const found = status === 'found' && estimates.length > 0
  const rate = found ? mean(estimates) : null
  // The ratios take the rates searched; the capacity is in the unit (a fan-out's deliveries).
  const msgsPerS = found ? rate * unit.perRate : null
  const ci = found ? interval(estimates.map((estimate) => estimate * unit.perRate)) : null
  const knee = found ? probes.filter((probe) => probe.pass && probe.rate >= rate * KNEE_SHARE) : []
  const perCore = found ? msgsPerS / serverCores : null
  // A round whose pass had the generator at its limit may have failed a step above by the
  // generator's doing: a bound. One such round in several is a stall of the generator's, which the
  // interval owns (it was one probe in the recordings of tests 3 and 4, then read as the whole
  // capacity's bound); most of them, the generator's limit.
  const saturatedRounds = found ? brackets.filter((bracket) => bracket.generatorSaturated).length : 0
  return {
    format,
    status,
    msgsPerS: msgsPerS && Math.round(msgsPerS),
    ci: ci && [Math.round(ci[0]), Math.round(ci[1])],
    halfWidth: ci && round((ci[1] - ci[0]) / 2 / msgsPerS, 4),
    perCore: perCore && Math.round(perCore),
    rounds: estimates.length,
    limitRate,
    serverUs: knee.length ? round(mean(knee.map((probe) => probe.server.perMessageUs)), 2) : null,
    generatorUs: knee.length ? round(mean(knee.map((probe) => probe.generatorPerMessageUs)), 2) : null,
    coresFor: found && targetRate ? coresFor(targetRate, perCore, ci && ci.map((end) => end / serverCores)) : null,
    generatorAtLimit: found && saturatedRounds * 2 >= estimates.length,
    saturatedRounds,
    ...(unit.fanout && { unit: unit.name, publishesPerS: rate && Math.round(rate), subscribers: unit.perRate })
  }
}

/** The server cores a rate needs at a capacity per core, with the interval's ends turned round. */
function coresFor (rate, perCore, ci) {
  return { rate, cores: round(rate / perCore, 2), ci: ci && [round(rate / ci[1], 2), round(rate / ci[0], 2)] }
}

/** A 95% Student t interval on the mean; null with fewer than two values. */
function interval (values) {
  if (values.length < 2) return null
  const m = mean(values)
  const sd = Math.sqrt(values.reduce((sum, value) => sum + (value - m) ** 2, 0) / (values.length - 1))
  const half = jStat.studentt.inv(1 - ALPHA / 2, values.length - 1) * sd / Math.sqrt(values.length)
  return [m - half, m + half]
}

/**
 * The table's cells: per test and objective, each format's capacity per server core with its
 * interval, the server's and the generator's CPU per message at the knee, the ratio to the first
 * format and its call, and the cores a target rate needs.
 * @param {{rows: object[], settings: {formats: string[], serverCores: number, targetRate: number|null}}} results
 * @returns {{header: string[], body: string[][]}}
 */
export function capacityTableCells ({ rows, settings }) {
  const { serverCores, targetRate } = settings
  const unit = capacityUnit(settings)
  const header = ['test', 'objective', 'format', `${unit.name} per core (${serverCores} core${serverCores === 1 ? '' : 's'})`, '95% interval',
    `server µs/${unit.per}`, `generator µs/${unit.per}`, `vs ${settings.formats[0]}`, ...(targetRate ? [`cores for ${int(targetRate)}/s`] : [])]
  const body = rows.flatMap((row) => row.figures.map((figure, f) => [
    f === 0 ? row.test : '',
    f === 0 ? row.slo : '',
    figure.format,
    capacityText(figure),
    figure.ci ? `${int(figure.ci[0] / serverCores)}-${int(figure.ci[1] / serverCores)} (±${(figure.halfWidth * 100).toFixed(1)}%)` : '',
    figure.serverUs ?? '',
    figure.generatorUs ?? '',
    f === 0 ? '' : ratioText(row.ratios[figure.format]),
    ...(targetRate ? [figure.coresFor ? `${figure.coresFor.cores}${figure.coresFor.ci ? ` (${figure.coresFor.ci[0]}-${figure.coresFor.ci[1]})` : ''}` : ''] : [])
  ].map(String)))
  return { header, body }
}

/**
 * The console's table (capacityTableCells), its columns aligned.
 * @param {{rows: object[], settings: {formats: string[], serverCores: number, targetRate: number|null}}} results
 * @returns {string}
 */
export function formatCapacityTable (results) {
  const { header, body } = capacityTableCells(results)
  const widths = header.map((title, c) => Math.max(title.length, ...body.map((cells) => cells[c].length)))
  const line = (cells) => cells.map((cell, c) => c < 3 ? cell.padEnd(widths[c]) : cell.padStart(widths[c])).join('  ').trimEnd()
  return [line(header), ...body.map(line)].join('\n')
}

/** A format's capacity, or why there is none. */
export function capacityText ({ status, perCore, limitRate, generatorAtLimit, unit }) {
  if (status === 'found') return `${generatorAtLimit ? 'at least ' : ''}${int(perCore)}`
  if (status === 'generator-bound') return `generator-bound at ${offered(limitRate, unit)}`
  if (status === 'unsettled') return 'unsettled: no round bracketed the knee'
  return `${status === 'above' ? 'above' : 'below'} ${offered(limitRate, unit)}`
}

/** A rate the search offered: msgs/s, or a fan-out figure's (it has a unit) publishes/s. */
const offered = (rate, unit) => `${int(rate)}${unit ? ' publishes/s' : '/s'}`

/**
 * A ratio with its interval and call: `1.41x (1.35-1.47) better`; a bound (see bounded) says so:
 * `at least 1.41x (...) better`, or `1.41x (...) inconclusive: both at least`.
 */
export function ratioText (estimate) {
  if (!estimate) return 'no ratio'
  const range = estimate.ci ? ` (${estimate.ci[0].toFixed(2)}-${estimate.ci[1].toFixed(2)})` : ''
  const prefix = estimate.bound === 'at least' || estimate.bound === 'at most' ? `${estimate.bound} ` : ''
  return `${prefix}${estimate.ratio.toFixed(2)}x${range} ${estimate.call}${estimate.bound === 'neither' ? ': both at least' : ''}`
}

/**
 * One sentence per ratio: which format takes more, by how much, how sure.
 * @param {{rows: object[], settings: {formats: string[]}}} results
 * @returns {string[]}
 */
export function capacityVerdicts ({ rows, settings }) {
  const baseline = settings.formats[0]
  return rows.flatMap((row) => Object.entries(row.ratios).map(([label, estimate]) => {
    const where = `test ${row.test} at ${row.slo}`
    if (!estimate) return `${where}: ${label} vs ${baseline} not told: a format has no capacity (see the table)`
    const range = estimate.ci ? `, 95% interval ${estimate.ci[0].toFixed(2)}-${estimate.ci[1].toFixed(2)}` : ''
    const found = `${estimate.ratio.toFixed(2)}x ${baseline}'s capacity${range}`
    if (estimate.bound === 'neither') {
      return `${where}: ${label} vs ${baseline} ${estimate.call}: ${found}, but both capacities are lower bounds (the generator saturated at both knees)`
    }
    const bound = estimate.bound ? `${estimate.bound} ` : ''
    const limited = estimate.bound ? ` (a bound: the generator saturated at ${estimate.bound === 'at least' ? label : baseline}'s knee)` : ''
    return `${where}: ${label} ${estimate.call}: ${bound}${found}${limited}`
  }))
}

/** What --server-cpus gives the generator when it has too little room. */
const REMEDY = 'give the generator more room: a smaller --server-cpus (0.5), or a machine with more cores'

/**
 * A line for each format whose figure the generator limited: no capacity (generator-bound), or one
 * found with the generator saturated at the knee (a lower bound); and one for each way others
 * disturbed the probes (other processes, other guests), which no interval owns up to.
 * @param {{rows: object[], searches?: object[]}} results
 * @returns {string[]}
 */
export function capacityNotes ({ rows, searches = [] }) {
  const machine = searches.flatMap((search) => search.probes.map((probe) => probe.machine).filter(Boolean))
  return [...generatorNotes(rows), ...disturbances(machine, 'probes')]
}

function generatorNotes (rows) {
  return rows.flatMap((row) => row.figures.flatMap((figure) => {
    const who = `${figure.format} on test ${row.test}`
    if (figure.status === 'generator-bound') {
      return [`${who}: the generator could not keep up at ${offered(figure.limitRate, figure.unit)} while the server had room; this is not the server's capacity: ${REMEDY}`]
    }
    if (!figure.saturatedRounds) return []
    const rounds = `at the pass below the knee in ${figure.saturatedRounds} of ${figure.rounds} rounds`
    return figure.generatorAtLimit
      ? [`${who}: the generator was saturated ${rounds}, so the server may take more (at least): ${REMEDY}`]
      : [`${who}: the generator was saturated ${rounds}, a stall of its own that the interval owns, not its limit`]
  }))
}

const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length
const round = (value, digits) => Math.round(value * 10 ** digits) / 10 ** digits
