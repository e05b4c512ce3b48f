import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import net from 'node:net'
import { WebSocketServer } from 'ws'
import { startServerProcess, runScript } from '../helpers.js'
import { createCodec } from '../../lib/codecs/registry.js'
import { loadMessages, resolveTest } from '../../lib/payloads/catalog.js'

const REPORT_FIELDS = ['format', 'test', 'messages', 'durationMs', 'rate', 'latencyMs', 'bytes', 'network']

/** The encoded bytes of a test's stream messages [from, to), sent in turn as a client sends them. */
async function streamBytes (format, testName, from, to) {
  const test = resolveTest(testName)
  const codec = await createCodec(format, test)
  const { messages } = loadMessages(test)
  let total = 0
  for (let i = from; i < to; i++) total += Buffer.byteLength(codec.encode(codec.prepare(messages[i % messages.length])))
  return total
}

function assertAccounted (report) {
  const { sent, acked, errors, lost } = report.messages
  assert.equal(sent, acked + errors + lost, `sent ${sent} != acked ${acked} + errors ${errors} + lost ${lost}`)
}

describe('load clients against node server.js', () => {
  let server
  before(async () => { server = await startServerProcess() })
  after(() => server.stop())

  for (const format of ['json', 'protobuf']) {
    test(`client_${format}.js: every message acked, the JSON report complete`, async () => {
      const { code, stdout, stderr } = await runScript(`client_${format}.js`, ['3', '300', '--url', server.url, '--warmup', '20', '--json'])
      assert.equal(code, 0, stderr)
      assert.equal(stdout.trim().split('\n').length, 1, 'exactly one JSON object on stdout')
      const report = JSON.parse(stdout)
      for (const field of REPORT_FIELDS) assert.ok(field in report, `report has ${field}`)
      assert.equal(report.format, format)
      assert.equal(report.test, 'medium')
      assert.deepEqual(report.messages, { sent: 300, acked: 300, errors: 0, lost: 0 })
      for (const key of ['min', 'mean', 'p50', 'p90', 'p99', 'p999', 'max']) assert.ok(report.latencyMs[key] > 0, key)
      assert.ok(report.latencyMs.min <= report.latencyMs.p50 && report.latencyMs.p50 <= report.latencyMs.max)
      // Bytes come from the socket: each message's frame is the payload plus a header and mask; the
      // payloads are the stream's messages 20 to 319, after the 20 of warm-up.
      const { written, read } = report.bytes
      const payload = await streamBytes(format, 'medium', 20, 320)
      assert.ok(written >= payload + 300 * 6 && written <= payload + 300 * 14, `written ${written}, payloads ${payload}`)
      assert.deepEqual(report.payload, { kind: 'stream', messages: loadMessages(resolveTest('medium')).messages.length, seed: loadMessages(resolveTest('medium')).payload.seed })
      assert.equal(read, 300 * 5, 'each ACK is a 5-byte frame from the server')
      assert.ok(report.rate > 0)
      assert.equal(report.network.profile, 'none')
    })
  }

  test('people (~12.9 MB of JSON, ~8.5 MB of protobuf in one message) goes through in both formats', async () => {
    await Promise.all(['json', 'protobuf'].map(async (format) => {
      const { code, stdout, stderr } = await runScript(`client_${format}.js`, ['people', '2', '--url', server.url, '--json'])
      assert.equal(code, 0, stderr)
      const report = JSON.parse(stdout)
      assert.deepEqual(report.messages, { sent: 2, acked: 2, errors: 0, lost: 0 })
      assert.ok(report.bytes.payloadPerMessage > (format === 'json' ? 12e6 : 8e6), String(report.bytes.payloadPerMessage))
    }))
  })

  test('--connections 4 --inflight 8 accounts for every message', async () => {
    const { code, stdout, stderr } = await runScript('client_protobuf.js', ['small', '1000', '--url', server.url, '-c', '4', '-i', '8', '--json'])
    assert.equal(code, 0, stderr)
    const report = JSON.parse(stdout)
    assert.deepEqual(report.messages, { sent: 1000, acked: 1000, errors: 0, lost: 0 })
    assert.equal(report.connections, 4)
    assert.equal(report.inflight, 8)
  })

  test('--direction down: the server sends the payload and the client decodes it; echo: both ways', async () => {
    const [down, echo] = await Promise.all([
      runScript('client_protobuf.js', ['people', '2', '--direction', 'down', '--url', server.url, '--json']),
      runScript('client_json.js', ['3', '100', '--direction', 'echo', '--url', server.url, '--json'])
    ])
    assert.equal(down.code, 0, down.stderr)
    const downReport = JSON.parse(down.stdout)
    assert.equal(downReport.direction, 'down')
    assert.deepEqual(downReport.messages, { sent: 2, acked: 2, errors: 0, lost: 0 })
    assert.ok(downReport.bytes.read > 2 * downReport.bytes.payloadPerMessage, 'two 8.5 MB payloads came down')
    assert.ok(downReport.bytes.written < 100, 'only two small requests went up')
    assert.equal(echo.code, 0, echo.stderr)
    const { bytes, messages } = JSON.parse(echo.stdout)
    assert.deepEqual(messages, { sent: 100, acked: 100, errors: 0, lost: 0 })
    const payload = await streamBytes('json', 'medium', 0, 100)
    assert.ok(bytes.read >= payload && bytes.written >= payload, 'the stream\'s first 100 messages went up and came back')
  })

  test('a reply that does not decode counts as an error with the reason', async () => {
    // An `up` server answers ACK, which is not a medium payload: every echo reply fails to decode.
    const stray = new WebSocketServer({ port: 0, host: '127.0.0.1' })
    await new Promise((resolve) => stray.once('listening', resolve))
    stray.on('connection', (ws) => ws.on('message', () => ws.send('ACK')))
    const run = await runScript('client_json.js', ['3', '10', '--direction', 'echo', '--url', `ws://127.0.0.1:${stray.address().port}`, '--json'])
    stray.close()
    assert.equal(run.code, 1)
    const report = JSON.parse(run.stdout)
    assert.deepEqual(report.messages, { sent: 10, acked: 0, errors: 10, lost: 0 })
    assert.match(report.errorReplies[0], /^client decode failed: /)
  })

  test('1,000 concurrent connections from one client: connect, run, close cleanly', async () => {
    const { code, stdout, stderr } = await runScript('client_protobuf.js', ['5', '5000', '-c', '1000', '--url', server.url, '--json'])
    assert.equal(code, 0, stderr)
    const report = JSON.parse(stdout)
    assert.deepEqual(report.messages, { sent: 5000, acked: 5000, errors: 0, lost: 0 })
    assert.equal(report.connections, 1000)
  })

  test('client.js --format: every other format through the server, echo, and up on a custom payload', async () => {
    // Echo runs all of a format's code that up does (the client encodes, the server decodes) and
    // its other half (the server encodes, the client decodes); up's ACK is the same for every format.
    const runs = ['protobuf-es', 'google-protobuf', 'fast-json', 'msgpack', 'cbor', 'avro'].map((format) =>
      ({ format, direction: 'echo', args: ['person', '100', '--direction', 'echo'] }))
    runs.push(...['fast-json', 'msgpack', 'cbor'].map((format) => ({ format, direction: 'up', args: ['--payload', 'test/fixtures/infer/api-response.json', '100'] })))
    await Promise.all(runs.map(async ({ format, direction, args }) => {
      const { code, stdout, stderr } = await runScript('client.js', ['--format', format, ...args, '--url', server.url, '--json'])
      assert.equal(code, 0, `${format} ${args.join(' ')}: ${stderr}`)
      const report = JSON.parse(stdout)
      assert.equal(report.format, format)
      assert.equal(report.direction, direction)
      assert.deepEqual(report.messages, { sent: 100, acked: 100, errors: 0, lost: 0 }, `${format} ${args.join(' ')}`)
      assert.ok(report.bytes.written >= 100 * report.bytes.payloadPerMessage, 'bytes from the socket')
    }))
  })

  test('the human report names what was measured and draws a histogram', async () => {
    const { code, stdout } = await runScript('client_json.js', ['1', '200', '--url', server.url])
    assert.equal(code, 0)
    assert.match(stdout, /^json · test 1 numbers · up/)
    assert.match(stdout, /sent 200 {2}acked 200 {2}errors 0 {2}lost 0/)
    assert.match(stdout, /p99\.9 [\d.]+/)
    assert.match(stdout, /network: none/)
    assert.match(stdout, /█/)
  })
})

describe('client failures', () => {
  test('an unreachable server: one line on stderr, exit 1', async () => {
    const closedPort = await new Promise((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address()
        probe.close(() => resolve(port))
      })
    })
    const { code, stderr } = await runScript('client_json.js', ['1', '10', '--url', `ws://127.0.0.1:${closedPort}`])
    assert.equal(code, 1)
    assert.match(stderr, /^error: cannot connect to ws:\/\/127\.0\.0\.1:\d+: ECONNREFUSED \(no server listening there: start one with node server\.js\)\n$/)
  })

  test('unknown test and bad options: one line on stderr, exit 2, no stack trace', async () => {
    // Each refused before it connects: all at once.
    await Promise.all([['nope', '10'], ['1', '0'], ['1', '10', '--inflight', 'x'], ['1', '10', '--url', 'http://x'], ['1', '10', '--bogus'], ['1', '10', '--direction', 'sideways']].map(async (args) => {
      const { code, stderr } = await runScript('client_protobuf.js', args)
      assert.equal(code, 2, args.join(' '))
      assert.equal(stderr.trim().split('\n').length, 1, stderr)
      assert.doesNotMatch(stderr, /\n\s+at /)
    }))
  })

  test('client.js: a missing or unknown --format, or a format that cannot carry the payload, is one line and exit 2', async () => {
    await Promise.all([
      [['3', '10'], /^Missing required argument: format/],
      [['--format', 'xml', '3', '10'], /^unknown format 'xml': expected one of avro, cbor, .*, or add it with --codec-module <file\.js>\n$/],
      [['--format', 'avro', '--payload', 'test/fixtures/infer/geojson.json', '10'], /^format 'avro' does not carry a payload of your own: it works from a built-in test's schema\n$/],
      // MessagePack has no -0: the fidelity check names the paths and refuses to run without --allow-lossy.
      [['--format', 'msgpack', '--payload', 'test/fixtures/infer/numbers.json', '10'], /\$\.negative_zero: expected -0, actual 0\n[^]*^the msgpack encoding is lossy for numbers\.json \(3 values differ\); run anyway with --allow-lossy$/m]
    ].map(async ([args, error]) => {
      const { code, stdout, stderr } = await runScript('client.js', args)
      assert.equal(code, 2, args.join(' '))
      assert.match(stderr, error)
      assert.doesNotMatch(stderr, /\n\s+at /)
      assert.equal(stdout, '')
    }))
  })

  test('the server killed mid-run: partial report, exact accounting, exit 1', async () => {
    const server = await startServerProcess()
    // Relay the client's traffic and kill the server (SIGKILL) once a few hundred KB went through,
    // so the kill lands in the middle of the run without guessing at timing.
    const serverPort = Number(new URL(server.url).port)
    let relayed = 0
    const relay = net.createServer((client) => {
      const upstream = net.connect(serverPort, '127.0.0.1')
      client.on('data', (chunk) => {
        relayed += chunk.length
        if (relayed > 300_000) server.child.kill('SIGKILL')
      })
      client.pipe(upstream).pipe(client)
      upstream.on('error', () => client.destroy())
      client.on('error', () => upstream.destroy())
    })
    await new Promise((resolve) => relay.listen(0, '127.0.0.1', resolve))
    const { code, stdout, stderr } = await runScript('client_protobuf.js',
      ['3', '1000000', '--inflight', '16', '--url', `ws://127.0.0.1:${relay.address().port}`, '--json'])
    relay.close()
    await server.stop()
    assert.equal(code, 1)
    const report = JSON.parse(stdout)
    assertAccounted(report)
    assert.ok(report.messages.sent < 1000000)
    assert.ok(report.messages.acked > 0)
    assert.equal(report.ok, false)
    assert.match(stderr, /^error: connection closed by the server \(code 1006\)\n$/)
  })
})

test('a server that never replies: --timeout counts the messages as lost, exit 1', async () => {
  const silent = new WebSocketServer({ host: '127.0.0.1', port: 0 })
  await new Promise((resolve) => silent.once('listening', resolve))
  const { code, stdout, stderr } = await runScript('client_json.js', ['5', '50', '--inflight', '5', '--timeout', '200', '--url', `ws://127.0.0.1:${silent.address().port}`, '--json'])
  silent.close()
  assert.equal(code, 1)
  const report = JSON.parse(stdout)
  assert.deepEqual(report.messages, { sent: 5, acked: 0, errors: 0, lost: 5 })
  assert.equal(stderr, 'error: no reply within 200 ms (--timeout)\n')
})

describe('--compress against node server.js --compress: a stream deflates as real traffic does, one message repeated does not', () => {
  let server
  before(async () => { server = await startServerProcess(['--compress']) })
  after(() => server.stop())

  const run = async (...extra) => {
    const { code, stdout, stderr } = await runScript('client_json.js', ['4', '300', '--compress', '--url', server.url, '--json', ...extra])
    assert.equal(code, 0, stderr)
    const report = JSON.parse(stdout)
    assert.deepEqual(report.messages, { sent: 300, acked: 300, errors: 0, lost: 0 })
    return { report, wireShare: report.bytes.written / report.messages.sent / report.bytes.payloadPerMessage }
  }

  test('test 4: wire bytes at least 5% of the payload bytes with the stream, far less with --repeat', async () => {
    const [stream, repeated] = await Promise.all([run(), run('--repeat')])
    assert.equal(stream.report.payload.kind, 'stream')
    assert.ok(stream.report.payload.messages > 100, 'more messages than deflate\'s window holds')
    assert.ok(stream.wireShare >= 0.05 && stream.wireShare <= 0.4, `stream: wire ${(stream.wireShare * 100).toFixed(1)}% of payload`)
    assert.deepEqual(repeated.report.payload, { kind: 'repeated', messages: 1, seed: null })
    assert.ok(repeated.wireShare < 0.03, `repeated: wire ${(repeated.wireShare * 100).toFixed(1)}% of payload (each message matches its identical predecessor)`)
  })

  test('the human report says which was sent', async () => {
    await Promise.all([[[], /^payload {3}stream of \d+ seeded messages \(varying values, seed \d+\)$/m], [['--repeat'], /^payload {3}one message repeated \(flatters compression, caches and the JIT\)$/m]].map(async ([extra, line]) => {
      const { code, stdout, stderr } = await runScript('client_json.js', ['4', '20', '--compress', '--url', server.url, ...extra])
      assert.equal(code, 0, stderr)
      assert.match(stdout, line)
    }))
  })
})
