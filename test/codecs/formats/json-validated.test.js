import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import * as jsonValidated from '../../../lib/codecs/formats/json-validated.js'
import { createCodec } from '../../../lib/codecs/registry.js'
import { TESTS, everyMessage, loadPayload, resolveTest } from '../../../lib/payloads/catalog.js'
import { builtInType, compileSchema } from '../../../lib/schema/compile.js'
import { inferSchema } from '../../../lib/schema/infer.js'
import { parseJsonExact } from '../../../lib/schema/json-exact.js'

const { codecFor } = jsonValidated
const readFixture = (name) => readFileSync(new URL(`../../fixtures/infer/${name}`, import.meta.url), 'utf8')

/** A built-in test as a client has it: its type by reflection over proto/ (keepCase), every message it may send. */
function builtIn (name) {
  const info = resolveTest(name)
  return { name: info.name, custom: false, typeName: info.typeName, type: builtInType(info.typeName), messages: everyMessage(info) }
}

/** A user's payload: its inferred schema compiled; messages on the client, none on the server. */
function custom (text, { server = false } = {}) {
  const value = parseJsonExact(text)
  const { proto, typeName } = inferSchema(value)
  const type = compileSchema(proto, typeName)
  return { name: 'custom', custom: true, typeName, type, messages: server ? undefined : [value] }
}

const decodeError = (codec, text) => {
  try {
    codec.decode(Buffer.from(text))
  } catch (err) {
    return err.message
  }
  assert.fail(`decoded ${text}`)
}

/** Asserts each frame's refusal: the error decode throws, as the server answers it (ERR <reason>). */
const assertRefusals = (codec, refusals) => {
  for (const [text, reason] of refusals) assert.equal(decodeError(codec, text), reason, text)
}

test('the module: format json-validated, text frames, registers the schema for a user\'s payload, carries one', () => {
  assert.equal(jsonValidated.format, 'json-validated')
  assert.equal(jsonValidated.binary, false)
  assert.equal(jsonValidated.registersSchema, true)
  assert.equal(jsonValidated.customPayloads ?? true, true)
})

test('built-in tests: JSON.stringify out, JSON.parse and validation in, every message of the stream back unchanged', () => {
  // people (12.9 MB) has its own test below: this one stays fast.
  for (const info of TESTS.filter(({ name }) => name !== 'people')) {
    const t = builtIn(info.name)
    const codec = codecFor(t)
    assert.deepEqual([codec.name, codec.binary], ['json-validated', false])
    const payload = loadPayload(info)
    assert.equal(codec.prepare(payload), payload)
    assert.equal(codec.encode(payload), JSON.stringify(payload), info.name)
    for (const message of t.messages) {
      assert.deepStrictEqual(codec.toPlain(codec.decode(Buffer.from(codec.encode(codec.prepare(message))))), message, info.name)
    }
  }
})

test('people: its one 50,000-person message validates', () => {
  const codec = codecFor(builtIn('people'))
  const payload = loadPayload(resolveTest('people'))
  assert.equal(codec.decode(Buffer.from(JSON.stringify(payload))).person.length, payload.person.length)
})

test('test 3: what JSON.parse accepts and protobuf would not, refused with its JSON path and why', () => {
  const codec = codecFor(builtIn('medium'))
  assertRefusals(codec, [
    ['{"orderId":5}', '$.orderId: must be string, got number 5'],
    ['{"orderId":"A1","total":"12.50"}', '$.total: must match ^(NaN|-?Infinity)$, got string "12.50"'],
    ['{"tags":{"a":1}}', '$.tags: must be array, got an object'],
    ['{"items":[{"sku":"A"},{"quantity":1.5}]}', '$.items[1].quantity: must be integer, got number 1.5'],
    ['{"priority":2147483648}', '$.priority: must be <= 2147483647, got number 2147483648'],
    ['{"customer":{"address":{"zip":75001}}}', '$.customer.address.zip: must be string, got number 75001'],
    ['[]', '$: must be object, got an array']
  ])
  assert.throws(() => codec.decode(Buffer.from('{"orderId":')), SyntaxError)
  // Keys with no field are skipped, as protobuf skips unknown fields; null means "not set".
  assert.deepEqual(codec.decode(Buffer.from('{"orderId":"A1","coupon":"X","customer":null}')), { orderId: 'A1', coupon: 'X', customer: null })
})

test('person (proto2): required fields and enum names', () => {
  const codec = codecFor(builtIn('person'))
  assertRefusals(codec, [
    ['{"id":1}', '$.name: required field missing'],
    ['{"name":"Ada","id":"1"}', '$.id: must be integer, got string "1"'],
    ['{"name":"Ada","id":1,"phones":[{"number":"1","type":"CELL"}]}', '$.phones[0].type: must match ^(MOBILE|HOME|WORK)$, got string "CELL"'],
    ['{"name":"Ada","id":1,"phones":[{"type":"HOME"}]}', '$.phones[0].number: required field missing']
  ])
  assert.deepEqual(codec.decode(Buffer.from('{"name":"Ada","id":1,"phones":[{"number":"1","type":"WORK"}]}')).phones[0].type, 'WORK')
})

test('through the registry: a built-in test told by reflection over proto/, a user\'s payload with its type', async () => {
  const codec = await createCodec('json-validated', resolveTest('small'))
  assert.deepEqual(codec.decode(Buffer.from('{"id":1,"status":"ok"}')), { id: 1, status: 'ok' })
  assert.equal(decodeError(codec, '{"id":"1","status":"ok"}'), '$.id: must be integer, got string "1"')
  const user = await createCodec('json-validated', custom('{"id": 1, "tags": ["a"]}', { server: true }))
  assert.equal(decodeError(user, '{"tags": "a"}'), '$.tags: must be array, got string "a"')
})

test('a user\'s payload: its inferred schema, odd keys named in the path', () => {
  const text = readFixture('odd-keys.json')
  const codec = codecFor(custom(text))
  assert.deepStrictEqual(codec.decode(Buffer.from(codec.encode(codec.prepare(JSON.parse(text))))), JSON.parse(text))
  assertRefusals(codec, [
    ['{"x y":{"with-dash":{"has space":"yes"}}}', '$["x y"]["with-dash"]["has space"]: must be boolean, got string "yes"'],
    ['{"__proto__":5}', '$.__proto__: must be object, got number 5']
  ])
  assert.deepEqual(codec.decode(Buffer.from('{}')), {}, 'no key is required, not even constructor')
})

test('a user\'s payload with integers past 2^53: the exact JSON on the client, JSON.parse on the server, validated alike', () => {
  const text = readFixture('big-integers.json')
  const client = codecFor(custom(text))
  const value = parseJsonExact(text)
  const frame = client.encode(client.prepare(value))
  assert.equal(frame.includes('18446744073709551615'), true, 'written exactly, not as JSON.stringify would (it throws on BigInt)')
  assert.deepStrictEqual(client.toPlain(client.decode(Buffer.from(frame))), value, 'read back exactly, as BigInt')
  assertRefusals(client, [
    [frame.replace('"small":1', '"small":"one"'), '$.small: must be integer, got string "one"'],
    [frame.replace('"uint64_max":18446744073709551615', '"uint64_max":-1'), '$.uint64_max: must be >= 0, got number -1']
  ])

  const server = codecFor(custom(text, { server: true }))
  assert.equal(server.decode(Buffer.from(frame)).uint64_max, 2 ** 64, 'JSON.parse, as the json format\'s server reads it: rounded')
  assert.equal(decodeError(server, frame.replace('"small":1', '"small":1.5')), '$.small: must be integer, got number 1.5')
})

test('a hand-written schema a client registered: the type as compiled, wrong types refused', () => {
  const type = compileSchema(readFixture('user-order.proto'), 'shop.Order', { filename: 'user-order.proto' })
  const codec = codecFor({ name: 'custom', custom: true, typeName: 'shop.Order', type })
  assertRefusals(codec, [
    ['{"order_id":"12x"}', '$.order_id: must match ^-?\\d+$, got string "12x"'],
    ['{"status":"LOST"}', '$.status: must match ^(STATUS_UNSPECIFIED|PAID|SHIPPED)$, got string "LOST"'],
    ['{"items":[{"quantity":-1}]}', '$.items[0].quantity: must be >= 0, got number -1']
  ])
  assert.equal(codec.decode(Buffer.from('{"status":2,"extra":[1,"two"]}')).status, 2, 'enum numbers, as the adapter reads them')
})

test('the schema is compiled once per type', () => {
  const type = compileSchema('syntax = "proto3"; message M { int32 n = 1; }', 'M')
  let reads = 0
  const fieldsArray = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(type), 'fieldsArray') ??
    Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Object.getPrototypeOf(type)), 'fieldsArray')
  Object.defineProperty(type, 'fieldsArray', { get () { reads++; return fieldsArray.get.call(this) } })
  codecFor({ name: 'custom', custom: true, type })
  assert.ok(reads > 0, 'compiling reads the fields')
  const compiled = reads
  const codec = codecFor({ name: 'custom', custom: true, type })
  assert.equal(reads, compiled, 'a second codec for the type compiles nothing')
  assert.equal(decodeError(codec, '{"n":"x"}'), '$.n: must be integer, got string "x"')
})
