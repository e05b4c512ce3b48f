import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { runScript } from '../helpers.js'

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'compare-'))

test('npm run compare: bad options are refused before anything runs', async () => {
  const out = tempDir()
  for (const [args, error] of [
    [['--throttle', 'none,custom-free'], /^unknown --throttle 'custom-free'/],
    [['--tests', '5,9'], /^unknown test '9'/],
    [['-n', '0'], /^--messages must be a whole number >= 1/],
    [['--formats', 'json,xml'], /^unknown format 'xml': expected one of .*, or add it with --codec-module <file\.js>\n$/],
    [['--trials', '0'], /^--trials must be a whole number >= 1, got '0'/],
    [['--trials', 'many'], /^--trials must be a whole number >= 1, got 'many'/],
    [['--trials', '51'], /^--trials must be at most 50, got 51/],
    [['--tests', 'people', '--trials', '50', '-n', '10'], /^--trials 50 would send 7\.2 GB of JSON per format for people \(at most 4 GiB\): use fewer --trials or fewer messages \(-n\)\n$/],
    [['--formats', ','], /^--formats needs at least one of avro, cbor, .*json, .*protobuf/],
    [['--equivalence', '0'], /^--equivalence must be a percentage above 0 and below 100, got '0'/],
    [['--equivalence', 'abc'], /^--equivalence must be a percentage above 0 and below 100, got 'abc'/],
    [['--budget', '-1s'], /^--budget must be a duration such as 30s, 500ms or 2m, got '-1s'/],
    [['--trials', '3', '--budget', '1m'], /^give either --trials \(a fixed number of pairs\) or --budget \(adaptive\), not both/],
    [['--formats', 'json,avro', '--payload', 'test/fixtures/infer/geojson.json'], /^format 'avro' does not carry a payload of your own/]
  ]) {
    const { code, stdout, stderr } = await runScript('bin/compare.js', [...args, '--out', out])
    assert.equal(code, 2, stderr)
    assert.match(stderr, error)
    assert.equal(stderr.trim().split('\n').length, 1, 'one line, no stack trace')
    assert.equal(stdout, '')
  }
  assert.deepEqual(fs.readdirSync(out), [], 'nothing written')
})

test('npm run compare: both formats per test and profile, exact accounting, results written', async () => {
  const out = tempDir()
  const run = await runScript('bin/compare.js', ['--tests', '5,person', '--throttle', 'none,fois', '-n', '20', '-w', '0', '--trials', '2', '--compress', '--json', '--out', out])
  assert.equal(run.code, 0, run.stderr)
  const results = JSON.parse(run.stdout)
  // Two pairs of each, the second in the other order: drift falls on both formats alike. The
  // warm-up run of each format before them is not recorded.
  assert.deepEqual(results.reports.map((r) => `${r.test}/${r.network.profile}/${r.format}/${r.trial}`), [
    'small/none/json/1', 'small/none/protobuf/1', 'small/none/protobuf/2', 'small/none/json/2',
    'small/fois/json/1', 'small/fois/protobuf/1', 'small/fois/protobuf/2', 'small/fois/json/2',
    'person/none/json/1', 'person/none/protobuf/1', 'person/none/protobuf/2', 'person/none/json/2',
    'person/fois/json/1', 'person/fois/protobuf/1', 'person/fois/protobuf/2', 'person/fois/json/2'
  ])
  assert.deepEqual(results.settings.order.slice(0, 4), [
    { test: '5 small', profile: 'none', format: 'json', trial: 1 }, { test: '5 small', profile: 'none', format: 'protobuf', trial: 1 },
    { test: '5 small', profile: 'none', format: 'protobuf', trial: 2 }, { test: '5 small', profile: 'none', format: 'json', trial: 2 }
  ])
  for (const report of results.reports) {
    assert.deepEqual(report.messages, { sent: 20, acked: 20, errors: 0, lost: 0 })
    // CPU per message on both sides: the client's over its measured phase, the server's from /metrics.
    assert.ok(report.cpu.perMessageUs > 0 && report.cpu.userUs + report.cpu.systemUs > 0, JSON.stringify(report.cpu))
    assert.equal(typeof report.generator.saturated, 'boolean', 'every report says whether its client was saturated')
    assert.equal(report.server.messages, 20, 'the server counted exactly this run\'s messages for its format and test')
    assert.ok(report.server.perMessageUs > 0)
  }
  assert.deepEqual(results.rows.map((row) => `${row.test}/${row.profile}`), ['5 small/none', '5 small/fois', 'person/none', 'person/fois'])
  const small = results.rows[0]
  // The mean over the stream of small messages (the one message is 22 and 6 bytes).
  assert.equal(small.figures.json.payloadBytes, 24)
  assert.equal(small.figures.protobuf.payloadBytes, 7)
  assert.equal(small.ratios.protobuf.payloadBytes, 0.292)
  assert.deepEqual(results.settings.runs, { '5 small': { messages: 20, warmup: 0 }, person: { messages: 20, warmup: 0 } })
  assert.equal(results.settings.compress, true)
  assert.equal(results.settings.trials, 2)
  assert.equal(results.settings.budgetMs, null)
  assert.deepEqual(results.settings.design.looks, { 'small\nnone': [2], 'small\nfois': [2], 'person\nnone': [2], 'person\nfois': [2] })
  assert.equal(results.settings.design.family, 4 * 6)
  assert.match(results.settings.pinning, /^server on CPU \d+, clients on CPU \d+$|^not possible here/)
  assert.ok(results.settings.elapsedMs > 0)
  assert.equal(small.trials.json.length, 2)
  assert.deepEqual(Object.keys(small.verdicts.protobuf), ['p50', 'p99', 'rate', 'bytes', 'clientCpu', 'serverCpu'])
  assert.equal(small.verdicts.protobuf.bytes.call, 'better', 'fewer bytes on the wire every trial')
  assert.equal(small.pairs, 2)
  assert.ok(['better', 'worse', 'mixed', 'equivalent', 'inconclusive'].includes(small.calls.protobuf))

  assert.deepEqual(JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8')).rows, results.rows)
  const markdown = fs.readFileSync(path.join(out, 'results.md'), 'utf8')
  assert.match(markdown, /^## Verdict\n\n- 5 small, loopback: protobuf vs json: p50 [\d.]+x \([\d.]+-[\d.>]+\)/m)
  assert.match(markdown, /^- person, fois: protobuf vs json: .*wire bytes 0\.\d\dx/m)
  assert.match(markdown, /^\| test \| network \| format \| B\/msg \| wire B\/msg \| msgs\/s \| p50 ms \| p99 ms \| client CPU µs\/msg \| server CPU µs\/msg \|/m)
  assert.match(markdown, /^\| 5 small \| none \| json \| 24 \|/m)
  assert.match(markdown, /^\| {2}\| {2}\| protobuf\/json \| 0\.29x \|/m)
  assert.match(markdown, /permessage-deflate on/)
  assert.match(fs.readFileSync(path.join(out, 'report.html'), 'utf8'), /^<!doctype html>/)
  assert.match(run.stderr, /^test 5 small, network fois, warm-up: protobuf, 20 messages$/m)
  assert.match(run.stderr, /^test 5 small, network fois, pair 2: protobuf, 20 messages$/m)
  assert.match(run.stderr, new RegExp(`wrote ${out}/results.json, .*; 8 trial pairs in [\\d.]+ s$`, 'm'))
})

test('npm run compare: the human table, one line per format and one for the ratio', async () => {
  const human = await runScript('bin/compare.js', ['--tests', '5', '-n', '20', '-w', '0', '--trials', '3', '--out', tempDir()])
  assert.equal(human.code, 0, human.stderr)
  const lines = human.stdout.trimEnd().split('\n')
  assert.match(lines[0], /^test\s+network\s+format\s+B\/msg\s+wire B\/msg\s+msgs\/s\s+p50 ms\s+p99 ms\s+client CPU µs\/msg\s+server CPU µs\/msg\s+sent\/acked\/errors\/lost$/)
  assert.match(lines[1], /^5 small\s+none\s+json\s+24\s+\d+\s+[\d,.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+60\/60\/0\/0$/)
  assert.match(lines[2], /^\s+protobuf\s+7\s/)
  assert.match(lines[3], /^\s+protobuf\/json\s+0\.29x\s/)
  assert.equal(lines[4], '')
  // The answer in words, what stayed inconclusive, then how the calls were made.
  const call = '(better|worse|equivalent|inconclusive, ±[\\d.>]+%)'
  assert.match(lines[5], new RegExp(`^5 small, loopback: protobuf vs json: p50 [\\d.]+x \\([\\d.]+-[\\d.>]+\\) ${call}, p99 .*, ` +
    `wire bytes 0\\.43x \\(0\\.43-0\\.43\\) better, client CPU/msg .* ${call}, server CPU/msg .* ${call}: (better|worse|mixed .*)$`))
  const rest = lines.slice(7)
  if (rest.length === 3) assert.match(rest.shift(), /^inconclusive after 3 pairs: 5 small: /)
  assert.equal(rest[0], '')
  assert.match(rest[1], /^Each ratio is the geometric mean of the paired trials' ratios .* one look after the last pair; .* all 6 cells of the table/)
  assert.equal(rest.length, 2)
})

test('npm run compare --formats: every format through the server, in the order given, ratios against the first', async () => {
  const formats = ['msgpack', 'json', 'protobuf', 'protobuf-es', 'google-protobuf', 'fast-json', 'cbor', 'avro']
  const run = await runScript('bin/compare.js', ['--tests', '5,counters', '--formats', formats.join(','), '-n', '20', '-w', '0', '--trials', '1', '--json', '--out', tempDir()])
  assert.equal(run.code, 0, run.stderr)
  const results = JSON.parse(run.stdout)
  assert.deepEqual(results.formats, formats)
  assert.deepEqual(results.reports.map((r) => r.format), [...formats, ...formats])
  for (const report of results.reports) assert.deepEqual(report.messages, { sent: 20, acked: 20, errors: 0, lost: 0 }, report.format)
  const [small, counters] = results.rows
  // Real encoded sizes (means over the stream): the protobuf implementations agree byte for byte, JSON and typed JSON too.
  assert.deepEqual(formats.map((f) => small.figures[f].payloadBytes), [18, 24, 7, 7, 7, 24, 19, 6])
  assert.equal(counters.figures.protobuf.payloadBytes, counters.figures['protobuf-es'].payloadBytes)
  assert.equal(counters.figures.protobuf.payloadBytes, counters.figures['google-protobuf'].payloadBytes)
  assert.deepEqual(Object.keys(small.ratios), formats.slice(1))
  assert.equal(small.ratios.json.payloadBytes, 1.333, '24 / 18')
})

test('npm run compare --direction down: the server sends, wire bytes are the bytes read', async () => {
  // --repeat: one message, so every reply has the same size and the figures are exact.
  const run = await runScript('bin/compare.js', ['--tests', 'person', '-n', '20', '-w', '0', '--trials', '1', '--direction', 'down', '--repeat', '--json', '--out', tempDir()])
  assert.equal(run.code, 0, run.stderr)
  const results = JSON.parse(run.stdout)
  assert.equal(results.settings.direction, 'down')
  assert.equal(results.settings.repeat, true)
  for (const report of results.reports) {
    assert.equal(report.direction, 'down')
    assert.deepEqual(report.payload, { kind: 'repeated', messages: 1, seed: null }, 'the clients were told --repeat')
    assert.deepEqual(report.messages, { sent: 20, acked: 20, errors: 0, lost: 0 })
  }
  const [row] = results.rows
  assert.deepEqual([row.figures.json.payloadBytes, row.figures.protobuf.payloadBytes], [106, 48])
  assert.deepEqual([row.figures.json.wireBytes, row.figures.protobuf.wireBytes], [108, 50], 'payload + 2-byte unmasked server frame header')
})

test('npm run compare --formats json,json: an adaptive A/A run within its budget, json#2 beside json, bytes equivalent', async () => {
  const run = await runScript('bin/compare.js', ['--tests', '5', '--formats', 'json,json', '-n', '50', '-w', '10', '--budget', '12s', '--json', '--out', tempDir()])
  assert.equal(run.code, 0, run.stderr)
  const results = JSON.parse(run.stdout)
  assert.deepEqual(results.formats, ['json', 'json#2'])
  const [row] = results.rows
  assert.ok(row.pairs >= 2, `${row.pairs} pairs`)
  assert.deepEqual(results.reports.slice(0, 4).map((r) => `${r.format}:${r.label}:${r.trial}`), ['json:json:1', 'json:json#2:1', 'json:json#2:2', 'json:json:2'])
  assert.equal(results.settings.budgetMs, 12_000)
  assert.equal(results.settings.budgetAsked, 12_000)
  assert.ok(results.settings.elapsedMs < 12_000 + 5_000, `${results.settings.elapsedMs} ms: no pair starts that would overrun the budget by much`)
  const looks = results.settings.design.looks['small\nnone']
  assert.equal(looks.at(-1), row.pairs)
  assert.ok(looks.slice(0, -1).every((pairs, i) => pairs === 4 * (i + 1)), `looks every 4 pairs: ${looks}`)
  assert.match(results.settings.stops['small\nnone'], /^(budget|decided)$/)
  assert.equal(row.verdicts['json#2'].bytes.ratio, 1)
  assert.equal(row.verdicts['json#2'].bytes.call, 'equivalent')
})

test('npm run compare: a budget too short for two pairs after the warm-up is one line and exit 2', async () => {
  const run = await runScript('bin/compare.js', ['--tests', '5,person', '--budget', '1s', '-n', '20', '--out', tempDir()])
  assert.equal(run.code, 2, run.stderr)
  assert.match(run.stderr, /^--budget 1\.0s is too short for two trial pairs of every test and network: the warm-up suggests [\d.]+s; give a longer --budget, fewer tests, or --trials$/m)
  assert.equal(run.stderr.trim().split('\n').filter((line) => !line.startsWith('test ')).length, 1, 'one line besides progress, no stack trace')
})
