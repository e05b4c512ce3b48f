import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, it } from 'node:test'
import { UsageError } from '../../lib/errors.js'
import { jsonCodec, codecFor as jsonCodecFor } from '../../lib/codecs/formats/json.js'
import { compileSchema } from '../../lib/schema/compile.js'
import { checkCodecFidelity, checkFidelity, jsonDifferences } from '../../lib/schema/fidelity.js'
import { inferSchema } from '../../lib/schema/infer.js'
import { parseJsonExact } from '../../lib/schema/json-exact.js'
import { roundTrip } from '../fixtures/infer/support.js'

const fixturePath = (name) => fileURLToPath(new URL(`../fixtures/infer/${name}`, import.meta.url))
const readFixture = (name) => readFileSync(fixturePath(name), 'utf8')
const orderType = () => compileSchema(readFixture('user-order.proto'), 'shop.Order', { filename: 'user-order.proto' })
const order = () => parseJsonExact(readFixture('user-order.json'))
const FLOAT_OF_0_1 = Math.fround(0.1)

describe('checkFidelity with a hand-written .proto', () => {
  it('reports a double declared as float, with its path and expected vs actual', () => {
    assert.deepStrictEqual(checkFidelity(orderType(), order()), {
      lossless: false,
      differences: 1,
      examples: [{ path: '$.items[1].price', expected: 0.1, actual: FLOAT_OF_0_1 }]
    })
  })

  it('maps json_name, enums by name, maps, bytes, oneofs, wrappers, Struct, Value, uint64 and recursion exactly', () => {
    const value = order()
    value.items[1].price = 0.5 // exact as a float
    assert.deepEqual(checkFidelity(orderType(), value), { lossless: true, differences: 0, examples: [] })
    assert.deepStrictEqual(roundTrip(orderType(), value), value)
  })

  it('reports what implicit presence and google.protobuf.Value lose', () => {
    const result = checkFidelity(orderType(), { extra: 9007199254740993n, coupon: null, status: 0 }, { maxExamples: 3 })
    assert.equal(result.lossless, false)
    assert.equal(result.examples.length, 3)
    assert.deepStrictEqual(result.examples.slice(0, 2), [
      { path: '$.extra', expected: 9007199254740993n, actual: 9007199254740992 },
      { path: '$.coupon', expected: null, actual: undefined }
    ])
    assert.ok(result.differences > 3, 'counts every difference, not only the examples')
    const all = checkFidelity(orderType(), {}, { maxExamples: 100 }).examples.map(({ path }) => path)
    assert.ok(all.includes('$.order_id') && all.includes('$.items'), 'absent implicit-presence fields come back as defaults')
  })

  // adapter.test.js checks that toMessage refuses these in strict mode; here they are differences.
  it('reports keys the schema has no field for and values a field cannot take', () => {
    const value = order()
    value.items[0].colour = 'red'
    value.status = 'LOST'
    assert.deepStrictEqual(checkFidelity(orderType(), value).examples, [
      { path: '$.status', expected: 'LOST', actual: 'STATUS_UNSPECIFIED' },
      { path: '$.items[0].colour', expected: 'red', actual: undefined },
      { path: '$.items[1].price', expected: 0.1, actual: FLOAT_OF_0_1 }
    ])
  })

  it('compares numbers exactly: -0 differs from 0, a BigInt equals a number of the same value', () => {
    const { proto, typeName } = inferSchema({ a: 1 })
    const type = compileSchema(proto, typeName)
    assert.deepStrictEqual(checkFidelity(type, { a: -0 }).examples, [{ path: '$.a', expected: -0, actual: 0 }])
    assert.equal(checkFidelity(type, { a: 5n }).lossless, true)
  })

  it('turns what protobufjs cannot encode or decode into a UsageError naming the type', () => {
    let node = { name: 'leaf', children: [] }
    for (let level = 0; level < 150; level++) node = { name: `n${level}`, children: [node] }
    assert.throws(() => checkFidelity(orderType(), { categories: node }), (err) => err instanceof UsageError && /^shop\.Order: cannot encode or decode this document: /.test(err.message))
  })
})

describe('jsonDifferences', () => {
  it('counts every difference and describes the first few, with absent as undefined on either side', () => {
    const expected = { a: [1, 2, 3], b: 1, nested: { x: 'same', y: true } }
    const actual = { b: 1n, a: [1, 2], c: null, nested: { y: false, x: 'same' } }
    assert.deepStrictEqual(jsonDifferences(expected, actual), {
      lossless: false,
      differences: 3,
      examples: [
        { path: '$.a[2]', expected: 3, actual: undefined },
        { path: '$.nested.y', expected: true, actual: false },
        { path: '$.c', expected: undefined, actual: null }
      ]
    })
    assert.deepStrictEqual(jsonDifferences(expected, actual, { maxExamples: 1 }).examples, [{ path: '$.a[2]', expected: 3, actual: undefined }])
    assert.equal(jsonDifferences(expected, actual, { maxExamples: 0 }).differences, 3, 'counted even when none is described')
  })

  it('compares numbers by value across BigInt and number, but tells -0 from 0 and 1.5 from a BigInt', () => {
    assert.equal(jsonDifferences({ n: 9007199254740993n, m: [5] }, { n: 9007199254740993n, m: [5n] }).lossless, true)
    assert.deepStrictEqual(jsonDifferences(9007199254740993n, 9007199254740992).examples, [{ path: '$', expected: 9007199254740993n, actual: 9007199254740992 }])
    assert.equal(jsonDifferences(-0, 0).differences, 1)
    assert.equal(jsonDifferences(1n, 1.5).differences, 1)
    assert.equal(jsonDifferences(NaN, NaN).lossless, true, 'Object.is: the same number')
  })

  it('sees a change of kind (array vs object, null vs object, string vs number) as one difference at that path', () => {
    assert.deepStrictEqual(jsonDifferences({ a: [] }, { a: {} }).examples, [{ path: '$.a', expected: [], actual: {} }])
    assert.equal(jsonDifferences({ a: null }, { a: {} }).differences, 1)
    assert.equal(jsonDifferences({ 'with-dash': '1' }, { 'with-dash': 1 }).examples[0].path, '$["with-dash"]')
  })
})

describe('checkCodecFidelity', () => {
  it('reports what a codec changes: JSON.stringify writes -0 as 0', () => {
    assert.deepStrictEqual(checkCodecFidelity(jsonCodec, { a: -0, b: [1, -0] }), {
      lossless: false,
      differences: 2,
      examples: [{ path: '$.a', expected: -0, actual: 0 }, { path: '$.b[1]', expected: -0, actual: 0 }]
    })
    // The JSON codec a payload with -0 gets carries it exactly.
    assert.deepEqual(checkCodecFidelity(jsonCodecFor({ custom: true, messages: [{ a: -0 }] }), { a: -0 }), { lossless: true, differences: 0, examples: [] })
  })

  it('turns a codec that throws into a UsageError naming the codec', () => {
    assert.throws(() => checkCodecFidelity(jsonCodec, { big: 9007199254740993n }), (err) => err instanceof UsageError && /^json cannot carry this document: .*BigInt/.test(err.message))
  })
})
