// Hostile input against a real `node server.js`: over 100,000 frames on many connections, then
// exact accounting against the server's own counters. Loopback only, seeded, bounded.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { formatNames } from '../../lib/codecs/registry.js'
import { startServerProcess } from '../helpers.js'
import { MAX_PAYLOAD, fuzzConnection, fuzzServer } from '../fuzz.js'

/** One connection of hostile frames in a format, its own tally. */
async function fuzzOne (url, format, seed) {
  const tally = { frames: 0, acks: 0, errors: 0, pongs: 0 }
  await fuzzConnection(url, format, seed, tally)
  return tally
}

test('fuzz: 100,000+ hostile frames on many connections, in every format; the server stays up, answers each, and counts exactly', { timeout: 180_000 }, async () => {
  const server = await startServerProcess(['--max-payload', String(MAX_PAYLOAD)])
  try {
    const rssAtStart = Number(/rss (\d+) MB/.exec(server.output())[1])
    // Every other codec's decoder meets the same frames on one connection of its own.
    const others = formatNames().filter((f) => f !== 'json' && f !== 'protobuf')
    const [main, rest] = await Promise.all([
      fuzzServer(server.url, { formats: ['json', 'protobuf'], connections: 10, closes: 50, seed: 1000 }),
      Promise.all(others.map((format, i) => fuzzOne(server.url, format, 3000 + i)))
    ])
    const tally = [main, ...rest].reduce((sum, part) => ({
      frames: sum.frames + part.frames, acks: sum.acks + part.acks, errors: sum.errors + part.errors, pongs: sum.pongs + part.pongs
    }))
    assert.ok(tally.frames >= 100_000, `${tally.frames} frames`)
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
