// The tests MessagePack and CBOR both pass: field names in every message, standard encodings any
// other reader takes, nothing of the test needed.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { TESTS, loadPayload, resolveTest } from '../../../lib/payloads/catalog.js'
import { checkCodecFidelity } from '../../../lib/schema/fidelity.js'

/**
 * Defines the shared tests for one self-describing binary format.
 * @param {object} module the format's module
 * @param {import('../../../lib/codecs/registry.js').Codec} codec its one codec
 * @param {{object: number[], array: number[]}} bytes how it writes {"a": 1} and [1, "a"]
 */
export function testSelfDescribing (module, codec, bytes) {
  test('codecFor gives the one codec whatever the test, a user\'s payload included', () => {
    assert.equal(module.codecFor(resolveTest('small')), codec)
    assert.equal(module.codecFor({ custom: true }), codec)
    assert.deepEqual([codec.name, codec.binary, module.binary], [module.format, true, true])
  })

  test('round-trips every built-in payload', () => {
    // people (12.9 MB) is left to registry.test.js: this stays fast.
    for (const info of TESTS.filter((t) => t.name !== 'people')) {
      const payload = loadPayload(info)
      const frame = codec.encode(codec.prepare(payload))
      assert.ok(frame instanceof Uint8Array)
      assert.deepStrictEqual(codec.toPlain(codec.decode(frame)), payload, info.name)
    }
  })

  test('standard encoding, no records extension: any other reader takes it', () => {
    // {"a": 1}: a map of one entry, a one-byte string key, a small positive integer. With records
    // on, the key would be sent once per structure.
    assert.deepEqual([...codec.encode({ a: 1 })], bytes.object)
    assert.deepEqual([...codec.encode([1, 'a'])], bytes.array)
    // Repeated structures still carry their keys and come back as plain objects.
    const payload = { list: [{ label: 1 }, { label: 2 }] }
    const frame = codec.encode(payload)
    assert.equal(Buffer.from(frame).toString('latin1').split('label').length - 1, 2, 'the key written in each object')
    const back = codec.decode(frame)
    assert.deepStrictEqual(back, payload)
    assert.equal(Object.getPrototypeOf(back.list[1]), Object.prototype)
  })

  test('64-bit integers come back as BigInt; -0 comes back as 0, which the fidelity check reports', () => {
    const payload = { id: 2n ** 63n - 1n, big: 2n ** 64n - 1n, low: -(2n ** 63n), delta: -0 }
    const back = codec.decode(codec.encode(payload))
    assert.deepEqual([back.id, back.big, back.low], [payload.id, payload.big, payload.low])
    assert.deepStrictEqual(checkCodecFidelity(codec, payload).examples, [{ path: '$.delta', expected: -0, actual: 0 }])
  })
}
