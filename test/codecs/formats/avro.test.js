import { test } from 'node:test'
import assert from 'node:assert/strict'
import { avroCodec, avroSchemaOf, codecFor } from '../../../lib/codecs/formats/avro.js'
import { learnShape } from '../../../lib/schema/shape.js'
import { UsageError } from '../../../lib/errors.js'
import { codecTest } from '../../../lib/codecs/registry.js'
import { TESTS, loadPayload } from '../../../lib/payloads/catalog.js'
import { checkCodecFidelity } from '../../../lib/schema/fidelity.js'

test('avroSchemaOf: records, long for integers, double for other numbers, unions with null where null or absence was seen', () => {
  const shape = learnShape([{ id: 1, price: 1.5, note: null, tags: [], items: [{ sku: 'a', n: null }, { sku: 'b', n: 2, extra: true }] }])
  assert.deepEqual(avroSchemaOf(shape), {
    type: 'record',
    name: 'Record0',
    fields: [
      { name: 'id', type: 'long' },
      { name: 'price', type: 'double' },
      { name: 'note', type: 'null' },
      { name: 'tags', type: { type: 'array', items: 'null' } },
      {
        name: 'items',
        type: {
          type: 'array',
          items: {
            type: 'record',
            // Avro names must be unique in a schema.
            name: 'Record1',
            fields: [
              { name: 'sku', type: 'string' },
              { name: 'n', type: ['null', 'long'] },
              { name: 'extra', type: ['null', 'boolean'], default: null }
            ]
          }
        }
      }
    ]
  })
})

test('avroSchemaOf refuses mixed kinds and names Avro cannot take, with the JSON path, as UsageErrors', () => {
  for (const [payload, message] of [
    [{ a: { b: [1, 'x'] } }, /^avro: \$\.a\.b\[\] holds several kinds of value; Avro needs one type per field$/],
    [{ a: [{ v: true }, { v: 'x' }] }, /^avro: \$\.a\[\]\.v holds several kinds of value/],
    [{ '1st': 1 }, /^avro: the key "1st" at \$ is not a valid Avro field name$/],
    [{ a: { 'has space': 1 } }, /^avro: the key "has space" at \$\.a is not a valid Avro field name$/]
  ]) {
    assert.throws(() => avroSchemaOf(learnShape([payload])), (err) => err instanceof UsageError && message.test(err.message), JSON.stringify(payload))
  }
})

test('codecFor a built-in test: binary frames that carry its payload exactly', async () => {
  // people (12.9 MB) is left to registry.test.js: this stays fast.
  for (const info of TESTS.filter((t) => t.name !== 'people')) {
    const codec = codecFor(await codecTest(info))
    assert.deepEqual([codec.name, codec.binary], ['avro', true])
    const payload = loadPayload(info)
    const frame = codec.encode(codec.prepare(payload))
    assert.ok(Buffer.isBuffer(frame))
    assert.ok(frame.length < JSON.stringify(payload).length, `${info.name}: no field names on the wire`)
    const back = codec.toPlain(codec.decode(frame))
    assert.equal(Object.getPrototypeOf(back), Object.prototype, 'plain objects, not avsc record classes')
    assert.deepStrictEqual(back, payload, info.name)
  }
})

test('a codec that cannot carry a payload exactly is reported lossy, with paths', () => {
  // Avro has no "absent": the second item's missing key comes back as null.
  const payload = { items: [{ sku: 'a', note: 'gift' }, { sku: 'b' }] }
  const result = checkCodecFidelity(avroCodec([payload]), payload)
  assert.deepEqual(result, { lossless: false, differences: 1, examples: [{ path: '$.items[1].note', expected: undefined, actual: null }] })
  assert.throws(() => avroCodec([{ 'with-dash': 1 }]), /avro: the key "with-dash" at \$ is not a valid Avro field name/)
  assert.throws(() => avroCodec([{ mixed: [1, 'one'] }]), /avro: \$\.mixed\[\] holds several kinds of value/)
})

test('avro refuses an array block that declares more items than the frame has bytes, before building it', () => {
  const codec = avroCodec([{ list: [1, 2] }])
  assert.deepEqual(codec.toPlain(codec.decode(Buffer.from(codec.encode({ list: [1, 2] })))), { list: [1, 2] })
  const varint = (value) => {
    const bytes = []
    for (; value >= 0x80n; value >>= 7n) bytes.push(Number(value & 0x7fn) | 0x80)
    return [...bytes, Number(value)]
  }
  const billions = Buffer.from([...varint(2n * 2n ** 40n), 0x02]) // zigzag count 2^40, then one item byte
  assert.throws(() => codec.decode(billions), /^Error: an array block of 1099511627776 items in the 1 bytes left$/)
})
