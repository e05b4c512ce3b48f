// Faults seen from the load client: a server that dies mid-run, one that stops answering, and a
// thousand connections at once. Real sockets on loopback, real client processes.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { WebSocketServer } from 'ws'
import { runScript, startServerProcess } from './helpers.js'

/** A ws server on a free loopback port that ACKs `answered` messages, then does `afterwards`. */
async function scriptedServer (answered, afterwards) {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' })
  await new Promise((resolve) => wss.once('listening', resolve))
  let count = 0
  wss.on('connection', (ws) => ws.on('message', () => {
    if (++count <= answered) ws.send('ACK')
    else afterwards(wss)
  }))
  return { wss, url: `ws://127.0.0.1:${wss.address().port}`, close: () => new Promise((resolve) => wss.close(resolve)) }
}

function parseRun ({ code, stdout, stderr }) {
  return { code, stderr, report: JSON.parse(stdout) }
}

test('server gone mid-run: exact accounting, one clear line, non-zero exit', async () => {
  const server = await scriptedServer(100, (wss) => { for (const ws of wss.clients) ws.terminate() })
  try {
    const { code, stderr, report } = parseRun(await runScript('client_protobuf.js', ['5', '1000', '--inflight', '10', '--url', server.url, '--json']))
    assert.equal(code, 1)
    assert.equal(stderr, 'error: connection closed by the server (code 1006)\n')
    const { sent, acked, errors, lost } = report.messages
    assert.equal(acked, 100)
    assert.equal(sent, acked + errors + lost)
    assert.ok(lost >= 1 && lost <= 10, `the ones in flight are lost: ${lost}`)
    assert.equal(report.ok, false)
  } finally {
    await server.close()
  }
})

test('stalled server: --timeout ends the run and counts what never got an ACK as lost', async () => {
  const server = await scriptedServer(20, () => {})
  try {
    const { code, stderr, report } = parseRun(await runScript('client_json.js', ['5', '100', '--inflight', '10', '--timeout', '300', '--url', server.url, '--json']))
    assert.equal(code, 1)
    assert.equal(stderr, 'error: no reply within 300 ms (--timeout)\n')
    assert.deepEqual(report.messages, { sent: 30, acked: 20, errors: 0, lost: 10 }, 'in flight is bounded: nothing buffered beyond it')
  } finally {
    await server.close()
  }
})

test('1,000 concurrent connections from one client: connect, run, close cleanly', async () => {
  const server = await startServerProcess()
  try {
    const { code, stderr, report } = parseRun(await runScript('client_protobuf.js', ['5', '5000', '-c', '1000', '--url', server.url, '--json']))
    assert.equal(code, 0, stderr)
    assert.deepEqual(report.messages, { sent: 5000, acked: 5000, errors: 0, lost: 0 })
    assert.equal(report.connections, 1000)
  } finally {
    await server.stop()
  }
  const final = /stopped on SIGTERM .*: (\d+) connections served, 5,000 messages, 0 decode errors, 0 protocol errors, .* \(peak (\d+) MB\)/.exec(server.output())
  assert.ok(final, server.output())
  assert.equal(Number(final[1]), 1000)
  assert.ok(Number(final[2]) < 400, `server peak RSS ${final[2]} MB`)
})
