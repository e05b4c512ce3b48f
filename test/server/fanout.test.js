import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { WebSocket } from 'ws'
import { startServer } from '../../lib/server/server.js'
import { createCodec } from '../../lib/codecs/registry.js'
import { loadMessages, resolveTest } from '../../lib/payloads/catalog.js'
import { FANOUT_HEADER_BYTES, connectionUrl, fanoutHeader } from '../../lib/protocol.js'
import { openConnection, refusedUpgrade } from '../helpers.js'

const fanoutUrl = (server, format, role, test = '3') => connectionUrl(server.url, { test, format, direction: 'fanout', role }).href

describe('fan-out (lib/server/fanout.js) on a real server', () => {
  let server
  before(async () => { server = await startServer({ port: 0, maxBuffered: 64 * 1024 }) })
  after(() => server.close())

  test('every subscriber of a topic gets each publish byte for byte, other topics nothing; the publisher gets ACK, END goes to all', async () => {
    const test3 = resolveTest(3)
    for (const format of ['json', 'protobuf']) {
      const codec = await createCodec(format, test3)
      const subscribers = await Promise.all([1, 2, 3].map(() => openConnection(fanoutUrl(server, format, 'subscriber'))))
      const elsewhere = await openConnection(fanoutUrl(server, format, 'subscriber', '5'))
      const publisher = await openConnection(fanoutUrl(server, format, 'publisher'))
      const frames = loadMessages(test3).messages.slice(0, 3).map((message, seq) => {
        const payload = Buffer.from(codec.encode(codec.prepare(message)))
        return Buffer.concat([Buffer.from(fanoutHeader(true, seq, Date.now() * 1000)), payload])
      })
      for (const frame of frames) {
        publisher.ws.send(frame, { binary: codec.binary })
        assert.equal(await publisher.nextReply(), 'ACK')
      }
      publisher.ws.send('END 3')
      for (const { nextReply } of subscribers) {
        for (const frame of frames) assert.equal(await nextReply(), frame.toString())
        assert.equal(await nextReply(), 'END 3')
      }
      // A subscriber that joins after the END learns it at once (one that was away, reconnecting).
      const late = await openConnection(fanoutUrl(server, format, 'subscriber'))
      assert.equal(await late.nextReply(), 'END 3')
      publisher.ws.send('x'.repeat(FANOUT_HEADER_BYTES - 1))
      assert.match(await publisher.nextReply(), /^ERR .*starts with the 24-byte fan-out header/)
      publisher.ws.send(Buffer.concat([Buffer.from(fanoutHeader(true, 3, Date.now() * 1000)), Buffer.from([0xff, 0xff])]), { binary: true })
      assert.match(await publisher.nextReply(), /^ERR .*decode failed/)
      // The next publish (a new round) forgets the END: a subscriber joining now waits for publishes.
      publisher.ws.send(frames[0], { binary: codec.binary })
      assert.equal(await publisher.nextReply(), 'ACK')
      assert.equal(await late.nextReply(), frames[0].toString())
      late.ws.send('hello')
      assert.match(await late.nextReply(), /^ERR a fan-out subscriber sends nothing/)
      publisher.ws.send('END 4')
      assert.equal(await late.nextReply(), 'END 4')
      // Kept after every subscriber has gone: one cut off until then still learns the count (a
      // subscriber of the next run knows an END before any publish is not its run's).
      const closed = [...subscribers, late].map(({ closed }) => closed)
      for (const { ws } of [...subscribers, late]) ws.close()
      await Promise.all(closed)
      const next = await openConnection(fanoutUrl(server, format, 'subscriber'))
      assert.equal(await next.nextReply(), 'END 4')
      publisher.ws.send(frames[1], { binary: codec.binary })
      assert.equal(await next.nextReply(), frames[1].toString())
      for (const { ws } of [elsewhere, publisher, next]) ws.close()
      const counters = server.stats.forTarget(format, 'medium')
      assert.equal(counters.messages, 5, `${format}: publishes decoded`)
      assert.equal(counters.errors, 2)
      assert.equal(counters.deliveries, 3 * 3 + 4 + 1, `${format}: 3 publishes to 3 subscribers, then 1 to all 4, 1 to the next`)
      assert.equal(server.stats.forTarget(format, 'small').deliveries, 0)
    }
    assert.match(server.stats.countsLine(), /\d+ subscribers, 28 deliveries, 0 slow subscribers dropped/)
  })

  test('a subscriber that stops reading is dropped past --max-buffered and counted; the others keep getting everything', async () => {
    const codec = await createCodec('json', resolveTest(4))
    const reader = await openConnection(fanoutUrl(server, 'json', 'subscriber', '4'))
    const stuck = await openConnection(fanoutUrl(server, 'json', 'subscriber', '4'))
    stuck.ws._socket.pause() // reads nothing: the server's buffer for it grows
    const publisher = await openConnection(fanoutUrl(server, 'json', 'publisher', '4'))
    const payload = codec.encode(loadMessages(resolveTest(4)).messages[0])
    const before = server.stats.slowSubscribers
    let published = 0
    // Publishes until the server gives up on the stuck subscriber; the kernel's buffers take the first few MB.
    while (server.stats.slowSubscribers === before && published < 20000) {
      publisher.ws.send(fanoutHeader(true, published++, Date.now() * 1000) + payload)
      assert.equal(await publisher.nextReply(), 'ACK')
    }
    assert.equal(server.stats.slowSubscribers, before + 1, `dropped after ${published} publishes`)
    for (let i = 0; i < published; i++) assert.equal((await reader.nextReply()).slice(1, 9), i.toString(16).padStart(8, '0'))
    stuck.ws._socket.resume()
    assert.equal(await stuck.closed, 1006, 'terminated')
    const metrics = await server.metrics()
    assert.equal(metrics.find((m) => m.name === 'wsbench_slow_subscribers_dropped_total').values[0].value, before + 1)
    for (const { ws } of [reader, publisher]) ws.close()
  })

  test('&role= only with direction fanout, and only subscriber or publisher', async () => {
    assert.match((await refusedUpgrade(`${server.url}/?test=3&format=json&role=publisher`)).body, /role= goes with direction fanout/)
    assert.match((await refusedUpgrade(`${server.url}/?test=3&format=json&direction=fanout&role=reader`)).body, /unknown role 'reader'/)
  })
})

test('publishes framed once reach plain subscribers byte for byte, as ws frames them for deflate subscribers: text and binary, short and long', async (t) => {
  const server = await startServer({ port: 0, compress: true })
  t.after(() => server.close())
  const test3 = resolveTest(3)
  const received = (ws) => {
    const frames = []
    ws.on('message', (data, isBinary) => frames.push({ data: Buffer.from(data), isBinary }))
    return frames
  }
  for (const format of ['json', 'protobuf']) {
    const codec = await createCodec(format, test3)
    const open = (perMessageDeflate) => new Promise((resolve, reject) => {
      const ws = new WebSocket(fanoutUrl(server, format, 'subscriber'), { perMessageDeflate })
      const frames = received(ws)
      ws.once('open', () => resolve({ ws, frames }))
      ws.once('error', reject)
    })
    const [plain, deflated] = await Promise.all([open(false), open(true)])
    assert.deepEqual([plain.ws.extensions, deflated.ws.extensions], ['', 'permessage-deflate'])
    const publisher = await openConnection(fanoutUrl(server, format, 'publisher'))
    // 125 bytes or less, up to 64 KiB, and past it: the three lengths a frame header can spell.
    const payloads = format === 'json'
      ? ['1', JSON.stringify(loadMessages(test3).messages[0]), JSON.stringify('x'.repeat(70_000))]
      : loadMessages(test3).messages.slice(0, 2).map((message) => codec.encode(codec.prepare(message)))
    const frames = payloads.map((payload, seq) => Buffer.concat([Buffer.from(fanoutHeader(true, seq, Date.now() * 1000)), Buffer.from(payload)]))
    for (const frame of frames) {
      publisher.ws.send(frame, { binary: codec.binary })
      assert.equal(await publisher.nextReply(), 'ACK')
    }
    publisher.ws.send(`END ${frames.length}`)
    for (const { ws, frames: got } of [plain, deflated]) {
      while (got.length < frames.length + 1) await new Promise((resolve) => ws.once('message', resolve))
      assert.deepEqual(got.slice(0, frames.length), frames.map((data) => ({ data, isBinary: codec.binary })), `${format}, ${ws.extensions || 'plain'}`)
      assert.deepEqual(got.at(-1), { data: Buffer.from(`END ${frames.length}`), isBinary: false })
    }
    assert.ok(deflated.ws._socket.bytesRead < plain.ws._socket.bytesRead, 'the deflate subscriber got its frames compressed')
    for (const { ws } of [plain, deflated, publisher]) ws.close()
  }
})

test('--replay 3: a subscriber back with &from= gets the last 3 measured publishes from there on, marked r, before anything new; a new run forgets them', async (t) => {
  const server = await startServer({ port: 0, replay: 3 })
  t.after(() => server.close())
  const url = (from) => `${fanoutUrl(server, 'json', 'subscriber', '5')}${from === undefined ? '' : `&from=${from}`}`
  const publisher = await openConnection(fanoutUrl(server, 'json', 'publisher', '5'))
  const frame = (measured, seq) => `${fanoutHeader(measured, seq, Date.now() * 1000)}{"id":${seq},"status":"ok"}`
  const publish = async (text) => {
    publisher.ws.send(text)
    assert.equal(await publisher.nextReply(), 'ACK')
  }
  const replayed = (text) => `r${text.slice(1)}`
  const measured = Array.from({ length: 5 }, (_, seq) => frame(true, seq))
  await publish(frame(false, 0))
  for (const text of measured) await publish(text)
  // Kept: the last three (2, 3, 4), so from=1 gets 2, 3 and 4, and from=4 only 4; then what is new.
  const back = await openConnection(url(1))
  const later = await openConnection(url(4))
  const fresh = await openConnection(url())
  for (const text of measured.slice(2)) assert.equal(await back.nextReply(), replayed(text))
  assert.equal(await later.nextReply(), replayed(measured[4]))
  const next = frame(true, 5)
  await publish(next)
  for (const { nextReply } of [back, later, fresh]) assert.equal(await nextReply(), next, 'then the new publish, as it came')
  // After the END, one that comes back gets what it missed first, then the END.
  publisher.ws.send('END 6')
  const afterEnd = await openConnection(url(5))
  assert.equal(await afterEnd.nextReply(), replayed(next))
  assert.equal(await afterEnd.nextReply(), 'END 6')
  assert.equal(server.stats.replayed, 3 + 1 + 1)
  assert.equal(server.stats.forTarget('json', 'small').deliveries, 3 + 1 + 1 + 3, 'replays are deliveries: 5 replayed, 3 of the new publish')
  assert.match(server.stats.countsLine(), /, 8 deliveries, 5 of them replayed, /)
  const metrics = await server.metrics()
  assert.equal(metrics.find((m) => m.name === 'wsbench_fanout_replayed_total').values[0].value, 5)
  // A warm-up starts a new round: nothing of the last run is replayed, the new run's measured are.
  await publish(frame(false, 0))
  const none = await openConnection(url(0))
  await publish(measured[0])
  assert.equal(await none.nextReply(), measured[0], 'nothing replayed before the new publish')
  // A run that starts again from 0 without a warm-up forgets the last one as well.
  await publish(measured[1])
  await publish(measured[0])
  const restarted = await openConnection(url(0))
  assert.equal(await restarted.nextReply(), replayed(measured[0]))
  await publish(measured[1])
  assert.equal(await restarted.nextReply(), measured[1], 'only the new run\'s 0 was replayed')
  // A publisher may not pass off its frames as replayed, and &from= is for subscribers only.
  publisher.ws.send(replayed(frame(true, 9)))
  assert.match(await publisher.nextReply(), /^ERR .*fan-out header/)
  assert.match((await refusedUpgrade(`${fanoutUrl(server, 'json', 'publisher', '5')}&from=1`)).body, /from= goes with a fan-out subscriber/)
  assert.match((await refusedUpgrade(url('-1'))).body, /from= must be a publish's sequence number, got '-1'/)
  for (const { ws } of [publisher, back, later, fresh, afterEnd, none, restarted]) ws.close()
})

test('--replay sends at most --max-buffered bytes of what was kept: more would get the subscriber dropped as slow', async (t) => {
  const frame = (seq) => `${fanoutHeader(true, seq, Date.now() * 1000)}{"id":${seq},"status":"ok"}`
  const server = await startServer({ port: 0, replay: 10, maxBuffered: 2 * frame(0).length })
  t.after(() => server.close())
  const publisher = await openConnection(fanoutUrl(server, 'json', 'publisher', '5'))
  const frames = Array.from({ length: 5 }, (_, seq) => frame(seq))
  for (const text of frames) {
    publisher.ws.send(text)
    assert.equal(await publisher.nextReply(), 'ACK')
  }
  const back = await openConnection(`${fanoutUrl(server, 'json', 'subscriber', '5')}&from=1`)
  publisher.ws.send('END 5')
  assert.deepEqual([await back.nextReply(), await back.nextReply(), await back.nextReply()], [`r${frames[1].slice(1)}`, `r${frames[2].slice(1)}`, 'END 5'])
  assert.equal(server.stats.replayed, 2)
  for (const { ws } of [publisher, back]) ws.close()
})

test('without --replay, a subscriber back with &from= gets only what is new', async (t) => {
  const server = await startServer({ port: 0 })
  t.after(() => server.close())
  const publisher = await openConnection(fanoutUrl(server, 'json', 'publisher', '5'))
  const frame = (seq) => `${fanoutHeader(true, seq, Date.now() * 1000)}{"id":${seq},"status":"ok"}`
  publisher.ws.send(frame(0))
  assert.equal(await publisher.nextReply(), 'ACK')
  const back = await openConnection(`${fanoutUrl(server, 'json', 'subscriber', '5')}&from=0`)
  const next = frame(1)
  publisher.ws.send(next)
  assert.equal(await publisher.nextReply(), 'ACK')
  assert.equal(await back.nextReply(), next, 'the next publish first: nothing was kept to replay')
  assert.equal(server.stats.replayed, 0)
  for (const { ws } of [publisher, back]) ws.close()
})

test('a process with peers but no broker refuses fan-out with the reason, and serves the other directions', async () => {
  const server = await startServer({ port: 0, peers: true })
  try {
    const refused = await refusedUpgrade(fanoutUrl(server, 'json', 'subscriber'))
    assert.equal(refused.status, 503)
    assert.match(refused.body, /fan-out across server processes needs a broker: start the server with --broker/)
    const { ws, nextReply } = await openConnection(`${server.url}/?test=5&format=json`)
    ws.send('{"id":1,"status":"ok"}')
    assert.equal(await nextReply(), 'ACK')
    ws.close()
  } finally {
    await server.close()
  }
})
