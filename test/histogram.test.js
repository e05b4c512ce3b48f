import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createLatencyHistogram, decodeHistogram, encodeHistogram, latencyBands, percentileCurve, summarizeLatency } from '../lib/histogram.js'

function histogramOf (values) {
  const histogram = createLatencyHistogram()
  for (const value of values) histogram.recordValue(value)
  return histogram
}

test('summarizeLatency reports milliseconds with microsecond resolution', () => {
  // 1..1000 us: p50 is 500 us, p99 990 us, max 1 ms.
  const summary = summarizeLatency(histogramOf(Array.from({ length: 1000 }, (_, i) => i + 1)))
  assert.equal(summary.min, 0.001)
  assert.equal(summary.p50, 0.5)
  assert.equal(summary.p90, 0.9)
  assert.equal(summary.p99, 0.99)
  assert.equal(summary.max, 1)
  assert.ok(Math.abs(summary.mean - 0.5005) < 0.001)
})

test('an empty histogram summarizes to zeros, not sentinels', () => {
  assert.deepEqual(summarizeLatency(createLatencyHistogram()), { min: 0, mean: 0, stdev: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0 })
  assert.deepEqual(latencyBands(createLatencyHistogram()), [])
  assert.deepEqual(percentileCurve(createLatencyHistogram()), [])
})

test('encoded histograms decode to the same distribution and merge exactly', () => {
  const a = histogramOf([100, 200, 300, 40_000])
  const b = histogramOf([150, 5_000_000])
  const decoded = decodeHistogram(encodeHistogram(a))
  assert.equal(decoded.totalCount, 4)
  // The encoding keeps bucket counts, so values come back to within the 0.1% bucket resolution.
  const [original, copy] = [summarizeLatency(a), summarizeLatency(decoded)]
  for (const key of Object.keys(original)) assert.ok(Math.abs(copy[key] - original[key]) <= original[key] * 0.001, key)
  decoded.add(decodeHistogram(encodeHistogram(b)))
  assert.equal(decoded.totalCount, 6)
  assert.ok(Math.abs(summarizeLatency(decoded).max - 5000) <= 5)
})

test('latencyBands are powers of two and count every value once', () => {
  const values = [3, 5, 6, 7, 100, 130, 1_000_000]
  const bands = latencyBands(histogramOf(values))
  assert.equal(bands.reduce((sum, band) => sum + band.count, 0), values.length)
  assert.deepEqual(bands.slice(0, 3), [{ fromUs: 2, toUs: 4, count: 1 }, { fromUs: 4, toUs: 8, count: 3 }, { fromUs: 8, toUs: 16, count: 0 }])
  for (const band of bands) assert.equal(band.toUs, band.fromUs * 2)
})

test('percentileCurve climbs towards 100% and never decreases', () => {
  const curve = percentileCurve(histogramOf(Array.from({ length: 10_000 }, (_, i) => i + 1)))
  assert.equal(curve[0].percentile, 0)
  assert.equal(curve.at(-1).percentile, 100)
  assert.ok(curve.some((point) => point.percentile === 99.90234375))
  for (let i = 1; i < curve.length; i++) {
    assert.ok(curve[i].percentile > curve[i - 1].percentile)
    assert.ok(curve[i].ms >= curve[i - 1].ms)
  }
})
