// A bulk TCP transfer, the unit of the shaping cross-check (bench/shaping-check.js):
//   node bench/support/bulk.js sink <host> <port> <bytes>     accepts one connection, answers one byte once <bytes> arrived
//   node bench/support/bulk.js send <host> <port> <bytes>     sends <bytes>, prints {"bytes", "ms"} once the sink answered
import net from 'node:net'
import { performance } from 'node:perf_hooks'

const [role, host, port, total] = process.argv.slice(2)
const bytes = Number(total)

if (role === 'sink') {
  const server = net.createServer((socket) => {
    let received = 0
    socket.on('data', (chunk) => {
      received += chunk.length
      if (received >= bytes) socket.end('k')
    })
  })
  server.listen(Number(port), host, () => console.log(`listening on tcp://${host}:${server.address().port}`))
  process.on('SIGTERM', () => process.exit(0))
} else {
  const socket = net.connect(Number(port), host)
  const chunk = Buffer.alloc(64 * 1024, 120)
  let sent = 0
  let startedAt
  const pump = () => {
    while (sent < bytes) {
      const size = Math.min(chunk.length, bytes - sent)
      sent += size
      if (!socket.write(size === chunk.length ? chunk : chunk.subarray(0, size))) return socket.once('drain', pump)
    }
  }
  socket.on('connect', () => { startedAt = performance.now(); pump() })
  socket.on('data', () => {
    console.log(JSON.stringify({ bytes, ms: performance.now() - startedAt }))
    socket.destroy()
  })
}
