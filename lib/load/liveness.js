// Whether fan-out subscribers are still connected, judged at a cost of nothing while deliveries
// come on time. The publisher's rate and each delivery's scheduled time say when a subscriber's
// next delivery is due (nothing before --start-at but the warm-up); only one that misses it by
// more than a heartbeat, beyond how late deliveries have run lately, is probed with a ping, and
// one whose ping stays unanswered as long again is taken for gone. While the process's own loop
// runs late nobody is judged: its subscribers' frames may be waiting unread. Connections lost are
// counted by cause: the link, the server, or this generator (judged while it ran late itself).

/** A sweep later than this share of a heartbeat: judgments wait until the loop is on time. */
const SUSPEND_SHARE = 0.5
/** A close judged by a sweep later than this share of a heartbeat is the generator's own doing. */
const LATE_SHARE = 0.25
/** How late deliveries run is the worst over this many publish intervals (or heartbeats, if longer). */
const LATENESS_HORIZON = 4

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
   * @param {{heartbeatMs: number, rate: number, startAt?: number}} options the run's: --heartbeat, the
   *   publisher's --rate (fan-out always has one), --start-at (epoch ms)
   * @param {number} timeOrigin performance.timeOrigin, or a test's
   */
  constructor ({ heartbeatMs, rate, startAt }, timeOrigin = performance.timeOrigin) {
    this.heartbeatMs = heartbeatMs
    this.sweepMs = Math.max(10, heartbeatMs / 2)
    this.timeOrigin = timeOrigin
    /** Between two publishes, µs. */
    this.intervalUs = 1e6 / rate
    this.startAtUs = (startAt ?? 0) * 1000
    /** How late deliveries ran, µs: the worst of this sweep's window, and of each window over the horizon. */
    this.latenessUs = 0
    this.windows = new Float64Array(Math.ceil(LATENESS_HORIZON * Math.max(1000 / rate, heartbeatMs) / this.sweepMs))
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
    const expectedUs = this.epochUs(now) - this.intervalUs
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
      const dueUs = Math.max(subscriber.latestDueUs + this.intervalUs, this.startAtUs)
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
