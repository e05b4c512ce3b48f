import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { decodeHistogram } from '../../lib/histogram.js'
import { assertStartedTogether, runScript, startServerProcess, temporaryDirectory } from '../helpers.js'

const dir = temporaryDirectory('merge')
const file = (name) => path.join(dir, name)
const read = (name) => JSON.parse(fs.readFileSync(file(name), 'utf8'))
const totalCount = (encoded) => decodeHistogram(encoded).totalCount

describe('results that travel', () => {
  let server
  before(async () => { server = await startServerProcess() })
  after(() => server.stop())

  test('several client processes, --out files, one merged report: totals are the sum of the parts', async () => {
    const runs = await Promise.all([['a', 1000], ['b', 1500], ['c', 700]].map(([name, messages]) =>
      runScript('client_protobuf.js', ['3', String(messages), '-i', '4', '--url', server.url, '--out', file(`${name}.json`), '--hdr-out', file(`${name}.hlog`)])))
    for (const run of runs) assert.equal(run.code, 0, run.stderr)
    const parts = ['a', 'b', 'c'].map((name) => read(`${name}.json`))

    const merged = await runScript('bin/merge.js', [file('a.json'), file('b.json'), file('c.json'), '--json', '--out', file('merged.json'), '--assert', 'errors==0'])
    assert.equal(merged.code, 0, merged.stderr)
    const report = JSON.parse(merged.stdout)
    assert.deepEqual(report, read('merged.json'))
    assert.equal(report.mergedFrom, 3)
    assert.deepEqual(report.messages, { sent: 3200, acked: 3200, errors: 0, lost: 0 })
    assert.equal(report.connections, 3)
    assert.equal(report.bytes.written, parts.reduce((sum, p) => sum + p.bytes.written, 0))
    assert.equal(totalCount(report.histogram), 3200, 'histograms added exactly')
    assert.equal(decodeHistogram(report.histogram).maxValue, Math.max(...parts.map((p) => decodeHistogram(p.histogram).maxValue)))
    assert.equal(report.timeSeries.reduce((sum, s) => sum + s.acked, 0), 3200)
    const start = Math.min(...parts.map((p) => p.startedAt))
    const span = Math.max(...parts.map((p) => p.startedAt + p.durationMs)) - start
    assert.ok(Math.abs(report.durationMs - span) < 0.01, `the span of all parts: ${report.durationMs} vs ${span}`)

    const log = fs.readFileSync(file('a.hlog'), 'utf8')
    assert.match(log, /^#\[Histogram log format version 1\.3\]$/m)
    assert.match(log, /^"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"$/m)
    const intervals = log.split('\n').filter((line) => /^\d/.test(line))
    assert.equal(intervals.reduce((sum, line) => sum + totalCount(line.split(',')[3]), 0), 1000, 'the log holds every latency')

    const failing = await runScript('bin/merge.js', [file('a.json'), file('b.json'), '--assert', 'p99<0.001ms', '--assert', 'rate>=1000000000'])
    assert.equal(failing.code, 1)
    assert.match(failing.stderr, /^assertion failed: p99<0\.001ms \(p99 was [\d.]+ ms\)$/m)
    assert.match(failing.stderr, /^assertion failed: rate>=1000000000 \(rate was [\d.]+\)$/m)
  })

  test('merge refuses reports of different formats or tests, and unreadable files, in one line', async () => {
    const other = await runScript('client_json.js', ['3', '10', '--url', server.url, '--out', file('json.json')])
    assert.equal(other.code, 0, other.stderr)
    const mixed = await runScript('bin/merge.js', [file('a.json'), file('json.json')])
    assert.equal(mixed.code, 2)
    assert.equal(mixed.stderr, "cannot merge a format 'json' report with a 'protobuf' one: merge runs of one format and test\n")
    const missing = await runScript('bin/merge.js', [file('nope.json')])
    assert.equal(missing.code, 2)
    assert.match(missing.stderr, /nope\.json: ENOENT\n$/)
  })

  test('--workers 2: two threads, their own connections, one report whose totals are the sum', async () => {
    const run = await runScript('client_json.js', ['3', '3001', '--workers', '2', '-c', '4', '-i', '8', '--url', server.url, '--json'])
    assert.equal(run.code, 0, run.stderr)
    const report = JSON.parse(run.stdout)
    assert.equal(report.workers, 2)
    assert.equal(report.mergedFrom, 2)
    assert.equal(report.connections, 4)
    assert.deepEqual(report.messages, { sent: 3001, acked: 3001, errors: 0, lost: 0 })
    assert.equal(totalCount(report.histogram), 3001)
    // Both threads measured the one process's CPU over nearly the same span: counted once.
    assert.ok(report.cpu.perMessageUs > 0)
    assert.match(report.cpu.process, /^[^:]+:\d+$/)
  })

  test('--start-at: two clients started apart measure together; merge reports how their windows line up', async () => {
    const startAt = new Date(Date.now() + 2500).toISOString()
    // Timer pacing: two clients waiting busily for their due times, beside the server and a CI run's
    // other tests, would oversubscribe 2 cores; the windows, not the pacing, are under test here.
    const first = runScript('client_json.js', ['5', '--rate', '400', '--pacing', 'timer', '--duration', '1s', '-w', '100', '--start-at', startAt, '--url', server.url, '--out', file('s1.json')])
    // The second starts (connects, warms up) later, and still measures from the same instant.
    await new Promise((resolve) => setTimeout(resolve, 500))
    const second = await runScript('client_json.js', ['5', '--rate', '400', '--pacing', 'timer', '--duration', '1s', '-w', '100', '--start-at', startAt, '--url', server.url, '--out', file('s2.json')])
    assert.equal(second.code, 0, second.stderr)
    assert.equal((await first).code, 0)
    const parts = ['s1', 's2'].map((name) => read(`${name}.json`))
    const merged = await runScript('bin/merge.js', [file('s1.json'), file('s2.json'), '--json'])
    assert.equal(merged.code, 0, merged.stderr)
    const { windows } = JSON.parse(merged.stdout)
    // Both from the one instant, never before it; how late a loaded machine wakes them is not
    // bounded here (bench:hosts reports it), so the console's line is the one the windows call for.
    assertStartedTogether(parts, Date.parse(startAt), windows)
    const line = !windows.overlapping
      ? `warning: the parts' measured phases do not overlap (starts ${windows.startSpreadMs} ms apart): they did not load the server together; use --start-at`
      : `measured phases: starts ${windows.startSpreadMs} ms apart, all measuring together for ${windows.overlapMs} ms`
    // (a busy machine may add the generator's own warning line)
    if (windows.startSpreadMs > 0 || !windows.overlapping) assert.ok(merged.stderr.split('\n').includes(line), merged.stderr)
    else assert.doesNotMatch(merged.stderr, /measured phases|do not overlap/)
  })

  test('merge warns when the parts never measured at the same time', async () => {
    for (const name of ['seq1', 'seq2']) {
      const run = await runScript('client_json.js', ['5', '200', '--url', server.url, '--out', file(`${name}.json`)])
      assert.equal(run.code, 0, run.stderr)
    }
    const merged = await runScript('bin/merge.js', [file('seq1.json'), file('seq2.json'), '--json'])
    assert.equal(merged.code, 0)
    assert.equal(JSON.parse(merged.stdout).windows.overlapping, false)
    // (a busy machine may add the generator's own warning line)
    assert.match(merged.stderr, /^warning: the parts' measured phases do not overlap \(starts \d+ ms apart\): they did not load the server together; use --start-at$/m)
  })

  test('--workers 3 alone: one connection per worker by default', async () => {
    const run = await runScript('client_protobuf.js', ['5', '300', '--workers', '3', '--url', server.url, '--json'])
    assert.equal(run.code, 0, run.stderr)
    const report = JSON.parse(run.stdout)
    assert.equal(report.workers, 3)
    assert.equal(report.connections, 3)
    assert.deepEqual(report.messages, { sent: 300, acked: 300, errors: 0, lost: 0 })
  })
})
