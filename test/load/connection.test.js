import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import https from 'node:https'
import net from 'node:net'
import tls from 'node:tls'
import { WebSocketServer } from 'ws'
import { jsonCodec } from '../../lib/codecs/formats/json.js'
import { compression, connect, negotiated } from '../../lib/load/connection.js'
import { startShapingProxy } from '../../lib/network/proxy.js'
import { resolveTest } from '../../lib/payloads/catalog.js'
import { throwawayCertificate } from '../../lib/server/tls.js'

const SMALL = resolveTest('small')
let wss
let url

before(async () => {
  wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    // Refuses what a real server refuses, with a status and a body.
    verifyClient: ({ req }, done) => {
      if (req.url.includes('test=nope')) return done(false, 400, "unknown test 'nope'")
      if (req.url.includes('test=gateway')) return done(false, 502, '<html>\n<body>Bad Gateway</body>\n</html>\n') // as a reverse proxy answers
      done(true)
    }
  })
  await once(wss, 'listening')
  url = `ws://127.0.0.1:${wss.address().port}`
  // Answers handshake frames as a server would: accepted, refused, a long or multi-line refusal, or a close.
  const answers = { 'SCHEMA hello': 'SCHEMA OK', 'SCHEMA bad': 'ERR schema does not compile', 'SCHEMA long': `ERR ${'x'.repeat(1000)}`, 'SCHEMA lines': 'ERR line one\nline two' }
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const text = data.toString()
      if (text === 'SCHEMA close') ws.close(4000)
      else if (answers[text]) ws.send(answers[text])
    })
  })
})
after(async () => {
  for (const client of wss.clients) client.terminate()
  await new Promise((resolve) => wss.close(resolve))
})

/** connect() and the server's side of that connection. */
async function open (options) {
  const seen = once(wss, 'connection')
  const client = await connect({ url, test: SMALL, codec: jsonCodec, ...options })
  const [ws, request] = await seen
  return { client, ws, request }
}

test('the upgrade URL names the test, format and direction; resolves with the socket whose bytes the run counts', async () => {
  const { client, request } = await open({})
  assert.equal(request.url, '/?test=small&format=json', 'up is the default, left out')
  assert.ok(client.socket instanceof net.Socket)
  assert.ok(client.socket.bytesWritten > 0 && client.socket.bytesRead > 0, 'the upgrade went over it')
  assert.equal(client.ws.readyState, client.ws.OPEN)
  client.ws.close()
  const down = await open({ direction: 'down', codec: { name: 'protobuf' } })
  assert.equal(down.request.url, '/?test=small&format=protobuf&direction=down')
  down.client.ws.close()
})

test('a query the URL has already is kept', async () => {
  const seen = once(wss, 'connection')
  const { ws } = await connect({ url: `${url}/bench?token=abc`, test: SMALL, codec: jsonCodec, direction: 'echo' })
  const [, request] = await seen
  assert.equal(request.url, '/bench?token=abc&test=small&format=json&direction=echo')
  ws.close()
})

test('headers and the subprotocol reach the server; compression is offered only when asked', async () => {
  const { client, request } = await open({ headers: { Authorization: 'Bearer t0ken', 'X-Run': '7' }, subprotocol: 'bench.v1' })
  assert.equal(request.headers.authorization, 'Bearer t0ken')
  assert.equal(request.headers['x-run'], '7')
  assert.equal(request.headers['sec-websocket-protocol'], 'bench.v1')
  assert.equal(client.ws.protocol, 'bench.v1', 'the server accepted it')
  assert.equal(request.headers['sec-websocket-extensions'], undefined)
  client.ws.close()
  const compressed = await open({ compress: true })
  assert.match(compressed.request.headers['sec-websocket-extensions'], /permessage-deflate/)
  compressed.client.ws.close()
})

test('compression: null when not offered; whether permessage-deflate was taken when it was', async () => {
  // This test's server takes no extension; one with perMessageDeflate takes it.
  const refused = await open({ compress: true })
  assert.equal(refused.client.ws.extensions, '')
  assert.equal(compression(false, [refused.client]), null)
  assert.deepEqual(compression(true, [refused.client]), { accepted: false })
  refused.client.ws.close()
  const deflating = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: true })
  await once(deflating, 'listening')
  try {
    const target = { url: `ws://127.0.0.1:${deflating.address().port}`, test: SMALL, codec: jsonCodec, compress: true }
    const [one, two] = await Promise.all([connect(target), connect(target)])
    assert.deepEqual(compression(true, [one, two]), { accepted: true })
    assert.deepEqual(compression(true, [one, refused.client]), { accepted: false }, 'every connection, or it says refused')
    assert.deepEqual(compression(true, []), { accepted: false }, 'no connection took it')
    for (const { ws } of [one, two]) ws.close()
  } finally {
    for (const client of deflating.clients) client.terminate()
    await new Promise((resolve) => deflating.close(resolve))
  }
})

test('a handshake resolves on the expected answer, after the frame was sent', async () => {
  const { client } = await open({ handshake: { frame: 'SCHEMA hello', expect: 'SCHEMA OK' } })
  assert.equal(client.ws.readyState, client.ws.OPEN)
  client.ws.close()
})

test('a handshake answered otherwise rejects with one line naming the URL and the answer, and disconnects', async () => {
  const seen = once(wss, 'connection')
  await assert.rejects(connect({ url, test: SMALL, codec: jsonCodec, handshake: { frame: 'SCHEMA bad', expect: 'SCHEMA OK' } }),
    { message: `server refused the handshake on ${url}/?test=small&format=json: ERR schema does not compile` })
  const [ws] = await seen
  if (ws.readyState !== ws.CLOSED) await once(ws, 'close')
  // A long answer is cut at 500 characters.
  await assert.rejects(connect({ url, test: SMALL, codec: jsonCodec, handshake: { frame: 'SCHEMA long', expect: 'SCHEMA OK' } }),
    (err) => err.message.endsWith(`: ERR ${'x'.repeat(496)}`))
})

test('a multi-line handshake answer or refusal body still rejects with one line', async () => {
  const oneLine = (err) => !err.message.includes('\n')
  await assert.rejects(connect({ url, test: SMALL, codec: jsonCodec, handshake: { frame: 'SCHEMA lines', expect: 'SCHEMA OK' } }), oneLine)
  await assert.rejects(connect({ url, test: { name: 'gateway' }, codec: jsonCodec }), oneLine)
})

test('each opening says how long its TCP connection and its upgrade took, in µs (TLS: none over ws://)', async () => {
  const { client } = await open({})
  const { tcpUs, tlsUs, upgradeUs } = client.timing
  assert.ok(Number.isInteger(tcpUs) && tcpUs > 0 && tcpUs < 5_000_000, `tcp ${tcpUs} µs`)
  assert.ok(Number.isInteger(upgradeUs) && upgradeUs > 0 && upgradeUs < 5_000_000, `upgrade ${upgradeUs} µs`)
  assert.equal(tlsUs, null)
  client.ws.close()
})

test('a server that closes during the handshake rejects with the close code', async () => {
  await assert.rejects(connect({ url, test: SMALL, codec: jsonCodec, handshake: { frame: 'SCHEMA close', expect: 'SCHEMA OK' } }),
    { message: `server closed the connection during the handshake on ${url}/?test=small&format=json (code 4000)`, cause: 'handshake' })
})

test('a refused upgrade rejects with the status and the body', async () => {
  await assert.rejects(connect({ url, test: { name: 'nope' }, codec: jsonCodec }),
    { message: `server refused ${url}/?test=nope&format=json: 400 unknown test 'nope'`, cause: 'status 400' })
})

test('an unreachable port rejects with cannot connect to the URL and the error code', async () => {
  const closed = net.createServer()
  closed.listen(0, '127.0.0.1')
  await once(closed, 'listening')
  const { port } = closed.address()
  await new Promise((resolve) => closed.close(resolve))
  await assert.rejects(connect({ url: `ws://127.0.0.1:${port}`, test: SMALL, codec: jsonCodec }),
    { message: `cannot connect to ws://127.0.0.1:${port}: ECONNREFUSED (no server listening there: start one with node server.js)`, cause: 'refused' })
})

test('with connectUrl the TCP connection goes there (a shaping proxy) while the request still names the server', async () => {
  const proxy = await startShapingProxy({ targetHost: '127.0.0.1', targetPort: wss.address().port, up: 1_000_000, down: 1_000_000, rtt: 0 })
  try {
    // A host that does not resolve: only the dialled proxy can have carried the connection.
    const seen = once(wss, 'connection')
    const { ws } = await connect({ url: 'ws://bench.invalid:9999', connectUrl: `ws://127.0.0.1:${proxy.port}`, test: SMALL, codec: jsonCodec })
    const [, request] = await seen
    assert.equal(request.headers.host, 'bench.invalid:9999')
    assert.equal(request.url, '/?test=small&format=json')
    ws.close()
    await once(ws, 'close')
  } finally {
    await proxy.close()
  }
})

test('wss://: trusts --ca, counts the encrypted bytes on the TCP socket, and says what TLS it negotiated; an untrusted certificate or a plain server fail with one line saying what to do', async () => {
  const certificate = await throwawayCertificate()
  const server = https.createServer({ cert: certificate.cert, key: certificate.key })
  const secureWss = new WebSocketServer({ server })
  let tlsBytesIn = 0
  secureWss.on('connection', (ws, request) => ws.on('message', (data) => {
    tlsBytesIn = request.socket.bytesRead // the server's TLS socket counts plain text
    ws.send('ACK')
  }))
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const secureUrl = `wss://localhost:${server.address().port}`
  try {
    const client = await connect({ url: secureUrl, test: SMALL, codec: jsonCodec, ca: certificate.cert })
    assert.deepEqual(client.tls, { version: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' })
    assert.ok(client.timing.tlsUs > 0 && client.timing.tcpUs > 0 && client.timing.upgradeUs > 0, JSON.stringify(client.timing))
    assert.deepEqual(negotiated([{ tls: null }, client]), client.tls)
    assert.ok(client.socket instanceof net.Socket && !(client.socket instanceof tls.TLSSocket), 'the TCP socket, under TLS')
    const before = client.socket.bytesWritten
    client.ws.send(Buffer.alloc(1000, 1))
    await once(client.ws, 'message')
    // 1000 bytes of payload, 8 of frame header and mask, then TLS: a record header and a tag at least.
    const written = client.socket.bytesWritten - before
    assert.ok(written >= 1008 + 21 && written < 1008 + 100, `${written} bytes for a 1000-byte message`)
    assert.ok(tlsBytesIn > 0)
    client.ws.close()

    await assert.rejects(connect({ url: secureUrl, test: SMALL, codec: jsonCodec }), { cause: 'tls' })
    await assert.rejects(connect({ url: secureUrl, test: SMALL, codec: jsonCodec }),
      /^Error: cannot connect to wss:\/\/localhost:\d+: the server's certificate is not trusted \(DEPTH_ZERO_SELF_SIGNED_CERT: .*\): give its certificate or CA with --ca FILE, or skip the check with --insecure$/)
    const insecure = await connect({ url: secureUrl, test: SMALL, codec: jsonCodec, insecure: true })
    assert.equal(insecure.tls.version, 'TLSv1.3')
    insecure.ws.close()
    await assert.rejects(connect({ url: url.replace('ws:', 'wss:'), test: SMALL, codec: jsonCodec, insecure: true }),
      /^Error: cannot connect to wss:\/\/127\.0\.0\.1:\d+: no TLS there \(.*\): a plain server is ws:\/\/, not wss:\/\/$/)
    const plain = await connect({ url, test: SMALL, codec: jsonCodec })
    assert.equal(plain.tls, null)
    assert.equal(negotiated([plain]), null)
    plain.ws.close()
  } finally {
    for (const client of secureWss.clients) client.terminate()
    server.close()
  }
})
