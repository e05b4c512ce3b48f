// Process-level: compare's batch client (lib/compare/batch-client.js) forked as lockstep.js forks
// it, driven over IPC against real server processes on loopback: open, connect as one format,
// batches closed and open loop, measured and not, the report, switching format and server between
// generations, and the errors it answers with.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import path from 'node:path'
import { forkNodeScript, startServerProcess } from '../../lib/processes.js'
import { decodeHistogram } from '../../lib/histogram.js'
import { CpuClock } from '../../lib/cpu-time.js'
import { readMetrics } from '../../lib/server/metrics-reader.js'

const REFUSES_15TH = path.resolve('test/fixtures/codecs/json-refuses-15th.js')
const LOAD = { direction: 'up', inflight: 1, connections: 1, compress: false, repeat: false, allowLossy: false }
const SMALL = { key: 'small\nnone', test: 'small', custom: null, profile: 'none' }
const MEDIUM = { key: 'medium\nnone', test: 'medium', custom: null, profile: 'none' }

let server
before(async () => { server = await startServerProcess(['--codec-module', REFUSES_15TH]) })
after(() => server.stop())

/** A batch client process and the parent's side of its IPC: one request, one answer. */
function batchClient () {
  const child = forkNodeScript('lib/compare/batch-client.js')
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk) => { stderr += chunk })
  const exited = once(child, 'exit')
  return {
    pid: child.pid,
    async ask (request) {
      child.send(request)
      const [answer] = await once(child, 'message')
      return answer
    },
    plan: (rows, format = 'json', codecModules = []) => ({ type: 'open', plan: { formats: [format], codecModules, load: LOAD, rows } }),
    /** Opens the rows in one format and connects them to a server: the answers of both. */
    async ready (rows, format = 'json', codecModules = [], url = server.url) {
      const opened = await this.ask(this.plan(rows, format, codecModules))
      return [opened, opened.type === 'ready' ? await this.ask({ type: 'connect', format, url }) : null]
    },
    batch: (row, count, rate, measured) => ({ type: 'batch', key: row.key, count, rate, measured }),
    /** Closes the channel: the client exits by itself, with 0. */
    async end () {
      child.disconnect()
      const [code, signal] = await exited
      return { code, signal, stderr }
    }
  }
}

test('closed and open-loop batches, measured or not: the report accounts for every measured message, latency from the closed ones', async () => {
  const client = batchClient()
  try {
    const [opened, connected] = await client.ready([SMALL, MEDIUM])
    assert.deepEqual([opened.type, opened.pid, connected], ['ready', client.pid, { type: 'connected', format: 'json' }])
    // The largest mean message of its rows: medium's JSON, some 800 bytes (small's is 22).
    assert.ok(opened.bytes > 500 && opened.bytes < 1500, `${opened.bytes} bytes`)
    const answers = []
    // A warm-up batch, two measured closed-loop batches (30 and 40), a warm-up and a measured batch at 500/s.
    for (const [count, rate, measured] of [[10, null, false], [30, null, true], [40, null, true], [20, 500, false], [25, 500, true]]) {
      const answer = await client.ask(client.batch(SMALL, count, rate, measured))
      assert.deepEqual(Object.keys(answer), ['type', 'sent', 'durationMs', 'cpuUs'])
      assert.equal(answer.type, 'batch')
      assert.equal(answer.sent, count, 'a batch sends what it is asked to')
      assert.ok(answer.durationMs > 0)
      if (!measured) assert.equal(answer.cpuUs, 0, 'an unrecorded batch has no CPU figure')
      else assert.ok(Number.isFinite(answer.cpuUs) && answer.cpuUs >= 0)
      answers.push(answer)
    }
    const { type, reports } = await client.ask({ type: 'report' })
    assert.equal(type, 'report')
    assert.deepEqual(Object.keys(reports), [SMALL.key, MEDIUM.key])
    assert.equal(reports[MEDIUM.key], null, 'a row with no measured batch has no report')
    const report = reports[SMALL.key]
    // Every measured message, closed and open loop (the closed batches' unrecorded lead-in messages are not).
    const { sent, acked, errors, lost } = report.messages
    assert.equal(sent, acked + errors + lost)
    assert.equal(sent, 30 + 40 + 25)
    assert.deepEqual(report.messages, { sent: 95, acked: 95, errors: 0, lost: 0 })
    // Latency only from the measured closed-loop batches.
    assert.equal(decodeHistogram(report.histogram).totalCount, 30 + 40)
    assert.equal(report.batches, 2)
    assert.ok(report.latencyMs.p50 > 0 && report.latencyMs.p99 >= report.latencyMs.p50)
    // msgs/s over the closed batches' own time, not the span with the others in it.
    assert.ok(report.rate > 0)
    // (durationMs is rounded to µs in the report, the rate worked out before from the exact time: within 0.5%.)
    const expected = 70 * 1000 / report.durationMs
    assert.ok(Math.abs(report.rate - expected) < expected * 0.005, `${report.rate} msgs/s for 70 in ${report.durationMs} ms`)
    // CPU and codec time from the open-loop batches, per message.
    assert.ok(report.cpu.perMessageUs > 0, JSON.stringify(report.cpu))
    assert.equal(report.cpu.perMessageUs, Math.round((report.cpu.userUs + report.cpu.systemUs) / 25 * 100) / 100, 'over the 25 open-loop messages')
    assert.equal(report.cpu.userUs + report.cpu.systemUs, answers[4].cpuUs, 'the measured open-loop batch\'s CPU, as it answered')
    assert.ok(report.codec.clientUs > 0, JSON.stringify(report.codec))
    assert.deepEqual([report.format, report.test, report.network.profile, report.direction], ['json', 'small', 'none', 'up'])
    assert.ok(report.bytes.written > 0 && report.bytes.payloadPerMessage > 0)
    assert.equal(report.ok, true)
    assert.equal(report.failure, null)
    // The server counted every message: the warm-up batches' and, before each measured closed-loop
    // batch, a lead-in of a tenth of it (at most 5) that the client does not record.
    const counted = (await readMetrics(server.url)).value('wsbench_messages_total', { format: 'json', test: 'small' })
    assert.equal(counted, 10 + (3 + 30) + (4 + 40) + 20 + 25)
    assert.deepEqual(await client.ask({ type: 'close' }), { type: 'closed' })
  } finally {
    const { code, stderr } = await client.end()
    assert.equal(code, 0, stderr)
    assert.equal(stderr, '')
  }
})

test('what it cannot do it answers with {type: error} and one line, and keeps answering', async () => {
  const client = batchClient()
  const oneLine = (answer, pattern) => {
    assert.equal(answer.type, 'error')
    assert.match(answer.message, pattern)
    assert.doesNotMatch(answer.message, /\n|\bat .*:\d+:\d+/, 'one line, no stack trace')
  }
  try {
    oneLine(await client.ask(client.plan([SMALL], 'no-such-format')), /^unknown format 'no-such-format': expected one of .*json.*, or add it with --codec-module <file\.js>$/)
    oneLine(await client.ask(client.plan([{ ...SMALL, test: 'no-such-test' }])), /^unknown test 'no-such-test': expected one of /)
    oneLine(await client.ask(client.plan([SMALL], 'json', ['/nowhere/codec.js'])), /^--codec-module \/nowhere\/codec\.js: no such file$/)
    oneLine(await client.ask({ type: 'nope' }), /^unknown request nope$/)
    oneLine(await client.ask({ type: 'connect', format: 'protobuf', url: server.url }), /^format protobuf was not opened$/)
    oneLine(await client.ask(client.batch(SMALL, 5, null, true)), /^no row "small\\nnone" is connected$/)
    // Still there, and still able to open a row and run it.
    assert.deepEqual((await client.ready([SMALL])).map((answer) => answer.type), ['ready', 'connected'])
    assert.equal((await client.ask(client.batch(SMALL, 5, null, true))).sent, 5)
  } finally {
    const { code, stderr } = await client.end()
    assert.equal(code, 0, stderr)
  }
})

test('a message the server refuses: counted as an error in the accounting, its reply kept', async () => {
  const client = batchClient()
  try {
    const row = { ...SMALL }
    assert.deepEqual((await client.ready([row], 'json-refuses-15th', [REFUSES_15TH])).map((answer) => answer.type), ['ready', 'connected'])
    // Batches of 10 with a lead-in of 1: the server decodes 11 frames per batch, the 15th in the second.
    for (let batch = 0; batch < 3; batch++) await client.ask(client.batch(row, 10, null, true))
    const report = (await client.ask({ type: 'report' })).reports[row.key]
    assert.deepEqual(report.messages, { sent: 30, acked: 29, errors: 1, lost: 0 })
    assert.equal(report.ok, false, 'a run with an error is not ok')
    assert.match(report.errorReplies[0], /^ERR json-refuses-15th decode failed for test small: the 15th frame is refused$/)
  } finally {
    await client.end()
  }
})

test('error replies are kept once each, never more of them than errors', async () => {
  const client = batchClient()
  try {
    // A fresh server: its own count of decoded frames.
    const own = await startServerProcess(['--codec-module', REFUSES_15TH])
    try {
      const row = { ...SMALL }
      const answers = await client.ready([row], 'json-refuses-15th', [REFUSES_15TH], own.url)
      assert.deepEqual(answers.map((answer) => answer.type), ['ready', 'connected'])
      for (let batch = 0; batch < 3; batch++) await client.ask(client.batch(row, 10, null, true))
      const report = (await client.ask({ type: 'report' })).reports[row.key]
      assert.equal(report.messages.errors, 1)
      assert.equal(report.errorReplies.length, 1, JSON.stringify(report.errorReplies))
    } finally {
      await own.stop()
    }
  } finally {
    await client.end()
  }
})

test('one process, two generations: json on one server, then protobuf on another, each report only its own generation', async () => {
  const client = batchClient()
  const other = await startServerProcess()
  try {
    const opened = await client.ask({ type: 'open', plan: { formats: ['json', 'protobuf'], codecModules: [], load: LOAD, rows: [SMALL] } })
    assert.equal(opened.type, 'ready')
    const generation = async (format, url, count) => {
      assert.deepEqual(await client.ask({ type: 'connect', format, url }), { type: 'connected', format })
      await client.ask(client.batch(SMALL, count, null, true))
      return (await client.ask({ type: 'report' })).reports[SMALL.key]
    }
    const first = await generation('json', server.url, 30)
    const second = await generation('protobuf', other.url, 40)
    assert.equal(first.format, 'json')
    assert.deepEqual(first.messages, { sent: 30, acked: 30, errors: 0, lost: 0 })
    assert.equal(second.format, 'protobuf')
    assert.deepEqual(second.messages, { sent: 40, acked: 40, errors: 0, lost: 0 }, 'nothing of the first generation')
    assert.equal(decodeHistogram(second.histogram).totalCount, 40)
    // Each server saw its own format only: 30 + a lead-in of 3, 40 + 4.
    const counted = async (url, format) => (await readMetrics(url)).value('wsbench_messages_total', { format, test: 'small' }) ?? 0
    assert.deepEqual([await counted(other.url, 'protobuf'), await counted(other.url, 'json')], [44, 0])
    assert.ok(await counted(server.url, 'json') >= 33)
  } finally {
    await client.end()
    await other.stop()
  }
})

test('warm: a row sent closed loop, unrecorded, in growing batches until the time is up and the client has spent its CPU on it', { skip: process.platform !== 'linux' && 'reads /proc' }, async () => {
  const client = batchClient()
  try {
    assert.deepEqual((await client.ready([SMALL])).map((answer) => answer.type), ['ready', 'connected'])
    const clock = new CpuClock(client.pid)
    for (const [ms, cpuMs] of [[200, 0], [20, 150]]) {
      const started = performance.now()
      const cpuBefore = clock.read()
      assert.deepEqual(await client.ask({ type: 'warm', key: SMALL.key, ms, cpuMs, maxMs: 60_000 }), { type: 'warmed' })
      assert.ok(performance.now() - started >= ms, `at least ${ms} ms`)
      assert.ok((clock.read() - cpuBefore) / 1e6 >= cpuMs, `at least ${cpuMs} ms of the client's CPU`)
    }
    // A CPU floor out of reach (a slow network's messages cost little CPU) ends at maxMs, not later.
    const started = performance.now()
    await client.ask({ type: 'warm', key: SMALL.key, ms: 20, cpuMs: 60_000, maxMs: 300 })
    const took = performance.now() - started
    assert.ok(took >= 300 && took < 5000, `${took} ms`)
    const report = (await client.ask({ type: 'report' })).reports[SMALL.key]
    assert.equal(report, null, 'nothing recorded')
  } finally {
    await client.end()
  }
})
