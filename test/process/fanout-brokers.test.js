// node server.js --processes 2 --broker <ipc|redis|nats>: fan-out subscribers on both worker
// processes (which process holds each connection is read from /proc), a publisher on one, and
// every subscriber gets every publish once, in order; the fan-out client's report agrees. A broker that is not there, or goes away,
// stops the server with one line.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import WebSocket from 'ws'
import { createCodec } from '../../lib/codecs/registry.js'
import { loadMessages, resolveTest } from '../../lib/payloads/catalog.js'
import { connectionUrl, fanoutHeader, readFanoutHeader } from '../../lib/protocol.js'
import { readMetrics } from '../../lib/server/metrics-reader.js'
import { watchOutput } from '../../lib/processes.js'
import { startBrokerProcess } from '../../lib/server/broker-process.js'
import { brokerUnavailable, runScript, startServerProcess } from '../helpers.js'

const PUBLISHES = 300
const SUBSCRIBERS_PER_TOPIC = 10
/** Subscribers opened at most, per topic, waiting for both workers to hold some. */
const MAX_SUBSCRIBERS_PER_TOPIC = 40
const FORMATS = ['json', 'protobuf']

/**
 * A fan-out subscriber: keeps what it receives and the local port of its socket. `done` resolves at
 * END with the sequence numbers received, in order.
 */
async function subscriber (url) {
  const ws = new WebSocket(url, { perMessageDeflate: false })
  const received = []
  const header = { measured: false, seq: 0, publishedAtUs: 0 }
  let localPort
  ws.once('upgrade', (response) => { localPort = response.socket.localPort })
  const done = new Promise((resolve) => ws.on('message', (data) => {
    if (data.toString('latin1', 0, 4) === 'END ') return resolve({ received, end: data.toString() })
    received.push(readFanoutHeader(data, header) ? header.seq : `not a publish: ${data.toString().slice(0, 40)}`)
  }))
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject) })
  return { ws, localPort, done }
}

/** The server processes holding the far end of each client port: the socket inodes of each child's files against /proc/net/tcp. */
function holders (serverPid, serverPort, clientPorts) {
  const children = fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1] === String(serverPid)
    } catch {
      return false // gone meanwhile
    }
  })
  const owner = new Map()
  for (const pid of children) {
    for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
      const inode = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`, { throwIfNoEntry: false }) ?? '')?.[1]
      if (inode) owner.set(inode, pid)
    }
  }
  const byClientPort = new Map()
  for (const line of fs.readFileSync('/proc/net/tcp', 'utf8').trim().split('\n').slice(1)) {
    const [, local, remote, , , , , , , inode] = line.trim().split(/\s+/)
    if (parseInt(local.split(':')[1], 16) === serverPort) byClientPort.set(parseInt(remote.split(':')[1], 16), owner.get(inode))
  }
  return clientPorts.map((port) => byClientPort.get(port))
}

/** Each format's publish frames: header and a test-3 message, as the load client sends them. */
async function publishFrames () {
  const test3 = resolveTest(3)
  const { messages } = loadMessages(test3)
  return Object.fromEntries(await Promise.all(FORMATS.map(async (format) => {
    const codec = await createCodec(format, test3)
    const frames = Array.from({ length: PUBLISHES }, (_, seq) => Buffer.concat([
      Buffer.from(fanoutHeader(true, seq, Date.now() * 1000)),
      Buffer.from(codec.encode(codec.prepare(messages[seq % messages.length])))
    ]))
    return [format, { frames, binary: codec.binary }]
  })))
}

/** Publishes every frame on one connection, then END; resolves once every publish is acknowledged. */
async function publish (url, { frames, binary }) {
  const ws = new WebSocket(url, { perMessageDeflate: false })
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject) })
  let acks = 0
  const acknowledged = new Promise((resolve, reject) => ws.on('message', (data) => {
    if (data.toString() !== 'ACK') return reject(new Error(`publisher got ${data.toString().slice(0, 80)}`))
    if (++acks === frames.length) resolve()
  }))
  for (const frame of frames) ws.send(frame, { binary })
  await acknowledged
  ws.send(`END ${frames.length}`)
  ws.close()
}

describe('node server.js --processes 2 --broker: fan-out across worker processes', () => {
  for (const kind of ['ipc', 'redis', 'nats']) {
    test(`${kind}: subscribers on both workers get every publish once, in order`, { skip: kind !== 'ipc' && brokerUnavailable(kind) }, async (t) => {
      const broker = kind === 'ipc' ? null : await startBrokerProcess(kind)
      t.after(() => broker?.stop())
      const server = await startServerProcess(['--processes', '2', '--broker', broker?.url ?? 'ipc'])
      t.after(() => server.stop())
      const port = Number(new URL(server.url).port)
      const url = (format, role) => connectionUrl(server.url, { test: '3', format, direction: 'fanout', role }).href
      const subscribers = Object.fromEntries(FORMATS.map((format) => [format, []]))
      const add = async () => {
        for (const format of FORMATS) subscribers[format].push(await subscriber(url(format, 'subscriber')))
      }
      while (subscribers.json.length < SUBSCRIBERS_PER_TOPIC) await add()
      const all = () => FORMATS.flatMap((format) => subscribers[format])
      // The kernel hands each connection to either worker: more until both hold some (rarely needed).
      while (new Set(holders(server.child.pid, port, all().map(({ localPort }) => localPort))).size < 2) {
        assert.ok(subscribers.json.length < MAX_SUBSCRIBERS_PER_TOPIC, 'every subscriber landed on one worker process')
        await add()
      }
      const frames = await publishFrames()
      await Promise.all(FORMATS.map((format) => publish(url(format, 'publisher'), frames[format])))
      const expected = Array.from({ length: PUBLISHES }, (_, seq) => seq)
      for (const { done } of all()) assert.deepEqual(await done, { received: expected, end: `END ${PUBLISHES}` })
      const metrics = await readMetrics(server.url)
      assert.equal(metrics.sum('wsbench_fanout_deliveries_total'), PUBLISHES * all().length, 'deliveries summed over both workers')
      for (const { ws } of all()) ws.close()
      // The fan-out client's own accounting agrees, on another test.
      const args = ['5', '--direction', 'fanout', '--connections', '20', '--rate', '50', '--duration', '2s', '--timeout', '3000', '--json', '--url', server.url]
      const run = await runScript('client_json.js', args)
      assert.equal(run.code, 0, run.stderr)
      const { fanout } = JSON.parse(run.stdout)
      const every = fanout.published * 20
      assert.deepEqual([fanout.expected, fanout.delivered, fanout.lost, fanout.duplicates, fanout.reordered], [every, every, 0, 0, 0])
    })
  }
})

describe('node server.js --broker: a broker that is not there or goes away', () => {
  test('nothing at the URL: one line, exit 2, no stack trace, within a few seconds', async () => {
    for (const args of [['--broker', 'redis://127.0.0.1:1'], ['--processes', '2', '--broker', 'nats://127.0.0.1:1']]) {
      const started = Date.now()
      const { code, stdout, stderr } = await runScript('server.js', ['--port', '0', ...args])
      assert.equal(code, 2, stderr)
      assert.equal(stdout, '')
      assert.match(stderr, /^broker (redis|nats):\/\/127\.0\.0\.1:1 does not answer: \w+ \(start one: (redis|nats)-server --port 1\)\n$/)
      assert.ok(Date.now() - started < 5000, `${Date.now() - started} ms`)
    }
  })

  test('a bad --broker: one line, exit 2', async () => {
    const { code, stderr } = await runScript('server.js', ['--broker', 'kafka://127.0.0.1:9092'])
    assert.equal(code, 2)
    assert.equal(stderr, "--broker: unknown broker 'kafka://127.0.0.1:9092': expected redis://HOST:PORT, nats://HOST:PORT or ipc\n")
  })

  test('the broker stopped mid-run: the server (two processes, or one) stops with one line on stderr and exit 1', { skip: brokerUnavailable('redis') }, async (t) => {
    for (const [processes, others] of [[2, '; stopping the others'], [1, '']]) {
      const broker = await startBrokerProcess('redis')
      t.after(() => broker.stop())
      const server = await startServerProcess(['--processes', String(processes), '--broker', broker.url])
      const output = watchOutput(server.child)
      await broker.stop()
      const { code, stderr } = await output.exited
      assert.equal(code, 1)
      assert.match(stderr, new RegExp(`^error: broker ${broker.url} connection lost: [^\\n]+${others}\\n$`))
    }
  })
})
