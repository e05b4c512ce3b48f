import { test } from 'node:test'
import assert from 'node:assert/strict'
import { CONFIDENCE, METRICS, callOf, overallCall, pairedRatio, trialOrder, verdictsOf } from '../../lib/compare/statistics.js'

test('a clear difference: the interval is tight around the ratio and excludes 1', () => {
  const estimate = pairedRatio([100, 102, 98, 101, 99], [60, 61, 59, 61, 60])
  assert.equal(estimate.pairs, 5)
  assert.ok(Math.abs(estimate.ratio - 0.6) < 0.01, String(estimate.ratio))
  assert.ok(estimate.ci[0] < estimate.ratio && estimate.ratio < estimate.ci[1])
  assert.ok(estimate.ci[1] < 0.62 && estimate.ci[0] > 0.58, String(estimate.ci))
  assert.equal(callOf('lower', estimate), 'better', 'lower latency is better')
  assert.equal(callOf('higher', estimate), 'worse', 'fewer msgs/s is worse')
})

test('a null difference: the same values in both formats give ratio 1, no difference', () => {
  const values = [100, 130, 90, 115, 105]
  const estimate = pairedRatio(values, values)
  assert.equal(estimate.ratio, 1)
  assert.deepEqual(estimate.ci, [1, 1])
  assert.equal(callOf('lower', estimate), 'no difference')
})

test('an interval straddling 1 is no difference, whatever the point estimate says', () => {
  const estimate = pairedRatio([100, 100, 100, 100], [80, 120, 90, 125])
  assert.ok(estimate.ci[0] < 1 && estimate.ci[1] > 1, String(estimate.ci))
  assert.equal(callOf('lower', estimate), 'no difference')
})

test('the interval is a Student t interval on the log ratios (95%)', () => {
  assert.equal(CONFIDENCE, 0.95)
  // Two pairs with log ratios ln 0.5 and ln 2: mean 0, sd ln 2 * sqrt 2, t(0.975, 1) = 12.706.
  const { ratio, ci } = pairedRatio([1, 1], [0.5, 2])
  assert.ok(Math.abs(ratio - 1) < 1e-12)
  const halfWidth = 12.706204736 * Math.log(2)
  assert.ok(Math.abs(Math.log(ci[1]) - halfWidth) < 1e-6, String(ci))
})

test('a single trial: a ratio but no interval, so never called', () => {
  const estimate = pairedRatio([100], [50])
  assert.deepEqual(estimate, { ratio: 0.5, ci: null, pairs: 1 })
  assert.equal(callOf('lower', estimate), 'no difference')
})

test('constant metrics (bytes) get a zero-width interval and a call; within 1% is no difference', () => {
  assert.equal(callOf('lower', pairedRatio([296, 296, 296], [81, 81, 81])), 'better')
  assert.equal(callOf('lower', pairedRatio([1000, 1000, 1000], [1005, 1005, 1005])), 'no difference')
})

test('missing, zero or non-finite values leave their pair out; none usable is null', () => {
  assert.equal(pairedRatio([100, null, 0, 100], [50, 40, 10, 50]).pairs, 2)
  assert.equal(pairedRatio([null, 0], [1, 1]), null)
  assert.equal(pairedRatio([], []), null)
})

test('verdictsOf: every metric that both sides have, with its call; overallCall sums them up', () => {
  const baseline = [1, 2, 3].map((i) => ({ p50: 1 + i / 100, p99: 2, rate: 1000 + i, bytes: 300, clientCpu: 10, serverCpu: null }))
  const candidate = [1, 2, 3].map((i) => ({ p50: 0.5 + i / 100, p99: 2, rate: 1500 + i, bytes: 100, clientCpu: 12, serverCpu: 3 }))
  const verdicts = verdictsOf(baseline, candidate)
  assert.deepEqual(Object.keys(verdicts), ['p50', 'p99', 'rate', 'bytes', 'clientCpu'], 'serverCpu missing on one side')
  assert.equal(verdicts.p50.call, 'better')
  assert.equal(verdicts.p99.call, 'no difference')
  assert.equal(verdicts.rate.call, 'better')
  assert.equal(verdicts.bytes.call, 'better')
  assert.equal(verdicts.clientCpu.call, 'worse')
  assert.equal(overallCall(verdicts), 'mixed')
  assert.equal(overallCall({ p50: verdicts.p50, bytes: verdicts.bytes }), 'better')
  assert.equal(overallCall({ p99: verdicts.p99 }), 'no difference')
  assert.deepEqual(Object.keys(METRICS), ['p50', 'p99', 'rate', 'bytes', 'clientCpu', 'serverCpu'])
})

test('trialOrder: rotated each trial, so every format runs first as often as the others', () => {
  assert.deepEqual([0, 1, 2, 3].map((trial) => trialOrder(2, trial)), [[0, 1], [1, 0], [0, 1], [1, 0]])
  const firsts = [0, 1, 2].map((trial) => trialOrder(3, trial)[0])
  assert.deepEqual(firsts.sort(), [0, 1, 2])
})
