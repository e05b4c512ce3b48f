// Hostile frames for a server under test (test/process/server-fuzz.test.js against node server.js,
// go-server.test.js against the Go server): seeded frame makers per format with the reply each
// must get, a pipelined connection that sends them and checks every reply, and the frames a
// WebSocket server must close on.
import assert from 'node:assert/strict'
import net from 'node:net'
import WebSocket from 'ws'
import { createCodec } from '../lib/codecs/registry.js'
import { loadPayload, resolveTest } from '../lib/payloads/catalog.js'
import { createRandom } from '../lib/payloads/random.js'
import { runScript } from './helpers.js'

export const MAX_PAYLOAD = 256 * 1024
export const FRAMES_PER_CONNECTION = 5100
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
async function frameKinds (format, { typedJson }) {
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
    // JSON.parse takes any JSON; a server that decodes into its test's types (Go's structs) may not.
    ['another test\'s message', () => ({ data: other, binary }), binary || typedJson ? 'ANY' : 'ACK'],
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

/**
 * Sends frames on one connection with a bounded window; checks each reply against what was expected.
 * @param {string} url the server
 * @param {string} format
 * @param {number} seed
 * @param {{frames: number, acks: number, errors: number, pongs: number}} tally added to
 * @param {{typedJson?: boolean}} [server] typedJson: JSON is decoded into the test's types
 */
export async function fuzzConnection (url, format, seed, tally, { typedJson = false } = {}) {
  const random = createRandom(seed)
  const kinds = await frameKinds(format, { typedJson })
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
export async function closeCode (url, data, binary) {
  const ws = new WebSocket(`${url}/?test=small&format=json`, { perMessageDeflate: false })
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject) })
  ws.send(data, { binary })
  return new Promise((resolve) => ws.once('close', resolve))
}

/** Upgrades by hand, starts a frame and drops the socket before its end. */
export async function dropMidFrame (port, random) {
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

/**
 * The whole battery against a server started with --max-payload MAX_PAYLOAD: pipelined hostile
 * frames on `connections` connections per format, and beside them `closes` connections each of
 * invalid UTF-8 text and of a message over the limit, and as many raw sockets dropped mid-frame;
 * a 2,000-message protobuf client runs during it and a 500-message JSON one after. Checks what
 * every server owes: one reply per frame, 1007 and 1009, every client message acknowledged.
 * @param {string} url the server
 * @param {{formats: string[], connections: number, closes: number, seed: number, typedJson?: boolean}} plan
 * @returns {Promise<{frames: number, acks: number, errors: number, pongs: number}>} the tally: the server's counters must agree
 */
export async function fuzzServer (url, { formats, connections, closes, seed, typedJson = false }) {
  const tally = { frames: 0, acks: 0, errors: 0, pongs: 0 }
  const duringFuzz = runScript('client_protobuf.js', ['3', '2000', '--url', url, '--json'])
  const fuzzers = formats.flatMap((format, f) => Array.from({ length: connections },
    (_, i) => fuzzConnection(url, format, seed + 100 * f + i, tally, { typedJson })))
  const random = createRandom(seed)
  const closeCodes = []
  for (let i = 0; i < closes; i++) {
    closeCodes.push(await closeCode(url, Buffer.from([0x22, 0xc3 + (i % 10), 0x28, 0x22]), false)) // invalid UTF-8 text
    closeCodes.push(await closeCode(url, Buffer.alloc(MAX_PAYLOAD + 1 + i, 0x20), false)) // over --max-payload
    await dropMidFrame(Number(new URL(url).port), random)
  }
  for (const outcome of await Promise.allSettled(fuzzers)) if (outcome.status === 'rejected') throw outcome.reason
  assert.deepEqual(closeCodes.filter((_, i) => i % 2 === 0), Array(closes).fill(1007), 'invalid UTF-8')
  assert.deepEqual(closeCodes.filter((_, i) => i % 2 === 1), Array(closes).fill(1009), 'over --max-payload')
  const during = await duringFuzz
  assert.equal(during.code, 0, during.stderr)
  assert.deepEqual(JSON.parse(during.stdout).messages, { sent: 2000, acked: 2000, errors: 0, lost: 0 })
  const after = await runScript('client_json.js', ['3', '500', '--url', url, '--json'])
  assert.equal(after.code, 0, after.stderr)
  assert.ok(tally.frames >= formats.length * connections * FRAMES_PER_CONNECTION, `${tally.frames} frames`)
  assert.equal(tally.acks + tally.errors, tally.frames, 'one reply per frame')
  assert.ok(tally.pongs > 0)
  return tally
}
