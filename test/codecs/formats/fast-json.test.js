import { test } from 'node:test'
import assert from 'node:assert/strict'
import { codecFor, jsonSchemaOf, typedJsonCodec } from '../../../lib/codecs/formats/fast-json.js'
import { jsonCodec } from '../../../lib/codecs/formats/json.js'
import { codecTest } from '../../../lib/codecs/registry.js'
import { learnShape } from '../../../lib/schema/shape.js'
import { TESTS, loadPayload } from '../../../lib/payloads/catalog.js'
import { checkCodecFidelity } from '../../../lib/schema/fidelity.js'
import { parseJsonExact } from '../../../lib/schema/json-exact.js'

test('jsonSchemaOf describes a shape exactly: integer vs number, nullable types, every key', () => {
  const shape = learnShape([{ id: 1, price: 1.5, note: null, tags: [], items: [{ sku: 'a' }, { sku: null, n: 2 }], ok: true }])
  assert.deepEqual(jsonSchemaOf(shape), {
    type: 'object',
    properties: {
      id: { type: 'integer' },
      price: { type: 'number' },
      note: { type: 'null' },
      tags: { type: 'array', items: {} },
      items: { type: 'array', items: { type: 'object', properties: { sku: { type: ['string', 'null'] }, n: { type: 'integer' } } } },
      ok: { type: 'boolean' }
    }
  })
  assert.deepEqual(jsonSchemaOf(learnShape([[1, 'x']])), { type: 'array', items: {} }, 'mixed: any value')
  assert.deepEqual(Object.keys(jsonSchemaOf(learnShape([parseJsonExact('{"__proto__": 1}')])).properties), ['__proto__'])
})

test('codecFor a built-in test: the same text as JSON.stringify, decoded by JSON.parse', async () => {
  // people (12.9 MB) is left to registry.test.js: this stays fast.
  for (const info of TESTS.filter((t) => t.name !== 'people')) {
    const codec = codecFor(await codecTest(info))
    assert.deepEqual([codec.name, codec.binary], ['fast-json', false])
    const payload = loadPayload(info)
    const frame = codec.encode(codec.prepare(payload))
    assert.equal(frame, JSON.stringify(payload), info.name)
    assert.deepStrictEqual(codec.toPlain(codec.decode(Buffer.from(frame))), payload, info.name)
  }
})

test('codecFor a custom test with its messages: one schema from them all, the exact decoder for BigInt', () => {
  const messages = [{ id: 2n ** 60n, name: 'a', scores: [1, 2.5] }, { id: 3, name: null, scores: [] }]
  const codec = codecFor({ custom: true, messages })
  for (const [payload, text] of [
    [messages[0], '{"id":1152921504606846976,"name":"a","scores":[1,2.5]}'],
    [messages[1], '{"id":3,"name":null,"scores":[]}']
  ]) {
    const frame = codec.encode(payload)
    assert.equal(frame, text)
    assert.deepStrictEqual(codec.decode(Buffer.from(frame)), payload)
  }
})

test('codecFor a custom test without messages (the server): JSON.parse to decode, named fast-json', () => {
  const codec = codecFor({ custom: true })
  assert.deepEqual([codec.name, codec.binary], ['fast-json', false])
  assert.equal(codec.decode, jsonCodec.decode)
  assert.deepEqual(codec.decode(Buffer.from('{"a":[1]}')), { a: [1] })
})

test('fast-json-stringify writes -0 as 0: the fidelity check reports it', () => {
  const payload = { delta: -0 }
  assert.deepStrictEqual(checkCodecFidelity(typedJsonCodec([payload], jsonCodec.decode), payload).examples, [{ path: '$.delta', expected: -0, actual: 0 }])
})
