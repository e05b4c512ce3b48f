// --out prometheus-rw against a real Prometheus (Debian's package, its remote-write receiver on, on a
// free port and in a directory of its own): short runs stream to it, and what its HTTP API answers
// is the run's report: every count exactly, latency quantiles within one bucket.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { setTimeout as delay } from 'node:timers/promises'
import { spawn } from 'node:child_process'
import { BUCKET_BOUNDS, EXPONENTIAL_SCALE } from '../../lib/outputs/histograms.js'
import { freePort } from '../../lib/server/broker-process.js'
import { DEBIAN_PROMETHEUS, startPrometheus } from '../../bench/support/prometheus.js'
import { ROOT, runScript, startServerProcess } from '../helpers.js'

const unavailable = !fs.existsSync(DEBIAN_PROMETHEUS) && !process.env.CI && `no ${DEBIAN_PROMETHEUS} (apt-get install prometheus)`

/** The value of a query that must have exactly one series. */
async function single (prometheus, promql) {
  const result = await prometheus.query(promql)
  assert.equal(result.length, 1, `${promql}: ${JSON.stringify(result)}`)
  return Number(result[0].value[1])
}

/** The index of the classic bucket a value (seconds) falls in. */
const classicBucket = (seconds) => BUCKET_BOUNDS.findIndex((bound) => seconds <= bound)
/** The index of the native bucket a value (seconds) falls in. */
const nativeBucket = (seconds) => Math.ceil(Math.log2(seconds) * 2 ** EXPONENTIAL_SCALE)

/** Every counter the report has, against what Prometheus holds for the run. */
async function assertCountsEqual (prometheus, testid, report) {
  const value = (name) => single(prometheus, `${name}{testid="${testid}"}`)
  assert.equal(await value('k6_ws_msgs_sent_total'), report.messages.sent)
  assert.equal(await value('wsbench_client_messages_acked_total'), report.messages.acked)
  assert.equal(await value('wsbench_client_message_errors_total'), report.messages.errors)
  assert.equal(await value('wsbench_client_messages_lost_total'), report.messages.lost)
  assert.equal(await value('k6_data_sent_total'), report.bytes.written)
  assert.equal(await value('k6_data_received_total'), report.bytes.read)
  assert.equal(await value('k6_ws_sessions_total'), report.connect.opened)
  assert.equal(await value('wsbench_client_cpu_seconds_total'), (report.cpu.userUs + report.cpu.systemUs) / 1e6)
}

describe('--out prometheus-rw: a real Prometheus holds what the report says', { skip: unavailable }, () => {
  let server
  before(async () => { server = await startServerProcess() })
  after(() => server.stop())

  test('classic buckets: counts equal, p50 and p99 within a bucket, pushes along the way', async () => {
    const prometheus = await startPrometheus()
    try {
      const run = await runScript('client_json.js', ['3', '--rate', '1000', '--duration', '2s', '--url', server.url, '--json',
        '--out', `prometheus-rw=${prometheus.writeUrl}`, '--out-interval', '250ms', '--tag', 'testid=classic', '--tag', 'team=bench'])
      assert.equal(run.code, 0, run.stderr)
      const report = JSON.parse(run.stdout)
      assert.deepEqual(report.tags, { testid: 'classic', team: 'bench' })
      assert.deepEqual(report.outputs, [{ kind: 'prometheus-rw', url: prometheus.writeUrl, pushes: report.outputs[0].pushes, failed: 0, error: null }])
      await assertCountsEqual(prometheus, 'classic', report)
      const [series] = await prometheus.query('k6_ws_msgs_sent_total{testid="classic"}')
      assert.deepEqual(Object.keys(series.metric).sort(), ['__name__', 'direction', 'format', 'host', 'instance', 'team', 'test', 'testid'])
      assert.equal(series.metric.test, 'medium')
      assert.equal(await single(prometheus, 'wsbench_client_latency_seconds_count{testid="classic"}'), report.messages.acked)
      for (const [quantile, field] of [[0.5, 'p50'], [0.99, 'p99']]) {
        const seconds = await single(prometheus, `histogram_quantile(${quantile}, wsbench_client_latency_seconds_bucket{testid="classic"})`)
        const reported = report.latencyMs[field] / 1000
        assert.ok(Math.abs(classicBucket(seconds) - classicBucket(reported)) <= 1, `${field}: Prometheus ${seconds} s, the report ${reported} s`)
      }
      // Pushed from the start, along the run, and once more at its end: the counter rose in steps.
      const samples = await single(prometheus, 'count_over_time(k6_ws_msgs_sent_total{testid="classic"}[10m])')
      assert.equal(samples, report.outputs[0].pushes)
      assert.ok(samples >= 4, `${samples} pushes`)
      assert.ok(await single(prometheus, 'min_over_time(k6_ws_msgs_sent_total{testid="classic"}[10m])') < report.messages.sent)
    } finally {
      await prometheus.stop()
    }
  })

  test('native histograms from --workers threads and a ramp: counts equal, p99 within a bucket, the stage', async () => {
    const prometheus = await startPrometheus({ nativeHistograms: true })
    try {
      const run = await runScript('client_protobuf.js', ['3', '--stages', '1s:1000,1s:2000', '--workers', '2', '--url', server.url, '--json',
        '--out', `prometheus-rw=${prometheus.writeUrl}`, '--out-interval', '300ms', '--out-histograms', 'native', '--tag', 'testid=native'])
      assert.equal(run.code, 0, run.stderr)
      const report = JSON.parse(run.stdout)
      await assertCountsEqual(prometheus, 'native', report)
      assert.equal(await single(prometheus, 'histogram_count(wsbench_client_latency_seconds{testid="native"})'), report.messages.acked)
      const p99 = await single(prometheus, 'histogram_quantile(0.99, wsbench_client_latency_seconds{testid="native"})')
      const reported = report.latencyMs.p99 / 1000
      assert.ok(Math.abs(nativeBucket(p99) - nativeBucket(reported)) <= 1, `p99: Prometheus ${p99} s, the report ${reported} s`)
      assert.ok(await single(prometheus, 'histogram_count(wsbench_client_send_lag_seconds{testid="native"})') > 0)
      assert.equal(await single(prometheus, 'wsbench_client_stage{testid="native"}'), 2)
      assert.equal(await single(prometheus, 'min_over_time(wsbench_client_stage{testid="native"}[10m])'), 1)
    } finally {
      await prometheus.stop()
    }
  })

  test('a backend that goes away mid-run: the run completes, its report whole, the failed pushes counted', async () => {
    const prometheus = await startPrometheus()
    const client = spawn(process.execPath, ['client_json.js', '3', '--rate', '500', '--duration', '3s', '--url', server.url, '--json',
      '--out', `prometheus-rw=${prometheus.writeUrl}`, '--out-interval', '200ms', '--tag', 'testid=gone'], { cwd: ROOT })
    let stdout = ''
    let stderr = ''
    client.stdout.on('data', (chunk) => { stdout += chunk })
    client.stderr.on('data', (chunk) => { stderr += chunk })
    const exited = new Promise((resolve) => client.once('exit', resolve))
    try {
      // Prometheus goes once it holds some of the measured phase.
      const deadline = Date.now() + 10_000
      while ((await prometheus.query('k6_ws_msgs_sent_total{testid="gone"} > 0')).length === 0) {
        assert.ok(Date.now() < deadline, 'no push reached Prometheus')
        await delay(50)
      }
    } finally {
      await prometheus.stop()
    }
    assert.equal(await exited, 0, stderr)
    const report = JSON.parse(stdout)
    assert.deepEqual(report.messages, { sent: 1500, acked: 1500, errors: 0, lost: 0 })
    const [output] = report.outputs
    assert.ok(output.failed >= 1 && output.failed < output.pushes, JSON.stringify(output))
    const warnings = stderr.split('\n').filter((line) => line.startsWith('warning: --out'))
    assert.equal(warnings.length, 1, stderr)
    assert.match(warnings[0], /push failed \(.*ECONNREFUSED.*\); the run goes on/)
  })

  test('a backend never there: one warning line, the run as without it, every push counted as failed', async () => {
    const port = await freePort('127.0.0.1')
    const run = await runScript('client_json.js', ['3', '200', '--url', server.url, '--json', '--out', `prometheus-rw=http://127.0.0.1:${port}/api/v1/write`])
    assert.equal(run.code, 0, run.stderr)
    const report = JSON.parse(run.stdout)
    assert.equal(report.messages.acked, 200)
    assert.equal(report.outputs[0].failed, report.outputs[0].pushes)
    assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr)
  })
})
