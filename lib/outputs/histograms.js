// A run's HdrHistograms (µs, 0.1% resolution) in the forms a metrics backend takes: classic
// buckets (cumulative counts under fixed bounds, what every Prometheus stores), or exponential
// buckets (OpenTelemetry's exponential histogram, Prometheus's native histogram: a base of
// 2^(2^-scale), from the lowest bucket that holds something to the highest). Both sum the
// HdrHistogram's own counts once, at push time, never per message.

/**
 * The classic buckets' upper bounds, seconds: 2^(k/4), four to an octave (each 19% above the last),
 * from 2^-14 s (61 µs) to 2^6 s (64 s), then +Inf. The same on every host and run, so that buckets
 * add up across them; and the bounds of a native histogram of scale 2, so that both read alike.
 */
export const BUCKET_BOUNDS = Object.freeze(Array.from({ length: 81 }, (_, i) => 2 ** ((i - 56) / 4)))

/** The exponential buckets' scale: a base of 2^(1/8), each bucket 9% above the last. */
export const EXPONENTIAL_SCALE = 3

/**
 * How many values fall in each range (the bound before, this bound], bounds ascending, then above the
 * last: the HdrHistogram's counts summed by its own indexes, each bound's bucket holding the values
 * within its 0.1% of it; and their sum, seconds. One pass over the indexes (HdrHistogram's own mean
 * walks an iterator, ten times slower): a push reads a run's histograms so.
 * @param {import('hdr-histogram-js').Histogram} histogram
 * @param {number[]} boundsUs
 * @returns {{counts: number[], sum: number}} boundsUs.length + 1 counts
 */
function countsWithin (histogram, boundsUs) {
  const counts = new Array(boundsUs.length + 1).fill(0)
  let sumUs = 0
  if (histogram.totalCount === 0) return { counts, sum: 0 }
  const last = histogram.countsArrayIndex(histogram.maxValue)
  let index = histogram.countsArrayIndex(histogram.minNonZeroValue)
  for (let i = 0; i <= boundsUs.length && index <= last; i++) {
    const upTo = i < boundsUs.length ? Math.min(last, histogram.countsArrayIndex(Math.floor(boundsUs[i]))) : last
    for (; index <= upTo; index++) {
      const count = histogram.getCountAtIndex(index)
      if (count === 0) continue
      counts[i] += count
      sumUs += count * histogram.valueFromIndex(index)
    }
  }
  return { counts, sum: sumUs / 1e6 }
}

/** BUCKET_BOUNDS in µs. */
const BOUNDS_US = BUCKET_BOUNDS.map((seconds) => seconds * 1e6)

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
  return { ...extremes(histogram), ...countsWithin(histogram, BOUNDS_US) }
}

/**
 * Exponential buckets at EXPONENTIAL_SCALE, as OpenTelemetry indexes them: bucket i holds the
 * values in (base^i, base^(i+1)]; Prometheus's native histograms number the same bucket i + 1.
 * @param {import('hdr-histogram-js').Histogram} histogram values in µs
 * @returns {HistogramFigures & {scale: number, offset: number, counts: number[]}} counts from bucket
 *   `offset` on, every bucket between the lowest and the highest that hold something
 */
export function exponentialBuckets (histogram) {
  const figures = extremes(histogram)
  if (figures.count === 0) return { ...figures, sum: 0, scale: EXPONENTIAL_SCALE, offset: 0, counts: [] }
  const perOctave = 2 ** EXPONENTIAL_SCALE
  const bucketOf = (valueUs) => Math.ceil(Math.log2(valueUs / 1e6) * perOctave) - 1
  const offset = bucketOf(histogram.minNonZeroValue)
  const buckets = bucketOf(histogram.maxValue) - offset + 1
  const upperUs = Array.from({ length: buckets }, (_, i) => 2 ** ((offset + i + 1) / perOctave) * 1e6)
  const { counts, sum } = countsWithin(histogram, upperUs)
  // What lies within 0.1% above the last bound is the highest bucket's.
  counts[counts.length - 2] += counts.pop()
  return { ...figures, sum, scale: EXPONENTIAL_SCALE, offset, counts }
}

/** @returns {{count: number, min: number, max: number}} */
function extremes (histogram) {
  const count = histogram.totalCount
  return { count, min: count > 0 ? histogram.minNonZeroValue / 1e6 : 0, max: count > 0 ? histogram.maxValue / 1e6 : 0 }
}
