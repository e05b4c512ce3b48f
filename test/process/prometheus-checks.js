// What the --out tests check in a real Prometheus, whichever way the metrics came (remote write, OTLP).
import assert from 'node:assert/strict'
import { BUCKET_BOUNDS, EXPONENTIAL_SCALE } from '../../lib/outputs/histograms.js'

/** The value of a query that must have exactly one series. */
export async function single (prometheus, promql) {
  const result = await prometheus.query(promql)
  assert.equal(result.length, 1, `${promql}: ${JSON.stringify(result)}`)
  return Number(result[0].value[1])
}

/** The index of the classic bucket a value (seconds) falls in. */
const classicBucket = (seconds) => BUCKET_BOUNDS.findIndex((bound) => seconds <= bound)
/** The index of the native bucket a value (seconds) falls in. */
const nativeBucket = (seconds) => Math.ceil(Math.log2(seconds) * 2 ** EXPONENTIAL_SCALE)

/**
 * Every counter of the report, against what Prometheus holds for the run.
 * @param {{query: Function}} prometheus
 * @param {string} matchers the run's series, e.g. `testid="run-1"`
 * @param {object} report
 */
export async function assertCountsEqual (prometheus, matchers, report) {
  const value = (name) => single(prometheus, `${name}{${matchers}}`)
  assert.equal(await value('k6_ws_msgs_sent_total'), report.messages.sent)
  assert.equal(await value('wsbench_client_messages_acked_total'), report.messages.acked)
  assert.equal(await value('wsbench_client_message_errors_total'), report.messages.errors)
  assert.equal(await value('wsbench_client_messages_lost_total'), report.messages.lost)
  assert.equal(await value('k6_data_sent_total'), report.bytes.written)
  assert.equal(await value('k6_data_received_total'), report.bytes.read)
  assert.equal(await value('k6_ws_sessions_total'), report.connect.opened)
  assert.equal(await value('wsbench_client_cpu_seconds_total'), (report.cpu.userUs + report.cpu.systemUs) / 1e6)
}

/**
 * A latency quantile from Prometheus's histogram against the report's: within one bucket.
 * @param {{query: Function}} prometheus
 * @param {string} matchers the run's series, e.g. `testid="run-1"`
 * @param {object} report
 * @param {{quantile: number, field: string, native: boolean, sum?: boolean}} which sum: of every series matched
 */
export async function assertQuantileWithinBucket (prometheus, matchers, report, { quantile, field, native, sum = false }) {
  const series = native ? `wsbench_client_latency_seconds{${matchers}}` : `wsbench_client_latency_seconds_bucket{${matchers}}`
  const summed = sum ? `sum by (${native ? '' : 'le'}) (${series})` : series
  const seconds = await single(prometheus, `histogram_quantile(${quantile}, ${summed})`)
  const reported = report.latencyMs[field] / 1000
  const bucket = native ? nativeBucket : classicBucket
  assert.ok(Math.abs(bucket(seconds) - bucket(reported)) <= 1, `${field}: Prometheus ${seconds} s, the report ${reported} s`)
}
