// Only the proxy backend runs here: 'auto' and 'tc' may apply netem to this machine's interfaces.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import net from 'node:net'
import { UsageError } from '../../lib/errors.js'
import { resolveNetwork } from '../../lib/network/profiles.js'
import { startShaping } from '../../lib/network/shaping.js'

let echo
before(async () => {
  echo = net.createServer((socket) => socket.pipe(socket))
  echo.listen(0, '127.0.0.1')
  await once(echo, 'listening')
})
after(() => new Promise((resolve) => echo.close(resolve)))

const target = () => ({ host: '127.0.0.1', port: echo.address().port })

/** One message through host:port and back; resolves the reply and how long it took. */
async function echoThrough ({ host, port }, text) {
  const socket = net.connect(port, host)
  await once(socket, 'connect')
  const started = performance.now()
  socket.write(text)
  let reply = ''
  socket.setEncoding('utf8')
  for await (const chunk of socket) {
    reply += chunk
    if (reply.length >= text.length) break
  }
  socket.destroy()
  return { reply, ms: performance.now() - started }
}

test('backend proxy: a working shaping proxy in front of the target, with the network\'s rtt; stop() closes it, once', async () => {
  const network = resolveNetwork({ up: 100_000, down: 100_000, rtt: 30 })
  const shaping = await startShaping(network, { backend: 'proxy', target: target() })
  try {
    assert.equal(shaping.backend, 'proxy')
    assert.equal(shaping.reason, 'userspace shaping proxy, each connection a link of its own')
    assert.equal(shaping.host, '127.0.0.1')
    assert.notEqual(shaping.port, target().port, 'the client dials the proxy, not the server')
    const { reply, ms } = await echoThrough(shaping, 'ping')
    assert.equal(reply, 'ping')
    assert.ok(ms >= 29, `round trip ${ms.toFixed(1)} ms through a 30 ms rtt`)
  } finally {
    const stopped = shaping.stop()
    assert.equal(shaping.stop(), stopped, 'a second stop() is the same promise')
    await stopped
  }
  const socket = net.connect(shaping.port, shaping.host)
  const [err] = await once(socket, 'error')
  assert.equal(err.code, 'ECONNREFUSED', 'nothing listens after stop()')
})

test('packet loss with the proxy is refused in one line: TCP through a proxy hides loss', async () => {
  const network = resolveNetwork({ profile: '3g', loss: 1 })
  await assert.rejects(startShaping(network, { backend: 'proxy', target: target() }), (err) => {
    assert.ok(err instanceof UsageError)
    assert.equal(err.message, '--loss needs kernel shaping (--throttle-backend tc): TCP through a userspace proxy hides loss')
    return true
  })
})

test('an unknown backend is refused in one line, naming the known ones', async () => {
  await assert.rejects(startShaping(resolveNetwork({ profile: '3g' }), { backend: 'netem', target: target() }), (err) =>
    err instanceof UsageError && err.message === "unknown --throttle-backend 'netem': expected one of auto, tc, proxy")
})
