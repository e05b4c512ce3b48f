import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  ALPHA, DEFAULT_EQUIVALENCE, METRICS, callOf, lookLevels, overallCall, pairedRatio, sequentialEstimate, spentAlpha,
  trialOrder, verdictsOf
} from '../../lib/compare/statistics.js'

const oneLook = (pairs, family = 1) => ({ looks: [pairs], design: { family, plannedPairs: pairs, margin: DEFAULT_EQUIVALENCE } })

test('a clear difference: the interval is tight around the ratio and excludes 1', () => {
  const estimate = pairedRatio([100, 102, 98, 101, 99], [60, 61, 59, 61, 60])
  assert.equal(estimate.pairs, 5)
  assert.ok(Math.abs(estimate.ratio - 0.6) < 0.01, String(estimate.ratio))
  assert.ok(estimate.ci[0] < estimate.ratio && estimate.ratio < estimate.ci[1])
  assert.ok(estimate.ci[1] < 0.62 && estimate.ci[0] > 0.58, String(estimate.ci))
  assert.equal(callOf('lower', estimate), 'better', 'lower latency is better')
  assert.equal(callOf('higher', estimate), 'worse', 'fewer msgs/s is worse')
})

test('the same values in both formats: ratio 1, a zero-width interval, equivalent', () => {
  const values = [100, 130, 90, 115, 105]
  const estimate = pairedRatio(values, values)
  assert.equal(estimate.ratio, 1)
  assert.deepEqual(estimate.ci, [1, 1])
  assert.equal(estimate.resolution, 0)
  assert.equal(callOf('lower', estimate), 'equivalent')
})

test('an interval straddling 1 and reaching past the margin is inconclusive, whatever the point estimate says', () => {
  const estimate = pairedRatio([100, 100, 100, 100], [80, 120, 90, 125])
  assert.ok(estimate.ci[0] < 1 && estimate.ci[1] > 1, String(estimate.ci))
  assert.equal(callOf('lower', estimate), 'inconclusive')
  assert.ok(estimate.resolution > 0.2, 'it could not have told a 20% difference')
})

test('equivalent: the whole interval within ±margin of 1, even where it excludes 1; the margin is the caller\'s', () => {
  const tight = { ratio: 1.02, ci: [1.01, 1.03] }
  assert.equal(callOf('lower', tight), 'equivalent', 'a 2% difference is below the default 5% margin')
  assert.equal(callOf('lower', tight, 0.01), 'worse', 'and above a 1% one')
  assert.equal(callOf('lower', { ratio: 0.97, ci: [0.94, 1.0] }), 'inconclusive', '0.94 is more than 5% below 1 (1/1.05 = 0.952)')
  assert.equal(callOf('lower', { ratio: 0.97, ci: [0.953, 0.99] }), 'equivalent')
})

test('the interval is a Student t interval on the log ratios at the error rate asked for', () => {
  assert.equal(ALPHA, 0.05)
  // Two pairs with log ratios ln 0.5 and ln 2: mean 0, sd ln 2 * sqrt 2, t(0.975, 1) = 12.706; the
  // two deviations are opposite, so no correlation widens it.
  const { ratio, ci, resolution } = pairedRatio([1, 1], [0.5, 2])
  assert.ok(Math.abs(ratio - 1) < 1e-12)
  const halfWidth = 12.706204736 * Math.log(2)
  assert.ok(Math.abs(Math.log(ci[1]) - halfWidth) < 1e-6, String(ci))
  assert.ok(Math.abs(resolution - (Math.exp(halfWidth) - 1)) < 1e-6)
  // At 1% instead of 5%: t(0.995, 1) = 63.657.
  const strict = pairedRatio([1, 1], [0.5, 2], 0.01)
  assert.ok(Math.abs(Math.log(strict.ci[1]) - 63.65674 * Math.log(2)) < 1e-4, String(strict.ci))
})

test('neighbouring pairs that move together widen the interval; alternating ones do not narrow it', () => {
  const baseline = Array(8).fill(100)
  const trending = pairedRatio(baseline, [90, 92, 94, 96, 104, 106, 108, 110])
  const shuffled = pairedRatio(baseline, [104, 90, 108, 94, 110, 92, 106, 96])
  assert.ok(Math.abs(Math.log(trending.ratio) - Math.log(shuffled.ratio)) < 1e-12, 'the same values, so the same mean')
  assert.ok(trending.resolution > 1.5 * shuffled.resolution, `${trending.resolution} vs ${shuffled.resolution}`)
})

test('a single pair: a ratio but no interval, so never called', () => {
  const estimate = pairedRatio([100], [50])
  assert.deepEqual(estimate, { ratio: 0.5, ci: null, resolution: null, pairs: 1 })
  assert.equal(callOf('lower', estimate), 'inconclusive')
})

test('constant metrics (bytes) get a zero-width interval: a real difference is called, a small one is equivalent', () => {
  assert.equal(callOf('lower', pairedRatio([296, 296, 296], [81, 81, 81])), 'better')
  assert.equal(callOf('lower', pairedRatio([1000, 1000, 1000], [1005, 1005, 1005])), 'equivalent')
  assert.equal(callOf('lower', pairedRatio([1000, 1000, 1000], [1100, 1100, 1100])), 'worse')
})

test('missing, zero or non-finite values leave their pair out; none usable is null', () => {
  assert.equal(pairedRatio([100, null, 0, 100], [50, 40, 10, 50]).pairs, 2)
  assert.equal(pairedRatio([null, 0], [1, 1]), null)
  assert.equal(pairedRatio([], []), null)
})

test('alpha spending: O\'Brien-Fleming type, almost nothing early, all of ALPHA at the end', () => {
  assert.equal(spentAlpha(0), 0)
  assert.equal(spentAlpha(1), ALPHA)
  assert.ok(spentAlpha(0.2) < 1e-4, String(spentAlpha(0.2)))
  assert.ok(Math.abs(spentAlpha(0.5) - 0.00557) < 1e-4, String(spentAlpha(0.5)))
  for (const t of [0.1, 0.3, 0.5, 0.7, 0.9]) assert.ok(spentAlpha(t) < spentAlpha(t + 0.1))
})

test('lookLevels: each look spends its increment, a final look the rest, split over the family', () => {
  const design = { family: 10, plannedPairs: 20 }
  const interim = lookLevels([4, 8], design, false)
  assert.ok(Math.abs(interim[0] - spentAlpha(0.2) / 10) < 1e-15)
  assert.ok(Math.abs(interim[1] - (spentAlpha(0.4) - spentAlpha(0.2)) / 10) < 1e-15)
  const final = lookLevels([4, 8], design)
  assert.ok(Math.abs(final[0] + final[1] - ALPHA / 10) < 1e-15, 'all of ALPHA spent once the last look is final')
  assert.deepEqual(lookLevels([10], { family: 4, plannedPairs: 10 }), [ALPHA / 4])
})

test('sequentialEstimate: the first look that decides makes the call and gives the interval shown', () => {
  const baseline = Array(8).fill(100)
  const candidate = [60, 61, 59, 60, 60, 61, 59, 60]
  const design = { family: 1, plannedPairs: 8, margin: 0.05 }
  const early = sequentialEstimate(baseline, candidate, 'lower', [4, 8], design)
  assert.equal(early.call, 'better')
  assert.equal(early.look, 1)
  assert.equal(early.pairs, 4)
  // Undecided at every look: the last look's estimate, inconclusive.
  const noisy = sequentialEstimate(baseline, [80, 125, 90, 120, 85, 118, 95, 110], 'lower', [4, 8], design)
  assert.equal(noisy.call, 'inconclusive')
  assert.equal(noisy.look, 2)
  assert.equal(noisy.pairs, 8)
})

test('a bigger family widens every interval: a call is a claim about the whole table', () => {
  const baseline = [100, 102, 98, 101, 99]
  const candidate = [90, 99, 84, 95, 86]
  const alone = verdictsOf(baseline.map((p50) => ({ p50 })), candidate.map((p50) => ({ p50 })), ...Object.values(oneLook(5)))
  const inTable = verdictsOf(baseline.map((p50) => ({ p50 })), candidate.map((p50) => ({ p50 })), ...Object.values(oneLook(5, 48)))
  assert.equal(alone.p50.call, 'better')
  assert.equal(inTable.p50.call, 'inconclusive')
  assert.ok(inTable.p50.ci[0] < alone.p50.ci[0] && inTable.p50.ci[1] > alone.p50.ci[1])
})

test('verdictsOf: every metric that both sides have, with its call; overallCall sums them up', () => {
  const baseline = [1, 2, 3, 4].map((i) => ({ p50: 1 + i / 100, p99: 2 + (i % 2) / 2, rate: 1000 + i, bytes: 300, clientCpu: 10, serverCpu: null }))
  const candidate = [1, 2, 3, 4].map((i) => ({ p50: 0.5 + i / 100, p99: 2 + ((i + 1) % 2) / 2, rate: 1500 + i, bytes: 100, clientCpu: 12, serverCpu: 3 }))
  const verdicts = verdictsOf(baseline, candidate, ...Object.values(oneLook(4, 5)))
  assert.deepEqual(Object.keys(verdicts), ['p50', 'p99', 'rate', 'bytes', 'clientCpu'], 'serverCpu missing on one side')
  assert.equal(verdicts.p50.call, 'better')
  assert.equal(verdicts.p99.call, 'inconclusive')
  assert.equal(verdicts.rate.call, 'better')
  assert.equal(verdicts.bytes.call, 'better')
  assert.equal(verdicts.clientCpu.call, 'worse')
  assert.equal(overallCall(verdicts), 'mixed')
  assert.equal(overallCall({ p50: verdicts.p50, bytes: verdicts.bytes, p99: verdicts.p99 }), 'better', 'inconclusive metrics do not change the direction')
  assert.equal(overallCall({ p99: verdicts.p99 }), 'inconclusive')
  assert.equal(overallCall({ bytes: { call: 'equivalent' }, p50: { call: 'equivalent' } }), 'equivalent')
  assert.equal(overallCall({ bytes: { call: 'equivalent' }, p50: { call: 'inconclusive' } }), 'inconclusive')
  assert.equal(overallCall({}), 'inconclusive')
  assert.deepEqual(Object.keys(METRICS), ['p50', 'p99', 'rate', 'bytes', 'clientCpu', 'serverCpu'])
})

test('trialOrder: balanced blocks A B, B A, B A, A B: each format at each position equally often', () => {
  assert.deepEqual([0, 1, 2, 3].map((pair) => trialOrder(2, pair)), [[0, 1], [1, 0], [1, 0], [0, 1]])
  for (const count of [2, 3, 4]) {
    const positions = Array.from({ length: count }, () => 0)
    const pairs = 2 * count
    for (let pair = 0; pair < pairs; pair++) trialOrder(count, pair).forEach((format, position) => { positions[format] += position })
    assert.ok(positions.every((sum) => sum === positions[0]), `${count} formats: position sums ${positions}`)
  }
})
