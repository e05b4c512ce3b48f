import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DEFAULT_SLO, parseSlo } from '../../lib/capacity/slo.js'
import { UsageError } from '../../lib/errors.js'

test('an objective is a percentile below a bound, in µs', () => {
  assert.deepEqual(parseSlo(DEFAULT_SLO), [{ text: 'p99<10ms', percentile: 99, boundUs: 10_000 }])
  assert.deepEqual(parseSlo('p99.9<25ms, p50<800us,p90<1s').map(({ percentile, boundUs }) => [percentile, boundUs]),
    [[99.9, 25_000], [50, 800], [90, 1e6]])
  assert.equal(parseSlo('p50<800µs')[0].text, 'p50<800us')
})

test('a malformed, out-of-range or repeated objective is refused in one line, naming it', () => {
  for (const bad of ['p99', 'p99<', 'q99<10ms', 'p100<10ms', 'p0<1ms', 'p99<0ms', 'p99<10 parsecs', 'p99<10ms,']) {
    assert.throws(() => parseSlo(bad), (err) => err instanceof UsageError && !err.message.includes('\n') && err.message.includes('--slo'), bad)
  }
  assert.throws(() => parseSlo('p99<10ms,p99<10ms'), /names p99<10ms twice/)
})
