// What a run has measured so far, in one shape whatever the run: read off the send path by --out's
// timer from the running load (its counters and histograms as they stand), added up over the parts
// of a run (worker threads, a fan-out's publisher and subscribers), or taken from a finished
// report for the last push. Histograms hold microseconds, as everywhere in lib/.
import { createLatencyHistogram, decodeHistogram, encodeHistogram } from '../histogram.js'

/**
 * @typedef {import('hdr-histogram-js').Histogram} Histogram
 */

/**
 * @typedef {object} Figures what a run has measured so far (or in all)
 * @property {number|null} startedAt epoch ms the measured phase began; null before it
 * @property {{sent: number, acked: number, errors: number, lost: number}} messages the measured phase's
 * @property {Histogram|null} latency each reply's latency, µs, as the report's (null: none kept)
 * @property {Histogram|null} sendLag open loop: each message's lateness behind its due time, µs
 * @property {{written: number, read: number}} bytes on the sockets over the measured phase
 * @property {Histogram|null} connect each connection's opening (tcp, tls and upgrade), µs, reconnections too
 * @property {number} connectFailures attempts that did not open
 * @property {number} reconnects connections that dropped and came back
 * @property {number} cpuUs the client process's CPU (user and system) over the measured phase
 * @property {number|null} stage --stages: the stage under way, from 1; null without stages
 * @property {{delivered: number, lost: number|null, spread: Histogram|null}|null} fanout a fan-out's
 *   deliveries, those lost (known once the publisher's END says how many were published), and each
 *   publish's spread from its first delivery to its last, µs
 */

/**
 * Figures before anything was measured.
 * @returns {Figures}
 */
export function emptyFigures () {
  return {
    startedAt: null,
    messages: { sent: 0, acked: 0, errors: 0, lost: 0 },
    latency: null,
    sendLag: null,
    bytes: { written: 0, read: 0 },
    connect: null,
    connectFailures: 0,
    reconnects: 0,
    cpuUs: 0,
    stage: null,
    fanout: null
  }
}

const HISTOGRAMS = ['latency', 'sendLag', 'connect']

/**
 * The figures of several parts of one run taken together: counts and histograms added, the
 * earliest start, and the largest CPU figure and stage (the parts share one process and one schedule).
 * The parts' histograms are left as they are: the sums are new ones.
 * @param {Figures[]} parts
 * @returns {Figures}
 */
export function addFigures (parts) {
  if (parts.length === 1) return parts[0]
  const total = emptyFigures()
  for (const part of parts) {
    if (part.startedAt !== null) total.startedAt = Math.min(total.startedAt ?? Infinity, part.startedAt)
    for (const key of Object.keys(total.messages)) total.messages[key] += part.messages[key]
    for (const key of HISTOGRAMS) total[key] = addInto(total[key], part[key])
    total.bytes.written += part.bytes.written
    total.bytes.read += part.bytes.read
    total.connectFailures += part.connectFailures
    total.reconnects += part.reconnects
    total.cpuUs = Math.max(total.cpuUs, part.cpuUs)
    if (part.stage !== null) total.stage = Math.max(total.stage ?? 0, part.stage)
    if (part.fanout) total.fanout = addFanout(total.fanout, part.fanout)
  }
  return total
}

function addFanout (total, part) {
  if (!total) return { delivered: part.delivered, lost: part.lost, spread: addInto(null, part.spread) }
  return {
    delivered: total.delivered + part.delivered,
    lost: total.lost === null || part.lost === null ? null : total.lost + part.lost,
    spread: addInto(total.spread, part.spread)
  }
}

/** `histogram` added into `total` (made when null); null when both are. */
function addInto (total, histogram) {
  if (!histogram) return total
  const sum = total ?? createLatencyHistogram()
  sum.add(histogram)
  return sum
}

/**
 * Figures as a worker thread posts them: histograms encoded.
 * @param {Figures} figures
 * @returns {object}
 */
export function encodeFigures (figures) {
  const encoded = { ...figures }
  for (const key of HISTOGRAMS) encoded[key] = figures[key] && encodeHistogram(figures[key])
  const { fanout } = figures
  if (fanout) encoded.fanout = { ...fanout, spread: fanout.spread && encodeHistogram(fanout.spread) }
  return encoded
}

/**
 * The inverse of {@link encodeFigures}.
 * @param {object} encoded
 * @returns {Figures}
 */
export function decodeFigures (encoded) {
  const figures = { ...encoded }
  for (const key of HISTOGRAMS) figures[key] = encoded[key] ? decodeHistogram(encoded[key]) : null
  const { fanout } = encoded
  if (fanout) figures.fanout = { ...fanout, spread: fanout.spread ? decodeHistogram(fanout.spread) : null }
  return figures
}

/**
 * A finished run's figures, from its report (a client's or a merged one): what the last push sends,
 * so that what a backend holds at the end is what the report says.
 * @param {object} report
 * @returns {Figures}
 */
export function figuresOfReport (report) {
  const decoded = (encoded) => encoded ? decodeHistogram(encoded) : null
  return {
    startedAt: report.startedAt,
    messages: { ...report.messages },
    latency: decoded(report.histogram),
    sendLag: decoded(report.sendLagHistogram),
    bytes: { written: report.bytes.written, read: report.bytes.read },
    connect: decoded(report.connect?.histograms.total),
    connectFailures: Object.values(report.connect?.failures ?? {}).reduce((sum, count) => sum + count, 0),
    // The publisher's (or the client's) and, in a fan-out, the subscribers'.
    reconnects: (report.reconnects?.count ?? 0) + (report.fanout?.reconnects?.count ?? 0),
    cpuUs: report.cpu ? report.cpu.userUs + report.cpu.systemUs : 0,
    stage: report.stages ? report.stages.length : null,
    fanout: report.fanout
      ? { delivered: report.fanout.delivered, lost: report.fanout.lost, spread: spreadOf(report.fanout.perPublish) }
      : null
  }
}

/**
 * Each publish's spread, µs: from its first delivery to its last, over the publishes delivered at least once.
 * @param {{firstUs: Array<number|null>, lastUs: Array<number|null>}} perPublish
 * @returns {Histogram}
 */
export function spreadOf ({ firstUs, lastUs }) {
  const spread = createLatencyHistogram()
  for (let seq = 0; seq < firstUs.length; seq++) {
    if (firstUs[seq] !== null && firstUs[seq] !== undefined) spread.recordValue(Math.max(1, lastUs[seq] - firstUs[seq]))
  }
  return spread
}

/**
 * The parts of a running load that can say what they have measured so far: the engine adds each
 * (LoadOptions.live), and --out's timer reads them all as one run's figures.
 */
export class LiveFigures {
  constructor () {
    /** @type {Array<{figures: () => Figures|Promise<Figures>}>} */
    this.sources = []
  }

  /** @param {{figures: () => Figures|Promise<Figures>}} source a run, a fan-out, a worker thread */
  add (source) {
    this.sources.push(source)
  }

  /** @returns {Promise<Figures>} every part's figures so far, added up */
  async read () {
    if (this.sources.length === 0) return emptyFigures()
    return addFigures(await Promise.all(this.sources.map((source) => source.figures())))
  }
}
