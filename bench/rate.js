// npm run bench:rate — open-loop accuracy: for each target rate, test 5 protobuf for BENCH_SECONDS
// (3) against node server.js with 4 connections: the send rate achieved against the target, and the
// corrected (from the schedule) and uncorrected (from the send) p99. Beyond what this machine can
// do, the report must say the target was missed, and by how much.
import os from 'node:os'
import { runNodeScript as runScript, startServerProcess } from '../lib/processes.js'
import { printRow, startResults } from './results.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)
const RATES = (process.env.BENCH_RATES ?? '1000,5000,20000,50000,150000').split(',').map(Number)

const results = startResults('rate', 'npm run bench:rate')
const columns = ['target msgs/s', 'sent msgs/s', 'met', 'missed by', 'p50 corrected', 'p99 corrected', 'p99 uncorrected']
const rows = []
const server = await startServerProcess()
console.log(`# bench:rate — test 5 protobuf, 4 connections, ${SECONDS} s per rate; ${os.cpus().length} x ${os.cpus()[0].model}, Node ${process.version}`)
printRow(columns)
console.log('|---:|---:|---|---:|---:|---:|---:|')
try {
  for (const rate of RATES) {
    const { stdout } = await runScript('client_protobuf.js', ['5', '--rate', String(rate), '--duration', `${SECONDS}s`, '-c', '4', '--url', server.url, '--json'])
    const r = JSON.parse(stdout)
    rows.push([rate.toLocaleString('en-US'), Math.round(r.target.sendRate).toLocaleString('en-US'), r.target.met ? 'yes' : 'no', `${r.target.missedByPercent}%`, `${r.latencyMs.p50} ms`, `${r.latencyMs.p99} ms`, `${r.uncorrectedLatencyMs.p99} ms`])
    printRow(rows.at(-1))
  }
} finally {
  await server.stop()
}
results.write({
  columns,
  rows,
  notes: [`test 5 protobuf, 4 connections, ${SECONDS} s per target rate (open loop, --rate); corrected latency counts from each message's scheduled time, uncorrected from its actual send`]
})
