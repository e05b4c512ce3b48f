// --reconnect: when to try again, and what the report says about coming back. Attempts wait with
// exponential backoff and full jitter (a random wait up to base x 2^attempt, at most the cap), the
// first one too, so clients dropped together by a restarting server do not all knock at once.
import { performance } from 'node:perf_hooks'
import { createLatencyHistogram, encodeHistogram } from '../histogram.js'

/** Backoff defaults: the first attempt within 100 ms of the drop, none waiting longer than 5 s. */
export const DEFAULT_BACKOFF = Object.freeze({ baseMs: 100, capMs: 5000 })

/** The reopenings are counted in windows this long, to see how hard the server was hit. */
const WINDOW_MS = 100

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
    /** Reopenings per 100 ms window of the epoch: window -> count. */
    this.windows = new Map()
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

  /** A connection that dropped at `since` is open again. */
  back (since) {
    const now = performance.now()
    this.count++
    this.gapMs += now - since
    this.gaps.recordValue(Math.max(1, Math.round((now - since) * 1000)))
    const window = Math.floor((performance.timeOrigin + now) / WINDOW_MS)
    this.windows.set(window, (this.windows.get(window) ?? 0) + 1)
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
   * the longest outage until every connection was back, what was lost, and the reopenings per window.
   * @returns {{count: number, gapMs: number, backoff: {baseMs: number, capMs: number}, allBackMs: number, lost: number,
   *   histogram: string|null, windows: Record<string, number>}}
   */
  result () {
    return {
      count: this.count,
      gapMs: Math.round(this.gapMs),
      backoff: { ...this.backoff },
      allBackMs: Math.round(this.allBackMs),
      lost: this.lost,
      histogram: this.count > 0 ? encodeHistogram(this.gaps) : null,
      windows: Object.fromEntries(this.windows)
    }
  }
}
