// The benchmarks' own plumbing (format selection, table shape, real sizes); their figures live in
// the README, never in assertions about speed.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { runScript } from '../helpers.js'
import { BENCH_FORMATS } from '../../bench/support/formats.js'

describe('the benchmarks\' plumbing', () => {
  test('bench:size over every format: real encoded sizes of the streams, ratios against the first, protobuf implementations equal, deflate alone, in a stream and repeated', async () => {
    // The bench sizes each test in each format alike: every format on 5 small (its sizes below), json
    // on every test (their deflate) and the protobuf implementations on people (their bytes) cover
    // it, side by side. Each format's encoding of every test is registry.test.js's.
    const size = async (env) => {
      const { code, stdout, stderr } = await runScript('bench/size.js', [], { env })
      assert.equal(code, 0, stderr)
      return stdout.trim().split('\n').slice(2).map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim()))
    }
    const protobufs = BENCH_FORMATS.filter((format) => format.includes('protobuf'))
    const [small, tests, people] = await Promise.all([
      size({ BENCH_FORMATS: BENCH_FORMATS.join(','), BENCH_TESTS: '5' }),
      size({ BENCH_FORMATS: 'json' }),
      size({ BENCH_FORMATS: protobufs.join(','), BENCH_TESTS: 'people' })
    ])
    assert.deepEqual(small.map(([test, format]) => `${test} ${format}`), BENCH_FORMATS.map((format) => `5 small ${format}`), 'every format')
    assert.equal(tests.length, 8, 'every test')
    // The stream's mean size (its messages vary), then the one message's size (as before streams).
    assert.deepEqual(Object.fromEntries(small.map(([, format, , bytes, ratio, ...rest]) => [format, [Number(bytes), ratio, Number(rest.at(-3))]])), {
      json: [24, '1.00', 22],
      protobuf: [7, '0.31', 6],
      'protobuf-dynamic': [7, '0.31', 6],
      'protobuf-es': [7, '0.31', 6],
      'google-protobuf': [7, '0.31', 6],
      'fast-json': [24, '1.00', 22],
      'json-validated': [24, '1.00', 22],
      msgpack: [18, '0.76', 17],
      cbor: [19, '0.79', 17],
      avro: [6, '0.24', 4]
    })
    // JSON streams compress as real traffic does; the repeated message, against its own copy, far more.
    for (const [test, , messages, , , , , , stream, , , , repeated] of tests.filter(([name]) => name !== 'people')) {
      assert.ok(Number(messages) > 100, `${test}: a stream`)
      assert.ok(parseFloat(stream) >= 10 && parseFloat(stream) <= 30, `${test}: json stream deflates to ${stream}`)
      if (test !== '5 small') assert.ok(parseFloat(repeated) < 5, `${test}: json repeated deflates to ${repeated}`)
    }
    assert.deepEqual(people.map(([test, format]) => `${test} ${format}`), protobufs.map((format) => `people ${format}`))
    assert.equal(new Set(people.map((row) => row.slice(2).join())).size, 1, 'protobuf.js static and dynamic, protobuf-es and google-protobuf write the same bytes')
  })

  test('bench:wire: real processes with --compress, the stream\'s wire bytes a real share of its payload, the repeated message\'s not', async () => {
    const { code, stdout, stderr } = await runScript('bench/wire.js', [], { env: { BENCH_MESSAGES: '100', BENCH_TESTS: '4' } })
    assert.equal(code, 0, stderr)
    const rows = stdout.trim().split('\n').slice(2).map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim()))
    assert.deepEqual(rows.map(([test, format, payload]) => `${test}/${format}/${payload}`), [
      '4 large/json/stream of 188 seeded messages', '4 large/json/one message repeated',
      '4 large/protobuf/stream of 188 seeded messages', '4 large/protobuf/one message repeated'
    ])
    const share = (row) => parseFloat(row[5])
    assert.ok(share(rows[0]) >= 5 && share(rows[0]) <= 40, `json stream: ${rows[0][5]}`)
    assert.ok(share(rows[1]) < 5, `json repeated: ${rows[1][5]}`)
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

  test('bench:verdicts: A/A comparisons per design, their timed cells counted; a short smoke run with BENCH_ARGS', async () => {
    // Without BENCH_NO_PIN or BENCH_BEFORE: this commit's default design alone.
    const env = { BENCH_RUNS: '1', BENCH_ARGS: '--tests 5 -n 20 --trials 2 --repeat --start-warmup 100ms' }
    const run = await runScript('bench/verdicts.js', [], { env })
    assert.equal(run.code, 0, run.stderr)
    const [header, ...lines] = run.stdout.trim().split('\n')
    assert.match(header, /\| generations \(or pairs\) per test \| longest run s \| load average \|$/)
    const rows = lines.map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim()))
    assert.deepEqual(rows.map((row) => row.slice(0, 3)), [['this commit', '1', '7']], 'seven timed cells of one test: p50, p99, msgs/s, client and server CPU and codec time')
    for (const row of rows) {
      assert.ok(Number(row[3]) <= 7 && /^(none|5 small .+)$/.test(row[5]), row.join(' | '))
      assert.equal(row[8], '2-2', 'two generations, as --trials said')
      assert.match(row[10], /^[\d.]+-[\d.]+$|^n\/a$/, 'the load average over the generations')
    }
    assert.match(run.stderr, /^A\/A run 1\/1: this commit$/m)
    assert.doesNotMatch(run.stderr, /--no-pin/, 'no --no-pin design unless BENCH_NO_PIN asks')
  })

  test('bench:broker BENCH_BROKERS=ipc: the relay and the fan-out through the server, every frame in order; a bad name is one line', async () => {
    const env = { BENCH_BROKERS: 'ipc', BENCH_ROUNDS: '1', BENCH_FRAMES: '2000', BENCH_RATE: '1000', BENCH_SECONDS: '0.5', BENCH_FANOUT_SECONDS: '0.5' }
    const run = await runScript('bench/broker.js', [], { env })
    assert.equal(run.code, 0, run.stderr)
    const tables = run.stdout.trim().split('\n# ').map((table) => table.split('\n').slice(3).map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim())))
    assert.deepEqual(tables.map((rows) => rows.map((row) => row[0])), [['ipc'], ['none, one process', 'ipc']])
    assert.match(tables[0][0][1], /^[\d,]+$/, 'frames/s')
    assert.deepEqual(tables[1].map((row) => row[6]), ['-', '-'], 'no broker process to charge')

    const bad = await runScript('bench/broker.js', [], { env: { BENCH_BROKERS: 'ipc,kafka' } })
    assert.equal(bad.code, 2)
    assert.equal(bad.stderr, "BENCH_BROKERS: unknown broker 'kafka': expected some of redis, nats, ipc\n")
  })

  test('bench:reconnect: a killed server started again, every connection back and accounted, the busiest 100 ms by the client and by the restarted server', { timeout: 60_000 }, async () => {
    const env = { BENCH_CONNECTIONS: '100', BENCH_RATE: '100', BENCH_DOWN_MS: '300', BENCH_RUNS: '1' }
    const run = await runScript('bench/reconnect.js', [], { env })
    assert.equal(run.code, 0, run.stderr)
    const [columns, ...rows] = run.stdout.split('\n').filter((line) => line.startsWith('|'))
      .map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim()))
    assert.equal(rows.length, 1, run.stdout)
    const cell = Object.fromEntries(columns.map((column, i) => [column, rows[0][i]]))
    assert.equal(cell['came back'], '100')
    const [sent, acked, errors, lost] = cell['sent/acked/errors/lost'].split('/').map(Number)
    assert.equal(sent, acked + errors + lost)
    assert.ok(Number(cell['server back after ms']) >= 300)
    // The dead server refused attempts, as it would have refused some had each been on time.
    const [, refused, alone] = /^(\d+) \((\d+)\)$/.exec(cell['attempts refused (the backoff alone)']).map(Number)
    assert.ok(refused > 0 && alone > 0, cell['attempts refused (the backoff alone)'])
    const [late50, late99] = cell['attempts late p50/p99 ms'].split('/').map(Number)
    assert.ok(late50 >= 0 && late99 >= late50, cell['attempts late p50/p99 ms'])
    // The restarted server's count comes from its /metrics: reconnections only, so at most all 100.
    for (const column of ['busiest 100 ms: client saw open', 'busiest 100 ms: server accepted', 'busiest 100 ms: the backoff alone']) {
      const [, count, share] = /^(\d+) \(([\d.]+)%\)$/.exec(cell[column])
      assert.ok(Number(count) >= 1 && Number(count) <= 100, `${column}: ${cell[column]}`)
      assert.equal(Number(share), Number(count))
    }
  })
})
