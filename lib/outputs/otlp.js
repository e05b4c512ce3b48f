// --out otlp=URL: OTLP over HTTP (protobuf), through OpenTelemetry's own JS exporter, given the
// metrics in the SDK's data model (ResourceMetrics), cumulative from the stream's start. The run's
// figures are turned into data points at push time: the SDK's instruments would have the send path
// record every latency a second time (bench:out measured what that costs, docs/results/out.json).
import { ValueType } from '@opentelemetry/api'
import { ExportResultCode, millisToHrTime } from '@opentelemetry/core'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { AggregationTemporality, DataPointType } from '@opentelemetry/sdk-metrics'
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto'
import { BUCKET_BOUNDS, classicBuckets, exponentialBuckets } from './histograms.js'

/** What the resource and the scope say sent the metrics: Prometheus makes `job` of service.name. */
const SERVICE = 'ws-json-vs-protobuf'

/**
 * One OTLP endpoint (e.g. http://collector:4318/v1/metrics; Prometheus 3: /api/v1/otlp/v1/metrics).
 */
export class OtlpMetrics {
  /**
   * @param {URL} url
   * @param {{native: boolean, timeoutMs: number}} how histograms go (exponential, else explicit
   *   buckets), how long a push may take
   */
  constructor (url, { native, timeoutMs }) {
    this.native = native
    this.exporter = new OTLPMetricExporter({ url: url.href, timeoutMillis: timeoutMs })
    /** Every point is cumulative from here. */
    this.startTime = millisToHrTime(Date.now())
    this.resource = null
  }

  /**
   * @param {import('./remote-write.js').PointGroup[]} groups every run's labels and points: the labels are each
   *   data point's attributes, but `instance`, which goes as the resource's service.instance.id (one process's)
   * @param {number} timestamp ms since the epoch, when the figures were read
   * @throws {Error} why the exporter could not deliver them
   */
  push (groups, timestamp) {
    this.resource ??= resourceFromAttributes({ 'service.name': SERVICE, 'service.instance.id': groups[0]?.labels.instance })
    const endTime = millisToHrTime(timestamp)
    // One metric per name, a data point in it for each run.
    const byName = new Map()
    for (const { labels: { instance, ...attributes }, points } of groups) {
      for (const { metric, value } of points) {
        const data = this.metricData(metric, value, { startTime: this.startTime, endTime, attributes })
        if (byName.has(metric.name)) byName.get(metric.name).dataPoints.push(...data.dataPoints)
        else byName.set(metric.name, data)
      }
    }
    const metrics = [...byName.values()]
    const resourceMetrics = { resource: this.resource, scopeMetrics: [{ scope: { name: SERVICE }, metrics }] }
    return new Promise((resolve, reject) => this.exporter.export(resourceMetrics, (result) => {
      if (result.code === ExportResultCode.SUCCESS) resolve()
      else reject(result.error ?? new Error('the OTLP exporter could not deliver'))
    }))
  }

  /** One metric in the SDK's data model: a sum, a gauge, or a histogram (explicit or exponential). */
  metricData (metric, value, point) {
    const base = {
      descriptor: {
        name: metric.name,
        description: metric.help,
        unit: metric.unit,
        valueType: metric.unit === 's' ? ValueType.DOUBLE : ValueType.INT
      },
      aggregationTemporality: AggregationTemporality.CUMULATIVE
    }
    const dataPoints = [{ ...point, value }]
    if (metric.type === 'counter') return { ...base, dataPointType: DataPointType.SUM, isMonotonic: true, dataPoints }
    if (metric.type === 'gauge') return { ...base, dataPointType: DataPointType.GAUGE, dataPoints }
    if (this.native) {
      const { scale, offset, counts, ...totals } = exponentialBuckets(value)
      const positive = { offset, bucketCounts: counts }
      const histogram = { scale, zeroCount: 0, positive, negative: { offset: 0, bucketCounts: [] }, ...totals }
      const exponential = DataPointType.EXPONENTIAL_HISTOGRAM
      return { ...base, dataPointType: exponential, dataPoints: [{ ...point, value: histogram }] }
    }
    const { counts, ...totals } = classicBuckets(value)
    const histogram = { buckets: { boundaries: [...BUCKET_BOUNDS], counts }, ...totals }
    return { ...base, dataPointType: DataPointType.HISTOGRAM, dataPoints: [{ ...point, value: histogram }] }
  }

  /** Lets the exporter finish what it has under way. */
  close () {
    return this.exporter.shutdown()
  }
}
