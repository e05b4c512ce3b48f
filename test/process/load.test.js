// The load engine's modes, through real client processes: open loop and coordinated omission,
// duration, SIGINT, reconnection, and servers that are not ours (wss, headers, subprotocol, --ack).
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import https from 'node:https'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { WebSocketServer } from 'ws'
import { ROOT, runScript, startServerProcess, temporaryDirectory } from '../helpers.js'
import { decodeHistogram } from '../../lib/histogram.js'

const report = ({ stdout }) => JSON.parse(stdout)

describe('open loop and time', () => {
  let server
  before(async () => { server = await startServerProcess() })
  after(() => server.stop())

  test('--rate: sends on schedule, meets the target, reports corrected and uncorrected latency and a time series', async () => {
    const run = await runScript('client_protobuf.js', ['5', '--rate', '1000', '--duration', '1500ms', '--url', server.url, '--json'])
    assert.equal(run.code, 0, run.stderr)
    const r = report(run)
    assert.deepEqual(r.messages, { sent: 1500, acked: 1500, errors: 0, lost: 0 }, 'rate x duration messages')
    assert.equal(r.inflight, 1000, 'open loop: in flight defaults to a cap of 1000')
    assert.equal(r.target.rate, 1000)
    assert.equal(r.target.met, true, `sent at ${r.target.sendRate}/s`)
    assert.ok(Math.abs(r.target.sendRate - 1000) <= 10, 'within 1%')
    assert.ok(r.uncorrectedLatencyMs.p50 <= r.latencyMs.p50, 'from the actual send is never later than from the schedule')
    assert.ok(r.timeSeries.length >= 1)
    assert.equal(r.timeSeries.reduce((sum, second) => sum + second.acked, 0), 1500, 'the time series adds up')
    for (const second of r.timeSeries) assert.match(second.histogram, /^HISTF/)
    assert.equal(r.target.pacing, 'precise')
    assert.equal(decodeHistogram(r.sendLagHistogram).totalCount, 1500, 'every message\'s send lag')
    assert.ok(r.sendLagMs.p50 <= r.sendLagMs.p99 && r.sendLagMs.p99 <= r.sendLagMs.max)
  })

  test('--stages: the per-second acked figures follow the ramp, each stage\'s messages and latency reported, every message accounted for', async () => {
    const page = path.join(os.tmpdir(), `stages-${process.pid}.html`)
    const run = await runScript('client_protobuf.js', ['5', '--stages', '1s:200,1s:800,1s:0', '--url', server.url, '--json', '--html', page])
    assert.equal(run.code, 0, run.stderr)
    const r = report(run)
    // The HTML page: the seconds charted, the stage boundaries marked, the stages tabled.
    const html = fs.readFileSync(page, 'utf8')
    fs.rmSync(page)
    assert.equal((html.match(/class="mark"/g) ?? []).length, 4, 'stages 2 and 3 marked on both charts of seconds')
    assert.match(html, /<td>200 → 800\/s<\/td><td>500<\/td><td>500<\/td>/)
    // 0 -> 200/s over 1 s is 100 messages, 200 -> 800/s 500, 800 -> 0/s 400.
    assert.deepEqual(r.messages, { sent: 1000, acked: 1000, errors: 0, lost: 0 })
    assert.deepEqual(r.stages.map(({ fromMs, toMs, fromRate, toRate, messages, replies }) => [fromMs, toMs, fromRate, toRate, messages, replies]),
      [[0, 1000, 0, 200, 100, 100], [1000, 2000, 200, 800, 500, 500], [2000, 3000, 800, 0, 400, 400]])
    for (const stage of r.stages) assert.ok(stage.latencyMs.p50 > 0 && stage.latencyMs.p50 <= stage.latencyMs.p99, JSON.stringify(stage.latencyMs))
    assert.equal(r.target.rate, 1000 / 3)
    assert.equal(r.target.met, true, `sent at ${r.target.sendRate}/s`)
    // Seconds of the phase: up, more up, down; a reply or two may spill into the next second.
    const acked = r.timeSeries.map((second) => second.acked)
    assert.equal(acked.reduce((sum, n) => sum + n, 0), 1000)
    assert.ok(Math.abs(acked[0] - 100) <= 15 && Math.abs(acked[1] - 500) <= 15 && Math.abs(acked[2] - 400) <= 15, acked.join(', '))
  })

  test('--arrivals: 100 new connections a second for 0.5 s, 3 messages each: every arrival opened, answered and closed, its connect time reported', async () => {
    const run = await runScript('client_json.js', ['5', '--arrivals', '100', '--per-connection', '3', '--duration', '500ms', '--url', server.url, '--json'])
    assert.equal(run.code, 0, run.stderr)
    const r = report(run)
    assert.deepEqual(r.messages, { sent: 150, acked: 150, errors: 0, lost: 0 })
    assert.deepEqual(r.arrivals, { rate: 100, perConnection: 3, messageRate: null, planned: 50, launched: 50, opened: 50, failed: 0, completed: 50, dropped: 0 })
    assert.equal(r.connect.opened, 50)
    assert.ok(r.connect.steps.total.p50 > 0 && r.connect.steps.total.p50 <= r.connect.steps.total.p99, JSON.stringify(r.connect.steps.total))
    assert.equal(r.histogram.length > 0, true)
    const human = await runScript('client_json.js', ['5', '--arrivals', '20', '--per-connection', '2', '--duration', '500ms', '--url', server.url])
    assert.match(human.stdout, /^arrivals {2}20\/s × 2 messages: 10 due, 10 opened, 10 completed, 0 could not connect, 0 closed by the server$/m)
    assert.match(human.stdout, /^connect {3}10 opened {2}tcp p50 [\d,]+ p99 [\d,]+ {2}upgrade p50/m)
  })

  test('--pacing timer: the same schedule from Node\'s timers, named in the report; the console shows the send lag', async () => {
    const run = await runScript('client_protobuf.js', ['5', '--rate', '500', '--duration', '500ms', '--pacing', 'timer', '--url', server.url])
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, /^target {4}500 msg\/s, sent at \d+ msg\/s: met \(timer pacing\)$/m)
    assert.match(run.stdout, /^send lag {2}p50 \d+\.\d{3} {2}p99 \d+\.\d{3} {2}max \d+\.\d{3} {2}\(due time to send/m)
  })

  test('--duration in a closed loop stops sending at the deadline and accounts for everything', async () => {
    const run = await runScript('client_json.js', ['5', '--duration', '500ms', '-i', '4', '--url', server.url, '--json'])
    assert.equal(run.code, 0, run.stderr)
    const r = report(run)
    assert.ok(r.messages.sent > 100)
    assert.equal(r.messages.sent, r.messages.acked)
    assert.ok(r.durationMs >= 500 && r.durationMs < 2500, `${r.durationMs} ms`)
    assert.equal(r.target, null)
  })

  test('--warmup by time: sent first, not recorded, not counted', async () => {
    const run = await runScript('client_protobuf.js', ['5', '200', '--warmup', '100ms', '--url', server.url, '--json'])
    assert.equal(run.code, 0, run.stderr)
    const r = report(run)
    assert.deepEqual(r.warmup, { durationMs: 100 })
    assert.deepEqual(r.messages, { sent: 200, acked: 200, errors: 0, lost: 0 })
    assert.equal(decodeHistogram(r.histogram).totalCount, 200)
  })

  test('bad mode options: one line, exit 2', async () => {
    // Each refused before it connects: all at once.
    await Promise.all([
      [['5', '--rate', '0'], /^--rate must be a number > 0/],
      [['5', '--rate', '500', '--pacing', 'sometimes'], /pacing/],
      [['5', '--duration', 'soon'], /^--duration must be a duration such as 30s/],
      [['5', '--warmup', '2 parsecs'], /^--warmup must be a duration/],
      [['5', '--workers', '3', '-c', '2'], /^--workers 3 needs at least as many --connections/],
      [['5', '--header', 'no colon'], /^--header must look like "Name: value"/],
      [['5', '--ack', 'maybe'], /^--ack must be ACK, any or text:<reply>/],
      [['5', '--assert', 'p99 < soon'], /^--assert 'p99 < soon'/]
    ].map(async ([args, pattern]) => {
      const run = await runScript('client_protobuf.js', [...args, '--url', server.url])
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`)
      assert.match(run.stderr, pattern)
      assert.equal(run.stderr.trim().split('\n').length, 1)
    }))
  })
})

test('a server stall: the corrected p99 shows it, the uncorrected one hides it', async () => {
  const server = await startServerProcess(['--stall', '300@500'])
  try {
    // The stall at 0.5 s holds up 300 of the 1,000 messages.
    const run = await runScript('client_protobuf.js', ['5', '--rate', '1000', '--duration', '1s', '--inflight', '1', '--url', server.url, '--json'])
    assert.equal(run.code, 0, run.stderr)
    const r = report(run)
    assert.ok(r.latencyMs.p99 >= 150, `corrected p99 ${r.latencyMs.p99} ms reflects the 300 ms stall`)
    assert.ok(r.uncorrectedLatencyMs.p99 < r.latencyMs.p99 / 5, `uncorrected p99 ${r.uncorrectedLatencyMs.p99} ms hides it`)
    assert.ok(r.uncorrectedLatencyMs.max >= 250, 'only the one message in flight saw it')
    assert.ok(r.sendLagMs.p99 < 150, `send lag p99 ${r.sendLagMs.p99} ms: messages held back by the stall waited for room, not for the generator`)
  } finally {
    await server.stop()
  }
})

test('SIGINT: stops sending, waits for what is in flight, prints the partial report with exact accounting', async () => {
  // A server that ACKs; once 300 messages went through, the test interrupts the client.
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' })
  await new Promise((resolve) => wss.once('listening', resolve))
  let received = 0
  wss.on('connection', (ws) => ws.on('message', () => {
    ws.send('ACK')
    if (++received === 300) child.kill('SIGINT')
  }))
  const child = spawn(process.execPath, ['client_json.js', '5', '--duration', '60s', '-i', '8', '--url', `ws://127.0.0.1:${wss.address().port}`, '--json'], { cwd: ROOT })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => { stdout += chunk })
  child.stderr.on('data', (chunk) => { stderr += chunk })
  const code = await new Promise((resolve) => child.once('exit', resolve))
  wss.close()
  assert.equal(code, 1)
  assert.equal(stderr, 'error: interrupted by SIGINT\n')
  const r = JSON.parse(stdout)
  assert.equal(r.interrupted, true)
  const { sent, acked, errors, lost } = r.messages
  assert.equal(sent, acked + errors + lost)
  assert.ok(acked >= 290 && sent < 400, `${sent} sent, ${acked} acked: stopped right away`)
})

test('--reconnect: a dropped connection is reopened, the gap counted, every message accounted for', async () => {
  const server = await startServerProcess()
  const serverPort = Number(new URL(server.url).port)
  // A relay that cuts every connection once 200 KB went through, then refuses two reconnection
  // attempts (the server is "down"), then forwards again.
  let relayed = 0
  let refusals = 0
  const sockets = new Set()
  const relay = net.createServer((client) => {
    if (relayed > 200_000 && refusals < 2) {
      refusals++
      return client.destroy()
    }
    const upstream = net.connect(serverPort, '127.0.0.1')
    sockets.add(client)
    client.on('data', (chunk) => {
      relayed += chunk.length
      if (relayed > 200_000 && refusals === 0) for (const socket of sockets) socket.destroy()
    })
    client.pipe(upstream).pipe(client)
    upstream.on('error', () => client.destroy())
    client.on('error', () => upstream.destroy())
    client.on('close', () => { sockets.delete(client); upstream.destroy() })
  })
  await new Promise((resolve) => relay.listen(0, '127.0.0.1', resolve))
  try {
    // Short backoffs: the two refused attempts come sooner.
    const run = await runScript('client_protobuf.js', ['3', '3000', '-i', '8', '--reconnect', '--reconnect-base', '10ms', '--url', `ws://127.0.0.1:${relay.address().port}`, '--json'])
    const r = report(run)
    assert.equal(refusals, 2, 'the outage happened')
    assert.ok(r.reconnects.count >= 1, JSON.stringify(r.reconnects))
    assert.ok(r.reconnects.gapMs >= 0)
    // Every opening timed, the first and the reopened; the two refused attempts counted, by cause.
    assert.equal(r.connect.opened, 1 + r.reconnects.count)
    assert.ok(r.connect.steps.tcp.p50 > 0 && r.connect.steps.upgrade.p50 > 0, JSON.stringify(r.connect.steps))
    assert.equal(Object.values(r.connect.failures).reduce((sum, n) => sum + n, 0), 2, JSON.stringify(r.connect.failures))
    assert.equal(r.messages.sent, 3000, 'went on after the server came back')
    assert.equal(r.messages.sent, r.messages.acked + r.messages.errors + r.messages.lost)
    assert.ok(r.messages.lost >= 1 && r.messages.lost <= 8, 'only the messages in flight at the cut are lost')
    assert.equal(run.code, 1, 'lost messages still fail the run')
  } finally {
    relay.close()
    await server.stop()
  }
})

// Each test its own clients on the one server, none of them timed: side by side.
describe('any server: wss with a self-signed certificate, headers, subprotocol, --ack', { concurrency: true }, () => {
  let server, url
  const seen = []
  before(async () => {
    const dir = temporaryDirectory('tls')
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
      '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' })
    server = https.createServer({ key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')) })
    // Not our server: it echoes every message, or answers OK when asked to.
    const wss = new WebSocketServer({ server, handleProtocols: (protocols) => protocols.has('bench.v1') ? 'bench.v1' : false })
    wss.on('connection', (ws, request) => {
      seen.push({ header: request.headers['x-run'], authorization: request.headers.authorization, protocol: ws.protocol, path: request.url })
      ws.on('message', (data, isBinary) => ws.send(request.url.includes('reply=ok') ? 'OK' : data, { binary: isBinary }))
    })
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `wss://127.0.0.1:${server.address().port}`
  })
  after(() => server.close())

  test('--insecure --header --token --subprotocol --ack any against an echo server', async () => {
    const run = await runScript('client_protobuf.js', ['3', '50', '--url', url, '--insecure', '--header', 'X-Run: ci-42', '--token', 's3cret', '--subprotocol', 'bench.v1', '--ack', 'any', '--json'])
    assert.equal(run.code, 0, run.stderr)
    assert.deepEqual(report(run).messages, { sent: 50, acked: 50, errors: 0, lost: 0 })
    // This test's connection among the others': the one with its header.
    assert.deepEqual(seen.find(({ header }) => header === 'ci-42'), { header: 'ci-42', authorization: 'Bearer s3cret', protocol: 'bench.v1', path: '/?test=medium&format=protobuf' })
  })

  test('--ack text:OK, and an echo is then an error reply', async () => {
    const [ok, echoed] = await Promise.all([`${url}/?reply=ok`, url].map((target) =>
      runScript('client_json.js', ['5', '20', '--url', target, '--insecure', '--ack', 'text:OK', '--json'])))
    assert.equal(ok.code, 0, ok.stderr)
    assert.equal(echoed.code, 1)
    assert.equal(report(echoed).messages.errors, 20)
  })

  test('a protobuf echo without --ack any: the error line shows the reply as size and hex, with the hint', async () => {
    const run = await runScript('client_protobuf.js', ['3', '20', '--url', url, '--insecure', '--subprotocol', 'bench.v1'])
    assert.equal(run.code, 1)
    const [line, ...rest] = run.stderr.split('\n').filter((text) => text.startsWith('error:'))
    assert.deepEqual(rest, [])
    assert.match(line, /first error reply: \d+ bytes, not text: [0-9a-f]{2} .* \(an echo server sends each message back: run with --ack any\)$/)
    assert.doesNotMatch(run.stderr + run.stdout, /[\u0000-\u0008\u000b-\u001f\u007f]/, 'no raw bytes on the terminal') // eslint-disable-line no-control-regex
  })

  test('without --insecure a self-signed certificate is one clear line', async () => {
    const run = await runScript('client_json.js', ['5', '20', '--url', url])
    assert.equal(run.code, 1)
    assert.match(run.stderr, /^error: cannot connect to wss:\/\/127\.0\.0\.1:\d+: the server's certificate is not trusted \(DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate\): give its certificate or CA with --ca FILE, or skip the check with --insecure\n$/)
  })
})
