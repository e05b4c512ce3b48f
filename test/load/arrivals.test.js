// Arrivals on real connections to a real ws server: each one opens, sends its K messages request
// by request, and leaves; every message and every arrival accounted for.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import net from 'node:net'
import { performance } from 'node:perf_hooks'
import { WebSocketServer } from 'ws'
import { runArrivals } from '../../lib/load/arrivals.js'
import { prepareMessages } from '../../lib/load/engine.js'
import { createCodec } from '../../lib/codecs/registry.js'
import { decodeHistogram } from '../../lib/histogram.js'
import { loadPayload, resolveTest } from '../../lib/payloads/catalog.js'

const LIMIT = { timeout: 20_000 }
const small = resolveTest('5')
const codec = await createCodec('json', small)
const prepared = prepareMessages(codec, [loadPayload(small)], 'test small')

/** A ws server answering ACK (or, by the answer function, anything else), counting connections as they come and go. */
async function startServer (t, answer = (ws) => ws.send('ACK')) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 })
  await once(wss, 'listening')
  const seen = { opened: 0, messages: 0 }
  wss.on('connection', (ws) => {
    seen.opened++
    ws.on('message', () => { seen.messages++; answer(ws, seen) })
  })
  t.after(() => new Promise((resolve) => wss.close(resolve)))
  return { url: `ws://127.0.0.1:${wss.address().port}`, wss, seen }
}

const options = (url, extra) => ({ url, test: small, codec, prepared, pacing: 'timer', arrivals: 100, perConnection: 3, durationMs: 300, ...extra })

test('100 arrivals/s for 300 ms, 3 messages each: 30 connections opened, answered and closed, every message acked, each opening timed', LIMIT, async (t) => {
  const server = await startServer(t)
  const result = await runArrivals(options(server.url))
  assert.deepEqual(result.messages, { sent: 90, acked: 90, errors: 0, lost: 0 })
  assert.deepEqual(result.arrivals, { rate: 100, perConnection: 3, messageRate: null, planned: 30, launched: 30, opened: 30, failed: 0, completed: 30, dropped: 0 })
  assert.equal(result.failure, null)
  assert.equal(result.histogram.totalCount, 90)
  assert.equal(decodeHistogram(result.connect.histograms.total).totalCount, 30)
  assert.deepEqual(result.connect.failures, {})
  assert.ok(result.bytes.written > 90 * prepared.sizes.mean, `${result.bytes.written} bytes written`)
  assert.equal(server.seen.opened, 30)
  // Closed by the client, each one: the server may hear of the last close just after the run ends.
  await Promise.all([...server.wss.clients].map((ws) => ws.readyState === ws.CLOSED || once(ws, 'close')))
  assert.equal(server.wss.clients.size, 0, 'every connection closed')
  assert.ok(result.durationMs >= 290, `${result.durationMs} ms`)
})

test('a ramp of arrivals (--stages), in flight more than one', LIMIT, async (t) => {
  const server = await startServer(t)
  const result = await runArrivals(options(server.url, { arrivals: 0, durationMs: undefined, stages: [{ durationMs: 400, target: 200 }], inflight: 2, perConnection: 4 }))
  // 0 -> 200/s over 0.4 s: 40 arrivals, 160 messages.
  assert.equal(result.arrivals.planned, 40)
  assert.deepEqual(result.messages, { sent: 160, acked: 160, errors: 0, lost: 0 })
  assert.equal(result.arrivals.stages.length, 1)
})

test('a server that is not there: every arrival counted as refused, no message sent, the run fails saying so', LIMIT, async () => {
  const closed = net.createServer().listen(0, '127.0.0.1')
  await once(closed, 'listening')
  const { port } = closed.address()
  await new Promise((resolve) => closed.close(resolve))
  const result = await runArrivals(options(`ws://127.0.0.1:${port}`, { durationMs: 100 }))
  assert.deepEqual(result.messages, { sent: 0, acked: 0, errors: 0, lost: 0 })
  assert.equal(result.arrivals.failed, 10)
  assert.deepEqual(result.connect.failures, { refused: 10 })
  assert.equal(result.failure, '10 of 10 arrivals could not connect, 0 were closed by the server')
})

test('a server that closes connections before their messages are done: those connections dropped, their outstanding message lost', LIMIT, async (t) => {
  const server = await startServer(t, (ws, seen) => seen.messages % 2 === 0 ? ws.close(1011) : ws.send('ACK'))
  const result = await runArrivals(options(server.url, { durationMs: 100 }))
  const { sent, acked, errors, lost } = result.messages
  assert.equal(sent, acked + errors + lost, JSON.stringify(result.messages))
  assert.ok(result.arrivals.dropped > 0 && lost === result.arrivals.dropped, JSON.stringify(result.arrivals))
  assert.equal(result.arrivals.completed + result.arrivals.dropped, 10)
  assert.match(result.failure, /^0 of 10 arrivals could not connect, \d+ were closed by the server$/)
})

test('--rate: each arrival runs its own open loop, its messages an interval apart from its opening, latency from their due times', LIMIT, async (t) => {
  // Per connection, when the server took it and when it got its last message. The server takes a
  // connection before the client sees it open, so a message due d ms after the opening arrives
  // over d ms after the server took the connection, however late the machine runs it.
  const spans = []
  const server = await startServer(t)
  server.wss.on('connection', (ws) => {
    const span = { connected: performance.now(), last: 0, count: 0 }
    spans.push(span)
    ws.on('message', () => {
      span.last = performance.now()
      span.count++
    })
  })
  const result = await runArrivals(options(server.url, { arrivals: 50, durationMs: 200, perConnection: 4, rate: 100, inflight: 4 }))
  assert.deepEqual(result.messages, { sent: 40, acked: 40, errors: 0, lost: 0 })
  assert.equal(result.arrivals.completed, 10)
  assert.equal(result.arrivals.messageRate, 100)
  assert.equal(result.uncorrectedHistogram.totalCount, 40, 'an open loop: from the actual send too')
  // Due at 0, 10, 20 and 30 ms from the opening: a late one may go with the next, none goes early.
  assert.equal(spans.length, 10)
  for (const { connected, last, count } of spans) {
    assert.equal(count, 4)
    assert.ok(last - connected >= 30, `a connection's last message ${(last - connected).toFixed(1)} ms after it opened, due at 30`)
  }
})

test('--rate with no room (--inflight 1, a slow server): a due message waits for the reply, its wait in its latency, none lost', LIMIT, async (t) => {
  const server = await startServer(t, (ws) => setTimeout(() => ws.send('ACK'), 30))
  const result = await runArrivals(options(server.url, { arrivals: 20, durationMs: 100, perConnection: 3, rate: 200, inflight: 1 }))
  assert.deepEqual(result.messages, { sent: 6, acked: 6, errors: 0, lost: 0 })
  // Due 5 ms apart, answered 30 ms after each send: the third is sent ~55 ms after it was due.
  assert.ok(result.histogram.maxValue >= 50_000, `${result.histogram.maxValue} µs from the schedule`)
  assert.ok(result.uncorrectedHistogram.maxValue < result.histogram.maxValue)
})
