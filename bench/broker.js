// npm run bench:broker — which broker carries a fan-out between server processes: the cluster's
// primary over node:cluster IPC (ipc), Redis pub/sub or NATS. This process is a node:cluster primary
// (relaying as a --processes server's does, for ipc) with BENCH_PEERS (3) worker processes
// (bench/support/broker-peer.js): one publishes test-3 frames (JSON and protobuf in turn, 0.3-1.2 KB), the
// others receive every one, in order. Throughput: BENCH_FRAMES (30,000) published flat out, frames/s
// until the last receiver has them all. Latency: BENCH_RATE (5,000) frames/s for BENCH_SECONDS (3),
// open loop, from the time each frame was due to its arrival at each receiver. CPU per frame of the
// publisher, the relay (the primary, or the broker's server) and a receiver. Then the real thing:
// node server.js --processes 2 --broker <each> (and one process without a broker, for reference)
// under the fan-out client, BENCH_FANOUT_SUBSCRIBERS (20) subscribers and one publisher at
// BENCH_FANOUT_RATE (500) publishes/s for BENCH_FANOUT_SECONDS (5): delivery latency and CPU per
// delivery. The brokers take turns, BENCH_ROUNDS (3) rounds, medians; every process shares the
// machine's cores. Writes docs/results/broker.json and broker-fanout.json.
import cluster from 'node:cluster'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { addHistograms, summarizeLatency } from '../lib/histogram.js'
import { runNodeScript, startServerProcess } from '../lib/processes.js'
import { RELAY, relayFrames, TAG } from '../lib/server/cluster-ipc.js'
import { UsageError, runMain } from '../lib/errors.js'
import { BROKERS as KNOWN_BROKERS } from '../lib/server/broker.js'
import { startBrokerProcess } from '../lib/server/broker-process.js'
import { readMetrics } from '../lib/server/metrics-reader.js'
import { printRow, processCpuUs, startResults } from './support/results.js'
import { median } from './support/statistics.js'

const BROKERS = (process.env.BENCH_BROKERS ?? 'ipc,redis,nats').split(',')
const PEERS = Number(process.env.BENCH_PEERS ?? 3)
const FRAMES = Number(process.env.BENCH_FRAMES ?? 30_000)
const WARMUP = Math.min(FRAMES, 5000)
const RATE = Number(process.env.BENCH_RATE ?? 5000)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const FANOUT_SUBSCRIBERS = Number(process.env.BENCH_FANOUT_SUBSCRIBERS ?? 20)
const FANOUT_RATE = Number(process.env.BENCH_FANOUT_RATE ?? 500)
const FANOUT_SECONDS = Number(process.env.BENCH_FANOUT_SECONDS ?? 5)
/**
 * The fan-out client's --heartbeat: its default (500 ms) takes a subscriber silent for 1 s for gone;
 * on a shared 2-core machine a stall that long happens, and the reconnect would lose deliveries.
 */
const HEARTBEAT = '5s'
/** The client waits this long after its END for deliveries still on their way (its default, 10 s, is all idle time here). */
const TIMEOUT_MS = '3000'
/** The fan-out runs: one process needs no broker (the reference), two go through each. */
const ONE_PROCESS = 'none, one process'
const SERVERS = [ONE_PROCESS, ...BROKERS]
/** Longest wait for a phase's frames beyond its own length: a broker that loses frames fails the run. */
const GRACE_MS = 30_000

async function main () {
  for (const name of BROKERS) {
    if (!KNOWN_BROKERS.includes(name)) throw new UsageError(`BENCH_BROKERS: unknown broker '${name}': expected some of ${KNOWN_BROKERS.join(', ')}`)
  }
  if (PEERS < 2) throw new UsageError(`BENCH_PEERS must be at least 2 (a publisher and a receiver), got ${PEERS}`)
  const relayResults = startResults('broker', 'npm run bench:broker')
  cluster.setupPrimary({ exec: fileURLToPath(new URL('./support/broker-peer.js', import.meta.url)), serialization: 'advanced' })
  const relays = await inRounds(BROKERS, measureRelay, 'frames/s (frames/s)')
  const cores = os.cpus().length
  print(`bench:broker — relay between ${PEERS} processes (1 publisher, ${PEERS - 1} receivers); ${cores} x ${os.cpus()[0].model}, Node ${process.version}`, relays)
  relayResults.write({
    ...relays,
    notes: [
      `${PEERS} node:cluster worker processes connected to the broker as server processes are (lib/server/broker.js): one publishes, ${PEERS - 1} receive every frame, in order (checked); ` +
      `test-3 messages, JSON (text) and protobuf (binary) in turn, 0.3-1.2 KB; flat out: ${FRAMES.toLocaleString('en-US')} frames after ${WARMUP.toLocaleString('en-US')} of warm-up, until the last receiver has them all; ` +
      `latency: ${RATE.toLocaleString('en-US')} frames/s for ${SECONDS} s, open loop, from each frame's due time to its arrival, over every receiver; ` +
      'CPU per frame published: the publisher\'s, the relay\'s (ipc: the primary process; redis, nats: the broker\'s server) and one receiver\'s, in the latency phase; ' +
      `medians of ${ROUNDS} rounds, the brokers in turn; brokers started by startBrokerProcess (lib/server/broker-process.js); every process shares the machine's ${cores} cores; ${loadAtEnd()}`
    ],
    figures: figures(relays, { throughput: 'frames/s', p99: 'p99', 'relay-cpu': 'relay CPU/frame', 'publisher-cpu': 'publisher CPU/frame' })
  })
  const fanoutResults = startResults('broker-fanout', 'npm run bench:broker')
  const fanouts = await inRounds(SERVERS, measureFanout, 'p99 (ms)')
  print(`bench:broker — fan-out through node server.js, ${FANOUT_SUBSCRIBERS} subscribers, ${FANOUT_RATE} publishes/s`, fanouts)
  fanoutResults.write({
    ...fanouts,
    notes: [
      `node server.js --processes 2 --broker <broker> (one process: node server.js alone, no broker needed) and node client_json.js 3 --direction fanout -c ${FANOUT_SUBSCRIBERS} ` +
      `--rate ${FANOUT_RATE} --duration ${FANOUT_SECONDS}s -w ${FANOUT_RATE} --heartbeat ${HEARTBEAT} --timeout ${TIMEOUT_MS}: one publisher, ${FANOUT_SUBSCRIBERS} subscribers spread over the workers by the kernel, every delivery accounted for (none lost, duplicated or reordered: checked); ` +
      'latency from each publish\'s scheduled time to its delivery, spread: first to last subscriber of a publish; CPU per delivery: every server process (primary included, from /metrics) and the broker\'s server (/proc), warm-up included; ' +
      `medians of ${ROUNDS} rounds, in turn; the client, server and broker share the machine's ${cores} cores; ${loadAtEnd()}`
    ],
    figures: figures(fanouts, { 'server-cpu': 'server CPU/delivery', 'broker-cpu': 'broker CPU/delivery' })
  })
}

/**
 * Runs `measure` for each name, ROUNDS times, each round in another order (no name always runs on a
 * machine warmed by the one before): a table of the medians, and of each round's `key` figure.
 */
async function inRounds (names, measure, key) {
  const runs = Object.fromEntries(names.map((name) => [name, []]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of names.map((_, i) => names[(i + round) % names.length])) {
      process.stderr.write(`round ${round + 1}/${ROUNDS}: ${measure.name} ${name}\n`)
      runs[name].push(await measure(name))
    }
  }
  const columns = Object.keys(runs[names[0]][0])
  const label = (column) => column.replace(/ \(.*\)$/, '')
  // A figure a broker has none of (null: ipc has no broker process) stays empty.
  const medianOf = (values) => values.includes(null) ? null : median(values)
  return {
    columns: ['broker', ...columns.map(label), `rounds (${label(key)})`],
    rows: names.map((name) => [name, ...columns.map((column) => shown(column, medianOf(runs[name].map((run) => run[column])))),
      runs[name].map((run) => shown(key, run[key])).join(', ')])
  }
}

/** A figure as its column shows it, with the unit in brackets at the end of the column's name (frames/s, ms, µs); null: none. */
function shown (column, value) {
  const unit = /\((.*)\)$/.exec(column)[1]
  if (value === null) return '-'
  if (unit === 'ms') return `${value} ms`
  if (unit === 'µs') return `${value.toFixed(1)} µs`
  return Math.round(value).toLocaleString('en-US')
}

/** The load average when a part ends, beside the one at its start: a busy neighbour shows in either. */
function loadAtEnd () {
  return `load average ${Math.round(os.loadavg()[0] * 100) / 100} at the end`
}

/** Single figures the docs quote (<!-- figure:broker.NAME-KEY -->): each row's cell of each column named. */
function figures ({ columns, rows }, named) {
  return Object.fromEntries(rows.flatMap((row) => Object.entries(named)
    .map(([key, column]) => [`${row[0].replace(/\W+/g, '-')}-${key}`, row[columns.indexOf(column)]])))
}

function print (title, { columns, rows }) {
  console.log(`# ${title}`)
  printRow(columns)
  console.log(`|---|${columns.slice(1, -1).map(() => '---:').join('|')}|---|`)
  for (const row of rows) printRow(row)
}

/** One round of one broker between bench processes: its processes started, the two phases, everything stopped. */
async function measureRelay (name) {
  const broker = name === 'ipc' ? null : await startBrokerProcess(name)
  const url = broker?.url ?? 'ipc'
  const peers = Array.from({ length: PEERS }, () => cluster.fork({ BENCH_BROKER_URL: url }))
  const inbox = new Map(peers.map((peer) => [peer, []]))
  let failure
  const failed = new Promise((resolve, reject) => { failure = reject })
  for (const peer of peers) {
    peer.on('message', (message) => {
      if (message?.[TAG] === RELAY) return relayFrames(peer, message, peers)
      if (message?.bench === 'failed') return failure(new Error(`${name}: ${message.reason}`))
      const waiter = inbox.get(peer).shift()
      waiter?.(message)
    })
    peer.on('exit', (code) => failure(new Error(`${name}: a peer process exited with ${code}`)))
  }
  const next = (peer) => Promise.race([new Promise((resolve) => inbox.get(peer).push(resolve)), failed])
  const relayCpu = broker ? () => processCpuUs(broker.process.pid) : () => { const { user, system } = process.cpuUsage(); return user + system }
  try {
    await Promise.all(peers.map(next))
    const [publisher, ...receivers] = peers
    const phase = async (count, command) => {
      const relayBefore = relayCpu()
      const ready = receivers.map(next)
      for (const receiver of receivers) receiver.send({ bench: 'expect', count, timeoutMs: GRACE_MS + count / RATE * 1000 })
      await Promise.all(ready)
      const arrivals = receivers.map(next)
      const sent = next(publisher)
      publisher.send({ ...command, count })
      const [published, ...received] = await Promise.all([sent, ...arrivals])
      for (const report of received) {
        if (report.received !== count || report.outOfOrder > 0) {
          throw new Error(`${name}: a receiver got ${report.received} of ${count} frames, ${report.outOfOrder} out of order`)
        }
      }
      return { published, received, relayUs: (relayCpu() - relayBefore) / count }
    }
    await phase(WARMUP, { bench: 'burst' })
    const flat = await phase(FRAMES, { bench: 'burst' })
    const lastAt = Math.max(...flat.received.map((report) => Number(report.lastAt)))
    const count = Math.round(RATE * SECONDS)
    const paced = await phase(count, { bench: 'rate', rate: RATE })
    const latency = summarizeLatency(addHistograms(paced.received.map((report) => report.histogram)))
    return {
      'frames/s (frames/s)': FRAMES / ((lastAt - Number(flat.published.startedAt)) / 1e9),
      'p50 (ms)': latency.p50,
      'p99 (ms)': latency.p99,
      'max (ms)': latency.max,
      'publisher CPU/frame (µs)': paced.published.cpuUs / count,
      'relay CPU/frame (µs)': paced.relayUs,
      'receiver CPU/frame (µs)': paced.received[0].cpuUs / count
    }
  } finally {
    for (const peer of peers) {
      peer.removeAllListeners('exit')
      if (peer.isConnected()) peer.send({ bench: 'close' })
    }
    await Promise.all(peers.map((peer) => peer.isDead() ? null : new Promise((resolve) => peer.once('exit', resolve))))
    await broker?.stop()
  }
}

/** One round of fan-out through the real server: one process alone, or two and a broker. */
async function measureFanout (name) {
  const broker = ['redis', 'nats'].includes(name) ? await startBrokerProcess(name) : null
  const server = await startServerProcess(name === ONE_PROCESS ? [] : ['--processes', '2', '--broker', broker?.url ?? 'ipc'])
  try {
    const before = await serverCpu(server.url, broker)
    const { code, stdout, stderr } = await runNodeScript('client_json.js', ['3', '--direction', 'fanout', '-c', String(FANOUT_SUBSCRIBERS),
      '--rate', String(FANOUT_RATE), '--duration', `${FANOUT_SECONDS}s`, '-w', String(FANOUT_RATE), '--heartbeat', HEARTBEAT, '--timeout', TIMEOUT_MS,
      '--json', '--url', server.url])
    if (code !== 0) {
      const { fanout } = JSON.parse(stdout || '{}')
      const counts = fanout ? `lost ${fanout.lost}, reconnects ${fanout.reconnects.count}; ` : ''
      await server.stop()
      throw new Error(`${name}: the fan-out client exited with ${code}: ${counts}${stderr.trim().split('\n').pop()}; server: ${server.output().trim().split('\n').pop()}`)
    }
    const after = await serverCpu(server.url, broker)
    const { latencyMs, fanout } = JSON.parse(stdout)
    const deliveries = after.deliveries - before.deliveries
    return {
      'p50 (ms)': latencyMs.p50,
      'p99 (ms)': latencyMs.p99,
      'max (ms)': latencyMs.max,
      'spread p99 (ms)': fanout.spreadMs.p99,
      'server CPU/delivery (µs)': (after.serverUs - before.serverUs) / deliveries,
      'broker CPU/delivery (µs)': broker ? (after.brokerUs - before.brokerUs) / deliveries : null
    }
  } finally {
    await server.stop()
    await broker?.stop()
  }
}

/** The server's CPU time (every process), deliveries so far, and the broker's CPU time. */
async function serverCpu (url, broker) {
  const metrics = await readMetrics(url)
  return {
    serverUs: metrics.sum('process_cpu_seconds_total') * 1e6,
    deliveries: metrics.sum('wsbench_fanout_deliveries_total'),
    brokerUs: broker && processCpuUs(broker.process.pid)
  }
}

runMain(main)
