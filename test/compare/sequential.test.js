// The statistics of a comparison, tested by simulation: runSequential drives simulated trials
// with what real trials on a shared machine show (a cold first trial, drift as processes warm,
// neighbouring trials sharing the machine's state, noise), and the calls it leads to are counted
// over many seeded tables.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRandom } from '../../lib/payloads/random.js'
import { LOOK_STEP, PLANNED_PAIRS, runSequential } from '../../lib/compare/sequential.js'
import { METRICS, verdictsOf } from '../../lib/compare/statistics.js'

/** Noise of one trial per metric, as a standard deviation of its log: what pinned runs on 2 cores show. */
const NOISE = { p50: 0.05, p99: 0.15, rate: 0.05, bytes: 0, clientCpu: 0.04, serverCpu: 0.06 }
const BASE = { p50: 0.12, p99: 0.5, rate: 6000, bytes: 1069, clientCpu: 120, serverCpu: 60 }

/**
 * A machine that runs simulated trials: one unit of time each, slower when cold (a row's first
 * trial of a format), faster as it warms (drift), sharing a slowly wandering state with its
 * neighbours (AR(1)), plus independent noise; `planted` multiplies a metric of a format on a row.
 */
function simulatedMachine (seed, planted = {}) {
  const random = createRandom(seed)
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())
  let clock = 0
  let shared = 0
  const seen = new Set()
  return {
    now: () => clock,
    async runTrial (row, format, pair) {
      clock += 1
      shared = 0.7 * shared + 0.05 * normal()
      const cold = !seen.has(`${row.key}/${format}`)
      seen.add(`${row.key}/${format}`)
      const drift = -0.01 * (pair ?? 0)
      return Object.fromEntries(Object.keys(METRICS).map((name) => {
        const slower = METRICS[name].better === 'lower' ? 1 : -1
        const noise = name === 'bytes' ? 0 : slower * (shared + drift + (cold ? 0.4 : 0)) + NOISE[name] * normal()
        const plant = planted[`${row.key}/${format}/${name}`] ?? 1
        return [name, BASE[name] * plant * Math.exp(noise)]
      }))
    }
  }
}

const ROWS = Array.from({ length: 8 }, (_, i) => ({ key: `test${i}\nnone`, label: `test ${i}` }))

/**
 * Runs one simulated comparison of `rows` (default: 8, like `npm run compare`'s tests) with a
 * budget of `pairs` pairs per row after the warm-up; returns each cell's call by `row/metric`.
 */
async function simulatedCalls (seed, { planted, rows = ROWS, pairs = 10, trials } = {}) {
  const machine = simulatedMachine(seed, planted)
  const budgetMs = rows.length * 2 * (1 + pairs)
  const { trials: values, design } = await runSequential({ rows, formats: 2, trials, budgetMs, margin: 0.05, ...machine })
  const calls = {}
  for (const row of rows) {
    const [baseline, candidate] = values.get(row.key)
    const verdicts = verdictsOf(baseline, candidate, design.looks[row.key], design)
    for (const [name, estimate] of Object.entries(verdicts)) calls[`${row.key}/${name}`] = estimate.call
  }
  return { calls, design }
}

const TABLES = 300
const timed = (call) => call === 'better' || call === 'worse'

test('A/A tables: a false call in at most 5% of them, over every cell and look', async () => {
  let tablesWithFalseCalls = 0
  let equivalentBytes = 0
  for (let seed = 1; seed <= TABLES; seed++) {
    const { calls } = await simulatedCalls(seed)
    if (Object.entries(calls).some(([cell, call]) => !cell.endsWith('/bytes') && timed(call))) tablesWithFalseCalls++
    if (ROWS.every((row) => calls[`${row.key}/bytes`] === 'equivalent')) equivalentBytes++
  }
  assert.ok(tablesWithFalseCalls / TABLES <= 0.05, `${tablesWithFalseCalls} of ${TABLES} A/A tables made a false call`)
  assert.equal(equivalentBytes, TABLES, 'bytes that do not vary are equivalent when equal')
})

test('a planted 20% difference is called, the right way, in at least 90% of tables; nothing else is', async () => {
  // Two tests, as `npm run compare -- --tests 3,4` runs them: the budget fits all 20 planned pairs.
  const rows = ROWS.slice(0, 2)
  let found = 0
  let falseCalls = 0
  for (let seed = 1001; seed < 1001 + TABLES; seed++) {
    const row = rows[seed % rows.length].key
    const { calls } = await simulatedCalls(seed, { rows, pairs: 20, planted: { [`${row}/1/p50`]: 1.2 } })
    if (calls[`${row}/p50`] === 'worse') found++
    if (Object.entries(calls).some(([cell, call]) => cell !== `${row}/p50` && !cell.endsWith('/bytes') && timed(call))) falseCalls++
  }
  assert.ok(found / TABLES >= 0.9, `the planted difference was called in ${found} of ${TABLES} tables`)
  assert.ok(falseCalls / TABLES <= 0.05, `${falseCalls} of ${TABLES} tables called another cell`)
})

test('the same with a fixed number of trials: one look at the end', async () => {
  const rows = ROWS.slice(0, 2)
  let falseCalls = 0
  let found = 0
  for (let seed = 2001; seed < 2001 + TABLES; seed++) {
    const aa = await simulatedCalls(seed, { trials: 16 })
    if (Object.entries(aa.calls).some(([cell, call]) => !cell.endsWith('/bytes') && timed(call))) falseCalls++
    assert.deepEqual(Object.values(aa.design.looks), ROWS.map(() => [16]))
    const planted = await simulatedCalls(seed, { rows, trials: 16, planted: { [`${rows[0].key}/1/p50`]: 1.2 } })
    if (planted.calls[`${rows[0].key}/p50`] === 'worse') found++
  }
  assert.ok(falseCalls / TABLES <= 0.05, `${falseCalls} of ${TABLES} A/A tables made a false call`)
  assert.ok(found / TABLES >= 0.9, `the planted difference was called in ${found} of ${TABLES} tables`)
})

test('without the warm-up trial and the balanced order, the same machine makes false calls: the design matters', async () => {
  // What the old design did: the first trial of each row measured cold, formats alternating A B, B A
  // from an odd start, one 95% interval per cell. The simulated machine is the one above.
  let tablesWithFalseCalls = 0
  for (let seed = 1; seed <= 100; seed++) {
    const machine = simulatedMachine(seed)
    let falseCall = false
    for (const row of ROWS) {
      const values = [[], []]
      for (let pair = 0; pair < 5; pair++) {
        for (const format of pair % 2 ? [1, 0] : [0, 1]) values[format][pair] = await machine.runTrial(row, format, pair + 1)
      }
      const verdicts = verdictsOf(values[0], values[1], [5], { family: 1, plannedPairs: 5, margin: 0.01 })
      if (Object.entries(verdicts).some(([name, estimate]) => name !== 'bytes' && timed(estimate.call))) falseCall = true
    }
    if (falseCall) tablesWithFalseCalls++
  }
  assert.ok(tablesWithFalseCalls > 30, `only ${tablesWithFalseCalls} of 100 tables made a false call the old way`)
})

test('adaptive looks: every LOOK_STEP pairs up to PLANNED_PAIRS, stopping a row once all its cells are decided', async () => {
  // A difference so large and clean every cell is decided at the first look.
  const rows = ROWS.slice(0, 2)
  let clock = 0
  const { trials, design, stops } = await runSequential({
    rows,
    formats: 2,
    budgetMs: 1e9,
    margin: 0.05,
    now: () => clock,
    async runTrial (row, format) {
      clock++
      return Object.fromEntries(Object.keys(METRICS).map((name) => [name, format ? 50 : 100 + (clock % 3)]))
    }
  })
  assert.deepEqual(design.looks, { [rows[0].key]: [LOOK_STEP], [rows[1].key]: [LOOK_STEP] })
  assert.deepEqual(stops, { [rows[0].key]: 'decided', [rows[1].key]: 'decided' })
  assert.equal(trials.get(rows[0].key)[0].length, LOOK_STEP)
  assert.equal(design.plannedPairs, PLANNED_PAIRS)
  assert.equal(design.family, 2 * 1 * 6)
  assert.equal(design.lookStep, LOOK_STEP)
})

test('a budget too short for two pairs of every row is refused after the warm-up', async () => {
  // 8 rows: 16 units of warm-up, then 2 pairs of 2 trials each need 32 more.
  const machine = simulatedMachine(7)
  await assert.rejects(runSequential({ rows: ROWS, formats: 2, budgetMs: 40, margin: 0.05, ...machine }),
    { name: 'UsageError', message: /^--budget 0\.0s is too short for two trial pairs of every test and network: the warm-up suggests 0\.0s;/ })
  const enough = await runSequential({ rows: ROWS, formats: 2, budgetMs: 48, margin: 0.05, ...simulatedMachine(7) })
  assert.ok([...enough.trials.values()].every(([baseline]) => baseline.length === 2), 'exactly two pairs each')
  // A budget the user did not set is stretched to two pairs instead.
  const stretched = await runSequential({ rows: ROWS, formats: 2, budgetMs: 40, budgetGiven: false, margin: 0.05, ...simulatedMachine(7) })
  assert.equal(stretched.budgetMs, 48)
  assert.ok([...stretched.trials.values()].every(([baseline]) => baseline.length === 2), 'two pairs each')
})
