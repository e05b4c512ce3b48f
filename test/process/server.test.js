// node server.js as a child process: its output, its exit codes.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { createCodec } from '../../lib/codecs/registry.js'
import { loadPayload, resolveTest } from '../../lib/payloads/catalog.js'
import { openConnection, refusedUpgrade, runScript, startServerProcess } from '../helpers.js'

describe('node server.js', () => {
  test('prints where it listens, and a final summary on SIGTERM', async () => {
    const server = await startServerProcess()
    assert.match(server.url, /^ws:\/\/127\.0\.0\.1:\d+$/)
    const { ws, nextReply } = await openConnection(`${server.url}/?test=5&format=protobuf`)
    const codec = await createCodec('protobuf', resolveTest(5))
    ws.send(codec.encode(codec.prepare(loadPayload(resolveTest(5)))))
    assert.equal(await nextReply(), 'ACK')
    assert.equal(await server.stop('SIGTERM'), 0)
    assert.match(server.output(), /stopped on SIGTERM .* 1 messages, 0 decode errors/)
  })

  test('rejects a bad option with one line and exit code 2', async () => {
    const { code, stderr } = await runScript('server.js', ['--port', 'abc'])
    assert.equal(code, 2)
    assert.match(stderr, /^--port must be a whole number/)
    assert.equal(stderr.trim().split('\n').length, 1)
  })

  test('a taken port is one clear line, not a stack trace', async () => {
    const server = await startServerProcess()
    const { code, stderr } = await runScript('server.js', ['--port', new URL(server.url).port])
    await server.stop()
    assert.notEqual(code, 0)
    assert.match(stderr, /cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE/)
    assert.equal(stderr.trim().split('\n').length, 1)
  })
  test('BENCH_TOKEN from the environment, and a warning when bound beyond loopback', async () => {
    const server = await startServerProcess(['--host', '0.0.0.0'], { env: { BENCH_TOKEN: 'from-env' } })
    try {
      assert.match(server.output(), /warning: listening on 0\.0\.0\.0: anyone who can reach it and has the token can connect/)
      const url = `ws://127.0.0.1:${new URL(server.url).port}/?test=5&format=json`
      assert.equal((await refusedUpgrade(url)).status, 401)
      const { ws, nextReply } = await openConnection(url, { Authorization: 'Bearer from-env' })
      ws.send('{"id":1,"status":"ok"}')
      assert.equal(await nextReply(), 'ACK')
      ws.close()
    } finally {
      await server.stop()
    }
    assert.match(server.output(), /1 messages, 0 decode errors, 0 protocol errors, 0 refused upgrades, 1 unauthorized, 0 refused schemas, rss \d+ MB \(peak \d+ MB\)/)
  })
})
