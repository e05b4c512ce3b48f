// Precise pacing's CPU budget: the share of one core that its pacing may spend, over any stretch:
// its wake-ups and the waiting turns of the event loop. A wake-up costs the pacing thread ~40-60 µs
// of CPU on the virtual machines here (more than a short wait), measured as the run goes, and the
// event loop it wakes from its sleep about as much again. The budget accrues with time; a
// wake-up and the waiting before a due time are spent from it. Short of it, the wait is cut to what
// remains and the next wake-up comes later, when it can be paid: messages due by then leave
// together in one turn. So at low rates every message gets its own wake-up and window, and at high
// rates wake-ups thin out to what the budget pays for, instead of a core going to waiting.

/** How often the thread's CPU per wake-up is measured again, ms. */
const MEASURE_EVERY_MS = 100
/**
 * A wake-up's cost is the pacing thread's CPU for it times this: the event loop it wakes pays about
 * as much again (npm run bench:rate: at 20,000/s, precise pacing's CPU over timer pacing's tracks
 * twice its thread's, the loop waking more often with fewer messages each time).
 */
const LOOP_TOO = 2
/** A wake-up's cost until measured (and where the kernel does not say), ms: as measured here. */
const WAKE_COST_MS = 0.1

/** What precise pacing may spend, and what it has. */
export class PacingBudget {
  /**
   * @param {number} share of one core, over any stretch
   * @param {number} windowMs the longest wait in turns before a due time
   * @param {() => number|null} threadMs the pacing thread's CPU so far, ms (null: unknown)
   */
  constructor (share, windowMs, threadMs) {
    this.share = share
    this.windowMs = windowMs
    this.threadMs = threadMs
    /** A wake-up's cost (the thread's CPU per post, and the loop's), and the reading it was measured from. */
    this.wakeMs = WAKE_COST_MS
    this.reading = null
    this.posts = 0
    /** What may be spent now, ms, and when it last accrued. */
    this.allowanceMs = windowMs + WAKE_COST_MS
    this.accruedAt = 0
  }

  /**
   * Adds what accrued since the last call, up to one wake-up and one window, and every
   * MEASURE_EVERY_MS measures a wake-up's cost again.
   * @param {number} now performance.now() ms
   */
  accrue (now) {
    this.allowanceMs = Math.min(this.windowMs + this.wakeMs, this.allowanceMs + (now - this.accruedAt) * this.share)
    this.accruedAt = now
    if (this.reading === null || now - this.reading.at >= MEASURE_EVERY_MS) this.measure(now)
  }

  measure (now) {
    const threadMs = this.threadMs()
    if (threadMs === null) return
    const last = this.reading
    if (last && this.posts > last.posts) this.wakeMs = LOOP_TOO * (threadMs - last.threadMs) / (this.posts - last.posts)
    this.reading = { at: now, threadMs, posts: this.posts }
  }

  /** @returns {number} how long before the due time the wait may start (ms): what remains after paying a wake-up */
  lead () {
    return Math.min(this.windowMs, Math.max(0, this.allowanceMs - this.wakeMs))
  }

  /**
   * @param {number} now performance.now() ms
   * @returns {number} the earliest time a wake-up is paid for
   */
  affordableAt (now) {
    return now + Math.max(0, this.wakeMs - this.allowanceMs) / this.share
  }

  /** The thread woke the loop: one wake-up spent. */
  woke () {
    this.posts++
    this.allowanceMs -= this.wakeMs
  }

  /** @param {number} ms waited in a turn */
  waited (ms) {
    this.allowanceMs -= ms
  }
}
