// What wakes the open loop when its next message is due. Node's timers fire at millisecond
// granularity, up to a millisecond or more late, and the corrected latency charges that lateness
// to the server (at 1000/s on loopback it was ~0.7 ms of a 1 ms p50). The thread pacers let this
// thread's event loop sleep, reading replies, while a thread of their own sleeps (Atomics.wait)
// until shortly before the due time and wakes it; the last stretch it waits in turns of its event
// loop, which still read replies, and sends on time. Those turns are CPU spent on waiting, not on
// messages: how much is bounded (precise) or not (spin), and counted apart (usage()).
import { Worker } from 'node:worker_threads'
import { performance } from 'node:perf_hooks'
import { threadCpuNs } from '../cpu-time.js'
import { availableCpu } from './cpu-quota.js'
import { PacingBudget, TICK_MS } from './budget.js'
import { currentThreadId, realtimeRefusal, scheduleThread } from './realtime.js'
import { UsageError } from '../errors.js'

/**
 * Precise pacing's default: the thread posts this long before the due time, the longest the
 * event loop then waits for it. Chosen from npm run bench:rate (docs/method.md, "Pacing").
 */
export const PRECISE_WINDOW_US = 150
/** The share of one core precise pacing may spend, its thread's wake-ups and its waiting (lib/load/budget.js). */
export const PRECISE_BUDGET = 0.15

/**
 * Spin pacing (the pacing before the budget): the lead tracks the 99.5th percentile of how late
 * the thread's posts arrive, plus a margin, within these bounds, whatever it costs.
 */
const SPIN = { initialMs: 0.5, minMs: 0.1, maxMs: 1, marginMs: 0.05, stepMs: 0.1 }
/** A late arrival raises spin's lead by a step, others lower it by this share of one: 1 in 200 then arrive late. */
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

/**
 * The thread: first posts its thread id (its CPU is read from /proc by it), then waits for a time
 * to post at, sleeps until it, and posts its sequence number.
 */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads')
const { performance } = require('node:perf_hooks')
let tid = null
try { tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()) } catch {}
parentPort.postMessage({ tid })
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
 * Reads a --pacing setting: precise (its default window), precise:<µs> (the window), realtime
 * (precise, its pacing thread and the sending thread at real-time priority), spin or timer.
 * @param {string} text
 * @returns {{kind: 'precise', windowUs: number, realtime?: boolean}|{kind: 'spin'|'timer'}|null} null when it is none of them
 */
export function parsePacing (text) {
  if (text === 'spin' || text === 'timer') return { kind: text }
  if (text === 'realtime') return { kind: 'precise', windowUs: PRECISE_WINDOW_US, realtime: true }
  const match = /^precise(?::(\d+(?:\.\d+)?))?$/.exec(text)
  if (!match) return null
  const windowUs = match[1] === undefined ? PRECISE_WINDOW_US : Number(match[1])
  return windowUs <= 1000 ? { kind: 'precise', windowUs } : null
}

/**
 * A --pacing setting as given, checked: one this process cannot run is refused in one line.
 * @param {string} text
 * @returns {string} text
 * @throws {UsageError} an unknown setting, or realtime where real-time priority is not permitted
 */
export function checkPacing (text) {
  const setting = parsePacing(text)
  if (!setting) throw new UsageError(`--pacing ${text}: give precise, precise:<µs> (up to 1000), realtime, spin or timer`)
  const refusal = setting.realtime ? realtimeRefusal() : null
  if (refusal) throw new UsageError(`--pacing realtime: ${refusal}; precise is the nearest without it`)
  return text
}

/**
 * The pacing a run takes when --pacing is not given: precise, unless this process has no CPU to
 * spare for a pacing thread and its waiting, then timer: under a CPU quota below one core (a
 * container's or pod's limit), or with a thread that sends (--workers) for every core it may use.
 * @param {number} workers the run's --workers
 * @param {{cores: number, quota: number|null}} [cpu] what this process may use (lib/load/cpu-quota.js)
 * @returns {{pacing: string, reason: string|null}} reason: why not precise, one line for the report
 */
export function defaultPacing (workers, cpu = availableCpu()) {
  if (cpu.quota !== null && cpu.quota < 1) {
    return { pacing: 'timer', reason: `the default under a CPU quota of ${round2(cpu.quota)} cores, below one (cgroup)` }
  }
  if (workers >= cpu.cores) {
    const threads = workers === 1 ? 'one sending thread' : `--workers ${workers}`
    return { pacing: 'timer', reason: `the default with ${threads} on ${round2(cpu.cores)} core(s): none to spare for pacing threads` }
  }
  return { pacing: 'precise', reason: null }
}

const round2 = (value) => Math.round(value * 100) / 100

/**
 * The pacer a --pacing setting names (the default: precise), not started.
 * @param {string} [pacing]
 * @param {string|null} [reason] why this pacing, when chosen for the run (defaultPacing), for its report
 * @param {number} [tickMs] precise pacing's tick (lib/load/budget.js), when not Node's timers' millisecond
 * @returns {ThreadPacer|TimerPacer}
 */
export function createPacer (pacing = 'precise', reason = null, tickMs = TICK_MS) {
  const setting = parsePacing(pacing)
  if (!setting) throw new Error(`unknown pacing ${pacing}`)
  const pacer = setting.kind === 'timer' ? new TimerPacer() : new ThreadPacer({ ...setting, tickMs })
  pacer.reason = reason
  return pacer
}

/**
 * Wake-ups from a thread of its own, which wakes this one shortly before the due time, which it
 * then waits for in turns of its event loop. One wake-up at a time, each replacing the last.
 * start() before the first, close() at the end.
 */
export class ThreadPacer {
  /**
   * @param {{kind: 'precise', windowUs: number, tickMs?: number}|{kind: 'spin'}} [setting] precise: a fixed lead
   *   within PRECISE_BUDGET, messages grouped a tick apart beyond it; spin: a lead that follows the
   *   thread's lateness at any cost
   */
  constructor (setting = { kind: 'precise', windowUs: PRECISE_WINDOW_US }) {
    const { kind, windowUs, tickMs = TICK_MS, realtime = false } = setting
    this.kind = kind
    /** Both threads at real-time priority while the pacer runs (lib/load/realtime.js). */
    this.realtime = realtime
    /** The thread that started the pacer, and sends: raised with the pacing thread, lowered at close. */
    this.senderTid = null
    const window = realtime ? 'realtime' : kind === 'precise' && windowUs !== PRECISE_WINDOW_US ? `precise:${windowUs}` : kind
    this.name = kind === 'precise' && tickMs !== TICK_MS ? `${window} (${tickMs} ms tick)` : window
    /** Why this pacing, when the run chose it (see defaultPacing). */
    this.reason = null
    this.shared = new SharedArrayBuffer(16)
    this.words = new Int32Array(this.shared, 0, 1)
    this.times = new Float64Array(this.shared, 8, 1)
    this.times[POST_AT] = Infinity
    /** Precise: what its pacing may spend (null: spin's, which spends what it takes). */
    this.budget = kind === 'precise'
      ? new PacingBudget(PRECISE_BUDGET, windowUs / 1000, () => this.usage().threadMs, tickMs)
      : null
    /** Spin: how long before the due time the thread posts (precise asks its budget). */
    this.earlyMs = SPIN.initialMs
    /** This thread's performance.now() plus this is the clock the pacing thread reads. */
    this.offset = 0
    this.worker = null
    this.tid = null
    this.callback = null
    this.dueAt = Infinity
    this.immediate = null
    /** Time spent waiting in turns of the event loop for due times, all told: CPU, but not work. */
    this.waitedMs = 0
    this.onPost = (sequence) => this.posted(sequence)
    this.onTurn = () => this.turn()
  }

  /** Starts the pacing thread; resolves once it runs. */
  async start () {
    this.offset = Number(process.hrtime.bigint()) / 1e6 - performance.now()
    this.budget?.accrue(performance.now())
    this.worker = new Worker(THREAD, { eval: true, workerData: { shared: this.shared } })
    const { tid } = await new Promise((resolve, reject) => this.worker.once('message', resolve).once('error', reject))
    this.tid = tid
    this.worker.on('message', this.onPost)
    this.worker.unref()
    if (this.realtime) this.raise()
  }

  /**
   * Realtime: the pacing thread and this one at real-time priority. Asleep at normal priority, each
   * was now and then a millisecond late to wake (npm run bench:rate, the machine floor); both must
   * be on time, as a post on time that the sending thread answers late is late.
   */
  raise () {
    this.senderTid = currentThreadId()
    if (this.tid === null || this.senderTid === null) throw new Error('realtime pacing needs /proc/thread-self (Linux)')
    scheduleThread(this.tid, true)
    scheduleThread(this.senderTid, true)
  }

  /**
   * Calls `callback` once `at` has come, replacing any wake-up asked for before.
   * @param {number} at performance.now() time, ms
   * @param {() => void} callback
   */
  wakeAt (at, callback) {
    this.callback = callback
    this.dueAt = at
    const now = performance.now()
    this.budget?.accrue(now)
    const postAt = this.budget ? this.budget.postAt(at, now) : at - this.earlyMs
    if (postAt <= now) {
      this.postAt(Infinity)
      this.immediate ??= setImmediate(this.onTurn)
    } else {
      this.clearImmediate()
      this.postAt(postAt + this.offset)
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
    if (this.kind === 'spin') {
      // How late after the thread was to post it arrived, against the lead it had.
      const late = performance.now() - (this.dueAt - this.earlyMs) + SPIN.marginMs
      const step = late > this.earlyMs ? SPIN.stepMs : -SPIN.stepMs * DOWN_SHARE
      this.earlyMs = Math.min(SPIN.maxMs, Math.max(SPIN.minMs, this.earlyMs + step))
    }
    this.disarm()
    this.budget?.woke()
    this.turn()
  }

  /**
   * After a post: no wake-up pending. The thread waits on the sequence already, so it is not woken
   * to be told (a wake-up costs ~30 µs of CPU here, one per message): the next wakeAt wakes it.
   */
  disarm () {
    this.times[POST_AT] = Infinity
    this.worker.unref()
  }

  /** One turn of the event loop before the due time: replies read, then the clock checked again. */
  turn () {
    this.immediate = null
    if (this.callback === null) return
    // Each turn waits a little here, not a turn per microsecond: each would make garbage (an
    // Immediate) and so collections, which make sends late.
    const from = performance.now()
    const until = Math.min(this.dueAt, from + TURN_MS)
    let now = from
    while (now < until) now = this.readClockSoon()
    this.waitedMs += now - from
    this.budget?.waited(now - from)
    if (now < this.dueAt) {
      this.immediate = setImmediate(this.onTurn)
      return
    }
    const callback = this.callback
    this.callback = null
    this.dueAt = Infinity
    this.budget?.sent(now)
    callback()
  }

  /** performance.now() a little later: the loads between make no garbage, as the reads would. */
  readClockSoon () {
    for (let i = 0; i < LOADS_BETWEEN_READS; i++) Atomics.load(this.words, SEQUENCE)
    return performance.now()
  }

  /**
   * What pacing has cost so far, all told: the turns' waiting on this thread, and the pacing
   * thread's own CPU (null where /proc does not give it).
   * @returns {{waitedMs: number, threadMs: number|null}}
   */
  usage () {
    const ns = this.tid === null ? null : threadCpuNs(this.tid)
    return { waitedMs: this.waitedMs, threadMs: ns === null ? null : ns / 1e6 }
  }

  /** Ends the thread. */
  async close () {
    if (!this.worker) return
    this.cancel()
    // What this thread does after the run (its report) runs at normal priority again.
    if (this.senderTid !== null) scheduleThread(this.senderTid, false)
    this.senderTid = null
    Atomics.store(this.words, SEQUENCE, -1)
    Atomics.notify(this.words, SEQUENCE)
    await this.worker.terminate()
    this.worker = null
  }
}

/** Wake-ups from Node's timers: no thread and no CPU between them, but late by up to a millisecond or more. */
export class TimerPacer {
  constructor () {
    this.name = 'timer'
    /** @see ThreadPacer#reason */
    this.reason = null
    this.timer = null
  }

  async start () {}

  /** @see ThreadPacer#wakeAt */
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

  /** @see ThreadPacer#usage: timers wait asleep, with no thread of their own. */
  usage () {
    return { waitedMs: 0, threadMs: 0 }
  }

  async close () {
    this.cancel()
  }
}
