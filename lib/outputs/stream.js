// --out's streaming: a timer that reads what the run has measured so far and pushes it to every
// backend asked for, off the send path (the engine counts and records as it always does; the timer
// reads its counters and histograms between messages). A backend that fails is one warning line, the
// run goes on, and the report counts the pushes that failed; the last push, before the command
// exits, sends the report's own figures, so that what a backend holds at the end is the report.
import { oneLine } from '../errors.js'
import { pointsOf } from './metrics.js'

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

/** The backends of one command (--out kind=URL, repeatable) and the timer that pushes to them. */
export class MetricStream {
  /**
   * @param {StreamTarget[]} targets
   * @param {{intervalMs?: number, labels: Record<string, string>, native: boolean, warn: (line: string) => void}} options
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
      sink: null,
      pushes: 0,
      failed: 0,
      error: null
    }))
    this.timer = null
    /** The push under way: the next waits for it, so that samples reach a backend in their order. */
    this.pushing = Promise.resolve()
    this.busy = false
  }

  /**
   * Loads each backend's sender (OpenTelemetry's exporter is a few hundred ms of module loading):
   * before the run, so that the measured phase never pays for it.
   */
  async open () {
    for (const output of this.outputs) output.sink ??= await makeSink(output.target, this.sinkOptions)
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
    await Promise.all(this.outputs.map((output) => output.sink?.close?.()))
    return this.outputs.map(({ target, pushes, failed, error }) => ({
      kind: target.kind, url: publicUrl(target.url), pushes, failed, error
    }))
  }

  /** One push to every backend, of the figures as `read` has them now. */
  async push (read) {
    this.busy = true
    try {
      const figures = await read()
      const timestamp = Date.now()
      const runs = Array.isArray(figures) ? figures : [{ labels: this.labels, figures }]
      const groups = runs.map(({ labels, figures }) => ({ labels, points: pointsOf(figures) }))
      await Promise.all(this.outputs.map((output) => this.pushTo(output, groups, timestamp)))
    } finally {
      this.busy = false
    }
  }

  async pushTo (output, groups, timestamp) {
    output.pushes++
    try {
      output.sink ??= await makeSink(output.target, this.sinkOptions)
      await output.sink.push(groups, timestamp)
    } catch (err) {
      output.failed++
      if (output.error) return
      output.error = oneLine(err.cause ?? err)
      this.warn(`warning: --out ${output.target.kind}=${publicUrl(output.target.url)}: push failed (${output.error}); ` +
        'the run goes on, and the report counts the failed pushes')
    }
  }
}

/** A backend's sender: remote write, or OTLP (whose exporter loads only when asked for). */
async function makeSink ({ kind, url }, options) {
  if (kind === 'prometheus-rw') return new (await import('./remote-write.js')).RemoteWrite(url, options)
  return new (await import('./otlp.js')).OtlpMetrics(url, options)
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
