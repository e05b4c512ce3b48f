// --out's streaming: a timer that reads what the run has measured so far and hands it to a thread
// of its own (pusher.js), which pushes it to every backend asked for. The engine counts and records
// as it always does; this thread only reads its counters and histograms between messages and
// encodes them, while the backends' modules, the series, their encoding and the requests live on
// the pushing thread. What both spend is counted (cpuUs). A backend that fails is one warning line,
// the run goes on, and the report counts the pushes that failed; the last push, before the command
// exits, sends the report's own figures, so that what a backend holds at the end is the report.
import { performance } from 'node:perf_hooks'
import { Worker } from 'node:worker_threads'
import { oneLine } from '../errors.js'
import { encodeFigures } from './figures.js'

/** No push waits longer than this, and none longer than the interval: a backend that hangs must not pile them up. */
const MAX_PUSH_MS = 10_000

/**
 * @typedef {object} StreamTarget one --out kind=URL
 * @property {'prometheus-rw'|'otlp'} kind
 * @property {URL} url
 */

/**
 * @typedef {object} OutputSummary what the report says of one backend
 * @property {string} kind
 * @property {string} url without credentials
 * @property {number} pushes attempted, the last one included
 * @property {number} failed
 * @property {string|null} error the first failure's, in one line
 */

/** The backends of one command (--out kind=URL, repeatable), the timer that reads the run, the thread that pushes. */
export class MetricStream {
  /**
   * @param {StreamTarget[]} targets
   * @param {{intervalMs?: number, labels?: Record<string, string>, native: boolean, warn: (line: string) => void}} options
   *   intervalMs: how often start() pushes (none: the streams push once, at finish()); labels: every series'
   *   (the run's and --tag's); native: histograms as native (exponential) ones; warn: where the one line about
   *   a failing backend goes
   */
  constructor (targets, { intervalMs, labels, native, warn }) {
    this.intervalMs = intervalMs
    this.labels = labels
    this.warn = warn
    this.sinkOptions = { native, timeoutMs: Math.min(intervalMs ?? MAX_PUSH_MS, MAX_PUSH_MS) }
    this.outputs = targets.map((target) => ({
      target,
      pushes: 0,
      failed: 0,
      error: null
    }))
    this.timer = null
    /** The push under way: the next waits for it, so that samples reach a backend in their order. */
    this.pushing = Promise.resolve()
    this.busy = false
    this.thread = null
    /** The answer the thread owes, one at a time. */
    this.awaiting = null
    /** What the pushes cost this process, µs: the pushing thread's CPU and this thread's part; null where unknown. */
    this.cpuUs = 0
  }

  /**
   * Starts the pushing thread and loads each backend's sender there (OpenTelemetry's exporter is a
   * few hundred ms of module loading): before the run, so that the measured phase never pays for it.
   */
  async open () {
    await this.ask({ type: 'open' })
  }

  /**
   * Pushes what `read` returns now, then every interval until finish().
   * @param {() => Promise<import('./figures.js').Figures>} read the run's figures so far
   */
  start (read) {
    const tick = () => {
      // A push still under way (a slow backend) skips this one rather than queue behind it.
      if (this.busy) return
      this.pushing = this.push(read)
    }
    tick()
    this.timer = setInterval(tick, this.intervalMs)
    this.timer.unref()
  }

  /** Stops the timer: the run ended without a report (it failed), nothing more is pushed. */
  stop () {
    clearInterval(this.timer)
  }

  /**
   * Stops the timer and pushes the run's final figures (its report's), after any push under way.
   * @param {import('./figures.js').Figures|Array<{labels: Record<string, string>, figures: import('./figures.js').Figures}>} final
   *   the run's figures, or several runs' each with its labels (compare's formats, tests and networks)
   * @returns {Promise<OutputSummary[]>} each backend's pushes and failures, for the report
   */
  async finish (final) {
    this.stop()
    await this.pushing
    await this.push(async () => final)
    await this.ask({ type: 'close' }).catch(() => {}) // a thread that failed has nothing to close
    await this.thread.terminate()
    return this.outputs.map(({ target, pushes, failed, error }) => ({
      kind: target.kind, url: publicUrl(target.url), pushes, failed, error
    }))
  }

  /** One push to every backend, of the figures as `read` has them now. */
  async push (read) {
    this.busy = true
    try {
      // This thread's part: reading the run's figures and encoding them for the pushing thread.
      const from = performance.now()
      const figures = await read()
      const runs = (Array.isArray(figures) ? figures : [{ labels: this.labels, figures }])
        .map(({ labels, figures }) => ({ labels, figures: encodeFigures(figures) }))
      this.charge((performance.now() - from) * 1000)
      const { errors, cpuNs } = await this.ask({ type: 'push', runs, timestamp: Date.now() })
        .catch((err) => ({ errors: this.outputs.map(() => `the pushing thread failed: ${oneLine(err)}`), cpuNs: null }))
      this.charge(cpuNs === null ? null : cpuNs / 1000)
      this.outputs.forEach((output, index) => this.count(output, errors[index]))
    } finally {
      this.busy = false
    }
  }

  /** Adds to what streaming cost (null: not known, and then the total is not either). */
  charge (us) {
    this.cpuUs = us === null || this.cpuUs === null ? null : this.cpuUs + us
  }

  /** One backend's push: counted, and its first failure said. */
  count (output, error) {
    output.pushes++
    if (error === null) return
    output.failed++
    if (output.error) return
    output.error = error
    this.warn(`warning: --out ${output.target.kind}=${publicUrl(output.target.url)}: push failed (${output.error}); ` +
      'the run goes on, and the report counts the failed pushes')
  }

  /**
   * Sends the pushing thread a message (starting it first) and resolves to its answer. The thread
   * keeps the process alive only while it owes one: a run that ends without a report exits.
   */
  ask (message) {
    this.thread ??= this.startThread()
    if (this.thread.threadId === -1) return Promise.reject(new Error('it has exited'))
    this.thread.ref()
    return new Promise((resolve, reject) => {
      this.awaiting = { resolve, reject }
      this.thread.postMessage(message)
    }).finally(() => this.thread.unref())
  }

  startThread () {
    const targets = this.outputs.map(({ target }) => ({ kind: target.kind, url: target.url.href }))
    const thread = new Worker(new URL('./pusher.js', import.meta.url), { workerData: { targets, sinkOptions: this.sinkOptions } })
    const answer = (settle, value) => {
      const awaiting = this.awaiting
      this.awaiting = null
      awaiting?.[settle](value)
    }
    thread.on('message', (reply) => answer('resolve', reply))
    thread.on('error', (err) => answer('reject', err))
    thread.on('exit', () => answer('reject', new Error('it exited')))
    return thread
  }
}

/**
 * A URL as the report and warnings show it: any password left out.
 * @param {URL} url
 * @returns {string}
 */
export function publicUrl (url) {
  const shown = new URL(url)
  if (shown.password) shown.password = '***'
  return shown.href
}
