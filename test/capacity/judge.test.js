import { test } from 'node:test'
import assert from 'node:assert/strict'
import { judgeProbe, pacingTickMs } from '../../lib/capacity/judge.js'
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
  // Late by a quarter of the bound past the pacing's tick (2.5 ms + 1 ms): saturated.
  for (const saturated of [{ generator: { loopBusy: 0.95 } }, { sendLagUs: { 50: 10, 99: 3600 } }]) {
    const verdict = judgeProbe(probe({ ...late, ...saturated }), 1000, slo, 1)
    assert.equal(verdict.generatorBound, true, JSON.stringify(saturated))
    assert.equal(judgeProbe(probe({ ...late, ...saturated, server: { cores: 0.95 } }), 1000, slo, 1).generatorBound, false)
    // Half a core's budget: 0.47 cores is its limit.
    assert.equal(judgeProbe(probe({ ...late, ...saturated, server: { cores: 0.47 } }), 1000, slo, 0.5).generatorBound, false)
  }
  assert.equal(judgeProbe(probe(late), 1000, slo, 1).generatorBound, false, 'a generator with room: the server failed')
  // Sends waiting for room on connections full of unanswered messages are the server's doing.
  assert.equal(judgeProbe(probe({ ...late, sendRate: 700 }), 1000, slo, 1).generatorBound, false)
  // Late by less, the tick's grouping and a stall: not saturated.
  assert.equal(judgeProbe(probe({ ...late, sendLagUs: { 50: 600, 99: 3400 } }), 1000, slo, 1).generatorSaturated, false)
  const passed = judgeProbe(probe({ generator: { loopBusy: 0.95 } }), 1000, slo, 1)
  assert.deepEqual([passed.pass, passed.generatorBound, passed.generatorSaturated], [true, false, true])
})

test('a fan-out probe is judged on its deliveries: the delivery latency, every delivery made, deliveries/s within 1% of publishes/s x subscribers', () => {
  // 1000 publishes/s to 10 subscribers for a second: 10,000 deliveries expected.
  const fanout = (changes = {}) => ({ subscribers: 10, published: 1000, expected: 10_000, delivered: 10_000, lost: 0, duplicates: 0, errors: 0, ...changes })
  assert.deepEqual(judgeProbe(probe({ fanout: fanout() }), 1000, slo, 1).reasons, [])
  assert.deepEqual(judgeProbe(probe({ fanout: fanout({ delivered: 9990, lost: 10 }) }), 1000, slo, 1).reasons, ['10 deliveries lost'])
  assert.deepEqual(judgeProbe(probe({ fanout: fanout({ errors: 2, duplicates: 3 }) }), 1000, slo, 1).reasons, ['2 delivery errors', '3 duplicates'])
  assert.deepEqual(judgeProbe(probe({ fanout: fanout({ expected: null, lost: null }) }), 1000, slo, 1).reasons, ['no END: deliveries not counted'])
  // The publisher's own losses are publishes; its acks are not the deliveries.
  assert.deepEqual(judgeProbe(probe({ messages: { sent: 1000, acked: 995, errors: 0, lost: 5 }, fanout: fanout() }), 1000, slo, 1).reasons, ['5 publishes lost'])
  // Deliveries that came in over 1025 ms: 9852/s over 1015 ms, short of 99% of 10,000/s.
  assert.deepEqual(judgeProbe(probe({ durationMs: 1025, fanout: fanout() }), 1000, slo, 1).reasons, ['delivered 9852/s'])
  // A late delivery fails it with a saturated publisher (its send lag): the generator's, while the server had room.
  const late = judgeProbe(probe({ latencyUs: { 50: 800, 99: 30_000 }, sendLagUs: { 50: 10, 99: 3600 }, fanout: fanout() }), 1000, slo, 1)
  assert.deepEqual([late.pass, late.generatorBound, late.reasons], [false, true, ['p99 30.0 ms']])
})

test('the generators\' tick is what the objective can spare, and the judge allows for that lag, not a millisecond\'s', () => {
  const tick = (text) => pacingTickMs(parseSlo(text)[0])
  assert.equal(tick('p99<10ms'), 1, 'Node\'s timers\' millisecond at the default objective')
  assert.equal(tick('p99<25ms'), 1, 'never longer')
  assert.equal(tick('p99<5ms'), 0.5)
  assert.equal(tick('p50<1ms'), 0.2)
  assert.equal(tick('p99.9<2ms'), 0.2)
  assert.equal(tick('p50<200us'), 0.1, 'never shorter than the pacing thread\'s own lateness')
  // p50<1ms: a quarter of the bound past a 0.2 ms tick is 450 µs of send lag at p50.
  const [tight] = parseSlo('p50<1ms')
  const late = { latencyUs: { 50: 1200, 99: 4000 } }
  assert.equal(judgeProbe(probe({ ...late, sendLagUs: { 50: 400, 99: 900 } }), 1000, tight, 1).generatorBound, false)
  assert.equal(judgeProbe(probe({ ...late, sendLagUs: { 50: 500, 99: 900 } }), 1000, tight, 1).generatorBound, true,
    'half the bound went in sending late: at a millisecond\'s allowance it passed for the server\'s')
})
