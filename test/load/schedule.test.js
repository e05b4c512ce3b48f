import { test } from 'node:test'
import assert from 'node:assert/strict'
import { OpenLoopSchedule, StagedSchedule } from '../../lib/load/schedule.js'

/** Counts, one by one, the messages k whose due time k / rate falls before the deadline. */
function countDueBefore (rate, durationMs) {
  let count = 0
  while (count * 1000 / rate < durationMs) count++
  return count
}

test('every message due before the deadline is planned, at any rate from 0.1/s to 100,000/s', () => {
  const cases = [[0.1, 100], [0.1, 10_000], [0.1, 10_001], [0.5, 3000], [0.5, 5000], [0.5, 4000], [1, 2500], [3, 1000],
    [7, 1000], [333, 1000], [1000, 1500], [2000, 500], [10_000, 1234], [100_000, 1000], [100_000, 7]]
  for (const [rate, durationMs] of cases) {
    const schedule = new OpenLoopSchedule(rate, { durationMs })
    assert.equal(schedule.planned, countDueBefore(rate, durationMs), `${rate}/s over ${durationMs} ms`)
    // The last planned message is due before the deadline, the next one not.
    assert.ok(schedule.dueAt(schedule.planned - 1) < durationMs)
    assert.ok(schedule.dueAt(schedule.planned) >= durationMs - 1e-6)
  }
})

test('the issue\'s low rates: 0.5/s over 5 s is 3 messages (0, 2, 4 s), over 3 s is 2', () => {
  const five = new OpenLoopSchedule(0.5, { durationMs: 5000 })
  assert.equal(five.planned, 3)
  assert.deepEqual([0, 1, 2].map((index) => five.dueAt(index)), [0, 2000, 4000])
  assert.equal(new OpenLoopSchedule(0.5, { durationMs: 3000 }).planned, 2)
})

test('dueBy: one message at the start, then one per interval, never more than planned', () => {
  const schedule = new OpenLoopSchedule(0.5, { durationMs: 5000 })
  assert.equal(schedule.dueBy(0), 1)
  assert.equal(schedule.dueBy(1999), 1)
  assert.equal(schedule.dueBy(2000), 2)
  assert.equal(schedule.dueBy(4000), 3)
  assert.equal(schedule.dueBy(60_000), 3, 'a late timer sends what was due, not more')
})

test('a count and a duration: whichever comes first', () => {
  assert.equal(new OpenLoopSchedule(1000, { durationMs: 1000, count: 200 }).planned, 200)
  assert.equal(new OpenLoopSchedule(1000, { durationMs: 100, count: 200 }).planned, 100)
  assert.equal(new OpenLoopSchedule(1000, { count: 200 }).planned, 200)
})

test('the measured window is the schedule\'s: the deadline, or one interval per message of a count', () => {
  const timed = new OpenLoopSchedule(0.5, { durationMs: 5000 })
  assert.equal(timed.windowMs(3), 5000, '3 messages in 5 s: 0.6/s, not 1/s between the first send and the last reply')
  assert.equal(new OpenLoopSchedule(1000, { count: 200 }).windowMs(200), 200)
  assert.equal(new OpenLoopSchedule(1000, { durationMs: 1500 }).windowMs(1500), 1500)
})

test('StagedSchedule: a ramp 3s:500, 3s:2000, 3s:0 calls for the area under it, message by message', () => {
  const schedule = new StagedSchedule([{ durationMs: 3000, target: 500 }, { durationMs: 3000, target: 2000 }, { durationMs: 3000, target: 0 }])
  // 0 -> 500/s over 3 s is 750 messages, 500 -> 2000/s over 3 s 3750, 2000 -> 0/s over 3 s 3000.
  assert.equal(schedule.planned, 7500)
  assert.equal(schedule.durationMs, 9000)
  assert.equal(schedule.rate, 7500 / 9)
  assert.deepEqual(schedule.ends(), [3000, 6000, 9000])
  assert.equal(schedule.dueAt(750), 3000)
  assert.equal(schedule.dueAt(4500), 6000)
  // Within a stage the count grows as the area: 0 -> 500/s, so message k is due at sqrt(2k / slope).
  assert.ok(Math.abs(schedule.dueAt(1) - Math.sqrt(2 / (0.5 / 3000))) < 1e-9)
  // Every message at its due time is due, the next one not yet; due times never go back.
  let last = -1
  for (let k = 0; k < schedule.planned; k++) {
    const at = schedule.dueAt(k)
    assert.ok(at >= last && at < 9000, `message ${k} at ${at}`)
    assert.equal(schedule.dueBy(at), k + 1, `at message ${k}'s due time`)
    last = at
  }
  // Per second, the count follows the ramp: up, faster up, then down to nothing.
  const perSecond = Array.from({ length: 9 }, (_, s) => schedule.dueBy((s + 1) * 1000 - 1e-6) - schedule.dueBy(s * 1000 - 1e-6))
  assert.deepEqual(perSecond.map((n) => Math.round(n / 10) * 10), [80, 250, 420, 750, 1250, 1750, 1670, 1000, 330])
  assert.equal(schedule.dueBy(60_000), 7500, 'a late timer sends what was due, not more')
  assert.equal(schedule.windowMs(7500), 9000)
})

test('StagedSchedule: a hold at zero sends nothing and the ramp after it starts where it left; a start rate and a count', () => {
  const schedule = new StagedSchedule([{ durationMs: 1000, target: 1000 }, { durationMs: 1000, target: 0 }, { durationMs: 1000, target: 0 }, { durationMs: 1000, target: 1000 }])
  assert.equal(schedule.planned, 1500)
  assert.equal(schedule.dueAt(1000), 2000, 'the earliest time the ramp had called for it')
  assert.ok(schedule.dueAt(1001) > 3000, 'none while the rate is 0')
  assert.equal(schedule.dueBy(2500), 1001)
  const steady = new StagedSchedule([{ durationMs: 2000, target: 1000 }], { startRate: 1000, count: 500 })
  assert.equal(steady.planned, 500)
  assert.equal(steady.dueAt(1), 1)
  assert.equal(steady.windowMs(500), 500, 'a count stops it first: one interval past the last')
})
