import { test } from 'node:test'
import assert from 'node:assert/strict'
import { performance } from 'node:perf_hooks'
import { Recorder } from '../../lib/load/recorder.js'
import { ThreadPacer } from '../../lib/load/pacer.js'
import { decodeHistogram } from '../../lib/histogram.js'

test('each latency is recorded once: in its second, and in the phase\'s histogram as the second closes', () => {
  const recorder = new Recorder(false)
  recorder.start()
  // Under 2,048 µs the histogram is exact to the µs.
  for (let i = 1; i <= 100; i++) recorder.recordUs(i * 10)
  assert.equal(recorder.hasOpenSecond(), true)
  const p99 = recorder.closeSecond({ acked: 100, errors: 0 })
  assert.equal(p99, 0.99)
  assert.equal(recorder.hasOpenSecond(), false, 'the next second starts empty')
  for (let i = 0; i < 10; i++) recorder.recordUs(2000)
  recorder.closeSecond({ acked: 110, errors: 1 })
  const [first, second] = recorder.timeSeries
  assert.deepEqual([first.acked, first.errors, first.p50, first.p99], [100, 0, 0.5, 0.99])
  assert.deepEqual([second.acked, second.errors, second.p50, second.p99], [10, 1, 2, 2])
  assert.equal(decodeHistogram(second.histogram).totalCount, 10, 'a second\'s histogram holds that second alone')
  const { histogram, timeSeries } = recorder.result()
  assert.equal(histogram.totalCount, 110, 'every latency once, none twice')
  assert.equal(histogram.maxValue, 2000)
  assert.equal(histogram.minNonZeroValue, 10)
  assert.equal(timeSeries.length, 2)
})

test('a second nobody closed still counts in the phase; an empty second has zero percentiles', () => {
  const recorder = new Recorder(true)
  recorder.start()
  assert.equal(recorder.closeSecond({ acked: 0, errors: 0 }), 0)
  assert.deepEqual([recorder.timeSeries[0].p50, recorder.timeSeries[0].p99], [0, 0])
  recorder.record(10, 4, 8)
  const { histogram, uncorrectedHistogram } = recorder.result()
  assert.equal(histogram.totalCount, 1)
  assert.equal(histogram.maxValue, 6000, 'from the schedule: 6 ms')
  assert.equal(uncorrectedHistogram.maxValue, 2000, 'from the send: 2 ms')
})

test('a ramp\'s latency is also kept per stage, by when each message was due, not when its reply came', () => {
  const recorder = new Recorder(true)
  recorder.start([1000, 3000, 6000])
  recorder.record(10, 0, 0) // due in stage 1
  recorder.record(1500, 999, 999) // due in stage 1, replied in stage 2
  recorder.record(1001, 1000, 1000) // due at stage 1's end: stage 2
  recorder.record(7000, 6500, 6500) // due past the last stage's end (a late timer): the last stage
  const { histogram, stageHistograms } = recorder.result()
  assert.equal(histogram.totalCount, 4)
  assert.deepEqual(stageHistograms.map((h) => h.totalCount), [2, 1, 1])
  assert.ok(Math.abs(stageHistograms[0].maxValue - 501_000) / 501_000 < 0.001, 'the reply that came in stage 2 counts in stage 1')
  assert.equal(new Recorder(true).result().stageHistograms, null, 'no ramp, no stages')
})

test('a recorder serves phase after phase: each start empties it, and without a series a second is folded, not kept', () => {
  const recorder = new Recorder(true)
  recorder.start()
  recorder.record(10, 4, 8)
  recorder.recordSendLag(0.5)
  recorder.closeSecond({ acked: 1, errors: 0 })
  recorder.series = false
  recorder.start([1000])
  assert.equal(recorder.result().histogram.totalCount, 0, 'the last phase\'s latencies are gone')
  assert.equal(recorder.result().sendLagHistogram.totalCount, 0)
  recorder.record(10, 4, 8)
  assert.equal(recorder.closeSecond({ acked: 1, errors: 0 }), null)
  const { histogram, uncorrectedHistogram, timeSeries, stageHistograms } = recorder.result()
  assert.deepEqual([histogram.totalCount, uncorrectedHistogram.totalCount], [1, 1])
  assert.deepEqual(timeSeries, [], 'no second kept, none encoded')
  assert.deepEqual(stageHistograms.map((h) => h.totalCount), [1])
  recorder.series = true
  recorder.start()
  assert.equal(recorder.result().stageHistograms, null, 'a phase without a ramp has no stages, whatever came before')
})

test('a pacer\'s waiting is reported apart (cpu.pacingUs) and is not busy; work between its waiting turns is', { timeout: 10_000 }, async (t) => {
  const pacer = new ThreadPacer({ kind: 'spin' })
  await pacer.start()
  t.after(() => pacer.close())
  // The test's own window encloses the recorder's: the loop's busy time in it is at least the recorder's.
  const loopBefore = performance.eventLoopUtilization()
  const waitedBefore = pacer.usage().waitedMs
  const recorder = new Recorder(true, pacer)
  recorder.start()
  // Spin waits the last 0.5 ms (its first lead) before a due time in turns of the loop; work done in
  // between (as replies are read) stays busy. Each wake-up is due within that lead, so the waiting
  // starts at once, in this thread: no late post of the pacing thread (a loaded machine's) can skip it.
  const workMs = 40 * 0.2
  for (let i = 0; i < 40; i++) {
    await new Promise((resolve) => {
      pacer.wakeAt(performance.now() + 0.4, resolve)
      setImmediate(() => { const until = performance.now() + 0.2; while (performance.now() < until); })
    })
  }
  const { cpu, generator } = recorder.result()
  const waited = pacer.usage().waitedMs - waitedBefore
  const { idle, active } = performance.eventLoopUtilization(loopBefore)
  assert.ok(waited > 0, 'it waited in turns')
  assert.ok(cpu.pacingUs >= Math.floor(waited * 1000), `pacing ${cpu.pacingUs} µs holds the ${waited} ms waited, and the thread's CPU`)
  const withWaiting = active / (idle + active)
  const waitedShare = waited / (idle + active)
  assert.ok(generator.loopBusy <= withWaiting - waitedShare + 0.01,
    `busy ${generator.loopBusy}: at most the loop's busy share ${withWaiting.toFixed(3)} less the waiting's ${waitedShare.toFixed(3)}`)
  assert.ok(generator.loopBusy >= 0.5 * workMs / (idle + active), `busy ${generator.loopBusy}: the work between turns counts as busy`)
})
