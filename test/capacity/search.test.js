import { test } from 'node:test'
import assert from 'node:assert/strict'
import { CapacitySearch, DISTURBED_RETRIES, GENERATOR_RETRIES, GROWTH, ROUND_STEP, crossing } from '../../lib/capacity/search.js'

/**
 * A server whose objective's excess grows exponentially with load and crosses 1 at `capacity`,
 * times noise: what a probe of it gives.
 */
function simulated (capacity, { noise = 0, seed = 1, steepness = 8 } = {}) {
  // mulberry32: the same noise every run.
  let state = seed >>> 0
  const random = () => {
    state = (state + 0x6D2B79F5) >>> 0
    let t = Math.imul(state ^ (state >>> 15), state | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return (rate) => {
    const excess = Math.exp(steepness * (rate / capacity - 1)) * (1 + noise * (random() * 2 - 1))
    return { rate, pass: excess < 1, excess }
  }
}

function run (search, probe) {
  for (let rate = search.next(); rate !== null; rate = search.next()) search.record(probe(rate))
  return search.result()
}

test('steps up by GROWTH from the start rate until a fail, bisects, then confirms in rounds near the capacity', () => {
  const result = run(new CapacitySearch({ startRate: 1000, rounds: 4 }), simulated(30_000))
  assert.equal(result.status, 'found')
  const rates = result.outcomes.map((outcome) => outcome.rate)
  assert.deepEqual(rates.slice(0, 6), [1000, 2000, 4000, 8000, 16000, 32000].map((rate, i) => 1000 * GROWTH ** i))
  assert.equal(result.estimates.length, 4)
  for (const estimate of [result.initial, ...result.estimates]) assert.ok(Math.abs(estimate / 30_000 - 1) < 0.01, `${estimate}`)
  // Each round brackets the knee again, a pass below and a fail above a step apart, and estimates
  // from that bracket: its centre and one step out, here where the centre is the knee.
  const rounds = result.outcomes.slice(-4 * 2)
  assert.equal(result.outcomes.length, 6 + 5 + 4 * 2, `${rates.map(Math.round)}`)
  // Each estimate with the bracket it was made between.
  assert.deepEqual(result.brackets.map(({ low, high }) => [low < result.estimates[0] * 1.1, high > low]), result.estimates.map(() => [true, true]))
  for (let i = 0; i < rounds.length; i += 2) {
    const [centre, step] = rounds.slice(i, i + 2)
    assert.notEqual(centre.pass, step.pass)
    assert.ok(Math.abs(Math.max(centre.rate, step.rate) / Math.min(centre.rate, step.rate) - (1 + ROUND_STEP)) < 1e-3, `${centre.rate} and ${step.rate}`)
  }
})

test('only the probes that step up or down by GROWTH scout (may be short); a false pass among them is undone by the full-length ones', () => {
  const search = new CapacitySearch({ startRate: 1000, rounds: 3 })
  const scouted = []
  // A short step passes up to 10% past the knee, where a full one fails.
  const probe = simulated(30_000)
  for (let rate = search.next(); rate !== null; rate = search.next()) {
    const scouting = search.scouting
    scouted.push(scouting)
    search.record(scouting && rate <= 33_000 ? { rate, pass: true, excess: 0.9 } : probe(rate))
  }
  const { status, outcomes, estimates } = search.result()
  assert.equal(status, 'found')
  assert.deepEqual(outcomes.slice(0, 7).map((outcome) => outcome.rate), [1000, 2000, 4000, 8000, 16000, 32000, 64000])
  assert.deepEqual(scouted.slice(0, 8), [true, true, true, true, true, true, true, false], 'the bisection after the first fail does not scout')
  assert.ok(scouted.slice(7).every((scouting) => !scouting), 'nor do the rounds')
  for (const estimate of estimates) assert.ok(Math.abs(estimate / 30_000 - 1) < 0.01, `${estimate}`)
})

test('with noise every estimate stays near the capacity and they spread', () => {
  const result = run(new CapacitySearch({ startRate: 500, rounds: 5 }), simulated(12_345, { noise: 0.3, seed: 7 }))
  assert.equal(result.status, 'found')
  for (const estimate of result.estimates) assert.ok(Math.abs(estimate / 12_345 - 1) < 0.1, `${estimate}`)
  assert.ok(new Set(result.estimates.map(Math.round)).size > 1)
})

test('a first probe that fails steps down until one passes', () => {
  const result = run(new CapacitySearch({ startRate: 100_000, rounds: 3 }), simulated(3000))
  assert.equal(result.status, 'found')
  assert.deepEqual(result.outcomes.slice(0, 3).map((outcome) => outcome.rate), [100_000, 50_000, 25_000])
  for (const estimate of result.estimates) assert.ok(Math.abs(estimate / 3000 - 1) < 0.01)
})

test('a fail the generator could not keep up with is run again, and ends the search there if it repeats twice: no capacity is made of it', () => {
  const probe = simulated(50_000)
  const result = run(new CapacitySearch({ startRate: 1000, rounds: 3 }), (rate) => rate >= 16_000
    ? { rate, pass: false, excess: 2, generatorBound: true }
    : probe(rate))
  assert.equal(result.status, 'generator-bound')
  assert.equal(result.limitRate, 16_000)
  assert.deepEqual(result.outcomes.map((outcome) => outcome.rate), [1000, 2000, 4000, 8000, 16_000, 16_000, 16_000])
  assert.deepEqual(result.estimates, [])
  // Twice only: the search goes on as if it had not happened.
  let stalls = 2
  const once = run(new CapacitySearch({ startRate: 1000, rounds: 3 }), (rate) => rate === 16_000 && stalls-- > 0
    ? { rate, pass: false, excess: 2, generatorBound: true }
    : probe(rate))
  assert.equal(once.status, 'found')
  assert.deepEqual(once.outcomes.slice(4, 7).map((outcome) => outcome.rate), [16_000, 16_000, 16_000])
})

test('a generator-bound fail while others took the machine\'s CPU is no strike, up to DISTURBED_RETRIES; past them it counts', () => {
  const probe = simulated(50_000)
  // A few seconds of other work at 16,000/s: five disturbed fails in a row, then the machine is quiet.
  let busy = DISTURBED_RETRIES
  const passing = run(new CapacitySearch({ startRate: 1000, rounds: 3 }), (rate) => rate === 16_000 && busy-- > 0
    ? { rate, pass: false, excess: 2, generatorBound: true, disturbed: true }
    : probe(rate))
  assert.equal(passing.status, 'found')
  assert.equal(passing.outcomes.filter((outcome) => outcome.disturbed).length, DISTURBED_RETRIES)
  // A machine that stays busy: the search still ends, after the forgiven ones and the strikes.
  const busyForever = run(new CapacitySearch({ startRate: 1000, rounds: 3 }), (rate) => rate >= 16_000
    ? { rate, pass: false, excess: 2, generatorBound: true, disturbed: true }
    : probe(rate))
  assert.equal(busyForever.status, 'generator-bound')
  assert.equal(busyForever.outcomes.filter((outcome) => outcome.rate === 16_000).length, DISTURBED_RETRIES + GENERATOR_RETRIES + 1)
})

test('a server that fails even the least rate, or passes the most, says so', () => {
  assert.equal(run(new CapacitySearch({ startRate: 8, rounds: 3, minRate: 1 }), simulated(0.1)).status, 'below')
  const above = run(new CapacitySearch({ startRate: 1000, rounds: 3, maxRate: 64_000 }), simulated(1e9))
  assert.equal(above.status, 'above')
  assert.equal(above.limitRate, 64_000)
})

test('crossing interpolates on the log of the excess, or takes the geometric mean without one', () => {
  assert.equal(crossing({ rate: 100, excess: 0.5 }, { rate: 200, excess: 2 }), 150)
  assert.equal(crossing({ rate: 100, excess: 0.5 }, { rate: 400, excess: null }), 200)
})

test('a search stopped generator-bound after some rounds keeps them on record, but its status is not found', () => {
  const probe = simulated(20_000)
  let probes = 0
  const result = run(new CapacitySearch({ startRate: 1000, rounds: 6 }), (rate) => {
    const outcome = probe(rate)
    // From the 20th probe on, the generator cannot keep up with any rate that fails.
    return ++probes >= 20 && !outcome.pass ? { ...outcome, generatorBound: true } : outcome
  })
  assert.equal(result.status, 'generator-bound')
  assert.ok(result.estimates.length > 0 && result.estimates.length < 6, `${result.estimates.length} rounds on record`)
})

test('a first bisection misled by one fluke: rounds that reach no bracket move on from where they got, and the knee is found', () => {
  const server = simulated(20_000)
  // One fail at 2,000/s, far below the knee (a stall), and every probe true to the server after it.
  let fluked = false
  const probe = (rate) => {
    if (!fluked && rate >= 2000) {
      fluked = true
      return { rate, pass: false, excess: 1.2 }
    }
    return server(rate)
  }
  const result = run(new CapacitySearch({ startRate: 1000, rounds: 4 }), probe)
  assert.ok(result.initial < 2000, `the first bisection was misled: ${result.initial}`)
  assert.equal(result.status, 'found')
  assert.ok(result.estimates.length >= 1)
  for (const estimate of result.estimates) assert.ok(Math.abs(estimate / 20_000 - 1) < 0.02, `${estimate}`)
})

test('each round\'s bracket says whether the generator was at its limit at its pass', () => {
  // Saturated at every probe from 28,000/s up: the rounds' passes, near 30,000, all say so.
  const knee = simulated(30_000)
  const result = run(new CapacitySearch({ startRate: 1000, rounds: 3 }), (rate) => ({ ...knee(rate), generatorSaturated: rate >= 28_000 }))
  assert.equal(result.brackets.length, 3)
  for (const bracket of result.brackets) assert.equal(bracket.generatorSaturated, bracket.low >= 28_000, JSON.stringify(bracket))
  assert.ok(result.brackets.every((bracket) => bracket.generatorSaturated))
  const clean = run(new CapacitySearch({ startRate: 1000, rounds: 3 }), (rate) => ({ ...knee(rate), generatorSaturated: rate >= 29_000 }))
  assert.ok(clean.brackets.every((bracket) => !bracket.generatorSaturated), 'saturated at the fails only: at no pass')
})
