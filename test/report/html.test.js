import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createLatencyHistogram, encodeHistogram } from '../../lib/histogram.js'
import { resolveTest } from '../../lib/payloads/catalog.js'
import { buildReport } from '../../lib/report/report.js'
import { renderRunHtml } from '../../lib/report/html.js'

/** A ramp's report: three seconds, two stages, every message acked. */
function rampReport () {
  const histogram = createLatencyHistogram()
  for (let i = 1; i <= 300; i++) histogram.recordValue(i * 10)
  const t = 1_700_000_000
  const stages = [{ fromMs: 0, toMs: 2000, fromRate: 0, toRate: 200, messages: 200 }, { fromMs: 2000, toMs: 3000, fromRate: 200, toRate: 0, messages: 100 }]
  return buildReport({
    messages: { sent: 300, acked: 300, errors: 0, lost: 0 },
    startedAt: t * 1000,
    durationMs: 3000,
    histogram,
    uncorrectedHistogram: null,
    bytes: { payloadPerMessage: 30, written: 12_000, read: 1200 },
    cpu: null,
    timeSeries: [50, 150, 100].map((acked, i) => ({ t: t + i, acked, errors: 0, p50: 0.5 + i, p99: 2 + i, histogram: encodeHistogram(histogram) })),
    target: { rate: 100, sendRate: 100, pacing: 'precise', stages },
    stageHistograms: [histogram, histogram],
    reconnects: { count: 0, gapMs: 0 },
    interrupted: false,
    errorReplies: [],
    failure: null
  }, { format: 'protobuf', test: resolveTest('medium'), url: 'ws://127.0.0.1:1', connections: 1, inflight: 1000, warmup: 0 })
}

test('renderRunHtml: one page with the seconds (replies and latency, the stages marked), the percentiles, the stages and the report', () => {
  const html = renderRunHtml(rampReport())
  assert.match(html, /^<!doctype html>/)
  assert.match(html, /<title>protobuf · test medium · up<\/title>/)
  assert.equal((html.match(/<svg class="chart"/g) ?? []).length, 3)
  for (const title of ['replies each second', 'latency each second', 'latency by percentile, the whole measured phase']) assert.ok(html.includes(`aria-label="${title}"`), title)
  // The stage boundary at 2 s is marked on both charts of seconds; the last stage's end is not a boundary.
  assert.equal((html.match(/class="mark"/g) ?? []).length, 2)
  assert.match(html, /<td>0 → 200\/s<\/td><td>200<\/td><td>300<\/td>/)
  assert.match(html, /Every message accounted for and acknowledged\./)
  assert.match(html, /stage 2 {3}2\.0-3\.0 s/)
  assert.doesNotMatch(html, /<script/i, 'no script: it opens offline')
})

test('renderRunHtml: a run without stages has no marks and no stage table; a failure is said at the top, escaped', () => {
  const report = { ...rampReport(), stages: null, ok: false, failure: 'no reply within 10 ms <--timeout>' }
  const html = renderRunHtml(report)
  assert.equal((html.match(/class="mark"/g) ?? []).length, 0)
  assert.doesNotMatch(html, /<h2>Stages<\/h2>/)
  assert.match(html, /Not ok: no reply within 10 ms &#60;--timeout&#62;/)
})
