import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createLatencyHistogram } from '../../lib/histogram.js'
import { BUCKET_BOUNDS } from '../../lib/outputs/histograms.js'
import { pointsOf } from '../../lib/outputs/metrics.js'
import { emptyFigures } from '../../lib/outputs/figures.js'
import { writeRequest } from '../../lib/outputs/remote-write.js'

const latency = createLatencyHistogram()
for (const us of [1000, 1000, 2000]) latency.recordValue(us)
const figures = { ...emptyFigures(), startedAt: 1, messages: { sent: 3, acked: 3, errors: 0, lost: 0 }, latency }
const labels = { testid: 'r1', test: 'medium', format: 'json', direction: 'up', host: 'h', instance: 'h:1', Zone: 'a' }
const named = (request, name) => request.timeseries.filter((series) => series.labels.find((label) => label.name === '__name__').value === name)

test('a push sends what the run has: no send lag, stage or fan-out series where it has none', () => {
  const sent = pointsOf(figures).map(({ metric }) => metric.name)
  assert.ok(sent.includes('wsbench_client_latency'))
  for (const absent of ['wsbench_client_send_lag', 'wsbench_client_stage', 'wsbench_client_fanout_deliveries', 'k6_ws_connecting']) {
    assert.ok(!sent.includes(absent), absent)
  }
})

test('classic buckets: cumulative _bucket series with le up to +Inf, _sum and _count; labels sorted by name', () => {
  const request = writeRequest([{ points: pointsOf(figures), labels }], 1234, false)
  for (const series of request.timeseries) {
    const names = series.labels.map((label) => label.name)
    assert.deepEqual(names, [...names].sort())
  }
  const buckets = named(request, 'wsbench_client_latency_seconds_bucket')
  assert.equal(buckets.length, BUCKET_BOUNDS.length + 1)
  const counts = buckets.map((series) => series.samples[0].value)
  assert.deepEqual(counts, [...counts].sort((a, b) => a - b), 'cumulative')
  assert.equal(counts.at(-1), 3)
  assert.equal(buckets.at(-1).labels.find((label) => label.name === 'le').value, '+Inf')
  assert.equal(named(request, 'wsbench_client_latency_seconds_count')[0].samples[0].value, 3)
  assert.deepEqual(named(request, 'k6_ws_msgs_sent_total')[0].samples, [{ value: 3, timestamp: 1234 }])
})

test('native histograms: one sample, one span over the buckets held, counts as deltas', () => {
  const request = writeRequest([{ points: pointsOf(figures), labels }], 1234, true)
  const [series] = named(request, 'wsbench_client_latency_seconds')
  const [sample] = series.histograms
  assert.equal(sample.count_int, 3)
  assert.equal(sample.schema, 3)
  assert.equal(sample.timestamp, 1234)
  // 1 ms and 2 ms: an octave, eight buckets, apart.
  assert.deepEqual(sample.positive_spans.map((span) => span.length), [9])
  assert.equal(sample.positive_deltas.reduce((sum, delta, i, all) => sum + all.slice(0, i + 1).reduce((a, b) => a + b, 0), 0), 3)
  assert.equal(named(request, 'wsbench_client_latency_seconds_bucket').length, 0)
})
