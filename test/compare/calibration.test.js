import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import {
  CALIBRATION_TESTS, DEFAULT_PLANTED_US, PLANTED_FORMAT, PLANTED_MODULE, PLANTED_SIDES, calibrationLines, calibrationOf, calibrationWords, plantArgument
} from '../../lib/compare/calibration.js'
import { comparisonRows } from '../../lib/compare/results.js'

const LABELS = ['json', PLANTED_FORMAT]

/** An estimate as simultaneousEstimates makes it: the ratio, its interval, the half-width as a fraction, the call. */
const estimate = (ratio, ci, call) => ({
  ratio, ci, resolution: ci ? Math.sqrt(ci[1] / ci[0]) - 1 : null, call, generations: ci ? 5 : 1
})

/** A comparison row with the baseline's figures (p50 in ms, CPU in µs) and the planted format's verdicts. */
const row = (verdicts, { test = '5 small', profile = 'none', p50 = 0.1, clientCpu = 40, serverCpu = 30 } = {}) => ({
  test, profile, figures: { json: { p50, clientCpu, serverCpu } }, verdicts: { [PLANTED_FORMAT]: verdicts }
})

const CLIENT = { side: 'client', us: 20 }
const SERVER = { side: 'server', us: 20 }

test('the planted format and its module: json-planted, from lib/compare/planted-codec.js; 20 µs in the client or the server, on medium and large unless told', () => {
  assert.equal(PLANTED_FORMAT, 'json-planted')
  assert.ok(fs.existsSync(PLANTED_MODULE), PLANTED_MODULE)
  assert.equal(DEFAULT_PLANTED_US, 20)
  assert.deepEqual(PLANTED_SIDES, ['client', 'server'])
  assert.deepEqual(CALIBRATION_TESTS, ['medium', 'large'])
  // As --calibrate takes it back: the client's size alone, the server's with its side.
  assert.deepEqual([plantArgument(CLIENT), plantArgument({ side: 'server', us: 2.5 })], ['20', 'server:2.5'])
})

test('client plant, found about its size: latency and client CPU called worse, their intervals covering 20 µs, server CPU not called worse', () => {
  const calibration = calibrationOf([row({
    p50: estimate(1.2, [1.1, 1.3], 'worse'),
    clientCpu: estimate(1.5, [1.4, 1.6], 'worse'),
    serverCpu: estimate(1.01, [0.97, 1.05], 'equivalent'),
    // Metrics a calibration does not read are left out.
    rate: estimate(0.8, [0.7, 0.9], 'worse')
  })], LABELS, CLIENT)
  assert.deepEqual([calibration.side, calibration.plantedUs], ['client', 20])
  const [found] = calibration.rows
  assert.deepEqual([found.test, found.profile, found.found, found.sized, found.falseCall], ['5 small', 'none', true, true, false])
  assert.deepEqual(Object.keys(found.metrics), ['p50', 'clientCpu', 'serverCpu'])
  // p50 is in ms: 0.1 ms is 100 µs, 1.2x of it 20 µs more; the smallest difference told is the interval's
  // half-width as a fraction, sqrt(1.3 / 1.1) - 1 = 8.7%, of those 100 µs.
  assert.deepEqual(found.metrics.p50, { expected: 'found', differenceUs: 20, ci: [10, 30], smallestUs: 8.7, call: 'worse', covers: true })
  assert.deepEqual(found.metrics.clientCpu, { expected: 'found', differenceUs: 20, ci: [16, 24], smallestUs: 2.8, call: 'worse', covers: true })
  // Where it must not show, no size to cover.
  assert.deepEqual(found.metrics.serverCpu, { expected: 'absent', differenceUs: 0.3, ci: [-0.9, 1.5], smallestUs: 1.2, call: 'equivalent' })
  assert.deepEqual(calibrationLines(calibration), [
    "5 small: planted +20 µs in the client's encode: p50 +20 µs (+10 to +30) worse, tells ±8.7 µs; client CPU +20 µs (+16 to +24) worse, tells ±2.8 µs; " +
    'server CPU +0.3 µs (-0.9 to +1.5) equivalent, tells ±1.2 µs: found where planted, about its size, and not called worse on server CPU'
  ])
})

test('client plant, found but not its size: an interval that misses 20 µs is named with its bounds', () => {
  const calibration = calibrationOf([row({
    p50: estimate(1.2, [1.18, 1.22], 'worse'),
    clientCpu: estimate(1.465, [1.43, 1.49], 'worse'),
    serverCpu: estimate(1, [0.96, 1.04], 'inconclusive')
  })], LABELS, CLIENT)
  const [found] = calibration.rows
  assert.deepEqual([found.found, found.sized, found.falseCall], [true, false, false])
  assert.deepEqual([found.metrics.p50.covers, found.metrics.clientCpu.covers], [true, false])
  assert.deepEqual(found.metrics.clientCpu.ci, [17.2, 19.6])
  assert.match(calibrationLines(calibration)[0],
    /: found where planted, but not its size \(client CPU \+18\.6 µs, interval \+17\.2 to \+19\.6\), and not called worse on server CPU$/)
  // Both missing: both named.
  const both = calibrationOf([row({
    p50: estimate(1.3, [1.25, 1.35], 'worse'), clientCpu: estimate(1.2, [1.15, 1.25], 'worse'), serverCpu: estimate(1, [0.99, 1.01], 'equivalent')
  })], LABELS, CLIENT)
  assert.match(calibrationLines(both)[0], /but not its size \(p50 \+30 µs, interval \+25 to \+35; client CPU \+8 µs, interval \+6 to \+10\), and not/)
})

test('server plant: latency and server CPU must find it, client CPU must not call it worse; the same checks the other way round', () => {
  const calibration = calibrationOf([row({
    p50: estimate(1.2, [1.1, 1.3], 'worse'),
    clientCpu: estimate(0.99, [0.97, 1.01], 'equivalent'),
    serverCpu: estimate(1.6, [1.5, 1.7], 'worse')
  }, { serverCpu: 33 })], LABELS, SERVER)
  assert.equal(calibration.side, 'server')
  const [found] = calibration.rows
  assert.deepEqual(Object.keys(found.metrics), ['p50', 'serverCpu', 'clientCpu'])
  assert.deepEqual(Object.values(found.metrics).map((metric) => metric.expected), ['found', 'found', 'absent'])
  assert.deepEqual(found.metrics.serverCpu, { expected: 'found', differenceUs: 19.8, ci: [16.5, 23.1], smallestUs: 2.1, call: 'worse', covers: true })
  assert.deepEqual([found.found, found.sized, found.falseCall], [true, true, false])
  assert.deepEqual(calibrationLines(calibration), [
    "5 small: planted +20 µs in the server's decode: p50 +20 µs (+10 to +30) worse, tells ±8.7 µs; server CPU +19.8 µs (+16.5 to +23.1) worse, tells ±2.1 µs; " +
    'client CPU -0.4 µs (-1.2 to +0.4) equivalent, tells ±0.8 µs: found where planted, about its size, and not called worse on client CPU'
  ])
  // Server CPU's interval short of 20 µs, client CPU called worse.
  const [missed, falseCall] = calibrationLines(calibrationOf([
    row({ p50: estimate(1.2, [1.1, 1.3], 'worse'), clientCpu: estimate(1, [0.98, 1.02], 'equivalent'), serverCpu: estimate(1.5, [1.45, 1.55], 'worse') }, { serverCpu: 30 }),
    row({ p50: estimate(1.2, [1.1, 1.3], 'worse'), clientCpu: estimate(1.1, [1.05, 1.15], 'worse'), serverCpu: estimate(1.6, [1.5, 1.7], 'worse') }, { serverCpu: 33 })
  ], LABELS, SERVER))
  assert.match(missed, /: found where planted, but not its size \(server CPU \+15 µs, interval \+13\.5 to \+16\.5\), and not called worse on client CPU$/)
  assert.match(falseCall, /: called worse on client CPU, where it was not planted: a false call, or a knock-on of the cost$/)
})

test('not found: a cost the intervals could not tell; one generation: no interval to print, nothing covered', () => {
  const calibration = calibrationOf([
    row({ p50: estimate(1.05, [0.9, 1.22], 'inconclusive'), clientCpu: estimate(1.5, [1.4, 1.6], 'worse'), serverCpu: estimate(0.98, [0.8, 1.2], 'inconclusive') }),
    row({ p50: estimate(1.3, null, 'inconclusive'), clientCpu: estimate(1.4, null, 'inconclusive'), serverCpu: estimate(1, null, 'inconclusive') }, { test: '3 medium', profile: '3g' })
  ], LABELS, CLIENT)
  assert.deepEqual(calibration.rows.map((r) => [r.found, r.sized, r.falseCall]), [[false, true, false], [false, false, false]])
  assert.deepEqual(calibration.rows[1].metrics.p50, { expected: 'found', differenceUs: 30, ci: null, smallestUs: null, call: 'inconclusive', covers: false })
  const [first, second] = calibrationLines(calibration)
  assert.match(first, /^5 small: planted \+20 µs in the client's encode: p50 \+5 µs \(-10 to \+22\) inconclusive, tells ±\d+(\.\d)? µs; .*: not found: this run could not tell it$/)
  assert.equal(second, "3 medium on 3g: planted +20 µs in the client's encode: p50 +30 µs inconclusive; client CPU +16 µs inconclusive; server CPU +0 µs inconclusive: not found: this run could not tell it")
})

test('called worse where it was not planted outweighs finding it (falseCall); called better there is not counted, but said', () => {
  const calibration = calibrationOf(['worse', 'better'].map((call) => row({
    p50: estimate(1.2, [1.1, 1.3], 'worse'),
    clientCpu: estimate(1.5, [1.4, 1.6], 'worse'),
    serverCpu: estimate(call === 'worse' ? 1.2 : 0.9, call === 'worse' ? [1.1, 1.3] : [0.85, 0.95], call)
  })), LABELS, CLIENT)
  assert.deepEqual(calibration.rows.map((r) => [r.found, r.sized, r.falseCall]), [[true, true, true], [true, true, false]])
  const [worse, better] = calibrationLines(calibration)
  assert.match(worse, /server CPU \+6 µs \(\+3 to \+9\) worse, tells ±[\d.]+ µs: called worse on server CPU, where it was not planted: a false call, or a knock-on of the cost$/)
  assert.match(better, /server CPU -3 µs \(-4\.5 to -1\.5\) better, tells ±[\d.]+ µs: found where planted, about its size, and not called worse on server CPU; server CPU called better: a false call, or a knock-on of the cost$/)
})

test('calibrationWords: the pieces of each line, per metric and the verdict, for docs to quote', () => {
  const calibration = calibrationOf([row({
    p50: estimate(1.2, [1.1, 1.3], 'worse'), clientCpu: estimate(1, [0.98, 1.02], 'equivalent'), serverCpu: estimate(1.6, [1.5, 1.7], 'worse')
  }, { serverCpu: 33, profile: '3g' })], LABELS, SERVER)
  assert.deepEqual(calibrationWords(calibration), [{
    test: '5 small',
    profile: '3g',
    metrics: {
      p50: '+20 µs (+10 to +30) worse, tells ±8.7 µs',
      serverCpu: '+19.8 µs (+16.5 to +23.1) worse, tells ±2.1 µs',
      clientCpu: '+0 µs (-0.8 to +0.8) equivalent, tells ±0.8 µs'
    },
    verdict: 'found where planted, about its size, and not called worse on client CPU'
  }])
  const { metrics, verdict } = calibrationWords(calibration)[0]
  assert.equal(calibrationLines(calibration)[0],
    `5 small on 3g: planted +20 µs in the server's decode: p50 ${metrics.p50}; server CPU ${metrics.serverCpu}; client CPU ${metrics.clientCpu}: ${verdict}`)
})

test('a metric whose baseline is missing or zero is left out, not divided by', () => {
  const calibration = calibrationOf([row({
    p50: estimate(1.2, [1.1, 1.3], 'worse'),
    clientCpu: estimate(1.5, [1.4, 1.6], 'worse'),
    serverCpu: estimate(1.2, [1.1, 1.3], 'worse')
  }, { clientCpu: null, serverCpu: 0 })], LABELS, CLIENT)
  assert.deepEqual(Object.keys(calibration.rows[0].metrics), ['p50'])
  assert.equal(calibration.rows[0].falseCall, false, 'no server CPU figure: nothing to call falsely')
})

test('from comparisonRows: five generations of json and json-planted, the planted one 25 µs dearer to encode', () => {
  const reports = []
  for (let trial = 1; trial <= 5; trial++) {
    const jitter = 1 + (trial % 3) / 100
    const common = { test: 'medium', testId: 3, network: { profile: 'none' }, messages: { sent: 10, acked: 10, errors: 0, lost: 0 }, ok: true, trial }
    const figures = (p50, clientCpu, serverCpu) => ({
      rate: 1000 / p50,
      latencyMs: { p50, p99: p50 * 3 },
      bytes: { payloadPerMessage: 423, written: 4290, read: 30 },
      cpu: { perMessageUs: clientCpu },
      server: { perMessageUs: serverCpu },
      codec: { clientUs: clientCpu / 4, serverUs: 5 }
    })
    reports.push({ ...common, format: 'json', label: 'json', ...figures(0.1 * jitter, 40 * jitter, 30 * (2 - jitter)) })
    reports.push({ ...common, format: PLANTED_FORMAT, label: PLANTED_FORMAT, ...figures(0.125 * jitter, 65 * jitter, 30 * (2 - jitter) * (trial % 2 ? 1.01 : 0.99)) })
  }
  const { rows } = comparisonRows(reports, LABELS)
  const calibration = calibrationOf(rows, LABELS, { side: 'client', us: 25 })
  const [found] = calibration.rows
  assert.equal(found.test, '3 medium')
  assert.equal(found.metrics.p50.call, 'worse')
  assert.equal(found.metrics.clientCpu.call, 'worse')
  assert.ok(!['better', 'worse'].includes(found.metrics.serverCpu.call), found.metrics.serverCpu.call)
  assert.deepEqual([found.found, found.falseCall], [true, false])
  // p50 25% above a median of 0.101 ms: 25.3 µs; client CPU 25/40 above 40.4 µs: 25.3 µs.
  assert.equal(found.metrics.p50.differenceUs, 25.3)
  assert.equal(found.metrics.clientCpu.differenceUs, 25.3)
  // Both formats jitter alike, so the ratio is exact, and its interval, +25.3 to +25.3 µs from the
  // baseline's median, misses the 25 planted: not its size.
  assert.equal(found.sized, false)
  assert.match(calibrationLines(calibration)[0], /^3 medium: planted \+25 µs in the client's encode: p50 \+25\.3 µs \(\+25\.3 to \+25\.3\) worse, tells ±0 µs; .*: found where planted, but not its size/)
})

test('a row where the planted format has no verdicts (it did not run) is not found', () => {
  const calibration = calibrationOf([{ test: '5 small', profile: 'none', figures: { json: { p50: 0.1, clientCpu: 40, serverCpu: 30 } }, verdicts: {} }], LABELS, SERVER)
  assert.deepEqual([calibration.rows[0].found, calibration.rows[0].sized], [false, false])
  assert.match(calibrationLines(calibration)[0], /: not found: this run could not tell it$/)
})
