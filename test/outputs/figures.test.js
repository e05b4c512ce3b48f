import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createLatencyHistogram, encodeHistogram } from '../../lib/histogram.js'
import { LiveFigures, addFigures, decodeFigures, emptyFigures, encodeFigures, figuresOfReport } from '../../lib/outputs/figures.js'

const histogramOf = (...valuesUs) => {
  const histogram = createLatencyHistogram()
  for (const value of valuesUs) histogram.recordValue(value)
  return histogram
}

const part = (sent, latency, extra = {}) => ({
  ...emptyFigures(),
  startedAt: 1000 + sent,
  messages: { sent, acked: sent - 1, errors: 1, lost: 0 },
  latency,
  bytes: { written: sent * 10, read: sent },
  connect: histogramOf(300),
  cpuUs: sent * 5,
  ...extra
})

test('the parts of one run add up: counts and histograms summed, the earliest start, one process\'s CPU and stage', () => {
  const a = part(10, histogramOf(100, 200), { stage: 1 })
  const b = part(20, histogramOf(300), { stage: 2, fanout: { delivered: 5, lost: null, spread: histogramOf(7) } })
  const total = addFigures([a, b])
  assert.equal(total.startedAt, 1010)
  assert.deepEqual(total.messages, { sent: 30, acked: 28, errors: 2, lost: 0 })
  assert.equal(total.latency.totalCount, 3)
  assert.equal(total.connect.totalCount, 2)
  assert.deepEqual(total.bytes, { written: 300, read: 30 })
  assert.equal(total.cpuUs, 100)
  assert.equal(total.stage, 2)
  assert.equal(total.fanout.delivered, 5)
  assert.equal(total.fanout.lost, null)
  assert.equal(a.latency.totalCount, 2, 'the parts are left as they were')
  assert.equal(addFigures([a]), a, 'one part is the whole')
})

test('figures cross a thread encoded and come back the same', () => {
  const figures = part(10, histogramOf(100, 200), { fanout: { delivered: 3, lost: 1, spread: histogramOf(9) } })
  const back = decodeFigures(structuredClone(encodeFigures(figures)))
  assert.deepEqual(back.messages, figures.messages)
  assert.equal(back.latency.totalCount, 2)
  assert.equal(back.latency.maxValue, figures.latency.maxValue)
  assert.equal(back.sendLag, null)
  assert.equal(back.fanout.spread.totalCount, 1)
})

test('LiveFigures reads every source, sync or not; none is nothing measured', async () => {
  const live = new LiveFigures()
  assert.deepEqual(await live.read(), emptyFigures())
  live.add({ figures: () => part(10, histogramOf(100)) })
  live.add({ figures: async () => part(20, histogramOf(200)) })
  assert.equal((await live.read()).messages.sent, 30)
})

test('a report\'s figures: its counts, its histograms, its fan-out\'s spread from each publish\'s deliveries', () => {
  const report = {
    startedAt: 5,
    messages: { sent: 3, acked: 3, errors: 0, lost: 0 },
    histogram: encodeHistogram(histogramOf(1, 2, 3)),
    sendLagHistogram: null,
    bytes: { written: 30, read: 9 },
    connect: { opened: 1, histograms: { total: encodeHistogram(histogramOf(400)) }, failures: { refused: 2, timeout: 1 } },
    reconnects: { count: 1 },
    cpu: { userUs: 10, systemUs: 5 },
    stages: [{}, {}],
    fanout: { delivered: 5, lost: 1, reconnects: { count: 2 }, perPublish: { firstUs: [10, null, 30], lastUs: [15, null, 90] } }
  }
  const figures = figuresOfReport(report)
  assert.equal(figures.latency.totalCount, 3)
  assert.equal(figures.connect.totalCount, 1)
  assert.equal(figures.connectFailures, 3)
  assert.equal(figures.reconnects, 3, 'the publisher\'s and the subscribers\'')
  assert.equal(figures.cpuUs, 15)
  assert.equal(figures.stage, 2)
  assert.equal(figures.fanout.spread.totalCount, 2)
  assert.equal(figures.fanout.spread.maxValue, 60)
})
