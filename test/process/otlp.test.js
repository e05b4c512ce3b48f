// --out otlp against a real receiver: Prometheus 3, built from its Go module (.ci/prometheus.sh, its
// path in PROMETHEUS_OTLP), its OTLP receiver on. What OpenTelemetry's exporter delivered is, by the
// names Prometheus makes of it, the run's report: every count exactly, quantiles within one bucket.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { startPrometheus } from '../../bench/support/prometheus.js'
import { runScript, startServerProcess } from '../helpers.js'
import { assertCountsEqual, assertQuantileWithinBucket, single } from './prometheus-checks.js'

const program = process.env.PROMETHEUS_OTLP
const unavailable = !program && !process.env.CI && 'PROMETHEUS_OTLP unset: PROMETHEUS_OTLP="$(bash .ci/prometheus.sh)" builds Prometheus 3 (once, ~10 min)'

describe('--out otlp: Prometheus 3\'s OTLP receiver holds what the report says', { skip: unavailable }, () => {
  let server
  let prometheus
  before(async () => {
    assert.ok(program, 'PROMETHEUS_OTLP: the path of a Prometheus 3 (bash .ci/prometheus.sh)')
    ;[server, prometheus] = await Promise.all([startServerProcess(), startPrometheus({ program, otlp: true })])
  })
  after(() => Promise.all([server?.stop(), prometheus?.stop()]))

  test('explicit buckets: the same names as remote write, counts equal, p50 and p99 within a bucket', async () => {
    const run = await runScript('client_json.js', ['3', '--rate', '1000', '--duration', '2s', '--url', server.url, '--json',
      '--out', `otlp=${prometheus.otlpUrl}`, '--out-interval', '250ms', '--tag', 'testid=otlp-buckets'])
    assert.equal(run.code, 0, run.stderr)
    const report = JSON.parse(run.stdout)
    assert.deepEqual(report.outputs, [{ kind: 'otlp', url: prometheus.otlpUrl, pushes: report.outputs[0].pushes, failed: 0, error: null }])
    await assertCountsEqual(prometheus, 'testid="otlp-buckets"', report)
    const [series] = await prometheus.query('k6_ws_msgs_sent_total{testid="otlp-buckets"}')
    assert.equal(series.metric.job, 'ws-json-vs-protobuf')
    assert.match(series.metric.instance, /:\d+$/)
    assert.equal(await single(prometheus, 'wsbench_client_latency_seconds_count{testid="otlp-buckets"}'), report.messages.acked)
    await assertQuantileWithinBucket(prometheus, 'testid="otlp-buckets"', report, { quantile: 0.5, field: 'p50', native: false })
    await assertQuantileWithinBucket(prometheus, 'testid="otlp-buckets"', report, { quantile: 0.99, field: 'p99', native: false })
    assert.equal(await single(prometheus, 'count_over_time(k6_ws_msgs_sent_total{testid="otlp-buckets"}[10m])'), report.outputs[0].pushes)
  })

  test('exponential histograms of a fan-out: deliveries, losses and the publisher\'s counts equal, p99 within a bucket', async () => {
    const run = await runScript('client_protobuf.js', ['3', '--direction', 'fanout', '--connections', '3', '--rate', '200', '--duration', '1s',
      '--url', server.url, '--json', '--out', `otlp=${prometheus.otlpUrl}`, '--out-interval', '250ms', '--out-histograms', 'native',
      '--tag', 'testid=otlp-fanout'])
    assert.equal(run.code, 0, run.stderr)
    const report = JSON.parse(run.stdout)
    await assertCountsEqual(prometheus, 'testid="otlp-fanout"', report)
    assert.equal(await single(prometheus, 'wsbench_client_fanout_deliveries_total{testid="otlp-fanout"}'), report.fanout.delivered)
    assert.equal(await single(prometheus, 'wsbench_client_fanout_lost_total{testid="otlp-fanout"}'), report.fanout.lost)
    assert.equal(await single(prometheus, 'histogram_count(wsbench_client_latency_seconds{testid="otlp-fanout"})'), report.fanout.delivered)
    assert.equal(await single(prometheus, 'histogram_count(wsbench_client_fanout_spread_seconds{testid="otlp-fanout"})'), report.fanout.published)
    await assertQuantileWithinBucket(prometheus, 'testid="otlp-fanout"', report, { quantile: 0.99, field: 'p99', native: true })
  })
})
