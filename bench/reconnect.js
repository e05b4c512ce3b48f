// npm run bench:reconnect — a reconnect storm: BENCH_CONNECTIONS (5000) connections at BENCH_RATE
// (2000) msg/s with --reconnect; once every connection is open and has run 2 s, the server is
// killed (SIGKILL) and started again on the same port BENCH_DOWN_MS (1000) later. The client's
// report says whether every connection came back, how long each was away, how long until all were,
// what was lost, and the most reopenings in any 100 ms window: with full jitter, a share of the
// connections, not all of them at once.
import net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { spawn } from 'node:child_process'
import { PROJECT_ROOT, startServerProcess } from '../lib/processes.js'
import { printRow, startResults } from './results.js'

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 5000)
const RATE = Number(process.env.BENCH_RATE ?? 2000)
const DOWN_MS = Number(process.env.BENCH_DOWN_MS ?? 1000)
const DURATION_S = 12

/** A port free now, for a server that must come back on the same one. */
async function freePort () {
  const server = net.createServer().listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** The server's open connections, from its /metrics (0 while it cannot answer). */
async function openConnections (url) {
  try {
    const text = await (await fetch(`${url.replace('ws:', 'http:')}/metrics`)).text()
    return Number(/^wsbench_open_connections (\d+)/m.exec(text)?.[1] ?? 0)
  } catch {
    return 0
  }
}

const results = startResults('reconnect', 'npm run bench:reconnect')
const port = await freePort()
const args = ['--port', String(port), '--max-connections', String(CONNECTIONS * 2)]
let server = await startServerProcess([], { args, cpus: '0' })
const client = spawn(process.execPath, ['client_protobuf.js', '5', '--connections', String(CONNECTIONS), '--rate', String(RATE),
  '--duration', `${DURATION_S}s`, '--reconnect', '--timeout', '20000', '--url', server.url, '--json'], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
let stdout = ''
client.stdout.setEncoding('utf8').on('data', (chunk) => { stdout += chunk })
const exited = new Promise((resolve) => client.once('close', resolve))
try {
  while (await openConnections(server.url) < CONNECTIONS) await sleep(100)
  await sleep(2000)
  console.log(`# ${CONNECTIONS} connections open: killing the server for ${DOWN_MS} ms`)
  await server.stop('SIGKILL')
  await sleep(DOWN_MS)
  server = await startServerProcess([], { args, cpus: '0' })
  await exited
} finally {
  client.kill()
  await server.stop()
}

const report = JSON.parse(stdout)
const { messages: m, reconnects: r } = report
const columns = ['connections', 'server down ms', 'came back', 'away p50 ms', 'away p99 ms', 'all back ms', 'lost at the drops',
  'sent/acked/errors/lost', 'most in 100 ms', 'share of the connections']
const row = [CONNECTIONS, DOWN_MS, r.count, r.awayMs.p50, r.awayMs.p99, r.allBackMs, r.lost, `${m.sent}/${m.acked}/${m.errors}/${m.lost}`,
  r.peakPer100ms, `${(r.peakPer100ms / CONNECTIONS * 100).toFixed(1)}%`].map(String)
printRow(columns)
printRow(row)
results.write({
  columns,
  rows: [row],
  notes: [`test 5 in protobuf, ${CONNECTIONS} connections at ${RATE} msg/s for ${DURATION_S} s with --reconnect (backoff: full jitter, base ` +
    `${r.backoff.baseMs} ms, cap ${r.backoff.capMs} ms); the server (one process, CPU 0) killed with SIGKILL once every connection had run 2 s, ` +
    `started again on the same port ${DOWN_MS} ms later. away: from a connection's drop to its new connection; all back: from the first drop ` +
    'until every connection was open again; most in 100 ms: the reopenings in the busiest 100 ms window of the epoch']
})
