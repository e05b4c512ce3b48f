import { test } from 'node:test'
import assert from 'node:assert/strict'
import { methodsOf } from '../../bench/support/methods.js'
import { COMPARE_METHOD } from '../../lib/compare/results.js'
import { CAPACITY_METHOD } from '../../lib/capacity/results.js'

test('methodsOf: a recorded command\'s methods, read from the command, settings before it included', () => {
  assert.deepEqual(methodsOf('npm run compare -- --tests people'), [COMPARE_METHOD])
  assert.deepEqual(methodsOf('npm run capacity'), [CAPACITY_METHOD])
  assert.deepEqual(methodsOf('BENCH_ROUNDS=3 npm run bench:engine'), [{ name: 'bench:engine', version: 1, since: '' }], 'a bench not listed: version 1')
  assert.deepEqual(methodsOf('BENCH_RUNS=3 npm run bench:verdicts').map(({ name }) => name), ['bench:verdicts', 'compare'])
  assert.deepEqual(methodsOf('BENCH_RESULTS_NAME=capacity-aa npm run bench:capacity -- --tests 3').map(({ name }) => name), ['bench:capacity', 'capacity'])
  const hosts = methodsOf('npm run bench:hosts -- --hosts 4')[0]
  assert.ok(hosts.version >= 2 && hosts.since >= '2026-11-28', 'hosts measures with the budgeted pacing')
  assert.deepEqual(methodsOf('node tools/other.js'), [])
})
