// npm run bench:engine — our server + client against a bare ws pair, in one run.
// For tests 5 and 3, both formats, 100 in flight: msgs/s of each and the ratio ours/bare.
// Rounds alternate bare and ours so background noise hits both alike; the median is reported.
import os from 'node:os'
import { runNodeScript as runScript, startServerProcess } from '../lib/processes.js'
import { startResults } from './results.js'

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 100000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const INFLIGHT = 100
const CASES = [['5', 'json'], ['5', 'protobuf'], ['3', 'json'], ['3', 'protobuf']]

async function bareRate (test, format) {
  const server = await startServerProcess([], { script: 'bench/bare.js', args: ['server', test, format] })
  try {
    const { stdout } = await runScript('bench/bare.js', ['client', server.url, test, format, String(MESSAGES), String(INFLIGHT)])
    return JSON.parse(stdout).rate
  } finally {
    await server.stop()
  }
}

async function ourRate (test, format) {
  const server = await startServerProcess()
  try {
    const { stdout } = await runScript(`client_${format}.js`, [test, String(MESSAGES), '--inflight', String(INFLIGHT), '--url', server.url, '--json'])
    return JSON.parse(stdout).rate
  } finally {
    await server.stop()
  }
}

const median = (values) => values.slice().sort((a, b) => a - b)[Math.floor(values.length / 2)]

const results = startResults('engine', 'npm run bench:engine')
const columns = ['test', 'format', 'bare msgs/s', 'ours msgs/s', 'ours/bare']
const rows = []
console.log(`# bench:engine — ${MESSAGES} messages, ${INFLIGHT} in flight, median of ${ROUNDS} rounds`)
console.log(`# ${os.cpus().length} x ${os.cpus()[0].model}, Node ${process.version}`)
console.log(`| ${columns.join(' | ')} |`)
console.log('|---|---|---:|---:|---:|')
for (const [test, format] of CASES) {
  const bare = []
  const ours = []
  for (let round = 0; round < ROUNDS; round++) {
    bare.push(await bareRate(test, format))
    ours.push(await ourRate(test, format))
  }
  const a = median(bare)
  const b = median(ours)
  rows.push([test, format, Math.round(a).toLocaleString('en-US'), Math.round(b).toLocaleString('en-US'), (b / a).toFixed(2)])
  console.log(`| ${rows.at(-1).join(' | ')} |`)
}
results.write({
  columns,
  rows,
  notes: [`${MESSAGES.toLocaleString('en-US')} messages per run, ${INFLIGHT} in flight, 1 connection; bare (bench/bare.js) and ours alternate, median of ${ROUNDS} rounds each`]
})
