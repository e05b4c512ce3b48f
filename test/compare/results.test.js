import { test } from 'node:test'
import assert from 'node:assert/strict'
import { comparisonRows, formatComparisonTable } from '../../lib/compare/results.js'

const report = (format, test, profile, { bytes, rate, p50, p99, sent = 10, acked = 10 }) => ({
  format,
  test,
  testId: test === 'small' ? 5 : null,
  network: { profile },
  messages: { sent, acked, errors: 0, lost: sent - acked },
  rate,
  latencyMs: { p50, p99 },
  bytes: { payloadPerMessage: bytes, written: bytes * sent + 6 * sent, read: 3 * sent },
  ok: sent === acked
})

test('comparisonRows: one row per test and profile in run order, ratios against the first format', () => {
  const rows = comparisonRows([
    report('json', 'small', 'none', { bytes: 22, rate: 1000, p50: 0.2, p99: 1 }),
    report('protobuf', 'small', 'none', { bytes: 6, rate: 1500, p50: 0.1, p99: 0.5 }),
    report('json', 'people', '3g', { bytes: 100, rate: 2, p50: 400, p99: 900, acked: 9 })
  ], ['json', 'protobuf'])
  assert.equal(rows.length, 2)
  assert.deepEqual(rows[0].ratios.protobuf, { payloadBytes: 0.273, wireBytes: 0.429, rate: 1.5, p50: 0.5, p99: 0.5 })
  assert.equal(rows[0].figures.json.wireBytes, 28)
  assert.equal(rows[0].test, '5 small')
  assert.equal(rows[1].test, 'people')
  assert.equal(rows[1].figures.json.accounting, '10/9/0/1')
  assert.deepEqual(Object.values(rows[1].ratios.protobuf), [null, null, null, null, null], 'no protobuf run: no ratio')

  const table = formatComparisonTable(rows, ['json', 'protobuf']).split('\n')
  assert.match(table[4], /^people\s+3g\s+json\s+100\s+106\s+2\.0\s+400\.000\s+900\.000\s+10\/9\/0\/1$/)
  assert.match(table[5], /^\s+protobuf\s+n\/a\s+n\/a\s+n\/a\s+n\/a\s+n\/a\s+not run$/)
})

test('comparisonRows and the table with more formats: each one against the first, in column order', () => {
  const formats = ['json', 'protobuf', 'msgpack']
  const rows = comparisonRows([
    report('json', 'small', 'none', { bytes: 22, rate: 1000, p50: 0.2, p99: 1 }),
    report('msgpack', 'small', 'none', { bytes: 17, rate: 800, p50: 0.3, p99: 2 }),
    report('protobuf', 'small', 'none', { bytes: 6, rate: 1500, p50: 0.1, p99: 0.5 })
  ], formats)
  assert.deepEqual(Object.keys(rows[0].ratios), ['protobuf', 'msgpack'])
  assert.deepEqual(rows[0].ratios.msgpack, { payloadBytes: 0.773, wireBytes: 0.821, rate: 0.8, p50: 1.5, p99: 2 })
  const table = formatComparisonTable(rows, formats).split('\n')
  assert.deepEqual(table.slice(1, 6).map((line) => line.slice(table[0].indexOf('format')).split(' ')[0]),
    ['json', 'protobuf', 'msgpack', 'protobuf/json', 'msgpack/json'])
  assert.match(table[5], /^\s+msgpack\/json\s+0\.77x\s+0\.82x\s+0\.80x\s+1\.50x\s+2\.00x$/)
})
