import { test } from 'node:test'
import assert from 'node:assert/strict'
import { codecFor } from '../../lib/codecs/google-protobuf.js'
import { codecFor as protobufCodecFor, dynamicType } from '../../lib/codecs/protobuf.js'
import { googleProtobufCodec } from '../../lib/codecs/google-protobuf.js'
import { TESTS, loadPayload } from '../../lib/payloads/catalog.js'

// people (12.9 MB) is left to registry.test.js: these stay fast.
const SMALL_TESTS = TESTS.filter((info) => info.name !== 'people')

test('codecFor round-trips every built-in payload exactly', () => {
  for (const info of SMALL_TESTS) {
    const codec = codecFor(info)
    assert.deepEqual([codec.name, codec.binary, codec.needsSchema], ['google-protobuf', true, true])
    const payload = loadPayload(info)
    const frame = codec.encode(codec.prepare(payload))
    assert.ok(frame instanceof Uint8Array, info.name)
    assert.deepStrictEqual(codec.toPlain(codec.decode(frame)), payload, info.name)
  }
})

test('writes the same bytes as protobuf.js generated code, and reads those', () => {
  for (const info of SMALL_TESTS) {
    const codec = codecFor(info)
    const reference = protobufCodecFor(info, 'protobuf')
    const payload = loadPayload(info)
    const expected = Buffer.from(reference.encode(reference.prepare(payload)))
    assert.deepEqual(Buffer.from(codec.encode(codec.prepare(payload))), expected, info.name)
    assert.deepStrictEqual(codec.toPlain(codec.decode(expected)), payload, info.name)
  }
})

test('proto2 presence: a required 0 is written, an unset optional stays out, enums travel by name', () => {
  const codec = googleProtobufCodec(dynamicType('person.Person'))
  const payload = { name: 'A', id: 0, phones: [{ number: '1', type: 'WORK' }, { number: '2' }] }
  const frame = codec.encode(codec.prepare(payload))
  // name "A", id 0, then two PhoneNumber messages: type WORK (2) set on the first only.
  assert.deepEqual([...frame], [0x0a, 0x01, 0x41, 0x10, 0x00, 0x22, 0x05, 0x0a, 0x01, 0x31, 0x10, 0x02, 0x22, 0x03, 0x0a, 0x01, 0x32])
  assert.deepStrictEqual(codec.toPlain(codec.decode(frame)), payload)
})
