// Subscribers (lib/load/subscribers.js) in this process against the real server (startServer on
// port 0), with a publisher that sends fan-out frames on a schedule of the test's: liveness that
// costs nothing while deliveries come on time, a stalled link caught and reconnected, and a
// subscriber process running late that judges nobody meanwhile.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import WebSocket from 'ws'
import { Subscribers } from '../../lib/load/subscribers.js'
import { prepareRun } from '../../lib/load/measure.js'
import { startServer } from '../../lib/server/server.js'
import { FANOUT_END, connectionUrl, fanoutHeader } from '../../lib/protocol.js'
import { runNodeScript } from '../../lib/processes.js'
import { startRelay } from '../helpers.js'

const LIMIT = { timeout: 30_000 }
const HEARTBEAT_MS = 100

/** Subscribers of test 3 in json as the command line makes them, to `url` (or through `connectUrl`). */
async function subscribers (url, { rate, connectUrl } = {}) {
  const run = await prepareRun('json', { test: '3', custom: null, load: { repeat: true } })
  return new Subscribers({
    url,
    connectUrl,
    test: run.test,
    codec: run.codec,
    prepared: run.prepared,
    compress: false,
    direction: 'fanout',
    headers: {},
    heartbeatMs: HEARTBEAT_MS,
    rate
  })
}

/**
 * A publisher in this process: `count` measured publishes at `rate` per second from now, each
 * stamped with its scheduled time, then the END; from publish `pause.before` on, `pause.ms` later
 * than the schedule the subscribers expect.
 */
async function publish (url, { count, rate, pause = { before: -1, ms: 0 } }) {
  const ws = new WebSocket(connectionUrl(url, { test: 'medium', format: 'json', direction: 'fanout', role: 'publisher' }))
  await once(ws, 'open')
  const payload = JSON.stringify({ id: 1, status: 'ok' })
  const startUs = Math.round((performance.timeOrigin + performance.now()) * 1000)
  for (let seq = 0; seq < count; seq++) {
    const dueUs = startUs + Math.round(seq * 1e6 / rate) + (seq >= pause.before && pause.before >= 0 ? pause.ms * 1000 : 0)
    const waitMs = (dueUs - (performance.timeOrigin + performance.now()) * 1000) / 1000
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs))
    ws.send(fanoutHeader(true, seq, dueUs) + payload)
  }
  ws.send(`${FANOUT_END}${count}`)
  ws.close()
}

test('deliveries on time: no subscriber is pinged, though publishes come further apart than a heartbeat', LIMIT, async (t) => {
  const server = await startServer({ port: 0 })
  t.after(() => server.close())
  const heard = await subscribers(server.url, { rate: 4 })
  await heard.open(20)
  await publish(server.url, { count: 8, rate: 4 })
  heard.expectEndBy(performance.now() + 5000)
  const { fanout } = await heard.finish()
  await heard.close()
  assert.equal(fanout.delivered, 8 * 20)
  assert.deepEqual(fanout.liveness.closes, { link: 0, server: 0, generator: 0 })
  assert.equal(fanout.liveness.pings, 0, 'each delivery came when it was due: nothing to probe')
  assert.equal(fanout.reconnects.count, 0)
})

test('a publish late by more than a heartbeat: the subscribers are probed, answer, and stay', LIMIT, async (t) => {
  const server = await startServer({ port: 0 })
  t.after(() => server.close())
  const heard = await subscribers(server.url, { rate: 10 })
  await heard.open(10)
  await publish(server.url, { count: 10, rate: 10, pause: { before: 5, ms: 4 * HEARTBEAT_MS } })
  heard.expectEndBy(performance.now() + 5000)
  const { fanout } = await heard.finish()
  await heard.close()
  assert.equal(fanout.delivered, 10 * 10)
  assert.ok(fanout.liveness.pings >= 10, `${fanout.liveness.pings} pings: every subscriber missed a delivery it expected`)
  assert.deepEqual(fanout.liveness.closes, { link: 0, server: 0, generator: 0 }, 'a ping answered is life')
  assert.equal(fanout.reconnects.count, 0)
})

test('a stalled link: its subscribers miss what is due, are probed, go unanswered, and are closed for the link and reconnect', LIMIT, async (t) => {
  const server = await startServer({ port: 0 })
  t.after(() => server.close())
  // The subscribers connect through a relay that can stop forwarding without closing anything.
  const relay = await startRelay(server)
  t.after(() => relay.close())
  const heard = await subscribers(server.url, { rate: 20, connectUrl: relay.url })
  await heard.open(5)
  const stalled = relay.pairs.slice(0, 5)
  const publishing = publish(server.url, { count: 40, rate: 20 })
  // After 0.5 s the first connections' bytes stop in both directions, for 6 heartbeats.
  await new Promise((resolve) => setTimeout(resolve, 500))
  for (const [socket, upstream] of stalled) { socket.unpipe(); upstream.unpipe() }
  await new Promise((resolve) => setTimeout(resolve, 6 * HEARTBEAT_MS))
  for (const [socket, upstream] of stalled) { socket.destroy(); upstream.destroy() }
  await publishing
  heard.expectEndBy(performance.now() + 5000)
  const { fanout } = await heard.finish()
  await heard.close()
  assert.equal(fanout.liveness.closes.link, 5, JSON.stringify(fanout.liveness))
  assert.equal(fanout.liveness.closes.generator, 0)
  assert.ok(fanout.reconnects.count >= 5)
  assert.ok(fanout.delivered < 40 * 5, 'what came while they were away is lost')
})

test('a subscriber process running late for a second: nobody judged meanwhile, nothing closed, every delivery counted', LIMIT, async (t) => {
  const server = await startServer({ port: 0 })
  t.after(() => server.close())
  const heard = await subscribers(server.url, { rate: 5 })
  await heard.open(20)
  // A publisher in another process keeps the schedule while this one is busy 120 ms of every 130.
  const publisher = runNodeScript('client_json.js', ['3', '--url', server.url, '--direction', 'fanout', '--role', 'publisher',
    '--rate', '5', '--duration', '3s', '--warmup', '0', '--json'])
  const busyUntil = performance.now() + 2000
  while (performance.now() < busyUntil) {
    const until = performance.now() + 120
    while (performance.now() < until) {} // eslint-disable-line no-empty
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  const { code, stderr } = await publisher
  assert.equal(code, 0, stderr)
  heard.expectEndBy(performance.now() + 5000)
  const { fanout } = await heard.finish()
  await heard.close()
  assert.equal(fanout.delivered, 15 * 20)
  assert.deepEqual(fanout.liveness.closes, { link: 0, server: 0, generator: 0 })
  assert.equal(fanout.reconnects.count, 0)
  assert.ok(fanout.liveness.suspendedMs >= 1000, `judging waited ${fanout.liveness.suspendedMs} ms`)
})
