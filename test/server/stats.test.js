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
  assert.deepEqual(stats.totals(), { messages: 5500, errors: 1 })
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
