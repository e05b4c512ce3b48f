import hdr from 'hdr-histogram-js'

/** Latencies are recorded as whole microseconds; one hour is far beyond any sane timeout. */
const HIGHEST_TRACKABLE_US = 3_600_000_000

/**
 * Creates an empty latency histogram: microseconds, 3 significant digits (0.1% resolution),
 * the same precision HdrHistogram tools assume, so encoded histograms merge with theirs.
 * @returns {import('hdr-histogram-js').Histogram}
 */
export function createLatencyHistogram () {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: HIGHEST_TRACKABLE_US,
    numberOfSignificantValueDigits: 3,
    autoResize: true
  })
}

/**
 * Serialises a histogram in HdrHistogram's compressed base64 form (readable by the Java, Go, C and
 * JS implementations), so results from several processes or machines can be merged exactly.
 * @param {import('hdr-histogram-js').Histogram} histogram
 * @returns {string}
 */
export function encodeHistogram (histogram) {
  return hdr.encodeIntoCompressedBase64(histogram)
}

/**
 * Inverse of {@link encodeHistogram}.
 * @param {string} encoded compressed base64 histogram
 * @returns {import('hdr-histogram-js').Histogram}
 */
export function decodeHistogram (encoded) {
  return hdr.decodeFromCompressedBase64(encoded)
}

const microsToMillis = (us) => Math.round(us) / 1000

/**
 * The latency figures every report shows, in milliseconds with microsecond resolution.
 * An empty histogram gives zeros rather than HdrHistogram's sentinel values.
 * @param {import('hdr-histogram-js').Histogram} histogram values in microseconds
 * @returns {{min:number, mean:number, stdev:number, p50:number, p90:number, p99:number, p999:number, max:number}}
 */
export function summarizeLatency (histogram) {
  if (histogram.totalCount === 0) {
    return { min: 0, mean: 0, stdev: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0 }
  }
  return {
    min: microsToMillis(histogram.minNonZeroValue),
    mean: microsToMillis(histogram.mean),
    stdev: microsToMillis(histogram.stdDeviation),
    p50: valueAtPercentile(histogram, 50),
    p90: valueAtPercentile(histogram, 90),
    p99: valueAtPercentile(histogram, 99),
    p999: valueAtPercentile(histogram, 99.9),
    max: microsToMillis(histogram.maxValue)
  }
}

/**
 * A percentile in milliseconds (0 for an empty histogram). HdrHistogram answers with the top of the
 * value's bucket (up to 0.1% above what was recorded); capping at the recorded maximum keeps p99.9 <= max.
 * @param {import('hdr-histogram-js').Histogram} histogram values in microseconds
 * @param {number} percentile 0 to 100
 * @returns {number}
 */
export function valueAtPercentile (histogram, percentile) {
  return microsToMillis(Math.min(histogram.getValueAtPercentile(percentile), histogram.maxValue))
}

/**
 * Percentile curve points (HdrHistogram style: 50, 75, 87.5, ... towards 100) for plotting.
 * @param {import('hdr-histogram-js').Histogram} histogram values in microseconds
 * @returns {Array<{percentile:number, ms:number}>}
 */
export function percentileCurve (histogram) {
  if (histogram.totalCount === 0) return []
  const points = [{ percentile: 0, ms: microsToMillis(histogram.minNonZeroValue) }]
  // Halve the remaining distance to 100% each step, as HdrHistogram's percentile output does,
  // stopping once what remains holds less than half a recorded value.
  for (let remaining = 50; remaining * histogram.totalCount >= 50; remaining /= 2) {
    const percentile = 100 - remaining
    points.push({ percentile, ms: valueAtPercentile(histogram, percentile) })
  }
  points.push({ percentile: 100, ms: microsToMillis(histogram.maxValue) })
  return points
}

/**
 * Counts per power-of-two latency band, lowest to highest, for the compact text histogram.
 * @param {import('hdr-histogram-js').Histogram} histogram values in microseconds
 * @returns {Array<{fromUs:number, toUs:number, count:number}>} bands [fromUs, toUs)
 */
export function latencyBands (histogram) {
  if (histogram.totalCount === 0) return []
  const bands = []
  let fromUs = 2 ** Math.floor(Math.log2(Math.max(1, histogram.minNonZeroValue)))
  let counted = 0
  while (counted < histogram.totalCount) {
    const toUs = fromUs * 2
    const count = countBetween(histogram, fromUs, toUs)
    bands.push({ fromUs, toUs, count })
    counted += count
    fromUs = toUs
  }
  return bands
}

/** Sum of counts for values in [from, to), walking the histogram's own buckets. */
function countBetween (histogram, from, to) {
  let count = 0
  let value = histogram.lowestEquivalentValue(from)
  while (value < to) {
    count += histogram.getCountAtIndex(histogram.countsArrayIndex(value))
    value = histogram.nextNonEquivalentValue(value)
  }
  return count
}

/**
 * The run's per-second histograms as an HdrHistogram interval log (the format HistogramLogProcessor,
 * HdrHistogram's plotters and every implementation's log reader take), values in microseconds.
 * @param {{startedAt: number, timeSeries: Array<{t: number, histogram: string}>}} report
 * @returns {string}
 */
export function formatIntervalLog ({ startedAt, timeSeries }) {
  let text = ''
  const writer = new hdr.HistogramLogWriter((line) => { text += line })
  writer.outputLogFormatVersion()
  writer.outputComment('latency in microseconds, one interval per second (ws-json-vs-protobuf)')
  writer.outputStartTime(startedAt)
  writer.outputLegend()
  const base = startedAt / 1000
  for (const { t, histogram } of timeSeries) {
    const start = Math.max(0, t - base)
    writer.outputIntervalHistogram(decodeHistogram(histogram), start, start + 1, 1)
  }
  return text
}

/**
 * Adds up encoded histograms exactly (the same recording precision on every side), e.g. the
 * parts of a multi-host run or the trials of one format.
 * @param {string[]} encoded as encodeHistogram writes them
 * @returns {import('hdr-histogram-js').Histogram}
 */
export function addHistograms (encoded) {
  const total = createLatencyHistogram()
  for (const text of encoded) total.add(decodeHistogram(text))
  return total
}
