import { test } from 'node:test'
import assert from 'node:assert/strict'
import { codecFor, dynamicCodec } from '../../../lib/codecs/formats/protobuf.js'
import { TESTS, loadPayload, resolveTest } from '../../../lib/payloads/catalog.js'
import { builtInType, compileSchema } from '../../../lib/schema/compile.js'
import { inferSchema } from '../../../lib/schema/infer.js'
import { parseJsonExact } from '../../../lib/schema/json-exact.js'

// people (12.9 MB) is left to registry.test.js: these stay fast.
const SMALL_TESTS = TESTS.filter((info) => info.name !== 'people')

test('static (generated code) and dynamic (reflection) write the same bytes and read each other\'s', () => {
  for (const info of SMALL_TESTS) {
    const [generated, reflected] = [codecFor(info), dynamicCodec(builtInType(info.typeName))]
    assert.deepEqual([generated.name, reflected.name], ['protobuf', 'protobuf-dynamic'])
    const payload = loadPayload(info)
    const bytes = Buffer.from(generated.encode(generated.prepare(payload)))
    assert.deepEqual(Buffer.from(reflected.encode(reflected.prepare(payload))), bytes, info.name)
    assert.deepStrictEqual(reflected.toPlain(reflected.decode(bytes)), payload, info.name)
    assert.deepStrictEqual(generated.toPlain(generated.decode(bytes)), payload, info.name)
  }
})

test('builtInType loads proto/ once, keeping field names as declared', () => {
  const type = builtInType('bench.Medium')
  assert.equal(builtInType('bench.Medium'), type)
  assert.equal(type.fullName, '.bench.Medium')
  assert.throws(() => builtInType('bench.Nope'), /no such type/)
})

test('a custom test\'s own type goes through createAdapter: original keys, BigInt and -0 kept', () => {
  const payload = parseJsonExact('{"order-id": 18446744073709551615, "when": null, "delta": -0, "lines": [{"sku": "a"}, {"sku": "b", "qty": 2}]}')
  const { proto, typeName } = inferSchema(payload)
  const codec = codecFor({ custom: true, type: compileSchema(proto, typeName) })
  assert.deepEqual([codec.name, codec.binary], ['protobuf', true])
  const frame = codec.encode(codec.prepare(payload))
  assert.ok(frame instanceof Uint8Array)
  assert.deepStrictEqual(codec.toPlain(codec.decode(Buffer.from(frame))), payload)
  // Lenient: a key the schema lacks is left out of the message; the fidelity check before a run is
  // what reports it (and stops the run without --allow-lossy).
  assert.deepStrictEqual(codec.toPlain(codec.decode(Buffer.from(codec.encode(codec.prepare({ colour: 'red', delta: 1.5 }))))), { delta: 1.5, lines: [] })
})

test('a hand-written custom schema maps json_name keys and enum names', () => {
  const type = compileSchema('syntax = "proto3";\nenum Status { UNKNOWN = 0; PAID = 1; }\nmessage Order { int64 order_id = 1 [json_name = "orderNumber"]; Status status = 2; }', 'Order')
  const codec = codecFor({ custom: true, type })
  const payload = { orderNumber: 9007199254740993n, status: 'PAID' }
  const frame = Buffer.from(codec.encode(codec.prepare(payload)))
  assert.deepEqual(type.toObject(type.decode(frame), { longs: String }), { order_id: '9007199254740993', status: 1 })
  assert.deepStrictEqual(codec.toPlain(codec.decode(frame)), payload)
})

test('decode throws on a truncated frame', () => {
  const codec = codecFor(resolveTest('medium'))
  const frame = Buffer.from(codec.encode(codec.prepare(loadPayload(resolveTest('medium')))))
  assert.throws(() => codec.decode(frame.subarray(0, frame.length - 3)), RangeError)
})
