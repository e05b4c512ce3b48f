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
    [['--formats', 'json,xml'], /^unknown format 'xml' in --formats/],
    [['--formats', 'json,msgpack,json'], /^--formats names a format twice/],
    [['--formats', ','], /^--formats needs at least one of json, protobuf/],
    [['--formats', 'json,avro', '--payload', 'test/fixtures/infer/geojson.json'], /^format 'avro' does not support custom payloads/]
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
  const run = await runScript('bin/compare.js', ['--tests', '5,person', '--throttle', 'none,fois', '-n', '20', '-w', '0', '--compress', '--json', '--out', out])
  assert.equal(run.code, 0, run.stderr)
  const results = JSON.parse(run.stdout)
  assert.deepEqual(results.reports.map((r) => `${r.test}/${r.network.profile}/${r.format}`), [
    'small/none/json', 'small/none/protobuf', 'small/fois/json', 'small/fois/protobuf',
    'person/none/json', 'person/none/protobuf', 'person/fois/json', 'person/fois/protobuf'
  ])
  for (const report of results.reports) assert.deepEqual(report.messages, { sent: 20, acked: 20, errors: 0, lost: 0 })
  assert.deepEqual(results.rows.map((row) => `${row.test}/${row.profile}`), ['5 small/none', '5 small/fois', 'person/none', 'person/fois'])
  const small = results.rows[0]
  assert.equal(small.figures.json.payloadBytes, 22)
  assert.equal(small.figures.protobuf.payloadBytes, 6)
  assert.equal(small.ratios.protobuf.payloadBytes, 0.273)
  assert.deepEqual(results.settings.runs, { '5 small': { messages: 20, warmup: 0 }, person: { messages: 20, warmup: 0 } })
  assert.equal(results.settings.compress, true)

  assert.deepEqual(JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8')).rows, results.rows)
  const markdown = fs.readFileSync(path.join(out, 'results.md'), 'utf8')
  assert.match(markdown, /^\| test \| network \| format \| B\/msg \| wire B\/msg \| msgs\/s \| p50 ms \| p99 ms \|/m)
  assert.match(markdown, /^\| 5 small \| none \| json \| 22 \|/m)
  assert.match(markdown, /^\| {2}\| {2}\| protobuf\/json \| 0\.27x \|/m)
  assert.match(markdown, /permessage-deflate on/)
  assert.match(fs.readFileSync(path.join(out, 'report.html'), 'utf8'), /^<!doctype html>/)
  assert.match(run.stderr, /^test 5 small, network fois: protobuf, 20 messages$/m)
  assert.match(run.stderr, new RegExp(`wrote ${out}/results.json`))
})

test('npm run compare: the human table, one line per format and one for the ratio', async () => {
  const human = await runScript('bin/compare.js', ['--tests', '5', '-n', '20', '-w', '0', '--out', tempDir()])
  assert.equal(human.code, 0, human.stderr)
  const lines = human.stdout.trimEnd().split('\n')
  assert.match(lines[0], /^test\s+network\s+format\s+B\/msg\s+wire B\/msg\s+msgs\/s\s+p50 ms\s+p99 ms\s+sent\/acked\/errors\/lost$/)
  assert.match(lines[1], /^5 small\s+none\s+json\s+22\s+\d+\s+[\d,.]+\s+[\d.]+\s+[\d.]+\s+20\/20\/0\/0$/)
  assert.match(lines[2], /^\s+protobuf\s+6\s/)
  assert.match(lines[3], /^\s+protobuf\/json\s+0\.27x\s/)
  assert.equal(lines.length, 4)
})

test('npm run compare --formats: every format through the server, in the order given, ratios against the first', async () => {
  const formats = ['msgpack', 'json', 'protobuf', 'protobuf-es', 'google-protobuf', 'fast-json', 'cbor', 'avro']
  const run = await runScript('bin/compare.js', ['--tests', '5,counters', '--formats', formats.join(','), '-n', '20', '-w', '0', '--json', '--out', tempDir()])
  assert.equal(run.code, 0, run.stderr)
  const results = JSON.parse(run.stdout)
  assert.deepEqual(results.formats, formats)
  assert.deepEqual(results.reports.map((r) => r.format), [...formats, ...formats])
  for (const report of results.reports) assert.deepEqual(report.messages, { sent: 20, acked: 20, errors: 0, lost: 0 }, report.format)
  const [small, counters] = results.rows
  // Real encoded sizes: the protobuf implementations agree byte for byte, JSON and typed JSON too.
  assert.deepEqual(formats.map((f) => small.figures[f].payloadBytes), [17, 22, 6, 6, 6, 22, 17, 4])
  assert.equal(counters.figures.protobuf.payloadBytes, counters.figures['protobuf-es'].payloadBytes)
  assert.equal(counters.figures.protobuf.payloadBytes, counters.figures['google-protobuf'].payloadBytes)
  assert.deepEqual(Object.keys(small.ratios), formats.slice(1))
  assert.equal(small.ratios.json.payloadBytes, 1.294, '22 / 17')
})

test('npm run compare --direction down: the server sends, wire bytes are the bytes read', async () => {
  const run = await runScript('bin/compare.js', ['--tests', 'person', '-n', '20', '-w', '0', '--direction', 'down', '--json', '--out', tempDir()])
  assert.equal(run.code, 0, run.stderr)
  const results = JSON.parse(run.stdout)
  assert.equal(results.settings.direction, 'down')
  for (const report of results.reports) {
    assert.equal(report.direction, 'down')
    assert.deepEqual(report.messages, { sent: 20, acked: 20, errors: 0, lost: 0 })
  }
  const [row] = results.rows
  assert.deepEqual([row.figures.json.payloadBytes, row.figures.protobuf.payloadBytes], [106, 48])
  assert.deepEqual([row.figures.json.wireBytes, row.figures.protobuf.wireBytes], [108, 50], 'payload + 2-byte unmasked server frame header')
})
