import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createLatencyHistogram } from '../../lib/histogram.js'
import { BUCKET_BOUNDS, EXPONENTIAL_SCALE, classicBuckets, exponentialBuckets } from '../../lib/outputs/histograms.js'

const histogramOf = (valuesUs) => {
  const histogram = createLatencyHistogram()
  for (const value of valuesUs) histogram.recordValue(value)
  return histogram
}

test('the classic bounds: four to an octave, 61 µs to 64 s, the same as a native histogram of scale 2', () => {
  assert.equal(BUCKET_BOUNDS.length, 81)
  assert.equal(BUCKET_BOUNDS[0], 2 ** -14)
  assert.equal(BUCKET_BOUNDS.at(-1), 64)
  assert.equal(BUCKET_BOUNDS[56], 1)
  for (let i = 1; i < BUCKET_BOUNDS.length; i++) assert.ok(Math.abs(BUCKET_BOUNDS[i] / BUCKET_BOUNDS[i - 1] - 2 ** 0.25) < 1e-12)
})

test('classic buckets: each value in the first bucket whose bound it does not exceed, the rest above the last', () => {
  // 1 ms = 2^-9.97 s: in the bucket bounded by 2^-9.75; 1000 s: above 64 s.
  const { counts, count, sum, min, max } = classicBuckets(histogramOf([1000, 1000, 500_000, 1_000_000_000]))
  assert.equal(count, 4)
  assert.equal(counts.reduce((a, b) => a + b, 0), 4)
  assert.equal(counts[BUCKET_BOUNDS.findIndex((bound) => bound >= 0.001)], 2)
  assert.equal(counts[BUCKET_BOUNDS.findIndex((bound) => bound >= 0.5)], 1)
  assert.equal(counts.at(-1), 1)
  assert.ok(Math.abs(sum - 1000.502) / 1000.502 < 0.001, `${sum}`)
  assert.equal(min, 0.001)
  assert.ok(Math.abs(max - 1000) / 1000 < 0.001)
  assert.deepEqual(classicBuckets(createLatencyHistogram()), { count: 0, sum: 0, min: 0, max: 0, counts: new Array(82).fill(0) })
})

test('exponential buckets: bucket i holds (base^i, base^(i+1)], every bucket from the lowest to the highest held', () => {
  const base = 2 ** (2 ** -EXPONENTIAL_SCALE)
  const { scale, offset, counts, count } = exponentialBuckets(histogramOf([1000, 1000, 1001, 4000]))
  assert.equal(scale, EXPONENTIAL_SCALE)
  assert.equal(count, 4)
  assert.ok(base ** offset < 0.001 && base ** (offset + 1) >= 0.001, `offset ${offset}`)
  assert.equal(counts[0], 3)
  // 4 ms is two octaves (16 buckets) above 1 ms.
  assert.equal(counts.length, 17)
  assert.equal(counts.at(-1), 1)
  assert.equal(counts.slice(1, -1).reduce((a, b) => a + b, 0), 0)
})
