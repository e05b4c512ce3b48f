// connectBroker against real brokers started by startBrokerProcess (redis-server, nats-server):
// frames from one process's Broker reach another's in order, never their own publisher; a broker
// that is not there, or stays silent, is one UsageError line within seconds; one that goes away
// mid-run is reported once. The ipc broker runs in test/process/fanout-brokers.test.js, under a real cluster.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import net from 'node:net'
import { BROKER_CONNECT_TIMEOUT_MS, connectBroker, parseBrokerUrl } from '../../lib/server/broker.js'
import { Envelopes } from '../../lib/server/brokers/envelope.js'
import { UsageError } from '../../lib/errors.js'
import { startBrokerProcess } from '../../lib/server/broker-process.js'
import { brokerUnavailable } from '../helpers.js'

const FRAMES = 2000
const usage = (pattern) => (err) => err instanceof UsageError && pattern.test(err.message) && !err.message.includes('\n')

/** Resolves once `handler` has been called `count` times, with every call's arguments. */
function collect (broker, count) {
  const frames = []
  return new Promise((resolve) => {
    broker.onFrame((topic, frame, isBinary) => {
      frames.push([topic, Buffer.from(frame), isBinary])
      if (frames.length === count) resolve(frames)
    })
  })
}

test('parseBrokerUrl: redis://, nats:// (default ports) and ipc; anything else one UsageError line', () => {
  assert.deepEqual(parseBrokerUrl('redis://127.0.0.1:6399'), { kind: 'redis', port: 6399 })
  assert.deepEqual(parseBrokerUrl('redis://cache.example'), { kind: 'redis', port: 6379 })
  assert.deepEqual(parseBrokerUrl('nats://[::1]'), { kind: 'nats', port: 4222 })
  assert.deepEqual(parseBrokerUrl('ipc'), { kind: 'ipc' })
  for (const url of ['kafka://127.0.0.1:9092', 'redis:', 'redis://host/0', '127.0.0.1:6379', '']) {
    assert.throws(() => parseBrokerUrl(url), usage(/^unknown broker '.*': expected redis:\/\/HOST:PORT, nats:\/\/HOST:PORT or ipc$/), url)
  }
})

test('Envelopes: topic, frame and kind round-trip; the origin\'s own envelopes are skipped', () => {
  const mine = new Envelopes(Buffer.from('AAAAAAAA'))
  const theirs = new Envelopes(Buffer.from('BBBBBBBB'))
  const seen = []
  const envelope = mine.wrap('protobuf-es counters', Buffer.from([0, 1, 2]), true)
  theirs.unwrap(envelope, (...call) => seen.push(call))
  mine.unwrap(envelope, (...call) => seen.push(call))
  new Envelopes().unwrap(new Envelopes().wrap('json 3', Buffer.from('{}'), false), (...call) => seen.push(call))
  assert.deepEqual(seen, [['protobuf-es counters', Buffer.from([0, 1, 2]), true], ['json 3', Buffer.from('{}'), false]])
})

test('the ipc broker outside a cluster worker: one UsageError line', async () => {
  await assert.rejects(connectBroker('ipc'), usage(/^broker ipc relays between the worker processes of one server: it needs --processes 2 or more$/))
  await assert.rejects(connectBroker('amqp://127.0.0.1'), usage(/^unknown broker/))
})

test('a broker that accepts and never answers: one UsageError line once the connect timeout has passed', async (t) => {
  const silent = net.createServer((socket) => socket.on('error', () => {}).resume())
  await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve))
  t.after(() => silent.close())
  for (const kind of ['redis', 'nats']) {
    const url = `${kind}://127.0.0.1:${silent.address().port}`
    const started = Date.now()
    await assert.rejects(connectBroker(url), usage(new RegExp(`^broker ${url} does not answer: `)))
    const elapsed = Date.now() - started
    assert.ok(elapsed >= BROKER_CONNECT_TIMEOUT_MS - 100 && elapsed < BROKER_CONNECT_TIMEOUT_MS + 2000, `${kind}: ${elapsed} ms`)
  }
})

/** An onLost that keeps every reason; told resolves at the first. */
function lostWatcher () {
  const reasons = []
  let tell
  const told = new Promise((resolve) => { tell = resolve })
  return { reasons, told, onLost: (why) => { reasons.push(why); tell() } }
}

for (const kind of ['redis', 'nats']) {
  describe(`the ${kind} broker`, { skip: brokerUnavailable(kind) }, () => {
    test('frames published by one process reach the others in order, text and binary, every topic, none back to the publisher', async (t) => {
      const server = await startBrokerProcess(kind)
      t.after(() => server.stop())
      const lost = []
      const [publisher, first, second] = await Promise.all([1, 2, 3].map(() => connectBroker(server.url, { onLost: (why) => lost.push(why) })))
      t.after(() => Promise.all([publisher, first, second].map((broker) => broker.close())))
      assert.equal(publisher.name, kind)
      const arrivals = [first, second].map((broker) => collect(broker, FRAMES))
      const sent = Array.from({ length: FRAMES }, (_, i) => [i % 3 ? 'json 3' : 'protobuf 3', Buffer.from(`frame ${i} `.repeat(1 + i % 50)), i % 3 === 0])
      for (const [topic, frame, isBinary] of sent) publisher.publish(topic, frame, isBinary)
      for (const frames of await Promise.all(arrivals)) assert.deepEqual(frames, sent)
      // A frame published after them reaches the publisher behind any of its own that came back: none did.
      const echoed = collect(publisher, 1)
      first.publish('json 5', Buffer.from('after'), false)
      assert.deepEqual(await echoed, [['json 5', Buffer.from('after'), false]])
      assert.deepEqual(lost, [])
    })

    test('nothing there: one UsageError line with how to start one, within the connect timeout', async () => {
      const server = await startBrokerProcess(kind)
      await server.stop()
      const started = Date.now()
      const program = `${kind}-server --port ${new URL(server.url).port}`
      await assert.rejects(connectBroker(server.url), usage(new RegExp(`^broker ${server.url} does not answer: \\S+ \\(start one: ${program}\\)$`)))
      assert.ok(Date.now() - started < BROKER_CONNECT_TIMEOUT_MS + 1000)
    })

    test('the broker stopped mid-run: onLost once per process, one line; publishing after it neither throws nor hangs', async () => {
      const server = await startBrokerProcess(kind)
      const watchers = [lostWatcher(), lostWatcher()]
      const brokers = await Promise.all(watchers.map(({ onLost }) => connectBroker(server.url, { onLost })))
      await server.stop()
      await Promise.all(watchers.map(({ told }) => told))
      brokers[0].publish('json 3', Buffer.from('after'), false)
      await Promise.all(brokers.map((broker) => broker.close()))
      for (const { reasons } of watchers) {
        assert.equal(reasons.length, 1)
        assert.match(reasons[0], new RegExp(`^broker ${server.url} connection lost: [^\\n]+$`))
      }
    })
  })
}
