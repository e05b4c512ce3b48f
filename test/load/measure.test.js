// prepareRun + measure in this process against the real server (startServer on port 0): the
// report every tool reads, its shape and its accounting.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { measure, prepareRun } from '../../lib/load/measure.js'
import { startServer } from '../../lib/server/server.js'
import { decodeHistogram } from '../../lib/histogram.js'
import { createCodec } from '../../lib/codecs/registry.js'
import { loadMessages, resolveTest } from '../../lib/payloads/catalog.js'

const LIMIT = { timeout: 20_000 }
const LATENCY_FIELDS = ['min', 'mean', 'stdev', 'p50', 'p90', 'p99', 'p999', 'max']

/**
 * What the client command line gives prepareRun and measure, checked: the defaults of
 * client-options.js. The second argument may name the test (test, custom) and any load setting.
 */
function clientRun (url, { test = '5', custom = null, ...load } = {}) {
  return {
    format: 'json',
    test,
    custom,
    load: {
      messages: 300,
      warmup: { messages: 0 },
      headers: {},
      insecure: false,
      ack: { text: 'ACK' },
      reconnect: false,
      url,
      connections: 1,
      inflight: 1,
      timeoutMs: 10000,
      compress: false,
      repeat: false,
      direction: 'up',
      ...load
    }
  }
}

function assertLatency (latency) {
  assert.deepEqual(Object.keys(latency).sort(), LATENCY_FIELDS.slice().sort())
  for (const field of LATENCY_FIELDS) assert.ok(Number.isFinite(latency[field]) && latency[field] >= 0, `${field}: ${latency[field]}`)
  assert.ok(latency.min > 0)
  assert.ok(latency.min <= latency.p50 && latency.p50 <= latency.p99 && latency.p99 <= latency.max, JSON.stringify(latency))
}

test('json, closed loop: the report names the run and accounts for every message', LIMIT, async (t) => {
  const server = await startServer({ port: 0 })
  t.after(() => server.close())
  const run = clientRun(server.url, { connections: 2, inflight: 3, warmup: { messages: 20 } })
  const prepared = await prepareRun('json', run)
  assert.equal(prepared.format.format, 'json')
  assert.equal(prepared.test.name, 'small')
  assert.equal(prepared.codec.name, 'json')
  assert.equal(prepared.lossy, null)
  const report = await measure(prepared, run.load, { network: null })
  assert.equal(report.format, 'json')
  assert.equal(report.test, 'small')
  assert.equal(report.testId, 5)
  assert.equal(report.url, server.url)
  assert.equal(report.connections, 2)
  assert.equal(report.inflight, 3)
  assert.deepEqual(report.warmup, { messages: 20 })
  assert.equal(report.direction, 'up')
  assert.deepEqual(report.network, { profile: 'none' })
  assert.deepEqual(report.messages, { sent: 300, acked: 300, errors: 0, lost: 0 })
  assert.equal(report.ok, true)
  assert.equal(report.failure, null)
  assert.equal(report.interrupted, false)
  assert.ok(report.rate > 0 && report.durationMs > 0)
  assert.equal(report.target, null)
  assertLatency(report.latencyMs)
  assert.equal(report.uncorrectedLatencyMs, null)
  assert.equal(decodeHistogram(report.histogram).totalCount, 300)
  assert.ok(report.bytes.payloadPerMessage > 0)
  assert.ok(report.bytes.written >= 300 * report.bytes.payloadPerMessage, JSON.stringify(report.bytes))
  assert.ok(report.bytes.read >= 300 * 'ACK'.length, JSON.stringify(report.bytes))
  assert.ok(report.cpu.perMessageUs > 0)
  assert.ok(Array.isArray(report.timeSeries) && report.timeSeries.length >= 1)
  assert.deepEqual(report.errorReplies, [])
  // The server decoded every message, the warm-up's too.
  assert.equal(server.stats.forTarget('json', 'small').messages, 320)
})

test('protobuf echo at a rate: target and uncorrected latency in the report, replies decoded', LIMIT, async (t) => {
  const server = await startServer({ port: 0 })
  t.after(() => server.close())
  const run = clientRun(server.url, { test: 'medium', messages: undefined, rate: 1000, durationMs: 300, inflight: 1000, direction: 'echo' })
  const prepared = await prepareRun('protobuf', run)
  const report = await measure(prepared, run.load, { network: null })
  assert.equal(report.format, 'protobuf')
  assert.equal(report.test, 'medium')
  assert.equal(report.direction, 'echo')
  assert.deepEqual(report.messages, { sent: 300, acked: 300, errors: 0, lost: 0 })
  assert.equal(report.target.rate, 1000)
  assert.equal(typeof report.target.met, 'boolean')
  assertLatency(report.latencyMs)
  assertLatency(report.uncorrectedLatencyMs)
  assert.equal(decodeHistogram(report.uncorrectedHistogram).totalCount, 300)
  // Echo: the payload travels both ways.
  assert.ok(report.bytes.read >= 300 * report.bytes.payloadPerMessage, JSON.stringify(report.bytes))
})

test('down: the server sends the payload, the client decodes it', LIMIT, async (t) => {
  const server = await startServer({ port: 0 })
  t.after(() => server.close())
  const run = clientRun(server.url, { messages: 100, direction: 'down' })
  const report = await measure(await prepareRun('protobuf', run), run.load, { network: null })
  assert.deepEqual(report.messages, { sent: 100, acked: 100, errors: 0, lost: 0 })
  assert.equal(report.direction, 'down')
  assert.ok(report.bytes.read > 0 && report.bytes.written > 0)
})

test('down: the server sends the stream\'s messages in turn, or the one message with repeat; the report says which', LIMIT, async (t) => {
  const server = await startServer({ port: 0 })
  t.after(() => server.close())
  const small = resolveTest('small')
  const codec = await createCodec('protobuf', small)
  const sizes = loadMessages(small).messages.slice(0, 100).map((message) => codec.encode(codec.prepare(message)).length)
  const frames = (payloads) => payloads.reduce((sum, size) => sum + size + 2, 0) // an unmasked server frame: 2-byte header
  for (const [repeat, kind, read] of [[false, 'stream', frames(sizes)], [true, 'repeated', frames(Array(100).fill(6))]]) {
    const run = clientRun(server.url, { messages: 100, direction: 'down', repeat })
    const report = await measure(await prepareRun('protobuf', run), run.load, { network: null })
    assert.deepEqual(report.messages, { sent: 100, acked: 100, errors: 0, lost: 0 })
    assert.equal(report.payload.kind, kind)
    assert.equal(report.bytes.read, read, `${kind}: every reply's bytes, in order`)
  }
})

test('a corpus is sent in turn and says so; with repeat only its first message', LIMIT, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'measure-test-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'feed.jsonl')
  const messages = [{ id: 1, text: 'a' }, { id: 2, text: 'bbbbbbbbbb' }, { id: 3, text: 'cc' }]
  fs.writeFileSync(file, messages.map((message) => JSON.stringify(message)).join('\n') + '\n')
  const server = await startServer({ port: 0 })
  t.after(() => server.close())
  for (const [repeat, payload, sent] of [[false, { kind: 'corpus', messages: 3, seed: null }, messages], [true, { kind: 'repeated', messages: 1, seed: null }, messages.slice(0, 1)]]) {
    const run = clientRun(server.url, { test: null, custom: { payload: file }, messages: 30, repeat })
    const report = await measure(await prepareRun('json', run), run.load, { network: null })
    assert.deepEqual(report.payload, payload)
    assert.equal(report.bytes.payloadPerMessage, Math.round(sent.reduce((sum, message) => sum + JSON.stringify(message).length, 0) / sent.length))
  }
})

test('a custom payload over protobuf registers its schema first (the handshake), then runs', LIMIT, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'measure-test-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'order.json')
  fs.writeFileSync(file, JSON.stringify({ order: 'A-17', items: [{ sku: 'x', quantity: 2 }], paid: true }))
  const server = await startServer({ port: 0 })
  t.after(() => server.close())
  const run = clientRun(server.url, { test: null, custom: { payload: file }, messages: 50, connections: 2 })
  const prepared = await prepareRun('protobuf', run)
  assert.equal(prepared.test.custom, true)
  const report = await measure(prepared, run.load, { network: null })
  assert.equal(report.test, 'custom')
  assert.equal(report.payloadFile, path.basename(file))
  assert.equal(report.schema, 'inferred')
  assert.deepEqual(report.messages, { sent: 50, acked: 50, errors: 0, lost: 0 })
  assert.equal(report.ok, true)
})

test('a server that goes away: the report says why and is not ok', LIMIT, async (t) => {
  const server = await startServer({ port: 0 })
  const run = clientRun(server.url, { messages: 1_000_000, inflight: 4 })
  const prepared = await prepareRun('json', run)
  // At the first progress tick (1 s in), the server closes every connection with 1001.
  let closing = null
  const report = await measure(prepared, run.load, { network: null, onTick: () => { closing ??= server.close() } })
  await closing
  assert.equal(report.ok, false)
  assert.match(report.failure, /^connection closed by the server \(code 1001/)
  const { sent, acked, errors, lost } = report.messages
  assert.equal(sent, acked + errors + lost)
  assert.ok(acked > 0 && sent < 1_000_000)
  assert.equal(report.timeSeries.length >= 1, true)
})
