import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createLatencyHistogram, decodeHistogram, encodeHistogram } from '../../lib/histogram.js'
import { resolveTest } from '../../lib/payloads/catalog.js'
import {
  SATURATED_LOOP_BUSY, SATURATED_LOOP_DELAY_MS, buildReport, cpuPerMessage, describeNetwork, describePayload, describeTarget, formatReport, judgeGenerator, testLabel
} from '../../lib/report/report.js'

const NETWORK = { profile: '3g', up: 768, down: 1600, rtt: 150, loss: 0, backend: 'proxy', reason: 'userspace shaping proxy, each connection a link of its own' }

/** A histogram of 90 replies at 800 µs and 10 at 3 ms. */
function latencies () {
  const histogram = createLatencyHistogram()
  for (let i = 0; i < 90; i++) histogram.recordValue(800)
  for (let i = 0; i < 10; i++) histogram.recordValue(3000)
  return histogram
}

/** A LoadResult as runLoad returns it, with overrides. */
function loadResult (overrides = {}) {
  return {
    messages: { sent: 100, acked: 100, errors: 0, lost: 0 },
    startedAt: 1_700_000_000_000,
    durationMs: 250.12345,
    histogram: latencies(),
    uncorrectedHistogram: null,
    bytes: { payloadPerMessage: 423, written: 45_000, read: 3000 },
    cpu: { userUs: 20_000, systemUs: 5000, process: 'host:1' },
    timeSeries: [{ t: 1_700_000_000, acked: 100, errors: 0, p50: 0.8, p99: 3, histogram: 'x' }],
    target: null,
    reconnects: { count: 0, gapMs: 0 },
    interrupted: false,
    errorReplies: [],
    failure: null,
    ...overrides
  }
}

const CONTEXT = { format: 'protobuf', test: resolveTest('medium'), url: 'ws://127.0.0.1:8080', connections: 2, inflight: 4, warmup: 10 }

test('buildReport: what ran, exact accounting, latency from the histogram, rate and CPU per message', () => {
  const result = loadResult()
  const report = buildReport(result, CONTEXT)
  assert.equal(report.format, 'protobuf')
  assert.equal(report.test, 'medium')
  assert.equal(report.testId, 3)
  assert.deepEqual([report.url, report.connections, report.inflight, report.warmup], ['ws://127.0.0.1:8080', 2, 4, 10])
  assert.equal(report.direction, 'up', 'the default direction')
  assert.deepEqual(report.network, { profile: 'none' }, 'no network: no shaping')
  assert.deepEqual(report.messages, { sent: 100, acked: 100, errors: 0, lost: 0 })
  assert.notEqual(report.messages, result.messages, 'a copy: the report does not change with the result')
  assert.equal(report.durationMs, 250.123)
  assert.equal(report.rate, 399.8, 'acked per second over the measured phase')
  assert.deepEqual(report.latencyMs, { min: 0.8, mean: 1.02, stdev: 0.66, p50: 0.8, p90: 0.8, p99: 3, p999: 3, max: 3 })
  assert.equal(report.uncorrectedLatencyMs, null)
  assert.equal(report.uncorrectedHistogram, null)
  assert.deepEqual(report.cpu, { userUs: 20_000, systemUs: 5000, pacingUs: 0, perMessageUs: 250, process: 'host:1' })
  assert.deepEqual([report.ok, report.failure, report.interrupted, report.target], [true, null, false, null])
  assert.equal(report.timeSeries, result.timeSeries)
  // The whole histogram travels, exactly: a merge adds it up later.
  const histogram = decodeHistogram(report.histogram)
  assert.deepEqual([histogram.totalCount, histogram.getCountAtIndex(histogram.countsArrayIndex(800))], [100, 90])
  // Decoded, the maximum is the top of its bucket (3 significant digits): 3000 and 3001 share one.
  assert.equal(histogram.lowestEquivalentValue(histogram.maxValue), 3000)
  assert.equal(report.payloadFile, undefined, 'only a user\'s payload names a file')
})

test('buildReport: a fan-out that lost deliveries fails with them counted, and with its reconnects, what takes a subscriber away', () => {
  const fanout = (delivered, gapsMs) => {
    const gaps = createLatencyHistogram()
    for (const gap of gapsMs) gaps.recordValue(gap * 1000)
    return {
      subscribers: 10,
      decoders: 10,
      published: 6,
      delivered,
      duplicates: 0,
      reordered: 0,
      errors: 0,
      perPublish: { firstUs: Array(6).fill(100), lastUs: Array(6).fill(900) },
      reconnects: { count: gapsMs.length, histogram: encodeHistogram(gaps) },
      subscriberBytesRead: 0,
      frames: delivered
    }
  }
  const withFanout = (f) => buildReport(loadResult({ messages: { sent: 6, acked: 6, errors: 0, lost: 0 }, fanout: f, bytes: { payloadPerMessage: 400, headerPerMessage: 24, written: 0, read: 0 } }), CONTEXT)
  const away = withFanout(fanout(21, [300, 700]))
  assert.equal(away.ok, false)
  assert.equal(away.failure, '39 of 60 deliveries lost, 0 duplicated, 0 errors; 2 subscriber reconnects (a subscriber loses what ' +
    'comes while its link is down, or after the server drops it for falling behind past its --max-buffered)')
  assert.equal(withFanout(fanout(59, [])).failure, '1 of 60 deliveries lost, 0 duplicated, 0 errors', 'no reconnect, no reason given')
  assert.equal(withFanout(fanout(60, [300])).failure, null, 'a reconnect that lost nothing fails nothing')
  const recovered = withFanout({ ...fanout(60, [300, 400]), recovered: 7 })
  assert.equal(recovered.fanout.recovered, 7)
  assert.match(formatReport(recovered, latencies()), /\nreconnect 2 subscriber reconnects; without a connection p50 [\d.]+ {2}p99 [\d.]+ {2}max [\d.]+; 7 deliveries recovered \(replayed by the server on reconnect\)\n/)
  assert.doesNotMatch(formatReport(withFanout(fanout(60, [300])), latencies()), /recovered/, 'said only when some were')
})

test('formatReport: over wss://, the TLS version and cipher, and that the bytes are the encrypted stream; nothing over ws://', () => {
  const secure = buildReport(loadResult({ tls: { version: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' } }), CONTEXT)
  assert.deepEqual(secure.tls, { version: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' })
  assert.match(formatReport(secure, latencies()), /^tls {7}TLSv1\.3 TLS_AES_256_GCM_SHA384 \(bytes on the socket are the encrypted stream: TLS records included\)$/m)
  const plain = buildReport(loadResult(), CONTEXT)
  assert.equal(plain.tls, null)
  assert.doesNotMatch(formatReport(plain, latencies()), /^tls/m)
})

test('formatReport: with --compress, whether the server took permessage-deflate; nothing when it was not offered', () => {
  const taken = buildReport(loadResult({ compression: { accepted: true } }), CONTEXT)
  assert.deepEqual(taken.compression, { accepted: true })
  assert.match(formatReport(taken, latencies()), /^compress {2}permessage-deflate offered and taken on every connection$/m)
  const refused = buildReport(loadResult({ compression: { accepted: false } }), CONTEXT)
  assert.match(formatReport(refused, latencies()), /^compress {2}permessage-deflate offered, but REFUSED by the server: every frame went uncompressed$/m)
  const plain = buildReport(loadResult(), CONTEXT)
  assert.equal(plain.compression, null)
  assert.doesNotMatch(formatReport(plain, latencies()), /^compress/m)
})

test('buildReport: lost or errored messages fail the run with a line; a failure or an interruption does too', () => {
  const lost = buildReport(loadResult({ messages: { sent: 101, acked: 98, errors: 2, lost: 1 }, errorReplies: ['ERR cannot decode'] }), CONTEXT)
  assert.equal(lost.ok, false)
  assert.equal(lost.failure, '3 of 101 messages failed (2 errors, 1 lost); first error reply: ERR cannot decode')
  assert.equal(buildReport(loadResult({ messages: { sent: 1, acked: 0, errors: 0, lost: 1 } }), CONTEXT).failure, '1 of 1 messages failed (0 errors, 1 lost)')
  const failed = buildReport(loadResult({ failure: 'server closed the connection' }), CONTEXT)
  assert.deepEqual([failed.ok, failed.failure], [false, 'server closed the connection'])
  const interrupted = buildReport(loadResult({ interrupted: true }), CONTEXT)
  assert.deepEqual([interrupted.ok, interrupted.interrupted], [false, true])
  assert.equal(buildReport(loadResult({ durationMs: 0 }), CONTEXT).rate, 0, 'no time, no rate (not Infinity)')
  assert.equal(buildReport(loadResult({ cpu: null }), CONTEXT).cpu, null)
})

test('buildReport: with a target rate, latency from the schedule and from the actual send, and whether the rate was met', () => {
  const uncorrected = createLatencyHistogram()
  for (let i = 0; i < 100; i++) uncorrected.recordValue(700)
  const report = buildReport(loadResult({ target: { rate: 500, sendRate: 404 }, uncorrectedHistogram: uncorrected }), CONTEXT)
  assert.deepEqual(report.target, { rate: 500, sendRate: 404, pacing: null, pacingReason: null, met: false, missedByPercent: 19.2 })
  assert.equal(report.uncorrectedLatencyMs.p99, 0.7)
  assert.equal(report.latencyMs.p99, 3)
  assert.equal(decodeHistogram(report.uncorrectedHistogram).totalCount, 100)
})

test('buildReport: a user\'s payload names its file, its schema and what the schema loses', () => {
  const custom = { id: null, name: 'custom', custom: true, file: 'order.json', inferred: false, typeName: 'shop.Order' }
  const lossy = { differences: 1, examples: [{ path: '$.items[1].price', expected: 0.1, actual: 0.10000000149011612 }] }
  const report = buildReport(loadResult(), { ...CONTEXT, test: custom, lossy })
  assert.deepEqual([report.test, report.testId, report.payloadFile, report.schema, report.lossy], ['custom', null, 'order.json', 'shop.Order', lossy])
  assert.equal(buildReport(loadResult(), { ...CONTEXT, test: { ...custom, inferred: true } }).schema, 'inferred')
  assert.equal(buildReport(loadResult(), { ...CONTEXT, test: { ...custom, inferred: true } }).lossy, null)
})

test('formatReport: the human text, line by line, with the compact histogram', () => {
  const histogram = latencies()
  const payload = { kind: 'stream', messages: 495, seed: 20261123 }
  const report = buildReport(loadResult({ histogram }), { ...CONTEXT, direction: 'echo', payload })
  assert.deepEqual(report.payload, payload)
  assert.equal(formatReport(report, histogram), [
    'protobuf · test 3 medium · echo · 2 connection(s) × 4 in flight · network: none (no shaping)',
    'messages  sent 100  acked 100  errors 0  lost 0',
    'elapsed   0.25 s  rate 400 msg/s',
    'bytes     payload 423 B/msg  written 43.9 KiB  read 2.9 KiB (on the socket, frames included)',
    'payload   stream of 495 seeded messages (varying values, seed 20261123)',
    'cpu       20.0 ms user  5.0 ms system  250 µs/msg (this client process, measured phase)',
    'latency   min 0.800  mean 1.020  stdev 0.660  p50 0.800  p90 0.800  p99 3.000  p99.9 3.000  max 3.000',
    // Power-of-two bands from the lowest value, the widest band a full bar.
    '  512 µs–1.024 ms ██████████████████████████████  90.0%  90',
    '1.024 ms–2.048 ms                                  0.0%  0',
    '2.048 ms–4.096 ms ███                             10.0%  10',
    ''
  ].join('\n'))
})

test('describePayload: a stream, one message repeated and why that flatters, a corpus', () => {
  assert.equal(describePayload({ kind: 'stream', messages: 23832, seed: 7 }), 'stream of 23,832 seeded messages (varying values, seed 7)')
  assert.equal(describePayload({ kind: 'repeated', messages: 1, seed: null }), 'one message repeated (flatters compression, caches and the JIT)')
  assert.equal(describePayload({ kind: 'corpus', messages: 10000, seed: null }), 'corpus of 10,000 messages, sent in turn')
  assert.equal(buildReport(loadResult(), CONTEXT).payload, null, 'a report built without saying (an older client\'s) says nothing')
})

test('formatReport: shaping, target, send lag, uncorrected latency, reconnects, lossy and failure lines when they apply', () => {
  const histogram = latencies()
  const uncorrected = createLatencyHistogram()
  uncorrected.recordValue(700)
  const sendLag = createLatencyHistogram()
  sendLag.recordValue(2)
  const custom = { id: null, name: 'custom', custom: true, file: 'order.json', inferred: true }
  const lossy = { differences: 2, examples: [{ path: '$.a', expected: -0, actual: 0 }] }
  const report = buildReport(loadResult({
    histogram,
    uncorrectedHistogram: uncorrected,
    sendLagHistogram: sendLag,
    target: { rate: 500, sendRate: 404, pacing: 'timer', pacingReason: 'the default under a CPU quota of 0.5 cores, below one (cgroup)' },
    reconnects: { count: 1, gapMs: 12 },
    messages: { sent: 101, acked: 100, errors: 0, lost: 1 }
  }), { ...CONTEXT, test: custom, network: NETWORK, lossy })
  const lines = formatReport(report, histogram).trimEnd().split('\n')
  assert.equal(lines[0], 'protobuf · test custom (order.json) · up · 2 connection(s) × 4 in flight · network: 3g (up 768 kbit/s, down 1600 kbit/s, rtt 150 ms, proxy)')
  assert.equal(lines[1], 'shaping   userspace shaping proxy, each connection a link of its own')
  assert.ok(lines.includes('target    500 msg/s, sent at 404 msg/s: MISSED by 19.2% (timer pacing)'))
  assert.equal(lines[lines.indexOf('target    500 msg/s, sent at 404 msg/s: MISSED by 19.2% (timer pacing)') + 1],
    'pacing    timer: the default under a CPU quota of 0.5 cores, below one (cgroup)', 'why, when the run chose it, on a line of its own')
  assert.ok(lines.includes('send lag  p50 0.002  p99 0.002  max 0.002  (due time to send, where a connection had room: the generator\'s own lateness, counted in the latency above)'))
  assert.equal(report.sendLagMs.p99, 0.002)
  assert.equal(report.target.pacing, 'timer')
  assert.match(lines.find((line) => line.startsWith('latency')), /max 3\.000 {2}\(from the schedule\)$/)
  assert.ok(lines.includes('uncorr.   p50 0.700  p90 0.700  p99 0.700  p99.9 0.700  max 0.700  (from the actual send: hides stalls)'))
  assert.deepEqual(lines.slice(-3), [
    'reconnect 1 time(s), 12 ms without a connection',
    'LOSSY     the schema changed 2 value(s) of order.json, first at $.a',
    'FAILED    1 of 101 messages failed (0 errors, 1 lost)'
  ])
  const met = buildReport(loadResult({ target: { rate: 500, sendRate: 499 } }), CONTEXT)
  assert.match(formatReport(met, histogram), /^target {4}500 msg\/s, sent at 499 msg\/s: met$/m)
})

test('formatReport: the target line sits right after the elapsed line, with or without a shaping line', () => {
  const histogram = latencies()
  for (const network of [undefined, NETWORK]) {
    const lines = formatReport(buildReport(loadResult({ histogram, target: { rate: 500, sendRate: 499 } }), { ...CONTEXT, network }), histogram).split('\n')
    assert.match(lines[lines.findIndex((line) => line.startsWith('elapsed')) + 1], /^target/, network?.profile ?? 'none')
  }
})

test('formatReport: an empty run has no bands and no division by zero', () => {
  const histogram = createLatencyHistogram()
  const report = buildReport(loadResult({ histogram, messages: { sent: 0, acked: 0, errors: 0, lost: 0 }, durationMs: 0, cpu: { userUs: 0, systemUs: 0 } }), CONTEXT)
  const text = formatReport(report, histogram)
  assert.match(text, /^latency {3}min 0\.000 .* max 0\.000$/m)
  assert.match(text, /n\/a µs\/msg/)
  assert.doesNotMatch(text, /NaN|Infinity|█/)
})

test('describeNetwork: none, or the profile with its figures and backend', () => {
  assert.equal(describeNetwork(null), 'none (no shaping)')
  assert.equal(describeNetwork(undefined), 'none (no shaping)')
  assert.equal(describeNetwork({ profile: 'none' }), 'none (no shaping)')
  assert.equal(describeNetwork(NETWORK), '3g (up 768 kbit/s, down 1600 kbit/s, rtt 150 ms, proxy)')
  assert.equal(describeNetwork({ profile: 'custom', up: 1000, down: 2000, rtt: 0 }), 'custom (up 1000 kbit/s, down 2000 kbit/s, rtt 0 ms)')
})

test('describeTarget: met within 1%, else missed by how much; sending faster is met', () => {
  assert.deepEqual(describeTarget({ rate: 1000, sendRate: 990, pacing: 'precise' }), { rate: 1000, sendRate: 990, pacing: 'precise', pacingReason: null, met: true, missedByPercent: 1 })
  assert.deepEqual(describeTarget({ rate: 1000, sendRate: 989 }), { rate: 1000, sendRate: 989, pacing: null, pacingReason: null, met: false, missedByPercent: 1.1 })
  assert.deepEqual(describeTarget({ rate: 1000, sendRate: 1200 }), { rate: 1000, sendRate: 1200, pacing: null, pacingReason: null, met: true, missedByPercent: 0 })
})

test('testLabel: number and name, the name alone, or the name and file of a user\'s payload', () => {
  assert.equal(testLabel({ id: 3, name: 'medium' }), '3 medium')
  assert.equal(testLabel({ id: null, name: 'people' }), 'people')
  assert.equal(testLabel({ id: undefined, name: 'people' }), 'people')
  assert.equal(testLabel({ id: 0, name: 'zero' }), '0 zero')
  assert.equal(testLabel({ id: null, name: 'custom', file: 'order.json' }), 'custom (order.json)')
})

test('cpuPerMessage: user plus system over the messages sent, pacing left out; none when nothing was sent', () => {
  assert.deepEqual(cpuPerMessage({ userUs: 300, systemUs: 100, process: 'h:1' }, 3), { userUs: 300, systemUs: 100, pacingUs: 0, perMessageUs: 133.33, process: 'h:1' })
  assert.deepEqual(cpuPerMessage({ userUs: 300, systemUs: 100, pacingUs: 250, process: 'h:1' }, 3),
    { userUs: 300, systemUs: 100, pacingUs: 250, perMessageUs: 50, process: 'h:1' }, 'a pacer\'s waiting and thread are not a message\'s cost')
  assert.equal(cpuPerMessage({ userUs: 300, systemUs: 100 }, 0).perMessageUs, null)
})

test('judgeGenerator: saturated when the event loop was busy 90% of the phase or its timers ran 50 ms late; formatReport says so', () => {
  const figures = (loopBusy, p99) => ({ cpuShare: 0.8, loopBusy, loopDelayMs: { p99, max: p99 + 1 } })
  assert.equal(judgeGenerator(figures(0.89, 49.9), 1000).saturated, false)
  assert.equal(judgeGenerator(figures(0.9, 1), 1000).saturated, true)
  assert.equal(judgeGenerator(figures(0.2, 50), 1000).saturated, true)
  assert.equal(judgeGenerator(figures(0.99, 80), 999).saturated, false, 'a phase under a second is not judged')
  assert.equal(SATURATED_LOOP_BUSY, 0.9)
  assert.equal(SATURATED_LOOP_DELAY_MS, 50)
  const histogram = createLatencyHistogram()
  histogram.recordValue(100)
  const base = { messages: { sent: 1, acked: 1, errors: 0, lost: 0 }, startedAt: 0, durationMs: 1000, histogram, uncorrectedHistogram: null, bytes: { payloadPerMessage: 1, written: 1, read: 1 }, cpu: null }
  const context = { format: 'json', test: resolveTest('small'), url: 'ws://x', connections: 1, inflight: 1 }
  const ok = buildReport({ ...base, generator: figures(0.5, 2) }, context)
  assert.deepEqual(ok.generator, { ...figures(0.5, 2), saturated: false })
  assert.match(formatReport(ok, histogram), /^generator ok: event loop busy 50% of the phase, timers late by p99 2 ms \(max 3 ms\), CPU 0\.8 core\(s\)$/m)
  const busy = buildReport({ ...base, generator: figures(0.97, 65) }, context)
  assert.match(formatReport(busy, histogram), /^generator SATURATED: .*: these latencies are the client's own queueing, not the server's; add --workers or hosts$/m)
  const fanout = { ...busy, fanout: { ...busy.fanout, subscribers: 0, published: 1, expected: 0, delivered: 0, lost: 0, duplicates: 0, reordered: 0, spreadMs: { p50: 0, p99: 0, max: 0 }, reconnects: { count: 0 }, wire: { perDelivery: null }, decoders: 0, cpuPerDeliveryUs: null } }
  assert.match(formatReport(fanout, histogram), /^generator SATURATED: .*not the server's; split the subscribers over processes or hosts \(--role subscriber\)$/m,
    'fan-out has no --workers')
  assert.equal(buildReport(base, context).generator, null, 'no figures (a browser report): no call')
  const short = buildReport({ ...base, durationMs: 50, generator: figures(0.97, 65) }, context)
  assert.equal(short.generator.saturated, false)
  assert.match(formatReport(short, histogram), /^generator not judged \(phase under 1000 ms\): event loop busy 97%/m)
})

test('a ramp: each stage with its span, rates, messages due and the latency of those due in it, a line each', () => {
  const stages = [{ fromMs: 0, toMs: 3000, fromRate: 0, toRate: 500, messages: 750 }, { fromMs: 3000, toMs: 6000, fromRate: 500, toRate: 500, messages: 1500 }]
  const first = createLatencyHistogram()
  for (let i = 0; i < 750; i++) first.recordValue(1000)
  const report = buildReport(loadResult({
    target: { rate: 375, sendRate: 375, pacing: 'precise', stages },
    stageHistograms: [first, createLatencyHistogram()]
  }), CONTEXT)
  assert.deepEqual(report.stages.map(({ histogram, latencyMs, ...stage }) => stage), [
    { ...stages[0], replies: 750 }, { ...stages[1], replies: 0 }
  ])
  assert.equal(report.stages[0].latencyMs.p50, 1)
  assert.equal(report.stages[1].latencyMs, null)
  assert.equal(decodeHistogram(report.stages[0].histogram).totalCount, 750, 'encoded, for a merge to add')
  const text = formatReport(report, latencies())
  assert.match(text, /^stage 1 {3}0\.0-3\.0 s {2}0 -> 500\/s {2}750 due, 750 replies {2}p50 1\.000 {2}p90 1\.000 {2}p99 1\.000 {2}max 1\.000$/m)
  assert.match(text, /^stage 2 {3}3\.0-6\.0 s {2}500\/s {2}1,500 due, 0 replies {2}no replies$/m)
  assert.equal(buildReport(loadResult(), CONTEXT).stages, null, 'no ramp, no stages')
})

test('connection times: each step\'s count and percentiles in µs, the histograms kept for a merge, failed attempts by cause, one console line', () => {
  const histogram = (values) => {
    const h = createLatencyHistogram()
    for (const value of values) h.recordValue(value)
    return encodeHistogram(h)
  }
  const report = buildReport(loadResult({
    connect: { histograms: { tcp: histogram([100, 200]), tls: null, upgrade: histogram([300, 500]), total: histogram([400, 700]) }, failures: { refused: 3 } }
  }), CONTEXT)
  assert.equal(report.connect.opened, 2)
  assert.deepEqual(report.connect.steps.tcp, { count: 2, p50: 100, p90: 200, p99: 200, max: 200 })
  assert.equal(report.connect.steps.tls, null)
  assert.deepEqual(report.connect.failures, { refused: 3 })
  assert.equal(decodeHistogram(report.connect.histograms.total).totalCount, 2)
  assert.match(formatReport(report, latencies()), /^connect {3}2 opened {2}tcp p50 100 p99 200 {2}upgrade p50 300 p99 500 {2}total p50 400 p99 700 µs; failed attempts: 3 refused$/m)
  assert.equal(buildReport(loadResult(), CONTEXT).connect, null)
})

test('--reconnect: time away per connection, the outage until all were back, losses, the busiest 100 ms and the backoff, a console line', () => {
  const gaps = createLatencyHistogram()
  for (const us of [200_000, 400_000, 900_000]) gaps.recordValue(us)
  const late = createLatencyHistogram()
  for (const us of [1000, 1000, 1000, 250_000]) late.recordValue(us)
  const report = buildReport(loadResult({
    reconnects: {
      count: 3, gapMs: 1500, backoff: { baseMs: 100, capMs: 5000 }, allBackMs: 950, lost: 12, histogram: encodeHistogram(gaps), buckets: { 170000000100: 2, 170000000130: 1 }, lateness: encodeHistogram(late)
    }
  }), CONTEXT)
  const { awayMs, peakPer100ms, allBackMs, lost, lateMs } = report.reconnects
  assert.deepEqual([Math.round(awayMs.p50), Math.round(awayMs.max), peakPer100ms, allBackMs, lost], [400, 900, 2, 950, 12])
  assert.deepEqual([Math.round(lateMs.p50), Math.round(lateMs.p99), Math.round(lateMs.max)], [1, 250, 250], 'how late the attempts started')
  assert.match(formatReport(report, latencies()), /^reconnect 3 back, away p50 400\.\d+ {2}p99 9\d\d\.\d+ {2}max 900\.\d+; all back 950 ms after the first drop; at most 2 in any 100 ms; 12 messages lost at the drops \(backoff: full jitter, base 100 ms, cap 5,000 ms\); attempts late p50 1\.\d+ {2}p99 25\d\.\d+ against the backoff$/m)
  assert.deepEqual(buildReport(loadResult(), CONTEXT).reconnects, { count: 0, gapMs: 0 })
})
