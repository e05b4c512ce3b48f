// --workers K: the load split over K worker threads, each with its own connections, event loop
// and histograms; the caller merges their reports exactly (lib/report/merge.js).
import { Worker } from 'node:worker_threads'
import { decodeFigures, emptyFigures } from '../outputs/figures.js'

/**
 * Splits a whole number into `parts` shares that differ by at most one, largest first.
 * @param {number} total
 * @param {number} parts
 * @returns {number[]}
 */
export function shares (total, parts) {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0))
}

/**
 * Runs a client run's load in `count` threads and returns each thread's report.
 * @param {import('./measure.js').ClientRun} run the whole run
 * @param {number} count worker threads
 * @param {{connectUrl?: string, network: object|null, signal?: AbortSignal, onTick?: Function, live?: object}} context
 *   live: --out's LiveFigures, to which each thread is added
 * @returns {Promise<object[]>} one report per worker
 */
export function runInWorkers (run, count, context) {
  const { load } = run
  const connections = shares(load.connections, count)
  const messages = load.messages === undefined ? [] : shares(load.messages, count)
  const warmups = load.warmup.messages === undefined ? [] : shares(load.warmup.messages, count)
  const workers = connections.map((share, i) => new Worker(new URL('./worker.js', import.meta.url), {
    workerData: {
      connectUrl: context.connectUrl,
      network: context.network,
      live: Boolean(context.live),
      run: {
        ...run,
        load: {
          ...load,
          connections: share,
          messages: messages[i],
          // An arrival's --rate is its own connection's: not shared.
          rate: load.rate && !load.arrivals ? load.rate / count : load.rate,
          arrivals: load.arrivals && load.arrivals / count,
          stages: load.stages?.map((stage) => ({ ...stage, target: stage.target / count })),
          warmup: warmups.length ? { messages: warmups[i] } : load.warmup
        }
      }
    }
  }))
  const stop = () => { for (const worker of workers) worker.postMessage('stop') }
  context.signal?.addEventListener('abort', stop, { once: true })
  const asked = workers.map((worker) => new FiguresAsked(worker))
  for (const figures of asked) context.live?.add(figures)
  return Promise.all(workers.map((worker, i) => new Promise((resolve, reject) => {
    worker.on('message', (message) => {
      // Worker 0's ticks drive the progress line, so it moves once a second, not once per worker.
      if (message.progress && i === 0) context.onTick?.(message.progress)
      if (message.figures) asked[i].answer(message.figures)
      if (message.report) resolve(message.report)
      if (message.error) reject(new Error(message.error))
    })
    worker.once('error', reject)
    worker.once('exit', (code) => reject(new Error(`worker ${i} exited with ${code} before reporting`)))
  }))).finally(() => context.signal?.removeEventListener('abort', stop))
}

/**
 * --out: a worker thread's figures so far, asked for when the timer reads them (the thread encodes
 * its histograms then, between its messages); once it has reported, its last answer stands.
 */
class FiguresAsked {
  /** @param {Worker} worker */
  constructor (worker) {
    this.worker = worker
    this.last = emptyFigures()
    this.waiting = []
    worker.once('exit', () => this.answer(null))
  }

  /** @returns {Promise<import('../outputs/figures.js').Figures>} */
  figures () {
    return new Promise((resolve) => {
      this.waiting.push(resolve)
      // A thread that has exited answers no more: its last figures stand.
      if (this.waiting.length === 1 && this.worker.threadId !== -1) this.worker.postMessage('figures')
      else if (this.worker.threadId === -1) this.answer(null)
    })
  }

  /** @param {object|null} encoded the thread's answer (null: it is gone) */
  answer (encoded) {
    if (encoded) this.last = decodeFigures(encoded)
    for (const resolve of this.waiting.splice(0)) resolve(this.last)
  }
}
