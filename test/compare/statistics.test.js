import { test } from 'node:test'
import assert from 'node:assert/strict'
import jstatModule from 'jstat'
import {
  ALPHA, DEFAULT_EQUIVALENCE, METRICS, callOf, overallCall, pooledPercentiles, simultaneousEstimates, smoothPercentile, trialOrder
} from '../../lib/compare/statistics.js'
import { createLatencyHistogram, decodeHistogram, encodeHistogram } from '../../lib/histogram.js'
import { normalSource } from '../helpers.js'

const { jStat } = jstatModule

function cellOf (logs, better = 'lower', normal = normalSource(99)) {
  const baseline = logs.map(() => 100 * Math.exp(0.2 * normal()))
  return { baseline, candidate: baseline.map((value, g) => value * Math.exp(logs[g])), better }
}

/**
 * A table of cells with log ratio truth[c] + noise: `shared` of the cells follow one common noise per
 * generation plus a little of their own (correlation ~0.96), the rest are independent; spreads differ.
 */
function tableOf ({ generations, cells, shared, truth = () => 0, sd = 0.02 }, normal) {
  const common = Array.from({ length: generations }, () => normal())
  return Array.from({ length: cells }, (_, c) => {
    const spread = sd * (1 + c % 3) / 2
    const logs = common.map((value) => truth(c) + spread * (c < shared ? value + 0.2 * normal() : normal()))
    return cellOf(logs, c % 4 === 3 ? 'higher' : 'lower', normal)
  })
}

const called = (estimate) => estimate?.call === 'better' || estimate?.call === 'worse'

test('a clear effect is called, in the direction the metric counts as better, and the interval covers the truth', () => {
  const normal = normalSource(1)
  const logs = Array.from({ length: 10 }, () => Math.log(0.8) + 0.03 * normal())
  const noise = Array.from({ length: 4 }, () => Array.from({ length: 10 }, () => 0.03 * normal()))
  const { estimates, family } = simultaneousEstimates([cellOf(logs, 'lower'), cellOf(logs, 'higher'), ...noise.map((n) => cellOf(n))])
  const [lower, higher] = estimates
  assert.equal(lower.call, 'better', 'lower latency is better')
  assert.equal(higher.call, 'worse', 'fewer msgs/s is worse')
  assert.equal(lower.generations, 10)
  assert.ok(Math.abs(lower.ratio - 0.8) < 0.02, String(lower.ratio))
  assert.ok(lower.ci[0] < 0.8 && lower.ci[1] > 0.8, String(lower.ci))
  assert.ok(lower.ci[0] < lower.ratio && lower.ratio < lower.ci[1])
  assert.ok(Math.abs(lower.resolution - (Math.sqrt(lower.ci[1] / lower.ci[0]) - 1)) < 1e-12, 'the half-width, as a fraction')
  assert.deepEqual(higher.ci, lower.ci, 'the same values: the same interval')
  assert.equal(family.cells, 6)
  assert.equal(family.method, 'max-t')
  assert.equal(family.alpha, ALPHA)
})

test('the same values in both formats: ratio 1, a zero-width interval, equivalent, outside the family', () => {
  const values = [100, 130, 90, 115, 105]
  const { estimates, family } = simultaneousEstimates([{ baseline: values, candidate: values, better: 'lower' }])
  assert.deepEqual(estimates, [{ ratio: 1, ci: [1, 1], resolution: 0, call: 'equivalent', generations: 5 }])
  assert.deepEqual(family, {
    method: 'max-t', cells: 0, exact: 1, generations: 5, rotations: 1, df: null, critical: null, bonferroni: null, draws: 4000, alpha: ALPHA
  })
})

/** Cells whose generations alternate between two rotations, a process effect of ±effect in the log ratio. */
function rotatedTable ({ generations, cells, effect, truth = () => 0, sd = 0.02 }, normal) {
  const strata = Array.from({ length: generations }, (_, g) => g % 2 ? 'server 2|server 1' : 'server 1|server 2')
  return Array.from({ length: cells }, (_, c) => {
    const logs = strata.map((_, g) => truth(c) + (g % 2 ? -effect : effect) + sd * normal())
    return { ...cellOf(logs, 'lower', normal), strata }
  })
}

test('rotations: a process\'s own speed cancels in the mean of the strata\'s means and is no noise to the interval', () => {
  const normal = normalSource(21)
  // 9 generations: 5 in one rotation, 4 in the other, a process effect of ±10% against a true ratio of 0.9.
  const table = rotatedTable({ generations: 9, cells: 6, effect: 0.1, truth: () => Math.log(0.9) }, normal)
  const stratified = simultaneousEstimates(table)
  const plain = simultaneousEstimates(table.map(({ strata, ...cell }) => cell))
  assert.equal(stratified.family.rotations, 2)
  assert.equal(stratified.family.df, 7, 'a degree of freedom spent per rotation')
  assert.equal(plain.family.rotations, 1)
  assert.equal(plain.family.df, 8)
  for (const [c, estimate] of stratified.estimates.entries()) {
    // Unbalanced, the plain mean keeps a ninth of the effect; the strata's means cancel it.
    assert.ok(Math.abs(Math.log(estimate.ratio) - Math.log(0.9)) < 0.03, `cell ${c}: ${estimate.ratio}`)
    assert.ok(estimate.ci[0] < 0.9 && estimate.ci[1] > 0.9, `cell ${c}: ${estimate.ci}`)
    assert.equal(estimate.call, 'better')
    assert.ok(estimate.resolution < plain.estimates[c].resolution / 2, `${estimate.resolution} against ${plain.estimates[c].resolution}`)
  }
})

test('rotations in null tables: with a process effect in every cell, the chance of any false call stays about alpha', () => {
  const normal = normalSource(22)
  let wrong = 0
  const tables = 300
  for (let t = 0; t < tables; t++) {
    const { estimates } = simultaneousEstimates(rotatedTable({ generations: 10, cells: 20, effect: 0.05 }, normal), { draws: 600, margin: 0 })
    if (estimates.some(called)) wrong++
  }
  console.log(`false-call rate over ${tables} null tables with a process effect: ${wrong / tables}`)
  assert.ok(wrong / tables <= 0.08, String(wrong / tables))
})

test('rotations without a spare degree of freedom: the plain mean and spread', () => {
  const normal = normalSource(23)
  const [cell] = rotatedTable({ generations: 2, cells: 1, effect: 0.05 }, normal)
  const { estimates, family } = simultaneousEstimates([cell])
  assert.equal(family.rotations, 1)
  assert.equal(family.df, 1)
  assert.ok(Math.abs(estimates[0].ratio - Math.sqrt(cell.candidate[0] / cell.baseline[0] * cell.candidate[1] / cell.baseline[1])) < 1e-12)
})

test('constant ratios (bytes) are exact: a real difference is called, a small one is equivalent, and none joins the family', () => {
  const constant = (a, b) => ({ baseline: [a, a, a], candidate: [b, b, b], better: 'lower' })
  const noisy = cellOf([0.1, -0.05, 0.02])
  const { estimates, family } = simultaneousEstimates([constant(296, 81), constant(1000, 1005), constant(1000, 1100), noisy])
  assert.deepEqual(estimates.slice(0, 3).map((estimate) => estimate.call), ['better', 'equivalent', 'worse'])
  assert.deepEqual(estimates[0].ci, [81 / 296, 81 / 296])
  assert.equal(family.exact, 3)
  assert.equal(family.cells, 1)
  // A family of one: its own Student t value, exactly.
  assert.ok(Math.abs(family.critical - jStat.studentt.inv(1 - ALPHA / 2, 2)) < 1e-12, String(family.critical))
  assert.equal(family.critical, family.bonferroni)
})

test('correlated cells share the error rate cheaply: max-T well below Bonferroni; independent cells: close to it', () => {
  const normal = normalSource(2)
  const correlated = simultaneousEstimates(tableOf({ generations: 12, cells: 40, shared: 40 }, normal)).family
  const independent = simultaneousEstimates(tableOf({ generations: 12, cells: 40, shared: 0 }, normal)).family
  for (const family of [correlated, independent]) {
    assert.equal(family.cells, 40)
    assert.equal(family.df, 11)
    assert.ok(Math.abs(family.bonferroni - jStat.studentt.inv(1 - ALPHA / 80, 11)) < 1e-12)
    assert.ok(family.critical >= jStat.studentt.inv(1 - ALPHA / 2, 11), 'never narrower than a lone interval')
  }
  assert.ok(correlated.critical < 0.85 * correlated.bonferroni, `${correlated.critical} vs Bonferroni ${correlated.bonferroni}`)
  assert.ok(independent.critical > 0.9 * independent.bonferroni && independent.critical < 1.02 * independent.bonferroni,
    `${independent.critical} vs Bonferroni ${independent.bonferroni}`)
})

test('the critical value is the exact one where it is known: independent t (Šidák) for orthogonal cells, a lone t for identical ones', () => {
  // Rows 1 to 15 of a 16 × 16 Hadamard matrix are orthogonal contrasts: 15 cells whose sample
  // correlations are all 0, so their t statistics are independent t with 15 df.
  let hadamard = [[1]]
  for (let k = 0; k < 4; k++) hadamard = [...hadamard.map((row) => [...row, ...row]), ...hadamard.map((row) => [...row, ...row.map((x) => -x)])]
  const orthogonal = hadamard.slice(1).map((row, c) => cellOf(row.map((x) => 0.01 * (1 + c) * x + 0.001 * c)))
  const sidak = jStat.studentt.inv(1 - (1 - (1 - ALPHA) ** (1 / 15)) / 2, 15)
  const { critical } = simultaneousEstimates(orthogonal).family
  assert.ok(Math.abs(critical / sidak - 1) < 0.02, `${critical} vs ${sidak}`)
  // Cells that move together (up to scale and rounding) are one test: the lone t value, however many.
  const pattern = hadamard[3].map((x, g) => x + 0.3 * hadamard[5][g])
  const identical = Array.from({ length: 10 }, (_, c) => cellOf(pattern.map((x) => 0.01 * (1 + c) * x)))
  const lone = jStat.studentt.inv(1 - ALPHA / 2, 15)
  const together = simultaneousEstimates(identical).family.critical
  assert.ok(together >= lone && together < 1.02 * lone, `${together} vs ${lone}`)
})

test('reproducible: the same data give the same intervals; alpha, the seed and the draws are the caller\'s', () => {
  const table = tableOf({ generations: 8, cells: 20, shared: 10 }, normalSource(3))
  const first = simultaneousEstimates(table)
  assert.deepEqual(simultaneousEstimates(table), first)
  assert.equal(first.family.draws, 4000)
  // Another seed, another simulation: a critical value a little different (1-2% at 4000 draws).
  const otherSeed = simultaneousEstimates(table, { seed: 7 }).family.critical
  assert.notEqual(otherSeed, first.family.critical)
  assert.ok(Math.abs(otherSeed / first.family.critical - 1) < 0.06, `${otherSeed} vs ${first.family.critical}`)
  assert.equal(simultaneousEstimates(table, { draws: 1000 }).family.draws, 1000)
  const strict = simultaneousEstimates(table, { alpha: 0.01 })
  assert.equal(strict.family.alpha, 0.01)
  assert.ok(strict.family.critical > first.family.critical)
  assert.ok(strict.estimates.every((estimate, c) => estimate.resolution > first.estimates[c].resolution))
})

/** The share of tables with at least one better or worse call where every true ratio is 1. */
function falseCallRate ({ tables, ...shape }, seed) {
  const normal = normalSource(seed)
  let wrong = 0
  for (let t = 0; t < tables; t++) {
    // margin 0: no interval is narrow enough to be called equivalent, so every one that misses 1 is a call.
    const { estimates } = simultaneousEstimates(tableOf(shape, normal), { draws: 600, margin: 0 })
    if (estimates.some(called)) wrong++
  }
  return wrong / tables
}

test('null tables: the chance of any false call in a table is about alpha, correlated or not', () => {
  const mixed = falseCallRate({ tables: 300, generations: 10, cells: 30, shared: 15 }, 4)
  const correlated = falseCallRate({ tables: 300, generations: 10, cells: 30, shared: 30 }, 5)
  console.log(`false-call rate over 300 null tables: ${mixed} (half correlated), ${correlated} (all correlated)`)
  assert.ok(mixed <= 0.08, String(mixed))
  assert.ok(correlated <= 0.08, String(correlated))
  assert.ok(correlated > 0.01, `not needlessly conservative for correlated cells: ${correlated}`)
})

test('power: a real 5% difference in a few cells among correlated nulls is called, the nulls are not', () => {
  const effects = { 3: Math.log(1.05), 10: Math.log(0.95), 17: Math.log(0.95), 23: Math.log(1.05) }
  const table = tableOf({ generations: 12, cells: 30, shared: 30, truth: (c) => effects[c] ?? 0, sd: 0.02 }, normalSource(6))
  const { estimates, family } = simultaneousEstimates(table)
  assert.ok(family.critical < family.bonferroni)
  for (const [c, estimate] of estimates.entries()) {
    if (c in effects) {
      // Cells 3 and 23 are msgs/s-like (higher is better): a 5% rise is better, like a 5% fall in the others.
      assert.equal(estimate.call, 'better', `cell ${c}: ${estimate.ratio} ${estimate.ci}`)
      assert.ok(estimate.ci[0] < Math.exp(effects[c]) && Math.exp(effects[c]) < estimate.ci[1])
    } else {
      assert.ok(!called(estimate), `null cell ${c} called ${estimate.call}: ${estimate.ci}`)
    }
  }
})

test('simultaneous coverage: every interval in a table covers its true ratio in at least ~95% of tables', () => {
  const normal = normalSource(8)
  const truth = (c) => 0.1 * Math.sin(c)
  const tables = 200
  let covered = 0
  for (let t = 0; t < tables; t++) {
    const { estimates } = simultaneousEstimates(tableOf({ generations: 12, cells: 30, shared: 20, truth }, normal), { draws: 600 })
    if (estimates.every(({ ci }, c) => ci[0] <= Math.exp(truth(c)) && Math.exp(truth(c)) <= ci[1])) covered++
  }
  console.log(`simultaneous coverage over ${tables} tables: ${covered / tables}`)
  assert.ok(covered / tables >= 0.92, String(covered / tables))
})

test('missing, zero or non-finite values leave their generation out; one usable generation: a ratio, no interval', () => {
  const { estimates, family } = simultaneousEstimates([
    { baseline: [100, null, 0, 100, NaN, 100, undefined, 100], candidate: [50, 40, 10, 55, 30, Infinity, 20, 45], better: 'lower' },
    { baseline: [100, null], candidate: [50, 50], better: 'lower' },
    { baseline: [null, 0], candidate: [1, 1], better: 'lower' },
    { baseline: [], candidate: [], better: 'higher' }
  ])
  assert.equal(estimates[0].generations, 3)
  assert.ok(Math.abs(estimates[0].ratio - Math.cbrt(0.5 * 0.55 * 0.45)) < 1e-12)
  assert.deepEqual(estimates[1], { ratio: 0.5, ci: null, resolution: null, call: 'inconclusive', generations: 1 })
  assert.equal(estimates[2], null)
  assert.equal(estimates[3], null)
  assert.equal(family.cells, 1, 'only the cell with two or more usable generations')
  assert.equal(family.df, 2)
  assert.equal(family.generations, 3)
})

test('cells with different usable generations: df from the fewest, and the simulation still covers them', () => {
  const normal = normalSource(9)
  const table = tableOf({ generations: 10, cells: 12, shared: 12 }, normal)
  table[0].candidate[4] = null
  table[5].baseline[0] = 0
  table[5].baseline[9] = null
  const { estimates, family } = simultaneousEstimates(table)
  assert.deepEqual([estimates[0].generations, estimates[5].generations, estimates[1].generations], [9, 8, 10])
  assert.equal(family.df, 7)
  assert.equal(family.generations, 10)
  assert.ok(family.critical >= jStat.studentt.inv(1 - ALPHA / 2, 7) && family.critical < family.bonferroni, String(family.critical))
})

test('equivalent: the whole interval within ±margin of 1, even where it excludes 1; the margin is the caller\'s', () => {
  const tight = { ratio: 1.02, ci: [1.01, 1.03] }
  assert.equal(DEFAULT_EQUIVALENCE, 0.05)
  assert.equal(callOf('lower', tight), 'equivalent', 'a 2% difference is below the default 5% margin')
  assert.equal(callOf('lower', tight, 0.01), 'worse', 'and above a 1% one')
  assert.equal(callOf('lower', { ratio: 0.97, ci: [0.94, 1.0] }), 'inconclusive', '0.94 is more than 5% below 1 (1/1.05 = 0.952)')
  assert.equal(callOf('lower', { ratio: 0.97, ci: [0.953, 0.99] }), 'equivalent')
  assert.equal(callOf('lower', { ratio: 0.9, ci: null }), 'inconclusive')
  // simultaneousEstimates passes its margin on.
  const table = [cellOf([0.02, 0.021, 0.019, 0.02, 0.0205])]
  assert.equal(simultaneousEstimates(table).estimates[0].call, 'equivalent')
  assert.equal(simultaneousEstimates(table, { margin: 0.01 }).estimates[0].call, 'worse')
})

test('overallCall sums a format\'s metrics up; METRICS in table order', () => {
  const better = { call: 'better' }
  const worse = { call: 'worse' }
  const inconclusive = { call: 'inconclusive' }
  const equivalent = { call: 'equivalent' }
  assert.equal(overallCall({ p50: better, bytes: worse }), 'mixed')
  assert.equal(overallCall({ p50: better, bytes: better, p99: inconclusive }), 'better', 'inconclusive metrics do not change the direction')
  assert.equal(overallCall({ p50: worse, bytes: equivalent }), 'worse')
  assert.equal(overallCall({ p99: inconclusive }), 'inconclusive')
  assert.equal(overallCall({ bytes: equivalent, p50: equivalent }), 'equivalent')
  assert.equal(overallCall({ bytes: equivalent, p50: inconclusive }), 'inconclusive')
  assert.equal(overallCall({}), 'inconclusive')
  assert.deepEqual(Object.keys(METRICS), ['p50', 'p99', 'rate', 'bytes', 'clientCpu', 'serverCpu', 'clientCodec', 'serverCodec'])
  assert.deepEqual(METRICS.clientCodec, { label: 'client codec', better: 'lower', unit: '/msg' })
  assert.deepEqual(METRICS.serverCodec, { label: 'server codec', better: 'lower', unit: '/msg' })
})

test('trialOrder: balanced blocks A B, B A, B A, A B: each format at each position equally often', () => {
  assert.deepEqual([0, 1, 2, 3].map((batch) => trialOrder(2, batch)), [[0, 1], [1, 0], [1, 0], [0, 1]])
  for (const count of [2, 3, 4]) {
    const positions = Array.from({ length: count }, () => 0)
    const batches = 2 * count
    for (let batch = 0; batch < batches; batch++) trialOrder(count, batch).forEach((format, position) => { positions[format] += position })
    assert.ok(positions.every((sum) => sum === positions[0]), `${count} formats: position sums ${positions}`)
  }
})

/**
 * One generation of one format's latencies, µs, as an encoded histogram: 400 messages lognormal
 * around `us`, the whole generation `machine` faster or slower, and hiccups: a Poisson number of
 * messages (mean `hiccups`) held 1-4 ms. With a mean of 4, a generation's p99 (its 4th slowest) is
 * now the usual tail, now a hiccup, and the pooled p99 falls in the gap between them.
 */
function generationHistogram (normal, { us, machine, scale = 1, hiccups }) {
  const histogram = createLatencyHistogram()
  for (let i = 0; i < 400; i++) histogram.recordValue(Math.max(1, Math.round(scale * machine * us * Math.exp(0.25 * normal()))))
  // Poisson as the count of 4000 chances, each a normal beyond the quantile that makes its mean.
  const beyond = jStat.normal.inv(1 - hiccups / 8000, 0, 1)
  let held = 0
  for (let i = 0; i < 4000; i++) if (Math.abs(normal()) > beyond) held++
  for (let i = 0; i < held; i++) histogram.recordValue(Math.round(scale * (1000 + 1000 * Math.abs(normal()))))
  return encodeHistogram(histogram)
}

/**
 * p99 cells of `cells` rows over `generations` in two rotations, the candidate ×`scale` the
 * baseline, as the family sees them: pooled, and each generation's own.
 */
function tailTable ({ cells, generations, scale = 1, hiccups }, normal) {
  const strata = Array.from({ length: generations }, (_, g) => `rotation ${g % 2}`)
  return Array.from({ length: cells }, (_, c) => {
    const machine = strata.map(() => Math.exp(0.1 * normal()))
    const shape = (factor) => machine.map((m) => generationHistogram(normal, { us: 100 + 20 * c, machine: m, scale: factor, hiccups }))
    const [baseline, candidate] = [shape(1), shape(scale)]
    // As lib/compare/results.js does: each generation's own p99 where the tail is too steep to pool.
    const own = (histograms) => histograms.map((histogram) => smoothPercentile(decodeHistogram(histogram), 99))
    const ownCell = { baseline: own(baseline), candidate: own(candidate), strata, better: 'lower' }
    const pooled = [baseline, candidate].map((histograms) => pooledPercentiles(histograms, strata, 99))
    return { pooled: pooled.every(Boolean) ? { ...ownCell, baseline: pooled[0], candidate: pooled[1] } : ownCell, own: ownCell, steep: !pooled.every(Boolean) }
  })
}

/** The share of null tables (`tables` of them) with any call, pooled p99 and each generation's own. */
function tailFalseCalls (tables, hiccups, seed) {
  const normal = normalSource(seed)
  const wrong = { pooled: 0, own: 0, steep: 0 }
  for (let t = 0; t < tables; t++) {
    const table = tailTable({ cells: 6, generations: 12, hiccups }, normal)
    wrong.steep += table.filter((cell) => cell.steep).length / table.length
    for (const kind of ['pooled', 'own']) {
      const { estimates } = simultaneousEstimates(table.map((cell) => cell[kind]), { draws: 400, margin: 0 })
      if (estimates.some(called)) wrong[kind]++
    }
  }
  return { pooled: wrong.pooled / tables, own: wrong.own / tables, steep: wrong.steep / tables }
}

test('pooledPercentiles: null tables of p99 pooled over generations, hiccups or not: the chance of any false call is about alpha', () => {
  const rare = tailFalseCalls(60, 1, 11)
  console.log(`false-call rate of p99 over 60 null tables, hiccups on 0.25% of messages: pooled ${rare.pooled}, per generation ${rare.own}`)
  assert.ok(rare.pooled <= 0.08, String(rare.pooled))
  assert.ok(rare.steep < 0.05, `pooled, not steep: ${rare.steep}`)
  // The 99th in the gap between the usual tail and the hiccups: too steep to pool, each generation's own.
  const gap = tailFalseCalls(60, 4, 12)
  console.log(`... hiccups on 1% of messages: pooled ${gap.pooled}, per generation ${gap.own}, steep ${gap.steep}`)
  assert.ok(gap.steep > 0.9, `steep: ${gap.steep}`)
  assert.ok(gap.pooled <= 0.1, String(gap.pooled))
})

test('pooledPercentiles: a real difference is called and covered, with narrower intervals than each generation\'s own p99', () => {
  const table = tailTable({ cells: 6, generations: 16, scale: 0.8, hiccups: 1 }, normalSource(13))
  const pooled = simultaneousEstimates(table.map((cell) => cell.pooled)).estimates
  const own = simultaneousEstimates(table.map((cell) => cell.own)).estimates
  for (const estimate of pooled) {
    assert.equal(estimate.call, 'better', `${estimate.ratio} ${estimate.ci}`)
    assert.ok(estimate.ci[0] < 0.8 && estimate.ci[1] > 0.8, `${estimate.ci}`)
  }
  const median = (estimates) => estimates.map((estimate) => estimate.resolution).sort((a, b) => a - b)[estimates.length >> 1]
  console.log(`p99 half-width, median over cells: pooled ±${median(pooled)}, per generation ±${median(own)}`)
  assert.ok(median(pooled) < median(own), `pooled ±${median(pooled)}, per generation ±${median(own)}`)
})

test('pooledPercentiles: a stratum of one generation keeps its own percentile; a missing or empty histogram gives null', () => {
  const histogram = createLatencyHistogram()
  for (let us = 1; us <= 2000; us++) histogram.recordValue(us * 10)
  const one = encodeHistogram(histogram)
  const own = smoothPercentile(histogram, 99)
  assert.ok(own > 19.7 && own < 19.9, `the smooth p99 of 10..20000 µs lies near the 1980th value: ${own}`)
  const [alone] = pooledPercentiles([one], ['a'], 99)
  assert.ok(Math.abs(alone / own - 1) < 1e-12, `${alone} against ${own}`)
  assert.equal(pooledPercentiles([one, null], ['a', 'a'], 99), null)
  assert.equal(pooledPercentiles([one, encodeHistogram(createLatencyHistogram())], ['a', 'a'], 99), null)
  // A tail too steep to pool: the 99th between 1% of messages at 100 µs and the rest at 1 ms.
  const steep = createLatencyHistogram()
  steep.recordValueWithCount(100, 990)
  steep.recordValueWithCount(1000, 10)
  assert.equal(pooledPercentiles([encodeHistogram(steep)], ['a'], 99), null)
  // A thin tail: 15 generations of one message each have no p99 to pool.
  const single = createLatencyHistogram()
  single.recordValue(300_000)
  assert.equal(pooledPercentiles(Array(15).fill(encodeHistogram(single)), Array(15).fill('a'), 99), null)
  // Two identical generations: leaving either out changes nothing, so both keep the pooled value.
  const twice = pooledPercentiles([one, one], ['a', 'a'], 99)
  assert.ok(twice.every((value) => Math.abs(value / twice[0] - 1) < 1e-9))
})
