// Hostile input against a real `node server.js`: over 100,000 frames on many connections, then
// exact accounting against the server's own counters. Loopback only, seeded, bounded.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import net from 'node:net'
import WebSocket from 'ws'
import { createCodec, formatNames } from '../../lib/codecs/registry.js'
import { loadPayload, resolveTest } from '../../lib/payloads/catalog.js'
import { runScript, startServerProcess } from '../helpers.js'
import { createRandom } from '../../lib/payloads/random.js'

const MAX_PAYLOAD = 256 * 1024
const CONNECTIONS_PER_FORMAT = 10
const FRAMES_PER_CONNECTION = 5100
const WINDOW = 256 // frames outstanding per connection: pipelined, but never buffered without bound

const encoded = async (format, name) => {
  const codec = await createCodec(format, resolveTest(name))
  return Buffer.from(codec.encode(codec.prepare(loadPayload(resolveTest(name)))))
}

/**
 * Frame makers per format: [kind, make(random) -> {data, binary, fragments?}, expected reply].
 * 'ANY' where the bytes may or may not decode (protobuf accepts many byte strings). Text formats
 * (JSON, typed JSON) also get invalid and deeply nested JSON.
 */
async function frameKinds (format) {
  const { binary } = await createCodec(format, resolveTest('medium'))
  const valid = await encoded(format, 'medium')
  const other = await encoded(format, 'large')
  const randomBytes = (random, length) => Buffer.from(Array.from({ length }, () => Math.floor(random() * 256)))
  const nested = Buffer.from('['.repeat(100_000) + ']'.repeat(100_000))
  const common = [
    ['valid', () => ({ data: valid, binary }), 'ACK'],
    ['random binary', (random) => ({ data: randomBytes(random, 1 + Math.floor(random() * 300)), binary: true }), 'ANY'],
    // Text frames must stay valid UTF-8 (invalid UTF-8 is its own case, closed with 1007): JSON is
    // cut at a character boundary and only ASCII bytes get flipped, within 7 bits.
    ['truncated', (random) => ({ data: truncate(valid, random, binary), binary }), 'ANY'],
    ['bit-flipped', (random) => {
      const data = Buffer.from(valid)
      let at = Math.floor(random() * data.length)
      if (!binary) while (data[at] >= 0x80) at = (at + 1) % data.length
      data[at] ^= 1 << Math.floor(random() * (binary ? 8 : 7))
      return { data, binary }
    }, 'ANY'],
    ['another test\'s message', () => ({ data: other, binary }), binary ? 'ANY' : 'ACK'],
    ['fragmented valid', () => ({ data: valid, binary, fragments: 3 }), 'ACK']
  ]
  if (binary) return common
  return [
    ...common,
    ['invalid JSON', (random) => ({ data: Buffer.from(`{"id": ${Math.floor(random() * 100)},`), binary: false }), 'ERR'],
    ['deeply nested JSON', () => ({ data: nested, binary: false }), 'ANY']
  ]
}

function truncate (valid, random, binary) {
  if (binary) return valid.subarray(0, Math.floor(random() * valid.length))
  const text = valid.toString()
  return Buffer.from(text.slice(0, Math.floor(random() * text.length)).replace(/[\ud800-\udbff]$/, ''))
}

/** Sends frames on one connection with a bounded window; checks each reply against what was expected. */
async function fuzzConnection (url, format, seed, tally) {
  const random = createRandom(seed)
  const kinds = await frameKinds(format)
  // Nested JSON is 200 KB and costs real parse time: one in a thousand frames.
  const rare = kinds.filter(([kind]) => kind === 'deeply nested JSON')
  const usual = kinds.filter(([kind]) => kind !== 'deeply nested JSON')
  const ws = new WebSocket(`${url}/?test=medium&format=${format}`, { perMessageDeflate: false, maxPayload: 0 })
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject) })
  const expected = []
  let sent = 0
  let pongs = 0
  ws.on('pong', () => { pongs++ })
  await new Promise((resolve, reject) => {
    const pump = () => {
      while (sent < FRAMES_PER_CONNECTION && expected.length < WINDOW) {
        const choices = rare.length > 0 && random() < 0.001 ? rare : usual
        const [kind, make, reply] = choices[Math.floor(random() * choices.length)]
        const frame = make(random)
        if (frame.fragments) {
          const step = Math.ceil(frame.data.length / frame.fragments)
          for (let at = 0; at < frame.data.length; at += step) {
            ws.send(frame.data.subarray(at, at + step), { binary: frame.binary, fin: at + step >= frame.data.length })
          }
        } else {
          ws.send(frame.data, { binary: frame.binary })
        }
        if (sent % 500 === 0) ws.ping()
        expected.push([kind, reply])
        tally.frames++
        sent++
      }
    }
    ws.on('message', (data) => {
      const [kind, reply] = expected.shift()
      const text = data.toString()
      const got = text === 'ACK' ? 'ACK' : text.startsWith(`ERR ${format} decode failed`) ? 'ERR' : text
      if (got !== 'ACK' && got !== 'ERR') return reject(new Error(`unexpected reply to ${kind}: ${text}`))
      if (reply !== 'ANY' && reply !== got) return reject(new Error(`${kind}: expected ${reply}, got ${text}`))
      tally[got === 'ACK' ? 'acks' : 'errors']++
      if (sent === FRAMES_PER_CONNECTION && expected.length === 0) resolve()
      else pump()
    })
    ws.once('close', (code) => reject(new Error(`closed with ${code} after ${sent} frames`)))
    pump()
  })
  ws.removeAllListeners('close')
  ws.close()
  tally.pongs += pongs
}

/** Opens a connection, sends one frame ws must reject, and resolves with the close code. */
async function closeCode (url, data, binary) {
  const ws = new WebSocket(`${url}/?test=small&format=json`, { perMessageDeflate: false })
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject) })
  ws.send(data, { binary })
  return new Promise((resolve) => ws.once('close', resolve))
}

/** Upgrades by hand, starts a frame and drops the socket before its end. */
async function dropMidFrame (port, random) {
  const socket = net.connect(port, '127.0.0.1')
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write('GET /?test=small&format=protobuf HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
    'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n')
  await new Promise((resolve) => socket.once('data', resolve)) // 101 Switching Protocols
  // FIN + binary, masked, 126 -> 16-bit length 1000, mask key, then only part of the payload.
  const header = Buffer.from([0x82, 0xfe, 0x03, 0xe8, 1, 2, 3, 4])
  socket.write(Buffer.concat([header, Buffer.alloc(Math.floor(random() * 999))]))
  socket.destroy()
}

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
