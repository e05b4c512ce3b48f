// npm run bench:workers — --workers 2 against 1 on the same machine, same total load (test 3,
// 4 connections, 100 in flight each), alternating rounds, median of BENCH_ROUNDS (3). The server
// runs on the same 2 cores, so this measures what a second client thread buys when it competes
// with the server for CPU, not a dedicated load-generator host.
import os from 'node:os'
import { runNodeScript as runScript, startServerProcess } from '../lib/processes.js'
import { printRow, startResults } from './support/results.js'
import { median } from './support/statistics.js'

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 300_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)

const results = startResults('workers', 'npm run bench:workers')
const server = await startServerProcess()
const rates = { 1: [], 2: [] }
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const workers of [1, 2]) {
      const { code, stdout, stderr } = await runScript('client_protobuf.js', ['3', String(MESSAGES), '-c', '4', '-i', '100', '--workers', String(workers), '--url', server.url, '--json'])
      // A failed run is not a measurement: it must not enter the median as 0 msgs/s.
      if (code !== 0) throw new Error(`client with --workers ${workers} exited with ${code}: ${stderr.trim().split('\n').pop()}`)
      rates[workers].push(JSON.parse(stdout).rate)
    }
  }
} finally {
  await server.stop()
}
console.log(`# bench:workers — test 3 protobuf, ${MESSAGES.toLocaleString('en-US')} messages, 4 connections x 100 in flight, median of ${ROUNDS}; ${os.cpus().length} x ${os.cpus()[0].model}, Node ${process.version}`)
const columns = ['workers', 'msgs/s (median)', 'rounds']
const rows = [1, 2].map((workers) => [workers, Math.round(median(rates[workers])).toLocaleString('en-US'), rates[workers].map(Math.round).join(', ')])
printRow(columns)
console.log('|---:|---:|---|')
for (const row of rows) printRow(row)
const ratio = `2 workers / 1 worker: ${(median(rates[2]) / median(rates[1])).toFixed(2)}`
console.log(ratio)
results.write({
  columns,
  rows,
  notes: [`test 3 protobuf, ${MESSAGES.toLocaleString('en-US')} messages, 4 connections x 100 in flight, --workers 1 and 2 alternating, median of ${ROUNDS}; ` +
    `client and server share the machine's cores. ${ratio}`]
})
