// What `npm run compare` concludes from its runs: one row per test and network profile with the
// figures a reader compares, as a text table, a markdown table and a results document.
import os from 'node:os'
import { describeNetwork, testLabel } from '../report/report.js'
import { int, ms, perSecond, round } from '../numbers.js'

/**
 * @typedef {object} FormatFigures one format's figures in a comparison row
 * @property {number} payloadBytes encoded message size
 * @property {number} wireBytes socket bytes per message in the payload's direction: written (up, echo)
 *   or read (down); frame headers and compression included
 * @property {number} rate acknowledged messages per second
 * @property {number} p50 ms
 * @property {number} p99 ms
 * @property {string} accounting sent/acked/errors/lost
 * @property {boolean} ok
 */

/**
 * @typedef {object} ComparisonRow
 * @property {string} test label, e.g. `3 medium`
 * @property {string} testName as reports name it, e.g. `medium`
 * @property {string} profile network profile name
 * @property {string} network the profile in words
 * @property {Record<string, FormatFigures>} figures by format
 * @property {Record<string, Record<string, number|null>>} ratios by format after the first: that
 *   format / the first (the baseline) per figure
 */

const RATIO_FIGURES = ['payloadBytes', 'wireBytes', 'rate', 'p50', 'p99']

/**
 * Groups reports by test and network profile, in run order, and works out the ratios.
 * @param {object[]} reports client `--json` reports
 * @param {string[]} formats format names, in column order (ratios are each later one / the first)
 * @returns {ComparisonRow[]}
 */
export function comparisonRows (reports, formats) {
  const rows = new Map()
  for (const report of reports) {
    const key = `${report.test}\n${report.network.profile}`
    if (!rows.has(key)) {
      rows.set(key, {
        test: testLabel({ id: report.testId, name: report.test, file: report.payloadFile }),
        testName: report.test,
        profile: report.network.profile,
        network: describeNetwork(report.network),
        figures: {}
      })
    }
    rows.get(key).figures[report.format] = figuresOf(report)
  }
  return [...rows.values()].map((row) => {
    const baseline = row.figures[formats[0]]
    const ratios = Object.fromEntries(formats.slice(1).map((format) => {
      const figures = row.figures[format]
      return [format, Object.fromEntries(RATIO_FIGURES.map((name) =>
        [name, baseline && figures && baseline[name] > 0 ? round(figures[name] / baseline[name], 3) : null]))]
    }))
    return { ...row, ratios }
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
    accounting: `${m.sent}/${m.acked}/${m.errors}/${m.lost}`,
    ok: report.ok
  }
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
  const columns = [
    ['B/msg', (f) => int(f.payloadBytes), 'payloadBytes'],
    ['wire B/msg', (f) => int(f.wireBytes), 'wireBytes'],
    ['msgs/s', (f) => perSecond(f.rate), 'rate'],
    ['p50 ms', (f) => ms(f.p50), 'p50'],
    ['p99 ms', (f) => ms(f.p99), 'p99']
  ]
  const header = ['test', 'network', 'format', ...columns.map(([label]) => label), 'sent/acked/errors/lost']
  const body = rows.flatMap((row) => {
    const lines = formats.map((format, i) => {
      const figures = row.figures[format]
      const where = i === 0 ? [row.test, row.profile] : ['', '']
      return [...where, format, ...columns.map(([, show]) => figures ? show(figures) : 'n/a'), figures?.accounting ?? 'not run']
    })
    const ratioLines = formats.slice(1).map((format) => ['', '', `${format}/${formats[0]}`,
      ...columns.map(([, , name]) => row.ratios[format][name] === null ? 'n/a' : `${row.ratios[format][name].toFixed(2)}x`), ''])
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
  return [
    `# ${results.formats.join(' vs ')} over WebSocket`,
    '',
    describeRun(results),
    '',
    line(header),
    line(header.map((_, i) => i < 3 ? '---' : '---:')),
    ...body.map(line),
    '',
    'B/msg: encoded message; wire B/msg: bytes on the socket per message in the payload\'s direction (frame headers, and compression when on); ' +
      `msgs/s: acknowledged messages per second; p50/p99: latency from send to ACK. Ratios are ${ratioMeaning(results.formats)}.`,
    ''
  ].join('\n')
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
  return `Measured ${generatedAt} on ${machine.cpu} (${machine.cores} cores), Node ${machine.node}, ${machine.platform}. ` +
    `Messages per run: ${runs}; ${settings.connections} connection(s) × ${settings.inflight} in flight; ` +
    `direction ${settings.direction ?? 'up'}; permessage-deflate ${settings.compress ? 'on' : 'off'}; embedded server on loopback.`
}

/**
 * @typedef {object} ComparisonResults the results document written as JSON and rendered as markdown and HTML
 * @property {string} generatedAt ISO time
 * @property {{cpu: string, cores: number, node: string, platform: string}} machine
 * @property {{profiles: string[], compress: boolean, direction: string, inflight: number, connections: number,
 *   runs: Record<string, {messages: number, warmup: number}>}} settings what ran, runs by test label
 * @property {string[]} formats
 * @property {ComparisonRow[]} rows
 * @property {object[]} reports every client report, histograms included
 */

/**
 * Assembles the results document.
 * @param {object[]} reports
 * @param {string[]} formats
 * @param {object} settings
 * @returns {ComparisonResults}
 */
export function buildComparisonResults (reports, formats, settings) {
  return {
    generatedAt: new Date().toISOString(),
    machine: { cpu: os.cpus()[0]?.model.trim() ?? 'unknown CPU', cores: os.availableParallelism(), node: process.versions.node, platform: `${os.type()} ${os.release()}` },
    settings,
    formats,
    rows: comparisonRows(reports, formats),
    reports
  }
}
