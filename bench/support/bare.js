// The bare pair the engine benchmark measures against: the least code that does the same job.
//   node bench/support/bare.js server <test> <format> [<cert> <key>]          prints "listening on ws[s]://..."
//   node bench/support/bare.js client <url> <test> <format> <n> <inflight> [<ca>]   prints msgs/s
// The server decodes and replies ACK; the client encodes each message and keeps its send time.
// With a certificate and key the server speaks TLS (wss://), and the client trusts <ca>.
import fs from 'node:fs'
import https from 'node:https'
import { performance } from 'node:perf_hooks'
import WebSocket, { WebSocketServer } from 'ws'
import { createCodec } from '../../lib/codecs/registry.js'
import { loadPayload, resolveTest } from '../../lib/payloads/catalog.js'

const [role, ...args] = process.argv.slice(2)

if (role === 'server') {
  const codec = await createCodec(args[1], resolveTest(args[0]))
  const [cert, key] = args.slice(2).map((file) => fs.readFileSync(file))
  const server = cert ? https.createServer({ cert, key }) : null
  const wss = new WebSocketServer({ ...(server ? { server } : { host: '127.0.0.1', port: 0 }), perMessageDeflate: false, maxPayload: 64 * 1024 * 1024 })
  const listening = (port) => console.log(`listening on ${server ? 'wss' : 'ws'}://127.0.0.1:${port}`)
  if (server) server.listen(0, '127.0.0.1', () => listening(server.address().port))
  else wss.on('listening', () => listening(wss.address().port))
  wss.on('connection', (ws) => ws.on('message', (data) => { codec.decode(data); ws.send('ACK') }))
  process.on('SIGTERM', () => process.exit(0))
} else {
  const [url, testName, format, n, inflight, ca] = args
  const test = resolveTest(testName)
  const codec = await createCodec(format, test)
  const native = codec.prepare(loadPayload(test))
  const total = Number(n)
  const sendTimes = new Float64Array(total)
  const ws = new WebSocket(`${url}/?test=${test.name}&format=${format}`, { perMessageDeflate: false, ...(ca && { ca: fs.readFileSync(ca) }) })
  let sent = 0
  let acked = 0
  let startedAt
  const sendOne = () => { sendTimes[sent++] = performance.now(); ws.send(codec.encode(native), { binary: codec.binary }) }
  ws.on('open', () => {
    startedAt = performance.now()
    while (sent < Math.min(total, Number(inflight))) sendOne()
  })
  ws.on('message', () => {
    acked++
    if (sent < total) sendOne()
    else if (acked === total) {
      const seconds = (performance.now() - startedAt) / 1000
      console.log(JSON.stringify({ rate: total / seconds }))
      ws.close()
    }
  })
}
