import { test } from 'node:test'
import assert from 'node:assert/strict'
import { UsageError } from '../../lib/errors.js'
import { createLatencyHistogram, decodeHistogram, encodeHistogram } from '../../lib/histogram.js'
import { resolveTest } from '../../lib/payloads/catalog.js'
import { mergeArrivals, mergeCompression, mergeConnectTimes, mergeReconnects, mergeReports, mergeTls } from '../../lib/report/merge.js'
import { buildReport } from '../../lib/report/report.js'

const T0 = 1_700_000_000_000
const STREAM = Object.freeze({ kind: 'stream', messages: 495, seed: 20261123 })

/** A histogram holding `count` values of each of `values` µs. */
function histogramOf (values, count) {
  const histogram = createLatencyHistogram()
  for (const value of values) histogram.recordValueWithCount(value, count)
  return histogram
}

/** One client's report, built as the client builds it. */
function part ({ format = 'json', test = 'medium', direction = 'up', payload = STREAM, startedAt = T0, durationMs = 1000, values = [1000], count = 10, seconds = [T0 / 1000], ...rest } = {}) {
  const histogram = histogramOf(values, count)
  const perSecond = seconds.map((t) => ({ t, acked: count / seconds.length, errors: 0, p50: 1, p99: 1, histogram: encodeHistogram(histogramOf(values, count / seconds.length)) }))
  const messages = { sent: values.length * count, acked: values.length * count, errors: 0, lost: 0 }
  return buildReport({
    messages,
    startedAt,
    durationMs,
    histogram,
    uncorrectedHistogram: null,
    bytes: { payloadPerMessage: 423, written: 500 * messages.sent, read: 5 * messages.sent },
    cpu: null,
    timeSeries: perSecond,
    target: null,
    reconnects: { count: 0, gapMs: 0 },
    interrupted: false,
    errorReplies: [],
    failure: null,
    ...rest
  }, { format, test: resolveTest(test), url: 'ws://127.0.0.1:8080', connections: 1, inflight: 2, warmup: 0, direction, payload })
}

test('counts, bytes and connections summed; the span from the earliest start to the last reply', () => {
  const merged = mergeReports([
    part({ startedAt: T0, durationMs: 1000, values: [1000], count: 10 }),
    part({ startedAt: T0 + 500, durationMs: 1500, values: [2000, 4000], count: 20 })
  ])
  assert.equal(merged.mergedFrom, 2)
  assert.deepEqual(merged.messages, { sent: 50, acked: 50, errors: 0, lost: 0 })
  assert.deepEqual([merged.bytes.payloadPerMessage, merged.bytes.written, merged.bytes.read], [423, 25_000, 250])
  assert.equal(merged.connections, 2)
  assert.equal(merged.inflight, 2)
  assert.equal(merged.startedAt, T0)
  assert.equal(merged.durationMs, 2000)
  assert.equal(merged.rate, 25, '50 acked over 2 s')
  assert.deepEqual([merged.format, merged.test, merged.testId, merged.direction, merged.ok], ['json', 'medium', 3, 'up', true])
})

test('histograms are added exactly: every count, the maximum, the percentiles of the whole', () => {
  const a = part({ values: [1000], count: 90 })
  const b = part({ values: [50_000], count: 10 })
  const merged = mergeReports([a, b])
  const histogram = decodeHistogram(merged.histogram)
  assert.equal(histogram.totalCount, 100)
  // Equal up to the histogram's precision (3 significant digits: 49,984 to 50,015 are one bucket).
  assert.equal(histogram.lowestEquivalentValue(histogram.maxValue), histogram.lowestEquivalentValue(50_000))
  assert.equal(histogram.getCountAtIndex(histogram.countsArrayIndex(1000)), 90)
  // Not an average of the parts' p99s (1 and 50 ms): the whole run's p90 and p99.
  assert.equal(merged.latencyMs.p90, 1)
  assert.ok(Math.abs(merged.latencyMs.p99 - 50) <= 0.05, `p99 ${merged.latencyMs.p99}`)
  assert.equal(merged.latencyMs.min, 1)
  assert.equal(merged.uncorrectedHistogram, null, 'no part had one')
})

test('time series: entries of one second from several parts are added up, in time order', () => {
  const s = T0 / 1000
  const merged = mergeReports([
    part({ values: [1000], count: 10, seconds: [s + 1, s] }),
    part({ values: [3000], count: 4, seconds: [s + 1, s + 2] })
  ])
  assert.deepEqual(merged.timeSeries.map(({ t, acked, errors }) => [t - s, acked, errors]), [[0, 5, 0], [1, 7, 0], [2, 2, 0]])
  const second = merged.timeSeries[1]
  assert.equal(decodeHistogram(second.histogram).totalCount, 7)
  assert.equal(second.p50, 1, 'percentiles of the added histogram')
  assert.ok(Math.abs(second.p99 - 3) <= 0.003, `p99 ${second.p99}: 3 ms within the histogram's 0.1%`)
})

test('targets add up when every part had one; CPU counts each process once; errors and reconnects add up', () => {
  const withTarget = (rate, sendRate, cpu, extra = {}) => part({ target: { rate, sendRate, pacing: 'precise' }, cpu, ...extra })
  const merged = mergeReports([
    withTarget(100, 99.96, { userUs: 1000, systemUs: 100, pacingUs: 100, process: 'a:1' }, { errorReplies: ['ERR one'], reconnects: { count: 1, gapMs: 5 } }),
    withTarget(100, 90.01, { userUs: 1500, systemUs: 100, pacingUs: 200, process: 'a:1' }, { errorReplies: ['ERR two'] }),
    withTarget(50, 50, { userUs: 700, systemUs: 0, pacingUs: 50, process: 'b:2' })
  ])
  assert.deepEqual(merged.target, { rate: 250, sendRate: 240, pacing: 'precise', pacingReason: null, met: false, missedByPercent: 4 })
  // Threads of one process (a:1) each measured the whole process: its largest figure counts once.
  // Each thread paced its own loop: pacing adds up over a process's threads, and is left out per message.
  assert.deepEqual(merged.cpu, { userUs: 2200, systemUs: 100, pacingUs: 350, perMessageUs: 65, process: '2 processes' })
  assert.deepEqual(merged.errorReplies, ['ERR one', 'ERR two'])
  assert.deepEqual(merged.reconnects, { count: 1, gapMs: 5 })
  assert.equal(mergeReports([withTarget(100, 100, null), part()]).target, null, 'a part without a target: none')
  assert.equal(mergeReports([part({ cpu: { userUs: 1, systemUs: 1 } }), part()]).cpu, null, 'a part without CPU: none')
})

test('compression: taken only if every part that offered it got it; none offered, none said', () => {
  assert.deepEqual(mergeCompression([{ accepted: true }, null, { accepted: true }]), { accepted: true })
  assert.deepEqual(mergeCompression([{ accepted: true }, { accepted: false }]), { accepted: false })
  assert.equal(mergeCompression([null, undefined]), null)
  const merged = mergeReports([part({ compression: { accepted: true } }), part({ compression: { accepted: false } })])
  assert.deepEqual(merged.compression, { accepted: false })
  assert.equal(mergeReports([part(), part()]).compression, null)
})

test('TLS: what every part negotiated, mixed where they differ, none when no part used it', () => {
  const tls13 = { version: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' }
  assert.deepEqual(mergeTls([tls13, { ...tls13 }]), tls13)
  assert.deepEqual(mergeTls([tls13, { version: 'TLSv1.3', cipher: 'TLS_AES_128_GCM_SHA256' }]), { version: 'TLSv1.3', cipher: 'mixed' })
  assert.deepEqual(mergeTls([tls13, null]), { version: 'mixed', cipher: 'mixed' }, 'a plain part beside a TLS one')
  assert.equal(mergeTls([null, undefined]), null)
  assert.deepEqual(mergeReports([part({ tls: tls13 }), part({ tls: tls13 })]).tls, tls13)
  assert.equal(mergeReports([part(), part()]).tls, null)
})

test('a part\'s own failure fails the whole; failed messages are counted again, not copied', () => {
  const lost = part({ messages: { sent: 10, acked: 9, errors: 0, lost: 1 } })
  assert.match(lost.failure, /^1 of 10 messages failed/)
  const merged = mergeReports([lost, part()])
  assert.equal(merged.ok, false)
  assert.equal(merged.failure, '1 of 20 messages failed (0 errors, 1 lost)')
  const crashed = mergeReports([part(), part({ failure: 'server closed the connection' }), lost])
  assert.equal(crashed.failure, 'server closed the connection')
  assert.equal(mergeReports([part({ interrupted: true }), part()]).interrupted, true)
})

test('a single report merges into itself, counted once', () => {
  const one = part({ values: [1000, 2000], count: 5 })
  const merged = mergeReports([one])
  assert.equal(merged.mergedFrom, 1)
  assert.deepEqual(merged.messages, one.messages)
  assert.equal(decodeHistogram(merged.histogram).totalCount, 10)
  assert.equal(merged.durationMs, one.durationMs)
})

test('refuses, with a UsageError, nothing to merge and reports of different formats, tests or directions', () => {
  assert.throws(() => mergeReports([]), (err) => err instanceof UsageError && err.message === 'nothing to merge')
  for (const [other, message] of [
    [part({ format: 'protobuf' }), "cannot merge a format 'protobuf' report with a 'json' one: merge runs of one format and test"],
    [part({ test: 'small' }), "cannot merge a test 'small' report with a 'medium' one: merge runs of one format and test"],
    [part({ direction: 'echo' }), "cannot merge a direction 'echo' report with a 'up' one: merge runs of one format and test"]
  ]) {
    assert.throws(() => mergeReports([part(), other]), (err) => err instanceof UsageError && err.message === message)
  }
})

test('what was sent (a stream, one message repeated) is kept; parts that sent different kinds are refused', () => {
  assert.deepEqual(mergeReports([part(), part()]).payload, STREAM)
  const repeated = { kind: 'repeated', messages: 1, seed: null }
  assert.deepEqual(mergeReports([part({ payload: repeated }), part({ payload: repeated })]).payload, repeated)
  assert.throws(() => mergeReports([part(), part({ payload: repeated })]),
    (err) => err instanceof UsageError && err.message === 'cannot merge a run that sent a repeated payload with one that sent a stream one')
})

test('a user\'s payload keeps its file, schema and what the schema loses', () => {
  const custom = (file) => {
    const report = part()
    return { ...report, test: 'custom', testId: null, payloadFile: file, schema: 'inferred', lossy: { differences: 1, examples: [{ path: '$.a' }] } }
  }
  const merged = mergeReports([custom('order.json'), custom('order.json')])
  assert.deepEqual([merged.test, merged.testId, merged.payloadFile, merged.schema, merged.lossy.differences], ['custom', null, 'order.json', 'inferred', 1])
})

test('the generator of merged parts is the busiest part\'s: one saturated part marks the whole', () => {
  const generator = (loopBusy, p99, cpuShare = 0.5) => ({ cpuShare, loopBusy, loopDelayMs: { p99, max: p99 * 2 }, saturated: loopBusy >= 0.9 })
  const calm = mergeReports([part({ generator: generator(0.3, 2, 0.4) }), part({ generator: generator(0.5, 4, 0.7) })])
  assert.deepEqual(calm.generator, { cpuShare: 0.7, loopBusy: 0.5, loopDelayMs: { p99: 4, max: 8 }, saturated: false })
  const busy = mergeReports([part({ generator: generator(0.3, 2) }), part({ generator: generator(0.95, 70) })])
  assert.equal(busy.generator.saturated, true)
  assert.equal(mergeReports([part({ generator: generator(0.3, 2) }), part()]).generator, null, 'a part without the figures: none')
})

test('ramps: parts on the same stages merge stage by stage (rates, messages and latencies added); other stages, none', () => {
  const stages = [{ fromMs: 0, toMs: 1000, fromRate: 0, toRate: 100, messages: 50 }, { fromMs: 1000, toMs: 2000, fromRate: 100, toRate: 0, messages: 50 }]
  const ramp = (values, spans = stages) => part({
    target: { rate: 50, sendRate: 50, pacing: 'precise', stages: spans },
    stageHistograms: spans.map(() => histogramOf(values, 50))
  })
  const merged = mergeReports([ramp([1000]), ramp([3000])])
  assert.deepEqual(merged.stages.map(({ fromMs, toMs, fromRate, toRate, messages, replies }) => [fromMs, toMs, fromRate, toRate, messages, replies]),
    [[0, 1000, 0, 200, 100, 100], [1000, 2000, 200, 0, 100, 100]])
  assert.deepEqual([merged.stages[0].latencyMs.min, Math.round(merged.stages[0].latencyMs.max)], [1, 3], "both parts' latencies")
  const other = mergeReports([ramp([1000]), ramp([1000], [{ ...stages[0], toMs: 1500 }, { ...stages[1], fromMs: 1500 }])])
  assert.equal(other.stages, null)
  assert.equal(mergeReports([part(), part()]).stages, null)
})

test('connection times: the parts\' histograms added step by step, failures summed by cause', () => {
  const times = (values, failures) => {
    const h = histogramOf(values, 1)
    return { histograms: { tcp: encodeHistogram(h), tls: null, upgrade: encodeHistogram(h), total: encodeHistogram(h) }, failures }
  }
  const merged = mergeReports([part({ connect: times([100], { refused: 1 }) }), part({ connect: times([300, 500], { refused: 2, timeout: 1 }) })])
  assert.equal(merged.connect.opened, 3)
  assert.deepEqual([merged.connect.steps.tcp.count, merged.connect.steps.tcp.max], [3, 500])
  assert.equal(merged.connect.steps.tls, null)
  assert.deepEqual(merged.connect.failures, { refused: 3, timeout: 1 })
  assert.equal(mergeConnectTimes([null, undefined]), null)
})

test('reconnects: counts and losses summed, histograms added, reopenings summed bucket by bucket, the longest outage', () => {
  const away = (values) => encodeHistogram(histogramOf(values, 1))
  const reconnects = (buckets, allBackMs, values) => ({
    count: values.length, gapMs: 10, backoff: { baseMs: 100, capMs: 5000 }, allBackMs, lost: 2, histogram: away(values), buckets, lateness: away(values.slice(1))
  })
  const merged = mergeReconnects([reconnects({ 10: 2, 11: 1 }, 300, [1000, 2000, 3000]), reconnects({ 11: 3 }, 500, [4000, 5000, 6000])])
  assert.deepEqual({ ...merged, histogram: decodeHistogram(merged.histogram).totalCount, lateness: decodeHistogram(merged.lateness).totalCount }, {
    count: 6, gapMs: 20, backoff: { baseMs: 100, capMs: 5000 }, allBackMs: 500, lost: 4, histogram: 6, buckets: { 10: 2, 11: 4 }, lateness: 4
  })
  // The busiest 100 ms of the summed buckets, sliding: 10 ms buckets 7-16 hold 1 + 3 + 4, bucket 5 has left.
  const peak = (a, b) => mergeReports([part({ reconnects: reconnects(a, 1, [1000]) }), part({ reconnects: reconnects(b, 1, [1000]) })]).reconnects.peakPer100ms
  assert.equal(peak({ 5: 2, 12: 1 }, { 14: 3, 16: 4 }), 8)
  assert.equal(peak({ 5: 2, 12: 1 }, { 14: 3 }), 6, 'within 100 ms of each other, the six count together')
  assert.equal(peak({ 95: 2, 98: 1 }, { 101: 3, 104: 4 }), 10, 'across an edge of the epoch\'s 100 ms: whole')
  assert.deepEqual(mergeReconnects([{ count: 1, gapMs: 5 }, undefined]), { count: 1, gapMs: 5 }, 'fan-out publishers without the detail')
  const { buckets: _, ...older } = { ...reconnects({}, 1, [1000]), windows: { 3: 1 } }
  assert.throws(() => mergeReconnects([reconnects({ 10: 1 }, 1, [1000]), older]),
    { name: 'UsageError', message: 'cannot merge a report of --reconnect written by an older version (reopenings per fixed 100 ms): run its client again' })
})

test('arrivals: parts that all ran arrivals add their rates and counts; otherwise none', () => {
  const arrivals = (rate, opened) => ({ rate, perConnection: 5, planned: opened, launched: opened, opened, failed: 0, completed: opened, dropped: 0 })
  const merged = mergeReports([part({ arrivals: arrivals(250, 2500) }), part({ arrivals: arrivals(250, 2499) })])
  assert.deepEqual(merged.arrivals, { rate: 500, perConnection: 5, messageRate: null, planned: 4999, launched: 4999, opened: 4999, failed: 0, completed: 4999, dropped: 0 })
  assert.equal(mergeArrivals([arrivals(1, 1), null]), null)
})
