import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import net from 'node:net'
import { startShapingProxy, startShapingProxyWorker } from '../../lib/network/proxy.js'

const FAST = 10_000_000 // kbit/s: no bandwidth limit worth the name

let echo
before(async () => {
  // A real TCP echo server; allowHalfOpen so it can answer after the client's FIN.
  echo = net.createServer({ allowHalfOpen: true }, (socket) => {
    socket.pipe(socket)
    socket.on('error', () => {})
  })
  echo.listen(0, '127.0.0.1')
  await once(echo, 'listening')
})
after(() => new Promise((resolve) => echo.close(resolve)))

const target = () => ({ targetHost: '127.0.0.1', targetPort: echo.address().port })

/** Connects, sends `data`, then reads until `data.length` bytes came back; resolves the bytes and the time that took. */
async function roundTrip (port, data, { end = false } = {}) {
  const socket = net.connect(port, '127.0.0.1')
  await once(socket, 'connect')
  const chunks = []
  let received = 0
  const started = performance.now()
  const done = new Promise((resolve, reject) => {
    socket.on('error', reject)
    socket.on('data', (chunk) => {
      chunks.push(chunk)
      received += chunk.length
      if (received >= data.length) resolve(performance.now() - started)
    })
  })
  socket.write(data)
  if (end) socket.end()
  const ms = await done
  socket.destroy()
  return { bytes: Buffer.concat(chunks), ms }
}

test('bytes pass through both ways intact, in order, large writes and many connections alike', async () => {
  const proxy = await startShapingProxy({ ...target(), up: FAST, down: FAST, rtt: 0 })
  try {
    assert.equal(proxy.host, '127.0.0.1')
    assert.ok(proxy.port > 0 && proxy.port !== echo.address().port)
    const big = randomBytes(3 * 1024 * 1024) // past MAX_QUEUED_BYTES: backpressure pauses and resumes
    assert.ok((await roundTrip(proxy.port, big)).bytes.equals(big))
    const small = await Promise.all(Array.from({ length: 8 }, (_, i) => roundTrip(proxy.port, Buffer.from(`hello ${i}`))))
    assert.deepEqual(small.map(({ bytes }) => bytes.toString()), Array.from({ length: 8 }, (_, i) => `hello ${i}`))
  } finally {
    await proxy.close()
  }
})

test('a FIN travels behind the bytes queued before it', async () => {
  const proxy = await startShapingProxy({ ...target(), up: FAST, down: FAST, rtt: 20 })
  try {
    const socket = net.connect({ port: proxy.port, host: '127.0.0.1', allowHalfOpen: true })
    await once(socket, 'connect')
    const chunks = []
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.end('last words')
    await once(socket, 'end') // the echo server's FIN, after its echo
    assert.equal(Buffer.concat(chunks).toString(), 'last words')
    socket.destroy()
  } finally {
    await proxy.close()
  }
})

test('the added rtt shows in every round trip; a bandwidth limit in the time a burst takes', async () => {
  const rtt = 40
  const proxy = await startShapingProxy({ ...target(), up: 8000, down: FAST, rtt })
  try {
    // Each direction may deliver up to 0.5 ms early; 1000 bytes at 8000 kbit/s take 1 ms to send.
    const message = randomBytes(1000)
    for (let i = 0; i < 3; i++) {
      const { bytes, ms } = await roundTrip(proxy.port, message)
      assert.ok(bytes.equals(message))
      assert.ok(ms >= rtt, `round trip ${ms.toFixed(2)} ms, rtt ${rtt} ms`)
    }
    // 100 kB at 8000 kbit/s: 100 ms on the link up, plus the rtt.
    const burst = randomBytes(100_000)
    const { bytes, ms } = await roundTrip(proxy.port, burst)
    assert.ok(bytes.equals(burst))
    assert.ok(ms >= 100 + rtt - 1, `burst took ${ms.toFixed(2)} ms`)
  } finally {
    await proxy.close()
  }
})

test('close() ends open connections and frees the port', async () => {
  const proxy = await startShapingProxy({ ...target(), up: FAST, down: FAST, rtt: 0 })
  const client = net.connect(proxy.port, '127.0.0.1')
  await once(client, 'connect')
  const closed = once(client, 'close')
  client.on('error', () => {})
  await proxy.close()
  await closed
  // The same port can be listened on again at once.
  const again = net.createServer()
  again.listen(proxy.port, '127.0.0.1')
  await once(again, 'listening')
  await new Promise((resolve) => again.close(resolve))
})

test('a port already taken is refused', async () => {
  const taken = echo.address().port
  await assert.rejects(startShapingProxy({ ...target(), listenPort: taken, up: FAST, down: FAST, rtt: 0 }), { code: 'EADDRINUSE' })
})

test('in a worker thread: the same pass-through, and close() ends the worker', async () => {
  const proxy = await startShapingProxyWorker({ ...target(), up: FAST, down: FAST, rtt: 10 })
  const data = randomBytes(64 * 1024)
  const { bytes, ms } = await roundTrip(proxy.port, data)
  assert.ok(bytes.equals(data))
  assert.ok(ms >= 10, `${ms} ms`)
  await proxy.close()
  const refused = net.connect(proxy.port, '127.0.0.1')
  const [err] = await once(refused, 'error')
  assert.equal(err.code, 'ECONNREFUSED')
})
