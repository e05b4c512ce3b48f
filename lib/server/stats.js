// The server's counters: shared by all connections, read by the summary lines and by /metrics. A
// server of several processes (--processes) sums its processes' snapshots into one ServerStats.
// The events are counted here, by name; the summary line is printed from here alone.

/** Time between the "while busy" summary lines. */
export const SUMMARY_INTERVAL_MS = 5000

/**
 * Connections accepted are also counted in buckets of the epoch this long, the last OPENED_BUCKETS
 * of them summed: a 100 ms window sliding at 10 ms, so a burst straddling an edge counts whole.
 */
const OPENED_BUCKET_MS = 10
const OPENED_BUCKETS = 10

/**
 * Bytes in whole megabytes, for the summary lines.
 * @param {number} bytes
 * @returns {number}
 */
export function megabytes (bytes) {
  return Math.round(bytes / 1024 / 1024)
}

/** @returns {{rss: number, peakRss: number}} this process's resident memory now and at its peak, in bytes */
function processMemory () {
  return { rss: process.memoryUsage.rss(), peakRss: process.resourceUsage().maxRSS * 1024 }
}

/** Counters shared by all connections, and the summary line built from them. */
export class ServerStats {
  constructor () {
    this.openConnections = 0
    this.totalConnections = 0
    /**
     * The most connections accepted in any 100 ms; the last 10 ms buckets (a ring, by bucket index
     * of the epoch), the newest bucket's index, and the ring's sum.
     */
    this.peakOpenedPer100ms = 0
    this.openedBuckets = new Uint32Array(OPENED_BUCKETS)
    this.openedBucket = 0
    this.openedInWindow = 0
    /** Upgrades refused: connection limit, or a URL naming no valid test, format or direction. */
    this.refused = 0
    this.unauthorized = 0
    this.refusedSchemas = 0
    /** Protocol violations ws reported (invalid UTF-8, oversized frames). */
    this.protocolErrors = 0
    /** Connections closed unaccepted, at the process's socket limit or its open-file limit (EMFILE). */
    this.dropped = 0
    /** Connections closed for not finishing their upgrade (or request) within --handshake-timeout. */
    this.handshakeTimeouts = 0
    /** Fan-out subscribers connected now. */
    this.subscribers = 0
    /** Fan-out subscribers dropped for having more than --max-buffered bytes unsent. */
    this.slowSubscribers = 0
    /** Fan-out publishes sent again to subscribers that came back asking (--replay). */
    this.replayed = 0
    /** Messages and decode errors by format and test: `${format} ${test}` -> counters. */
    this.byTarget = new Map()
    this.lastSummaryTotal = 0
    /** Processes these counters cover: this one, or every process of a cluster once summed. */
    this.processes = 1
    /** Where the memory figure comes from: this process now, or the processes of the last sum. */
    this.readMemory = processMemory
  }

  /** @returns {{rss: number, peakRss: number}} the resident memory of the processes counted */
  get memory () {
    return this.readMemory()
  }

  /**
   * A WebSocket connection opened; `closed` is called when it goes.
   * @param {number} [now] Date.now(), given by tests
   */
  opened (now = Date.now()) {
    this.openConnections++
    this.totalConnections++
    // How hard clients coming back together hit it (a reconnect storm), by when it accepted them:
    // buckets older than 100 ms leave the ring (at most all of them, however long it was quiet).
    const bucket = Math.floor(now / OPENED_BUCKET_MS)
    const ring = this.openedBuckets
    for (let next = this.openedBucket + 1; next <= bucket && next <= this.openedBucket + OPENED_BUCKETS; next++) {
      this.openedInWindow -= ring[next % OPENED_BUCKETS]
      ring[next % OPENED_BUCKETS] = 0
    }
    // A clock stepped back counts in the newest bucket.
    this.openedBucket = Math.max(this.openedBucket, bucket)
    ring[this.openedBucket % OPENED_BUCKETS]++
    this.peakOpenedPer100ms = Math.max(this.peakOpenedPer100ms, ++this.openedInWindow)
  }

  closed () {
    this.openConnections--
  }

  /**
   * Counts one event besides messages and connections.
   * @param {'refused'|'unauthorized'|'refusedSchemas'|'protocolErrors'|'dropped'|'handshakeTimeouts'|'slowSubscribers'|'replayed'} counter
   */
  count (counter) {
    this[counter]++
  }

  /**
   * This process's counters and memory as plain data, for the process that sums a cluster's.
   * @returns {StatsSnapshot}
   */
  snapshot () {
    return {
      ...Object.fromEntries(COUNTERS.map((field) => [field, this[field]])),
      byTarget: [...this.byTarget.values()]
        .map(({ format, test, messages, errors, deliveries, codecMs }) => ({
          format, test, messages, errors, deliveries, codecMs
        })),
      memory: processMemory()
    }
  }

  /**
   * Sets every counter to the sum of the snapshots (each process's latest), keeping the marks the
   * summary line rates from; the memory is the snapshots' plus `own`, the summing process's.
   * @param {StatsSnapshot[]} snapshots
   * @param {{rss: number, peakRss: number}} [own]
   */
  sum (snapshots, own = processMemory()) {
    for (const field of COUNTERS) this[field] = snapshots.reduce((total, snapshot) => total + snapshot[field], 0)
    const zero = { messages: 0, errors: 0, deliveries: 0, codecMs: 0 }
    for (const counters of this.byTarget.values()) Object.assign(counters, zero)
    const targets = snapshots.flatMap(({ byTarget }) => byTarget)
    for (const { format, test, messages, errors, deliveries, codecMs } of targets) {
      const counters = this.forTarget(format, test)
      counters.messages += messages
      counters.errors += errors
      counters.deliveries += deliveries
      counters.codecMs += codecMs
    }
    const memories = [own, ...snapshots.map((snapshot) => snapshot.memory)]
    const memory = {
      rss: memories.reduce((total, { rss }) => total + rss, 0),
      peakRss: memories.reduce((total, { peakRss }) => total + peakRss, 0)
    }
    this.processes = memories.length
    this.readMemory = () => memory
  }

  /**
   * The counters of one format and test, shared by every connection that names them.
   * @param {string} format
   * @param {string} test
   * @returns {{format: string, test: string, messages: number, errors: number, deliveries: number,
   *   codecMs: number, lastMessages: number, lastDeliveries: number}} messages counts publishes for fan-out,
   *   deliveries what they became; codecMs the time in the codec (decoding, encoding replies), timed around each call
   */
  forTarget (format, test) {
    const key = `${format} ${test}`
    if (!this.byTarget.has(key)) {
      const counters = {
        format, test, messages: 0, errors: 0, deliveries: 0, codecMs: 0, lastMessages: 0, lastDeliveries: 0
      }
      this.byTarget.set(key, counters)
    }
    return this.byTarget.get(key)
  }

  /** @returns {{messages: number, errors: number, deliveries: number}} over every format and test */
  totals () {
    let messages = 0
    let errors = 0
    let deliveries = 0
    for (const counters of this.byTarget.values()) {
      messages += counters.messages
      errors += counters.errors
      deliveries += counters.deliveries
    }
    return { messages, errors, deliveries }
  }

  /** Everything a summary line counts, to tell whether anything happened since the last one. */
  activity () {
    const { messages, errors, deliveries } = this.totals()
    const refusals = this.refused + this.unauthorized + this.handshakeTimeouts
    return messages + errors + deliveries + refusals + this.protocolErrors + this.dropped + this.slowSubscribers
  }

  /** @returns {boolean} whether a summary line is worth printing */
  hasActivitySinceLastSummary () {
    return this.activity() !== this.lastSummaryTotal || this.openConnections > 0
  }

  /**
   * The periodic line: open connections, each format's rate since the last line, the totals.
   * @param {number} intervalMs time since the previous summary, for the rates
   * @returns {string}
   */
  summaryLine (intervalMs) {
    const perFormat = new Map()
    for (const counters of this.byTarget.values()) {
      const counted = perFormat.get(counters.format) ?? { messages: 0, deliveries: 0 }
      counted.messages += counters.messages - counters.lastMessages
      counted.deliveries += counters.deliveries - counters.lastDeliveries
      perFormat.set(counters.format, counted)
      counters.lastMessages = counters.messages
      counters.lastDeliveries = counters.deliveries
    }
    const perSecond = (count) => Math.round(count * 1000 / intervalMs).toLocaleString('en-US')
    const rates = [...perFormat].map(([format, { messages, deliveries }]) =>
      `${format} ${perSecond(messages)} msg/s${deliveries > 0 ? ` (${perSecond(deliveries)} deliveries/s)` : ''}`)
    this.lastSummaryTotal = this.activity()
    return `${this.openConnections} connections, ${rates.join(', ') || 'no messages'}, ${this.countsLine()}`
  }

  /** @returns {string} totals since start, and memory: the part of every summary line that only grows (rss aside) */
  countsLine () {
    const { messages, errors, deliveries } = this.totals()
    const { rss, peakRss } = this.memory
    // Summed peaks bound the processes' simultaneous peak from above: each may have peaked at another time.
    const where = this.processes > 1 ? ` summed over ${this.processes} processes` : ''
    // Rare, and a sign of idle or slow clients holding files: named only once it happened.
    const timeouts = this.handshakeTimeouts > 0 ? `${this.handshakeTimeouts} handshake timeouts, ` : ''
    // Fan-out's part, once it was used: how much it delivered, and the subscribers dropped for falling behind.
    const fanout = deliveries > 0 || this.subscribers > 0 || this.slowSubscribers > 0
      ? `${this.subscribers} subscribers, ${deliveries.toLocaleString('en-US')} deliveries, ` +
        (this.replayed > 0 ? `${this.replayed.toLocaleString('en-US')} of them replayed, ` : '') +
        `${this.slowSubscribers} slow subscribers dropped, `
      : ''
    return `${messages.toLocaleString('en-US')} messages, ${fanout}${errors} decode errors, ` +
      `${this.protocolErrors} protocol errors, ${this.dropped} dropped connections, ${this.refused} refused upgrades, ` +
      `${this.unauthorized} unauthorized, ${this.refusedSchemas} refused schemas, ${timeouts}` +
      `rss ${megabytes(rss)} MB (peak ${megabytes(peakRss)} MB)${where}`
  }
}

/**
 * Prints a summary line every SUMMARY_INTERVAL_MS while the server is busy, for one process or a
 * cluster alike: `refresh` first brings the counters up to date (a cluster's primary gathers its
 * workers' snapshots); one still under way when the next line is due skips that line.
 * @param {ServerStats} stats
 * @param {(line: string) => void} log
 * @param {() => Promise<void>} [refresh]
 * @returns {() => void} stops the lines
 */
export function startSummaries (stats, log, refresh = async () => {}) {
  let refreshing = false
  const timer = setInterval(async () => {
    if (refreshing) return
    refreshing = true
    try {
      await refresh()
      if (stats.hasActivitySinceLastSummary()) log(stats.summaryLine(SUMMARY_INTERVAL_MS))
    } catch {
      // A cluster worker that exits mid-question is reported through `lost`; a stuck one shows in the next line.
    } finally {
      refreshing = false
    }
  }, SUMMARY_INTERVAL_MS).unref()
  return () => clearInterval(timer)
}

/**
 * The counters besides those by format and test: what a snapshot carries and a sum adds up (the
 * processes' busiest 100 ms too, which bounds theirs together from above: each may have had it at another time).
 */
const COUNTERS = ['openConnections', 'totalConnections', 'peakOpenedPer100ms', 'refused', 'unauthorized', 'refusedSchemas', 'protocolErrors', 'dropped',
  'handshakeTimeouts', 'subscribers', 'slowSubscribers', 'replayed']

/**
 * @typedef {object} StatsSnapshot one process's counters, as ServerStats#snapshot gives them
 * @property {number} openConnections
 * @property {number} totalConnections
 * @property {number} peakOpenedPer100ms
 * @property {number} refused
 * @property {number} unauthorized
 * @property {number} refusedSchemas
 * @property {number} protocolErrors
 * @property {number} dropped
 * @property {number} handshakeTimeouts
 * @property {number} subscribers
 * @property {number} slowSubscribers
 * @property {number} replayed
 * @property {{format: string, test: string, messages: number, errors: number, deliveries: number}[]} byTarget
 * @property {{rss: number, peakRss: number}} memory
 */
