// What `npm run compare` concludes from its runs: one row per test and network profile with the
// figures a reader compares, as a text table, a markdown table and a results document. No Node.js
// imports: the browser client renders its own trials with it.
import { describeNetwork, testLabel } from '../report/report.js'
import { int, ms, perSecond, round } from '../display.js'
import { addHistograms } from '../histogram.js'
import { ALPHA, DEFAULT_EQUIVALENCE, METRICS, overallCall, pooledPercentiles, simultaneousEstimates, smoothPercentile } from './statistics.js'

/**
 * @typedef {object} FormatFigures one format's figures in a comparison row (medians over its trials)
 * @property {number} payloadBytes encoded message size
 * @property {number} wireBytes socket bytes per message in the payload's direction: written (up, echo)
 *   or read (down); frame headers and compression included
 * @property {number} rate acknowledged messages per second
 * @property {number} p50 ms
 * @property {number} p99 ms, over every message of its trials pooled (where each kept its histogram)
 * @property {number|null} clientCpu client CPU µs per message (user + system, its open-loop batches)
 * @property {number|null} serverCpu server CPU µs per message (from the kernel, around its open-loop batches)
 * @property {number|null} clientCodec µs per message in the client's codec (encode, and decode where it decodes)
 * @property {number|null} serverCodec µs per message in the server's codec (decode, and encode where it replies with a payload)
 * @property {string} accounting sent/acked/errors/lost, summed over the trials
 * @property {boolean} ok every trial succeeded
 */

/**
 * @typedef {object} ComparisonRow
 * @property {string} test label, e.g. `3 medium`
 * @property {string} testName as reports name it, e.g. `medium`
 * @property {string} profile network profile name
 * @property {string} network the profile in words
 * @property {Record<string, FormatFigures>} figures by format label
 * @property {Record<string, FormatFigures[]>} trials by format label: each generation's figures, in order
 * @property {Record<string, Record<string, number|null>>} ratios by format after the first: that
 *   format / the first (the baseline) per figure, from the medians
 * @property {Record<string, Record<string, import('./statistics.js').Estimate>>} verdicts by format
 *   after the first: per metric (see METRICS) the ratio over generations, its simultaneous interval,
 *   the smallest difference it could tell, and the call
 * @property {Record<string, 'better'|'worse'|'mixed'|'equivalent'|'inconclusive'>} calls by format after the first
 * @property {number} generations how many generations measured the row
 */

const RATIO_FIGURES = ['payloadBytes', 'wireBytes', 'rate', 'p50', 'p99', 'clientCpu', 'serverCpu', 'clientCodec', 'serverCodec']
/** The figure each statistics metric reads. */
const METRIC_FIGURES = {
  p50: 'p50', p99: 'p99', rate: 'rate', bytes: 'wireBytes', clientCpu: 'clientCpu', serverCpu: 'serverCpu', clientCodec: 'clientCodec', serverCodec: 'serverCodec'
}

/**
 * Groups reports by test and network profile, in run order, and works out medians, ratios,
 * simultaneous intervals and calls, all cells of the table in one family (see
 * simultaneousEstimates). Reports carry the format's column label (`label`, e.g. `json#2` in an
 * A/A run) and their generation (`trial`, from 1); without them each report is its format's only one.
 * @param {object[]} reports client `--json` reports
 * @param {string[]} labels format labels, in column order (ratios are each later one / the first)
 * @param {{margin?: number}} [options] the equivalence margin
 * @returns {{rows: ComparisonRow[], family: import('./statistics.js').Family}}
 */
export function comparisonRows (reports, labels, { margin = DEFAULT_EQUIVALENCE } = {}) {
  const rows = new Map()
  for (const report of reports) {
    const key = `${report.test}\n${report.network.profile}`
    if (!rows.has(key)) {
      rows.set(key, {
        test: testLabel({ id: report.testId, name: report.test, file: report.payloadFile }),
        testName: report.test,
        profile: report.network.profile,
        network: describeNetwork(report.network),
        trials: {},
        histograms: {}
      })
    }
    const { trials, histograms } = rows.get(key)
    const label = report.label ?? report.format
    trials[label] ??= []
    trials[label][(report.trial ?? 1) - 1] = figuresOf(report)
    histograms[label] ??= []
    histograms[label][(report.trial ?? 1) - 1] = report.histogram ?? null
  }
  const byLabel = (names, make) => Object.fromEntries(names.map((label) => [label, make(label)]))
  const later = labels.slice(1)
  // Every cell of the table (row x format after the first x metric), called together.
  const cells = []
  for (const row of rows.values()) {
    const valuesOf = (label, name) => (row.trials[label] ?? []).map((trial) => trial?.[METRIC_FIGURES[name]] ?? null)
    // A generation's stratum: the processes each format ran in (statistics.js, stratified).
    const processesOf = (label) => (row.trials[label] ?? []).map((trial) => trial?.processes ?? null)
    for (const label of later) {
      for (const [name, { better }] of Object.entries(METRICS)) {
        const strata = processesOf(labels[0]).map((processes, g) => `${processes}|${processesOf(label)[g]}`)
        const pooled = name === 'p99' ? pooledTails(row, [labels[0], label], strata) : null
        const [baseline, candidate] = pooled ?? [valuesOf(labels[0], name), valuesOf(label, name)]
        cells.push({ row, label, name, better, baseline, candidate, strata })
      }
    }
  }
  const { estimates, family } = simultaneousEstimates(cells, { margin })
  cells.forEach((cell, i) => {
    if (!estimates[i]) return
    cell.row.verdicts ??= {}
    cell.row.verdicts[cell.label] ??= {}
    cell.row.verdicts[cell.label][cell.name] = estimates[i]
  })
  const table = [...rows.values()].map(({ verdicts = {}, histograms, ...row }) => {
    const figures = byLabel(Object.keys(row.trials), (label) =>
      summarize(row.trials[label].filter(Boolean), histograms[label]))
    const baseline = figures[labels[0]]
    const ratioOf = (label, name) => baseline?.[name] > 0 && figures[label]?.[name] > 0
      ? round(figures[label][name] / baseline[name], 3)
      : null
    const ratios = byLabel(later, (label) => byLabel(RATIO_FIGURES, (name) => ratioOf(label, name)))
    const verdictsOf = byLabel(later, (label) => verdicts[label] ?? {})
    const calls = byLabel(later, (label) => overallCall(verdictsOf[label]))
    const generations = Math.max(0, ...Object.values(row.trials).map((trials) => trials.filter(Boolean).length))
    return { ...row, figures, ratios, verdicts: verdictsOf, calls, generations }
  })
  return { rows: table, family }
}

/**
 * The p99 of each of the labels over all generations pooled, as per-generation values for the
 * family (statistics.js, pooledPercentiles); null unless every generation of both kept its histogram.
 */
function pooledTails (row, labels, strata) {
  const tails = labels.map((label) => {
    const generations = Array.from(row.trials[label] ?? [], (_, g) => row.histograms[label]?.[g] ?? null)
    return pooledPercentiles(generations, strata.slice(0, generations.length), 99)
  })
  return tails.every(Boolean) ? tails : null
}

function figuresOf (report) {
  const { messages: m, fanout } = report
  return {
    payloadBytes: report.bytes.payloadPerMessage,
    // Fan-out: per delivery, as its subscribers read it; the others: per message, in the payload's direction.
    wireBytes: fanout
      ? Math.round(fanout.wire.perDelivery ?? 0)
      : m.sent > 0 ? Math.round((report.direction === 'down' ? report.bytes.read : report.bytes.written) / m.sent) : 0,
    rate: report.rate,
    p50: report.latencyMs.p50,
    p99: report.latencyMs.p99,
    clientCpu: fanout ? fanout.cpuPerDeliveryUs : report.cpu?.perMessageUs ?? null,
    serverCpu: report.server?.perMessageUs ?? null,
    clientCodec: report.codec?.clientUs ?? null,
    serverCodec: report.codec?.serverUs ?? null,
    processes: [report.server?.process, report.client?.process].filter(Boolean).join(' ') || null,
    // Fan-out accounts for deliveries: expected, delivered, errors, lost.
    accounting: fanout ? `${fanout.expected ?? 0}/${fanout.delivered}/${fanout.errors}/${fanout.lost ?? 0}` : `${m.sent}/${m.acked}/${m.errors}/${m.lost}`,
    ok: report.ok
  }
}

/**
 * One format's figures over its trials: the median of each, accounting summed; but p99 over every
 * message of every trial pooled, where each kept its histogram (the p99 its ratio is of, see pooledTails).
 */
function summarize (trials, histograms = []) {
  const median = (name) => {
    const values = trials.map((trial) => trial[name]).filter((value) => value !== null).sort((a, b) => a - b)
    if (values.length === 0) return null
    const middle = Math.floor(values.length / 2)
    return values.length % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2
  }
  const counts = trials.map((trial) => trial.accounting.split('/').map(Number))
    .reduce((sum, parts) => sum.map((value, i) => value + parts[i]), [0, 0, 0, 0])
  const kept = histograms.filter(Boolean)
  const pooled = kept.length > 0 && kept.length === trials.length
  return {
    ...Object.fromEntries(RATIO_FIGURES.map((name) => [name, median(name)])),
    ...pooled && { p99: round(smoothPercentile(addHistograms(kept), 99), 3) },
    accounting: counts.join('/'),
    ok: trials.every((trial) => trial.ok)
  }
}

/**
 * A ratio with its interval, as every rendering prints it: `0.61x (0.57-0.66)`.
 * @param {import('./statistics.js').Estimate} estimate
 * @returns {string}
 */
export function ratioText ({ ratio, ci }) {
  // Below 0.1, two significant digits: 0.04x could be a 22x or a 28x speedup, 0.041x is within 3%.
  // Two pairs in a big table give intervals like 0.00-1e+24: past 999x or under 0.001x the digits say nothing more.
  const digits = (value) => value >= 1000 ? '>999' : value >= 10 ? value.toFixed(1) : value >= 0.1 ? value.toFixed(2) : value >= 0.001 ? value.toPrecision(2) : '<0.001'
  return `${digits(ratio)}x${ci ? ` (${digits(ci[0])}-${digits(ci[1])})` : ''}`
}

/**
 * One cell as the verdicts print it: the ratio, its interval and the call; an inconclusive cell
 * also says how large a difference the run could have told (`±12%`).
 * @param {import('./statistics.js').Estimate} estimate
 * @returns {string} e.g. `0.61x (0.57-0.66) better`, `1.02x (0.71-1.46) inconclusive, ±37%`
 */
export function cellText (estimate) {
  const resolution = estimate.call === 'inconclusive' && estimate.resolution !== null ? `, ±${percent(estimate.resolution)}` : ''
  return `${ratioText(estimate)} ${estimate.call}${resolution}`
}

const percent = (fraction) => fraction >= 10 ? '>999%' : `${fraction >= 0.1 ? Math.round(fraction * 100) : (fraction * 100).toFixed(1)}%`

/**
 * The answer in words: one line per test, network and format after the first, e.g.
 * `4 large, cable: protobuf vs json: p50 0.61x (0.57-0.66) better, ... : better`.
 * @param {ComparisonRow[]} rows
 * @param {string[]} labels
 * @returns {string[]}
 */
export function verdictLines (rows, labels) {
  return rows.flatMap((row) => labels.slice(1).map((label) => {
    const verdicts = row.verdicts[label] ?? {}
    const figures = Object.entries(METRICS).filter(([name]) => verdicts[name]).map(([name, { label: metric, unit = '' }]) =>
      `${metric}${unit} ${cellText(verdicts[name])}`)
    const call = row.calls[label]
    const detail = call === 'mixed' ? ` (${['better', 'worse'].map((side) => `${side}: ${namesCalled(verdicts, side)}`).join('; ')})` : ''
    return `${row.test}, ${row.profile === 'none' ? 'loopback' : row.profile}: ${label} vs ${labels[0]}: ${figures.join(', ')}: ${call}${detail}`
  }))
}

const namesCalled = (verdicts, call) => Object.entries(verdicts).filter(([, estimate]) => estimate.call === call)
  .map(([name]) => METRICS[name].label).join(', ')

/**
 * Which metrics no look could decide, per format after the first, for the captions.
 * @param {ComparisonRow} row
 * @param {string} label
 * @returns {string[]} metric labels called `inconclusive`
 */
export function undecided (row, label) {
  return Object.entries(row.verdicts[label] ?? {}).filter(([, estimate]) => estimate.call === 'inconclusive').map(([name]) => METRICS[name].label)
}

/**
 * What was wrong with the machine while it measured, in one line, or null when nothing was: the
 * processes that were their own bottleneck (their latencies are queueing as much as work),
 * generations during which other processes took CPU (contaminated: figures may be off), and those
 * during which the hypervisor gave this machine's CPUs to other guests (stolen).
 * @param {ComparisonResults} results
 * @returns {string|null}
 */
export function machineNote ({ settings, reports }) {
  const notes = []
  const generations = settings.generations ?? []
  const saturated = generations.flatMap((generation) => generation.saturated)
  if (saturated.length) {
    const where = [...new Set(saturated)]
    notes.push(`saturated: ${where.slice(0, 4).join(', ')}${where.length > 4 ? ` and ${where.length - 4} more` : ''}: ` +
      'their latencies include queueing for their own CPU; fewer in flight, --workers, or more hosts')
  } else if (!generations.length) {
    // Runs without generations (the browser's): the client's own judgement of itself.
    const clients = reports.filter((report) => report.generator?.saturated)
    if (clients.length) notes.push(`the client was saturated in ${clients.length} of ${reports.length} runs: their latencies include its own queueing`)
  }
  notes.push(...disturbances(generations, 'generations'))
  return notes.length ? notes.join('; ') : null
}

/** Neighbours (other processes) using more than this many cores on average contaminate a period. */
export const CONTAMINATING_CORES = 0.25

/**
 * A hypervisor's steal over this many cores on average marks a period stolen: lower than for
 * neighbours, as it stops our processes outright (default runs here during 0.13-0.15 cores of steal
 * on two cores had server CPU intervals of ±5.6-7.2%, against ±4.1-5.0% on a quiet host).
 */
export const STOLEN_CORES = 0.1

/**
 * What others did to a run's measuring periods (compare's generations, capacity's probes), one
 * phrase each: those during which other processes took CPU (contaminated: figures may be off), and
 * those during which the hypervisor gave this machine's CPUs to other guests (stolen).
 * @param {Array<{neighbourCores: number|null, stealCores: number|null, loadAverage: number|null}>} periods MachineWatch#read's
 * @param {string} noun what a period is called, plural: 'generations'
 * @returns {string[]} none on a quiet machine
 */
export function disturbances (periods, noun) {
  const notes = []
  const contaminated = periods.filter(wasContaminated)
  if (contaminated.length) {
    const most = Math.max(...contaminated.map((period) => period.neighbourCores))
    const load = Math.max(...periods.map((period) => period.loadAverage ?? 0))
    notes.push(`contaminated: other processes took up to ${most} cores in ${contaminated.length} of ${periods.length} ${noun} ` +
      `(load average up to ${load}); their spread widens the intervals, a steady neighbour can shift them: run again on a quiet machine`)
  }
  const stolen = periods.filter(wasStolen)
  if (stolen.length) {
    const most = Math.max(...stolen.map((period) => period.stealCores))
    notes.push(`stolen: the hypervisor gave other guests up to ${most} of this machine's cores in ${stolen.length} of ${periods.length} ` +
      `${noun} (steal time); their spread widens the intervals: run again on a quieter host`)
  }
  return notes
}

/**
 * Whether others took the machine's CPU over a period, as the notes count it: other processes
 * (contaminated) or other guests (stolen).
 * @param {{neighbourCores: number|null, stealCores: number|null}} period MachineWatch's
 * @returns {boolean}
 */
export const wasDisturbed = (period) => wasContaminated(period) || wasStolen(period)
const wasContaminated = (period) => period.neighbourCores > CONTAMINATING_CORES
const wasStolen = (period) => period.stealCores > STOLEN_CORES

/**
 * Every cell left inconclusive, in one line for the end of a run: `5 small p50, p99; people p99`.
 * @param {ComparisonRow[]} rows
 * @param {string[]} labels
 * @returns {string|null} null when every cell was decided
 */
export function inconclusiveSummary (rows, labels) {
  const parts = rows.flatMap((row) => labels.slice(1).map((label) => {
    const open = undecided(row, label)
    const where = `${row.test}${row.profile === 'none' ? '' : ` on ${row.profile}`}${labels.length > 2 ? ` (${label})` : ''}`
    return open.length ? `${where}: ${open.join(', ')}` : null
  })).filter(Boolean)
  return parts.length ? `inconclusive after ${Math.max(0, ...rows.map((row) => row.generations))} generations: ${parts.join('; ')}` : null
}

/** The calls as the compact tables mark them; verdictMeaning says what each mark means. */
const CALL_MARKS = { better: '+', worse: '-', equivalent: '=', inconclusive: '?' }

/**
 * Cells shared by the text, markdown and HTML tables: per test and profile, one line per format
 * and one ratio line per format against the first, so the table stays narrow enough to read at a
 * glance.
 * @param {ComparisonRow[]} rows
 * @param {string[]} formats
 * @returns {{header: string[], body: string[][]}} the first two cells are empty on continuation lines
 */
export function tableCells (rows, formats) {
  const optional = (show) => (value) => value === null ? 'n/a' : show(value)
  const columns = [
    ['B/msg', int, 'payloadBytes'],
    ['wire B/msg', int, 'wireBytes'],
    ['msgs/s', perSecond, 'rate'],
    ['p50 ms', ms, 'p50'],
    ['p99 ms', ms, 'p99'],
    ['client CPU µs/msg', optional((value) => value.toFixed(1)), 'clientCpu'],
    ['server CPU µs/msg', optional((value) => value.toFixed(1)), 'serverCpu'],
    ['client codec µs/msg', optional((value) => value.toFixed(2)), 'clientCodec'],
    ['server codec µs/msg', optional((value) => value.toFixed(2)), 'serverCodec']
  ]
  const metricOf = Object.fromEntries(Object.entries(METRIC_FIGURES).map(([metric, figure]) => [figure, metric]))
  const header = ['test', 'network', 'format', ...columns.map(([label]) => label), 'sent/acked/errors/lost']
  const body = rows.flatMap((row) => {
    const lines = formats.map((format, i) => {
      const figures = row.figures[format]
      const where = i === 0 ? [row.test, row.profile] : ['', '']
      return [...where, format, ...columns.map(([, show, name]) => figures ? show(figures[name]) : 'n/a'), figures?.accounting ?? 'not run']
    })
    // Ratios as the verdicts estimate them (paired trials), marked by their call; the encoded size
    // has no verdict and is the ratio of the two sizes.
    const ratioCell = (format, name) => {
      const estimate = row.verdicts[format]?.[metricOf[name]]
      if (estimate) return `${ratioText({ ratio: estimate.ratio, ci: null })} ${CALL_MARKS[estimate.call]}`
      return row.ratios[format][name] === null ? 'n/a' : `${row.ratios[format][name].toFixed(2)}x`
    }
    const ratioLines = formats.slice(1).map((format) => ['', '', `${format}/${formats[0]}`,
      ...columns.map(([, , name]) => ratioCell(format, name)), ''])
    return [...lines, ...ratioLines]
  })
  return { header, body }
}

/**
 * The comparison as an aligned text table for the terminal.
 * @param {ComparisonRow[]} rows
 * @param {string[]} formats
 * @returns {string}
 */
export function formatComparisonTable (rows, formats) {
  const { header, body } = tableCells(rows, formats)
  const all = [header, ...body]
  const widths = header.map((_, column) => Math.max(...all.map((cells) => cells[column].length)))
  return all.map((cells) => cells.map((cell, column) =>
    column < 3 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])).join('  ').trimEnd()).join('\n') + '\n'
}

/**
 * The comparison as a markdown document: what ran, where, and the table.
 * @param {ComparisonResults} results
 * @returns {string}
 */
export function formatComparisonMarkdown (results) {
  const { header, body } = tableCells(results.rows, results.formats)
  const line = (cells) => `| ${cells.join(' | ')} |`
  const verdicts = verdictLines(results.rows, results.formats)
  const note = machineNote(results)
  return [
    `# ${results.formats.join(' vs ')} over WebSocket`,
    '',
    describeRun(results),
    '',
    ...(verdicts.length ? ['## Verdict', '', ...verdicts.map((text) => `- ${text}`), '', verdictMeaning(results.family, results.settings.margin), ''] : []),
    ...(note ? [`**Note:** ${note}.`, ''] : []),
    ...(results.calibration ? ['## Calibration', '', ...results.calibration.lines.map((text) => `- ${text}`), ''] : []),
    '## Figures',
    '',
    line(header),
    line(header.map((_, i) => i < 3 ? '---' : '---:')),
    ...body.map(line),
    '',
    figuresMeaning(results.settings.direction) + ' Figures are medians over the generations. ' +
      `Ratios are ${ratioMeaning(results.formats)}.`,
    ''
  ].join('\n')
}

/** What each column means: per message, or for fan-out per delivery. */
function figuresMeaning (direction) {
  const codec = 'codec: µs per message inside the codec alone (the client\'s encode, and decode where it decodes; the server\'s decode, ' +
    'and encode where it replies with a payload), timed around each call: UTF-8 checks, unmasking and garbage collected later are not in it.'
  if (direction === 'fanout') {
    return 'B/msg: encoded message; wire B/msg: bytes a subscriber read on its socket per delivery (the 24-byte fan-out header, ' +
      'frame headers, and compression when on); msgs/s: deliveries per second; p50/p99: latency from the scheduled publish to each ' +
      'delivery; CPU: user + system µs per delivery, the client\'s (publisher and subscribers) over its batches, the server\'s ' +
      `from the kernel around them; ${codec}`
  }
  return 'B/msg: encoded message; wire B/msg: bytes on the socket per message in the payload\'s direction (frame headers, and ' +
    'compression when on); msgs/s: acknowledged messages per second and p50/p99: latency from send to ACK, both from the ' +
    'closed-loop batches; CPU: user + system µs per message over the open-loop batches (every format on one schedule), the ' +
    `client's from its process, the server's from the kernel around each batch; ${codec}`
}

/**
 * How the calls were made, for the captions of every rendering.
 * @param {import('./statistics.js').Family} [family] the table's, from simultaneousEstimates
 * @param {number} [margin] the equivalence margin
 * @returns {string}
 */
export function verdictMeaning (family, margin = DEFAULT_EQUIVALENCE) {
  const critical = family?.critical
    ? `a critical t of ${family.critical.toFixed(2)} over its ${family.cells} varying cells (Bonferroni would need ${family.bonferroni.toFixed(2)}), `
    : ''
  const rotations = family?.rotations > 1
    ? `; the generations fall in ${family.rotations} rotations (which processes ran which format), each weighing the same, ` +
      'the spread measured within them'
    : ''
  return 'Each ratio is the geometric mean of the per-generation ratios (a generation: every format measured once, taking turns)' +
    `${rotations}, with a simultaneous interval: the table's cells are one family, their correlation ` +
    `estimated from the generations (single-step max-T, multivariate t), ${critical}so the chance of any false call anywhere in the ` +
    `table is at most ${ALPHA * 100}%; a figure that never varies (bytes) is exact; p99 is over each format's messages of every generation ` +
    'pooled, its spread found by leaving out one generation at a time (a jackknife; where the tail is too steep or thin to pool, each ' +
    'generation\'s own p99). better or worse (+/-): the interval excludes 1, better meaning ' +
    `lower latency, bytes, CPU and codec time or more msgs/s; equivalent (=): the whole interval lies within ±${percent(margin)} of 1; ` +
    'inconclusive (?): neither, ± giving the smallest difference this run could have told; mixed: some metrics better, some worse.'
}

/**
 * What the ratio lines mean, for the captions of every rendering.
 * @param {string[]} formats
 * @returns {string}
 */
export function ratioMeaning (formats) {
  return `each format / ${formats[0]}: below 1 is smaller, or faster for latency, above 1 more messages per second`
}

/** ` (java --json-library gson)`: the server the formats met, with its options; nothing for node's own as it is. */
function serverNamed ({ server = 'node', serverArgs = [] }) {
  return server === 'node' && serverArgs.length === 0 ? '' : ` (${[server, ...serverArgs].join(' ')})`
}

/**
 * One sentence naming what was measured and how, for every rendering of the results.
 * @param {ComparisonResults} results
 * @returns {string}
 */
export function describeRun ({ settings, machine, generatedAt, rows }) {
  const generations = Math.max(0, ...rows.map((row) => row.generations))
  const how = settings.trials
    ? `${settings.trials} generations`
    : `${generations} generations, as many as fit the ${(settings.budgetMs / 1000).toFixed(0)} s budget`
  const elapsed = settings.elapsedMs === undefined ? '' : ` The whole comparison took ${(settings.elapsedMs / 1000).toFixed(0)} s.`
  const pinning = settings.pinning ? `; CPUs: ${settings.pinning}` : ''
  const load = settings.direction === 'fanout'
    ? `${settings.connections} subscribers, one publisher at ${settings.rate}/s`
    : `${settings.connections} connection(s) × ${settings.inflight} in flight`
  return `Measured ${generatedAt} on ${machine.cpu} (${machine.cores} cores), Node ${machine.node}, ${machine.platform}. ` +
    // A server's own warm-up (the JVM's) is stated; compare's default one goes without saying.
    `${how} after unrecorded warm-ups${settings.warmupGenerations ? ` (${settings.startWarmupMs / 1000} s of each format per client, then ${settings.warmupGenerations} generations)` : ''}, every test in short batches that take turns ` +
    `(A B, B A, ...), closed loop (${load}) for latency and msgs/s, then open loop on one schedule for CPU and codec time; ` +
    `${settings.servers} server processes${serverNamed(settings)}` +
    `${settings.ownServers?.length ? ` (and ${settings.servers} of its own for each test of messages over ${settings.ownServersBytes / 1e6} MB: ${settings.ownServers.join(', ')})` : ''} and ` +
    `${settings.servers} client processes per row for the whole run, on loopback, ` +
    'swapping formats between generations; ' +
    `${settings.repeat ? 'one message repeated (flatters compression, caches and the JIT)' : 'each test a seeded stream of varying messages'}; ` +
    `direction ${settings.direction ?? 'up'}; permessage-deflate ${settings.compress ? 'on' : 'off'}` +
    `${settings.tls ? `; over wss:// (${settings.tls.version}, ${settings.tls.cipher}: wire bytes are TLS records)` : ''}${pinning}.${elapsed}`
}

/**
 * @typedef {object} ComparisonResults the results document written as JSON and rendered as markdown and HTML
 * @property {string} generatedAt ISO time
 * @property {Record<string, number>} [methods] the method that measured it, by name and version (lib/provenance.js)
 * @property {string|null} [commit] the code's commit; null outside a git checkout
 * @property {{cpu: string, cores: number, node: string, platform: string}} machine
 * @property {{profiles: string[], compress: boolean, tls?: {version: string, cipher: string}|null, repeat: boolean, direction: string,
 *   inflight: number, connections: number,
 *   rate?: number, margin: number, messages: number|null, trials: number|null, budgetMs: number|null,
 *   budgetAsked: number|null,
 *   pinning: string, servers: number, ownServers?: string[], ownServersBytes?: number, startWarmupMs?: number,
 *   warmupGenerations?: number|null,
 *   batches: Record<string, object>,
 *   generations: Array<Omit<import('./lockstep.js').Generation, 'reports'>>,
 *   elapsedMs: number}} settings what ran: trials, a fixed number of generations, or null when as many as fit
 *   budgetMs (budgetAsked: --budget, null for the default); startWarmupMs: each client's warm-up in each format
 *   at the start, warmupGenerations: the unrecorded generations after it where a server asks for more than one;
 *   servers: how many the tests share; ownServers: the tests with servers of their own, their messages over
 *   ownServersBytes;
 *   batches: each row's batch sizes and rates;
 *   generations: how long each took, the load average, neighbours' CPU and what was saturated
 * @property {string[]} formats format labels, the columns (a format named twice gets `#2`)
 * @property {import('./statistics.js').Family} family how the table's calls were made
 * @property {{side: string, plantedUs: number, rows: object[], lines: string[]}} [calibration] with --calibrate: what was found (see calibration.js)
 * @property {ComparisonRow[]} rows
 * @property {object[]} reports every client report, histograms included
 */

/**
 * Assembles the results document.
 * @param {object[]} reports
 * @param {string[]} formats format labels, in column order
 * @param {ComparisonResults['machine']} machine where it ran
 * @param {object} settings
 * @param {{methods?: Record<string, number>, commit?: string|null}} [provenance] what made it (lib/provenance.js)
 * @returns {ComparisonResults}
 */
export function buildComparisonResults (reports, formats, machine, settings, provenance = {}) {
  const { rows, family } = comparisonRows(reports, formats, { margin: settings.margin })
  return { generatedAt: new Date().toISOString(), ...provenance, machine, settings, formats, family, rows, reports }
}

/**
 * What compare measures, as lib/provenance.js dates it: lockstep generations (formats in turn on warm
 * servers, batch clients, server CPU from the kernel, max-T calls). Bump it, with the time, when a
 * change alters what compare measures; the docs then refuse its older tables until they are remade.
 * @type {import('../provenance.js').Method}
 */
export const COMPARE_METHOD = Object.freeze({ name: 'compare', version: 2, since: '2026-11-25T17:08:00.000Z' })
