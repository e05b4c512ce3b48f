// One phase of a load run (the warm-up, then the measured phase): its counters, histograms,
// schedule and timers, created whole. Channels report to it (a message sent, a reply, messages
// lost, a connection closed); it decides what to count, what to record and what to send next.
import os from 'node:os'
import { performance } from 'node:perf_hooks'
import { createLatencyHistogram, encodeHistogram, summarizeLatency } from '../histogram.js'
import { OpenLoopSchedule } from './schedule.js'

/** Which process measured its CPU: --workers threads share one, so merging takes its largest figure once. */
const PROCESS_ID = `${os.hostname()}:${process.pid}`

/** After a stop (SIGINT), replies still in flight get at most this long to arrive. */
const STOP_GRACE_MS = 2000

/**
 * @typedef {object} PhaseSpec
 * @property {number} [count] messages to send
 * @property {number} [durationMs] send for this long (with count: whichever comes first)
 * @property {number} [rate] open loop: messages per second over all connections
 * @property {boolean} recording whether replies are recorded (the measured phase) or only counted (warm-up)
 */

/**
 * @typedef {object} PhaseResult what runLoad reports of the measured phase (see LoadResult in engine.js)
 */

/** One phase: sends until its count or deadline, and settles once every sent message is accounted for. */
export class Phase {
  /**
   * @param {import('./engine.js').Run} run the connections and what is sent on them
   * @param {PhaseSpec} spec
   */
  constructor (run, { count, durationMs, rate = 0, recording }) {
    this.run = run
    this.channels = run.channels
    this.recording = recording
    this.durationMs = durationMs > 0 ? durationMs : 0
    // Open loop: the schedule itself says how many messages there will be.
    this.schedule = rate > 0 ? new OpenLoopSchedule(rate, { durationMs, count }) : null
    this.planned = this.schedule?.planned ?? count ?? Infinity
    // Every sent message ends up acked, errored (an error reply) or lost (timeout, stop, connection gone).
    this.sent = 0
    this.acked = 0
    this.errors = 0
    this.lost = 0
    this.stopped = false
    this.active = false
    this.blocked = false
    this.nextChannel = -1
    // Latency in µs: from the scheduled send (open loop), with the actual send in `uncorrected`.
    this.histogram = createLatencyHistogram()
    this.uncorrected = rate > 0 ? createLatencyHistogram() : null
    this.perSecond = recording ? createLatencyHistogram() : null
    this.timeSeries = []
    this.ackedBefore = 0
    this.errorsBefore = 0
    this.startedAt = 0
    this.startedAtEpoch = 0
    this.lastSentAt = 0
    this.lastReplyAt = 0
    this.deadline = Infinity
    this.cpuAtStart = null
    this.watchdog = null
    this.ticker = null
    this.scheduleTimer = null
    this.stopTimer = null
    this.finish = null
  }

  /**
   * Sends until the count or the deadline and resolves once each sent message got its reply or was lost.
   * @returns {Promise<PhaseResult>}
   */
  start () {
    return new Promise((resolve) => {
      this.finish = resolve
      this.active = true
      this.startedAt = this.lastReplyAt = this.lastSentAt = performance.now()
      this.startedAtEpoch = Date.now()
      this.deadline = this.durationMs > 0 ? this.startedAt + this.durationMs : Infinity
      this.cpuAtStart = process.cpuUsage()
      for (const channel of this.channels) channel.markBytes()
      const timeoutMs = this.run.timeoutMs
      this.watchdog = setInterval(() => this.expireStale(), Math.min(1000, Math.max(10, timeoutMs / 4)))
      this.ticker = setInterval(() => this.tick(), 1000)
      if (this.schedule) this.sendDue()
      else for (const channel of this.channels) channel.fill(this.startedAt)
      this.checkDone()
    })
  }

  /**
   * Whether more messages are to be sent: closed loop (asked on every reply) until the count or
   * the deadline; open loop until every message scheduled before the deadline has gone, however
   * late the scheduler's timer fires (a busy machine must not end the phase a message short).
   */
  canSend (now) {
    if (this.stopped || this.sent >= this.planned) return false
    return this.schedule !== null || now < this.deadline
  }

  /** A channel sent one message. Hot path. */
  onSent (now) {
    this.sent++
    this.lastSentAt = now
  }

  /**
   * A channel's oldest outstanding message got its reply. Hot path: judges it (run.isSuccess),
   * counts and records it, then sends the next message (closed loop) or lets the schedule go on
   * (open loop).
   * @param {import('./channel.js').Channel} channel
   * @param {Buffer} data the reply
   * @param {boolean} isBinary
   * @param {number} scheduledAt when it was due (open loop), else when it was sent
   * @param {number} sentAt when it was sent
   * @param {number} now when the reply arrived
   */
  onReply (channel, data, isBinary, scheduledAt, sentAt, now) {
    this.lastReplyAt = now
    if (this.run.isSuccess(data, isBinary)) {
      this.acked++
      if (this.recording) this.record(now, scheduledAt, sentAt)
    } else {
      this.errors++
    }
    if (this.schedule) {
      if (this.blocked) {
        clearTimeout(this.scheduleTimer)
        this.sendDue() // this reply made room for messages already due
      } else {
        this.checkDone()
      }
    } else if (this.canSend(now)) {
      channel.sendOne(now, now)
    } else {
      this.checkDone()
    }
  }

  /** Messages that will get no reply: their connection went away, or was given up on. */
  onLost (count) {
    this.lost += count
    this.checkDone()
  }

  /**
   * A connection closed under the run, taking its outstanding messages with it: with --reconnect
   * (while this phase sends) it reconnects, otherwise the run fails for it.
   * @param {import('./channel.js').Channel} channel
   * @param {number} code the close code
   * @param {Buffer|string} reason
   * @param {number} lost the messages it had outstanding
   */
  onClosed (channel, code, reason, lost) {
    this.lost += lost
    if (this.run.reconnectOnClose && this.active && !this.stopped) {
      channel.reconnectLater()
    } else {
      const why = reason?.length ? `: ${reason}` : ''
      this.run.fail(`connection closed by the server (code ${code}${why})`)
    }
    this.checkDone()
  }

  /** A channel is back after --reconnect: it takes messages again. */
  onReopened (channel) {
    if (this.schedule) this.sendDue()
    else channel.fill(performance.now())
  }

  /**
   * Open loop: sends every message due by now, each stamped with its scheduled time, then sleeps
   * until the next one is due. When no connection has room (in-flight cap or unsent bytes), the
   * messages wait and their latency grows, as a real client's would.
   */
  sendDue () {
    this.scheduleTimer = null
    const now = performance.now()
    const due = this.schedule.dueBy(now - this.startedAt)
    let blocked = false
    while (this.sent < due && !this.stopped) {
      const channel = this.channelWithRoom()
      if (!channel) {
        blocked = true
        break
      }
      channel.sendOne(this.startedAt + this.schedule.dueAt(this.sent), now)
    }
    const nextDue = this.startedAt + this.schedule.dueAt(this.sent)
    this.blocked = blocked
    if (this.stopped || this.sent >= this.planned) return this.checkDone()
    // Blocked: the next reply makes room and reschedules at once; the short timer covers a
    // connection that is only waiting for its socket to drain.
    this.scheduleTimer = setTimeout(() => this.sendDue(), blocked ? 1 : Math.max(0, nextDue - performance.now()))
  }

  /** The next connection, round robin, that may take a message now. */
  channelWithRoom () {
    const channels = this.channels
    for (let tries = 0; tries < channels.length; tries++) {
      this.nextChannel = (this.nextChannel + 1) % channels.length
      const channel = channels[this.nextChannel]
      if (channel.hasRoom()) return channel
    }
    return null
  }

  /** Records one reply's latency (µs) in the phase, the per-second and the uncorrected histograms. */
  record (now, scheduledAt, sentAt) {
    const latency = Math.max(1, Math.round((now - scheduledAt) * 1000))
    this.histogram.recordValue(latency)
    this.perSecond.recordValue(latency)
    if (this.uncorrected) this.uncorrected.recordValue(Math.max(1, Math.round((now - sentAt) * 1000)))
  }

  /** Once a second: the time series, progress, and the end of a timed closed-loop phase. */
  tick () {
    if (this.recording) {
      const acked = this.acked - this.ackedBefore
      const errors = this.errors - this.errorsBefore
      this.ackedBefore = this.acked
      this.errorsBefore = this.errors
      const { p50, p99 } = summarizeLatency(this.perSecond)
      const t = Math.floor(this.startedAtEpoch / 1000) + this.timeSeries.length
      this.timeSeries.push({ t, acked, errors, p50, p99, histogram: encodeHistogram(this.perSecond) })
      this.perSecond.reset()
      const elapsedMs = performance.now() - this.startedAt
      this.run.onTick?.({ sent: this.sent, acked: this.acked, errors: this.errors, lost: this.lost, elapsedMs, p99 })
    }
    this.checkDone()
  }

  /** Called after every reply or loss: ends the phase once nothing more will be sent and nothing is in flight. */
  checkDone () {
    if (!this.active) return
    if (this.sent !== this.acked + this.errors + this.lost) return
    const now = performance.now()
    const channelsLeft = this.channels.some((channel) => channel.isLive())
    if (this.canSend(now) && channelsLeft) return
    this.active = false
    this.stopTimers()
    if (this.sent < this.planned && this.deadline === Infinity && !this.run.failure && !channelsLeft) {
      this.run.fail('every connection closed before all messages were sent')
    }
    if (this.recording && this.perSecond.totalCount > 0) this.tick()
    this.finish(this.result())
  }

  stopTimers () {
    clearInterval(this.watchdog)
    clearInterval(this.ticker)
    clearTimeout(this.scheduleTimer)
    clearTimeout(this.stopTimer)
  }

  /** @returns {PhaseResult} */
  result () {
    const cpu = process.cpuUsage(this.cpuAtStart)
    return {
      messages: { sent: this.sent, acked: this.acked, errors: this.errors, lost: this.lost },
      startedAt: this.startedAtEpoch,
      durationMs: this.measuredMs(),
      histogram: this.histogram,
      uncorrectedHistogram: this.uncorrected,
      bytes: {
        written: this.channels.reduce((sum, channel) => sum + channel.bytesWrittenSinceMark(), 0),
        read: this.channels.reduce((sum, channel) => sum + channel.bytesReadSinceMark(), 0)
      },
      cpu: { userUs: cpu.user, systemUs: cpu.system, process: PROCESS_ID },
      timeSeries: this.timeSeries,
      target: this.schedule ? { rate: this.schedule.rate, sendRate: this.sendRate() } : null
    }
  }

  /**
   * Closed loop: from the first send to the last reply. Open loop: the schedule's window, or longer
   * when the last reply came after it; a rate is then read over the time the schedule asked for.
   */
  measuredMs () {
    const toLastReply = this.lastReplyAt - this.startedAt
    return this.schedule ? Math.max(this.schedule.windowMs(this.sent), toLastReply) : toLastReply
  }

  /** Messages sent per second over the schedule's window (longer if sending fell behind), against the target rate. */
  sendRate () {
    const spanMs = Math.max(this.schedule.windowMs(this.sent), this.lastSentAt - this.startedAt)
    return spanMs > 0 ? Math.round(this.sent * 1000 / spanMs * 10) / 10 : 0
  }

  /** Stops new sends on every connection: what is in flight still counts. */
  halt () {
    this.stopped = true
  }

  /**
   * Stops sending (SIGINT): replies in flight get a short grace, then count as lost.
   */
  stop () {
    if (!this.active) return
    this.halt()
    clearTimeout(this.scheduleTimer)
    const grace = Math.min(this.run.timeoutMs, STOP_GRACE_MS)
    this.stopTimer = setTimeout(() => { for (const channel of this.channels) channel.abandon() }, grace)
    this.checkDone()
  }

  /** --timeout: a connection whose oldest message waited longer is given up on, and the run fails. */
  expireStale () {
    const timeoutMs = this.run.timeoutMs
    const deadline = performance.now() - timeoutMs
    for (const channel of this.channels) {
      if (channel.oldestSendTime() < deadline) {
        this.run.fail(`no reply within ${timeoutMs} ms (--timeout)`)
        channel.abandon()
      }
    }
  }
}
