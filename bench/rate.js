// npm run bench:rate — open-loop accuracy and what it costs: for each target rate and pacing, test 3
// protobuf for BENCH_SECONDS (4) against node server.js with 8 connections: the send rate achieved,
// the send lag (due time to send), the corrected latency's p50 against the uncorrected one's (the
// generator's own lateness between them), the client's CPU, the part of it its pacing spent
// (cpu.pacingUs) and its excess over timer pacing at the same rate. Precise pacing's other windows
// at the low rates are the trade-off its default was chosen from. Then a stall: the server stopped (SIGSTOP) for
// 500 ms at 1000/s, which the corrected p99 must still charge in full. Beside them, the machine's
// own floor: how often a thread that only reads the clock is kept off its CPU for over 200 µs, and
// how late a sleeping thread wakes, at normal and at real-time priority. Realtime pacing runs where
// real-time priority is permitted.
// A send lag's p99 moves from one run to the next with the machine's scheduling: each rate and
// pacing runs BENCH_RUNS (3) times, and the table shows the run with the median p99 and the range.
import os from 'node:os'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { runNodeScript as runScript, startServerProcess } from '../lib/processes.js'
import { printRow, startResults } from './support/results.js'
import { realtimeRefusal } from '../lib/load/realtime.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const RATES = (process.env.BENCH_RATES ?? '1000,5000,20000,50000').split(',').map(Number)
/**
 * Every rate runs these; the first is the default. Timer is what the others' CPU is held against.
 * Realtime only where real-time priority is permitted (root or CAP_SYS_NICE).
 */
const PACINGS = ['precise', ...(realtimeRefusal() === null ? ['realtime'] : []), 'spin', 'timer']
/** Precise pacing's other windows (µs), at these rates: the trade-off its default was chosen from. */
const WINDOWS = [0, 100, 200, 500]
const WINDOW_RATES = [1000, 5000]
const CONNECTIONS = 8
const STALL_MS = 500

/** A thread that only reads the clock for 2 s: how often per second it was kept off its CPU over 200 µs and 1 ms. */
const CLOCK_PROBE = `
const { performance } = require('node:perf_hooks')
const end = performance.now() + 2000
let last = performance.now(); let over200 = 0; let over1000 = 0
while (last < end) { const now = performance.now(); const gap = now - last; if (gap > 0.2) over200++; if (gap > 1) over1000++; last = now }
console.log(\`a thread that only reads the clock was kept off its CPU over 200 µs \${over200 / 2} times a second, over 1 ms \${over1000 / 2}\`)
`

/**
 * A thread that sleeps 1 ms at a time (Atomics.wait, as the pacing thread does) for 3 s: how late
 * it wakes. Run beside a client at 1000/s: a sleeping pacer's floor on this machine, which no
 * window covers at its budget.
 */
const SLEEP_PROBE = `
const { performance } = require('node:perf_hooks')
const word = new Int32Array(new SharedArrayBuffer(4)); const lates = []; const end = performance.now() + 3000
while (performance.now() < end) { const t = performance.now(); Atomics.wait(word, 0, 0, 1); lates.push(performance.now() - t - 1) }
lates.sort((a, b) => a - b); const q = (f) => Math.round(lates[Math.floor(f * (lates.length - 1))] * 1000)
console.log(\`a thread sleeping 1 ms at a time beside a client at 1000/s woke late by p50 \${q(0.5)} µs, p99 \${q(0.99)} µs, p99.9 \${q(0.999)} µs, over 1 ms \${(lates.filter((l) => l > 1).length / 3).toFixed(1)} times a second\`)
`

/**
 * The same sleeper at real-time priority (SCHED_FIFO through chrt, where permitted: root or
 * CAP_SYS_NICE), beside the same load: late wake-ups that vanish there are the scheduler's, which
 * a load generator cannot take for its sending thread without preempting the server it measures.
 * @returns {Promise<string>}
 */
async function realtimeSleeper () {
  const run = await promisify(execFile)('chrt', ['-f', '1', process.execPath, '-e', SLEEP_PROBE]).catch(() => null)
  return run ? run.stdout.trim().replace(/^a thread sleeping 1 ms at a time/, 'the same thread at real-time priority (SCHED_FIFO)') : 'real-time priority not permitted here'
}

const results = startResults('rate', 'npm run bench:rate')
const columns = ['target msgs/s', 'pacing', 'sent msgs/s', 'send lag p50', 'send lag p99', `send lag p99 over ${RUNS} runs`, 'corrected - uncorrected p50',
  'p50 corrected', 'p99 corrected', 'client CPU', 'pacing CPU', 'CPU vs timer', 'saturated']
const rows = []
const server = await startServerProcess()
console.log(`# bench:rate — test 3 protobuf, ${CONNECTIONS} connections, ${SECONDS} s per rate; ${os.cpus().length} x ${os.cpus()[0].model}, Node ${process.version}`)
printRow(columns)
console.log(`|${columns.map((_, i) => i === 1 || i === columns.length - 1 ? '---' : '---:').join('|')}|`)
let stall
let floor
try {
  for (const rate of RATES) {
    // Timer first: the others' CPU is held against it. Each pacing's runs alternate with the others'.
    const pacings = ['timer', ...PACINGS.filter((p) => p !== 'timer'), ...(WINDOW_RATES.includes(rate) ? WINDOWS.map((w) => `precise:${w}`) : [])]
    const runs = new Map(pacings.map((pacing) => [pacing, []]))
    for (let run = 0; run < RUNS; run++) {
      for (const pacing of pacings) runs.get(pacing).push(await client(rate, pacing, SECONDS))
    }
    const timerCpu = medianRun(runs.get('timer')).generator.cpuShare
    for (const pacing of [...PACINGS, ...pacings.filter((p) => !PACINGS.includes(p))]) {
      rows.push(row(rate, pacing, runs.get(pacing), timerCpu))
      printRow(rows.at(-1))
    }
  }
  // The stall: stopped after the first second of a 3 s run at 1000/s, for STALL_MS.
  const running = client(1000, PACINGS[0], 3)
  await sleep(1000)
  process.kill(server.child.pid, 'SIGSTOP')
  await sleep(STALL_MS)
  process.kill(server.child.pid, 'SIGCONT')
  stall = await running
  console.log(`\nstall: server stopped ${STALL_MS} ms at 1000/s: corrected p99 ${stall.latencyMs.p99} ms, uncorrected p99 ${stall.uncorrectedLatencyMs.p99} ms, every message accounted: ${accounted(stall)}`)
  const [sleeper] = await Promise.all([runScript('-e', [SLEEP_PROBE]), client(1000, 'timer', 3)])
  const [realtime] = await Promise.all([realtimeSleeper(), client(1000, 'timer', 3)])
  floor = `${(await runScript('-e', [CLOCK_PROBE])).stdout.trim()}; ${sleeper.stdout.trim()}; ${realtime}`
  console.log(`machine floor: ${floor}`)
} finally {
  await server.stop()
}
results.write({
  columns,
  rows,
  notes: [
    `test 3 protobuf, ${CONNECTIONS} connections, ${SECONDS} s per target rate (open loop, --rate), ${RUNS} runs of each (the pacings taking turns), the one with the median send lag p99 shown; ` +
      `--pacing ${PACINGS.join(', ')} at every rate, and precise pacing's other windows (${WINDOWS.map((w) => `precise:${w}`).join(', ')}) at ${WINDOW_RATES.join(' and ')}/s. ` +
      'Send lag: from each message\'s due time to its send. Corrected latency counts from the due time, uncorrected from the actual send: the difference of their p50s is the generator\'s own lateness. ' +
      'Client CPU: the client process, all its threads, per wall time; pacing CPU: the part of it the pacing spent (its thread and its waiting turns, cpu.pacingUs); CPU vs timer: client CPU over timer pacing\'s median run at the same rate.',
    `Stall: the server stopped (SIGSTOP) for ${STALL_MS} ms one second into 3 s at 1000/s: corrected p99 ${stall.latencyMs.p99} ms, uncorrected p99 ${stall.uncorrectedLatencyMs.p99} ms; every message accounted: ${accounted(stall)}.`,
    `Machine floor: ${floor}.`
  ]
})

/** The run with the median send lag p99. */
function medianRun (runs) {
  return runs.toSorted((a, b) => a.sendLagMs.p99 - b.sendLagMs.p99)[Math.floor((runs.length - 1) / 2)]
}

/** A table row: a pacing's median run at a rate, with the range of its runs and its CPU against timer pacing's. */
function row (rate, pacing, runs, timerCpu) {
  const r = medianRun(runs)
  const lags = runs.map((run) => run.sendLagMs.p99)
  const gap = r.latencyMs.p50 - r.uncorrectedLatencyMs.p50
  const excess = r.generator.cpuShare - timerCpu
  return [rate.toLocaleString('en-US'), pacing, Math.round(r.target.sendRate).toLocaleString('en-US'),
    microseconds(r.sendLagMs.p50), microseconds(r.sendLagMs.p99), `${microseconds(Math.min(...lags))} to ${microseconds(Math.max(...lags))}`,
    `${gap >= 0 ? '+' : ''}${gap.toFixed(3)} ms`, `${r.latencyMs.p50} ms`, `${r.latencyMs.p99} ms`, `${r.generator.cpuShare} cores`,
    `${(r.cpu.pacingUs / 1000 / r.durationMs).toFixed(2)} cores`,
    pacing === 'timer' ? '' : `${excess >= 0 ? '+' : ''}${excess.toFixed(2)} cores, ${(r.generator.cpuShare / timerCpu).toFixed(2)}x`,
    r.generator.saturated ? 'yes' : 'no']
}

/** One client run, its --json report. */
async function client (rate, pacing, seconds) {
  const { stdout, stderr, code } = await runScript('client_protobuf.js', ['3', '--rate', String(rate), '--duration', `${seconds}s`,
    '-c', String(CONNECTIONS), '--pacing', pacing, '--url', server.url, '--json'])
  if (code !== 0 && !stdout) throw new Error(`client at ${rate}/s (${pacing}) failed: ${stderr.trim()}`)
  return JSON.parse(stdout)
}

function microseconds (msValue) {
  return `${Math.round(msValue * 1000)} µs`
}

function accounted ({ messages: m }) {
  return m.sent === m.acked + m.errors + m.lost ? 'yes' : 'NO'
}
