// The two tests every protobuf implementation passes: it round-trips every built-in payload
// exactly, and it writes (and reads) the same bytes as protobuf.js generated code.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { codecFor as protobufCodecFor } from '../../../lib/codecs/formats/protobuf.js'
import { TESTS, loadPayload } from '../../../lib/payloads/catalog.js'
import { codecTest } from '../../../lib/codecs/registry.js'

// people (12.9 MB) is left to registry.test.js: these stay fast.
const SMALL_TESTS = TESTS.filter((info) => info.name !== 'people')

/**
 * Defines the shared tests for one implementation.
 * @param {string} name the codec's name
 * @param {(test: object) => import('../../../lib/codecs/registry.js').Codec} codecFor the module's codecFor
 */
export function testProtobufImplementation (name, codecFor) {
  test('codecFor round-trips every built-in payload exactly', async () => {
    for (const info of SMALL_TESTS) {
      const codec = codecFor(await codecTest(info))
      assert.deepEqual([codec.name, codec.binary], [name, true])
      const payload = loadPayload(info)
      const frame = codec.encode(codec.prepare(payload))
      assert.ok(frame instanceof Uint8Array, info.name)
      assert.deepStrictEqual(codec.toPlain(codec.decode(frame)), payload, info.name)
    }
  })

  test('writes the same bytes as protobuf.js generated code, and reads those', async () => {
    for (const info of SMALL_TESTS) {
      const codec = codecFor(await codecTest(info))
      const reference = protobufCodecFor(info)
      const payload = loadPayload(info)
      const expected = Buffer.from(reference.encode(reference.prepare(payload)))
      assert.deepEqual(Buffer.from(codec.encode(codec.prepare(payload))), expected, info.name)
      assert.deepStrictEqual(codec.toPlain(codec.decode(expected)), payload, info.name)
    }
  })
}
