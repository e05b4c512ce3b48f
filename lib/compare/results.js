// What `npm run compare` concludes from its runs: one row per test and network profile with the
// figures a reader compares, as a text table, a markdown table and a results document. No Node.js
// imports: the browser client renders its own trials with it.
import { describeNetwork, testLabel } from '../report/report.js'
import { int, ms, perSecond, round } from '../display.js'
import { CONFIDENCE, EQUIVALENCE_MARGIN, METRICS, overallCall, verdictsOf } from './statistics.js'

/**
 * @typedef {object} FormatFigures one format's figures in a comparison row (medians over its trials)
 * @property {number} payloadBytes encoded message size
 * @property {number} wireBytes socket bytes per message in the payload's direction: written (up, echo)
 *   or read (down); frame headers and compression included
 * @property {number} rate acknowledged messages per second
 * @property {number} p50 ms
 * @property {number} p99 ms
 * @property {number|null} clientCpu client CPU µs per message (user + system, measured phase)
 * @property {number|null} serverCpu server CPU µs per message (from its /metrics around the run)
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
 * @property {Record<string, FormatFigures[]>} trials by format label: each trial's figures, in trial order
 * @property {Record<string, Record<string, number|null>>} ratios by format after the first: that
 *   format / the first (the baseline) per figure, from the medians
 * @property {Record<string, Record<string, import('./statistics.js').Estimate>>} verdicts by format
 *   after the first: per metric (p50, p99, rate, bytes, clientCpu, serverCpu) the paired ratio, its
 *   95% interval and the call
 * @property {Record<string, 'better'|'worse'|'mixed'|'no difference'>} calls by format after the first
 */

const RATIO_FIGURES = ['payloadBytes', 'wireBytes', 'rate', 'p50', 'p99', 'clientCpu', 'serverCpu']
/** The figure each statistics metric reads. */
const METRIC_FIGURES = { p50: 'p50', p99: 'p99', rate: 'rate', bytes: 'wireBytes', clientCpu: 'clientCpu', serverCpu: 'serverCpu' }

/**
 * Groups reports by test and network profile, in run order, and works out medians, ratios,
 * intervals and calls. Reports carry the format's column label (`label`, e.g. `json#2` in an A/A
 * run) and their trial number; without them each report is its format's single trial.
 * @param {object[]} reports client `--json` reports
 * @param {string[]} labels format labels, in column order (ratios are each later one / the first)
 * @returns {ComparisonRow[]}
 */
export function comparisonRows (reports, labels) {
  const rows = new Map()
  for (const report of reports) {
    const key = `${report.test}\n${report.network.profile}`
    if (!rows.has(key)) {
      rows.set(key, {
        test: testLabel({ id: report.testId, name: report.test, file: report.payloadFile }),
        testName: report.test,
        profile: report.network.profile,
        network: describeNetwork(report.network),
        trials: {}
      })
    }
    const trials = rows.get(key).trials
    const label = report.label ?? report.format
    trials[label] ??= []
    trials[label][(report.trial ?? 1) - 1] = figuresOf(report)
  }
  const byLabel = (names, make) => Object.fromEntries(names.map((label) => [label, make(label)]))
  return [...rows.values()].map((row) => {
    const figures = byLabel(Object.keys(row.trials), (label) => summarize(row.trials[label].filter(Boolean)))
    const baseline = figures[labels[0]]
    const later = labels.slice(1)
    const ratioOf = (label, name) => baseline?.[name] > 0 && figures[label]?.[name] > 0
      ? round(figures[label][name] / baseline[name], 3)
      : null
    const ratios = byLabel(later, (label) => byLabel(RATIO_FIGURES, (name) => ratioOf(label, name)))
    const metricTrials = (label) => (row.trials[label] ?? [])
      .map((trial) => byLabel(Object.keys(METRIC_FIGURES), (metric) => trial?.[METRIC_FIGURES[metric]] ?? null))
    const verdicts = byLabel(later, (label) => verdictsOf(metricTrials(labels[0]), metricTrials(label)))
    const calls = byLabel(later, (label) => overallCall(verdicts[label]))
    return { ...row, figures, ratios, verdicts, calls }
  })
}

function figuresOf (report) {
  const { messages: m } = report
  return {
    payloadBytes: report.bytes.payloadPerMessage,
    wireBytes: m.sent > 0 ? Math.round((report.direction === 'down' ? report.bytes.read : report.bytes.written) / m.sent) : 0,
    rate: report.rate,
    p50: report.latencyMs.p50,
    p99: report.latencyMs.p99,
    clientCpu: report.cpu?.perMessageUs ?? null,
    serverCpu: report.server?.perMessageUs ?? null,
    accounting: `${m.sent}/${m.acked}/${m.errors}/${m.lost}`,
    ok: report.ok
  }
}

/** One format's figures over its trials: the median of each, accounting summed. */
function summarize (trials) {
  const median = (name) => {
    const values = trials.map((trial) => trial[name]).filter((value) => value !== null).sort((a, b) => a - b)
    if (values.length === 0) return null
    const middle = Math.floor(values.length / 2)
    return values.length % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2
  }
  const counts = trials.map((trial) => trial.accounting.split('/').map(Number))
    .reduce((sum, parts) => sum.map((value, i) => value + parts[i]), [0, 0, 0, 0])
  return {
    ...Object.fromEntries(RATIO_FIGURES.map((name) => [name, median(name)])),
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
  const digits = (value) => value >= 10 ? value.toFixed(1) : value.toFixed(2)
  return `${digits(ratio)}x${ci ? ` (${digits(ci[0])}-${digits(ci[1])})` : ''}`
}

/**
 * The answer in words: one line per test, network and format after the first, e.g.
 * `4 large, cable: protobuf vs json: p50 0.61x (0.57-0.66), ... : better`.
 * @param {ComparisonRow[]} rows
 * @param {string[]} labels
 * @returns {string[]}
 */
export function verdictLines (rows, labels) {
  return rows.flatMap((row) => labels.slice(1).map((label) => {
    const verdicts = row.verdicts[label] ?? {}
    const figures = Object.entries(METRICS).filter(([name]) => verdicts[name]).map(([name, { label: metric, unit = '' }]) =>
      `${metric} ${ratioText(verdicts[name])}${unit}${verdicts[name].call === 'no difference' ? ' ≈' : ''}`)
    const call = row.calls[label]
    const detail = call === 'mixed' ? ` (${['better', 'worse'].map((side) => `${side}: ${namesCalled(verdicts, side)}`).join('; ')})` : ''
    return `${row.test}, ${row.profile === 'none' ? 'loopback' : row.profile}: ${label} vs ${labels[0]}: ${figures.join(', ')}: ${call}${detail}`
  }))
}

const namesCalled = (verdicts, call) => Object.entries(verdicts).filter(([, estimate]) => estimate.call === call)
  .map(([name]) => METRICS[name].label).join(', ')

/**
 * Which metrics could not be told apart, per format after the first, for the captions.
 * @param {ComparisonRow} row
 * @param {string} label
 * @returns {string[]} metric labels called `no difference`
 */
export function undecided (row, label) {
  return Object.entries(row.verdicts[label] ?? {}).filter(([, estimate]) => estimate.call === 'no difference').map(([name]) => METRICS[name].label)
}

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
    ['server CPU µs/msg', optional((value) => value.toFixed(1)), 'serverCpu']
  ]
  const metricOf = Object.fromEntries(Object.entries(METRIC_FIGURES).map(([metric, figure]) => [figure, metric]))
  const header = ['test', 'network', 'format', ...columns.map(([label]) => label), 'sent/acked/errors/lost']
  const body = rows.flatMap((row) => {
    const lines = formats.map((format, i) => {
      const figures = row.figures[format]
      const where = i === 0 ? [row.test, row.profile] : ['', '']
      return [...where, format, ...columns.map(([, show, name]) => figures ? show(figures[name]) : 'n/a'), figures?.accounting ?? 'not run']
    })
    // Ratios as the verdicts estimate them (paired trials), marked ≈ where the interval cannot tell
    // them from 1; the encoded size has no verdict and is the ratio of the two sizes.
    const ratioCell = (format, name) => {
      const estimate = row.verdicts[format]?.[metricOf[name]]
      if (estimate) return `${ratioText({ ratio: estimate.ratio, ci: null })}${estimate.call === 'no difference' ? ' ≈' : ''}`
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
  return [
    `# ${results.formats.join(' vs ')} over WebSocket`,
    '',
    describeRun(results),
    '',
    ...(verdicts.length ? ['## Verdict', '', ...verdicts.map((text) => `- ${text}`), '', verdictMeaning(results.settings), ''] : []),
    '## Figures',
    '',
    line(header),
    line(header.map((_, i) => i < 3 ? '---' : '---:')),
    ...body.map(line),
    '',
    'B/msg: encoded message; wire B/msg: bytes on the socket per message in the payload\'s direction (frame headers, and compression when on); ' +
      'msgs/s: acknowledged messages per second; p50/p99: latency from send to ACK; CPU: user + system µs per message, the client\'s over ' +
      'its measured phase, the server\'s from its /metrics around each run. Figures are medians over the trials. ' +
      `Ratios are ${ratioMeaning(results.formats)}.`,
    ''
  ].join('\n')
}

/**
 * How the calls were made, for the captions of every rendering.
 * @param {{trials?: number}} settings
 * @returns {string}
 */
export function verdictMeaning ({ trials = 1 }) {
  return `Each ratio is the geometric mean over ${trials} paired trial${trials === 1 ? '' : 's'} with its ${CONFIDENCE * 100}% confidence interval ` +
    `(Student's t on the log ratios). better or worse: the interval excludes 1 and the ratio is more than ${EQUIVALENCE_MARGIN * 100}% from it, ` +
    'better meaning lower latency, bytes and CPU or more msgs/s; ≈: no difference could be told; mixed: some metrics better, some worse.'
}

/**
 * What the ratio lines mean, for the captions of every rendering.
 * @param {string[]} formats
 * @returns {string}
 */
export function ratioMeaning (formats) {
  return `each format / ${formats[0]}: below 1 is smaller, or faster for latency, above 1 more messages per second`
}

/**
 * One sentence naming what was measured and how, for every rendering of the results.
 * @param {ComparisonResults} results
 * @returns {string}
 */
export function describeRun ({ settings, machine, generatedAt }) {
  const runs = Object.entries(settings.runs).map(([test, { messages, warmup }]) => `${test} ${messages} (+${warmup} warmup)`).join(', ')
  const trials = settings.trials ?? 1
  const elapsed = settings.elapsedMs === undefined ? '' : ` The whole comparison took ${(settings.elapsedMs / 1000).toFixed(0)} s.`
  return `Measured ${generatedAt} on ${machine.cpu} (${machine.cores} cores), Node ${machine.node}, ${machine.platform}. ` +
    `${trials} trial${trials === 1 ? '' : 's'} of each format, in alternating order, each a fresh client process; ` +
    `messages per trial: ${runs}; ${settings.connections} connection(s) × ${settings.inflight} in flight; ` +
    `direction ${settings.direction ?? 'up'}; permessage-deflate ${settings.compress ? 'on' : 'off'}; a server of its own on loopback.${elapsed}`
}

/**
 * @typedef {object} ComparisonResults the results document written as JSON and rendered as markdown and HTML
 * @property {string} generatedAt ISO time
 * @property {{cpu: string, cores: number, node: string, platform: string}} machine
 * @property {{profiles: string[], compress: boolean, direction: string, inflight: number, connections: number,
 *   trials: number, order: Array<{test: string, profile: string, format: string, trial: number}>, elapsedMs: number,
 *   serverMetrics: string, runs: Record<string, {messages: number, warmup: number}>}} settings what ran, in which
 *   order, runs by test label
 * @property {string[]} formats format labels, the columns (a format named twice gets `#2`)
 * @property {ComparisonRow[]} rows
 * @property {object[]} reports every client report, histograms included
 */

/**
 * Assembles the results document.
 * @param {object[]} reports
 * @param {string[]} formats format labels, in column order
 * @param {ComparisonResults['machine']} machine where it ran
 * @param {object} settings
 * @returns {ComparisonResults}
 */
export function buildComparisonResults (reports, formats, machine, settings) {
  return {
    generatedAt: new Date().toISOString(),
    machine,
    settings,
    formats,
    rows: comparisonRows(reports, formats),
    reports
  }
}
