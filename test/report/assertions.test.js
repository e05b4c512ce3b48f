import { test } from 'node:test'
import assert from 'node:assert/strict'
import { parseAssertions, violatedAssertions } from '../../lib/report/assertions.js'
import { UsageError } from '../../lib/errors.js'

const report = { latencyMs: { p50: 1, p90: 4, p99: 12.5, p999: 30, max: 40, mean: 2 }, rate: 5200, messages: { sent: 100, acked: 98, errors: 2, lost: 0 } }

test('thresholds: latency units (us, ms, s), counts and rate, every operator', () => {
  const thresholds = parseAssertions(['p99<20ms', 'p99 < 0.02s', 'p50<=1000us', 'max>39', 'rate>=5000', 'errors==0', 'lost!=0', 'acked>98'])
  assert.deepEqual(thresholds.map((t) => [t.metric, t.operator, t.limit]), [
    ['p99', '<', 20], ['p99', '<', 20], ['p50', '<=', 1], ['max', '>', 39], ['rate', '>=', 5000], ['errors', '==', 0], ['lost', '!=', 0], ['acked', '>', 98]
  ])
  assert.deepEqual(violatedAssertions(thresholds, report), [
    'assertion failed: errors==0 (errors was 2)',
    'assertion failed: lost!=0 (lost was 0)',
    'assertion failed: acked>98 (acked was 98)'
  ])
  assert.deepEqual(violatedAssertions(parseAssertions(['p99<10ms']), report), ['assertion failed: p99<10ms (p99 was 12.5 ms)'])
})

test('bad expressions are one clear UsageError each', () => {
  for (const [text, pattern] of [['p99<<3', /expected <metric><op><number>/], ['p42<3', /expected <metric>/], ['rate>5ms', /rate takes no unit/], ['', /expected/]]) {
    assert.throws(() => parseAssertions([text]), (err) => err instanceof UsageError && pattern.test(err.message), text)
  }
})

test('an invalid fan-out fails every set of thresholds, first; without thresholds nothing is asserted', () => {
  const invalid = { ...report, fanout: { invalid: '2 subscriber connection(s) closed by their own client process while it ran late' } }
  assert.deepEqual(violatedAssertions(parseAssertions(['p99<20ms']), invalid),
    ['assertion failed: the run is invalid: 2 subscriber connection(s) closed by their own client process while it ran late'])
  assert.deepEqual(violatedAssertions([], invalid), [])
  assert.deepEqual(violatedAssertions(parseAssertions(['p99<20ms']), { ...report, fanout: { invalid: null } }), [])
})
