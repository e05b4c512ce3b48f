// --out prometheus-rw against a real Prometheus (Debian's package, its remote-write receiver on, on a
// free port and in a directory of its own): short runs stream to it, and what its HTTP API answers
// is the run's report: every count exactly, latency quantiles within one bucket.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { spawn } from 'node:child_process'
import { freePort } from '../../lib/server/broker-process.js'
import { decodeHistogram } from '../../lib/histogram.js'
import { DEBIAN_PROMETHEUS, startPrometheus } from '../../bench/support/prometheus.js'
import { ROOT, runScript, startServerProcess, temporaryDirectory } from '../helpers.js'
import { assertCountsEqual, assertQuantileWithinBucket, single } from './prometheus-checks.js'

const unavailable = !fs.existsSync(DEBIAN_PROMETHEUS) && !process.env.CI && `no ${DEBIAN_PROMETHEUS} (apt-get install prometheus)`

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
      await assertCountsEqual(prometheus, 'testid="classic"', report)
      const [series] = await prometheus.query('k6_ws_msgs_sent_total{testid="classic"}')
      assert.deepEqual(Object.keys(series.metric).sort(), ['__name__', 'direction', 'format', 'host', 'instance', 'team', 'test', 'testid'])
      assert.equal(series.metric.test, 'medium')
      assert.equal(await single(prometheus, 'wsbench_client_latency_seconds_count{testid="classic"}'), report.messages.acked)
      await assertQuantileWithinBucket(prometheus, 'testid="classic"', report, { quantile: 0.5, field: 'p50', native: false })
      await assertQuantileWithinBucket(prometheus, 'testid="classic"', report, { quantile: 0.99, field: 'p99', native: false })
      // Pushed from the start, along the run, and once more at its end: the counter rose in steps.
      const samples = await single(prometheus, 'count_over_time(k6_ws_msgs_sent_total{testid="classic"}[10m])')
      assert.equal(samples, report.outputs[0].pushes)
      assert.ok(samples >= 4, `${samples} pushes`)
      // What the pushes cost the client, counted on their own thread: some CPU, a small part of the run's.
      assert.ok(report.outputsCpuUs > 0 && report.outputsCpuUs < report.cpu.userUs + report.cpu.systemUs, `${report.outputsCpuUs} µs`)
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
      await assertCountsEqual(prometheus, 'testid="native"', report)
      assert.equal(await single(prometheus, 'histogram_count(wsbench_client_latency_seconds{testid="native"})'), report.messages.acked)
      await assertQuantileWithinBucket(prometheus, 'testid="native"', report, { quantile: 0.99, field: 'p99', native: true })
      assert.ok(await single(prometheus, 'histogram_count(wsbench_client_send_lag_seconds{testid="native"})') > 0)
      assert.equal(await single(prometheus, 'wsbench_client_stage{testid="native"}'), 2)
      assert.equal(await single(prometheus, 'min_over_time(wsbench_client_stage{testid="native"}[10m])'), 1)
    } finally {
      await prometheus.stop()
    }
  })

  test('several processes, then merge: their series add up to the merged report, which merge pushes too', async () => {
    const prometheus = await startPrometheus()
    const dir = temporaryDirectory('prometheus-merge')
    try {
      const parts = await Promise.all(['a', 'b'].map((name) => runScript('client_json.js', ['3', '--rate', '500', '--duration', '1s',
        '--url', server.url, '--out', path.join(dir, `${name}.json`), '--out', `prometheus-rw=${prometheus.writeUrl}`, '--tag', 'testid=merged'])))
      for (const part of parts) assert.equal(part.code, 0, part.stderr)
      const run = await runScript('bin/merge.js', [path.join(dir, 'a.json'), path.join(dir, 'b.json'), '--json', '--out', `prometheus-rw=${prometheus.writeUrl}`])
      assert.equal(run.code, 0, run.stderr)
      const merged = JSON.parse(run.stdout)
      assert.equal(merged.tags.testid, 'merged', 'the parts\' run id')
      const hosts = '{testid="merged", instance!="merged"}'
      assert.equal(await single(prometheus, `sum(k6_ws_msgs_sent_total${hosts})`), merged.messages.sent)
      assert.equal(await single(prometheus, `sum(wsbench_client_messages_acked_total${hosts})`), merged.messages.acked)
      assert.equal(await single(prometheus, `sum(k6_data_sent_total${hosts})`), merged.bytes.written)
      await assertCountsEqual(prometheus, 'testid="merged", instance="merged"', merged)
      await assertQuantileWithinBucket(prometheus, 'testid="merged", instance="merged"', merged, { quantile: 0.99, field: 'p99', native: false })
      // The hosts' buckets, added in PromQL, are the merged report's: their bounds are the same everywhere.
      await assertQuantileWithinBucket(prometheus, 'testid="merged", instance!="merged"', merged, { quantile: 0.99, field: 'p99', native: false, sum: true })
    } finally {
      await prometheus.stop()
    }
  })

  test('compare pushes each format\'s trials, added up, once it is done', async () => {
    const prometheus = await startPrometheus()
    try {
      const run = await runScript('bin/compare.js', ['--tests', 'small', '-n', '10', '--trials', '2', '--start-warmup', '100ms', '--json',
        '--out', temporaryDirectory('prometheus-compare'), '--out', `prometheus-rw=${prometheus.writeUrl}`, '--tag', 'testid=compare'])
      assert.equal(run.code, 0, run.stderr)
      const results = JSON.parse(run.stdout)
      assert.deepEqual(results.outputs, [{ kind: 'prometheus-rw', url: prometheus.writeUrl, pushes: 1, failed: 0, error: null }])
      for (const format of ['json', 'protobuf']) {
        const trials = results.reports.filter((report) => report.label === format)
        const sum = (pick) => trials.reduce((total, report) => total + pick(report), 0)
        const matchers = `{testid="compare", format="${format}", test="small", network="none"}`
        assert.equal(await single(prometheus, `k6_ws_msgs_sent_total${matchers}`), sum((r) => r.messages.sent))
        assert.equal(await single(prometheus, `k6_data_sent_total${matchers}`), sum((r) => r.bytes.written))
        assert.equal(await single(prometheus, `wsbench_client_latency_seconds_count${matchers}`), sum((r) => decodeHistogram(r.histogram).totalCount))
      }
    } finally {
      await prometheus.stop()
    }
  })

  test('the server\'s /metrics, scraped, and the clients\' series join on the run id; every dashboard panel has data', async () => {
    const tagged = await startServerProcess(['--tag', 'testid=joined'])
    const prometheus = await startPrometheus({ scrape: new URL(tagged.url).host })
    try {
      const run = await runScript('client_json.js', ['3', '--stages', '1s:300,1s:300', '--url', tagged.url, '--json',
        '--out', `prometheus-rw=${prometheus.writeUrl}`, '--out-interval', '250ms', '--tag', 'testid=joined'])
      assert.equal(run.code, 0, run.stderr)
      const { messages } = JSON.parse(run.stdout)
      // The server's count reaches Prometheus at its next scrape.
      const served = 'sum by (testid) (wsbench_messages_total{job="ws-bench"})'
      const deadline = Date.now() + 10_000
      while ((await prometheus.query(`${served} == ${messages.acked}`)).length === 0) {
        assert.ok(Date.now() < deadline, 'the server\'s count never reached Prometheus')
        await delay(100)
      }
      // Messages the server answered per message the clients sent, matched on testid.
      assert.equal(await single(prometheus, `${served} / on (testid) sum by (testid) (k6_ws_msgs_sent_total)`), 1)
      assert.ok(await single(prometheus, 'sum by (testid) (process_cpu_seconds_total{job="ws-bench", testid="joined"})') > 0)
      // deploy/grafana's dashboard, for this run: every query is valid PromQL, every panel shows something.
      const dashboard = JSON.parse(fs.readFileSync(path.join(ROOT, 'deploy', 'grafana', 'ws-bench.json'), 'utf8'))
      const variables = { testid: 'joined', server_job: 'ws-bench', __rate_interval: '10m' }
      for (const panel of dashboard.panels) {
        const results = await Promise.all(panel.targets.map(({ expr }) => prometheus.query(expr.replace(/\$(\w+)/g, (_, name) => variables[name]))))
        assert.ok(results.some((result) => result.length > 0), `${panel.title}: no data`)
      }
    } finally {
      await Promise.all([prometheus.stop(), tagged.stop()])
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
