import { test } from 'node:test'
import assert from 'node:assert/strict'
import { cborCodec, codecFor, msgpackCodec } from '../../lib/codecs/self-describing.js'
import { TESTS, loadPayload, resolveTest } from '../../lib/payloads/catalog.js'
import { checkCodecFidelity } from '../../lib/schema/fidelity.js'

test('codecFor picks by format alone, whatever the test, custom ones included', () => {
  assert.equal(codecFor(resolveTest('small'), 'msgpack'), msgpackCodec)
  assert.equal(codecFor(resolveTest('small'), 'cbor'), cborCodec)
  assert.equal(codecFor({ custom: true }, 'cbor'), cborCodec)
  for (const codec of [msgpackCodec, cborCodec]) assert.deepEqual([codec.binary, codec.needsSchema], [true, false])
})

test('msgpack and cbor round-trip every built-in payload', () => {
  // people (12.9 MB) is left to registry.test.js: this stays fast.
  for (const info of TESTS.filter((t) => t.name !== 'people')) {
    const payload = loadPayload(info)
    for (const codec of [msgpackCodec, cborCodec]) {
      const frame = codec.encode(codec.prepare(payload))
      assert.ok(frame instanceof Uint8Array, codec.name)
      assert.deepStrictEqual(codec.toPlain(codec.decode(frame)), payload, `${codec.name} ${info.name}`)
    }
  }
})

test('standard encodings, no records extension: any other MessagePack or CBOR reader takes them', () => {
  // {"a": 1}: a map of one entry (16-bit count: msgpackr and cbor-x write objects so), a one-byte
  // string key, a small positive integer. With records on, the key would be sent once per structure.
  assert.deepEqual([...msgpackCodec.encode({ a: 1 })], [0xde, 0x00, 0x01, 0xa1, 0x61, 0x01])
  assert.deepEqual([...cborCodec.encode({ a: 1 })], [0xb9, 0x00, 0x01, 0x61, 0x61, 0x01])
  assert.deepEqual([...msgpackCodec.encode([1, 'a'])], [0x92, 0x01, 0xa1, 0x61])
  assert.deepEqual([...cborCodec.encode([1, 'a'])], [0x82, 0x01, 0x61, 0x61])
  // Repeated structures still carry their keys and come back as plain objects.
  const payload = { list: [{ label: 1 }, { label: 2 }] }
  for (const codec of [msgpackCodec, cborCodec]) {
    const frame = codec.encode(payload)
    assert.equal(Buffer.from(frame).toString('latin1').split('label').length - 1, 2, `${codec.name}: the key written in each object`)
    const back = codec.decode(frame)
    assert.deepStrictEqual(back, payload, codec.name)
    assert.equal(Object.getPrototypeOf(back.list[1]), Object.prototype, codec.name)
  }
})

test('64-bit integers come back as BigInt; -0 comes back as 0, which the fidelity check reports', () => {
  const payload = { id: 2n ** 63n - 1n, big: 2n ** 64n - 1n, low: -(2n ** 63n), delta: -0 }
  for (const codec of [msgpackCodec, cborCodec]) {
    const back = codec.decode(codec.encode(payload))
    assert.deepEqual([back.id, back.big, back.low], [payload.id, payload.big, payload.low], codec.name)
    assert.deepStrictEqual(checkCodecFidelity(codec, payload).examples, [{ path: '$.delta', expected: -0, actual: 0 }], codec.name)
  }
})
