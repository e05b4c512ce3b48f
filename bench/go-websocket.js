// npm run bench:go-websocket — which websocket library the Go reference server uses, by
// measurement: the same least server (bench/support/go-websocket: read a message, answer ACK, nothing
// decoded) on gorilla/websocket and on coder/websocket, each driven by our protobuf client on test
// 3 (BENCH_MESSAGES, 64 in flight, after a fifth as many of warm-up), the libraries in turn over
// BENCH_ROUNDS rounds. msgs/s from the client; the server's CPU per message from the kernel.
import { spawnSync } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import { CpuClock } from '../lib/cpu-time.js'
import { PROJECT_ROOT, cpuPinning, runNodeScript, startServerProcess } from '../lib/processes.js'
import { printRow, startResults } from './support/results.js'
import { median } from './support/statistics.js'

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 40000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const INFLIGHT = 64
const LIBRARIES = ['gorilla', 'coder']

const binary = path.join(os.tmpdir(), `go-websocket-${process.pid}`)
const build = spawnSync('go', ['build', '-o', binary, '.'], { cwd: path.join(PROJECT_ROOT, 'bench', 'support', 'go-websocket'), encoding: 'utf8' })
if (build.status !== 0) {
  process.stderr.write(`cannot build bench/support/go-websocket: ${build.stderr || build.error?.message}\n`)
  process.exit(2)
}
const cpus = cpuPinning()

/** One client run against a server on `library`: msgs/s, server CPU µs per message, client p50. */
async function measure (library) {
  const server = await startServerProcess([], { command: binary, args: ['-lib', library, '--port', '0'], cpus: cpus?.server })
  try {
    const clock = new CpuClock(server.child.pid)
    const before = clock.read()
    const warmup = Math.ceil(MESSAGES / 5)
    const run = await runNodeScript('client_protobuf.js', ['3', String(MESSAGES), '--url', server.url, '-i', String(INFLIGHT),
      '--warmup', String(warmup), '--json'], { cpus: cpus?.clients })
    const cpuNs = clock.read() - before
    if (run.code !== 0) throw new Error(`the client against ${library} exited with ${run.code}: ${run.stderr.trim()}`)
    const report = JSON.parse(run.stdout)
    return { rate: report.rate, cpuUs: cpuNs / 1000 / (report.messages.acked + warmup), p50: report.latencyMs.p50 }
  } finally {
    await server.stop()
  }
}

const results = startResults('go-websocket', 'npm run bench:go-websocket')
const runs = Object.fromEntries(LIBRARIES.map((library) => [library, []]))
for (let round = 0; round < ROUNDS; round++) {
  // In turn, the first of a round alternating: whichever runs second meets a warmer machine.
  for (const library of round % 2 ? [...LIBRARIES].reverse() : LIBRARIES) runs[library].push(await measure(library))
}
const columns = ['library', 'msgs/s', 'server CPU µs/msg', 'client p50 ms', 'rounds']
const rows = LIBRARIES.map((library) => {
  const all = runs[library]
  return [library === 'gorilla' ? 'gorilla/websocket v1.5.3' : 'coder/websocket v1.8.15', String(Math.round(median(all.map((r) => r.rate)))),
    median(all.map((r) => r.cpuUs)).toFixed(1), median(all.map((r) => r.p50)).toFixed(3), String(ROUNDS)]
})
printRow(columns)
for (const row of rows) printRow(row)
results.write({
  columns,
  rows,
  notes: ['bench/support/go-websocket: one Go server process per run on the library named, reading each message and answering ACK (nothing decoded); ' +
    `client_protobuf.js on test 3, ${MESSAGES} messages after ${Math.ceil(MESSAGES / 5)} of warm-up, ${INFLIGHT} in flight` +
    `${cpus ? `; server on CPU ${cpus.server}, client on CPU ${cpus.clients}` : ''}; medians of ${ROUNDS} rounds, the libraries in turn. ` +
    'server CPU: the server process\'s threads (/proc/PID/task/*/schedstat) around the client run, per message it answered']
})
