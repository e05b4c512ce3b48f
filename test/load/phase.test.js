// The open loop's pacing, on real connections to a real ws server, with the pacer replaced by a
// hand-driven one: the test decides when each wake-up comes (early, on time, late), so what the
// phase asks for and what it sends can be checked without waiting on a clock's precision.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { performance } from 'node:perf_hooks'
import { WebSocketServer } from 'ws'
import { openRun, prepareMessages } from '../../lib/load/engine.js'
import { createCodec } from '../../lib/codecs/registry.js'
import { loadPayload, resolveTest } from '../../lib/payloads/catalog.js'

const LIMIT = { timeout: 10_000 }
const small = resolveTest('5')
const codec = await createCodec('json', small)

/** A pacer the test drives: it keeps the last wake-up asked for, and fires it when told. */
class HandPacer {
  constructor () {
    this.name = 'precise'
    this.reason = null
    this.asked = []
    this.callback = null
    this.next = null
  }

  wakeAt (at, callback) {
    this.asked.push(at)
    this.callback = callback
    this.next?.()
  }

  cancel () { this.callback = null }

  usage () { return { waitedMs: 0, threadMs: 0 } }

  async close () { this.cancel() }

  /** Resolves at the next wakeAt. */
  nextRequest () {
    return new Promise((resolve) => { this.next = resolve })
  }

  /** Fires the pending wake-up once the real clock has reached `at`. */
  async fireAt (at) {
    while (performance.now() < at) await new Promise(setImmediate)
    const callback = this.callback
    this.callback = null
    callback()
  }
}

/**
 * An open-loop measured phase on real connections to a server that acknowledges each message, its
 * pacer driven by hand; resolves once the phase has asked for its first wake-up.
 * @returns {Promise<{run: object, pacer: HandPacer, done: Promise<object>, start: number}>} done: the
 *   phase's result; start: when it started (message k is due k / rate later)
 */
async function startPhase (t, spec) {
  const { run, pacer } = await openAcked(t, { inflight: 100 })
  const requested = pacer.nextRequest()
  const done = run.runPhase({ ...spec, recording: true })
  await requested
  return { run, pacer, done, start: run.phase.startedAt }
}

async function openAcked (t, settings) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 })
  await once(wss, 'listening')
  wss.on('connection', (ws) => ws.on('message', () => ws.send('ACK')))
  const run = await openRun({
    url: `ws://127.0.0.1:${wss.address().port}`, test: small, codec, prepared: prepareMessages(codec, [loadPayload(small)], 'test small'), ...settings
  })
  t.after(async () => {
    await run.close()
    wss.close()
  })
  const pacer = new HandPacer()
  run.traffic.pacer = pacer
  return { run, pacer }
}

test('each wake-up is asked for at the next message\'s due time; an early one sends nothing and asks again', LIMIT, async (t) => {
  const { run, pacer, done, start } = await startPhase(t, { rate: 20, count: 3 })
  // Message 0 went at the start; message 1 is due 50 ms later (time enough to ask, on a busy machine too).
  assert.deepEqual(pacer.asked, [start + 50])
  let again = pacer.nextRequest()
  await pacer.fireAt(start + 25) // early
  await again
  assert.deepEqual(pacer.asked, [start + 50, start + 50])
  assert.equal(run.phase.sent, 1)
  again = pacer.nextRequest()
  await pacer.fireAt(start + 50)
  await again
  assert.deepEqual(pacer.asked.slice(2), [start + 100])
  await pacer.fireAt(start + 100)
  const result = await done
  assert.deepEqual(result.messages, { sent: 3, acked: 3, errors: 0, lost: 0 })
  assert.equal(result.target.pacing, 'precise')
})

test('a late wake-up sends every message due by then, each stamped with its own due time and send lag', LIMIT, async (t) => {
  const { pacer, done, start } = await startPhase(t, { rate: 20, count: 4 })
  // Messages 1-3 are due at 50, 100 and 150 ms: all three go at 175 ms, late by about 125, 75 and 25 ms.
  await pacer.fireAt(start + 175)
  const result = await done
  assert.deepEqual(result.messages, { sent: 4, acked: 4, errors: 0, lost: 0 })
  assert.deepEqual(pacer.asked, [start + 50])
  const lags = result.sendLagHistogram
  assert.equal(lags.totalCount, 4)
  assert.ok(lags.maxValue >= 125_000, `the first of them waited from 50 ms to 175 ms: ${lags.maxValue} µs`)
  // Latency counts from each due time: the late ones carry their lateness, the actual send does not.
  // Summed over the four, the two differ by the lateness, about 125 + 75 + 25 ms, however slow a reply.
  const total = (histogram) => histogram.mean * histogram.totalCount
  assert.ok(total(result.histogram) - total(result.uncorrectedHistogram) >= 200_000,
    `${total(result.histogram)} µs from the due times, ${total(result.uncorrectedHistogram)} µs from the sends`)
})

test('recorded phases on one run each count their own replies, with the run\'s recorder reused', LIMIT, async (t) => {
  const { run } = await openAcked(t, { inflight: 1 })
  const first = await run.runPhase({ count: 30, recording: true })
  assert.equal(first.histogram.totalCount, 30)
  assert.equal(first.timeSeries.length, 1, 'the last, partial second is kept')
  const recorder = run.phase.recorder
  const second = await run.runPhase({ count: 20, recording: true, series: false })
  assert.equal(run.phase.recorder, recorder, 'no new recorder, no new histograms')
  assert.equal(second.histogram.totalCount, 20, 'none of the first phase\'s replies')
  assert.deepEqual(second.timeSeries, [], 'no series asked for: no second encoded')
  assert.deepEqual(second.messages, { sent: 20, acked: 20, errors: 0, lost: 0 })
})

/**
 * The writes a socket hands to the kernel: each call of its stream's _write or _writev, with the
 * bytes it carries (the real socket's own methods, counted on the way through).
 */
function countWrites (socket) {
  const writes = []
  const write = socket._write.bind(socket)
  const writev = socket._writev.bind(socket)
  socket._write = (chunk, encoding, callback) => {
    writes.push(chunk.length)
    return write(chunk, encoding, callback)
  }
  socket._writev = (chunks, callback) => {
    writes.push(chunks.reduce((sum, { chunk }) => sum + chunk.length, 0))
    return writev(chunks, callback)
  }
  return writes
}

for (const cork of [true, false]) {
  test(`${cork ? 'with' : 'without'} cork, the messages due in one turn go out in ${cork ? 'one write' : 'a write each'}`, LIMIT, async (t) => {
    const { run, pacer } = await openAcked(t, { inflight: 100, cork })
    const writes = countWrites(run.channels[0].socket)
    const requested = pacer.nextRequest()
    const done = run.runPhase({ rate: 20, count: 4, recording: true })
    await requested
    // Message 0 went at the start, alone; 1-3 are due by 175 ms and go in that one turn.
    await pacer.fireAt(run.phase.startedAt + 175)
    const result = await done
    assert.deepEqual(result.messages, { sent: 4, acked: 4, errors: 0, lost: 0 })
    assert.deepEqual(writes, cork ? [writes[0], 3 * writes[0]] : [writes[0], writes[0], writes[0], writes[0]])
  })
}
