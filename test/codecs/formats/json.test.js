import { test } from 'node:test'
import assert from 'node:assert/strict'
import { codecFor, jsonCodec } from '../../../lib/codecs/formats/json.js'
import { loadPayload, resolveTest } from '../../../lib/payloads/catalog.js'

test('jsonCodec: text frames through JSON.stringify and JSON.parse', () => {
  assert.deepEqual([jsonCodec.name, jsonCodec.binary], ['json', false])
  const payload = loadPayload(resolveTest('medium'))
  const frame = jsonCodec.encode(jsonCodec.prepare(payload))
  assert.equal(frame, JSON.stringify(payload))
  assert.deepStrictEqual(jsonCodec.toPlain(jsonCodec.decode(Buffer.from(frame))), payload)
  assert.throws(() => jsonCodec.decode(Buffer.from('{"a":')), SyntaxError)
})

test('codecFor: the built-ins for a built-in test, a custom test without messages (the server) and messages they carry exactly', () => {
  assert.equal(codecFor(resolveTest('small')), jsonCodec)
  assert.equal(codecFor({ custom: true }), jsonCodec)
  assert.equal(codecFor({ custom: true, messages: [{ id: 9007199254740991, x: 0.1, s: 'é' }, [0, -1]] }), jsonCodec)
})

test('codecFor: the exact codec for a payload with an integer past 2^53 (BigInt), deep inside', () => {
  const payload = { items: [{ id: 9007199254740993n }], n: 1 }
  const codec = codecFor({ custom: true, messages: [payload] })
  assert.notEqual(codec, jsonCodec)
  assert.equal(codec.name, 'json', 'the same format on the wire')
  const frame = codec.encode(codec.prepare(payload))
  assert.equal(frame, '{"items":[{"id":9007199254740993}],"n":1}')
  assert.deepStrictEqual(codec.toPlain(codec.decode(Buffer.from(frame))), payload)
})

test('codecFor: the exact codec for a payload with -0, which JSON.stringify writes as 0', () => {
  const payload = { values: [1, -0] }
  const codec = codecFor({ custom: true, messages: [payload] })
  assert.notEqual(codec, jsonCodec)
  const frame = codec.encode(payload)
  assert.equal(frame, '{"values":[1,-0]}')
  assert.ok(Object.is(codec.decode(Buffer.from(frame)).values[1], -0))
  assert.equal(jsonCodec.encode(payload), '{"values":[1,0]}', 'what the built-ins would have sent')
})

test('codecFor: one message of a corpus needing the exact codec is enough', () => {
  const codec = codecFor({ custom: true, messages: [{ a: 1 }, { a: 2 }, { a: 2n ** 64n }] })
  assert.notEqual(codec, jsonCodec)
  assert.equal(codec.encode({ a: 2n ** 64n }), '{"a":18446744073709551616}')
})
