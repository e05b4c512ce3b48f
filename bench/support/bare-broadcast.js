// The bare broadcast bench:broadcast measures fan-out against: the least code that does the job.
//   node bench/support/bare-broadcast.js sender <test> <format> <subscribers>   prints "listening on ws://...";
//     once every subscriber is connected, sends one pre-encoded fan-out frame (header and payload)
//     to all of them, round after round, as fast as their sockets take it
//   node bench/support/bare-broadcast.js receiver <url> <subscribers> <warmupMs> <durationMs>
//     opens the connections, counts what arrives and prints {deliveries, seconds, rate, cpuShare, total}
//     (total: every delivery, warm-up included)
// The sender waits while any socket has more than HIGH_WATER bytes unsent: the ceiling it finds is
// what the sockets carry, not what memory can hold.
import { performance } from 'node:perf_hooks'
import WebSocket, { WebSocketServer } from 'ws'
import { createCodec } from '../../lib/codecs/registry.js'
import { loadPayload, resolveTest } from '../../lib/payloads/catalog.js'
import { fanoutHeader } from '../../lib/protocol.js'

const HIGH_WATER = 64 * 1024

const [role, ...args] = process.argv.slice(2)

if (role === 'sender') {
  const [testName, format, subscribers] = args
  const test = resolveTest(testName)
  const codec = await createCodec(format, test)
  const payload = codec.encode(codec.prepare(loadPayload(test)))
  const header = fanoutHeader(true, 0, Date.now() * 1000)
  // Bytes, also for a text frame: a string would be encoded again on every send.
  const frame = Buffer.concat([Buffer.from(header), Buffer.from(payload)])
  const options = { binary: codec.binary }
  const clients = []
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false })
  const round = () => {
    if (clients.some((ws) => ws.bufferedAmount > HIGH_WATER)) return setImmediate(round)
    for (const ws of clients) ws.send(frame, options)
    setImmediate(round)
  }
  wss.on('listening', () => console.log(`listening on ws://127.0.0.1:${wss.address().port}`))
  wss.on('connection', (ws) => {
    if (clients.push(ws) === Number(subscribers)) round()
  })
  process.on('SIGTERM', () => process.exit(0))
} else {
  const [url, subscribers, warmupMs, durationMs] = args
  let deliveries = 0
  let firstAt = 0
  const onMessage = () => {
    deliveries++
    if (firstAt === 0) {
      firstAt = performance.now()
      setTimeout(measure, Number(warmupMs))
    }
  }
  const measure = () => {
    const from = { deliveries, at: performance.now(), cpu: process.cpuUsage() }
    setTimeout(() => {
      const seconds = (performance.now() - from.at) / 1000
      const cpu = process.cpuUsage(from.cpu)
      const count = deliveries - from.deliveries
      console.log(JSON.stringify({ deliveries: count, seconds, rate: count / seconds, cpuShare: (cpu.user + cpu.system) / 1e6 / seconds, total: deliveries }))
      process.exit(0)
    }, Number(durationMs))
  }
  for (let i = 0; i < Number(subscribers); i++) {
    const ws = new WebSocket(url, { perMessageDeflate: false })
    ws.on('message', onMessage)
    ws.on('error', (err) => { console.error(`receiver: ${err.message}`); process.exit(1) })
  }
}
