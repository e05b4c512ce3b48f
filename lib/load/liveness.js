// Whether fan-out subscribers are still connected, judged at a cost of nothing while deliveries
// come on time. The publisher's schedule (--rate, or the ramp of --stages: lib/load/schedule.js)
// and each delivery's scheduled time say when a subscriber's next delivery is due (nothing before
// --start-at but the warm-up, nothing while a ramp calls for none); only one that misses it by
// more than a heartbeat, beyond how late deliveries have run lately, is probed with a ping, and
// one whose ping stays unanswered as long again is taken for gone. While the process's own loop
// runs late nobody is judged: its subscribers' frames may be waiting unread. Connections lost are
// counted by cause: the link, the server, or this generator (judged while it ran late itself).
import { OpenLoopSchedule, StagedSchedule } from './schedule.js'

/** A sweep later than this share of a heartbeat: judgments wait until the loop is on time. */
const SUSPEND_SHARE = 0.5
/** A close judged by a sweep later than this share of a heartbeat is the generator's own doing. */
const LATE_SHARE = 0.25
/** How late deliveries run is the worst over this many publish intervals (or heartbeats, if longer). */
const LATENESS_HORIZON = 4
/** ... and at most this long, however slow the publishes: the windows stay a sane number. */
const MAX_HORIZON_MS = 10 * 60_000
/** Stamps are whole µs (truncated): two of one schedule agree with it within this. */
const STAMP_TOLERANCE_US = 2

/**
 * The publisher's measured phase as it schedules it (lib/load/phase.js): a ramp with --stages
 * (from --rate, or 0), else --rate for --duration or the message count. Fan-out refuses --arrivals.
 * @param {{rate?: number, stages?: import('./schedule.js').Stage[], durationMs?: number, messages?: number}} options the run's
 * @returns {OpenLoopSchedule|StagedSchedule}
 */
export function publisherSchedule ({ rate, stages, durationMs, messages }) {
  if (stages) return new StagedSchedule(stages, { startRate: rate, count: messages })
  if (rate > 0) return new OpenLoopSchedule(rate, { durationMs, count: messages })
  throw new TypeError('fan-out liveness needs the publisher\'s schedule: --rate or --stages')
}

/**
 * @typedef {object} Watched what liveness reads and writes of a subscriber (see lib/load/subscribers.js)
 * @property {boolean} open
 * @property {boolean} ended it has the publisher's END: nothing more is due
 * @property {number} lastHeardAt performance.now() ms of its last frame or pong
 * @property {number} latestDueUs the scheduled time of the newest publish it got, µs since the epoch
 * @property {number} pingedAt when it was probed, 0 when it is not waiting for a pong
 * @property {string|null} closedBy why this process closed it
 * @property {{ping: () => void, terminate: () => void}} ws
 */

/** One client process's liveness judgments over its subscribers, and what they cost and closed. */
export class Liveness {
  /**
   * @param {{heartbeatMs: number, rate?: number, stages?: import('./schedule.js').Stage[], durationMs?: number,
   *   messages?: number, startAt?: number}} options the run's: --heartbeat; the publisher's schedule (--rate
   *   and/or --stages, fan-out has one; --duration or the count); --start-at (epoch ms)
   * @param {number} timeOrigin performance.timeOrigin, or a test's
   */
  constructor ({ heartbeatMs, rate, stages, durationMs, messages, startAt }, timeOrigin = performance.timeOrigin) {
    this.heartbeatMs = heartbeatMs
    this.sweepMs = Math.max(10, heartbeatMs / 2)
    this.timeOrigin = timeOrigin
    this.schedule = publisherSchedule({ rate, stages, durationMs, messages })
    /** Between two warm-up publishes, µs: they go at --rate, or a ramp's first target (lib/load/engine.js). */
    const warmupRate = rate || stages?.[0].target
    this.warmupIntervalUs = warmupRate > 0 ? 1e6 / warmupRate : 0
    /** When the measured phase started, epoch µs (its first delivery here says); null before. */
    this.originUs = null
    /** The last answer of nextDueUs: subscribers that heard the same publish expect the same next. */
    this.cached = { latestUs: NaN, dueUs: 0 }
    this.startAtUs = (startAt ?? 0) * 1000
    /** How late deliveries ran, µs: the worst of this sweep's window, and of each window over the horizon. */
    this.latenessUs = 0
    // A ramp's publish interval is taken at its mean rate (a ramp to 0 has no slowest one).
    const horizonMs = LATENESS_HORIZON * Math.max(1000 / this.schedule.rate, heartbeatMs)
    this.windows = new Float64Array(Math.ceil(Math.min(horizonMs, MAX_HORIZON_MS) / this.sweepMs))
    this.window = 0
    this.lastSweepAt = 0
    /** When the loop last came back on time (judgments count from then), and when it fell behind (0: it has not). */
    this.resumedAt = 0
    this.suspendedAt = 0
    this.pings = 0
    this.suspendedMs = 0
    this.closes = { link: 0, server: 0, generator: 0 }
  }

  /**
   * Judging starts: every subscriber is expected to hear its first publish about now.
   * @param {Watched[]} subscribers
   * @param {number} now performance.now() ms
   */
  start (subscribers, now) {
    this.lastSweepAt = this.resumedAt = now
    const expectedUs = this.epochUs(now) - this.warmupIntervalUs
    for (const subscriber of subscribers) {
      subscriber.lastHeardAt = now
      subscriber.latestDueUs = expectedUs
    }
  }

  /** A delivery came this many µs after its scheduled publish. Hot path. */
  delivered (latencyUs) {
    if (latencyUs > this.latenessUs) this.latenessUs = latencyUs
  }

  /**
   * A measured publish came: the first one says when the publisher's measured phase started, the
   * origin its schedule counts from.
   * @param {number} seq its index in the measured phase
   * @param {number} publishedAtUs its scheduled time, µs since the epoch
   */
  measured (seq, publishedAtUs) {
    if (this.originUs !== null) return
    this.originUs = publishedAtUs - this.schedule.dueAt(seq) * 1000
    this.cached.latestUs = NaN
  }

  /**
   * When the next publish after the one scheduled at `latestUs` is due, per the publisher's
   * schedule. Before the measured phase: the warm-up's next, not before --start-at; once it has
   * begun, its first. Past its last publish, the END, by the schedule's end.
   * @param {number} latestUs a publish's scheduled time, µs since the epoch
   * @returns {number} µs since the epoch
   */
  nextDueUs (latestUs) {
    const cached = this.cached
    if (latestUs === cached.latestUs) return cached.dueUs
    const { originUs, schedule } = this
    let dueUs
    if (originUs === null) dueUs = Math.max(latestUs + this.warmupIntervalUs, this.startAtUs)
    else if (latestUs < originUs - STAMP_TOLERANCE_US) dueUs = originUs
    else {
      // How many the schedule calls for by the latest's time: the next one's index.
      const next = schedule.dueBy((latestUs - originUs + STAMP_TOLERANCE_US) / 1000)
      dueUs = originUs + 1000 * (next < schedule.planned ? schedule.dueAt(next) : schedule.windowMs(schedule.planned))
    }
    cached.latestUs = latestUs
    cached.dueUs = dueUs
    return dueUs
  }

  /**
   * Every half heartbeat: probes the subscribers whose next delivery is overdue, and closes those
   * whose probe went unanswered.
   * @param {Watched[]} subscribers
   * @param {number} now performance.now() ms
   */
  sweep (subscribers, now) {
    const { heartbeatMs } = this
    const lateMs = now - this.lastSweepAt - this.sweepMs
    this.lastSweepAt = now
    this.windows[this.window] = this.latenessUs
    this.window = (this.window + 1) % this.windows.length
    this.latenessUs = 0
    let allowanceUs = 0
    for (const worst of this.windows) if (worst > allowanceUs) allowanceUs = worst
    // Timers run before the sockets are read: while this process runs late (a busy machine, a long
    // GC), its subscribers look silent though their frames wait to be read. Judge once it is on
    // time again, and count from then.
    if (lateMs > heartbeatMs * SUSPEND_SHARE) {
      if (this.suspendedAt === 0) this.suspendedAt = now - lateMs
      return
    }
    if (this.suspendedAt !== 0) {
      this.suspendedMs += now - this.suspendedAt
      this.suspendedAt = 0
      this.resumedAt = now
      return
    }
    const cause = lateMs > heartbeatMs * LATE_SHARE ? 'generator' : 'link'
    const nowUs = this.epochUs(now)
    const resumedUs = this.epochUs(this.resumedAt)
    // A ping waits on the server behind the deliveries queued for it: allow it as long as they run late.
    const answerMs = heartbeatMs + allowanceUs / 1000
    for (const subscriber of subscribers) {
      if (!subscriber.open || subscriber.ended) continue
      if (subscriber.pingedAt !== 0) {
        if (subscriber.lastHeardAt <= subscriber.pingedAt) {
          if (now - Math.max(subscriber.pingedAt, this.resumedAt) > answerMs) {
            subscriber.closedBy = cause
            subscriber.ws.terminate()
          }
          continue
        }
        subscriber.pingedAt = 0 // answered
      }
      if (now - Math.max(subscriber.lastHeardAt, this.resumedAt) <= heartbeatMs) continue
      const dueUs = this.nextDueUs(subscriber.latestDueUs)
      if (nowUs > Math.max(dueUs + allowanceUs, resumedUs) + heartbeatMs * 1000) {
        subscriber.pingedAt = now
        this.pings++
        subscriber.ws.ping()
      }
    }
  }

  /**
   * A subscriber's connection closed under the run: by this process (its cause), by the server (a
   * close frame) or by the link (1006: no close frame).
   * @param {Watched} subscriber
   * @param {number} code the close code
   */
  closed (subscriber, code) {
    this.closes[subscriber.closedBy ?? (code === 1006 ? 'link' : 'server')]++
  }

  /**
   * @param {number} now performance.now() ms
   * @returns {{pings: number, suspendedMs: number, closes: {link: number, server: number, generator: number}}}
   */
  result (now) {
    const stillLate = this.suspendedAt === 0 ? 0 : now - this.suspendedAt
    return { pings: this.pings, suspendedMs: Math.round(this.suspendedMs + stillLate), closes: { ...this.closes } }
  }

  epochUs (now) {
    return (this.timeOrigin + now) * 1000
  }
}
