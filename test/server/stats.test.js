import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ServerStats, megabytes } from '../../lib/server/stats.js'

test('counters by format and test; totals over all; the summary line rates each format since the last line', () => {
  const stats = new ServerStats()
  assert.equal(stats.hasActivitySinceLastSummary(), false)
  stats.forTarget('json', 'small').messages += 3000
  stats.forTarget('json', 'medium').messages += 2000
  stats.forTarget('protobuf', 'small').messages += 500
  stats.forTarget('protobuf', 'small').errors += 1
  assert.equal(stats.forTarget('json', 'small'), stats.forTarget('json', 'small'), 'one counter per target')
  assert.deepEqual(stats.totals(), { messages: 5500, errors: 1, deliveries: 0 })
  assert.equal(stats.hasActivitySinceLastSummary(), true)
  const line = stats.summaryLine(5000)
  assert.match(line, /^0 connections, json 1,000 msg\/s, protobuf 100 msg\/s, 5,500 messages, 1 decode errors, 0 protocol errors, /)
  assert.equal(stats.hasActivitySinceLastSummary(), false, 'nothing new since that line')
  stats.forTarget('json', 'small').messages += 50
  assert.match(stats.summaryLine(1000), /json 50 msg\/s, protobuf 0 msg\/s/)
  stats.openConnections = 1
  assert.equal(stats.hasActivitySinceLastSummary(), true, 'an open connection is worth a line')
  assert.equal(megabytes(3 * 1024 * 1024 + 1), 3)
})

test('a snapshot is plain data; sum sets every counter to the snapshots\' sum and keeps the rate marks', () => {
  const one = new ServerStats()
  one.openConnections = 2
  one.totalConnections = 3
  one.dropped = 1
  one.forTarget('json', 'small').messages = 100
  one.forTarget('json', 'small').codecMs = 12.5
  const two = new ServerStats()
  two.openConnections = 1
  two.totalConnections = 1
  two.refused = 4
  two.forTarget('json', 'small').messages = 50
  two.forTarget('protobuf', 'small').errors = 2
  two.forTarget('json', 'small').codecMs = 7.5
  two.forTarget('protobuf', 'small').codecMs = 1
  const first = one.snapshot()
  const second = two.snapshot()
  assert.deepEqual(JSON.parse(JSON.stringify(first)), first, 'survives IPC as JSON')
  assert.deepEqual(first.byTarget, [{ format: 'json', test: 'small', messages: 100, errors: 0, deliveries: 0, codecMs: 12.5 }], 'codec time travels with the counts')
  assert.ok(first.memory.rss > 0 && first.memory.peakRss >= first.memory.rss / 2)

  const summed = new ServerStats()
  summed.sum([first, second], { rss: 10 * 1024 * 1024, peakRss: 20 * 1024 * 1024 })
  assert.equal(summed.openConnections, 3)
  assert.equal(summed.totalConnections, 4)
  assert.equal(summed.refused, 4)
  assert.equal(summed.dropped, 1)
  assert.deepEqual(summed.totals(), { messages: 150, errors: 2, deliveries: 0 })
  assert.equal(summed.forTarget('json', 'small').codecMs, 20, 'codec ms summed by format and test')
  assert.equal(summed.forTarget('protobuf', 'small').codecMs, 1)
  assert.equal(summed.processes, 3, 'two snapshots and the summing process')
  assert.equal(summed.memory.rss, 10 * 1024 * 1024 + first.memory.rss + second.memory.rss,
    'the snapshots\' memory as taken: rss moves between two reads')
  assert.match(summed.summaryLine(1000), /^3 connections, json 150 msg\/s, protobuf 0 msg\/s, 150 messages, 2 decode errors, 0 protocol errors, 1 dropped connections, 4 refused upgrades, .*rss \d+ MB \(peak \d+ MB\) summed over 3 processes$/)

  one.forTarget('json', 'small').messages = 160
  summed.sum([one.snapshot(), two.snapshot()])
  assert.deepEqual(summed.totals(), { messages: 210, errors: 2, deliveries: 0 }, 'set to the sum, not added to the last one')
  assert.equal(summed.forTarget('json', 'small').codecMs, 20, 'codec ms too: set to the sum, not added to the last one')
  assert.match(summed.summaryLine(1000), /json 60 msg\/s/, 'the rate counts from the previous line')
  assert.doesNotMatch(one.countsLine(), /summed/, 'a process\'s own line is its own')
  summed.sum([two.snapshot()])
  assert.equal(summed.forTarget('json', 'small').codecMs, 7.5, 'one process fewer: only the other\'s codec ms')
})

test('opened: the most connections accepted in any 100 ms, sliding at 10 ms; summed over processes', () => {
  const stats = new ServerStats()
  // Six from 25 ms before a 100 ms edge of the epoch to 25 after: fixed windows would see 3.
  for (let i = 0; i < 6; i++) stats.opened(1_700_000_000_000 - 25 + i * 10)
  assert.equal(stats.peakOpenedPer100ms, 6)
  assert.equal(stats.openedInWindow, 6)
  // 85 ms after the first, its 10 ms bucket is still in the window; 95 ms after, it has left.
  stats.opened(1_700_000_000_000 - 25 + 85)
  assert.equal(stats.peakOpenedPer100ms, 7)
  stats.opened(1_700_000_000_000 - 25 + 95)
  assert.equal(stats.openedInWindow, 7, 'the first bucket dropped out as the newest came in')
  assert.equal(stats.peakOpenedPer100ms, 7)
  // Long quiet: every bucket drops out, however many edges passed.
  stats.opened(1_700_000_010_000)
  assert.equal(stats.openedInWindow, 1)
  // A clock stepped back counts in the newest bucket.
  stats.opened(1_700_000_005_000)
  assert.equal(stats.openedInWindow, 2)
  assert.equal(stats.peakOpenedPer100ms, 7)
  assert.equal(stats.totalConnections, 10)
  const summed = new ServerStats()
  summed.sum([stats.snapshot(), stats.snapshot()])
  assert.equal(summed.peakOpenedPer100ms, 14, 'an upper bound: each process may have peaked at another time')
  assert.deepEqual(Object.keys(stats.snapshot()).filter((key) => key.startsWith('opened')), [], 'the ring stays in its process')
})
