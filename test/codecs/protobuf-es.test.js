import { test } from 'node:test'
import assert from 'node:assert/strict'
import { codecFor } from '../../lib/codecs/protobuf-es.js'
import { codecFor as protobufCodecFor } from '../../lib/codecs/protobuf.js'
import { protobufEsCodec } from '../../lib/codecs/protobuf-es.js'
import { UsageError } from '../../lib/errors.js'
import { TESTS, loadPayload } from '../../lib/payloads/catalog.js'

// people (12.9 MB) is left to registry.test.js: these stay fast.
const SMALL_TESTS = TESTS.filter((info) => info.name !== 'people')

test('codecFor round-trips every built-in payload exactly', () => {
  for (const info of SMALL_TESTS) {
    const codec = codecFor(info)
    assert.deepEqual([codec.name, codec.binary, codec.needsSchema], ['protobuf-es', true, true])
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

test('a test without generated code is refused with how to generate it', () => {
  assert.throws(() => protobufEsCodec({ ...TESTS[0], protoFile: 'missing.proto' }), (err) => err instanceof UsageError && err.message === 'protobuf-es code for missing.proto is missing: run npm run gen:proto-es')
})
