import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  buildComparisonResults, cellText, comparisonRows, formatComparisonMarkdown, formatComparisonTable, inconclusiveSummary, ratioText, saturationNote, undecided, verdictLines
} from '../../lib/compare/results.js'

const report = (format, test, profile, { bytes, rate, p50, p99, sent = 10, acked = 10, clientCpu, serverCpu, label, trial }) => ({
  format,
  label,
  trial,
  test,
  testId: test === 'small' ? 5 : null,
  network: { profile },
  messages: { sent, acked, errors: 0, lost: sent - acked },
  rate,
  latencyMs: { p50, p99 },
  bytes: { payloadPerMessage: bytes, written: bytes * sent + 6 * sent, read: 3 * sent },
  cpu: clientCpu === undefined ? undefined : { perMessageUs: clientCpu },
  server: serverCpu === undefined ? null : { perMessageUs: serverCpu },
  ok: sent === acked
})

test('comparisonRows: one row per test and profile in run order, ratios against the first format', () => {
  const rows = comparisonRows([
    report('json', 'small', 'none', { bytes: 22, rate: 1000, p50: 0.2, p99: 1 }),
    report('protobuf', 'small', 'none', { bytes: 6, rate: 1500, p50: 0.1, p99: 0.5 }),
    report('json', 'people', '3g', { bytes: 100, rate: 2, p50: 400, p99: 900, acked: 9 })
  ], ['json', 'protobuf'])
  assert.equal(rows.length, 2)
  assert.deepEqual(rows[0].ratios.protobuf, { payloadBytes: 0.273, wireBytes: 0.429, rate: 1.5, p50: 0.5, p99: 0.5, clientCpu: null, serverCpu: null })
  assert.equal(rows[0].figures.json.wireBytes, 28)
  assert.equal(rows[0].test, '5 small')
  assert.equal(rows[1].test, 'people')
  assert.equal(rows[1].figures.json.accounting, '10/9/0/1')
  assert.deepEqual(Object.values(rows[1].ratios.protobuf), [null, null, null, null, null, null, null], 'no protobuf run: no ratio')
  assert.deepEqual(rows[1].verdicts.protobuf, {}, 'no protobuf run: no verdict')
  assert.equal(rows[1].calls.protobuf, 'inconclusive')

  const table = formatComparisonTable(rows, ['json', 'protobuf']).split('\n')
  assert.match(table[4], /^people\s+3g\s+json\s+100\s+106\s+2\.0\s+400\.000\s+900\.000\s+n\/a\s+n\/a\s+10\/9\/0\/1$/)
  assert.match(table[5], /^\s+protobuf\s+n\/a\s+n\/a\s+n\/a\s+n\/a\s+n\/a\s+n\/a\s+n\/a\s+not run$/)
})

test('comparisonRows and the table with more formats: each one against the first, in column order', () => {
  const formats = ['json', 'protobuf', 'msgpack']
  const rows = comparisonRows([
    report('json', 'small', 'none', { bytes: 22, rate: 1000, p50: 0.2, p99: 1 }),
    report('msgpack', 'small', 'none', { bytes: 17, rate: 800, p50: 0.3, p99: 2 }),
    report('protobuf', 'small', 'none', { bytes: 6, rate: 1500, p50: 0.1, p99: 0.5 })
  ], formats)
  assert.deepEqual(Object.keys(rows[0].ratios), ['protobuf', 'msgpack'])
  assert.deepEqual(rows[0].ratios.msgpack, { payloadBytes: 0.773, wireBytes: 0.821, rate: 0.8, p50: 1.5, p99: 2, clientCpu: null, serverCpu: null })
  const table = formatComparisonTable(rows, formats).split('\n')
  assert.deepEqual(table.slice(1, 6).map((line) => line.slice(table[0].indexOf('format')).split(' ')[0]),
    ['json', 'protobuf', 'msgpack', 'protobuf/json', 'msgpack/json'])
  // One trial: ratios but no interval, so every measured ratio is marked ? (inconclusive).
  assert.match(table[5], /^\s+msgpack\/json\s+0\.77x\s+0\.82x \?\s+0\.80x \?\s+1\.50x \?\s+2\.00x \?\s+n\/a\s+n\/a$/)
})

/** Five paired trials of json and protobuf on one test, protobuf clearly faster and smaller. */
function trialReports (labels = ['json', 'protobuf']) {
  const reports = []
  for (let trial = 1; trial <= 5; trial++) {
    const jitter = 1 + (trial % 3) / 100
    reports.push(report('json', 'medium', 'none', { label: labels[0], trial, bytes: 423, rate: 8000 * jitter, p50: 0.1 * jitter, p99: 0.3, clientCpu: 40 * jitter, serverCpu: 30 }))
    reports.push(report(labels[1].split('#')[0], 'medium', 'none', { label: labels[1], trial, bytes: 150, rate: 12000 * jitter, p50: 0.06 * jitter, p99: 0.3 * (trial % 2 ? 1.2 : 0.8), clientCpu: 40 * jitter, serverCpu: 15 }))
  }
  return reports
}

test('trials: medians in the figures, every trial kept, paired verdicts with intervals and calls', () => {
  const [row] = comparisonRows(trialReports(), ['json', 'protobuf'])
  assert.equal(row.trials.json.length, 5)
  assert.equal(row.trials.protobuf[2].rate, 12000 * 1.0)
  assert.equal(row.figures.json.accounting, '50/50/0/0', 'accounting summed over trials')
  assert.equal(row.figures.protobuf.serverCpu, 15)
  const verdicts = row.verdicts.protobuf
  assert.deepEqual(Object.keys(verdicts), ['p50', 'p99', 'rate', 'bytes', 'clientCpu', 'serverCpu'])
  assert.ok(Math.abs(verdicts.p50.ratio - 0.6) < 1e-9)
  assert.equal(verdicts.p50.call, 'better')
  assert.equal(verdicts.rate.call, 'better')
  assert.equal(verdicts.bytes.call, 'better')
  assert.equal(verdicts.serverCpu.call, 'better')
  assert.equal(verdicts.p99.call, 'inconclusive', 'alternating 1.2x and 0.8x cannot be told from 1')
  assert.equal(verdicts.clientCpu.call, 'equivalent', 'the same CPU in every pair')
  assert.ok(verdicts.p99.ci[0] < 1 && verdicts.p99.ci[1] > 1)
  assert.ok(verdicts.p99.resolution > 0.2)
  assert.equal(row.calls.protobuf, 'better')
  assert.equal(row.pairs, 5)
  assert.deepEqual(undecided(row, 'protobuf'), ['p99'])
  assert.equal(inconclusiveSummary([row], ['json', 'protobuf']), 'inconclusive after 5 pairs: medium: p99')
  assert.equal(inconclusiveSummary([{ ...row, verdicts: { protobuf: { p50: verdicts.p50 } } }], ['json', 'protobuf']), null)

  const [line] = verdictLines([row], ['json', 'protobuf'])
  assert.match(line, /^3 medium|^medium/)
  assert.match(line, /loopback: protobuf vs json: p50 0\.60x \(0\.60-0\.60\) better, p99 \d\.\d\dx \([\d.]+-[\d.]+\) inconclusive, ±\d+%, msgs\/s 1\.50x \(1\.50-1\.50\) better, wire bytes 0\.36x \(0\.36-0\.36\) better, client CPU\/msg 1\.00x \(1\.00-1\.00\) equivalent, server CPU\/msg 0\.50x \(0\.50-0\.50\) better: better$/)
  assert.equal(cellText({ ratio: 1.02, ci: [0.71, 1.46], resolution: 0.374, call: 'inconclusive' }), '1.02x (0.71-1.46) inconclusive, ±37%')
  assert.equal(cellText({ ratio: 1.01, ci: [0.99, 1.03], resolution: 0.021, call: 'equivalent' }), '1.01x (0.99-1.03) equivalent')
  assert.equal(ratioText({ ratio: 12.345, ci: [10, 15] }), '12.3x (10.0-15.0)')
  assert.equal(ratioText({ ratio: 0.75, ci: [0.0001, 9.9e24] }), '0.75x (0.00->999)')
  assert.equal(cellText({ ratio: 0.75, ci: [0.0001, 9.9e24], resolution: 1.3e27, call: 'inconclusive' }), '0.75x (0.00->999) inconclusive, ±>999%')
})

test('an A/A run: the same format twice, labelled apart; bytes equivalent, four noisy pairs inconclusive', () => {
  const reports = []
  for (let trial = 1; trial <= 4; trial++) {
    for (const label of ['json', 'json#2']) {
      const noise = 1 + ((trial * (label === 'json' ? 3 : 5)) % 7 - 3) / 100
      reports.push(report('json', 'small', 'none', { label, trial, bytes: 22, rate: 10000 * noise, p50: 0.08 * noise, p99: 0.2 / noise, clientCpu: 20 * noise }))
    }
  }
  const machine = { cpu: 'a CPU', cores: 2, node: '20', platform: 'Linux' }
  const results = buildComparisonResults(reports, ['json', 'json#2'], machine, { trials: 4, runs: { '5 small': { messages: 10, warmup: 0 } }, connections: 1, inflight: 1, profiles: ['none'], compress: false })
  const [row] = results.rows
  assert.deepEqual(Object.keys(row.figures), ['json', 'json#2'])
  assert.equal(row.calls['json#2'], 'inconclusive')
  assert.equal(row.verdicts['json#2'].bytes.call, 'equivalent')
  const markdown = formatComparisonMarkdown(results)
  assert.match(markdown, /^## Verdict\n\n- 5 small, loopback: json#2 vs json: .*: inconclusive$/m)
  assert.match(markdown, /one look after the last pair; within a look the error is split over all the cells of the table \(Bonferroni\), so the chance of any false call in the whole table is at most 5%/)
  assert.match(markdown, /4 trial pairs of each test, in balanced order/)
  assert.match(markdown, /^\| 5 small \| none \| json \| 22 \|/m)
  assert.match(markdown, /^\| {2}\| {2}\| json#2\/json \| 1\.00x \|/m)
})

test('saturationNote: the runs whose client was its own bottleneck, or null', () => {
  const run = (saturated, trial) => ({ ...report('json', 'small', 'none', { bytes: 22, rate: 1, p50: 1, p99: 1, label: 'json', trial }), generator: { saturated } })
  assert.equal(saturationNote([run(false, 1), run(false, 2)]), null)
  assert.equal(saturationNote([run(false, 1), run(true, 2)]),
    'the client was saturated in 1 of 2 runs (5 small json pair 2): their latencies include its own queueing; fewer in flight, --workers, or more hosts')
  assert.equal(saturationNote([{ ...run(false, 1), generator: null }]), null, 'no figures: nothing to say')
})

test('comparisonRows, fan-out: bytes read per delivery, CPU per delivery (client and server), deliveries accounted', () => {
  const fanout = (format, perDelivery, cpuPerDeliveryUs) => ({
    ...report(format, 'medium', 'none', { bytes: perDelivery - 30, rate: 4000, p50: 3, p99: 40, serverCpu: 15 }),
    direction: 'fanout',
    fanout: { expected: 12000, delivered: 11990, errors: 0, lost: 10, wire: { perDelivery }, cpuPerDeliveryUs }
  })
  const [row] = comparisonRows([fanout('json', 1007.4, 36), fanout('protobuf', 450.2, 30)], ['json', 'protobuf'])
  assert.deepEqual([row.figures.json.wireBytes, row.figures.json.clientCpu, row.figures.json.serverCpu], [1007, 36, 15])
  assert.equal(row.figures.protobuf.accounting, '12000/11990/0/10')
  assert.equal(row.ratios.protobuf.wireBytes, 0.447)
  assert.equal(row.ratios.protobuf.clientCpu, 0.833)
})
