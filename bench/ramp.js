// npm run bench:ramp — a ramp (--stages 3s:500,3s:2000,3s:0) against our server: for each second
// of the measured phase, the messages the ramp called for (from the schedule itself) beside the
// replies the client counted and that second's p99; then each stage's messages, replies and latency.
// BENCH_STAGES and BENCH_TEST override the ramp and the test.
import { StagedSchedule } from '../lib/load/schedule.js'
import { parseStages } from '../lib/cli/client-options.js'
import { runNodeScript, startServerProcess } from '../lib/processes.js'
import { printRow, startResults } from './support/results.js'

const STAGES = process.env.BENCH_STAGES ?? '3s:500,3s:2000,3s:0'
const TEST = process.env.BENCH_TEST ?? '3'

const results = startResults('ramp', 'npm run bench:ramp')
const server = await startServerProcess([], { cpus: '0' })
let report
try {
  const run = await runNodeScript('client_protobuf.js', [TEST, '--stages', STAGES, '--url', server.url, '--json'], { cpus: '1' })
  if (run.code !== 0) throw new Error(`the client failed: ${run.stderr.trim()}`)
  report = JSON.parse(run.stdout)
} finally {
  await server.stop()
}

const schedule = new StagedSchedule(parseStages(STAGES, 0))
const columns = ['second', 'due (the ramp)', 'acked', 'p99 ms']
const rows = report.timeSeries.map(({ acked, p99 }, s) => {
  const due = schedule.dueBy(Math.min((s + 1) * 1000, schedule.durationMs) - 1e-6) - (s === 0 ? 0 : schedule.dueBy(s * 1000 - 1e-6))
  return [String(s + 1), String(Math.max(0, due)), String(acked), p99.toFixed(3)]
})
console.log(`# bench:ramp — test ${TEST}, protobuf, --stages ${STAGES}`)
printRow(columns)
console.log('|---:|---:|---:|---:|')
for (const row of rows) printRow(row)
const stageRows = report.stages.map(({ fromMs, toMs, fromRate, toRate, messages, replies, latencyMs }) =>
  [`${fromMs / 1000}-${toMs / 1000} s`, `${fromRate} -> ${toRate}/s`, String(messages), String(replies), latencyMs.p50.toFixed(3), latencyMs.p99.toFixed(3)])
for (const row of stageRows) printRow(row)
const { sent, acked, errors, lost } = report.messages
results.write({
  columns,
  rows,
  notes: [
    `test ${TEST} in protobuf, one connection, --stages ${STAGES} (from 0/s), precise pacing; server on CPU 0, client on CPU 1. ` +
    'due: the messages the ramp called for in that second of the measured phase, from the schedule itself; acked: the replies the client counted in it; ' +
    `every message accounted for: sent ${sent}, acked ${acked}, errors ${errors}, lost ${lost}`,
    `Per stage (span, rates, due, replies, p50 ms, p99 ms): ${stageRows.map((row) => row.join(', ')).join('; ')}`
  ]
})
