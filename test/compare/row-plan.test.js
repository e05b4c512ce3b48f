// How a row's batches are planned (lib/compare/row-plan.js): sizes and rates from the probes, and
// the order the formats take turns in.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { batchOrders, nextProbe, rowPlan } from '../../lib/compare/row-plan.js'

test('rowPlan: batches of about 25 ms for the slower format; a row of one message at a time costs its timed batches instead of running open-loop pairs', () => {
  const plain = { inflight: 1, connections: 1 }
  const fast = rowPlan(4000, 2, plain)
  assert.equal(fast.closedCount, 100)
  assert.equal(fast.openCount, 80)
  assert.equal(fast.openRate, 3200)
  assert.ok(fast.closedPairs >= 1 && fast.openPairs >= 1 && fast.warmupBatches >= 1, JSON.stringify(fast))
  assert.equal(fast.closedPairs, 5, 'two formats: 40% of 600 ms in pairs of 25 ms batches')
  assert.equal(fast.openPairs, 7, 'and 60% in open loop')
  // people: one 13 MB message takes ~300 ms, so closed and open loop would send the same way.
  assert.deepEqual(rowPlan(3, 2, plain), { closedCount: 1, timedRate: null, closedPairs: 1, openCount: 0, openRate: null, openPairs: 0, warmupBatches: 0 })
  // More in flight, or more connections, and an open-loop batch of one differs from a closed one.
  for (const load of [{ inflight: 4, connections: 1 }, { inflight: 1, connections: 2 }]) {
    assert.equal(rowPlan(3, 2, load).openPairs, 1, JSON.stringify(load))
  }
  assert.equal(rowPlan(4000, 2, plain, 1).openPairs, 0, '-n 1: a batch of one is sent the same way in either loop')
})

test('nextProbe: probes grow to a batch at the fastest rate so far, two to three of them; one slow message alone does not time a row', () => {
  // A fast row: one message (wake-ups), then batches of 25 ms at the best rate, capped at 200.
  assert.equal(nextProbe([{ sent: 1, durationMs: 0.25 }]), 100)
  assert.equal(nextProbe([{ sent: 1, durationMs: 0.25 }, { sent: 100, durationMs: 10 }]), 200)
  assert.equal(nextProbe([{ sent: 1, durationMs: 0.25 }, { sent: 100, durationMs: 10 }, { sent: 200, durationMs: 20 }]), null)
  // The first message held up by a busy machine: probed again, and the fastest probe sizes the next.
  assert.equal(nextProbe([{ sent: 1, durationMs: 260 }]), 1)
  assert.equal(nextProbe([{ sent: 1, durationMs: 260 }, { sent: 1, durationMs: 0.25 }]), 100)
  assert.equal(nextProbe([{ sent: 1, durationMs: 260 }], 20), 20, '-n: every probe after the first that size')
  // people: a second message of 0.3 s confirms the first.
  assert.equal(nextProbe([{ sent: 1, durationMs: 300 }, { sent: 1, durationMs: 310 }]), null)
})

test('batchOrders: over a rotation\'s generations every format opens the row, runs first, and sits at each place equally often, however few pairs a row has', () => {
  // people has one pair a generation: started afresh each time, one format would always go first.
  assert.deepEqual([0, 1, 2, 3].map((round) => batchOrders(2, 1, round)), [[[0, 1]], [[1, 0]], [[0, 1]], [[1, 0]]])
  assert.deepEqual(batchOrders(2, 4, 0), [[0, 1], [1, 0], [1, 0], [0, 1]])
  // Four pairs start with the same order (A B ... B A) each time: the formats must take turns opening the row.
  assert.deepEqual(batchOrders(2, 4, 1), [[1, 0], [0, 1], [0, 1], [1, 0]])
  for (const count of [2, 3, 4]) {
    for (let pairs = 1; pairs <= 5; pairs++) {
      // Sums of each format's places (0 first) over 2 x count rounds of one rotation: all equal.
      const places = Array.from({ length: count }, () => 0)
      const first = Array.from({ length: count }, () => 0)
      const opening = new Set()
      for (let round = 0; round < 2 * count; round++) {
        opening.add(batchOrders(count, pairs, round)[0][0])
        for (const order of batchOrders(count, pairs, round)) {
          order.forEach((format, place) => { places[format] += place })
          first[order[0]]++
        }
      }
      assert.ok(places.every((sum) => sum === places[0]), `${count} formats, ${pairs} pairs: places ${places}`)
      assert.ok(first.every((times) => times === first[0]), `${count} formats, ${pairs} pairs: first ${first}`)
      assert.equal(opening.size, count, `${count} formats, ${pairs} pairs: the row opened with ${[...opening]}`)
    }
  }
})
