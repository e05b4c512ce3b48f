// A server of several processes (server.js --processes N) on node:cluster: each worker runs the
// same startServer on the shared port, with its own event loop and its own open-file limit, which
// caps the connections one process can hold. The primary owns the summary lines and sums every
// process's counters and metrics over IPC; nothing crosses IPC per message.
import cluster from 'node:cluster'
import { fileURLToPath } from 'node:url'
import { UsageError } from '../errors.js'
import { ServerStats, SUMMARY_INTERVAL_MS } from './stats.js'
import { aggregateMetrics, createProcessMetrics } from './metrics.js'
import { answer, OPTIONS_ENV, Questions, TAG } from './cluster-ipc.js'

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
 * @returns {Promise<ClusterServer>}
 */
export async function startCluster ({ processes, log = () => {}, ...options }) {
  // Workers accept from the shared socket themselves. Under cluster's round robin the primary
  // accepts every connection and holds it until a worker takes it, so a burst of connections
  // would cost the primary a file descriptor each: the very limit the processes are there to lift.
  cluster.schedulingPolicy = cluster.SCHED_NONE
  cluster.setupPrimary({ exec: fileURLToPath(new URL('./cluster-worker.js', import.meta.url)) })
  const stats = new ServerStats()
  const own = createProcessMetrics()
  let closing = null
  let reportLost
  const lost = new Promise((resolve) => { reportLost = resolve })
  const workers = Array.from({ length: processes }, () => {
    const worker = cluster.fork({ [OPTIONS_ENV]: JSON.stringify(options) })
    const questions = new Questions(worker)
    let listening
    // Resolves with the worker's address once it listens; rejects with its one-line reason if it cannot.
    const ready = new Promise((resolve, reject) => { listening = { resolve, reject } })
    worker.on('message', (message) => {
      switch (message?.[TAG]) {
        case 'answer': return questions.settle(message)
        // Any worker's GET /metrics: every process's metrics, this one's included.
        case 'exposition': return answer(worker, message, exposition)
        case 'listening': return listening.resolve(message.address)
        case 'failed': return listening.reject(new UsageError(message.reason))
      }
    })
    worker.on('exit', (code, signal) => {
      for (const id of questions.pending.keys()) questions.settle({ id, error: `server process ${worker.process.pid} exited` })
      if (!closing) reportLost(`server process ${worker.process.pid} exited with ${signal ?? `code ${code}`}`)
    })
    return { worker, questions, ready, latest: null }
  })
  const gather = (kind) => Promise.all(workers.map(({ questions }) => questions.ask(kind)))
  const sumLatest = () => stats.sum(workers.map(({ latest }) => latest).filter(Boolean))
  const exposition = async () => aggregateMetrics([await own.getMetricsAsJSON(), ...await gather('metrics')])

  let ready
  try {
    ready = await Promise.race([
      Promise.all(workers.map(({ ready }) => ready)),
      lost.then((why) => { throw new Error(why) })
    ])
  } catch (err) {
    closing = Promise.resolve()
    for (const { worker } of workers) worker.process.kill('SIGKILL')
    throw err
  }

  let summing = false
  const summaryTimer = setInterval(async () => {
    if (summing) return
    summing = true
    try {
      const snapshots = await gather('snapshot')
      snapshots.forEach((snapshot, i) => { workers[i].latest = snapshot })
      sumLatest()
      if (stats.hasActivitySinceLastSummary()) log(stats.summaryLine(SUMMARY_INTERVAL_MS))
    } catch {
      // A worker that exits mid-question is reported through `lost`; a stuck one shows in the next line.
    } finally {
      summing = false
    }
  }, SUMMARY_INTERVAL_MS).unref()

  const shutDown = async () => {
    clearInterval(summaryTimer)
    const running = workers.filter(({ worker }) => worker.isConnected())
    const exits = running.map(({ worker }) => new Promise((resolve) => worker.once('exit', resolve)))
    // Each worker answers with its final counters once its connections are closed, then disconnects
    // and ends; one that cannot answer is stuck, and killed.
    const finals = await Promise.allSettled(running.map(({ questions }) => questions.ask('close')))
    finals.forEach((final, i) => {
      if (final.status === 'fulfilled') running[i].latest = final.value
      else running[i].worker.process.kill('SIGKILL')
    })
    sumLatest()
    await Promise.all(exits)
  }

  /** @type {ClusterServer} */
  return {
    ...ready[0],
    stats,
    lost,
    close () {
      closing ??= shutDown()
      return closing
    }
  }
}

/**
 * @typedef {object} ClusterServer
 * @property {string} url ws://host:port, without the query
 * @property {string} host
 * @property {number} port
 * @property {ServerStats} stats every process's counters summed, as of the last summary line (or the close)
 * @property {Promise<string>} lost resolves with a one-line reason if a worker exits while the server runs
 * @property {() => Promise<void>} close closes every connection with 1001 and stops every worker
 */
