// The wire protocol (docs/protocol.md) as every server must keep it, tested against the server
// that WSBENCH_SERVER names: go (the default) or another reference server of servers/ (java),
// built when its sources changed, and options of its own after its name (WSBENCH_SERVER="java
// --json-library gson"); node (node server.js); or any command line of a server that keeps the
// process contract, e.g.
// WSBENCH_SERVER="/opt/my-server --root /work/main" node --test test/process/conformance.test.js.
// The project's own clients against it on every test, format and direction; /metrics; refusals,
// limits, close codes, the stop; hostile frames; TLS. CI runs it against every reference server and Node's.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import net from 'node:net'
import { REFERENCE_SERVER_NAMES, buildReferenceServer } from '../../lib/reference/servers.js'
import { parseMetrics, readMetrics } from '../../lib/server/metrics-reader.js'
import { ROOT, openConnection, referenceServerUnavailable, refusedUpgrade, runScript, startServerProcess } from '../helpers.js'
import { MAX_PAYLOAD, fuzzServer } from '../fuzz.js'

const CHOSEN = process.env.WSBENCH_SERVER ?? 'go'
const [NAME, ...NAMED_ARGS] = CHOSEN.trim().split(/\s+/)
/** Whether its json decodes into the test's types (Go's structs, Java's classes), refusing well-formed JSON of another shape; JSON.parse does not. */
const TYPED_JSON = CHOSEN !== 'node'
const REFERENCE = REFERENCE_SERVER_NAMES.includes(NAME)
const unavailable = REFERENCE ? referenceServerUnavailable(NAME) : false
const TESTS = ['numbers', 'strings', 'medium', 'large', 'small', 'person', 'counters', 'people']
const FORMATS = ['json', 'protobuf']
/** Messages a run sends: people is one 12.9 MB message, the rest are small. */
const messagesOf = (name) => name === 'people' ? 2 : 60

/** Starts the server under test on a free port with these options, as its starter would. */
function startServer (args = []) {
  if (CHOSEN === 'node') return startServerProcess(args)
  const [command, ...own] = REFERENCE ? [buildReferenceServer(NAME), ...NAMED_ARGS] : [NAME, ...NAMED_ARGS]
  return startServerProcess(args, { command, args: [...own, '--port', '0'] })
}

let server
const counted = {} // `${format} ${test}` -> messages the server should have answered
before(async () => {
  if (unavailable) return
  server = await startServer()
}, { timeout: 300_000 })
after(async () => { await server?.stop() })

/** Runs a client with --json and checks its accounting: every message answered, no error. */
async function runClient (format, name, direction, extra = []) {
  const messages = messagesOf(name)
  const run = await runScript(`client_${format}.js`, [name, String(messages), '--url', server.url, '--direction', direction,
    '--timeout', '30000', ...extra, '--json'])
  assert.equal(run.code, 0, `${format} ${name} ${direction}: ${run.stderr}${run.stdout.slice(0, 500)}`)
  const report = JSON.parse(run.stdout)
  assert.equal(report.direction, direction)
  assert.equal(report.test, name)
  assert.deepEqual(report.messages, { sent: messages, acked: messages, errors: 0, lost: 0 }, `${format} ${name} ${direction}`)
  assert.equal(report.ok, true)
  const key = `${format} ${name}`
  counted[key] = (counted[key] ?? 0) + messages + (report.warmup?.messages ?? 0)
  return report
}

for (const direction of ['up', 'echo', 'down']) {
  for (const format of FORMATS) {
    test(`${CHOSEN} server, ${direction}, ${format}: every test's messages answered, none in error`, { skip: unavailable, timeout: 120_000 }, async () => {
      for (const name of TESTS) await runClient(format, name, direction)
    })
  }
}

test(`${CHOSEN} server, down with payload=repeated: the one message every time`, { skip: unavailable, timeout: 60_000 }, async () => {
  for (const format of FORMATS) await runClient(format, 'medium', 'down', ['--repeat'])
})

test(`${CHOSEN} server, fanout: every publish delivered to the subscriber`, { skip: unavailable, timeout: 120_000 }, async () => {
  for (const format of FORMATS) {
    for (const name of ['medium', 'person', 'counters']) {
      const report = await runClient(format, name, 'fanout', ['--rate', '300'])
      assert.equal(report.fanout.delivered, report.fanout.expected, `${format} ${name}: ${JSON.stringify(report.fanout).slice(0, 300)}`)
      assert.equal(report.fanout.lost, 0)
    }
  }
})

test(`${CHOSEN} server, /metrics: every message counted by format and test, codec time and process CPU there`,
  { skip: unavailable }, async () => {
    const response = await fetch(server.url.replace(/^ws/, 'http') + '/metrics')
    assert.equal(response.status, 200)
    assert.match(response.headers.get('content-type'), /^text\/plain/)
    const metrics = parseMetrics(await response.text())
    for (const [key, expected] of Object.entries(counted)) {
      const [format, name] = key.split(' ')
      const labels = { format, test: name }
      assert.equal(metrics.value('wsbench_messages_total', labels), expected, `wsbench_messages_total of ${key}`)
      assert.ok(metrics.value('wsbench_codec_seconds_total', labels) > 0, `wsbench_codec_seconds_total of ${key}`)
    }
    assert.ok(Object.keys(counted).length >= TESTS.length * FORMATS.length, 'the runs above counted')
    assert.ok(metrics.value('process_cpu_seconds_total') >= 0)
  })

test(`${CHOSEN} server, refusals: an unknown test, format or direction is a 400 with the reason`, { skip: unavailable }, async () => {
  const refusal = (query) => refusedUpgrade(`${server.url}/?${query}`)
  assert.deepEqual(await refusal('test=9&format=json').then((r) => [r.status, r.body]),
    [400, "unknown test '9': expected one of 1 numbers, 2 strings, 3 medium, 4 large, 5 small, people, person, counters\n"])
  // Each server lists the formats it serves: json and protobuf at least.
  const format = await refusal('test=3&format=xml')
  assert.equal(format.status, 400)
  assert.match(format.body, /^unknown format 'xml': expected one of ([\w-]+, )*json, ([\w-]+, )*protobuf(, [\w-]+)*(,? or [^\n]+)?\n$/)
  assert.deepEqual(await refusal('test=3&format=json&direction=sideways').then((r) => [r.status, r.body]),
    [400, "unknown direction 'sideways': expected one of up, down, echo, fanout\n"])
})

test(`${CHOSEN} server, a message that does not decode: the error line, and the connection stays open`, { skip: unavailable }, async () => {
  const { ws, nextReply } = await openConnection(`${server.url}/?test=medium&format=json`)
  ws.send('{not json')
  assert.match(await nextReply(), /^ERR json decode failed for test medium: /)
  ws.send('{"orderId": 5}') // well-formed, of another type than the test's: refused where JSON is typed
  const typed = await nextReply()
  if (TYPED_JSON) assert.match(typed, /^ERR json decode failed for test medium: /)
  else assert.equal(typed, 'ACK')
  ws.send('{"orderId": "a"}')
  assert.equal(await nextReply(), 'ACK')
  ws.close()
})

test(`${CHOSEN} server, SIGTERM: connections closed with 1001, exit code 0`, { skip: unavailable, timeout: 30_000 }, async () => {
  const own = await startServer()
  const { closed } = await openConnection(`${own.url}/?test=small&format=protobuf`)
  assert.equal(await own.stop(), 0)
  assert.equal(await closed, 1001)
})

test(`${CHOSEN} server, limits: 401 without the token, 503 past --max-connections, 1009 past --max-payload, 1007 for bad UTF-8, 408 for a slow request`,
  { skip: unavailable, timeout: 30_000 }, async () => {
    const own = await startServer(['--token', 'sekret', '--max-connections', '2', '--max-payload', '1500', '--handshake-timeout', '300ms'])
    try {
      const url = `${own.url}/?test=medium&format=json`
      const unauthorized = await refusedUpgrade(url)
      assert.deepEqual([unauthorized.status, unauthorized.headers['www-authenticate']], [401, 'Bearer'])
      const big = await openConnection(`${url}&token=sekret`)
      const bad = await openConnection(url, { Authorization: 'bearer sekret' })
      const full = await refusedUpgrade(`${url}&token=sekret`)
      assert.deepEqual([full.status, full.body], [503, 'connection limit reached (2 open)\n'])
      big.ws.send('x'.repeat(3000))
      assert.equal(await big.closed, 1009)
      bad.ws.send(Buffer.from([0xff, 0xfe]), { binary: false })
      assert.equal(await bad.closed, 1007)
      const socket = net.connect(Number(new URL(own.url).port), '127.0.0.1')
      socket.write('GET / HTTP/1.1\r\n')
      let answer = ''
      socket.setEncoding('utf8').on('data', (chunk) => { answer += chunk })
      await new Promise((resolve) => socket.once('close', resolve))
      assert.match(answer, /^HTTP\/1\.1 408 Request Timeout\r\n/)
      // Hostile frames after all that: each answered with an error line, and the server still serves.
      const hostile = await openConnection(`${url}&token=sekret`)
      const random = Buffer.from(Array.from({ length: 64 }, (_, i) => (i * 97 + 13) % 256))
      for (const frame of [random, '{not json', '[1, 2', ...(TYPED_JSON ? ['"a string"'] : []), '']) {
        hostile.ws.send(frame, { binary: Buffer.isBuffer(frame) })
        const reply = await Promise.race([hostile.nextReply(), hostile.closed.then((code) => `closed ${code}`)])
        assert.match(reply, /^ERR json decode failed for test medium: /, String(frame))
      }
      hostile.ws.send(JSON.stringify(JSON.parse(fs.readFileSync(path.join(ROOT, 'data', '3-medium.json'), 'utf8'))))
      assert.equal(await Promise.race([hostile.nextReply(), hostile.closed.then((code) => `closed ${code}`)]), 'ACK', 'a good message after the bad ones')
      assert.equal(own.child.exitCode, null, 'still running')
      hostile.ws.close()
    } finally {
      await own.stop()
    }
  })

test(`${CHOSEN} server, fuzz: 40,000+ hostile frames in json and protobuf; it stays up, answers each, and its counters agree`,
  { skip: unavailable, timeout: 180_000 }, async () => {
    const own = await startServer(['--max-payload', String(MAX_PAYLOAD)])
    try {
      // A server that decodes JSON into the test's types (Go's structs) may refuse another test's JSON message; JSON.parse takes it.
      const tally = await fuzzServer(own.url, { formats: FORMATS, connections: 4, closes: 20, seed: 5000, typedJson: TYPED_JSON })
      // The server's own counters: every frame it answered, and 40 protocol errors (1007 and 1009).
      const metrics = await readMetrics(own.url)
      assert.equal(metrics.sum('wsbench_messages_total'), tally.acks + 2000 + 500)
      assert.equal(metrics.sum('wsbench_decode_errors_total'), tally.errors)
      assert.equal(metrics.value('wsbench_protocol_errors_total'), 40) // Java's client writes it 40.0
      assert.equal(own.child.exitCode, null, 'still running')
      assert.equal(await own.stop('SIGTERM'), 0, 'a clean exit when asked')
      process.stderr.write(`# ${CHOSEN} fuzz: ${tally.frames} frames (${tally.acks} ACK, ${tally.errors} ERR), 60 more connections closed or dropped\n`)
    } finally {
      await own.stop()
    }
  })

test(`${CHOSEN} server, --tls: both clients over wss:// with its throwaway certificate as --ca, every message acked; plain HTTP gets 400`, { skip: unavailable, timeout: 60_000 }, async () => {
  const own = await startServer(['--tls', '--token', 'sekret'])
  try {
    assert.match(own.url, /^wss:\/\/127\.0\.0\.1:\d+$/)
    const file = own.output().match(/throwaway certificate (\S+) \(SHA-256 [0-9A-F:]{95}\): clients trust it with --ca \1/)?.[1]
    assert.ok(file && fs.existsSync(file), own.output())
    for (const script of ['client_json.js', 'client_protobuf.js']) {
      const { code, stdout, stderr } = await runScript(script, ['4', '300', '--url', own.url, '--ca', file, '--token', 'sekret', '--json'])
      assert.equal(code, 0, stderr)
      const report = JSON.parse(stdout)
      assert.deepEqual(report.messages, { sent: 300, acked: 300, errors: 0, lost: 0 })
      assert.equal(report.tls.version, 'TLSv1.3')
    }
    // Plain HTTP on the TLS port: 400 with a line saying so (Node: "this port speaks TLS", Go's net/http: "an HTTPS server").
    const plain = await runScript('client_json.js', ['4', '10', '--url', own.url.replace('wss:', 'ws:'), '--token', 'sekret'])
    assert.match(plain.stderr, /^error: server refused ws:\/\/127\.0\.0\.1:\d+\/\?test=large&format=json: 400 .*(TLS|HTTPS).*\n$/)
    assert.equal(await own.stop('SIGTERM'), 0)
    assert.ok(!fs.existsSync(file), 'the throwaway certificate is removed when it stops')
  } finally {
    await own.stop()
  }
})
