import { test } from 'node:test'
import assert from 'node:assert/strict'
import { shares } from '../../lib/load/workers.js'

test('shares: whole numbers that differ by at most one and add up', () => {
  assert.deepEqual(shares(10, 3), [4, 3, 3])
  assert.deepEqual(shares(2, 2), [1, 1])
  assert.equal(shares(1001, 4).reduce((a, b) => a + b), 1001)
})
