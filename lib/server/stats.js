// The server's counters: shared by all connections, read by the summary lines and by /metrics.

/**
 * Bytes in whole megabytes, for the summary lines.
 * @param {number} bytes
 * @returns {number}
 */
export function megabytes (bytes) {
  return Math.round(bytes / 1024 / 1024)
}

/** Counters shared by all connections, and the summary line built from them. */
export class ServerStats {
  constructor () {
    this.openConnections = 0
    this.totalConnections = 0
    /** Upgrades refused: connection limit, or a URL naming no valid test, format or direction. */
    this.refused = 0
    this.unauthorized = 0
    this.refusedSchemas = 0
    /** Protocol violations ws reported (invalid UTF-8, oversized frames). */
    this.protocolErrors = 0
    /** Messages and decode errors by format and test: `${format} ${test}` -> counters. */
    this.byTarget = new Map()
    this.lastSummaryTotal = 0
  }

  /**
   * The counters of one format and test, shared by every connection that names them.
   * @param {string} format
   * @param {string} test
   * @returns {{format: string, test: string, messages: number, errors: number, lastMessages: number}}
   */
  forTarget (format, test) {
    const key = `${format} ${test}`
    if (!this.byTarget.has(key)) this.byTarget.set(key, { format, test, messages: 0, errors: 0, lastMessages: 0 })
    return this.byTarget.get(key)
  }

  /** @returns {{messages: number, errors: number}} over every format and test */
  totals () {
    let messages = 0
    let errors = 0
    for (const counters of this.byTarget.values()) {
      messages += counters.messages
      errors += counters.errors
    }
    return { messages, errors }
  }

  /** Everything a summary line counts, to tell whether anything happened since the last one. */
  activity () {
    const { messages, errors } = this.totals()
    return messages + errors + this.refused + this.unauthorized + this.protocolErrors
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
      perFormat.set(counters.format, (perFormat.get(counters.format) ?? 0) + counters.messages - counters.lastMessages)
      counters.lastMessages = counters.messages
    }
    const rates = [...perFormat].map(([format, count]) => `${format} ${Math.round(count * 1000 / intervalMs).toLocaleString('en-US')} msg/s`)
    this.lastSummaryTotal = this.activity()
    return `${this.openConnections} connections, ${rates.join(', ') || 'no messages'}, ${this.countsLine()}`
  }

  /** @returns {string} totals since start, and memory: the part of every summary line that only grows (rss aside) */
  countsLine () {
    const { messages, errors } = this.totals()
    return `${messages.toLocaleString('en-US')} messages, ${errors} decode errors, ` +
      `${this.protocolErrors} protocol errors, ${this.refused} refused upgrades, ${this.unauthorized} unauthorized, ` +
      `${this.refusedSchemas} refused schemas, ` +
      `rss ${megabytes(process.memoryUsage.rss())} MB (peak ${megabytes(process.resourceUsage().maxRSS * 1024)} MB)`
  }
}
