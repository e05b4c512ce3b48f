// Hostile frames for a server under test (test/process/server-fuzz.test.js against node server.js,
// go-server.test.js against the Go server): seeded frame makers per format with the reply each
// must get, a pipelined connection that sends them and checks every reply, and the frames a
// WebSocket server must close on.
import net from 'node:net'
import WebSocket from 'ws'
import { createCodec } from '../lib/codecs/registry.js'
import { loadPayload, resolveTest } from '../lib/payloads/catalog.js'
import { createRandom } from '../lib/payloads/random.js'

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
