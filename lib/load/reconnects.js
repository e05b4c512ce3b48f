// --reconnect: when to try again, and what the report says about coming back. Attempts wait with
// exponential backoff and full jitter (a random wait up to base x 2^attempt, at most the cap), the
// first one too, so clients dropped together by a restarting server do not all knock at once; and
// at most a few start in one turn of the event loop, so a loop running late does not gather them.
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { createLatencyHistogram, encodeHistogram } from '../histogram.js'
import { BUCKET_MS } from '../report/report.js'

/** Backoff defaults: the first attempt within 100 ms of the drop, none waiting longer than 5 s. */
export const DEFAULT_BACKOFF = Object.freeze({ baseMs: 100, capMs: 5000 })

/**
 * At most this many attempts start in one turn of the event loop (a few ms of work). A loop that
 * ran late (thousands of closes at once, a storm of refused attempts) finds every attempt that came
 * due meanwhile expired: started in one go, they took it seconds, their TCP connections done by the
 * kernel as they went but their upgrade requests written only once it ended, all together. The
 * restarted server then met a third of the connections in 100 ms however spread their due times.
 */
export const ATTEMPTS_PER_TURN = 16

/** Every connection of a run that dropped and came back: when, how long it was away, what was lost. */
export class Reconnects {
  /** @param {{baseMs: number, capMs: number}} [backoff] */
  constructor ({ baseMs, capMs } = DEFAULT_BACKOFF) {
    this.backoff = { baseMs, capMs }
    this.count = 0
    /** The time away of every connection that came back, summed, ms. */
    this.gapMs = 0
    /** Each connection's time away, µs: from its drop to its new connection. */
    this.gaps = createLatencyHistogram()
    /** Connections away now, since when the first of them went, and the longest such outage. */
    this.away = 0
    this.outageSince = 0
    this.allBackMs = 0
    /** Messages outstanding on connections when they dropped. */
    this.lost = 0
    /** Reopenings per 10 ms bucket of the epoch, bucket -> count: any 100 ms slides over them, merges sum them. */
    this.buckets = new Map()
    /**
     * How late each attempt started against its backoff, µs: waiting for its turn, or for a loop
     * running late. Near nothing, the jitter spread the attempts; far beyond it, the client's pace did.
     */
    this.lateness = createLatencyHistogram()
    /** Attempts started in this turn of the event loop, and those due that wait for the next turns, oldest first. */
    this.turnStarts = 0
    this.queued = []
    this.nextTurn = null
    this.onTurn = () => this.turn()
  }

  /**
   * Waits until attempt `attempt` (from 0) may start: its backoff (see delay), then its turn. At
   * most ATTEMPTS_PER_TURN start in one turn of the event loop; those due beyond them start in the
   * turns after, in the order they came due, the loop finishing handshakes in between.
   * @param {number} attempt
   * @returns {Promise<void>}
   */
  async wait (attempt) {
    const delay = this.delay(attempt)
    const due = performance.now() + delay
    await sleep(delay)
    if (this.turnStarts < ATTEMPTS_PER_TURN && this.queued.length === 0) this.start()
    else await new Promise((resolve) => this.queued.push(resolve))
    this.lateness.recordValue(Math.max(1, Math.round((performance.now() - due) * 1000)))
  }

  /** Counts an attempt against this turn's; the count starts over in the next turn (the check phase). */
  start () {
    this.turnStarts++
    this.nextTurn ??= setImmediate(this.onTurn)
  }

  /** A new turn: the attempts waiting start, as many as a turn takes, oldest first. */
  turn () {
    this.nextTurn = null
    this.turnStarts = 0
    while (this.turnStarts < ATTEMPTS_PER_TURN && this.queued.length > 0) {
      this.start()
      this.queued.shift()()
    }
  }

  /**
   * How long to wait before attempt `attempt` (from 0): full jitter, a uniform wait up to
   * base x 2^attempt, capped.
   * @param {number} attempt
   * @returns {number} ms
   */
  delay (attempt) {
    return Math.random() * Math.min(this.backoff.capMs, this.backoff.baseMs * 2 ** attempt)
  }

  /**
   * A connection dropped with `lost` messages outstanding.
   * @returns {number} when (performance.now()), for back()
   */
  dropped (lost) {
    const now = performance.now()
    if (this.away++ === 0) this.outageSince = now
    this.lost += lost
    return now
  }

  /**
   * A connection that dropped at `since` is open again.
   * @param {number} since dropped()'s
   * @param {number} [now] performance.now(), given by tests
   */
  back (since, now = performance.now()) {
    this.count++
    this.gapMs += now - since
    this.gaps.recordValue(Math.max(1, Math.round((now - since) * 1000)))
    const bucket = Math.floor((performance.timeOrigin + now) / BUCKET_MS)
    this.buckets.set(bucket, (this.buckets.get(bucket) ?? 0) + 1)
    this.settle(now)
  }

  /** A connection that dropped will not come back (the run ended or gave up). */
  gone () {
    this.settle(performance.now())
  }

  settle (now) {
    if (--this.away === 0) this.allBackMs = Math.max(this.allBackMs, now - this.outageSince)
  }

  /**
   * For the report: how many came back, their time away (total ms, and the histogram), the backoff,
   * the longest outage until every connection was back, what was lost, the reopenings per 10 ms bucket,
   * and how late the attempts started (the histogram, null before any attempt).
   * @returns {{count: number, gapMs: number, backoff: {baseMs: number, capMs: number}, allBackMs: number, lost: number,
   *   histogram: string|null, buckets: Record<string, number>, lateness: string|null}}
   */
  result () {
    return {
      count: this.count,
      gapMs: Math.round(this.gapMs),
      backoff: { ...this.backoff },
      allBackMs: Math.round(this.allBackMs),
      lost: this.lost,
      histogram: this.count > 0 ? encodeHistogram(this.gaps) : null,
      buckets: Object.fromEntries(this.buckets),
      lateness: this.lateness.totalCount > 0 ? encodeHistogram(this.lateness) : null
    }
  }
}
