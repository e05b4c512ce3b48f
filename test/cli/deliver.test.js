import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import hdr from 'hdr-histogram-js'
import { UsageError } from '../../lib/errors.js'
import { startServer } from '../../lib/server/server.js'
import { runScript } from '../helpers.js'
import { deliver } from '../../lib/cli/deliver.js'

// deliver prints to process.stdout and process.stderr: their string writes are captured while it
// runs and both are restored in finally. Buffers pass through (node --test's own reporter protocol).
// A rejection is returned as error, beside what was printed before it.
async function captured (run) {
  const out = { stdout: '', stderr: '' }
  const originals = { stdout: process.stdout.write, stderr: process.stderr.write }
  for (const name of ['stdout', 'stderr']) {
    process[name].write = function (chunk, ...rest) {
      if (typeof chunk !== 'string') return originals[name].call(this, chunk, ...rest)
      out[name] += chunk
      return true
    }
  }
  try {
    out.result = await run()
  } catch (err) {
    out.error = err
  } finally {
    process.stdout.write = originals.stdout
    process.stderr.write = originals.stderr
  }
  return out
}

const options = (extra) => ({ json: false, assert: [], ...extra })

describe('deliver', () => {
  let report
  let dir
  before(async () => {
    // A real report, as `client_json.js --json` prints it against a real server.
    const server = await startServer({ port: 0 })
    try {
      const { code, stdout, stderr } = await runScript('client_json.js', ['5', '50', '--url', server.url, '--json'])
      assert.equal(code, 0, stderr)
      report = JSON.parse(stdout)
    } finally {
      await server.close()
    }
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'deliver-'))
  })
  after(() => fs.rmSync(dir, { recursive: true, force: true }))

  test('--json prints the report as one line of JSON and exits 0 for a clean run', async () => {
    const { result, stdout, stderr } = await captured(() => deliver(report, options({ json: true })))
    assert.equal(result, 0)
    assert.equal(stdout, `${JSON.stringify(report)}\n`)
    assert.equal(stderr, '')
  })

  test('without --json prints the human report', async () => {
    const { result, stdout, stderr } = await captured(() => deliver(report, options()))
    assert.equal(result, 0)
    const lines = stdout.trimEnd().split('\n')
    assert.match(lines[0], /^json · test 5 small · up · 1 connection\(s\) × 1 in flight · network: none \(no shaping\)$/)
    assert.equal(lines[1], 'messages  sent 50  acked 50  errors 0  lost 0')
    assert.match(stdout, /^latency {3}min \d+\.\d{3} {2}mean /m)
    assert.ok(stdout.endsWith('\n'))
    assert.equal(stderr, '')
  })

  test('--out writes the report as indented JSON; --hdr-out an interval log holding every reply', async () => {
    const out = path.join(dir, 'report.json')
    const hdrOut = path.join(dir, 'report.hlog')
    const { result } = await captured(() => deliver(report, options({ json: true, out, hdrOut })))
    assert.equal(result, 0)
    const written = fs.readFileSync(out, 'utf8')
    assert.equal(written, `${JSON.stringify(report, null, 2)}\n`)
    const log = fs.readFileSync(hdrOut, 'utf8')
    assert.match(log, /^#\[Histogram log format version 1\.3\]\n/)
    assert.match(log, /^#\[StartTime: /m)
    const reader = new hdr.HistogramLogReader(log)
    let total = 0
    for (let histogram; (histogram = reader.nextIntervalHistogram());) total += histogram.totalCount
    assert.equal(total, report.messages.acked)
  })

  test('thresholds that hold exit 0; a violated one exits 1 with one line naming the actual value', async () => {
    const held = await captured(() => deliver(report, options({ json: true, assert: ['sent==50', 'errors==0', 'p99<60s'] })))
    assert.equal(held.result, 0)
    assert.equal(held.stderr, '')
    const violated = await captured(() => deliver(report, options({ json: true, assert: ['acked==50', 'p50<0ms', 'sent>50'] })))
    assert.equal(violated.result, 1)
    assert.equal(violated.stderr,
      `assertion failed: p50<0ms (p50 was ${report.latencyMs.p50} ms)\nassertion failed: sent>50 (sent was 50)\n`)
    assert.equal(violated.stdout, `${JSON.stringify(report)}\n`, 'the report is printed all the same')
  })

  test('a failed run exits 1 and says why on stderr, after printing the report', async () => {
    const failed = { ...report, ok: false, failure: 'connection refused by 127.0.0.1:1' }
    const { result, stdout, stderr } = await captured(() => deliver(failed, options({ json: true })))
    assert.equal(result, 1)
    assert.equal(stdout, `${JSON.stringify(failed)}\n`)
    assert.equal(stderr, 'error: connection refused by 127.0.0.1:1\n')
  })

  test('a bad threshold fails before any file is written or anything printed', async () => {
    const out = path.join(dir, 'never.json')
    const { error, stdout, stderr } = await captured(() => deliver(report, options({ out, assert: ['p99 < soon'] })))
    assert.ok(error instanceof UsageError)
    assert.match(error.message, /^--assert 'p99 < soon': expected <metric><op><number>\[unit\] with metric p50\|/)
    assert.equal(fs.existsSync(out), false)
    assert.equal(stdout + stderr, '')
  })

  test('an --out that cannot be written is a UsageError naming the file and the reason', async () => {
    const out = path.join(dir, 'missing-dir', 'report.json')
    const { error, stdout } = await captured(() => deliver(report, options({ out })))
    assert.ok(error instanceof UsageError)
    assert.equal(error.message, `cannot write ${out}: ENOENT`)
    assert.equal(stdout, '', 'nothing printed when a file asked for cannot be written')
  })
})
