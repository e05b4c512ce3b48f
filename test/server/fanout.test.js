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
