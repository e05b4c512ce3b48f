// What wakes the open loop when its next message is due. Node's timers fire at millisecond
// granularity, up to a millisecond or more late, and the corrected latency charges that lateness
// to the server (at 1000/s on loopback it was ~0.7 ms of a 1 ms p50). The precise pacer lets this
// thread's event loop sleep, reading replies, while a thread of its own sleeps (Atomics.wait) until
// shortly before the due time and wakes it; the last stretch it waits in turns of its event loop,
// which still read replies, and sends on time. Those turns cost CPU: docs/method.md says how much.
import { Worker } from 'node:worker_threads'
import { performance } from 'node:perf_hooks'

/**
 * The thread wakes this thread this long before the due time, which it then waits for in turns of
 * its event loop, reading replies meanwhile. It must cover the thread's oversleep (Atomics.wait
 * overshoots by ~0.1-0.2 ms here) and the time a sleeping event loop takes to wake, so it is
 * measured as it goes: it tracks the 99.5th percentile of how late wake-ups arrive, plus a margin.
 */
const EARLY = { initialMs: 0.5, minMs: 0.1, maxMs: 1, marginMs: 0.05, stepMs: 0.1 }
/** A late arrival raises the lead by a step, others lower it by this share of one: 1 in 200 then arrive late. */
const DOWN_SHARE = 1 / 199

/** The longest a turn of the event loop waits for the due time before it lets replies be read. */
const TURN_MS = 0.02
/**
 * Atomic loads between two clock reads while a turn waits (~1.5 µs here). Each performance.now()
 * makes a heap number, and reading it back to back (every ~40 ns) made enough garbage for
 * ~50 young-generation collections a second at 1000/s, whose pauses made sends late.
 */
const LOADS_BETWEEN_READS = 200

// The shared words: a sequence number the thread waits on (Int32), then the time to post at (Float64,
// ms on the monotonic clock both threads read through process.hrtime).
const SEQUENCE = 0
const POST_AT = 0

/** The thread: waits for a time to post at, sleeps until it, and posts its sequence number. */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads')
const { performance } = require('node:perf_hooks')
const words = new Int32Array(workerData.shared, 0, 1)
const times = new Float64Array(workerData.shared, 8, 1)
const offset = Number(process.hrtime.bigint()) / 1e6 - performance.now()
for (;;) {
  const sequence = Atomics.load(words, 0)
  if (sequence < 0) break
  const wait = times[0] - (performance.now() + offset)
  // Woken early by a new time (the sequence changed), or in time to post.
  if (!(wait <= 0)) { Atomics.wait(words, 0, sequence, wait); continue }
  parentPort.postMessage(sequence)
  Atomics.wait(words, 0, sequence)
}
`

/**
 * Precise wake-ups: a thread of its own wakes this one shortly before the due time, which it then
 * waits for in turns of its event loop. One wake-up at a time, each replacing the last. start()
 * before the first, close() at the end.
 */
export class PrecisePacer {
  constructor () {
    this.kind = 'precise'
    this.shared = new SharedArrayBuffer(16)
    this.words = new Int32Array(this.shared, 0, 1)
    this.times = new Float64Array(this.shared, 8, 1)
    this.times[POST_AT] = Infinity
    /** How long before the due time the thread posts (see EARLY). */
    this.earlyMs = EARLY.initialMs
    /** This thread's performance.now() plus this is the clock the pacing thread reads. */
    this.offset = 0
    this.worker = null
    this.callback = null
    this.dueAt = Infinity
    this.immediate = null
    /** Time spent waiting in turns of the event loop for a due time, all told: busy, but not work. */
    this.waitedMs = 0
    this.waitingSince = null
    this.onPost = (sequence) => this.posted(sequence)
    this.onTurn = () => this.turn()
  }

  /** Starts the pacing thread; resolves once it runs. */
  async start () {
    this.offset = Number(process.hrtime.bigint()) / 1e6 - performance.now()
    this.worker = new Worker(THREAD, { eval: true, workerData: { shared: this.shared } })
    this.worker.on('message', this.onPost)
    await new Promise((resolve, reject) => this.worker.once('online', resolve).once('error', reject))
    this.worker.unref()
  }

  /**
   * Calls `callback` once `at` has come, replacing any wake-up asked for before.
   * @param {number} at performance.now() time, ms
   * @param {() => void} callback
   */
  wakeAt (at, callback) {
    this.callback = callback
    this.dueAt = at
    if (at - performance.now() <= this.earlyMs) {
      this.postAt(Infinity)
      this.waitTurns()
    } else {
      this.clearImmediate()
      this.postAt(at - this.earlyMs + this.offset)
    }
  }

  /** Forgets the wake-up asked for, if any. */
  cancel () {
    this.callback = null
    this.dueAt = Infinity
    this.clearImmediate()
    this.postAt(Infinity)
  }

  clearImmediate () {
    clearImmediate(this.immediate)
    this.immediate = null
    this.stopWaiting()
  }

  /** Waits for the due time in turns of the event loop. */
  waitTurns () {
    this.waitingSince ??= performance.now()
    this.immediate ??= setImmediate(this.onTurn)
  }

  stopWaiting () {
    if (this.waitingSince === null) return
    this.waitedMs += performance.now() - this.waitingSince
    this.waitingSince = null
  }

  /** Tells the thread when to post (Infinity: never), waking it from any wait for the last time. */
  postAt (time) {
    if (time === Infinity && this.times[POST_AT] === Infinity) return
    // A wake-up pending keeps the process alive, as a timer would.
    if (time === Infinity) this.worker.unref()
    else if (this.times[POST_AT] === Infinity) this.worker.ref()
    this.times[POST_AT] = time
    Atomics.add(this.words, SEQUENCE, 1)
    Atomics.notify(this.words, SEQUENCE)
  }

  /** A post from the thread; stale when a later wakeAt or cancel replaced its time. */
  posted (sequence) {
    if (sequence !== Atomics.load(this.words, SEQUENCE) || this.callback === null) return
    // How late after the thread was to post it arrived, against the lead it had.
    const late = performance.now() - (this.dueAt - this.earlyMs) + EARLY.marginMs
    const step = late > this.earlyMs ? EARLY.stepMs : -EARLY.stepMs * DOWN_SHARE
    this.earlyMs = Math.min(EARLY.maxMs, Math.max(EARLY.minMs, this.earlyMs + step))
    this.postAt(Infinity)
    this.waitTurns()
  }

  /** One turn of the event loop before the due time: replies read, then the clock checked again. */
  turn () {
    this.immediate = null
    if (this.callback === null) return
    // Each turn also waits a little here: a turn per microsecond would make garbage (an Immediate
    // each) and so collections, which make sends late.
    const until = Math.min(this.dueAt, performance.now() + TURN_MS)
    let now = performance.now()
    while (now < until) now = this.readClockSoon()
    if (now < this.dueAt) {
      this.immediate = setImmediate(this.onTurn)
      return
    }
    this.stopWaiting()
    const callback = this.callback
    this.callback = null
    this.dueAt = Infinity
    callback()
  }

  /** performance.now() a little later: the loads between make no garbage, as the reads would. */
  readClockSoon () {
    for (let i = 0; i < LOADS_BETWEEN_READS; i++) Atomics.load(this.words, SEQUENCE)
    return performance.now()
  }

  /** Ends the thread. */
  async close () {
    if (!this.worker) return
    this.cancel()
    Atomics.store(this.words, SEQUENCE, -1)
    Atomics.notify(this.words, SEQUENCE)
    await this.worker.terminate()
    this.worker = null
  }
}

/** Wake-ups from Node's timers: no thread and no CPU between them, but late by up to a millisecond or more. */
export class TimerPacer {
  constructor () {
    this.kind = 'timer'
    this.timer = null
    /** @see PrecisePacer#waitedMs: timers wait asleep. */
    this.waitedMs = 0
  }

  async start () {}

  /** @see PrecisePacer#wakeAt */
  wakeAt (at, callback) {
    this.cancel()
    // Node's timers run on the event loop's millisecond clock and may fire a little before `at`:
    // then again for the rest.
    this.timer = setTimeout(() => {
      this.timer = null
      if (performance.now() < at) this.wakeAt(at, callback)
      else callback()
    }, Math.max(0, Math.ceil(at - performance.now())))
  }

  cancel () {
    clearTimeout(this.timer)
    this.timer = null
  }

  async close () {
    this.cancel()
  }
}
