// npm run bench:broker — which broker carries a fan-out between server processes: the cluster's
// primary over node:cluster IPC (ipc), Redis pub/sub or NATS. This process is a node:cluster primary
// (relaying as a --processes server's does, for ipc) with BENCH_PEERS (3) worker processes
// (bench/broker-peer.js): one publishes test-3 frames (JSON and protobuf in turn, 0.3-1.2 KB), the
// others receive every one, in order. Throughput: BENCH_FRAMES (30,000) published flat out, frames/s
// until the last receiver has them all. Latency: BENCH_RATE (5,000) frames/s for BENCH_SECONDS (3),
// open loop, from the time each frame was due to its arrival at each receiver. CPU per frame of the
// publisher, the relay (the primary, or the broker's server) and a receiver. The brokers take turns,
// BENCH_ROUNDS (3) rounds, medians; every process shares the machine's cores.
import cluster from 'node:cluster'
import fs from 'node:fs'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { addHistograms, summarizeLatency } from '../lib/histogram.js'
import { startBrokerProcess } from '../lib/processes.js'
import { RELAY, relayFrames, TAG } from '../lib/server/cluster-ipc.js'
import { UsageError, runMain } from '../lib/errors.js'
import { startResults } from './results.js'

const BROKERS = (process.env.BENCH_BROKERS ?? 'ipc,redis,nats').split(',')
const PEERS = Number(process.env.BENCH_PEERS ?? 3)
const FRAMES = Number(process.env.BENCH_FRAMES ?? 30_000)
const WARMUP = Math.min(FRAMES, 5000)
const RATE = Number(process.env.BENCH_RATE ?? 5000)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
/** Longest wait for a phase's frames beyond its own length: a broker that loses frames fails the run. */
const GRACE_MS = 30_000
/** Clock ticks per second of /proc/<pid>/stat's CPU times (USER_HZ, 100 on Linux). */
const CLOCK_TICKS = 100

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

async function main () {
  for (const name of BROKERS) if (!['ipc', 'redis', 'nats'].includes(name)) throw new UsageError(`BENCH_BROKERS: unknown broker '${name}': expected some of ipc, redis, nats`)
  if (PEERS < 2) throw new UsageError(`BENCH_PEERS must be at least 2 (a publisher and a receiver), got ${PEERS}`)
  const results = startResults('broker', 'npm run bench:broker')
  cluster.setupPrimary({ exec: fileURLToPath(new URL('./broker-peer.js', import.meta.url)), serialization: 'advanced' })
  const runs = Object.fromEntries(BROKERS.map((name) => [name, []]))
  for (let round = 0; round < ROUNDS; round++) {
    // Each round in another order, so no broker always runs on a machine warmed by the one before.
    for (const name of BROKERS.map((_, i) => BROKERS[(i + round) % BROKERS.length])) {
      process.stderr.write(`round ${round + 1}/${ROUNDS}: ${name}\n`)
      runs[name].push(await measure(name))
    }
  }
  const columns = ['broker', 'frames/s (flat out)', 'p50', 'p99', 'max', 'publisher CPU/frame', 'relay CPU/frame', 'receiver CPU/frame', 'rounds (frames/s)']
  const rows = BROKERS.map((name) => {
    const of = (key) => median(runs[name].map((run) => run[key]))
    return [
      name, Math.round(of('throughput')).toLocaleString('en-US'), `${of('p50')} ms`, `${of('p99')} ms`, `${of('max')} ms`,
      `${of('publisherUs').toFixed(1)} µs`, `${of('relayUs').toFixed(1)} µs`, `${of('receiverUs').toFixed(1)} µs`,
      runs[name].map((run) => Math.round(run.throughput).toLocaleString('en-US')).join(', ')
    ]
  })
  console.log(`# bench:broker — ${PEERS} processes (1 publisher, ${PEERS - 1} receivers); ${os.cpus().length} x ${os.cpus()[0].model}, Node ${process.version}`)
  console.log(`| ${columns.join(' | ')} |`)
  console.log(`|---|${columns.slice(1, -1).map(() => '---:').join('|')}|---|`)
  for (const row of rows) console.log(`| ${row.join(' | ')} |`)
  results.write({
    columns,
    rows,
    notes: [
      `${PEERS} node:cluster worker processes connected to the broker as server processes are (lib/server/broker.js): one publishes, ${PEERS - 1} receive every frame, in order (checked); ` +
      `test-3 messages, JSON (text) and protobuf (binary) in turn, 0.3-1.2 KB; flat out: ${FRAMES.toLocaleString('en-US')} frames after ${WARMUP.toLocaleString('en-US')} of warm-up, until the last receiver has them all; ` +
      `latency: ${RATE.toLocaleString('en-US')} frames/s for ${SECONDS} s, open loop, from each frame's due time to its arrival, over every receiver; ` +
      'CPU per frame published: the publisher\'s, the relay\'s (ipc: the primary process; redis, nats: the broker\'s server) and one receiver\'s, in the latency phase; ' +
      `medians of ${ROUNDS} rounds, the brokers in turn; brokers started by startBrokerProcess (lib/processes.js); every process shares the machine's ${os.cpus().length} cores`
    ],
    figures: Object.fromEntries(rows.map((row) => [`${row[0]}-throughput`, row[1]]))
  })
}

/** One round of one broker: its processes started, the two phases, everything stopped. */
async function measure (name) {
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
      throughput: FRAMES / ((lastAt - Number(flat.published.startedAt)) / 1e9),
      ...latency,
      publisherUs: paced.published.cpuUs / count,
      relayUs: paced.relayUs,
      receiverUs: paced.received[0].cpuUs / count
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

/** A process's CPU time so far (user and system), in µs, from /proc: the broker's server is not ours to ask. */
function processCpuUs (pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 1e6 / CLOCK_TICKS
}

runMain(main)
