// runFanout through measure, in this process, against the real server (startServer on port 0):
// every expected delivery accounted for, in one process or split by role and merged.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { WebSocketServer } from 'ws'
import { runFanout } from '../../lib/load/fanout.js'
import { prepareMessages } from '../../lib/load/engine.js'
import { measure, prepareRun } from '../../lib/load/measure.js'
import { startServer } from '../../lib/server/server.js'
import { mergeReports } from '../../lib/report/merge.js'
import { decodeHistogram } from '../../lib/histogram.js'
import { fanoutHeader } from '../../lib/protocol.js'
import { startRelay } from '../helpers.js'

const LIMIT = { timeout: 30_000 }

/** A fan-out run as the command line gives it (client-options.js defaults), to `url`. */
function fanoutRun (url, format, load = {}) {
  return {
    format,
    test: '3',
    custom: null,
    load: {
      url,
      connections: 20,
      rate: 100,
      durationMs: 1000,
      inflight: 1000,
      warmup: { messages: 10 },
      headers: {},
      ack: { text: 'ACK' },
      timeoutMs: 5000,
      compress: false,
      repeat: false,
      direction: 'fanout',
      role: 'both',
      heartbeatMs: 500,
      ...load
    }
  }
}

async function run (format, settings) {
  const prepared = await prepareRun(format, settings)
  return measure(prepared, settings.load, { network: null })
}

test('runFanout (lib/load/fanout.js): one process, json and protobuf: every publish reaches every subscriber once, in order, timed from its schedule', LIMIT, async (t) => {
  const server = await startServer({ port: 0 })
  t.after(() => server.close())
  for (const format of ['json', 'protobuf']) {
    const report = await run(format, fanoutRun(server.url, format))
    const f = report.fanout
    assert.equal(report.ok, true, report.failure)
    assert.equal(report.messages.sent, 100, 'the publisher: 100/s for 1 s')
    assert.equal(report.messages.acked, 100)
    assert.deepEqual([f.role, f.subscribers, f.published, f.expected, f.delivered, f.lost, f.duplicates, f.reordered, f.errors],
      ['both', 20, 100, 2000, 2000, 0, 0, 0, 0])
    assert.equal(decodeHistogram(report.histogram).totalCount, 2000, 'one latency per delivery')
    assert.ok(report.latencyMs.min > 0 && report.latencyMs.p99 >= report.latencyMs.p50)
    assert.equal(f.perPublish.firstUs.length, 100)
    assert.ok(f.perPublish.firstUs.every((first, seq) => first > 0 && first <= f.perPublish.lastUs[seq]))
    assert.ok(f.spreadMs.max >= f.spreadMs.p50)
    assert.equal(f.headerBytes, 24)
    // Each delivery read its payload, its header and a frame header on a subscriber's socket.
    assert.ok(f.wire.perDelivery > report.bytes.payloadSizes.min + 24, JSON.stringify(f.wire))
    assert.ok(f.wire.perDelivery < report.bytes.payloadSizes.max + 24 + 20, JSON.stringify(f.wire))
    assert.ok(f.cpuPerDeliveryUs > 0)
    assert.ok(report.rate > 1000, `deliveries/s: ${report.rate}`)
    assert.equal(report.generator.saturated, false)
    assert.equal(f.decoders, 20, 'every subscriber decodes (--decode all, the default)')
    assert.equal(server.stats.forTarget(format, 'medium').deliveries >= 2000 + 200, true, 'warm-up publishes are delivered too')
  }
})

test('runFanout: runs one after another on one topic: the last run\'s END, kept for latecomers, does not end the next', LIMIT, async (t) => {
  const server = await startServer({ port: 0 })
  t.after(() => server.close())
  for (let round = 0; round < 3; round++) {
    const report = await run('json', fanoutRun(server.url, 'json', { connections: 10, durationMs: 300 }))
    assert.equal(report.ok, true, report.failure)
    // Each subscriber got the 10 warm-up publishes, the 30 measured ones and one END: nothing else.
    assert.equal(report.fanout.wire.frames, 10 * (10 + 30 + 1), `round ${round}`)
  }
})

test('runFanout: subscribers and publisher in separate runs (--role) merge into the same exact accounting', LIMIT, async (t) => {
  const server = await startServer({ port: 0 })
  t.after(() => server.close())
  const startAt = Date.now() + 1500
  const subscribers = [8, 12].map((connections) => run('json', fanoutRun(server.url, 'json', { role: 'subscriber', connections, startAt })))
  // The publisher starts once the subscribers are there (as hosts given one --start-at do).
  while (server.stats.subscribers < 20) await new Promise((resolve) => setImmediate(resolve))
  const publisher = await run('json', fanoutRun(server.url, 'json', { role: 'publisher', startAt }))
  const parts = [publisher, ...await Promise.all(subscribers)]
  assert.deepEqual(parts.map((part) => [part.fanout.role, part.fanout.subscribers, part.fanout.published]),
    [['publisher', 0, 100], ['subscriber', 8, 100], ['subscriber', 12, 100]])
  const merged = mergeReports(parts)
  const f = merged.fanout
  assert.deepEqual([f.subscribers, f.published, f.expected, f.delivered, f.lost, f.duplicates], [20, 100, 2000, 2000, 0, 0])
  assert.equal(merged.ok, true, merged.failure)
  assert.equal(merged.messages.acked, 100)
  assert.equal(decodeHistogram(merged.histogram).totalCount, 2000)
  assert.deepEqual(f.perPublish.firstUs, parts[1].fanout.perPublish.firstUs.map((first, seq) => Math.min(first, parts[2].fanout.perPublish.firstUs[seq])))
  assert.throws(() => mergeReports([parts[1], { ...parts[2], fanout: { ...parts[2].fanout, published: 99 } }]), /disagree on how many were published: 100, 99/)
})

/**
 * A fan-out run whose first 10 subscriber connections are cut (through a relay that can) after
 * 100 measured publishes, against a server of `options`.
 */
async function runWithCuts (t, serverOptions) {
  const server = await startServer({ port: 0, ...serverOptions })
  t.after(() => server.close())
  // Every connection goes through this relay, which can cut them: the subscribers open first, the publisher last.
  const relay = await startRelay(server)
  t.after(() => relay.close())
  const settings = fanoutRun(server.url, 'protobuf', { connections: 30, rate: 200, durationMs: 1500 })
  const running = measure(await prepareRun('protobuf', settings), settings.load, { connectUrl: relay.url, network: null })
  while (server.stats.forTarget('protobuf', 'medium').messages < 10 + 100) await new Promise((resolve) => setImmediate(resolve))
  for (const [socket] of relay.pairs.slice(0, 10)) socket.destroy()
  const report = await running
  const f = report.fanout
  assert.ok(f.reconnects.count >= 10, `${f.reconnects.count} reconnects`)
  assert.ok(f.reconnects.gapMs.max > 0)
  assert.equal(f.expected, 300 * 30)
  assert.equal(f.delivered + f.lost, f.expected)
  assert.equal(f.duplicates, 0)
  assert.equal(report.messages.acked, 300, 'the publisher was not cut')
  return { report, server }
}

test('runFanout: subscribers whose connections are cut reconnect; what they missed is lost, nothing is duplicated', LIMIT, async (t) => {
  const { report } = await runWithCuts(t, {})
  assert.equal(report.fanout.recovered, 0, 'a server without --replay replays nothing')
  assert.equal(report.ok, report.fanout.lost === 0)
})

test('runFanout: against a server with --replay, the subscribers that come back get what they missed, late, once each', LIMIT, async (t) => {
  const { report, server } = await runWithCuts(t, { replay: 300 })
  const f = report.fanout
  assert.deepEqual([f.delivered, f.lost, f.duplicates, f.reordered], [f.expected, 0, 0, 0], JSON.stringify(f))
  assert.ok(f.recovered > 0, 'some came replayed')
  assert.equal(f.recovered, server.stats.replayed, 'every one the server replayed, delivered')
  assert.ok(report.ok)
})

test('runFanout: publishes far apart and a short heartbeat: silent subscribers are pinged, answer, and stay', LIMIT, async (t) => {
  const server = await startServer({ port: 0 })
  t.after(() => server.close())
  const report = await run('json', fanoutRun(server.url, 'json', { connections: 20, rate: 2, durationMs: 1500, heartbeatMs: 100, warmup: { messages: 0 } }))
  assert.equal(report.ok, true, report.failure)
  assert.equal(report.fanout.reconnects.count, 0, 'a ping answered is life')
  assert.equal(report.fanout.delivered, 3 * 20)
})

test('runFanout: subscribers with no publisher fail at the deadline with one line, and close', LIMIT, async (t) => {
  const server = await startServer({ port: 0 })
  t.after(() => server.close())
  const prepared = await prepareRun('json', fanoutRun(server.url, 'json'))
  const { load } = fanoutRun(server.url, 'json', { role: 'subscriber', connections: 3, durationMs: 200, timeoutMs: 300, warmup: { messages: 0 } })
  const result = await runFanout({ ...load, test: prepared.test, codec: prepared.codec, prepared: prepareMessages(prepared.codec, [{ id: 1 }], 'one message') })
  assert.equal(result.failure, '3 of 3 subscribers had no END from the publisher by the deadline (--timeout)')
  assert.equal(result.fanout.published, null)
  while (server.stats.subscribers > 0) await new Promise((resolve) => setImmediate(resolve))
})

test('runFanout: --decode one: one subscriber decodes what it gets, the others account for every delivery by its header', LIMIT, async (t) => {
  // A server the real one is not: it forwards payloads that do not decode, so each decode shows as an error.
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 })
  await new Promise((resolve) => server.once('listening', resolve))
  t.after(() => server.close())
  const subscribers = 10
  let joined = 0
  server.on('connection', () => {
    if (++joined % subscribers !== 0) return
    const nowUs = Date.now() * 1000
    for (const ws of server.clients) {
      for (let seq = 0; seq < 5; seq++) ws.send(`${fanoutHeader(true, seq, nowUs)}{"not json`)
      ws.send('END 5')
    }
  })
  const url = `ws://127.0.0.1:${server.address().port}`
  for (const [decode, decoders] of [['all', subscribers], ['one', 1]]) {
    const report = await run('json', fanoutRun(url, 'json', { role: 'subscriber', connections: subscribers, decode }))
    const f = report.fanout
    assert.deepEqual([f.decoders, f.published, f.expected, f.delivered, f.lost], [decoders, 5, 50, 50, 0], decode)
    assert.equal(f.errors, 5 * decoders, `--decode ${decode}: one error per delivery decoded`)
    assert.match(report.errorReplies[0], /^client decode failed: /)
    assert.equal(report.ok, false)
  }
})
