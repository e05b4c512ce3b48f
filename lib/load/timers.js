// Named timers of one owner: replacing one by name clears the old, and clearAll ends them all;
// and the seconds of a time series, closed on their boundaries.
import { performance } from 'node:perf_hooks'

/** Timers by name, all cleared at once when their owner (a phase, the subscribers) ends. */
export class Timers {
  constructor () {
    this.handles = new Map()
    /** clearAll() was called: the owner has ended, and sets no timer again. */
    this.ended = false
    /** @type {Seconds|null} its time series' seconds, once counted */
    this.seconds = null
  }

  every (name, ms, callback) {
    this.clear(name)
    if (!this.ended) this.handles.set(name, setInterval(callback, ms))
  }

  after (name, ms, callback) {
    this.clear(name)
    if (!this.ended) this.handles.set(name, setTimeout(callback, ms))
  }

  clear (name) {
    clearTimeout(this.handles.get(name)) // clears an interval too
    this.handles.delete(name)
  }

  /** Closes the seconds of a time series on their boundaries from `startedAt` (see Seconds). */
  countSeconds (startedAt, onSecond) {
    this.seconds = new Seconds(this, startedAt, onSecond)
  }

  /** An event at `now`: the second it is past, if any, closes before the event counts. Hot path. */
  reached (now) {
    this.seconds?.passed(now)
  }

  clearAll () {
    this.ended = true
    for (const name of [...this.handles.keys()]) this.clear(name)
  }
}

/** A second, ms. */
const SECOND_MS = 1000

/**
 * The seconds of a time series, each closed on its boundary counted from the start: by the first
 * event at or past it (passed(now), on the hot path), or else by a timer of its owner's. An
 * interval timer drifts, firing late each time: it counted the first replies of the next second
 * into this one (a ramp's seconds read 105, 511 and 384 replies against 100, 500 and 400 due).
 */
export class Seconds {
  /**
   * @param {Timers} timers its owner's, which end with it
   * @param {number} startedAt performance.now() ms, the first second's start
   * @param {() => void} onSecond closes the second that ended
   */
  constructor (timers, startedAt, onSecond) {
    this.timers = timers
    this.onSecond = onSecond
    this.endsAt = startedAt + SECOND_MS
    this.arm()
  }

  /**
   * Closes the second if `now` is past its end, before the event at `now` is counted; nothing once
   * its owner has ended (a reply after the end belongs to no second). Hot path.
   */
  passed (now) {
    if (now >= this.endsAt && !this.timers.ended) this.close()
  }

  close () {
    this.endsAt += SECOND_MS
    this.arm()
    this.onSecond()
  }

  /** The timer for a second in which nothing happens: it may fire a little early, and then waits again. */
  arm () {
    this.timers.after('second', Math.max(0, this.endsAt - performance.now()), () => {
      if (performance.now() >= this.endsAt) this.close()
      else this.arm()
    })
  }
}
