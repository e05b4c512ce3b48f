// Reading a server's GET /metrics (lib/server/metrics.js writes it; the reference servers write the
// same names): the Prometheus text exposition format, fetched and parsed here alone, for compare,
// the benchmarks and the tests.
import http from 'node:http'
import https from 'node:https'
import tls from 'node:tls'
import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import { METRICS_PATH } from '../protocol.js'

/** One scrape of a server's metrics. */
class Metrics {
  /** @param {string} text the exposition text */
  constructor (text) {
    this.families = parsePrometheusTextFormat(text)
  }

  /**
   * @param {string} name
   * @param {Record<string, string>} [labels] labels a sample must have (it may have others)
   * @returns {Array<{value: string, labels?: Record<string, string>}>} the metric's samples that have them
   */
  samples (name, labels = {}) {
    return (this.families.find((family) => family.name === name)?.metrics ?? [])
      .filter((sample) => Object.entries(labels).every(([key, value]) => sample.labels?.[key] === value))
  }

  /**
   * @param {string} name
   * @param {Record<string, string>} [labels]
   * @returns {number|undefined} the first sample with those labels, undefined when there is none
   */
  value (name, labels = {}) {
    const [sample] = this.samples(name, labels)
    return sample ? Number(sample.value) : undefined
  }

  /**
   * @param {string} name
   * @param {Record<string, string>} [labels]
   * @returns {number} every sample with those labels, summed (0 with none): a counter over all its formats and tests
   */
  sum (name, labels = {}) {
    return this.samples(name, labels).reduce((total, sample) => total + Number(sample.value), 0)
  }
}

/**
 * Parses exposition text already in hand.
 * @param {string} text
 * @returns {Metrics}
 */
export function parseMetrics (text) {
  return new Metrics(text)
}

/**
 * GETs a server's /metrics over http:// or https://.
 * @param {string} serverUrl where it listens: ws://HOST:PORT or wss://HOST:PORT (http:// and https:// too)
 * @param {{ca?: string}} [options] ca: the certificate a wss:// server is trusted with, beside Node's roots
 * @returns {Promise<Metrics>}
 * @throws {Error} when the request fails, or with `URL answered STATUS` for anything but a 200
 */
export async function readMetrics (serverUrl, { ca } = {}) {
  return parseMetrics(await getText(`${serverUrl.replace(/^ws/, 'http')}${METRICS_PATH}`, ca))
}

/** GET over http:// or https:// (trusting `ca` beside Node's roots): the body of a 200, else an error. */
function getText (url, ca) {
  const secure = url.startsWith('https:')
  return new Promise((resolve, reject) => {
    const options = secure && ca ? { ca: [...tls.rootCertificates, ca] } : {}
    const request = (secure ? https : http).get(url, options, (response) => {
      let body = ''
      response.setEncoding('utf8').on('data', (chunk) => { body += chunk })
      response.on('end', () => response.statusCode === 200 ? resolve(body) : reject(new Error(`${url} answered ${response.statusCode}`)))
    })
    request.on('error', reject)
  })
}
