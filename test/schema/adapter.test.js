import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import protobuf from 'protobufjs'
import { UsageError } from '../../lib/errors.js'
import { createAdapter } from '../../lib/schema/adapter.js'
import { compileSchema } from '../../lib/schema/compile.js'
import { inferSchema } from '../../lib/schema/infer.js'
import { parseJsonExact } from '../../lib/schema/json-exact.js'
import { roundTrip } from '../fixtures/infer/support.js'

const readFixture = (name) => readFileSync(new URL(`../fixtures/infer/${name}`, import.meta.url), 'utf8')
const orderType = () => compileSchema(readFixture('user-order.proto'), 'shop.Order', { filename: 'user-order.proto' })
const scratch = mkdtempSync(join(tmpdir(), 'pbjson-adapter-'))
after(() => rmSync(scratch, { recursive: true, force: true }))

describe('createAdapter', () => {
  it('works on an inferred schema loaded by plain protobufjs (camelCase field names)', () => {
    const value = parseJsonExact(readFixture('api-response.json'))
    const { proto, typeName } = inferSchema(value)
    const file = join(scratch, 'plain.proto')
    writeFileSync(file, proto)
    const type = protobuf.loadSync(file).lookupType(typeName)
    assert.ok(type.fields.perPage, 'protobufjs renamed per_page')
    assert.deepStrictEqual(roundTrip(type, value), value)
  })

  it('gives toMessage output that protobufjs can verify and encode', () => {
    const value = parseJsonExact(readFixture('geojson.json'))
    const { proto, typeName } = inferSchema(value)
    const type = compileSchema(proto, typeName)
    const message = createAdapter(type).toMessage(value)
    assert.equal(type.verify(message), null)
    assert.ok(type.encode(message).finish().length > 0)
  })

  it('refuses something that is not a protobufjs Type', () => {
    assert.throws(() => createAdapter({}), TypeError)
  })

  it('takes 64-bit integers as numbers, BigInt or exact decimal strings', () => {
    for (const orderId of [9007199254740993n, '9007199254740993']) {
      assert.equal(roundTrip(orderType(), { order_id: orderId }).order_id, 9007199254740993n)
    }
    assert.equal(roundTrip(orderType(), { order_id: 42 }).order_id, 42)
    assert.equal(roundTrip(orderType(), { reference: '18446744073709551615' }).reference, 18446744073709551615n)
  })

  it('accepts the lowerCamelCase JSON name and the declared name on input, and writes json_name or the declared name', () => {
    const decoded = roundTrip(orderType(), { orderId: 7, customer_name: 'Bob', status: 1 })
    assert.equal(decoded.order_id, 7)
    assert.equal(decoded.customer, 'Bob')
    assert.equal(decoded.status, 'PAID')
  })

  it('toMessage refuses, naming the JSON path, a key with no field and a value the field cannot take', () => {
    const adapter = createAdapter(orderType())
    assert.throws(() => adapter.toMessage({ items: [{ sku: 'A', colour: 'red' }] }), (err) => err instanceof UsageError && err.message === '$.items[0].colour: shop.Item has no field for key "colour"')
    assert.throws(() => adapter.toMessage({ status: 'LOST' }), /^UsageError: \$\.status: enum Status has no value string "LOST"$/)
    assert.throws(() => adapter.toMessage({ customer: 5 }), /^UsageError: \$\.customer: string field cannot hold number 5$/)
    // Deep in a recursive message, the path still leads to the key.
    assert.throws(() => adapter.toMessage({ categories: { name: 'r', children: [{ name: 'x', children: [{ name: 'y', colour: 1 }] }] } }),
      /^UsageError: \$\.categories\.children\[0\]\.children\[0\]\.colour: shop\.Node has no field for key "colour"$/)
    assert.throws(() => adapter.toMessage({ items: 'A' }), /^UsageError: \$\.items: repeated field items needs an array, got string "A"$/)
  })

  it('in lenient mode leaves out what strict mode refuses, so a fidelity check can count it', () => {
    const message = createAdapter(orderType(), { strict: false }).toMessage({ status: 'LOST', customer: 5, colour: 'x', order_id: 3 })
    assert.deepEqual(message, { order_id: 3 })
  })

  it('fromMessage: implicit-presence fields with their defaults, fields with presence only when set', () => {
    const type = orderType()
    assert.deepStrictEqual(roundTrip(type, {}), { order_id: 0, customer: '', status: 'STATUS_UNSPECIFIED', items: [], counts: {}, signature: '' })
    // null means "not set" for a field that cannot hold null.
    assert.deepStrictEqual(roundTrip(type, { coupon: null, reference: null, email: null }), roundTrip(type, {}))
    const set = roundTrip(type, { coupon: '', reference: 0, phone: '' })
    assert.deepStrictEqual([set.coupon, set.reference, set.phone], ['', 0, ''], 'set to the default is still set')
  })

  it('carries bytes as base64, maps and the well-known Struct and Value as plain JSON', () => {
    const type = orderType()
    const message = createAdapter(type).toMessage({ signature: '3q2+7w==' })
    assert.deepEqual([...message.signature], [0xde, 0xad, 0xbe, 0xef])
    const value = parseJsonExact('{"signature": "3q2+7w==", "counts": {"a": 1, "__proto__": 2}, "metadata": {"nested": {"list": [true, null, "x", 1.5]}}, "extra": {"a": [1, "two"]}}')
    const back = roundTrip(type, value)
    assert.equal(back.signature, '3q2+7w==')
    assert.deepStrictEqual(Object.entries(back.counts), [['a', 1], ['__proto__', 2]], '__proto__ stays a key')
    assert.deepStrictEqual(back.metadata, value.metadata)
    assert.deepStrictEqual(back.extra, value.extra)
  })
})
