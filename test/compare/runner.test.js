import { test } from 'node:test'
import assert from 'node:assert/strict'
import { formatLabels } from '../../lib/compare/runner.js'

test('formatLabels: a format named twice (an A/A run) gets #2 on its second column', () => {
  assert.deepEqual(formatLabels(['json', 'protobuf']), ['json', 'protobuf'])
  assert.deepEqual(formatLabels(['json', 'json']), ['json', 'json#2'])
  assert.deepEqual(formatLabels(['json', 'protobuf', 'json', 'json']), ['json', 'protobuf', 'json#2', 'json#3'])
})
