// --out prometheus-rw=URL: Prometheus remote write 1.0, a WriteRequest in protobuf (protobufjs, from
// the part of Prometheus's own .proto it needs) compressed with snappy's block format (snappyjs),
// POSTed with node:http, which the client has loaded already (fetch would load undici into the
// measured process). Not the prometheus-remote-write package: it sends samples only (no native
// histograms), checks every request against its schema and brings a second protobufjs.
import fs from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import protobuf from 'protobufjs'
import snappy from 'snappyjs'
import { BUCKET_BOUNDS, classicBuckets, exponentialBuckets } from './histograms.js'
import { prometheusName } from './metrics.js'

// The proto's own field names (count_int, positive_spans), as Prometheus's documentation has them.
const WriteRequest = protobuf.parse(fs.readFileSync(new URL('./remote-write.proto', import.meta.url), 'utf8'), { keepCase: true })
  .root.lookupType('prometheus.WriteRequest')

/** Each classic bucket's `le`, as Prometheus writes a float. */
const LE = [...BUCKET_BOUNDS.map(String), '+Inf']

/**
 * @typedef {object} PointGroup what one push sends of one run: its labels, and every metric it has with its value
 * @property {Record<string, string>} labels
 * @property {Array<{metric: import('./metrics.js').MetricDefinition, value: number|object}>} points a histogram's value in µs
 */

/**
 * The WriteRequest of one push, as protobufjs takes it: every point a series (a classic histogram its
 * _bucket, _sum and _count series; a native one a series of one histogram sample).
 * @param {PointGroup[]} groups
 * @param {number} timestamp ms since the epoch
 * @param {boolean} native histograms as native histograms (the receiver must take them), else classic buckets
 * @returns {object}
 */
export function writeRequest (groups, timestamp, native) {
  return { timeseries: groups.flatMap(({ points, labels }) => timeSeries(points, labels, timestamp, native)) }
}

/** One run's series. */
function timeSeries (points, labels, timestamp, native) {
  const timeseries = []
  const plain = labelTemplate(labels)
  const bucket = labelTemplate({ ...labels, le: '' })
  const series = (name, value, le) => timeseries.push({
    labels: le === undefined ? plain(name) : bucket(name, le),
    samples: [{ value, timestamp }]
  })
  for (const { metric, value } of points) {
    const name = prometheusName(metric)
    if (metric.type !== 'histogram') series(name, value)
    else if (native) timeseries.push({ labels: plain(name), histograms: [nativeSample(value, timestamp)] })
    else {
      const { counts, sum, count } = classicBuckets(value)
      let below = 0
      counts.forEach((inBucket, i) => series(`${name}_bucket`, (below += inBucket), LE[i]))
      series(`${name}_sum`, sum)
      series(`${name}_count`, count)
    }
  }
  return timeseries
}

/**
 * The run's labels sorted by name once, as remote write requires them, __name__ (and le) among
 * them: each series then only fills in its name (and bound).
 * @param {Record<string, string>} labels
 * @returns {(name: string, le?: string) => Array<{name: string, value: string}>}
 */
function labelTemplate (labels) {
  const names = [...Object.keys(labels), '__name__'].sort()
  return (metricName, le) => names.map((name) => ({
    name, value: name === '__name__' ? metricName : name === 'le' ? le : labels[name]
  }))
}

/**
 * A WriteRequest as it goes on the wire: protobuf, compressed with snappy's block format.
 * @param {object} request as writeRequest makes it
 * @returns {Uint8Array}
 */
export function encodeWriteRequest (request) {
  return snappy.compress(WriteRequest.encode(request).finish())
}

/** A native histogram sample: one span over the buckets from the lowest to the highest that hold something. */
function nativeSample (histogram, timestamp) {
  const { count, sum, scale, offset, counts } = exponentialBuckets(histogram)
  let previous = 0
  const deltas = counts.map((inBucket) => {
    const delta = inBucket - previous
    previous = inBucket
    return delta
  })
  return {
    count_int: count,
    sum,
    schema: scale,
    zero_threshold: 0,
    zero_count_int: 0,
    // Prometheus numbers OpenTelemetry's bucket i as i + 1.
    positive_spans: counts.length ? [{ offset: offset + 1, length: counts.length }] : [],
    positive_deltas: deltas,
    timestamp
  }
}

/**
 * One remote-write endpoint: pushes a WriteRequest, resolving once the receiver took it.
 */
export class RemoteWrite {
  /**
   * @param {URL} url the endpoint (Prometheus: /api/v1/write); user and password in it go as basic auth
   * @param {{native: boolean, timeoutMs: number}} how histograms are sent, how long a push may take
   */
  constructor (url, { native, timeoutMs }) {
    this.native = native
    this.timeoutMs = timeoutMs
    this.endpoint = new URL(url)
    this.headers = {
      'Content-Type': 'application/x-protobuf',
      'Content-Encoding': 'snappy',
      'X-Prometheus-Remote-Write-Version': '0.1.0',
      'User-Agent': 'ws-json-vs-protobuf'
    }
    // Credentials in the URL go as basic auth, in the header: they never show elsewhere.
    if (this.endpoint.username || this.endpoint.password) {
      const credentials = `${decodeURIComponent(this.endpoint.username)}:${decodeURIComponent(this.endpoint.password)}`
      this.headers.Authorization = `Basic ${Buffer.from(credentials).toString('base64')}`
      this.endpoint.username = this.endpoint.password = ''
    }
  }

  /**
   * @param {PointGroup[]} groups
   * @param {number} timestamp ms since the epoch, when the figures were read
   * @throws {Error} one line: the receiver's status and answer, or why it could not be reached
   */
  push (groups, timestamp) {
    const body = encodeWriteRequest(writeRequest(groups, timestamp, this.native))
    const client = this.endpoint.protocol === 'https:' ? https : http
    return new Promise((resolve, reject) => {
      const request = client.request(this.endpoint, {
        method: 'POST',
        headers: { ...this.headers, 'Content-Length': body.length },
        signal: AbortSignal.timeout(this.timeoutMs)
      }, (response) => {
        let text = ''
        response.setEncoding('utf8').on('data', (chunk) => { text += chunk })
        response.on('end', () => {
          if (response.statusCode < 300) resolve()
          else reject(new Error(`HTTP ${response.statusCode}${text ? `: ${text.trim().split('\n')[0]}` : ''}`))
        })
      })
      request.once('error', reject)
      request.end(body)
    })
  }
}
