// Precise pacing's CPU budget: the share of one core that its pacing may spend, over any stretch,
// on what is more precise than a timer: wake-ups closer together than a timer's tick, and the
// waiting turns of the event loop before a due time. A wake-up costs the pacing thread ~20-60 µs
// of CPU on the virtual machines here (more than a short wait), measured as the run goes, and the
// event loop it wakes from its sleep about as much again. The budget accrues with time; every
// wake-up and the waiting before a due time are spent from it. So at low rates every message gets
// its own wake-up and window. Once the budget cannot pay for a message's own wake-up, messages go
// in groups a tick apart, each group in one turn with no waiting: a wake-up more than that wakes
// the loop again and splits the writes and replies it would have handled together, which cost the
// client more than the budget counted (npm run bench:rate: at 20,000/s, wake-ups as often as the
// budget paid for cost 1.4 times timer pacing's CPU; a tick apart, 1.0-1.1 times). A tick's
// wake-up comes whatever the budget has left, as a timer-paced loop's would: the budget pays for
// what is more precise than a timer, not for what a timer does too.

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
/**
 * Node's timers' granularity, ms: how far apart grouped messages' wake-ups come by default, as a
 * timer-paced loop's would. A generator with a tighter objective takes a shorter tick (capacity's:
 * lib/capacity/judge.js).
 */
export const TICK_MS = 1

/** What precise pacing may spend, and what it has. */
export class PacingBudget {
  /**
   * @param {number} share of one core, over any stretch
   * @param {number} windowMs the longest wait in turns before a due time
   * @param {() => number|null} threadMs the pacing thread's CPU so far, ms (null: unknown)
   * @param {number} [tickMs] how far apart grouped messages' wake-ups come
   */
  constructor (share, windowMs, threadMs, tickMs = TICK_MS) {
    this.share = share
    this.windowMs = windowMs
    this.threadMs = threadMs
    this.tickMs = tickMs
    /** A wake-up's cost (the thread's CPU per post, and the loop's), and the reading it was measured from. */
    this.wakeMs = WAKE_COST_MS
    this.reading = null
    this.posts = 0
    /** What may be spent now, ms, and when it last accrued. */
    this.allowanceMs = windowMs + WAKE_COST_MS
    this.accruedAt = 0
    /** When the loop last sent, ms. */
    this.sentAt = -Infinity
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

  /**
   * When the thread should wake the loop for a message due at `due`: a window early when the
   * budget pays for its own wake-up by then; otherwise at the due time, and no sooner than a tick
   * after the loop last sent, the messages due by then going together.
   * @param {number} due performance.now() ms
   * @param {number} now performance.now() ms, accrued
   * @returns {number} performance.now() ms
   */
  postAt (due, now) {
    const early = due - this.lead()
    return early >= this.affordableAt(now) ? early : Math.max(due, this.sentAt + this.tickMs)
  }

  /** The thread woke the loop: one wake-up spent. */
  woke () {
    this.posts++
    this.allowanceMs -= this.wakeMs
  }

  /**
   * The loop sent the messages due, whatever woke it: the thread, or a turn of its own (a message
   * due within the lead, or late). The tick counts from here: counted from the thread's last
   * wake-up, a generator too busy to sleep sent in a turn of its own for every message or two, on
   * time, but in writes of their own at 1.35 times the CPU per message of a tick's groups (npm run
   * capacity, test 3 protobuf at 85,000/s), which kept it too busy to sleep.
   * @param {number} now performance.now() ms
   */
  sent (now) {
    this.sentAt = now
  }

  /** @param {number} ms waited in a turn */
  waited (ms) {
    this.allowanceMs -= ms
  }
}
