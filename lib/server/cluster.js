// A server of several processes (server.js --processes N) on node:cluster: each worker runs the
// same startServer on the shared port, with its own event loop and its own open-file limit, which
// caps the connections one process can hold. The primary owns the summary lines and sums every
// process's counters and metrics over IPC. Nothing crosses IPC per message, except fan-out frames
// with --broker ipc, which the primary relays from the worker that got them to the others.
import cluster from 'node:cluster'
import { fileURLToPath } from 'node:url'
import { UsageError } from '../errors.js'
import { ServerStats, startSummaries } from './stats.js'
import { aggregateMetrics, createProcessMetrics, sumMetrics } from './metrics.js'
import { answer, OPTIONS_ENV, Questions, RELAY, relayFrames, TAG } from './cluster-ipc.js'
import { benchServer } from './server.js'

/**
 * Starts a server of `processes` worker processes on one port (see startServer for the options,
 * which every worker takes: `maxConnections` bounds each process, as the file limit it guards
 * does). The kernel hands each connection to whichever worker accepts it first, so the shares are
 * near, not exactly, even. Resolves once every worker listens. The primary's summary lines sum
 * every process's counters (a worker that died counts as of its last line); GET /metrics on any
 * connection answers every process's metrics summed.
 * @param {object} options startServer's options, plus:
 * @param {number} options.processes worker processes, at least 2
 * @param {(line: string) => void} [options.log] receives the summed summary lines
 * @returns {Promise<import('./server.js').BenchServer>}
 */
export async function startCluster ({ processes, log = () => {}, ...options }) {
  // Workers accept from the shared socket themselves. Under cluster's round robin the primary
  // accepts every connection and holds it until a worker takes it, so a burst of connections
  // would cost the primary a file descriptor each: the very limit the processes are there to lift.
  cluster.schedulingPolicy = cluster.SCHED_NONE
  // Advanced serialization carries the ipc broker's frames as Buffers, not as JSON arrays of numbers.
  cluster.setupPrimary({ exec: fileURLToPath(new URL('./cluster-worker.js', import.meta.url)), serialization: 'advanced' })
  const stats = new ServerStats()
  const own = createProcessMetrics(options.tags)
  let closing = false
  let reportLost
  const lost = new Promise((resolve) => { reportLost = resolve })
  const onLost = (why) => { if (!closing) reportLost(why) }
  const everyProcess = async () => [await own.getMetricsAsJSON(), ...await gather('metrics')]
  // Any worker's GET /metrics: every process's metrics, the primary's included.
  const exposition = async () => aggregateMetrics(await everyProcess())
  const relay = (from, batch) => relayFrames(from, batch, workers.map(({ worker }) => worker))
  // peers: other processes share the port, so a fan-out needs the broker to reach their subscribers.
  const workerOptions = { ...options, peers: true }
  const workers = Array.from({ length: processes }, () => forkWorker(workerOptions, { exposition, onLost, relay }))
  const gather = (kind) => Promise.all(workers.map(({ questions }) => questions.ask(kind)))
  const sumLatest = () => stats.sum(workers.map(({ latest }) => latest).filter(Boolean))

  let ready
  try {
    ready = await Promise.race([
      Promise.all(workers.map(({ ready }) => ready)),
      lost.then((why) => { throw new Error(why) })
    ])
  } catch (err) {
    closing = true
    for (const { worker } of workers) worker.process.kill('SIGKILL')
    throw err
  }

  const stopSummaries = startSummaries(stats, log, async () => {
    const snapshots = await gather('snapshot')
    snapshots.forEach((snapshot, i) => { workers[i].latest = snapshot })
    sumLatest()
  })
  const shutDown = async () => {
    closing = true
    stopSummaries()
    await closeWorkers(workers)
    sumLatest()
  }
  const metrics = async () => sumMetrics(await everyProcess()).getMetricsAsJSON()
  return benchServer({ address: ready[0], stats, lost, metrics, shutDown })
}

/**
 * Forks one worker process and follows it: its answers, its requests for every process's metrics,
 * its fan-out frames for the others, whether it listens, whether it lost its broker, and its exit.
 * @returns {{worker: import('node:cluster').Worker, questions: Questions, ready: Promise<object>, latest: object|null}}
 *   ready resolves with its address once it listens, or rejects with its one-line reason;
 *   latest is its last counters snapshot
 */
function forkWorker (options, { exposition, onLost, relay }) {
  const worker = cluster.fork({ [OPTIONS_ENV]: JSON.stringify(options) })
  const questions = new Questions(worker)
  let listening
  const ready = new Promise((resolve, reject) => { listening = { resolve, reject } })
  worker.on('message', (message) => {
    switch (message?.[TAG]) {
      case 'answer': return questions.settle(message)
      case 'exposition': return answer(worker, message, exposition)
      case RELAY: return relay(worker, message)
      case 'listening': return listening.resolve(message.address)
      case 'failed': return listening.reject(new UsageError(message.reason))
      case 'lost': return onLost(message.reason)
    }
  })
  worker.on('exit', (code, signal) => {
    for (const id of questions.pending.keys()) questions.settle({ id, error: `server process ${worker.process.pid} exited` })
    onLost(`server process ${worker.process.pid} exited with ${signal ?? `code ${code}`}`)
  })
  return { worker, questions, ready, latest: null }
}

/**
 * Each worker answers with its final counters once its connections are closed, then disconnects
 * and ends; one that cannot answer is stuck, and killed. Resolves once every worker has exited.
 */
async function closeWorkers (workers) {
  const running = workers.filter(({ worker }) => worker.isConnected())
  const exits = running.map(({ worker }) => new Promise((resolve) => worker.once('exit', resolve)))
  const finals = await Promise.allSettled(running.map(({ questions }) => questions.ask('close')))
  finals.forEach((final, i) => {
    if (final.status === 'fulfilled') running[i].latest = final.value
    else running[i].worker.process.kill('SIGKILL')
  })
  await Promise.all(exits)
}
