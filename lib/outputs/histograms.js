// A run's HdrHistograms (µs, 0.1% resolution) in the forms a metrics backend takes: classic
// buckets (cumulative counts under fixed bounds, what every Prometheus stores), or exponential
// buckets (OpenTelemetry's exponential histogram, Prometheus's native histogram: a base of
// 2^(2^-scale), only the buckets that hold something). Both walk the HdrHistogram's own buckets
// once, at push time, never per message.

/**
 * The classic buckets' upper bounds, seconds: 2^(k/4), four to an octave (each 19% above the last),
 * from 2^-14 s (61 µs) to 2^6 s (64 s), then +Inf. The same on every host and run, so that buckets
 * add up across them; and the bounds of a native histogram of scale 2, so that both read alike.
 */
export const BUCKET_BOUNDS = Object.freeze(Array.from({ length: 81 }, (_, i) => 2 ** ((i - 56) / 4)))

/** The exponential buckets' scale: a base of 2^(1/8), each bucket 9% above the last. */
export const EXPONENTIAL_SCALE = 3

/**
 * Calls `visit(valueUs, count)` for every HdrHistogram bucket that holds something, lowest first,
 * with the lowest value the bucket stands for.
 * @param {import('hdr-histogram-js').Histogram} histogram
 * @param {(valueUs: number, count: number) => void} visit
 */
function eachRecorded (histogram, visit) {
  if (histogram.totalCount === 0) return
  const last = histogram.countsArrayIndex(histogram.maxValue)
  for (let index = histogram.countsArrayIndex(histogram.minNonZeroValue); index <= last; index++) {
    const count = histogram.getCountAtIndex(index)
    if (count > 0) visit(histogram.valueFromIndex(index), count)
  }
}

/**
 * @typedef {object} HistogramFigures what every form of a histogram carries
 * @property {number} count values recorded
 * @property {number} sum their sum, seconds (from the buckets' values: within 0.1%)
 * @property {number} min seconds (0 when empty)
 * @property {number} max seconds (0 when empty)
 */

/**
 * Classic buckets: how many values fall under each of BUCKET_BOUNDS (not cumulative: each bucket's own).
 * @param {import('hdr-histogram-js').Histogram} histogram values in µs
 * @returns {HistogramFigures & {counts: number[]}} counts: one per bound, then one for the values above the last
 */
export function classicBuckets (histogram) {
  const counts = new Array(BUCKET_BOUNDS.length + 1).fill(0)
  let bucket = 0
  eachRecorded(histogram, (valueUs, count) => {
    const seconds = valueUs / 1e6
    while (bucket < BUCKET_BOUNDS.length && seconds > BUCKET_BOUNDS[bucket]) bucket++
    counts[bucket] += count
  })
  return { ...totals(histogram), counts }
}

/**
 * Exponential buckets at EXPONENTIAL_SCALE, as OpenTelemetry indexes them: bucket i holds the
 * values in (base^i, base^(i+1)]; Prometheus's native histograms number the same bucket i + 1.
 * @param {import('hdr-histogram-js').Histogram} histogram values in µs
 * @returns {HistogramFigures & {scale: number, offset: number, counts: number[]}} counts from bucket
 *   `offset` on, every bucket between the lowest and the highest that hold something
 */
export function exponentialBuckets (histogram) {
  const counts = []
  let offset = 0
  eachRecorded(histogram, (valueUs, count) => {
    const index = Math.ceil(Math.log2(valueUs / 1e6) * 2 ** EXPONENTIAL_SCALE) - 1
    if (counts.length === 0) offset = index
    while (offset + counts.length <= index) counts.push(0)
    counts[index - offset] += count
  })
  return { ...totals(histogram), scale: EXPONENTIAL_SCALE, offset, counts }
}

/** @returns {HistogramFigures} */
function totals (histogram) {
  const count = histogram.totalCount
  return {
    count,
    sum: count > 0 ? histogram.mean * count / 1e6 : 0,
    min: count > 0 ? histogram.minNonZeroValue / 1e6 : 0,
    max: count > 0 ? histogram.maxValue / 1e6 : 0
  }
}
