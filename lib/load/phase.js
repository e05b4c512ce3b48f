// One phase of a load run (the warm-up, then the measured phase): it decides what is sent and
// when, and counts what comes back. Channels report to it; it judges each reply and makes each
// frame with functions it is given, records with a Recorder, follows an OpenLoopSchedule when
// there is a rate (a StagedSchedule with stages), and reports how it ended by resolving, or a
// failure through onFailure.
import { OpenLoopSchedule, StagedSchedule } from './schedule.js'
import { Timers } from './timers.js'

/**
 * The channels corked in an open loop's turn, uncorked at its end: one array for every phase, as a
 * turn's sends run to their end before any other phase's can start.
 */
const corked = []

/** After a stop (SIGINT), replies still in flight get at most this long to arrive. */
const STOP_GRACE_MS = 2000

/**
 * @typedef {object} PhaseSpec
 * @property {number} [count] messages to send
 * @property {number} [durationMs] send for this long (with count: whichever comes first)
 * @property {number} [rate] open loop: messages per second over all connections; with stages, the rate they start from
 * @property {import('./schedule.js').Stage[]} [stages] open loop: a ramp through these (--stages); it sets the duration
 * @property {boolean} [recording] whether replies are recorded (the measured phase) or only counted (warm-up)
 * @property {boolean} [series] whether a recorded phase keeps a time series, one entry per second [default: true]
 */

/**
 * @typedef {object} Traffic what a run gives each of its phases
 * @property {import('./channel.js').Channel[]} channels the connections
 * @property {(data: Buffer, isBinary: boolean) => boolean} judge whether a reply completes its message
 * @property {(scheduledAt: number, measured: boolean) => (Buffer|string)} nextFrame the next message, encoded now
 * @property {boolean} cork open loop: a turn's messages go out in one write per connection (LoadSettings.cork)
 * @property {number} timeoutMs a message with no reply after this long is lost, and the run fails
 * @property {(reason: string) => void} onFailure the run fails (the first reason stands)
 * @property {(openLoop: boolean) => import('./recorder.js').Recorder} recorder the run's recorder for a
 *   recorded phase of this kind, the same one phase after phase
 * @property {((channel: import('./channel.js').Channel, lost: number) => void)|null} reconnect --reconnect: bring a
 *   closed channel back (null: a close fails the run)
 * @property {(progress: object) => void} [onTick] once a second while recording
 * @property {import('./pacer.js').ThreadPacer|import('./pacer.js').TimerPacer|null} pacer wakes an open
 *   loop when its next message is due, started already (null: no phase of the run has a rate)
 */

/**
 * @typedef {object} PhaseResult what runLoad reports of the measured phase (see LoadResult in engine.js)
 */

/** One phase: sends until its count or deadline, and settles once every sent message is accounted for. */
export class Phase {
  /**
   * @param {Traffic} traffic
   * @param {PhaseSpec} spec
   */
  constructor (traffic, { count, durationMs, rate = 0, stages, recording = false, series = true }) {
    this.traffic = traffic
    this.channels = traffic.channels
    this.judge = traffic.judge
    this.nextFrame = traffic.nextFrame
    // Open loop: the schedule itself says how many messages there will be.
    this.schedule = stages
      ? new StagedSchedule(stages, { startRate: rate, count })
      : rate > 0 ? new OpenLoopSchedule(rate, { durationMs, count }) : null
    this.recorder = recording ? traffic.recorder(this.schedule !== null) : null
    if (this.recorder) this.recorder.series = series
    this.planned = this.schedule?.planned ?? count ?? Infinity
    this.durationMs = stages ? this.schedule.durationMs : durationMs > 0 ? durationMs : Infinity
    // Every sent message ends up acked, errored (an error reply) or lost (timeout, stop, connection gone).
    this.sent = 0
    this.acked = 0
    this.errors = 0
    this.lost = 0
    /** Whether it may still send: a failure or a stop ends that, what is in flight still counts. */
    this.sending = true
    this.startedAt = 0
    this.lastSentAt = 0
    this.lastReplyAt = 0
    this.timers = new Timers()
    /** Wakes the open loop when its next message is due (see pacer.js). */
    this.pacer = traffic.pacer
    this.onDue = () => this.sendDue()
    /** Resolves start()'s promise; null while the phase is not under way. */
    this.finish = null
  }

  /**
   * Sends until the count or the deadline and resolves once each sent message got its reply or was lost.
   * @returns {Promise<PhaseResult>}
   */
  start () {
    return new Promise((resolve) => {
      this.finish = resolve
      this.startedAt = this.lastReplyAt = this.lastSentAt = performance.now()
      // A ramp's latency is also kept stage by stage, by when each message was due.
      this.recorder?.start(this.schedule?.ends?.().map((end) => this.startedAt + end))
      for (const channel of this.channels) {
        channel.reportTo(this)
        channel.markBytes()
      }
      const { timeoutMs } = this.traffic
      this.timers.every('watchdog', Math.min(1000, Math.max(10, timeoutMs / 4)), () => this.expireStale())
      this.timers.countSeconds(this.startedAt, () => this.tick())
      if (this.schedule) this.sendDue()
      else for (const channel of this.channels) this.fill(channel, this.startedAt)
      this.checkDone()
    })
  }

  /** Whether the phase is under way. */
  isActive () {
    return this.finish !== null
  }

  // The path of one message, top to bottom: a reply arrives (onReply), is judged, counted and
  // recorded, and the next message goes (send: counted, its frame made, handed to the channel).

  /**
   * A channel's oldest outstanding message got its reply. Hot path.
   * @param {import('./channel.js').Channel} channel
   * @param {Buffer} data the reply
   * @param {boolean} isBinary
   * @param {number} scheduledAt when it was due (open loop), else when it was sent
   * @param {number} sentAt when it was sent
   * @param {number} now when the reply arrived
   */
  onReply (channel, data, isBinary, scheduledAt, sentAt, now) {
    this.timers.reached(now)
    this.lastReplyAt = now
    if (this.judge(data, isBinary)) {
      this.acked++
      this.recorder?.record(now, scheduledAt, sentAt)
    } else {
      this.errors++
    }
    if (this.schedule) {
      if (this.schedule.blocked) this.sendDue() // this reply made room for messages already due
      else this.checkDone()
    } else if (this.canSend(now)) {
      this.send(channel, now, now)
    } else {
      this.checkDone()
    }
  }

  /** Sends one message on a channel: counted, its frame made now (encoding is part of the cost measured). Hot path. */
  send (channel, scheduledAt, now) {
    this.sent++
    this.lastSentAt = now
    channel.send(this.nextFrame(scheduledAt, this.recorder !== null), scheduledAt, now)
  }

  /**
   * Whether more messages are to be sent: closed loop (asked on every reply) until the count or
   * the deadline; open loop until every message scheduled before the deadline has gone, however
   * late the scheduler's timer fires (a busy machine must not end the phase a message short).
   */
  canSend (now) {
    if (!this.sending || this.sent >= this.planned) return false
    return this.schedule !== null || now < this.startedAt + this.durationMs
  }

  /** Closed loop: sends on a channel until its in-flight cap or until no more may be sent. */
  fill (channel, now) {
    while (channel.belowCap() && this.canSend(now)) this.send(channel, now, now)
  }

  /**
   * Open loop: sends every message due by now, each stamped with its scheduled time and its send
   * lag recorded (unless it waited for room), then has the pacer wake it when the next one is due.
   * When no connection has room (in-flight cap or unsent bytes), the messages wait and their
   * latency grows, as a real client's would.
   */
  sendDue () {
    const schedule = this.schedule
    this.timers.clear('schedule')
    let now = performance.now()
    const due = schedule.dueBy(now - this.startedAt)
    // Messages that waited for room (a server slow to reply) are late by its doing, not the generator's.
    const waitedForRoom = schedule.blocked
    schedule.blocked = false
    while (this.sent < due && this.sending) {
      const channel = schedule.channelWithRoom(this.channels)
      if (!channel) {
        schedule.blocked = true
        break
      }
      const scheduledAt = this.startedAt + schedule.dueAt(this.sent)
      if (!waitedForRoom) this.recorder?.recordSendLag(now - scheduledAt)
      if (this.traffic.cork && channel.cork()) corked.push(channel)
      this.send(channel, scheduledAt, now)
      now = performance.now()
    }
    // This turn's frames go, one write per connection.
    for (const channel of corked) channel.uncork()
    corked.length = 0
    if (!this.sending || this.sent >= this.planned) return this.checkDone()
    // Blocked: the next reply makes room and sends at once; the short timer covers a connection
    // that is only waiting for its socket to drain.
    if (schedule.blocked) {
      this.pacer.cancel()
      this.timers.after('schedule', 1, this.onDue)
    } else this.pacer.wakeAt(this.startedAt + schedule.dueAt(this.sent), this.onDue)
  }

  /**
   * A connection closed under the run, taking its outstanding messages with it: with --reconnect
   * (while this phase sends) it is brought back, otherwise the run fails for it.
   * @param {import('./channel.js').Channel} channel
   * @param {number} code the close code
   * @param {Buffer|string} reason
   * @param {number} lost the messages it had outstanding
   */
  onClosed (channel, code, reason, lost) {
    this.lost += lost
    if (this.traffic.reconnect && this.isActive() && this.sending) {
      this.traffic.reconnect(channel, lost)
    } else {
      const why = reason?.length ? `: ${reason}` : ''
      this.fail(`connection closed by the server (code ${code}${why})`)
    }
    this.checkDone()
  }

  /** A channel is back after --reconnect: it takes messages again. */
  resume (channel) {
    if (this.schedule) this.sendDue()
    else this.fill(channel, performance.now())
  }

  /** Once a second: the time series, progress, and the end of a timed closed-loop phase. */
  tick () {
    if (this.recorder) {
      const p99 = this.recorder.closeSecond({ acked: this.acked, errors: this.errors })
      const elapsedMs = performance.now() - this.startedAt
      const { sent, acked, errors, lost } = this
      this.traffic.onTick?.({ sent, acked, errors, lost, elapsedMs, p99 })
    }
    this.checkDone()
  }

  /** Called after every reply or loss: ends the phase once nothing more will be sent and nothing is in flight. */
  checkDone () {
    if (!this.isActive()) return
    if (this.sent !== this.acked + this.errors + this.lost) return
    const channelsLeft = this.channels.some((channel) => channel.isLive())
    if (this.canSend(performance.now()) && channelsLeft) return
    const finish = this.finish
    this.finish = null
    this.timers.clearAll()
    this.pacer?.cancel()
    if (this.sent < this.planned && this.durationMs === Infinity && !channelsLeft) {
      this.fail('every connection closed before all messages were sent') // unless another reason came first
    }
    if (this.recorder?.hasOpenSecond()) this.tick()
    finish(this.result())
  }

  /** @returns {PhaseResult} */
  result () {
    return {
      messages: { sent: this.sent, acked: this.acked, errors: this.errors, lost: this.lost },
      durationMs: this.measuredMs(),
      bytes: this.bytesSinceStart(),
      target: this.schedule
        ? {
            rate: this.schedule.rate,
            sendRate: this.sendRate(),
            pacing: this.pacer.name,
            pacingReason: this.pacer.reason,
            ...this.schedule.stages?.()
          }
        : null,
      ...this.recorder?.result()
    }
  }

  /** @returns {{written: number, read: number}} bytes on its connections' sockets since it started */
  bytesSinceStart () {
    let written = 0
    let read = 0
    for (const channel of this.channels) {
      const bytes = channel.bytesSinceMark()
      written += bytes.written
      read += bytes.read
    }
    return { written, read }
  }

  /**
   * A recorded phase's figures so far (see Figures in lib/outputs/figures.js), read by --out's
   * timer between messages: its counts, its recorder's histograms as they stand, its bytes, and
   * the stage of a ramp under way.
   * @returns {Partial<import('../outputs/figures.js').Figures>}
   */
  figures () {
    const recorder = this.recorder
    return {
      startedAt: recorder.startedAt,
      messages: { sent: this.sent, acked: this.acked, errors: this.errors, lost: this.lost },
      latency: recorder.histogram,
      sendLag: recorder.sendLag,
      bytes: this.bytesSinceStart(),
      cpuUs: recorder.cpuUsSinceStart(),
      stage: this.schedule?.stageAt?.(performance.now() - this.startedAt) ?? null
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

  /** Stops sending and fails the run (the first reason stands): what is in flight still counts. */
  fail (reason) {
    this.halt()
    this.traffic.onFailure(reason)
  }

  /** Stops sending: what is in flight still counts. */
  halt () {
    this.sending = false
  }

  /** Stops sending (SIGINT): replies in flight get a short grace, then count as lost. */
  stop () {
    if (!this.isActive()) return
    this.sending = false
    this.timers.clear('schedule')
    this.pacer?.cancel()
    this.timers.after('stop', Math.min(this.traffic.timeoutMs, STOP_GRACE_MS), () => {
      for (const channel of this.channels) this.lost += channel.abandon()
      this.checkDone()
    })
    this.checkDone()
  }

  /** --timeout: a connection whose oldest message waited longer is given up on, and the run fails. */
  expireStale () {
    const { timeoutMs } = this.traffic
    const sentBefore = performance.now() - timeoutMs
    for (const channel of this.channels) {
      if (channel.oldestSendTime() < sentBefore) {
        this.fail(`no reply within ${timeoutMs} ms (--timeout)`)
        this.lost += channel.abandon()
      }
    }
    this.checkDone()
  }
}
