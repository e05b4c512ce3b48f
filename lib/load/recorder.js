// What a measured phase records of its replies: latency histograms (from the schedule, and with a
// rate also from the actual send), a series of one entry per second, and how busy the generator
// itself was over it (the process's CPU, this thread's event-loop delay and utilisation).
import os from 'node:os'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { createLatencyHistogram, encodeHistogram, valueAtPercentile } from '../histogram.js'
import { round } from '../display.js'

/** How often the event loop's lateness is sampled, ms. */
const LOOP_SAMPLE_MS = 10

/** Which process measured its CPU: --workers threads share one, so merging takes its largest figure once. */
const PROCESS_ID = `${os.hostname()}:${process.pid}`

/** Latencies in µs of one measured phase, overall and second by second. */
export class Recorder {
  /**
   * @param {boolean} openLoop whether messages have a schedule (then latency also counts from the actual send)
   * @param {{usage: () => {waitedMs: number, threadMs: number|null}}|null} [pacer] the open loop's pacer: its
   *   waiting turns count as idle, not busy, and its CPU is reported apart
   */
  constructor (openLoop, pacer = null) {
    // Latency in µs: from the scheduled send (open loop), with the actual send in `uncorrected`.
    this.histogram = createLatencyHistogram()
    this.uncorrected = openLoop ? createLatencyHistogram() : null
    // Open loop: how late each message left against its due time, the generator's own share of the latency.
    this.sendLag = openLoop ? createLatencyHistogram() : null
    this.perSecond = createLatencyHistogram()
    /** A ramp (--stages): where each stage ends (performance.now() ms), and its latencies by due time. */
    this.stageEnds = null
    this.stageHistograms = null
    this.timeSeries = []
    /**
     * Whether each second is kept in the time series, set by each phase (not by a comparison's
     * batches: encoding one costs ~1 ms).
     */
    this.series = true
    /** The counts at the end of the last second, to count each second's own. */
    this.before = { acked: 0, errors: 0 }
    this.startedAt = 0
    this.cpuAtStart = null
    this.loopAtStart = null
    this.pacer = pacer
    this.pacingAtStart = null
    // A timer every LOOP_SAMPLE_MS records how long each interval really took: past it, the loop was late.
    this.loopDelay = monitorEventLoopDelay({ resolution: LOOP_SAMPLE_MS })
  }

  /**
   * Starts recording a phase, empty: a recorder serves phase after phase (a run's short batches in
   * a comparison), since each of its histograms is a ~90 KB array whose garbage, batch after batch,
   * set off major collections in the middle of measured batches.
   * @param {number[]|null} [stageEnds] a ramp's stage ends, performance.now() ms: latency is then also kept per stage
   */
  start (stageEnds) {
    for (const histogram of [this.histogram, this.uncorrected, this.sendLag, this.perSecond]) histogram?.reset()
    this.stageEnds = stageEnds ? Float64Array.from(stageEnds) : null
    this.stageHistograms = stageEnds ? stageEnds.map(() => createLatencyHistogram()) : null
    this.timeSeries = []
    this.before = { acked: 0, errors: 0 }
    this.loopDelay.reset()
    this.startedAt = Date.now()
    this.cpuAtStart = process.cpuUsage()
    this.loopAtStart = performance.eventLoopUtilization()
    this.pacingAtStart = this.pacer?.usage() ?? null
    this.loopDelay.enable()
  }

  /** One reply's latency (µs) in the phase, the per-second and the uncorrected histograms. Hot path. */
  record (now, scheduledAt, sentAt) {
    const latency = Math.max(1, Math.round((now - scheduledAt) * 1000))
    this.recordUs(latency)
    if (this.stageEnds) this.stageHistograms[this.stageOf(scheduledAt)].recordValue(latency)
    if (this.uncorrected) this.uncorrected.recordValue(Math.max(1, Math.round((now - sentAt) * 1000)))
  }

  /** The stage a message due at `scheduledAt` belongs to (the last one for any later). Hot path. */
  stageOf (scheduledAt) {
    const ends = this.stageEnds
    let stage = 0
    while (stage < ends.length - 1 && scheduledAt >= ends[stage]) stage++
    return stage
  }

  /** An open-loop message's send lag (ms, from its due time to its send), recorded in µs. Hot path. */
  recordSendLag (lagMs) {
    this.sendLag?.recordValue(Math.max(1, Math.round(lagMs * 1000)))
  }

  /**
   * One latency in µs, at least 1. Hot path: recorded once, in the second's histogram, which joins
   * the phase's as the second closes.
   */
  recordUs (latency) {
    this.perSecond.recordValue(latency)
  }

  /** Whether replies came since the last second closed: the last, partial second is worth an entry. */
  hasOpenSecond () {
    return this.perSecond.totalCount > 0
  }

  /**
   * Closes one second of the time series.
   * @param {{acked: number, errors: number}} counts the phase's totals so far
   * @returns {number|null} that second's p99 in ms, for the progress line (null without a series)
   */
  closeSecond ({ acked, errors }) {
    if (!this.series) {
      this.foldSecond()
      return null
    }
    // Two percentiles, not summarizeLatency: its mean and deviation walk every value, ~10 ms a second.
    const p50 = valueAtPercentile(this.perSecond, 50)
    const p99 = valueAtPercentile(this.perSecond, 99)
    const t = Math.floor(this.startedAt / 1000) + this.timeSeries.length
    const second = { t, acked: acked - this.before.acked, errors: errors - this.before.errors, p50, p99 }
    this.timeSeries.push({ ...second, histogram: encodeHistogram(this.perSecond) })
    this.before = { acked, errors }
    this.foldSecond()
    return p99
  }

  /** The process's CPU (user and system, µs) since the phase started. */
  cpuUsSinceStart () {
    const { user, system } = process.cpuUsage(this.cpuAtStart)
    return user + system
  }

  /** Adds the second's latencies to the phase's and starts the next second empty. */
  foldSecond () {
    this.histogram.add(this.perSecond)
    this.perSecond.reset()
  }

  /**
   * What pacing cost over the phase, ms: its waiting in turns of this event loop, and its thread's
   * CPU (none without a pacer; the waiting alone where the thread's is unknown).
   * @returns {{waitedMs: number, threadMs: number}}
   */
  pacingCost () {
    if (!this.pacer) return { waitedMs: 0, threadMs: 0 }
    const { waitedMs, threadMs } = this.pacer.usage()
    const start = this.pacingAtStart
    return { waitedMs: waitedMs - start.waitedMs, threadMs: threadMs === null ? 0 : threadMs - start.threadMs }
  }

  /** The share of the phase the event loop worked: busy, less the pacer's waiting for due times. */
  loopBusy (waitedMs) {
    const { idle, active } = performance.eventLoopUtilization(this.loopAtStart)
    return idle + active > 0 ? Math.max(0, active - waitedMs) / (idle + active) : 0
  }

  /** What the phase's result takes from the recording (see LoadResult in engine.js). */
  result () {
    // Callers close the last, partial second first (it belongs in the series); never lose it if not.
    if (this.hasOpenSecond()) this.foldSecond()
    const cpu = process.cpuUsage(this.cpuAtStart)
    const pacing = this.pacingCost()
    this.loopDelay.disable()
    const wallUs = Math.max(1, (Date.now() - this.startedAt) * 1000)
    const delayMs = (nanoseconds) => Math.max(0, round(nanoseconds / 1e6 - LOOP_SAMPLE_MS, 2))
    return {
      startedAt: this.startedAt,
      histogram: this.histogram,
      uncorrectedHistogram: this.uncorrected,
      sendLagHistogram: this.sendLag,
      stageHistograms: this.stageHistograms,
      // Pacing's CPU is in user and system, and reported apart: it is waiting, not messages.
      cpu: {
        userUs: cpu.user,
        systemUs: cpu.system,
        pacingUs: Math.round((pacing.waitedMs + pacing.threadMs) * 1000),
        process: PROCESS_ID
      },
      generator: {
        cpuShare: round((cpu.user + cpu.system) / wallUs, 2),
        loopBusy: round(this.loopBusy(pacing.waitedMs), 2),
        loopDelayMs: { p99: delayMs(this.loopDelay.percentile(99)), max: delayMs(this.loopDelay.max) }
      },
      timeSeries: this.timeSeries
    }
  }
}
