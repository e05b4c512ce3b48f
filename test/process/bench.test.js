// The benchmarks' own plumbing (format selection, table shape, real sizes); their figures live in
// the README, never in assertions about speed.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { runScript } from '../helpers.js'
import { BENCH_FORMATS } from '../../bench/formats.js'

test('bench:size over every format: real encoded sizes, ratios against the first, protobuf implementations equal', async () => {
  const { code, stdout, stderr } = await runScript('bench/size.js', [], { env: { BENCH_FORMATS: BENCH_FORMATS.join(',') } })
  assert.equal(code, 0, stderr)
  const rows = stdout.trim().split('\n').slice(2).map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim()))
  assert.equal(rows.length, 8 * BENCH_FORMATS.length, 'every test in every format')
  const small = Object.fromEntries(rows.filter(([test]) => test === '5 small').map(([, format, bytes, ratio]) => [format, [Number(bytes), ratio]]))
  assert.deepEqual(small, {
    json: [22, '1.00'],
    protobuf: [6, '0.27'],
    'protobuf-dynamic': [6, '0.27'],
    'protobuf-es': [6, '0.27'],
    'google-protobuf': [6, '0.27'],
    'fast-json': [22, '1.00'],
    msgpack: [17, '0.77'],
    cbor: [17, '0.77'],
    avro: [4, '0.18']
  })
  const people = rows.filter(([test, format]) => test === 'people' && format.includes('protobuf'))
  assert.equal(people.length, 4)
  assert.equal(new Set(people.map((row) => row.slice(2).join())).size, 1, 'protobuf.js static and dynamic, protobuf-es and google-protobuf write the same bytes')
})

test('bench:codec BENCH_FORMATS: only the codecs named; an unknown name is one line and exit 2', async () => {
  const env = { BENCH_FORMATS: 'msgpack,avro', BENCH_TESTS: '5', BENCH_TIME_MS: '10' }
  const run = await runScript('bench/codec.js', [], { env })
  assert.equal(run.code, 0, run.stderr)
  const rows = run.stdout.trim().split('\n').filter((line) => line.startsWith('| 5 small'))
  assert.deepEqual(rows.map((line) => line.split('|')[2].trim()), ['msgpack', 'avro'])
  assert.match(run.stdout, /enc\+dec vs msgpack/)
  assert.match(rows[0], /\| 1\.00x \|$/)

  const bad = await runScript('bench/size.js', [], { env: { BENCH_FORMATS: 'json,xml' } })
  assert.equal(bad.code, 2)
  assert.equal(bad.stderr, `BENCH_FORMATS: unknown format 'xml': expected some of ${BENCH_FORMATS.join(', ')}\n`)
})
