import { test } from 'node:test'
import assert from 'node:assert/strict'
import { deliverySpread, describeFanout, mergeFanout } from '../../lib/report/fanout.js'
import { createLatencyHistogram, decodeHistogram, encodeHistogram } from '../../lib/histogram.js'

/** What one process's subscribers measure (see FanoutResult in lib/load/subscribers.js). */
function measured ({ subscribers = 2, decoders = subscribers, published = 3, delivered = 6, recovered = 0, firstUs = [1000, 2000, 3000], lastUs = [1500, 2000, 9000], gapsMs = [] } = {}) {
  const gaps = createLatencyHistogram()
  for (const gap of gapsMs) gaps.recordValue(gap * 1000)
  return {
    subscribers,
    decoders,
    published,
    delivered,
    recovered,
    duplicates: 0,
    reordered: 0,
    errors: 0,
    perPublish: { firstUs, lastUs },
    reconnects: { count: gapsMs.length, histogram: encodeHistogram(gaps) },
    subscriberBytesRead: delivered * 100,
    frames: delivered
  }
}

test('describeFanout: expected = published × subscribers = delivered + lost; bytes and CPU per delivery; reconnect gaps', () => {
  const f = describeFanout(measured({ delivered: 5, recovered: 2, gapsMs: [120, 480] }), { role: 'both', headerBytes: 24, cpu: { userUs: 400, systemUs: 100 } })
  assert.deepEqual([f.subscribers, f.published, f.expected, f.delivered, f.recovered, f.lost], [2, 3, 6, 5, 2, 1], 'recovered: delivered, replayed')
  assert.deepEqual(f.wire, { read: 500, frames: 5, perDelivery: 100 })
  assert.equal(f.cpuPerDeliveryUs, 100)
  assert.equal(f.reconnects.count, 2)
  assert.ok(Math.abs(f.reconnects.gapMs.max - 480) < 1, JSON.stringify(f.reconnects.gapMs))
  const { recovered, ...before } = measured()
  assert.equal(describeFanout(before, { role: 'both', headerBytes: 24, cpu: null }).recovered, 0, 'a report from before replay: none recovered')
  const unknown = describeFanout(measured({ published: null }), { role: 'subscriber', headerBytes: 24, cpu: null })
  assert.deepEqual([unknown.expected, unknown.lost, unknown.cpuPerDeliveryUs], [null, null, null])
})

test('deliverySpread: first to last delivery of each publish delivered at all, in ms', () => {
  assert.deepEqual(deliverySpread({ firstUs: [1000, null, 3000], lastUs: [1500, null, 9000] }), { p50: 0.5, p99: 6, max: 6 })
  assert.deepEqual(deliverySpread({ firstUs: [], lastUs: [] }), { p50: 0, p99: 0, max: 0 })
})

test('mergeFanout: counts (decoders too) add, each publish keeps its earliest first and latest last delivery, reconnects add; parts must agree on the publishes', () => {
  const a = describeFanout(measured({ decoders: 1, recovered: 2, firstUs: [1000, 2000, 3000], lastUs: [1500, 2000, 9000], gapsMs: [100] }), { role: 'subscriber', headerBytes: 24, cpu: null })
  const b = describeFanout(measured({ subscribers: 1, decoders: 1, delivered: 3, recovered: 1, firstUs: [800, 2500, null], lastUs: [900, 4000, null], gapsMs: [200] }), { role: 'subscriber', headerBytes: 24, cpu: null })
  const publisher = describeFanout(measured({ subscribers: 0, delivered: 0, firstUs: [], lastUs: [] }), { role: 'publisher', headerBytes: 24, cpu: null })
  const merged = mergeFanout([publisher, a, b])
  assert.deepEqual([merged.subscribers, merged.decoders, merged.published, merged.delivered, merged.recovered], [3, 2, 3, 9, 3])
  assert.deepEqual(merged.perPublish, { firstUs: [800, 2000, 3000], lastUs: [1500, 4000, 9000] })
  assert.equal(merged.reconnects.count, 2)
  assert.equal(decodeHistogram(merged.reconnects.histogram).totalCount, 2)
  assert.equal(merged.subscriberBytesRead, 900)
  const whole = describeFanout(merged, { role: 'merged', headerBytes: 24, cpu: null })
  assert.deepEqual([whole.expected, whole.lost], [9, 0])
  assert.throws(() => mergeFanout([a, { ...b, published: 4 }]), /disagree on how many were published: 3, 4/)
})

test('describeFanout and mergeFanout: pings per delivery, how long judging waited, closes by cause; any close by the generator makes the run invalid', () => {
  const liveness = (pings, suspendedMs, generator = 0) => ({ pings, suspendedMs, closes: { link: 1, server: 2, generator } })
  const valid = describeFanout({ ...measured({ delivered: 6 }), liveness: liveness(3, 120) }, { role: 'both', headerBytes: 24, cpu: null })
  assert.deepEqual(valid.liveness, { pings: 3, pingsPerDelivery: 0.5, suspendedMs: 120, closes: { link: 1, server: 2, generator: 0 } })
  assert.equal(valid.invalid, null)
  const late = describeFanout({ ...measured(), liveness: liveness(0, 900, 4) }, { role: 'both', headerBytes: 24, cpu: null })
  assert.match(late.invalid, /^4 subscriber connection\(s\) closed by their own client process while it ran late \(its loop, not the server or the link\): the losses are not the server's/)
  const before = describeFanout(measured(), { role: 'both', headerBytes: 24, cpu: null })
  assert.deepEqual(before.liveness, { pings: 0, pingsPerDelivery: 0, suspendedMs: 0, closes: { link: 0, server: 0, generator: 0 } }, 'a report from before liveness was counted')
  // Parts from several processes: pings and closes add; the longest wait stands for them all (they ran at once).
  const merged = mergeFanout([valid, late, before])
  assert.deepEqual(merged.liveness, { pings: 3, suspendedMs: 900, closes: { link: 2, server: 4, generator: 4 } })
  assert.match(describeFanout(merged, { role: 'both', headerBytes: 24, cpu: null }).invalid, /^4 subscriber connection/)
})
