import { test } from 'node:test'
import assert from 'node:assert/strict'
import { median } from '../../bench/support/statistics.js'

test('median: the middle value, the mean of the two middle ones of an even count, null of none; the values left as they were', () => {
  const values = [5, 1, 3]
  assert.equal(median(values), 3)
  assert.deepEqual(values, [5, 1, 3])
  assert.equal(median([4, 1, 3, 2]), 2.5)
  assert.equal(median([10, 2]), 6)
  assert.equal(median([7]), 7)
  assert.equal(median([]), null)
})
