import { test } from 'node:test'
import assert from 'node:assert/strict'
import { performance } from 'node:perf_hooks'
import { DEFAULT_BACKOFF, Reconnects } from '../../lib/load/reconnects.js'
import { decodeHistogram } from '../../lib/histogram.js'
import { busiestWindow } from '../../lib/report/report.js'

test('delay: full jitter, uniform up to base x 2^attempt and never past the cap', () => {
  const reconnects = new Reconnects({ baseMs: 100, capMs: 1000 })
  for (const [attempt, ceiling] of [[0, 100], [1, 200], [2, 400], [3, 800], [4, 1000], [10, 1000]]) {
    const waits = Array.from({ length: 2000 }, () => reconnects.delay(attempt))
    assert.ok(waits.every((ms) => ms >= 0 && ms < ceiling), `attempt ${attempt}: up to ${ceiling} ms`)
    // Spread over the whole range, not bunched: the mean near half the ceiling, some in each tenth.
    const mean = waits.reduce((sum, ms) => sum + ms, 0) / waits.length
    assert.ok(Math.abs(mean - ceiling / 2) < ceiling * 0.05, `attempt ${attempt}: mean ${mean}`)
    for (let tenth = 0; tenth < 10; tenth++) assert.ok(waits.some((ms) => ms >= tenth * ceiling / 10 && ms < (tenth + 1) * ceiling / 10))
  }
  assert.deepEqual(new Reconnects().backoff, DEFAULT_BACKOFF)
})

test('an outage: from the first drop until every connection is back; time away per connection, losses, reopenings per 10 ms', async () => {
  const reconnects = new Reconnects()
  const first = reconnects.dropped(3)
  const second = reconnects.dropped(2)
  await new Promise((resolve) => setTimeout(resolve, 5))
  reconnects.back(first)
  assert.equal(reconnects.result().allBackMs, 0, 'one is still away')
  reconnects.back(second)
  const result = reconnects.result()
  assert.equal(result.count, 2)
  assert.equal(result.lost, 5)
  assert.ok(result.allBackMs >= 5, `${result.allBackMs} ms`)
  assert.equal(decodeHistogram(result.histogram).totalCount, 2)
  assert.equal(Object.values(result.buckets).reduce((sum, n) => sum + n, 0), 2)
  for (const bucket of Object.keys(result.buckets)) assert.ok(Math.abs(Number(bucket) * 10 - Date.now()) < 1000, 'buckets of the epoch, 10 ms each')
  // One that never comes back ends the outage too, without counting as back.
  reconnects.dropped(0)
  reconnects.gone()
  assert.equal(reconnects.result().count, 2)
  assert.equal(reconnects.away, 0)
})

test('reopenings: a burst straddling a 100 ms edge of the epoch counts whole; those more than 100 ms before drop out', () => {
  const reconnects = new Reconnects()
  // performance.now() of epoch ms `epoch`, whatever the process's time origin.
  const at = (epoch) => epoch - performance.timeOrigin
  const edge = Math.ceil((performance.timeOrigin + 10_000) / 100) * 100
  for (let i = 0; i < 6; i++) reconnects.back(reconnects.dropped(0), at(edge - 25 + i * 10)) // 30 ms before the edge to 25 after
  const { buckets } = reconnects.result()
  assert.equal(Object.keys(buckets).length, 6, 'one 10 ms bucket each')
  assert.equal(busiestWindow(buckets), 6, 'fixed windows of the epoch would have seen 3')
  // 150 ms later, four more: the six left the window, so the busiest is still six, not ten.
  for (let i = 0; i < 4; i++) reconnects.back(reconnects.dropped(0), at(edge + 125 + i))
  assert.equal(busiestWindow(reconnects.result().buckets), 6)
})

test('wait: of attempts that came due together, at most 16 start in one turn of the event loop, the rest in the turns after, in the order they came due', async () => {
  // Base 0: every wait is the shortest timer, so the 100 come due together, in the order they were made.
  const reconnects = new Reconnects({ baseMs: 0, capMs: 0 })
  let turn = 0
  let counting = true
  const count = () => {
    turn++
    if (counting) setImmediate(count)
  }
  setImmediate(count)
  const started = []
  const waits = Array.from({ length: 100 }, (_, i) => reconnects.wait(0).then(() => started.push({ i, turn })))
  // A loop running late: every one of them has come due by the time it gets to its timers.
  for (const until = performance.now() + 5; performance.now() < until;);
  await Promise.all(waits)
  counting = false
  assert.deepEqual(started.map(({ i }) => i), Array.from({ length: 100 }, (_, i) => i), 'oldest first')
  const perTurn = new Map()
  for (const { turn } of started) perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1)
  assert.deepEqual([...perTurn.values()], [16, 16, 16, 16, 16, 16, 4], `per turn: ${JSON.stringify([...perTurn])}`)
  assert.deepEqual([...perTurn.keys()], [...perTurn.keys()].map((_, k) => [...perTurn.keys()][0] + k), 'in consecutive turns')
  // Each started at least the 5 ms the loop was held past its due time late, and the report says so.
  const lateness = decodeHistogram(reconnects.result().lateness)
  assert.equal(lateness.totalCount, 100)
  assert.ok(lateness.minNonZeroValue >= 4900, `${lateness.minNonZeroValue} µs`)
})

test('wait: no more than a turn takes come due together: each starts as its backoff ends, none waiting for a turn', async () => {
  const reconnects = new Reconnects({ baseMs: 0, capMs: 0 })
  const started = []
  const waits = Array.from({ length: 16 }, (_, i) => reconnects.wait(0).then(() => started.push(i)))
  // A timer of the same length, made after theirs: it fires after theirs, in the same turn.
  const atTheirTurn = await new Promise((resolve) => setTimeout(() => resolve(started.length), 0))
  await Promise.all(waits)
  assert.equal(atTheirTurn, 16)
})
