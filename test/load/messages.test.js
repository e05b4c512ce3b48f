// The frames a run sends and the judge of its replies (lib/load/messages.js): frames pre-framed
// once are read back by ws's own receiver as the payloads they carry, masked as a client's must be.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Receiver } from 'ws'
import { frameSource, sendOptions, wireFrame } from '../../lib/load/messages.js'
import { createCodec } from '../../lib/codecs/registry.js'
import { loadMessages, resolveTest } from '../../lib/payloads/catalog.js'
import { DOWN_REQUEST } from '../../lib/protocol.js'

const medium = resolveTest('3')
const messages = loadMessages(medium).messages.slice(0, 5)

/** What a server's ws receiver reads from `bytes`: each message and whether it was binary. */
function received (bytes) {
  const receiver = new Receiver({ isServer: true })
  const got = []
  receiver.on('message', (data, isBinary) => got.push({ data: Buffer.from(data), isBinary }))
  receiver.write(bytes)
  return got
}

test('sendOptions: framed only for pre-encoded, uncompressed, non-fan-out runs; down requests are text', async () => {
  const json = await createCodec('json', medium)
  const protobuf = await createCodec('protobuf', medium)
  assert.deepEqual(sendOptions(protobuf, 'up', { preencode: true }), { binary: true, framed: true })
  assert.deepEqual(sendOptions(json, 'echo', { preencode: true }), { binary: false, framed: true })
  assert.deepEqual(sendOptions(protobuf, 'up', { preencode: true, compress: true }), { binary: true, framed: false })
  assert.deepEqual(sendOptions(protobuf, 'fanout', { preencode: true }), { binary: true, framed: false })
  assert.deepEqual(sendOptions(protobuf, 'up'), { binary: true, framed: false })
  assert.deepEqual(sendOptions(protobuf, 'down', { preencode: true }), { binary: false, framed: true })
})

test('wireFrame: a masked client frame that a server reads back as the payload, short and long lengths alike', () => {
  for (const size of [0, 5, 125, 126, 3000, 70_000]) {
    const payload = Buffer.alloc(size, 'x')
    const frame = wireFrame(payload, true)
    assert.equal(frame[1] & 0x80, 0x80, 'the mask bit is set')
    const [message] = received(frame)
    assert.equal(message.isBinary, true)
    assert.ok(message.data.equals(payload), `size ${size}`)
  }
  // Masked with a key drawn for each frame: the same payload framed twice differs on the wire.
  const text = Buffer.from('{"id":1}')
  const [first, second] = [wireFrame(text, false), wireFrame(text, false)]
  assert.notDeepEqual(first, second)
  assert.equal(first.indexOf(text), -1, 'the payload does not go in the clear')
  assert.deepEqual(received(first), [{ data: text, isBinary: false }])
})

test('frameSource framed: whole frames of the payloads in turn, cycling; not framed: the encoded payloads', async () => {
  for (const format of ['json', 'protobuf']) {
    const codec = await createCodec(format, medium)
    const natives = messages.map((message) => codec.prepare(message))
    const framed = frameSource(codec, natives, 'up', true, sendOptions(codec, 'up', { preencode: true }))
    const plain = frameSource(codec, natives, 'up', true)
    const frames = Array.from({ length: natives.length + 2 }, () => framed(0, true))
    const expected = natives.map((native) => Buffer.from(codec.encode(native)))
    assert.deepEqual(received(Buffer.concat(frames)).map(({ data }) => data), [...expected, expected[0], expected[1]])
    assert.equal(received(frames[0])[0].isBinary, codec.binary)
    assert.ok(Buffer.from(plain(0, true)).equals(expected[0]))
  }
})

test('frameSource down: one request, framed as text when framed', async () => {
  const codec = await createCodec('protobuf', medium)
  const source = frameSource(codec, [], 'down', true, sendOptions(codec, 'down', { preencode: true }))
  assert.deepEqual(received(source(0, true)), [{ data: Buffer.from(DOWN_REQUEST), isBinary: false }])
  assert.equal(String(frameSource(codec, [], 'down')(0, true)), DOWN_REQUEST)
})
