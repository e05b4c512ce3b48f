import { test } from 'node:test'
import assert from 'node:assert/strict'
import { runLength } from '../../lib/compare/runner.js'
import { DEFAULT_MESSAGES, DEFAULT_WARMUP } from '../../lib/defaults.js'
import { ALL_TESTS, loadPayload, resolveTest } from '../../lib/payloads/catalog.js'

test('runLength: defaults capped by bytes for big payloads, explicit counts honoured', () => {
  const peopleBytes = Buffer.byteLength(JSON.stringify(loadPayload(resolveTest('people'))))
  assert.deepEqual(runLength(22, {}), { messages: DEFAULT_MESSAGES, warmup: DEFAULT_WARMUP })
  assert.deepEqual(runLength(peopleBytes, {}), { messages: 20, warmup: 2 }, '256 MiB / 12.85 MB per message')
  assert.deepEqual(runLength(peopleBytes, { messages: 3, warmup: 0 }), { messages: 3, warmup: 0 })
  assert.deepEqual(ALL_TESTS, ['numbers', 'strings', 'medium', 'large', 'small', 'people', 'person', 'counters'])
})
