import { test } from 'node:test'
import assert from 'node:assert/strict'
import { judgeProbe } from '../../lib/capacity/judge.js'
import { parseSlo } from '../../lib/capacity/slo.js'

const [slo] = parseSlo('p99<10ms')
const probe = (changes = {}) => ({
  messages: { sent: 1000, acked: 1000, errors: 0, lost: 0 },
  durationMs: 1004,
  sendRate: 1000,
  latencyUs: { 50: 800, 99: 4000 },
  sendLagUs: { 50: 10, 99: 300 },
  generator: { loopBusy: 0.5 },
  server: { cores: 0.6 },
  ...changes
})

test('a probe passes when the objective holds, every message is acked and the acked rate keeps up', () => {
  assert.deepEqual(judgeProbe(probe(), 1000, slo, 1), { pass: true, excess: 0.4, generatorBound: false, generatorSaturated: false, reasons: [] })
})

test('a probe fails on its latency, on loss, on error replies, or on an acked rate short by more than 1%', () => {
  assert.deepEqual(judgeProbe(probe({ latencyUs: { 50: 800, 99: 12_000 } }), 1000, slo, 1).reasons, ['p99 12.0 ms'])
  assert.equal(judgeProbe(probe({ latencyUs: { 50: 800, 99: 12_000 } }), 1000, slo, 1).excess, 1.2)
  const lost = judgeProbe(probe({ messages: { sent: 1000, acked: 990, errors: 4, lost: 6 } }), 1000, slo, 1)
  assert.deepEqual(lost.reasons, ['6 lost', '4 error replies'], '990/s acked is 99% of 1000/s offered')
  assert.equal(lost.excess, null, 'not a latency: the search bisects it plainly')
  // The last replies get the objective's bound (10 ms) to come back: 1025 ms to the last is 985/s over 1015 ms.
  assert.deepEqual(judgeProbe(probe({ durationMs: 1025 }), 1000, slo, 1).reasons, ['acked 985/s'])
  assert.equal(judgeProbe(probe({ durationMs: 1015 }), 1000, slo, 1).pass, true)
  assert.deepEqual(judgeProbe(probe({ latencyUs: { 50: null, 99: null } }), 1000, slo, 1).reasons, ['no replies'])
})

test('a fail is the generator\'s when it was saturated and the server had room, the server\'s when the server was at its limit', () => {
  const late = { latencyUs: { 50: 800, 99: 30_000 } }
  for (const saturated of [{ generator: { loopBusy: 0.95 } }, { sendLagUs: { 50: 10, 99: 2600 } }]) {
    const verdict = judgeProbe(probe({ ...late, ...saturated }), 1000, slo, 1)
    assert.equal(verdict.generatorBound, true, JSON.stringify(saturated))
    assert.equal(judgeProbe(probe({ ...late, ...saturated, server: { cores: 0.95 } }), 1000, slo, 1).generatorBound, false)
    // Half a core's budget: 0.47 cores is its limit.
    assert.equal(judgeProbe(probe({ ...late, ...saturated, server: { cores: 0.47 } }), 1000, slo, 0.5).generatorBound, false)
  }
  assert.equal(judgeProbe(probe(late), 1000, slo, 1).generatorBound, false, 'a generator with room: the server failed')
  // Sends waiting for room on connections full of unanswered messages are the server's doing.
  assert.equal(judgeProbe(probe({ ...late, sendRate: 700 }), 1000, slo, 1).generatorBound, false)
  const passed = judgeProbe(probe({ generator: { loopBusy: 0.95 } }), 1000, slo, 1)
  assert.deepEqual([passed.pass, passed.generatorBound, passed.generatorSaturated], [true, false, true])
})
