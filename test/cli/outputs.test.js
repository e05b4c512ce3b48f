import { test } from 'node:test'
import assert from 'node:assert/strict'
import { UsageError } from '../../lib/errors.js'
import { defaultRunId, parseOutputs, parseTags } from '../../lib/cli/outputs.js'
import { runScript } from '../helpers.js'

const args = (out, tag = [], more = {}) => ({ out, tag, outInterval: '5s', outHistograms: 'buckets', ...more })

test('--out: a file, json=FILE, or streams by kind; repeatable', () => {
  const outputs = parseOutputs(args(['report.json', 'prometheus-rw=http://p:9090/api/v1/write', 'otlp=https://c:4318/v1/metrics']))
  assert.equal(outputs.file, 'report.json')
  assert.deepEqual(outputs.streams.map(({ kind, url }) => [kind, url.href]),
    [['prometheus-rw', 'http://p:9090/api/v1/write'], ['otlp', 'https://c:4318/v1/metrics']])
  assert.equal(outputs.intervalMs, 5000)
  assert.equal(outputs.native, false)
  assert.equal(parseOutputs(args(['json=a=b.json'])).file, 'a=b.json')
  assert.equal(parseOutputs(args([])).file, undefined)
})

test('--out: an unknown kind, a URL that does not parse or is not http, two files: one line each', () => {
  assert.throws(() => parseOutputs(args(['influxdb=http://x'])), (err) => err instanceof UsageError && /no output kind 'influxdb'/.test(err.message))
  assert.throws(() => parseOutputs(args(['prometheus-rw=not a url'])), /prometheus-rw=not a url: not a URL/)
  assert.throws(() => parseOutputs(args(['otlp=ftp://x/'])), /give an http:\/\/ or https:\/\/ URL/)
  assert.throws(() => parseOutputs(args(['a.json', 'b.json'])), /one report file, not 2/)
  assert.throws(() => parseOutputs(args([], [], { outInterval: '10ms' })), /at least 100ms/)
})

test('--tag: key=value, no label of the run\'s own, each once; testid from --start-at or random', () => {
  assert.deepEqual(parseTags(['testid=run-7', 'team=x']), { testid: 'run-7', team: 'x' })
  assert.equal(defaultRunId(Date.UTC(2030, 0, 1)), '2030-01-01T00:00:00.000Z')
  assert.match(defaultRunId(), /^[0-9a-f]{8}$/)
  assert.deepEqual(parseOutputs(args([], ['team=x']), { startAt: Date.UTC(2030, 0, 1) }).tags, { team: 'x', testid: '2030-01-01T00:00:00.000Z' })
  assert.deepEqual(parseOutputs(args([], ['team=x']), { runId: false }).tags, { team: 'x' })
  assert.throws(() => parseTags(['novalue']), /give key=value/)
  assert.throws(() => parseTags(['1x=a']), /give key=value/)
  assert.throws(() => parseTags(['host=a']), /'host' is a label of its own/)
  assert.throws(() => parseTags(['__name__=a']), /label of its own/)
  assert.throws(() => parseTags(['a=1', 'a=2']), /--tag a given twice/)
})

test('BENCH_OUT adds its values, space-separated, to the command line\'s (a manifest\'s optional stream)', () => {
  process.env.BENCH_OUT = ' prometheus-rw=http://p:9090/api/v1/write  otlp=http://c:4318/v1/metrics '
  try {
    const outputs = parseOutputs(args(['report.json']))
    assert.equal(outputs.file, 'report.json')
    assert.deepEqual(outputs.streams.map(({ kind }) => kind), ['prometheus-rw', 'otlp'])
  } finally {
    delete process.env.BENCH_OUT
  }
})

test('a client given a bad --out or --tag says so in one line and exits 2, before connecting', async () => {
  for (const bad of [['--out', 'graphite=http://x'], ['--out', 'otlp=::'], ['--tag', 'oops']]) {
    const run = await runScript('client_json.js', ['3', '10', '--url', 'ws://127.0.0.1:9', ...bad])
    assert.equal(run.code, 2, run.stderr)
    assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr)
    assert.doesNotMatch(run.stderr, /at .*\.js/)
  }
})
