import { test } from 'node:test'
import assert from 'node:assert/strict'
import { aggregateMetrics, createMetrics, createProcessMetrics } from '../../lib/server/metrics.js'
import { parseMetrics } from '../../lib/server/metrics-reader.js'
import { ServerStats } from '../../lib/server/stats.js'
import { startServer } from '../../lib/server/server.js'
import { openConnection, refusedUpgrade } from '../helpers.js'

const valueOf = (text, name, labels) => parseMetrics(text).value(name, labels)

test('createMetrics: counters read from ServerStats when scraped, by format and test, beside process metrics', async () => {
  const stats = new ServerStats()
  const registry = createMetrics(stats)
  stats.forTarget('json', 'small').messages = 7
  stats.forTarget('json', 'small').errors = 2
  stats.forTarget('protobuf', 'medium').messages = 3
  stats.openConnections = 4
  stats.unauthorized = 5
  stats.peakOpenedPer100ms = 6
  const text = await registry.metrics()
  assert.equal(valueOf(text, 'wsbench_messages_total', { format: 'json', test: 'small' }), 7)
  assert.equal(valueOf(text, 'wsbench_messages_total', { format: 'protobuf', test: 'medium' }), 3)
  assert.equal(valueOf(text, 'wsbench_decode_errors_total', { format: 'json', test: 'small' }), 2)
  assert.equal(valueOf(text, 'wsbench_open_connections'), 4)
  assert.equal(valueOf(text, 'wsbench_unauthorized_upgrades_total'), 5)
  assert.equal(valueOf(text, 'wsbench_peak_connections_per_100ms'), 6)
  assert.match(text, /^# HELP wsbench_peak_connections_per_100ms .*any 100 ms \(a window sliding at 10 ms\)/m, 'HELP says the window slides')
  assert.ok(valueOf(text, 'process_cpu_seconds_total') > 0)
  assert.ok(valueOf(text, 'process_resident_memory_bytes') > 0)
  stats.forTarget('json', 'small').messages = 9
  assert.equal(valueOf(await registry.metrics(), 'wsbench_messages_total', { format: 'json', test: 'small' }), 9, 'a second scrape reads the new count')
})

test('wsbench_peak_connections_per_100ms: a burst straddling a 100 ms edge of the epoch is counted whole', async () => {
  const stats = new ServerStats()
  const registry = createMetrics(stats)
  for (const at of [1_700_000_000_080, 1_700_000_000_095, 1_700_000_000_105, 1_700_000_000_120]) stats.opened(at)
  assert.equal(valueOf(await registry.metrics(), 'wsbench_peak_connections_per_100ms'), 4, 'fixed windows would read 2')
})

test('GET /metrics on the server port: what a run sent, decode errors, connections, refusals; CPU grows', async () => {
  const server = await startServer({ port: 0 })
  const base = server.url.replace('ws:', 'http:')
  try {
    const before = await (await fetch(`${base}/metrics`)).text()
    const { ws, nextReply } = await openConnection(`${server.url}/?test=small&format=json`)
    for (let i = 0; i < 50; i++) {
      ws.send('{"id":1,"status":"ok"}')
      assert.equal(await nextReply(), 'ACK')
    }
    ws.send('{"id":')
    assert.match(await nextReply(), /^ERR json decode failed/)
    assert.equal((await refusedUpgrade(`${server.url}/?test=nope&format=json`)).status, 400)
    const response = await fetch(`${base}/metrics`)
    assert.equal(response.status, 200)
    assert.match(response.headers.get('content-type'), /^text\/plain; version=0\.0\.4/)
    const after = await response.text()
    assert.equal(valueOf(after, 'wsbench_messages_total', { format: 'json', test: 'small' }), 50)
    assert.equal(valueOf(after, 'wsbench_decode_errors_total', { format: 'json', test: 'small' }), 1)
    assert.equal(valueOf(after, 'wsbench_open_connections'), 1)
    assert.equal(valueOf(after, 'wsbench_connections_total'), 1)
    assert.equal(valueOf(after, 'wsbench_peak_connections_per_100ms'), 1)
    assert.equal(valueOf(after, 'wsbench_refused_upgrades_total'), 1)
    assert.ok(valueOf(after, 'process_cpu_seconds_total') >= valueOf(before, 'process_cpu_seconds_total'))
    assert.equal((await fetch(`${base}/metrics`, { method: 'POST', body: 'x' })).status, 405)
    ws.close()
  } finally {
    await server.close()
  }
})

test('createMetrics: wsbench_codec_seconds_total is the codec time ServerStats keeps in ms, in seconds, by format and test', async () => {
  const stats = new ServerStats()
  const registry = createMetrics(stats)
  stats.forTarget('json', 'small').codecMs = 1500
  stats.forTarget('protobuf', 'small').codecMs = 2.5
  const text = await registry.metrics()
  assert.equal(valueOf(text, 'wsbench_codec_seconds_total', { format: 'json', test: 'small' }), 1.5)
  assert.equal(valueOf(text, 'wsbench_codec_seconds_total', { format: 'protobuf', test: 'small' }), 0.0025)
  assert.match(text, /^# TYPE wsbench_codec_seconds_total counter$/m)
  stats.forTarget('json', 'small').codecMs = 2000
  assert.equal(valueOf(await registry.metrics(), 'wsbench_codec_seconds_total', { format: 'json', test: 'small' }), 2, 'read again at each scrape')
})

test('GET /metrics: the server\'s codec time grows with the messages it decodes (up) and encodes (down), each format and test apart', async () => {
  const server = await startServer({ port: 0 })
  const base = server.url.replace('ws:', 'http:')
  const scrape = async () => (await fetch(`${base}/metrics`)).text()
  const codecSeconds = (text, format, test) => valueOf(text, 'wsbench_codec_seconds_total', { format, test })
  try {
    const { ws, nextReply } = await openConnection(`${server.url}/?test=small&format=json`)
    const send = async (count) => {
      for (let i = 0; i < count; i++) {
        ws.send('{"id":1,"status":"ok"}')
        assert.equal(await nextReply(), 'ACK')
      }
    }
    await send(20)
    const first = await scrape()
    assert.equal(valueOf(first, 'wsbench_messages_total', { format: 'json', test: 'small' }), 20)
    assert.ok(codecSeconds(first, 'json', 'small') > 0, 'twenty decodes took some time')
    await send(200)
    const second = await scrape()
    assert.ok(codecSeconds(second, 'json', 'small') > codecSeconds(first, 'json', 'small'), 'more decodes, more codec time')
    // A message that does not decode is an error, not codec time: the counter stays where it was.
    ws.send('{"id":')
    assert.match(await nextReply(), /^ERR json decode failed/)
    assert.equal(codecSeconds(await scrape(), 'json', 'small'), codecSeconds(second, 'json', 'small'))
    assert.equal(codecSeconds(second, 'protobuf', 'small'), undefined, 'no protobuf traffic yet: no sample')
    ws.close()

    // Down: the server encodes each reply, and that is its codec time, under its own format and test.
    const down = await openConnection(`${server.url}/?test=medium&format=protobuf&direction=down`)
    for (let i = 0; i < 10; i++) {
      down.ws.send('GET')
      await down.nextReply()
    }
    const third = await scrape()
    assert.ok(codecSeconds(third, 'protobuf', 'medium') > 0)
    assert.equal(valueOf(third, 'wsbench_messages_total', { format: 'protobuf', test: 'medium' }), 10)
    assert.equal(codecSeconds(third, 'json', 'small'), codecSeconds(second, 'json', 'small'), 'the json counter is its own')
    down.ws.close()
  } finally {
    await server.close()
  }
})

test('/metrics obeys --token: 401 without it, 200 with the bearer token or ?token=', async () => {
  const server = await startServer({ port: 0, token: 's3cret' })
  const base = server.url.replace('ws:', 'http:')
  try {
    const refused = await fetch(`${base}/metrics`)
    assert.equal(refused.status, 401)
    assert.equal(refused.headers.get('www-authenticate'), 'Bearer')
    assert.equal((await fetch(`${base}/metrics`, { headers: { Authorization: 'Bearer s3cret' } })).status, 200)
    assert.equal((await fetch(`${base}/metrics?token=s3cret`)).status, 200)
    assert.equal((await fetch(`${base}/metrics?token=wrong`)).status, 401)
  } finally {
    await server.close()
  }
})

test('aggregateMetrics: several processes\' metrics summed as prom-client sums a cluster\'s', async () => {
  const first = new ServerStats()
  first.forTarget('json', 'small').messages = 7
  first.forTarget('json', 'small').codecMs = 250
  first.openConnections = 2
  const second = new ServerStats()
  second.forTarget('json', 'small').messages = 5
  second.forTarget('json', 'small').codecMs = 500
  second.forTarget('protobuf', 'small').errors = 1
  second.openConnections = 3
  const process = createProcessMetrics()
  const text = await aggregateMetrics([
    await process.getMetricsAsJSON(),
    await createMetrics(first).getMetricsAsJSON(),
    await createMetrics(second).getMetricsAsJSON()
  ])
  assert.equal(valueOf(text, 'wsbench_messages_total', { format: 'json', test: 'small' }), 12)
  assert.equal(valueOf(text, 'wsbench_decode_errors_total', { format: 'protobuf', test: 'small' }), 1)
  assert.equal(valueOf(text, 'wsbench_codec_seconds_total', { format: 'json', test: 'small' }), 0.75, 'codec seconds summed too')
  assert.equal(valueOf(text, 'wsbench_open_connections'), 5)
  const own = valueOf(await process.metrics(), 'process_resident_memory_bytes')
  assert.ok(valueOf(text, 'process_resident_memory_bytes') > own * 2, 'three processes\' memory, summed')
  assert.equal(parseMetrics(text).samples('nodejs_version_info').length, 1, 'labels that are the same everywhere are taken once')
  assert.equal(parseMetrics(text).samples('process_start_time_seconds').length, 0, 'start times do not add up')
})
