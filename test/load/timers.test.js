// The seconds of a time series: closed at the first event past each boundary, counted from the
// start (not from when the last closed), or by a timer when no event comes; nothing after the end.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { performance } from 'node:perf_hooks'
import { Seconds, Timers } from '../../lib/load/timers.js'

test('an event at or past a second\'s end closes it first, and the next second ends a second after the first\'s end, not after the event', (t) => {
  const timers = new Timers()
  t.after(() => timers.clearAll())
  const startedAt = performance.now() + 60_000 // the timer stays far off: only events close seconds here
  let closed = 0
  const seconds = new Seconds(timers, startedAt, () => closed++)
  seconds.passed(startedAt + 999)
  assert.equal(closed, 0)
  seconds.passed(startedAt + 1015) // 15 ms late
  assert.equal(closed, 1)
  seconds.passed(startedAt + 1999)
  assert.equal(closed, 1, 'the second second ends at 2000 ms, not 15 ms later')
  seconds.passed(startedAt + 2000)
  assert.equal(closed, 2)
  timers.clearAll()
  seconds.passed(startedAt + 9000)
  assert.equal(closed, 2, 'a reply after the owner ended belongs to no second')
})

test('a second with no event is closed by the timer, once its end has come', async (t) => {
  const timers = new Timers()
  t.after(() => timers.clearAll())
  const startedAt = performance.now() - 990
  const closedAt = await new Promise((resolve) => new Seconds(timers, startedAt, () => resolve(performance.now())))
  assert.ok(closedAt >= startedAt + 1000, `closed ${closedAt - startedAt} ms after the start`)
})

test('timers set after clearAll are not set: the owner has ended', () => {
  const timers = new Timers()
  timers.clearAll()
  timers.after('late', 0, () => assert.fail('a timer after the end'))
  timers.every('late', 1, () => assert.fail('an interval after the end'))
  assert.equal(timers.handles.size, 0)
})
