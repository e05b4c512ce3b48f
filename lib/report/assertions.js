// CI thresholds: `--assert "p99<20ms"` and friends, checked against a finished report.
import { UsageError } from '../errors.js'

/** Metrics a threshold may name, read from a report; latencies in milliseconds. */
const METRICS = {
  p50: (r) => r.latencyMs.p50,
  p90: (r) => r.latencyMs.p90,
  p99: (r) => r.latencyMs.p99,
  p999: (r) => r.latencyMs.p999,
  max: (r) => r.latencyMs.max,
  mean: (r) => r.latencyMs.mean,
  rate: (r) => r.rate,
  sent: (r) => r.messages.sent,
  acked: (r) => r.messages.acked,
  errors: (r) => r.messages.errors,
  lost: (r) => r.messages.lost
}
const LATENCY = new Set(['p50', 'p90', 'p99', 'p999', 'max', 'mean'])
const TO_MS = { us: 0.001, µs: 0.001, ms: 1, s: 1000 }
const COMPARE = {
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
  '==': (a, b) => a === b,
  '!=': (a, b) => a !== b
}

/**
 * @typedef {object} Threshold
 * @property {string} text as the user wrote it
 * @property {string} metric
 * @property {string} operator
 * @property {number} limit in the metric's unit (ms for latencies)
 */

/**
 * Parses threshold expressions before anything runs, so a typo fails fast.
 * @param {string[]} expressions e.g. `p99<20ms`, `errors==0`, `rate>=5000`
 * @returns {Threshold[]}
 * @throws {UsageError} naming the expression and what is accepted
 */
export function parseAssertions (expressions) {
  return expressions.map((text) => {
    const match = /^\s*([a-z0-9]+)\s*(<=|>=|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)\s*(us|µs|ms|s)?\s*$/.exec(text)
    if (!match || !(match[1] in METRICS)) {
      throw new UsageError(`--assert '${text}': expected <metric><op><number>[unit] with metric ${Object.keys(METRICS).join('|')}, op < <= > >= == !=, e.g. "p99<20ms"`)
    }
    const [, metric, operator, number, unit] = match
    if (unit && !LATENCY.has(metric)) throw new UsageError(`--assert '${text}': ${metric} takes no unit`)
    return { text, metric, operator, limit: Number(number) * (LATENCY.has(metric) ? TO_MS[unit ?? 'ms'] : 1) }
  })
}

/**
 * Checks a report against thresholds.
 * @param {Threshold[]} thresholds
 * @param {object} report a client report
 * @returns {string[]} one line per violated threshold (empty: all hold)
 */
export function violatedAssertions (thresholds, report) {
  // A fan-out whose own generator closed subscribers measured itself: no threshold holds on it.
  const invalid = thresholds.length > 0 && report.fanout?.invalid ? [`assertion failed: the run is invalid: ${report.fanout.invalid}`] : []
  return [...invalid, ...thresholds.flatMap(({ text, metric, operator, limit }) => {
    const actual = METRICS[metric](report)
    if (COMPARE[operator](actual, limit)) return []
    const unit = LATENCY.has(metric) ? ' ms' : ''
    return [`assertion failed: ${text.trim()} (${metric} was ${actual}${unit})`]
  })]
}
