// npm run bench:arrivals — connections that come and go: BENCH_ARRIVALS (500) new connections a
// second for 10 s, each sending 5 messages request by request and closing, against one server
// process. Every message must be acknowledged; the report's connect times (TCP, upgrade, total) are
// recorded, and the server's open files once it counts no open connection, beside its baseline.
import fs from 'node:fs'
import { runNodeScript, startServerProcess } from '../lib/processes.js'
import { readMetrics } from '../lib/server/metrics-reader.js'
import { printRow, startResults } from './support/results.js'

const ARRIVALS = Number(process.env.BENCH_ARRIVALS ?? 500)
const PER_CONNECTION = 5
const DURATION = '10s'

/** The server's open connections, from its /metrics. */
async function openConnections (url) {
  return (await readMetrics(url)).value('wsbench_open_connections')
}

const results = startResults('arrivals', 'npm run bench:arrivals')
const server = await startServerProcess([], { cpus: '0' })
const files = () => fs.readdirSync(`/proc/${server.child.pid}/fd`).length
let report
let before
let after
try {
  before = files()
  const run = await runNodeScript('client_protobuf.js', ['3', '--arrivals', String(ARRIVALS), '--per-connection', String(PER_CONNECTION),
    '--duration', DURATION, '--url', server.url, '--json'], { cpus: '1' })
  report = JSON.parse(run.stdout)
  for (let tries = 0; await openConnections(server.url) > 0 && tries < 500; tries++);
  after = files()
} finally {
  await server.stop()
}
const { messages: m, arrivals: a, connect: { steps }, latencyMs: l } = report
const columns = ['arrivals/s', 'messages each', 'opened', 'completed', 'could not connect', 'sent/acked/errors/lost',
  'connect p50 µs', 'connect p99 µs', 'tcp p50 µs', 'upgrade p50 µs', 'message p50 ms', 'message p99 ms', 'server files before', 'server files after']
const row = [a.rate, a.perConnection, a.opened, a.completed, a.failed, `${m.sent}/${m.acked}/${m.errors}/${m.lost}`,
  steps.total.p50, steps.total.p99, steps.tcp.p50, steps.upgrade.p50, l.p50, l.p99, before, after].map(String)
printRow(columns)
printRow(row)
results.write({
  columns,
  rows: [row],
  notes: [`test 3 in protobuf, --arrivals ${ARRIVALS} --per-connection ${PER_CONNECTION} --duration ${DURATION} on loopback: each new connection sends its ` +
    'messages one at a time and closes; server (one process) on CPU 0, client on CPU 1. connect: from the attempt to the server\'s 101 (TCP connect, then the ' +
    'upgrade), as the client timed it; server files: /proc/PID/fd of the server before the run and once it counted no open connection after it']
})
