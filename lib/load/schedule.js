// The open loop's timetable (--rate): when each message is due, how many are due by now, how many
// there will be, the window the achieved rate is taken over, and which connection takes the next
// message. No timers and no sockets, so any rate from 0.1/s to 100,000/s can be checked without
// waiting for it.

/**
 * Message k is due at k / rate seconds after the start; every message due before the deadline is
 * sent, however late the timer that sends it fires.
 */
export class OpenLoopSchedule {
  /**
   * @param {number} rate messages per second over all connections, > 0
   * @param {{durationMs?: number, count?: number}} limits send while before this deadline, at most this many
   */
  constructor (rate, { durationMs, count }) {
    this.rate = rate
    this.intervalMs = 1000 / rate
    this.durationMs = durationMs > 0 ? durationMs : Infinity
    this.planned = Math.min(count ?? Infinity, dueBefore(rate, this.durationMs))
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
