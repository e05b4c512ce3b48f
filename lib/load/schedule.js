// The open loop's timetable (--rate, or --stages): when each message is due, how many are due by
// now, how many there will be, the window the achieved rate is taken over, and which connection
// takes the next message. No timers and no sockets, so any rate from 0.1/s to 100,000/s, and any
// ramp, can be checked without waiting for it.

/** What both timetables share: the round robin over connections, and whether a due message waited for room. */
class Schedule {
  constructor () {
    this.nextChannel = -1
    /** No connection had room for a message that was due: the next reply should send it at once. */
    this.blocked = false
  }

  /**
   * The next connection, round robin, that may take a message now; null when none has room.
   * @template {{hasRoom: () => boolean}} C
   * @param {C[]} channels
   * @returns {C|null}
   */
  channelWithRoom (channels) {
    for (let tries = 0; tries < channels.length; tries++) {
      this.nextChannel = (this.nextChannel + 1) % channels.length
      const channel = channels[this.nextChannel]
      if (channel.hasRoom()) return channel
    }
    return null
  }
}

/**
 * Message k is due at k / rate seconds after the start; every message due before the deadline is
 * sent, however late the timer that sends it fires.
 */
export class OpenLoopSchedule extends Schedule {
  /**
   * @param {number} rate messages per second over all connections, > 0
   * @param {{durationMs?: number, count?: number}} limits send while before this deadline, at most this many
   */
  constructor (rate, { durationMs, count }) {
    super()
    this.rate = rate
    this.intervalMs = 1000 / rate
    this.durationMs = durationMs > 0 ? durationMs : Infinity
    this.planned = Math.min(count ?? Infinity, dueBefore(rate, this.durationMs))
  }

  /** @returns {number} ms after the start at which message `index` (from 0) is due */
  dueAt (index) {
    return index * this.intervalMs
  }

  /** @returns {number} how many messages are due by `elapsedMs` after the start, the deadline and the plan allowing */
  dueBy (elapsedMs) {
    return Math.min(this.planned, Math.floor(elapsedMs / this.intervalMs) + 1)
  }

  /**
   * The measured window of an open loop: the schedule's own span (to the deadline, or one interval
   * past the last message of a count), so a rate of 0.5/s over 5 s reads 3 messages in 5 s, not 2
   * messages between the first send and the last reply.
   * @param {number} sent messages sent
   * @returns {number} ms
   */
  windowMs (sent) {
    return Math.min(this.durationMs, sent * this.intervalMs)
  }
}

/**
 * How many messages fall strictly before a deadline: index k is due at k / rate seconds, so those
 * with k < rate x duration. The epsilon keeps 1000/s x 1.5 s at 1500 when the product comes out a
 * hair above the whole number.
 */
function dueBefore (rate, durationMs) {
  if (durationMs === Infinity) return Infinity
  return Math.max(1, Math.ceil(rate * durationMs / 1000 - 1e-9))
}

/**
 * @typedef {object} Stage one step of a ramp (--stages 10s:1000): the rate goes linearly from where
 *   the previous stage ended (the first: from the start rate) to `target` over `durationMs`
 * @property {number} durationMs
 * @property {number} target messages per second at its end
 */

/**
 * A ramp, k6's ramping arrival rate: the rate moves linearly through the stages, and message k is
 * due when the messages the rate has called for so far reach k (the area under the ramp: a
 * quadratic within a stage, solved for its time). The phase ends with the last stage.
 */
export class StagedSchedule extends Schedule {
  /**
   * @param {Stage[]} stages at least one; the targets not all 0 with a start of 0
   * @param {{startRate?: number, count?: number}} [options] the rate at the start (default 0); at most this many messages
   */
  constructor (stages, { startRate = 0, count } = {}) {
    super()
    /** Per stage: its start (ms), length, rate at its start and slope (per ms, per ms²), messages due before it. */
    this.segments = []
    let at = 0
    let due = 0
    let rate = startRate / 1000
    for (const { durationMs, target } of stages) {
      const slope = (target / 1000 - rate) / durationMs
      this.segments.push({ at, durationMs, rate, slope, due })
      due += rate * durationMs + slope * durationMs ** 2 / 2
      at += durationMs
      rate = target / 1000
    }
    this.durationMs = at
    /** Every message the ramp calls for before its end (k due while k < total). */
    this.total = due
    this.planned = Math.min(count ?? Infinity, Math.max(0, Math.ceil(due - 1e-9)))
    /** The mean rate, for the report's target: messages per second over the whole ramp. */
    this.rate = due * 1000 / at
  }

  /** @returns {number} ms after the start at which message `index` (from 0) is due; past the ramp's end, its end */
  dueAt (index) {
    if (index >= this.total) return this.durationMs
    // The first stage by whose end the ramp has called for message `index`: the earliest time it is due.
    let i = 0
    while (i < this.segments.length - 1 && this.segments[i + 1].due < index) i++
    const segment = this.segments[i]
    const missing = index - segment.due
    if (missing === 0) return segment.at
    const { rate, slope } = segment
    // rate·τ + slope·τ²/2 = missing, in the form that neither cancels nor divides by a zero slope.
    return segment.at + 2 * missing / (rate + Math.sqrt(Math.max(0, rate * rate + 2 * slope * missing)))
  }

  /** @returns {number} how many messages are due by `elapsedMs` after the start, the ramp and the plan allowing */
  dueBy (elapsedMs) {
    const t = Math.min(Math.max(0, elapsedMs), this.durationMs)
    let i = this.segments.length - 1
    while (i > 0 && this.segments[i].at > t) i--
    const segment = this.segments[i]
    const tau = t - segment.at
    const called = segment.due + segment.rate * tau + segment.slope * tau * tau / 2
    // The epsilon: at message k's own due time the area is k, give or take a rounding.
    return Math.min(this.planned, Math.floor(called + 1e-9) + 1)
  }

  /**
   * The measured window: to the ramp's end, or to when the next message would have been due when
   * a count stopped it first.
   * @param {number} sent messages sent
   * @returns {number} ms
   */
  windowMs (sent) {
    return Math.min(this.durationMs, this.dueAt(sent))
  }

  /**
   * Which stage message times fall in: the ends of the stages, ms after the start.
   * @returns {number[]}
   */
  ends () {
    return this.segments.map(({ at, durationMs }) => at + durationMs)
  }

  /**
   * @param {number} elapsedMs since the start
   * @returns {number} the stage under way then, from 1 (the last one past the ramp's end)
   */
  stageAt (elapsedMs) {
    let i = 0
    while (i < this.segments.length - 1 && this.segments[i].at + this.segments[i].durationMs <= elapsedMs) i++
    return i + 1
  }

  /**
   * The ramp as the report's target names it: each stage's span and rates, and the messages it called for.
   * @returns {{stages: Array<{fromMs: number, toMs: number, fromRate: number, toRate: number, messages: number}>}}
   */
  stages () {
    return {
      stages: this.segments.map(({ at, durationMs, rate, slope, due }, i) => ({
        fromMs: at,
        toMs: at + durationMs,
        fromRate: round1(rate * 1000),
        toRate: round1((rate + slope * durationMs) * 1000),
        messages: Math.round((this.segments[i + 1]?.due ?? this.total) - due)
      }))
    }
  }
}

const round1 = (value) => Math.round(value * 10) / 10
