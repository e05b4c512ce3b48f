// npm run bench:memory — memory is O(1) in messages: one client sends BENCH_MESSAGES (10,000,000)
// small messages, 100 in flight, to node server.js; both processes' RSS is read from /proc every
// 500 ms (Linux), and the peak printed with the run's report. The target: client peak RSS < 150 MB.
import os from 'node:os'
import { spawn } from 'node:child_process'
import { PROJECT_ROOT as ROOT, startServerProcess } from '../lib/processes.js'
import { printRow, processRssBytes, startResults } from './support/results.js'

const DEFAULT_MESSAGES = 10_000_000
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? DEFAULT_MESSAGES)
const rssMb = (pid) => processRssBytes(pid) / 1024 / 1024

const results = startResults('memory', 'npm run bench:memory')
const server = await startServerProcess()
const client = spawn(process.execPath, ['client_protobuf.js', '5', String(MESSAGES), '--inflight', '100', '--url', server.url, '--json'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
let stdout = ''
client.stdout.on('data', (chunk) => { stdout += chunk })
const samples = []
const sampler = setInterval(() => {
  try {
    samples.push({ s: samples.length / 2, client: rssMb(client.pid), server: rssMb(server.child.pid) })
  } catch {} // the client just exited
}, 500)
await new Promise((resolve) => client.once('exit', resolve))
clearInterval(sampler)
await server.stop()
const report = JSON.parse(stdout)
const peak = (key) => Math.max(...samples.map((sample) => sample[key]))
const at = (fraction) => samples[Math.floor((samples.length - 1) * fraction)]
console.log(`# bench:memory — ${MESSAGES.toLocaleString('en-US')} messages, test 5, protobuf, 100 in flight; ${os.cpus().length} x ${os.cpus()[0].model}, Node ${process.version}`)
console.log(`sent ${report.messages.sent}, acked ${report.messages.acked}, errors ${report.messages.errors}, lost ${report.messages.lost} in ${(report.durationMs / 1000).toFixed(1)} s (${Math.round(report.rate).toLocaleString('en-US')} msgs/s)`)
const columns = ['process', 'RSS at 10%', 'at 50%', 'at 90%', 'peak']
const rows = ['client', 'server'].map((key) => [key, ...[at(0.1)[key], at(0.5)[key], at(0.9)[key], peak(key)].map((mb) => `${mb.toFixed(0)} MB`)])
printRow(columns)
console.log('|---|---:|---:|---:|---:|')
for (const row of rows) printRow(row)
const verdict = `client peak ${peak('client').toFixed(0)} MB: ${peak('client') < 150 ? 'under' : 'OVER'} the 150 MB target (${samples.length} samples)`
console.log(verdict)
results.write({
  columns,
  rows,
  notes: [
    `${MESSAGES.toLocaleString('en-US')} messages${MESSAGES === DEFAULT_MESSAGES ? '' : ` (BENCH_MESSAGES; the default is ${DEFAULT_MESSAGES.toLocaleString('en-US')})`}, test 5, protobuf, 100 in flight, one client and node server.js; RSS read from /proc/<pid>/status every 500 ms`,
    `sent ${report.messages.sent}, acked ${report.messages.acked}, errors ${report.messages.errors}, lost ${report.messages.lost} in ${(report.durationMs / 1000).toFixed(1)} s (${Math.round(report.rate).toLocaleString('en-US')} msgs/s); ${verdict}`
  ]
})
