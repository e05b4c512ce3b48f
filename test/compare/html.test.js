import { test } from 'node:test'
import assert from 'node:assert/strict'
import { renderHtmlReport } from '../../lib/compare/html.js'
import { buildComparisonResults } from '../../lib/compare/results.js'
import { createLatencyHistogram } from '../../lib/histogram.js'
import { resolveTest } from '../../lib/payloads/catalog.js'
import { buildReport } from '../../lib/report/report.js'

const FORMATS = ['json', 'protobuf', 'msgpack']
// A user's file name is theirs to choose: markup in it must stay text.
const ODD_FILE = '<img src=x onerror=alert(1)>&.json'

/** One generation's client report, built as the client builds it, with a real histogram, its server CPU and codec time. */
function trialReport (format, trial, testInfo, microseconds) {
  const histogram = createLatencyHistogram()
  for (let i = 0; i < 50; i++) histogram.recordValue(microseconds + i * 10 + trial)
  return {
    ...buildReport({
      messages: { sent: 50, acked: 50, errors: 0, lost: 0 },
      startedAt: 1_700_000_000_000,
      durationMs: 50 * microseconds / 1000,
      histogram,
      uncorrectedHistogram: null,
      bytes: { payloadPerMessage: format === 'json' ? 400 : 150, written: 50 * (format === 'json' ? 406 : 156), read: 150 },
      cpu: { userUs: 1000 + trial, systemUs: 100 },
      timeSeries: [],
      target: null,
      reconnects: { count: 0, gapMs: 0 },
      interrupted: false,
      errorReplies: [],
      failure: null
    }, { format, test: testInfo, url: 'ws://127.0.0.1:1', connections: 1, inflight: 1, warmup: 0 }),
    trial,
    server: { cpuUs: 2000 + trial, messages: 50, perMessageUs: 40 + trial, process: 'server 1' },
    codec: { clientUs: format === 'json' ? 3 + trial / 10 : 1.5, serverUs: format === 'json' ? 4 : 2 + trial / 10 }
  }
}

function results () {
  const custom = { id: null, name: 'custom', custom: true, file: ODD_FILE, inferred: true }
  const reports = []
  for (let trial = 1; trial <= 3; trial++) {
    for (const [i, format] of FORMATS.entries()) {
      reports.push(trialReport(format, trial, resolveTest('medium'), 1000 - i * 200))
      reports.push(trialReport(format, trial, custom, 2000 - i * 300))
    }
  }
  const machine = { cpu: 'Test CPU <9000> & "friends"', cores: 2, node: 'v20.19.0', platform: 'linux x64' }
  const settings = {
    trials: 3,
    budgetMs: null,
    servers: 3,
    batches: { '3 medium': { closedCount: 50, timedRate: null, closedPairs: 2, openCount: 50, openRate: 500, openPairs: 2, warmupBatches: 1 } },
    generations: [1, 2, 3].map((index) => ({ index, ms: 800, loadAverage: 0.4, neighbourCores: 0, saturated: [] })),
    connections: 1,
    inflight: 1,
    margin: 0.05,
    profiles: ['none'],
    compress: false,
    direction: 'up'
  }
  return buildComparisonResults(reports, FORMATS, machine, settings)
}

test('a complete, self-contained document: doctype, inline style, no script, nothing fetched', () => {
  const html = renderHtmlReport(results())
  assert.match(html, /^<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">/)
  assert.match(html, /<\/body>\n<\/html>\n$/)
  assert.match(html, /<title>json vs protobuf vs msgpack over WebSocket<\/title>/)
  assert.match(html, /<style>[^]*<\/style>/)
  assert.doesNotMatch(html, /<script|<link|<img|<iframe|@import|url\(/i)
  // Attribute values emptied first (quotes inside them are escaped): no element has src or href.
  assert.doesNotMatch(html.replace(/"[^"]*"/g, '""'), /<[^>]*\s(?:src|href)=/i)
  // The only URL is the SVG namespace, which is a name, never fetched.
  assert.deepEqual([...new Set(html.match(/https?:\/\/[^\s"']+/g))], ['http://www.w3.org/2000/svg'])
})

test('every format named in the table, the verdicts and the charts', () => {
  const html = renderHtmlReport(results())
  const table = html.slice(html.indexOf('<table>'), html.indexOf('</table>'))
  for (const format of FORMATS) {
    assert.match(table, new RegExp(`<td>${format}</td>`), format)
    assert.match(html, new RegExp(`data-series="${format}"`), format)
  }
  assert.match(table, /<td>protobuf\/json<\/td>/)
  assert.match(table, /<td>msgpack\/json<\/td>/)
  // One verdict per test and format after the first, each a chart with a caption.
  const verdicts = [...html.matchAll(/<figure class="verdict" data-test="([^"]*)" data-format="([^"]*)" data-call="([^"]*)">/g)]
  assert.deepEqual(verdicts.map(([, testName, format]) => `${testName} ${format}`), ['medium protobuf', 'medium msgpack', 'custom protobuf', 'custom msgpack'])
  for (const [, , , call] of verdicts) assert.ok(['better', 'worse', 'mixed', 'equivalent', 'inconclusive'].includes(call), call)
  assert.equal((html.match(/<li>/g) ?? []).length, 4, 'one verdict line each')
})

test('charts present: verdict ratios, three bar charts and a percentile curve per test, drawn from the histograms', () => {
  const html = renderHtmlReport(results())
  // 4 verdict charts + 3 bar charts + 2 percentile charts.
  assert.equal((html.match(/<svg class="chart"/g) ?? []).length, 9)
  for (const title of ['bytes per message (encoded)', 'bytes on the wire per message', 'throughput (acknowledged msgs/s)', 'latency by percentile: test 3 medium']) {
    assert.ok(html.includes(`aria-label="${title}"`), title)
  }
  // Each format's curve is a path with points, from its trials' added histograms.
  const curves = [...html.matchAll(/<path class="series" data-series="(\w+)" d="([^"]+)"/g)]
  assert.equal(curves.length, 6, 'three formats on each of two tests')
  for (const [, format, d] of curves) assert.ok(d.split(' L').length > 3, `${format}: a curve, not a point`)
  assert.equal((html.match(/<rect class="bar"/g) ?? []).length, 3 * 2 * 3, 'three charts, two rows, three formats')
})

test('names are escaped: a file name or machine name with markup stays text', () => {
  const html = renderHtmlReport(results())
  assert.ok(!html.includes(ODD_FILE), 'not raw anywhere')
  assert.doesNotMatch(html, /<img/)
  assert.ok(html.includes('custom (&#60;img src=x onerror=alert(1)&#62;&#38;.json)'))
  assert.ok(html.includes('Test CPU &#60;9000&#62; &#38; &#34;friends&#34;'))
  assert.doesNotMatch(html, /<9000>/)
})

test('a format with no run on a test is a line of n/a, not a crash', () => {
  const all = results()
  const partial = buildComparisonResults(all.reports.filter((r) => !(r.format === 'msgpack' && r.test === 'custom')), FORMATS, all.machine, all.settings)
  const html = renderHtmlReport(partial)
  // Every figure column (bytes, wire bytes, msgs/s, p50, p99, client and server CPU, client and server codec) n/a.
  assert.match(html, /<td>msgpack<\/td>(<td>n\/a<\/td>){9}<td>not run<\/td>/)
  assert.doesNotMatch(html, /NaN|undefined|Infinity/)
})

test('the table carries the codec columns; how the calls were made and what the machine did are said once', () => {
  const all = results()
  const html = renderHtmlReport(all)
  const header = html.slice(html.indexOf('<thead>'), html.indexOf('</thead>'))
  assert.match(header, /<th>client codec µs\/msg<\/th><th>server codec µs\/msg<\/th><th>sent\/acked\/errors\/lost<\/th>/)
  // json's codec figures, medians over the three generations: client 3.2, server 4.
  assert.match(html, /<td>3 medium<\/td><td>none<\/td><td>json<\/td>(<td>[^<]*<\/td>){7}<td>3\.20<\/td><td>4\.00<\/td><td>150\/150\/0\/0<\/td>/)
  assert.match(html, /a critical t of \d+\.\d\d over its \d+ varying cells/)
  assert.match(html, /3 server processes and 3 client processes per row for the whole run, on loopback, swapping formats between generations/)
  assert.doesNotMatch(html, /class="saturation"/, 'a quiet machine: no note')
  const busy = { ...all, settings: { ...all.settings, generations: [{ index: 1, ms: 800, loadAverage: 3, neighbourCores: 1.2, saturated: ['server 3 medium (json)'] }] } }
  const noted = renderHtmlReport(busy)
  assert.match(noted, /<p class="saturation"><strong>Note:<\/strong> saturated: server 3 medium \(json\): .*; contaminated: other processes took up to 1\.2 cores in 1 of 1 generations .*\.<\/p>/)
})
