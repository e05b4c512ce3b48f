// How long connections took to open, step by step (TCP connect, TLS handshake, WebSocket upgrade),
// and why the ones that failed did: what k6 calls ws_connecting, for every report. Connections
// open outside the measured message path, so recording here costs the hot path nothing.
import { createLatencyHistogram, encodeHistogram } from '../histogram.js'

/** The steps of opening a connection, in order, and their total. */
export const CONNECT_STEPS = ['tcp', 'tls', 'upgrade', 'total']

/**
 * @typedef {object} ConnectTiming one connection's opening, µs
 * @property {number} tcpUs from the attempt to the TCP connection
 * @property {number|null} tlsUs the TLS handshake (null over ws://)
 * @property {number} upgradeUs from the connection (and TLS) to the server's 101
 */

/** Every connection a run opened (or reopened) and every attempt that failed, by cause. */
export class ConnectTimes {
  constructor () {
    /** Per step, µs: tcp, tls, upgrade and their total. */
    this.histograms = Object.fromEntries(CONNECT_STEPS.map((step) => [step, createLatencyHistogram()]))
    /** Failed attempts by cause: refused, timeout, tls, `status 503` ... */
    this.failures = {}
  }

  /** @param {ConnectTiming} timing */
  record ({ tcpUs, tlsUs, upgradeUs }) {
    this.histograms.tcp.recordValue(Math.max(1, tcpUs))
    if (tlsUs !== null) this.histograms.tls.recordValue(Math.max(1, tlsUs))
    this.histograms.upgrade.recordValue(Math.max(1, upgradeUs))
    this.histograms.total.recordValue(Math.max(1, tcpUs + (tlsUs ?? 0) + upgradeUs))
  }

  /** @param {string} cause why an attempt failed (connect() rejects with it as the error's cause) */
  fail (cause) {
    this.failures[cause] = (this.failures[cause] ?? 0) + 1
  }

  /** @returns {number} the attempts that failed, whatever their cause */
  failedAttempts () {
    return Object.values(this.failures).reduce((sum, count) => sum + count, 0)
  }

  /**
   * What the report keeps: the histograms encoded (a merge adds them), the failures.
   * @returns {{histograms: Record<string, string|null>, failures: Record<string, number>}}
   */
  result () {
    return {
      histograms: Object.fromEntries(CONNECT_STEPS.map((step) => {
        const histogram = this.histograms[step]
        return [step, histogram.totalCount > 0 ? encodeHistogram(histogram) : null]
      })),
      failures: { ...this.failures }
    }
  }
}
