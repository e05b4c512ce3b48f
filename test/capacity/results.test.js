import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  capacityNotes, capacityRows, capacityTableCells, capacityText, capacityUnit, capacityVerdicts, formatCapacityTable, ratioText
} from '../../lib/capacity/results.js'
import { calibrationOf } from '../../lib/capacity/calibration.js'

/** A search as run.js gives it, its knee probes costing `serverUs` of the server's CPU per message. */
const search = (format, estimates, { status = 'found', limitRate = null, serverUs = 10, saturated = false } = {}) => ({
  row: '3 medium',
  profile: 'none',
  slo: 'p99<10ms',
  format,
  status,
  estimates,
  limitRate,
  // `saturated`: the generator at its limit at the pass below the knee in every round, or in this many.
  brackets: estimates.map((rate, i) => ({ low: rate * 0.97, high: rate * 1.03, generatorSaturated: saturated === true || i < saturated })),
  probes: estimates.map((rate) => ({
    rate: rate * 0.95, pass: true, server: { perMessageUs: serverUs }, generatorPerMessageUs: serverUs / 2
  }))
})

const labels = ['json', 'protobuf']

test('each format\'s capacity is the rounds\' mean with a Student t interval, per server core, and the cores a target rate needs', () => {
  const { rows } = capacityRows([search('json', [20_000, 21_000, 19_000]), search('protobuf', [30_000, 31_000, 29_000])],
    { labels, serverCores: 0.5, targetRate: 100_000 })
  const [json, protobuf] = rows[0].figures
  assert.equal(json.msgsPerS, 20_000)
  assert.equal(json.perCore, 40_000)
  // mean 20,000, sd 1000, t(0.975, 2) = 4.303: ± 2484.
  assert.deepEqual(json.ci, [17_516, 22_484])
  assert.equal(json.halfWidth, 0.1242)
  assert.deepEqual(protobuf.coresFor, { rate: 100_000, cores: 1.67, ci: [1.54, 1.82] })
  assert.equal(json.serverUs, 10)
  assert.equal(json.generatorUs, 5)
  const ratio = rows[0].ratios.protobuf
  assert.equal(ratio.call, 'better')
  assert.ok(ratio.ratio > 1.45 && ratio.ratio < 1.55)
})

test('the same capacity twice is called equivalent, and a format without one gets no ratio', () => {
  const same = capacityRows([search('json', [20_000, 20_100, 19_900, 20_050]), search('json#2', [20_020, 20_080, 19_950, 20_000])],
    { labels: ['json', 'json#2'], serverCores: 1, targetRate: null })
  assert.equal(same.rows[0].ratios['json#2'].call, 'equivalent')
  const bound = capacityRows([search('json', [20_000, 21_000, 19_000]), search('protobuf', [], { status: 'generator-bound', limitRate: 64_000 })],
    { labels, serverCores: 1, targetRate: null })
  assert.equal(bound.rows[0].ratios.protobuf, null)
  assert.equal(capacityText(bound.rows[0].figures[1]), 'generator-bound at 64,000/s')
  const settings = { formats: labels, serverCores: 1, targetRate: null }
  assert.match(capacityVerdicts({ rows: bound.rows, settings })[0], /protobuf vs json not told/)
  const table = formatCapacityTable({ rows: bound.rows, settings })
  assert.match(table, /^test +objective +format +msgs\/s per core \(1 core\)/)
  assert.match(table, /generator-bound at 64,000\/s/)
  assert.deepEqual(capacityNotes(bound).map((line) => line.slice(0, 80)), ['protobuf on test 3 medium: the generator could not keep up at 64,000/s while the'])
})

test('a ratio of lower bounds (the generator saturated at a knee) is a bound: only the call it cannot undo stands', () => {
  const ratioOf = (json, protobuf) => {
    const { rows } = capacityRows([search('json', ...json), search('protobuf', ...protobuf)], { labels, serverCores: 1, targetRate: null })
    return { ratio: rows[0].ratios.protobuf, rows }
  }
  const low = [20_000, 21_000, 19_000]
  const high = [30_000, 31_000, 29_000]
  const same = [20_100, 20_900, 19_100]
  // Protobuf's at least: it may take more still, so better stands.
  const atLeast = ratioOf([low], [high, { saturated: true }])
  assert.deepEqual([atLeast.ratio.bound, atLeast.ratio.call], ['at least', 'better'])
  assert.match(ratioText(atLeast.ratio), /^at least 1\.50x \(\d\.\d\d-\d\.\d\d\) better$/)
  assert.match(capacityVerdicts({ rows: atLeast.rows, settings: { formats: labels } })[0],
    /protobuf better: at least 1\.50x json's capacity, .* \(a bound: the generator saturated at protobuf's knee\)/)
  // JSON's at least: it may take as much as protobuf, so better does not stand.
  const atMost = ratioOf([low, { saturated: true }], [high])
  assert.deepEqual([atMost.ratio.bound, atMost.ratio.call], ['at most', 'inconclusive'])
  // Both: nothing stands, equivalent included.
  const neither = ratioOf([low, { saturated: true }], [same, { saturated: true }])
  assert.deepEqual([neither.ratio.bound, neither.ratio.call], ['neither', 'inconclusive'])
  assert.match(ratioText(neither.ratio), /inconclusive: both at least$/)
  assert.match(capacityVerdicts({ rows: neither.rows, settings: { formats: labels } })[0], /but both capacities are lower bounds/)
  // Neither saturated: no bound, the call as the interval gives it.
  assert.equal(ratioOf([low], [high]).ratio.bound, undefined)
})

test('a capacity is a bound when the generator was saturated at the pass below the knee in at least half the rounds; fewer, and the figure stands, noted', () => {
  const figureOf = (saturated) => {
    const searches = [search('json', [20_000, 21_000, 19_000, 20_500]), search('protobuf', [30_000, 31_000, 29_000, 30_500], { saturated })]
    const { rows } = capacityRows(searches, { labels, serverCores: 1, targetRate: null })
    return { figure: rows[0].figures[1], notes: capacityNotes({ rows, searches }) }
  }
  const stall = figureOf(1)
  assert.deepEqual([stall.figure.generatorAtLimit, stall.figure.saturatedRounds], [false, 1])
  assert.deepEqual(stall.notes, ['protobuf on test 3 medium: the generator was saturated at the pass below the knee in 1 of 4 rounds, a stall of its own that the interval owns, not its limit'])
  const limit = figureOf(2)
  assert.deepEqual([limit.figure.generatorAtLimit, limit.figure.saturatedRounds], [true, 2])
  assert.match(limit.notes[0], /^protobuf on test 3 medium: the generator was saturated at the pass below the knee in 2 of 4 rounds, so the server may take more \(at least\)/)
  assert.deepEqual(figureOf(0).notes, [])
})

test('probes that other processes or guests disturbed are noted with the generator\'s limits', () => {
  const searches = [search('json', [20_000, 21_000, 19_000]), search('protobuf', [30_000, 31_000, 29_000])]
  const { rows } = capacityRows(searches, { labels, serverCores: 1, targetRate: null })
  assert.deepEqual(capacityNotes({ rows, searches }), [], 'probes without a machine reading: nothing to say')
  const quiet = { neighbourCores: 0.02, stealCores: 0, loadAverage: 1 }
  searches[0].probes.forEach((probe) => { probe.machine = quiet })
  searches[1].probes.forEach((probe, i) => { probe.machine = i === 0 ? { neighbourCores: 0.8, stealCores: 0.3, loadAverage: 2.2 } : quiet })
  const notes = capacityNotes({ rows, searches })
  assert.equal(notes.length, 2)
  assert.match(notes[0], /^contaminated: other processes took up to 0\.8 cores in 1 of 6 probes \(load average up to 2\.2\)/)
  assert.match(notes[1], /^stolen: .* 1 of 6 probes/)
})

test('calibration: a planted cost found when the ratio is called worse and within 15% of s / s\' (each codec\'s CPU at its knee)', () => {
  // 10 µs a message, 20 with the plant: half the capacity.
  const rows = (planted) => capacityRows([search('json', [20_000, 20_200, 19_800]), search('json-planted', planted, { serverUs: 20 })],
    { labels: ['json', 'json-planted'], serverCores: 1, targetRate: null }).rows
  const found = calibrationOf(rows([10_000, 10_100, 9_900]), { us: 10 })
  assert.equal(found.found, true)
  assert.deepEqual([found.rows[0].predicted, found.rows[0].found, found.rows[0].call], [0.5, 0.5, 'worse'])
  assert.match(found.lines[0], /10 µs planted took the server from 10 to 20 µs\/msg at the knee, which predicts 0\.5x the capacity; found 0\.5x, called worse, 0\.0% above the prediction: FOUND/)
  const missed = calibrationOf(rows([15_000, 15_100, 14_900]), { us: 10 })
  assert.equal(missed.found, false, '0.75x is 50% off the prediction')
})

test('a fan-out\'s capacity is in deliveries/s: the publishes/s searched times the subscribers, its ratio the same as the publishes\'', () => {
  const unit = capacityUnit({ direction: 'fanout', connections: 100 })
  assert.deepEqual(unit, { name: 'deliveries/s', per: 'delivery', perRate: 100, fanout: true })
  assert.deepEqual(capacityUnit({ direction: 'up', connections: 16 }), { name: 'msgs/s', per: 'msg', perRate: 1, fanout: false })
  const searches = [search('json', [2000, 2100, 1900]), search('protobuf', [3000, 3100, 2900]), search('json#2', [], { status: 'generator-bound', limitRate: 4000 })]
  const labels3 = ['json', 'protobuf', 'json#2']
  const fanout = capacityRows(searches, { labels: labels3, serverCores: 0.5, targetRate: 1_000_000, unit })
  const plain = capacityRows(searches, { labels: labels3, serverCores: 0.5, targetRate: 1_000_000 })
  const [json, protobuf, bound] = fanout.rows[0].figures
  assert.deepEqual([json.msgsPerS, json.publishesPerS, json.subscribers, json.unit], [200_000, 2000, 100, 'deliveries/s'])
  assert.equal(json.perCore, 400_000)
  // 2000 ± 248.4 publishes/s (sd 100, t(0.975, 2) = 4.303), times 100 subscribers.
  assert.deepEqual(json.ci, [175_159, 224_841])
  assert.equal(json.halfWidth, plain.rows[0].figures[0].halfWidth)
  assert.deepEqual(protobuf.coresFor, { rate: 1_000_000, cores: 1.67, ci: [1.54, 1.82] })
  assert.deepEqual(fanout.rows[0].ratios, plain.rows[0].ratios)
  assert.equal(capacityText(bound), 'generator-bound at 4,000 publishes/s')
  assert.match(capacityNotes(fanout)[0], /could not keep up at 4,000 publishes\/s/)
  const settings = { formats: labels3, serverCores: 0.5, targetRate: null, direction: 'fanout', connections: 100 }
  const { header } = capacityTableCells({ rows: fanout.rows, settings })
  assert.deepEqual(header.slice(3, 6), ['deliveries/s per core (0.5 cores)', '95% interval', 'server µs/delivery'])
  // Without fan-out, no unit fields and the table's unit as before.
  assert.equal('unit' in plain.rows[0].figures[0], false)
  assert.equal(capacityTableCells({ rows: plain.rows, settings: { ...settings, direction: 'up' } }).header[3], 'msgs/s per core (0.5 cores)')
})
