import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import { once } from 'node:events'
import WebSocket from 'ws'
import { startServer } from '../../lib/server/server.js'
import { throwawayCertificate } from '../../lib/server/tls.js'
import { parseMetrics, readMetrics } from '../../lib/server/metrics-reader.js'
import { createCodec } from '../../lib/codecs/registry.js'
import { TESTS, loadMessages, loadPayload, resolveTest } from '../../lib/payloads/catalog.js'
import { openConnection, refusedUpgrade } from '../helpers.js'

describe('server', () => {
  let server
  before(async () => { server = await startServer({ port: 0, maxPayload: 1024 * 1024 }) })
  after(() => server.close())

  test('refuses an unknown test or format with HTTP 400 and the reason', async () => {
    const unknownTest = await refusedUpgrade(`${server.url}/?test=99&format=json`)
    assert.equal(unknownTest.status, 400)
    assert.match(unknownTest.body, /unknown test '99'/)
    const unknownFormat = await refusedUpgrade(`${server.url}/?test=1&format=xml`)
    assert.equal(unknownFormat.status, 400)
    assert.match(unknownFormat.body, /unknown format 'xml'/)
    assert.ok(server.stats.refused >= 2)
  })

  test('answers plain HTTP outside the browser client with 404 and how to connect', async () => {
    const response = await new Promise((resolve) => http.get(server.url.replace('ws:', 'http:') + '/nothing', resolve))
    assert.equal(response.statusCode, 404)
    response.resume()
  })

  test('directions: down answers each frame with the next message of the stream (or the one message repeated), echo sends the message back re-encoded', async () => {
    const test3 = resolveTest(3)
    const stream = loadMessages(test3).messages
    for (const format of ['json', 'protobuf']) {
      const codec = await createCodec(format, test3)
      const frame = Buffer.from(codec.encode(codec.prepare(loadPayload(test3))))
      const expected = {
        down: stream.slice(0, 2),
        'down&payload=repeated': [loadPayload(test3), loadPayload(test3)],
        echo: [loadPayload(test3), loadPayload(test3)]
      }
      for (const [direction, messages] of Object.entries(expected)) {
        const { ws, nextReply } = await openConnection(`${server.url}/?test=3&format=${format}&direction=${direction}`)
        const replies = []
        ws.removeAllListeners('message')
        ws.on('message', (data, isBinary) => replies.push({ data, isBinary }))
        ws.send(direction === 'echo' ? frame : 'GET', { binary: direction === 'echo' && codec.binary })
        ws.send(direction === 'echo' ? frame : 'GET', { binary: direction === 'echo' && codec.binary })
        while (replies.length < 2) await new Promise((resolve) => ws.once('message', resolve))
        replies.forEach((reply, i) => {
          assert.equal(reply.isBinary, codec.binary, `${format} ${direction}: frame type`)
          assert.deepEqual(Buffer.from(reply.data), Buffer.from(codec.encode(codec.prepare(messages[i]))), `${format} ${direction}: message ${i}, byte for byte`)
          assert.deepEqual(codec.toPlain(codec.decode(reply.data)), messages[i])
        })
        assert.equal(typeof nextReply, 'function')
        ws.close()
      }
    }
    const refused = await refusedUpgrade(`${server.url}/?test=3&format=json&direction=sideways`)
    assert.equal(refused.status, 400)
    assert.match(refused.body, /unknown direction 'sideways': expected one of up, down, echo/)
    const unknownPayload = await refusedUpgrade(`${server.url}/?test=3&format=json&payload=loop`)
    assert.equal(unknownPayload.status, 400)
    assert.match(unknownPayload.body, /unknown payload 'loop': expected one of stream, repeated/)
  })

  test('down: each test its own messages, though one codec serves every test (JSON\'s) and another test went down first', async () => {
    for (const format of ['json', 'protobuf']) {
      for (const id of [5, 4]) {
        const test = resolveTest(id)
        const codec = await createCodec(format, test)
        const { ws } = await openConnection(`${server.url}/?test=${id}&format=${format}&direction=down`)
        ws.send('GET')
        const [reply] = await once(ws, 'message')
        assert.deepEqual(codec.toPlain(codec.decode(reply)), loadMessages(test).messages[0], `${format}: test ${id}`)
        ws.close()
      }
    }
  })

  test('ACKs valid messages in both formats, in order', async () => {
    for (const format of ['json', 'protobuf']) {
      const test3 = resolveTest(3)
      const codec = await createCodec(format, test3)
      const frame = codec.encode(codec.prepare(loadPayload(test3)))
      const { ws, nextReply } = await openConnection(`${server.url}/?test=3&format=${format}`)
      for (let i = 0; i < 20; i++) ws.send(frame, { binary: codec.binary })
      for (let i = 0; i < 20; i++) assert.equal(await nextReply(), 'ACK')
      ws.close()
    }
  })

  test('answers undecodable messages with an error reply, counts them, and keeps the connection usable', async () => {
    const test3 = resolveTest(3)
    const protobuf = await createCodec('protobuf', test3)
    const valid = Buffer.from(protobuf.encode(protobuf.prepare(loadPayload(test3))))
    const errorsBefore = server.stats.totals().errors

    const pb = await openConnection(`${server.url}/?test=3&format=protobuf`)
    pb.ws.send(valid.subarray(0, valid.length - 5)) // truncated
    assert.match(await pb.nextReply(), /^ERR protobuf decode failed/)
    pb.ws.send(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])) // garbage
    assert.match(await pb.nextReply(), /^ERR /)
    pb.ws.send(valid)
    assert.equal(await pb.nextReply(), 'ACK')

    const json = await openConnection(`${server.url}/?test=3&format=json`)
    json.ws.send('{"id": 1,')
    assert.match(await json.nextReply(), /^ERR json decode failed/)
    json.ws.send(JSON.stringify(loadPayload(test3)))
    assert.equal(await json.nextReply(), 'ACK')

    assert.equal(server.stats.totals().errors - errorsBefore, 3)
    pb.ws.close()
    json.ws.close()
  })

  test('every other codec answers truncated, garbage and hostile frames with ERR, then ACKs a valid one', async () => {
    const test3 = resolveTest(3)
    // Nesting 100,000 deep (MessagePack fixarray 0x91, CBOR array(1) 0x81), and lengths far past
    // the frame's end: decoders that recurse or preallocate must fail, not take the server down.
    const hostile = {
      msgpack: [Buffer.alloc(100_000, 0x91), Buffer.from([0xdd, 0xff, 0xff, 0xff, 0xff]), Buffer.from([0xdb, 0x7f, 0xff, 0xff, 0xff, 0x61])],
      cbor: [Buffer.alloc(100_000, 0x81), Buffer.from([0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), Buffer.from([0x7a, 0x7f, 0xff, 0xff, 0xff, 0x61])],
      avro: [Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])],
      'protobuf-es': [Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f])],
      'google-protobuf': [Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), Buffer.alloc(100_000, 0x0a)],
      'fast-json': [Buffer.from('['.repeat(100_000))]
    }
    const errorsBefore = server.stats.totals().errors
    let sentBad = 0
    for (const [format, frames] of Object.entries(hostile)) {
      const codec = await createCodec(format, test3)
      const valid = Buffer.from(codec.encode(codec.prepare(loadPayload(test3))))
      const { ws, nextReply } = await openConnection(`${server.url}/?test=3&format=${format}`)
      for (const bad of [valid.subarray(0, valid.length - 7), ...frames]) {
        ws.send(bad, { binary: codec.binary })
        sentBad++
        assert.match(await nextReply(), new RegExp(`^ERR ${format} decode failed`), `${format}: ${bad.subarray(0, 8).toString('hex')}`)
      }
      ws.send(valid, { binary: codec.binary })
      assert.equal(await nextReply(), 'ACK', format)
      ws.close()
    }
    assert.equal(server.stats.totals().errors - errorsBefore, sentBad)
  })

  test('closes with 1007 on invalid UTF-8 text and 1009 on oversized messages, and stays up', async () => {
    const invalidText = await openConnection(`${server.url}/?test=5&format=json`)
    invalidText.ws.send(Buffer.from([0x22, 0xc3, 0x28, 0x22]), { binary: false })
    assert.equal(await invalidText.closed, 1007)

    const oversized = await openConnection(`${server.url}/?test=5&format=json`)
    oversized.ws.send(Buffer.alloc(1024 * 1024 + 1, 0x20), { binary: false })
    assert.equal(await oversized.closed, 1009)

    const after = await openConnection(`${server.url}/?test=5&format=json`)
    after.ws.send(JSON.stringify(loadPayload(resolveTest(5))))
    assert.equal(await after.nextReply(), 'ACK')
    after.ws.close()
  })

  test('survives a socket dropped in the middle of a frame', async () => {
    const socket = net.connect(new URL(server.url).port, '127.0.0.1')
    await new Promise((resolve) => socket.once('connect', resolve))
    socket.write('GET /?test=1&format=json HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n\x81\xfe\x10')
    await new Promise((resolve) => socket.once('data', resolve)) // the 101 response: upgraded
    socket.destroy()
    const { ws, nextReply } = await openConnection(`${server.url}/?test=5&format=json`)
    ws.send(JSON.stringify(loadPayload(resolveTest(5))))
    assert.equal(await nextReply(), 'ACK')
    ws.close()
  })
})

describe('server security limits', () => {
  test('--token: upgrades without the right token get 401 and are counted; header or query both work', async () => {
    const server = await startServer({ port: 0, token: 's3cret' })
    try {
      const target = `${server.url}/?test=5&format=json`
      for (const [url, headers] of [[target, {}], [target, { Authorization: 'Bearer wrong' }], [`${target}&token=s3cre`, {}]]) {
        const refused = await refusedUpgrade(url, headers)
        assert.equal(refused.status, 401)
        assert.equal(refused.headers['www-authenticate'], 'Bearer')
        assert.match(refused.body, /missing or wrong token/)
      }
      assert.equal(server.stats.unauthorized, 3)
      for (const [url, headers] of [[target, { Authorization: 'Bearer s3cret' }], [`${target}&token=s3cret`, {}]]) {
        const { ws, nextReply } = await openConnection(url, headers)
        ws.send(JSON.stringify(loadPayload(resolveTest(5))))
        assert.equal(await nextReply(), 'ACK')
        ws.close()
      }
      assert.equal(server.stats.unauthorized, 3)
    } finally {
      await server.close()
    }
  })

  test('--max-connections: upgrades beyond the limit get 503 until a connection closes', async () => {
    const server = await startServer({ port: 0, maxConnections: 2 })
    try {
      const target = `${server.url}/?test=5&format=json`
      const first = await openConnection(target)
      const second = await openConnection(target)
      const refused = await refusedUpgrade(target)
      assert.equal(refused.status, 503)
      assert.match(refused.body, /connection limit reached \(2 open\)/)
      first.ws.close()
      await first.closed
      // The server sees the close a moment after the client: retry on 503 until the slot is free.
      let third
      while (!third) third = await openConnection(target).catch(() => null)
      third.ws.close()
      second.ws.close()
    } finally {
      await server.close()
    }
  })
})

describe('handshake timeout', () => {
  test('idle and slowloris connections are closed once the handshake timeout passes, and counted; an open WebSocket stays', async () => {
    const handshakeTimeoutMs = 400
    const server = await startServer({ port: 0, handshakeTimeoutMs })
    try {
      const upgraded = await openConnection(`${server.url}/?test=5&format=json`)
      const closedAfter = (socket) => {
        const openedAt = performance.now()
        return new Promise((resolve) => socket.once('close', () => resolve(performance.now() - openedAt)))
      }
      // Each reads what it is sent (the 408), or it would never see the server close it.
      const idle = Array.from({ length: 20 }, () => net.connect(server.port, '127.0.0.1').on('error', () => {}).resume())
      // A slowloris: a header line every 100 ms, never the blank line that ends the request.
      const slow = net.connect(server.port, '127.0.0.1').on('error', () => {}).resume()
      slow.write('GET /?test=5&format=json HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n')
      const trickle = setInterval(() => slow.write('X-Slow: 1\r\n'), 100)
      const lifetimes = await Promise.all([...idle, slow].map(closedAfter))
      clearInterval(trickle)
      for (const ms of lifetimes) assert.ok(ms >= handshakeTimeoutMs - 20 && ms < handshakeTimeoutMs + 1000, `closed after ${ms} ms`)
      assert.equal(server.stats.handshakeTimeouts, 21)
      assert.match(server.stats.countsLine(), / 21 handshake timeouts, /)
      assert.equal((await readMetrics(server.url)).value('wsbench_handshake_timeouts_total'), 21)
      // The upgraded connection outlived the timeout and still answers.
      upgraded.ws.send(JSON.stringify(loadPayload(resolveTest(5))))
      assert.equal(await upgraded.nextReply(), 'ACK')
      upgraded.ws.close()
    } finally {
      await server.close()
    }
  })
})

describe('the browser client files (plain HTTP on the server port)', () => {
  let server, base
  before(async () => {
    server = await startServer({ port: 0 })
    base = server.url.replace('ws:', 'http:')
  })
  after(() => server.close())

  test('serves the page, its script, shared lib modules, vendored libraries, schemas and the catalog', async () => {
    for (const [path, type, body] of [
      ['/', 'text/html', /<title>JSON or Protobuf over WebSocket: browser client<\/title>/],
      ['/app.js', 'text/javascript', /import \{ buildReport, testLabel \} from '\/lib\/report\/report\.js'/],
      ['/lib/report/report.js', 'text/javascript', /export function buildReport/],
      ['/vendor/protobuf.min.js', 'text/javascript', /protobuf/],
      ['/vendor/hdrhistogram.umd.js', 'text/javascript', /encodeIntoCompressedBase64/],
      ['/proto/medium.proto', 'text/plain', /message Medium/]
    ]) {
      const response = await fetch(base + path)
      assert.equal(response.status, 200, path)
      assert.match(response.headers.get('content-type'), new RegExp(type))
      assert.match(await response.text(), body, path)
    }
    assert.deepEqual((await (await fetch(`${base}/api/tests`)).json()).map((t) => t.name), TESTS.map((t) => t.name))
    assert.deepEqual(await (await fetch(`${base}/api/payload/small.json`)).json(), loadMessages(resolveTest('small')))
  })

  test('nothing outside the allowlist: 404 with how to connect, 405 for other methods', async () => {
    for (const path of ['/proto/../package.json', '/lib/server/server.js', '/api/payload/nope.json', '/%2e%2e/package.json', '/node_modules/ws/package.json']) {
      const response = await fetch(base + path)
      assert.equal(response.status, 404, path)
      assert.match(await response.text(), /WebSocket clients connect to ws:\/\/HOST:PORT\/\?test=/)
    }
    assert.equal((await fetch(base + '/', { method: 'POST', body: 'x' })).status, 405)
  })
})

describe('server over TLS', () => {
  let server
  let certificate
  before(async () => {
    certificate = await throwawayCertificate()
    server = await startServer({ port: 0, tls: certificate, token: 's3cret', handshakeTimeoutMs: 400 })
  })
  after(() => server.close())
  /** An HTTPS GET that trusts the throwaway certificate. */
  const get = (path, headers = {}) => new Promise((resolve, reject) => {
    https.get(`https://127.0.0.1:${server.port}${path}`, { ca: certificate.cert, headers }, (response) => {
      let body = ''
      response.setEncoding('utf8').on('data', (chunk) => { body += chunk })
      response.on('end', () => resolve({ status: response.statusCode, body }))
    }).on('error', reject)
  })

  test('serves wss:// with the certificate: a client that trusts it and has the token gets its ACK', async () => {
    assert.match(server.url, /^wss:\/\/127\.0\.0\.1:\d+$/)
    const ws = new WebSocket(`${server.url}/?test=small&format=json`, { ca: certificate.cert, headers: { Authorization: 'Bearer s3cret' } })
    await once(ws, 'open')
    assert.equal(ws._socket.getProtocol(), 'TLSv1.3')
    ws.send(JSON.stringify(loadPayload(resolveTest('small'))))
    const [reply] = await once(ws, 'message')
    assert.equal(reply.toString(), 'ACK')
    ws.close()
    await once(ws, 'close')
    // Without the token the upgrade is refused, over TLS too.
    const refused = await refusedUpgrade(`${server.url}/?test=small&format=json`, {}, { ca: certificate.cert })
    assert.equal(refused.status, 401)
  })

  test('/metrics over https asks for the token; the browser page is served over https', async () => {
    assert.equal((await get('/metrics')).status, 401)
    const metrics = await get('/metrics', { Authorization: 'Bearer s3cret' })
    assert.equal(metrics.status, 200)
    assert.equal(parseMetrics(metrics.body).value('wsbench_messages_total', { format: 'json', test: 'small' }), 1)
    const page = await get('/')
    assert.equal(page.status, 200)
    assert.match(page.body, /<html/i)
  })

  test('plain HTTP on the TLS port gets 400 saying to use wss:// or https://, never a 200; a ws:// upgrade too', async () => {
    const plain = await new Promise((resolve, reject) => {
      http.get(`http://127.0.0.1:${server.port}/metrics`, { headers: { Authorization: 'Bearer s3cret' } }, (response) => {
        let body = ''
        response.setEncoding('utf8').on('data', (chunk) => { body += chunk })
        response.on('end', () => resolve({ status: response.statusCode, body }))
      }).on('error', reject)
    })
    assert.deepEqual(plain, { status: 400, body: 'this port speaks TLS: connect with wss:// (or https://)\n' })
    const upgrade = await refusedUpgrade(`ws://127.0.0.1:${server.port}/?test=small&format=json`, { Authorization: 'Bearer s3cret' })
    assert.equal(upgrade.status, 400)
    assert.match(upgrade.body, /this port speaks TLS/)
  })

  test('a connection that never finishes its TLS handshake is closed after the handshake timeout, and counted', async () => {
    const before = server.stats.handshakeTimeouts
    const openedAt = performance.now()
    const idle = net.connect(server.port, '127.0.0.1').on('error', () => {}).resume()
    await once(idle, 'close')
    const ms = performance.now() - openedAt
    assert.ok(ms >= 380 && ms < 1400, `closed after ${ms} ms`)
    assert.equal(server.stats.handshakeTimeouts, before + 1)
  })
})
