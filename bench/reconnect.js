// npm run bench:reconnect — a reconnect storm, BENCH_RUNS (5) times: BENCH_CONNECTIONS (5000)
// connections at BENCH_RATE (2000) msg/s with --reconnect; once every connection is open and has
// run 2 s, the server is killed (SIGKILL) and started again on the same port BENCH_DOWN_MS (1000)
// later. Per storm: whether every connection came back, how long each was away, how long until all
// were, what was lost, how many attempts the dead server refused, and the busiest 100 ms, by when
// the client saw the connections open and by when the restarted server accepted them (its /metrics),
// beside what the backoff alone would give: with full jitter, a share of the connections, not all
// of them at once.
import net from 'node:net'
import os from 'node:os'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { spawn } from 'node:child_process'
import { PROJECT_ROOT, startServerProcess } from '../lib/processes.js'
import { Reconnects } from '../lib/load/reconnects.js'
import { BUCKET_MS, busiestWindow } from '../lib/report/report.js'
import { readMetrics } from '../lib/server/metrics-reader.js'
import { printRow, startResults } from './support/results.js'

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 5000)
const RATE = Number(process.env.BENCH_RATE ?? 2000)
const DOWN_MS = Number(process.env.BENCH_DOWN_MS ?? 1000)
const RUNS = Number(process.env.BENCH_RUNS ?? 5)
const DURATION_S = 12

/** A port free now, for a server that must come back on the same one. */
async function freePort () {
  const server = net.createServer().listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** One figure of the server's /metrics (0 while it cannot answer). */
async function metric (url, name) {
  try {
    return (await readMetrics(url)).value(name) ?? 0
  } catch {
    return 0
  }
}

/**
 * The storm as the backoff alone would make it: every connection dropped at `droppedAt` (epoch ms)
 * and making each attempt on time (Reconnects#delay), those before `backMs` later refused.
 * @returns {{refused: number, peak: number}} the attempts refused, and the most in any 100 ms (sliding at 10 ms)
 */
function backoffAlone (backoff, droppedAt, backMs) {
  const reconnects = new Reconnects(backoff)
  const buckets = {}
  let refused = 0
  for (let i = 0; i < CONNECTIONS; i++) {
    let at = reconnects.delay(0)
    for (let attempt = 1; at < backMs; attempt++, refused++) at += reconnects.delay(attempt)
    const bucket = Math.floor((droppedAt + at) / BUCKET_MS)
    buckets[bucket] = (buckets[bucket] ?? 0) + 1
  }
  return { refused, peak: busiestWindow(buckets) }
}

const share = (count) => `${count} (${(count / CONNECTIONS * 100).toFixed(1)}%)`

/**
 * One storm: the client's report, the restarted server's busiest 100 ms, and when it went and came
 * back; null when the client could not open its connections in the first place (its error above).
 */
async function storm () {
  const port = await freePort()
  const args = ['--port', String(port), '--max-connections', String(CONNECTIONS * 2)]
  let server = await startServerProcess([], { args, cpus: '0' })
  const client = spawn(process.execPath, ['client_protobuf.js', '5', '--connections', String(CONNECTIONS), '--rate', String(RATE),
    '--duration', `${DURATION_S}s`, '--reconnect', '--timeout', '20000', '--url', server.url, '--json'], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
  let stdout = ''
  client.stdout.setEncoding('utf8').on('data', (chunk) => { stdout += chunk })
  const exited = new Promise((resolve) => client.once('close', resolve))
  const running = () => client.exitCode === null && client.signalCode === null
  try {
    while (running() && await metric(server.url, 'wsbench_open_connections') < CONNECTIONS) await sleep(100)
    if (!running()) return null
    await sleep(2000)
    const loadAverage = os.loadavg()[0].toFixed(2)
    console.log(`# ${CONNECTIONS} connections open, load average ${loadAverage}: killing the server for ${DOWN_MS} ms`)
    const killedAt = performance.now()
    const droppedAt = Date.now()
    await server.stop('SIGKILL')
    await sleep(DOWN_MS)
    server = await startServerProcess([], { args, cpus: '0' })
    const backMs = performance.now() - killedAt
    await exited
    // The restarted server accepted reconnections only.
    const accepted = await metric(server.url, 'wsbench_peak_connections_per_100ms')
    return { report: JSON.parse(stdout), accepted, loadAverage, backMs, droppedAt }
  } finally {
    client.kill()
    await server.stop()
  }
}

const results = startResults('reconnect', 'npm run bench:reconnect')
const columns = ['run', 'load average', 'server back after ms', 'came back', 'away p50 ms', 'away p99 ms', 'all back ms', 'lost at the drops',
  'sent/acked/errors/lost', 'attempts refused (the backoff alone)', 'attempts late p50/p99 ms', 'busiest 100 ms: client saw open',
  'busiest 100 ms: server accepted', 'busiest 100 ms: the backoff alone']
printRow(columns)
const rows = []
let backoff
// Opening 5,000 connections at once can fail on a busy machine (ECONNRESET): that storm starts
// again, and the notes say how often; the storm measured is the reconnection, not the first opening.
let startedAgain = 0
for (let run = 1; run <= RUNS;) {
  const storming = await storm()
  if (!storming) {
    if (++startedAgain > RUNS) throw new Error(`the client could not open its ${CONNECTIONS} connections ${startedAgain} times`)
    console.log(`# the client could not open its ${CONNECTIONS} connections: starting that storm again`)
    continue
  }
  const { report, accepted, loadAverage, backMs, droppedAt } = storming
  const { messages: m, reconnects: r, connect } = report
  backoff = r.backoff
  const alone = backoffAlone(backoff, droppedAt, backMs)
  // Connections still away when the run ended never finished the outage.
  const allBack = r.count < CONNECTIONS ? 'not all' : r.allBackMs
  const row = [run, loadAverage, Math.round(backMs), r.count, r.awayMs.p50, r.awayMs.p99, allBack, r.lost, `${m.sent}/${m.acked}/${m.errors}/${m.lost}`,
    `${connect.failures.refused ?? 0} (${alone.refused})`, `${Math.round(r.lateMs.p50)}/${Math.round(r.lateMs.p99)}`,
    share(r.peakPer100ms), share(accepted), share(alone.peak)].map(String)
  printRow(row)
  rows.push(row)
  run++
}
results.write({
  columns,
  rows,
  notes: [`test 5 in protobuf, ${CONNECTIONS} connections at ${RATE} msg/s for ${DURATION_S} s with --reconnect (backoff: full jitter, base ` +
    `${backoff.baseMs} ms, cap ${backoff.capMs} ms); the server (one process, CPU 0) killed with SIGKILL once every connection had run 2 s, ` +
    `started again on the same port ${DOWN_MS} ms later, ${RUNS} times. load average: the machine's when the server was killed; server back after: ` +
    'from the kill until the new server listened; away: from a connection\'s drop to its new connection; all back: from the first drop ' +
    'until every connection was open again; attempts refused: reconnection attempts made while no server listened (in brackets: as many as ' +
    'the backoff alone would make); attempts late: how long after its backoff ended each attempt started (the client\'s own pace); ' +
    'busiest 100 ms: the most ' +
    'reconnections in any 100 ms, a window sliding at 10 ms (and their share of the connections), by when the client saw them open, by when the ' +
    'restarted server accepted them (its wsbench_peak_connections_per_100ms), and as the backoff alone would spread them (every connection ' +
    'dropped at the kill and making each attempt on time, those before the server was back refused)' +
    (startedAgain > 0 ? `; ${startedAgain} storms started again, their client unable to open its connections in the first place` : '')]
})
