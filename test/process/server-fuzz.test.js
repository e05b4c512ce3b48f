// Hostile input against a real `node server.js`: over 100,000 frames on many connections, then
// exact accounting against the server's own counters. Loopback only, seeded, bounded.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { formatNames } from '../../lib/codecs/registry.js'
import { runScript, startServerProcess } from '../helpers.js'
import { createRandom } from '../../lib/payloads/random.js'
import { MAX_PAYLOAD, closeCode, dropMidFrame, fuzzConnection } from '../fuzz.js'

const CONNECTIONS_PER_FORMAT = 10

test('fuzz: 100,000+ hostile frames on many connections, in every format; the server stays up, answers each, and counts exactly', { timeout: 180_000 }, async () => {
  const server = await startServerProcess(['--max-payload', String(MAX_PAYLOAD)])
  const port = Number(new URL(server.url).port)
  const tally = { frames: 0, acks: 0, errors: 0, pongs: 0 }
  try {
    const rssAtStart = Number(/rss (\d+) MB/.exec(server.output())[1])
    const duringFuzz = runScript('client_protobuf.js', ['3', '2000', '--url', server.url, '--json'])
    const fuzzers = []
    for (let i = 0; i < CONNECTIONS_PER_FORMAT; i++) {
      fuzzers.push(fuzzConnection(server.url, 'json', 1000 + i, tally), fuzzConnection(server.url, 'protobuf', 2000 + i, tally))
    }
    // Every other codec's decoder meets the same frames on one connection of its own.
    for (const [i, format] of formatNames().filter((f) => f !== 'json' && f !== 'protobuf').entries()) fuzzers.push(fuzzConnection(server.url, format, 3000 + i, tally))
    const random = createRandom(7)
    const closeCodes = []
    for (let i = 0; i < 50; i++) {
      closeCodes.push(await closeCode(server.url, Buffer.from([0x22, 0xc3 + (i % 10), 0x28, 0x22]), false)) // invalid UTF-8 text
      closeCodes.push(await closeCode(server.url, Buffer.alloc(MAX_PAYLOAD + 1 + i, 0x20), false)) // over maxPayload
      await dropMidFrame(port, random)
    }
    for (const outcome of await Promise.allSettled(fuzzers)) if (outcome.status === 'rejected') throw outcome.reason
    assert.deepEqual([...new Set(closeCodes)].sort(), [1007, 1009])
    assert.equal(closeCodes.filter((code) => code === 1007).length, 50)

    const during = await duringFuzz
    assert.equal(during.code, 0, during.stderr)
    assert.deepEqual(JSON.parse(during.stdout).messages, { sent: 2000, acked: 2000, errors: 0, lost: 0 })
    const after = await runScript('client_json.js', ['3', '500', '--url', server.url, '--json'])
    assert.equal(after.code, 0, after.stderr)

    assert.ok(tally.frames >= 100_000, `${tally.frames} frames`)
    assert.equal(tally.acks + tally.errors, tally.frames, 'one reply per frame')
    assert.ok(tally.pongs > 0)
    assert.ok(tally.errors > 1000, `${tally.errors} error replies`)

    assert.equal(await server.stop('SIGTERM'), 0, 'alive until asked to stop, then a clean exit')
    const final = /stopped on SIGTERM .*: (\d+) connections served, ([\d,]+) messages, (\d+) decode errors, (\d+) protocol errors, 0 dropped connections, \d+ refused upgrades, 0 unauthorized, 0 refused schemas, rss (\d+) MB \(peak (\d+) MB\)/.exec(server.output())
    assert.ok(final, server.output())
    const [, , messages, decodeErrors, protocolErrors, rss, peak] = final.map((n) => Number(String(n).replaceAll(',', '')))
    assert.equal(messages, tally.acks + 2000 + 500, 'server ACK count = ours + the two normal runs')
    assert.equal(decodeErrors, tally.errors)
    assert.equal(protocolErrors, 100, 'one per 1007 and 1009 close')
    assert.ok(peak < 400, `peak RSS ${peak} MB`)
    process.stderr.write(`# fuzz: ${tally.frames} frames (${tally.acks} ACK, ${tally.errors} ERR), 150 more connections closed or dropped; server rss ${rssAtStart} MB at start, ${rss} MB after, peak ${peak} MB\n`)
  } finally {
    await server.stop()
  }
})
