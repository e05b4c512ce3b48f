// runLoad in this process against real ws servers on port 0: each server here is the least that
// shows one rule of the engine (replies, error replies, a close, silence), no mocks.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer } from 'node:https'
import { WebSocketServer } from 'ws'
import { prepareMessages, runLoad } from '../../lib/load/engine.js'
import { UsageError } from '../../lib/errors.js'
import { judgeGenerator } from '../../lib/report/report.js'
import { createCodec } from '../../lib/codecs/registry.js'
import { loadPayload, resolveTest } from '../../lib/payloads/catalog.js'
import { decodeHistogram } from '../../lib/histogram.js'
import { throwawayCertificate } from '../../lib/server/tls.js'

// An engine that loses count never settles: fail such a test instead of hanging the run.
const LIMIT = { timeout: 10_000 }

const small = resolveTest('5')
const jsonCodec = await createCodec('json', small)
const protobufCodec = await createCodec('protobuf', small)

/**
 * A ws server on a free port; `onMessage(ws, data, isBinary, count)` answers each message, count
 * being the messages the server has had so far (all connections). With a certificate, over wss://.
 * @returns {Promise<{url: string, received: () => number, connections: () => number, close: () => Promise<void>}>}
 */
async function startWsServer (onMessage, certificate = null) {
  const https = certificate && createServer(certificate)
  const wss = new WebSocketServer(https ? { server: https, perMessageDeflate: false } : { host: '127.0.0.1', port: 0, perMessageDeflate: false })
  if (https) https.listen(0, '127.0.0.1')
  await once(https || wss, 'listening')
  let received = 0
  let connections = 0
  wss.on('connection', (ws) => {
    connections++
    ws.on('message', (data, isBinary) => onMessage(ws, data, isBinary, ++received))
  })
  return {
    url: `${https ? 'wss' : 'ws'}://127.0.0.1:${(https || wss).address().port}`,
    received: () => received,
    connections: () => connections,
    close () {
      for (const client of wss.clients) client.terminate()
      return new Promise((resolve) => wss.close(() => https ? https.close(() => resolve()) : resolve()))
    }
  }
}

const ackEach = (ws) => ws.send('ACK')

function options (server, extra = {}) {
  return { url: server.url, test: small, prepared: prepareMessages(jsonCodec, [loadPayload(small)], 'test small'), codec: jsonCodec, ...extra }
}

/** Every sent message is acked, errored or lost, whatever happened. */
function assertAccounted ({ messages }) {
  assert.equal(messages.sent, messages.acked + messages.errors + messages.lost, JSON.stringify(messages))
}

test('closed loop, 3 connections x 4 in flight: every message acked and recorded, bytes counted on the sockets', LIMIT, async (t) => {
  const server = await startWsServer(ackEach)
  t.after(() => server.close())
  const result = await runLoad(options(server, { messages: 600, connections: 3, inflight: 4 }))
  assert.deepEqual(result.messages, { sent: 600, acked: 600, errors: 0, lost: 0 })
  assert.equal(server.received(), 600)
  assert.equal(server.connections(), 3)
  assert.equal(result.histogram.totalCount, 600)
  assert.equal(result.uncorrectedHistogram, null)
  assert.equal(result.sendLagHistogram, null)
  assert.equal(result.target, null)
  assert.equal(result.failure, null)
  assert.equal(result.interrupted, false)
  assert.deepEqual(result.reconnects, { count: 0, gapMs: 0, backoff: { baseMs: 100, capMs: 5000 }, allBackMs: 0, lost: 0, histogram: null, buckets: {}, lateness: null })
  assert.deepEqual(result.errorReplies, [])
  const { payloadPerMessage, written, read } = result.bytes
  assert.equal(payloadPerMessage, Buffer.byteLength(jsonCodec.encode(jsonCodec.prepare(loadPayload(small)))))
  assert.equal(result.bytes.payloadSizes.messages, 1)
  // On the wire each message carries a frame header and a mask; each ACK a 2-byte header.
  assert.ok(written >= 600 * (payloadPerMessage + 6), `written ${written}`)
  assert.ok(read >= 600 * (3 + 2), `read ${read}`)
  assert.ok(result.durationMs > 0)
  assert.ok(result.startedAt > 0 && result.startedAt <= Date.now())
  assert.ok(result.timeSeries.length >= 1, 'the last partial second is in the time series')
  assert.equal(result.timeSeries.reduce((sum, second) => sum + second.acked, 0), 600)
  assert.equal(typeof result.cpu.userUs, 'number')
})

test('echo with protobuf: replies are decoded, and a binary reply that does not decode is an error', LIMIT, async (t) => {
  const server = await startWsServer((ws, data, isBinary, count) => {
    ws.send(count % 10 === 0 ? Buffer.from([0xff, 0xff, 0xff]) : data, { binary: isBinary })
  })
  t.after(() => server.close())
  const result = await runLoad(options(server, { codec: protobufCodec, direction: 'echo', messages: 100, inflight: 5 }))
  assert.deepEqual(result.messages, { sent: 100, acked: 90, errors: 10, lost: 0 })
  assert.equal(result.histogram.totalCount, 90)
  assert.match(result.errorReplies[0], /^client decode failed: /)
  assert.equal(result.errorReplies.length, 5, 'only the first few are kept')
})

test('several payloads are sent in turn, cycling', LIMIT, async (t) => {
  const seen = []
  const server = await startWsServer((ws, data) => {
    seen.push(JSON.parse(data).id)
    ws.send('ACK')
  })
  t.after(() => server.close())
  const payloads = [{ id: 1, status: 'ok' }, { id: 2, status: 'ok' }, { id: 3, status: 'a longer status' }]
  const result = await runLoad(options(server, { prepared: prepareMessages(jsonCodec, payloads, 'three'), messages: 7 }))
  assert.deepEqual(seen, [1, 2, 3, 1, 2, 3, 1])
  assert.deepEqual(result.messages, { sent: 7, acked: 7, errors: 0, lost: 0 })
  assert.equal(result.bytes.payloadSizes.messages, 3)
  assert.ok(result.bytes.payloadSizes.max > result.bytes.payloadSizes.min)
})

test('pre-encoded and framed (capacity\'s generators), over ws:// and wss://: the server reads every payload in turn, all acked', LIMIT, async (t) => {
  const certificate = await throwawayCertificate()
  for (const secure of [false, true]) {
    const seen = []
    const server = await startWsServer((ws, data) => {
      seen.push(JSON.parse(data).id)
      ws.send('ACK')
    }, secure && certificate)
    t.after(() => server.close())
    const payloads = [{ id: 1, status: 'ok' }, { id: 2, status: 'ok' }, { id: 3, status: 'a longer status' }]
    const prepared = prepareMessages(jsonCodec, payloads, 'three')
    const result = await runLoad(options(server, { prepared, messages: 40, inflight: 4, rate: 2000, preencode: true, cork: true, ca: certificate.cert }))
    assert.deepEqual(result.messages, { sent: 40, acked: 40, errors: 0, lost: 0 }, `secure: ${secure}`)
    assert.deepEqual(seen, Array.from({ length: 40 }, (_, i) => i % 3 + 1))
    assert.equal(result.tls !== null, secure)
  }
})

test('an echo server without --ack any: its binary replies are errors, shown as size and hex with the hint', LIMIT, async (t) => {
  const server = await startWsServer((ws, data, isBinary) => ws.send(data, { binary: isBinary }))
  t.after(() => server.close())
  const result = await runLoad(options(server, { codec: protobufCodec, messages: 3 }))
  assert.deepEqual(result.messages, { sent: 3, acked: 0, errors: 3, lost: 0 })
  const size = protobufCodec.encode(protobufCodec.prepare(loadPayload(small))).length
  assert.match(result.errorReplies[0], new RegExp(`^${size} bytes, not text: [0-9a-f]{2}( [0-9a-f]{2})* .*run with --ack any\\)$`))
  for (const text of result.errorReplies) assert.doesNotMatch(text, /[\u0000-\u001f\u007f-\u009f]/) // eslint-disable-line no-control-regex
})

test('ERR replies count as errors, not acks, and their text is kept', LIMIT, async (t) => {
  const server = await startWsServer((ws, data, isBinary, count) => {
    ws.send(count % 4 === 0 ? `ERR json decode failed for test small: #${count}` : 'ACK')
  })
  t.after(() => server.close())
  const result = await runLoad(options(server, { messages: 200, connections: 2, inflight: 3 }))
  assert.deepEqual(result.messages, { sent: 200, acked: 150, errors: 50, lost: 0 })
  assert.equal(result.histogram.totalCount, 150, 'error replies are not latencies')
  assert.equal(result.errorReplies.length, 5)
  for (const text of result.errorReplies) assert.match(text, /^ERR json decode failed for test small: #\d+$/)
  assert.equal(result.failure, null, 'error replies alone do not fail the run')
  assertAccounted(result)
})

test('--ack: any reply, or a given text, completes a message', LIMIT, async (t) => {
  const server = await startWsServer((ws) => ws.send('OK'))
  t.after(() => server.close())
  const byText = await runLoad(options(server, { messages: 20, ack: { text: 'OK' } }))
  assert.deepEqual(byText.messages, { sent: 20, acked: 20, errors: 0, lost: 0 })
  const byAny = await runLoad(options(server, { messages: 20, ack: { any: true } }))
  assert.deepEqual(byAny.messages, { sent: 20, acked: 20, errors: 0, lost: 0 })
  const byDefault = await runLoad(options(server, { messages: 20 }))
  assert.deepEqual(byDefault.messages, { sent: 20, acked: 0, errors: 20, lost: 0 }, 'OK is not ACK')
  assert.deepEqual(byDefault.errorReplies, ['OK', 'OK', 'OK', 'OK', 'OK'])
})

test('a server that closes mid-run: its in-flight messages are lost and the run fails, accounting exact', LIMIT, async (t) => {
  const server = await startWsServer((ws, data, isBinary, count) => {
    if (count < 100) ws.send('ACK')
    else if (count === 100) ws.close(1011, 'going away')
  })
  t.after(() => server.close())
  const result = await runLoad(options(server, { messages: 1000, inflight: 8 }))
  assertAccounted(result)
  assert.equal(result.messages.acked, 99)
  assert.ok(result.messages.lost >= 1, JSON.stringify(result.messages))
  assert.ok(result.messages.sent < 1000)
  assert.equal(result.failure, 'connection closed by the server (code 1011: going away)')
  assert.equal(result.histogram.totalCount, 99)
})

test('--reconnect: a dropped connection comes back and the run goes on to its count', LIMIT, async (t) => {
  const server = await startWsServer((ws, data, isBinary, count) => {
    if (count === 50) ws.terminate()
    else ws.send('ACK')
  })
  t.after(() => server.close())
  const result = await runLoad(options(server, { messages: 300, inflight: 4, reconnect: true, backoff: { baseMs: 20, capMs: 40 } }))
  assertAccounted(result)
  assert.equal(result.messages.sent, 300)
  assert.ok(result.messages.lost >= 1)
  assert.equal(result.reconnects.count, 1)
  // The backoff given; the one drop's time away, the outage, the messages it took, its reopening's window.
  const { backoff, gapMs, allBackMs, lost, histogram, buckets, lateness } = result.reconnects
  assert.deepEqual(backoff, { baseMs: 20, capMs: 40 })
  assert.ok(gapMs >= 0 && gapMs < 1000 && Math.abs(allBackMs - gapMs) <= 1, `${gapMs} ms away, all back after ${allBackMs} ms`)
  assert.equal(lost, result.messages.lost, 'every lost message was outstanding at the drop')
  assert.equal(decodeHistogram(histogram).totalCount, 1)
  assert.deepEqual(Object.values(buckets), [1])
  assert.equal(decodeHistogram(lateness).totalCount, 1, 'the one attempt, timed against its backoff')
  assert.equal(server.connections(), 2)
  assert.equal(result.failure, null)
})

test('handshake: sent first on every connection and not measured', LIMIT, async (t) => {
  const firsts = []
  const greeted = new WeakSet()
  const server = await startWsServer((ws, data) => {
    if (!greeted.has(ws)) {
      greeted.add(ws)
      firsts.push(data.toString())
      return ws.send('WELCOME')
    }
    ws.send('ACK')
  })
  t.after(() => server.close())
  const result = await runLoad(options(server, { messages: 40, connections: 2, handshake: { frame: 'HELLO', expect: 'WELCOME' } }))
  assert.deepEqual(firsts, ['HELLO', 'HELLO'])
  assert.deepEqual(result.messages, { sent: 40, acked: 40, errors: 0, lost: 0 })
  assert.equal(server.received(), 42)
})

for (const pacing of ['precise', 'timer']) {
  test(`open loop, ${pacing} pacing: rate over a duration follows the schedule, with both histograms and each message's send lag`, LIMIT, async (t) => {
    const server = await startWsServer(ackEach)
    t.after(() => server.close())
    const result = await runLoad(options(server, { rate: 2000, durationMs: 500, connections: 2, inflight: 1000, pacing }))
    assert.deepEqual(result.messages, { sent: 1000, acked: 1000, errors: 0, lost: 0 }, 'the schedule says 2000/s x 0.5 s')
    assert.equal(result.target.rate, 2000)
    assert.ok(Math.abs(result.target.sendRate - 2000) / 2000 < 0.2, `sendRate ${result.target.sendRate}`)
    assert.equal(result.histogram.totalCount, 1000)
    assert.equal(result.uncorrectedHistogram.totalCount, 1000)
    assert.equal(result.sendLagHistogram.totalCount, 1000)
    // Latency from the schedule is never shorter than from the actual send.
    assert.ok(result.histogram.maxValue >= result.uncorrectedHistogram.maxValue)
    assert.ok(result.durationMs >= 450, `durationMs ${result.durationMs}`)
  })
}

test('open loop at a low rate: every message due before the deadline is sent, and the rate is over the window', LIMIT, async (t) => {
  const server = await startWsServer(ackEach)
  t.after(() => server.close())
  // Due at 0, 50 and 100 ms: a schedule that stopped an interval early sent two.
  const result = await runLoad(options(server, { rate: 20, durationMs: 125 }))
  assert.deepEqual(result.messages, { sent: 3, acked: 3, errors: 0, lost: 0 })
  assert.ok(result.durationMs >= 125, `the window, not first send to last reply: ${result.durationMs} ms`)
  assert.ok(result.target.sendRate <= 24 && result.target.sendRate > 20, `3 messages in 125 ms: ${result.target.sendRate}/s`)
})

test('open loop with a stalled server: messages wait for room, and latency from the schedule shows it', LIMIT, async (t) => {
  const held = []
  const server = await startWsServer((ws, data, isBinary, count) => {
    // The first 20 get no reply until the 20th arrives: a stall the schedule keeps counting.
    if (count > 20) return ws.send('ACK')
    held.push(ws)
    if (count === 20) setTimeout(() => { for (const socket of held) socket.send('ACK') }, 100)
  })
  t.after(() => server.close())
  const result = await runLoad(options(server, { rate: 1000, messages: 200, inflight: 20 }))
  assert.deepEqual(result.messages, { sent: 200, acked: 200, errors: 0, lost: 0 })
  // Message 21 was due at 20 ms and could only go once a reply made room, after the 100 ms stall.
  assert.ok(result.histogram.maxValue >= 80_000, `corrected max ${result.histogram.maxValue} µs`)
  assert.ok(result.histogram.getValueAtPercentile(50) > result.uncorrectedHistogram.getValueAtPercentile(50))
})

test('warm-up by count and by time is sent first and not counted', LIMIT, async (t) => {
  const server = await startWsServer(ackEach)
  t.after(() => server.close())
  const byCount = await runLoad(options(server, { messages: 100, inflight: 2, warmup: { messages: 50 } }))
  assert.deepEqual(byCount.messages, { sent: 100, acked: 100, errors: 0, lost: 0 })
  assert.equal(byCount.histogram.totalCount, 100)
  assert.equal(server.received(), 150)
  const before = server.received()
  const byTime = await runLoad(options(server, { messages: 100, warmup: { durationMs: 100 } }))
  assert.deepEqual(byTime.messages, { sent: 100, acked: 100, errors: 0, lost: 0 })
  assert.ok(server.received() - before > 100, 'the warm-up sent for 100 ms')
  // Bytes are the measured phase's: about 100 messages' worth, not the warm-up's.
  assert.ok(byTime.bytes.written < 100 * (byTime.bytes.payloadPerMessage + 14) + 1, `written ${byTime.bytes.written}`)
})

test('open loop: the warm-up follows the rate too, not a burst of --inflight', LIMIT, async (t) => {
  const server = await startWsServer(ackEach)
  t.after(() => server.close())
  const result = await runLoad(options(server, { rate: 400, durationMs: 250, inflight: 1000, warmup: { durationMs: 250 } }))
  assert.deepEqual(result.messages, { sent: 100, acked: 100, errors: 0, lost: 0 })
  assert.equal(server.received(), 200, '400/s x 0.25 s of warm-up, then as much measured')
})

test('abort: sending stops, replies in flight get a grace, the rest is lost, accounting exact', LIMIT, async (t) => {
  const controller = new AbortController()
  const server = await startWsServer((ws, data, isBinary, count) => {
    if (count === 100) controller.abort('stopped by the test')
    if (count < 100) ws.send('ACK') // then silent: what is in flight when the signal comes is lost
  })
  t.after(() => server.close())
  const result = await runLoad(options(server, { messages: 100_000, inflight: 10, timeoutMs: 300, signal: controller.signal }))
  assertAccounted(result)
  assert.equal(result.interrupted, true)
  assert.equal(result.failure, 'stopped by the test')
  assert.equal(result.messages.acked, 99)
  assert.ok(result.messages.lost >= 1, JSON.stringify(result.messages))
  assert.ok(result.messages.sent < 100_000)
})

test('abort: replies to messages in flight that come within the grace still count', LIMIT, async (t) => {
  const controller = new AbortController()
  const server = await startWsServer((ws, data, isBinary, count) => {
    if (count === 100) controller.abort('stopped by the test')
    // After the signal the server is slow (50 ms), but well within the grace (300 ms).
    if (count < 100) ws.send('ACK')
    else setTimeout(() => ws.send('ACK'), 50)
  })
  t.after(() => server.close())
  const result = await runLoad(options(server, { messages: 100_000, inflight: 10, timeoutMs: 300, signal: controller.signal }))
  assert.equal(result.interrupted, true)
  assert.equal(result.messages.lost, 0, JSON.stringify(result.messages))
  assert.equal(result.messages.acked, result.messages.sent)
  assert.ok(result.messages.sent >= 100 && result.messages.sent < 100_000)
})

test('abort before the run: nothing is sent', LIMIT, async (t) => {
  const server = await startWsServer(ackEach)
  t.after(() => server.close())
  const result = await runLoad(options(server, { messages: 100, signal: AbortSignal.abort() }))
  assert.equal(result.interrupted, true)
  assert.equal(result.failure, 'interrupted')
  assert.deepEqual(result.messages, { sent: 0, acked: 0, errors: 0, lost: 0 })
  assert.equal(server.received(), 0)
})

test('--timeout: a server that never replies loses every message and fails the run', LIMIT, async (t) => {
  const server = await startWsServer(() => {})
  t.after(() => server.close())
  const result = await runLoad(options(server, { messages: 20, connections: 2, inflight: 3, timeoutMs: 100 }))
  assert.deepEqual(result.messages, { sent: 6, acked: 0, errors: 0, lost: 6 })
  assert.equal(result.failure, 'no reply within 100 ms (--timeout)')
  assert.equal(result.histogram.totalCount, 0)
})

test('a connection that cannot open fails the run, and the ones that did open are closed, not left behind', LIMIT, async (t) => {
  // The server accepts two upgrades and refuses the third.
  let upgrades = 0
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, verifyClient: () => ++upgrades <= 2 })
  await once(wss, 'listening')
  t.after(() => new Promise((resolve) => wss.close(() => resolve())))
  const url = `ws://127.0.0.1:${wss.address().port}`
  await assert.rejects(runLoad({ url, test: small, prepared: prepareMessages(jsonCodec, [loadPayload(small)], 'test small'), codec: jsonCodec, connections: 3, messages: 10 }), /server refused .*: 401/)
  // Every connection the server accepted is closed again.
  while (wss.clients.size > 0) await once([...wss.clients][0], 'close')
  assert.equal(wss.clients.size, 0)
})

test('the generator checks itself: a free event loop is not saturated, one blocked 60 ms in every 100 is', LIMIT, async (t) => {
  const server = await startWsServer(ackEach)
  t.after(() => server.close())
  const free = await runLoad(options(server, { rate: 200, durationMs: 1000, inflight: 10 }))
  assert.ok(free.generator.loopBusy >= 0 && free.generator.loopBusy < 0.9, JSON.stringify(free.generator))
  assert.ok(free.generator.cpuShare > 0, JSON.stringify(free.generator))
  assert.equal(judgeGenerator(free.generator, free.durationMs).saturated, false)
  const blocker = setInterval(() => {
    const until = performance.now() + 60
    while (performance.now() < until); // deliberately blocking, as a generator past its CPU would
  }, 100)
  t.after(() => clearInterval(blocker))
  const blocked = await runLoad(options(server, { rate: 200, durationMs: 1500, inflight: 10 }))
  clearInterval(blocker)
  assert.ok(blocked.generator.loopDelayMs.p99 >= 50, JSON.stringify(blocked.generator))
  assert.ok(blocked.generator.loopDelayMs.max >= blocked.generator.loopDelayMs.p99)
  assert.equal(judgeGenerator(blocked.generator, blocked.durationMs).saturated, true)
  // Messages due while the loop was blocked left late: the send lag says so on its own.
  const lagMs = { p99: blocked.sendLagHistogram.getValueAtPercentile(99) / 1000 }
  assert.ok(lagMs.p99 >= 10, `send lag p99 ${lagMs.p99} ms`)
  assert.equal(judgeGenerator({ ...blocked.generator, loopDelayMs: { p99: 0, max: 0 } }, blocked.durationMs, lagMs).saturated, true)
  assertAccounted(blocked)
})

test('prepareMessages: each message prepared and encoded once, sizes summed up; a codec that cannot is refused naming the message', () => {
  const { natives, sizes } = prepareMessages(jsonCodec, [{ a: 1 }, { a: 22 }, { a: 333 }], 'three')
  assert.deepEqual(natives, [{ a: 1 }, { a: 22 }, { a: 333 }])
  assert.deepEqual(sizes, { messages: 3, mean: 8, min: 7, p50: 8, p99: 9, max: 9 })
  const picky = { ...jsonCodec, encode: (value) => { if (value.a > 9) throw new Error('too big'); return JSON.stringify(value) } }
  assert.throws(() => prepareMessages(picky, [{ a: 1 }, { a: 22 }], 'test small'),
    (err) => err instanceof UsageError && err.message === "format 'json' cannot encode message 2 of test small: too big")
  assert.throws(() => prepareMessages(picky, [{ a: 22 }], 'feed.json'), /^UsageError: format 'json' cannot encode feed\.json: too big$/)
})
