import assert from 'node:assert/strict'
import { readFileSync, readdirSync } from 'node:fs'
import { describe, it } from 'node:test'
import { validator } from '@exodus/schemasafe'
import { TESTS, everyMessage, resolveTest } from '../../lib/payloads/catalog.js'
import { builtInType, compileSchema } from '../../lib/schema/compile.js'
import { inferSchema } from '../../lib/schema/infer.js'
import { parseJsonExact } from '../../lib/schema/json-exact.js'
import { JSON_SCHEMA_DIALECT, jsonSchemaOfType, schemaViolation } from '../../lib/schema/json-schema.js'
import { deepDocuments } from '../fixtures/infer/support.js'

const FIXTURES = new URL('../fixtures/infer/', import.meta.url)
const readFixture = (name) => readFileSync(new URL(name, FIXTURES), 'utf8')
const fixtureNames = readdirSync(FIXTURES).filter((name) => name.endsWith('.json')).sort()

/** A validator of the type's schema, compiled as the json-validated format compiles it; `schema` beside it. */
const validatorFor = (type) => {
  const schema = jsonSchemaOfType(type)
  return Object.assign(validator(schema, { isJSON: true, unmodifiedPrototypes: true }), { schema })
}
const testType = (name) => builtInType(resolveTest(name).typeName)
/** The type inferred from a JSON text, as pbjson and --payload infer it (parseJsonExact, then compile). */
const inferredType = (text) => {
  const { proto, typeName } = inferSchema(parseJsonExact(text))
  return compileSchema(proto, typeName)
}
const orderType = () => compileSchema(readFixture('user-order.proto'), 'shop.Order', { filename: 'user-order.proto' })

/**
 * Asserts what a validator answers for each value, and that schemaViolation agrees: null for the
 * valid ones, the JSON path that fails for the wrongly typed ones.
 */
function assertVerdicts (validate, { valid = [], invalid = [] }) {
  for (const value of valid) {
    assert.ok(validate(value), `valid: ${JSON.stringify(value)}`)
    assert.equal(schemaViolation(validate.schema, value), null, JSON.stringify(value))
  }
  for (const [value, path] of invalid) {
    assert.equal(validate(value), false, `invalid: ${JSON.stringify(value)}`)
    assert.equal(schemaViolation(validate.schema, value)?.path, path, JSON.stringify(value))
  }
}

describe('jsonSchemaOfType accepts every message this project holds', () => {
  for (const test of TESTS) {
    it(`every message of ${test.name}, the test's own and its stream's`, () => {
      const validate = validatorFor(builtInType(test.typeName))
      const messages = everyMessage(test)
      const refused = messages.filter((message) => !validate(message) || schemaViolation(validate.schema, message))
      assert.equal(refused.length, 0, `${refused.length} of ${messages.length} refused, e.g. ${JSON.stringify(schemaViolation(validate.schema, refused[0]))}`)
    })
  }

  // Validators work on JSON.parse's values: an integer past 2^53 is a rounded, still integral number there.
  for (const name of fixtureNames) {
    it(`${name} under its inferred schema, and the empty object (every inferred key is optional)`, () => {
      const text = readFixture(name)
      const validate = validatorFor(inferredType(text))
      const value = JSON.parse(text)
      assertVerdicts(validate, { valid: Array.isArray(value) ? [value] : [value, {}] })
    })
  }

  it('user-order.json under the hand-written user-order.proto, and api-response and geojson under their reviewed .proto', () => {
    assert.ok(validatorFor(orderType())(JSON.parse(readFixture('user-order.json'))))
    for (const name of ['api-response', 'geojson']) {
      const type = compileSchema(readFixture(`${name}.proto`), 'pbjson.Payload')
      assert.ok(validatorFor(type)(JSON.parse(readFixture(`${name}.json`))), name)
    }
  })

  it('documents nested past protobuf\'s limit, carried as JSON text', () => {
    for (const document of Object.values(deepDocuments())) {
      const text = JSON.stringify(document)
      assert.ok(validatorFor(inferredType(text))(JSON.parse(text)))
    }
  })
})

describe('jsonSchemaOfType refuses wrongly typed values, at their path', () => {
  it('test 3 (proto3): a number where a string is, a string where a number is, an object where an array is, and more', () => {
    const validate = validatorFor(testType('medium'))
    assertVerdicts(validate, {
      invalid: [
        [{ orderId: 5 }, '$.orderId'],
        [{ total: 'abc' }, '$.total'],
        [{ tags: {} }, '$.tags'],
        [{ tags: ['a', 1] }, '$.tags[1]'],
        [{ items: { sku: 'A' } }, '$.items'],
        [{ customer: [] }, '$.customer'],
        [{ customer: { address: { zip: 75001 } } }, '$.customer.address.zip'],
        [{ priority: 2 ** 31 }, '$.priority'],
        [{ priority: -(2 ** 31) - 1 }, '$.priority'],
        [{ items: [{ quantity: 1.5 }] }, '$.items[0].quantity'],
        [{ createdAt: 1.5 }, '$.createdAt'],
        [{ createdAt: '17e9' }, '$.createdAt'],
        [{ createdAt: 1e30 }, '$.createdAt'],
        [{ gift: 'yes' }, '$.gift'],
        [[], '$'],
        ['{}', '$'],
        [null, '$']
      ]
    })
  })

  it('tests 1 and 5: int32 and sint32 ranges, integers only', () => {
    assertVerdicts(validatorFor(testType('numbers')), {
      valid: [{ id: 2 ** 31 - 1, delta: -(2 ** 31), timestamp: 2 ** 53 - 1, price: 1e300 }],
      invalid: [[{ id: 'x' }, '$.id'], [{ delta: -(2 ** 31) - 1 }, '$.delta'], [{ quantity: 0.5 }, '$.quantity'], [{ position: { altitude: 1.25 } }, '$.position.altitude']]
    })
    assertVerdicts(validatorFor(testType('small')), {
      invalid: [[{ id: '5', status: 'ok' }, '$.id'], [{ id: 2 ** 31 }, '$.id'], [{ status: 1 }, '$.status']]
    })
  })

  it('person (proto2): required fields present and not null, enum values by name', () => {
    const validate = validatorFor(testType('person'))
    assertVerdicts(validate, {
      valid: [{ name: 'Ada', id: 1 }, { name: 'Ada', id: 1, phones: [{ number: '1', type: 'WORK' }, { number: '2' }] }],
      invalid: [
        [{ id: 1 }, '$.name'],
        [{ name: 'Ada' }, '$.id'],
        [{ name: null, id: 1 }, '$.name'],
        [{ name: 'Ada', id: '1' }, '$.id'],
        [{ name: 'Ada', id: 1, phones: [{ type: 'HOME' }] }, '$.phones[0].number'],
        [{ name: 'Ada', id: 1, phones: [{ number: '1', type: 'CELL' }] }, '$.phones[0].type'],
        [{ name: 'Ada', id: 1, phones: [{ number: '1', type: 'home' }] }, '$.phones[0].type'],
        [{ name: 'Ada', id: 1, phones: [{ number: 5 }] }, '$.phones[0].number'],
        [{ name: 'Ada', id: 1, phones: { number: '1' } }, '$.phones']
      ]
    })
  })

  it('counters (proto2): every element has its required fields', () => {
    assertVerdicts(validatorFor(testType('counters')), {
      valid: [{ counter: [{ counter: 1, num: 2 }] }, { counter: [] }, {}],
      invalid: [[{ counter: [{ counter: 1, num: 2 }, { counter: 3 }] }, '$.counter[1].num'], [{ counter: [{ counter: 1.5, num: 2 }] }, '$.counter[0].counter']]
    })
  })

  it('a hand-written schema: unsigned, enums, maps, bytes, wrappers, Struct, recursive messages', () => {
    assertVerdicts(validatorFor(orderType()), {
      invalid: [
        [{ items: [{ quantity: -1 }] }, '$.items[0].quantity'],
        [{ items: [{ quantity: 2 ** 32 }] }, '$.items[0].quantity'],
        [{ status: 'LOST' }, '$.status'],
        [{ reference: -1 }, '$.reference'],
        [{ reference: '-1' }, '$.reference'],
        [{ counts: { red: '2' } }, '$.counts.red'],
        [{ counts: [] }, '$.counts'],
        [{ signature: 'not base64!' }, '$.signature'],
        [{ coupon: 5 }, '$.coupon'],
        [{ metadata: [] }, '$.metadata'],
        [{ categories: { children: [{ name: 'x', children: [{ name: 7 }] }] } }, '$.categories.children[0].children[0].name'],
        [{ orderId: 'x' }, '$.orderId'],
        [{ customer_name: 5 }, '$.customer_name']
      ]
    })
  })
})

describe('jsonSchemaOfType accepts what the adapter reads besides', () => {
  it('unknown keys (protobuf skips unknown fields), null for "not set", enum numbers, 64-bit decimal strings, non-finite doubles by name', () => {
    assertVerdicts(validatorFor(testType('medium')), {
      valid: [
        { orderId: 'A', colour: 'red', customer: { nickname: 1 } },
        { orderId: null, tags: null, customer: null, priority: null },
        { createdAt: '1700000000000', updatedAt: -5 },
        { total: 'NaN', shipping: { cost: '-Infinity' } }
      ]
    })
    assertVerdicts(validatorFor(testType('person')), { valid: [{ name: 'Ada', id: 1, phones: [{ number: '1', type: 2 }] }] })
    assertVerdicts(validatorFor(orderType()), {
      valid: [
        { reference: '18446744073709551615', order_id: 2 ** 60, status: 'PAID' },
        { orderId: 7, customer_name: 'Bob', customer: 'Bob' }, // the lowerCamelCase and declared names read the same fields
        { metadata: { any: [1, { deep: null }] }, extra: [1, 'two', null], coupon: null, signature: '3q2-7w' },
        { counts: { red: 2 }, categories: { name: 'root', children: [] } }
      ]
    })
  })

  it('keys that Object.prototype has and odd keys are keys like any other (json_name)', () => {
    const text = readFixture('odd-keys.json')
    assertVerdicts(validatorFor(inferredType(text)), {
      valid: [JSON.parse(text), {}, JSON.parse('{"__proto__": {"polluted": true}}')],
      invalid: [
        [JSON.parse('{"__proto__": 5}'), '$.__proto__'],
        [{ constructor: 5 }, '$.constructor'],
        [{ 'has space': 'two' }, '$["has space"]'],
        [{ 'x y': { 'with-dash': { 'has space': 1 } } }, '$["x y"]["with-dash"]["has space"]'],
        [{ $ref: 1 }, '$.$ref'],
        [{ 'a.b': 'five', items: [{ 'with dash': 'two' }] }, '$["a.b"]']
      ]
    })
  })
})

describe('jsonSchemaOfType over inferred schemas', () => {
  it('value messages take one JSON value of exactly their kinds; list messages arrays', () => {
    const validate = validatorFor(inferredType(readFixture('mixed-types.json')))
    assertVerdicts(validate, {
      valid: [
        { value_here_and_there: [{ v: 1 }, { v: 2.5 }, { v: 'x' }, { v: false }, { v: null }, { v: { nested: 3 } }, { v: [7, 'seven'] }] },
        { number_or_string: [1, '1'], object_or_array: [{ a: 1 }, [{ a: 2 }]], mixed_array: [1e19, null, [3], { k: 'v' }] }
      ],
      invalid: [
        [{ number_or_string: [true] }, '$.number_or_string[0]'],
        [{ number_or_string: [1.5] }, '$.number_or_string[0]'],
        [{ number_or_string: [2 ** 31] }, '$.number_or_string[0]'],
        [{ value_here_and_there: [{ v: { nested: 'x' } }] }, '$.value_here_and_there[0].v.nested'],
        [{ value_here_and_there: [{ v: [true] }] }, '$.value_here_and_there[0].v[0]'],
        [{ object_or_array: ['a'] }, '$.object_or_array[0]'],
        [{ mixed_array: [[1.5]] }, '$.mixed_array[0][0]']
      ]
    })
    const keyUnion = validatorFor(inferredType(readFixture('key-union.json')))
    assertVerdicts(keyUnion, {
      valid: [[{ id: 1, name: null, tags: null }, {}], []],
      invalid: [[{ id: 1 }, '$'], [[{ tags: 'a' }], '$[0].tags'], [[{ extra: { deep: 1 } }], '$[0].extra.deep']]
    })
  })

  it('maps take any key and typed values; JSON text takes any value', () => {
    const document = { prices: Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`item${i}`, i + 0.5])), raw: [] }
    const validate = validatorFor(inferredType(JSON.stringify(document)))
    assertVerdicts(validate, {
      valid: [document, { prices: { anything: 1 }, raw: [{ a: [1, 'x', null] }, 'text', 5] }],
      invalid: [[{ prices: { item1: 'cheap' } }, '$.prices.item1'], [{ prices: [] }, '$.prices']]
    })
  })

  it('maps keyed by integers or booleans take those keys only', () => {
    const type = compileSchema('syntax = "proto3"; message M { map<int64, string> by_id = 1; map<bool, int32> by_flag = 2; }', 'M')
    assertVerdicts(validatorFor(type), {
      valid: [{ by_id: { 1: 'a', '-20': 'b' }, by_flag: { true: 1, false: 0 } }],
      invalid: [[{ by_id: { x1: 'a' } }, '$.by_id.x1'], [{ by_flag: { yes: 1 } }, '$.by_flag.yes'], [{ 'a/b': 1, by_id: { 1: 2 } }, '$.by_id["1"]']]
    })
  })

  it('64-bit integers: integral, within range, or decimal strings', () => {
    const validate = validatorFor(inferredType(readFixture('big-integers.json')))
    assertVerdicts(validate, {
      // JSON.parse reads 18446744073709551615 as 2 ** 64, the nearest double: an integer still.
      valid: [{ uint64_max: 2 ** 64, int64_min: -(2 ** 63), past_2_53: '9007199254740993', ids: [0, '18446744073709551615'] }],
      invalid: [[{ ids: [-1] }, '$.ids[0]'], [{ past_2_53: 1.5 }, '$.past_2_53'], [{ int64_max: 1e20 }, '$.int64_max'], [{ ids: ['1e3'] }, '$.ids[0]'], [{ small: 2 ** 31 }, '$.small']]
    })
  })
})

describe('jsonSchemaOfType: the schema itself', () => {
  it('is 2020-12, with object messages inline and one that contains itself in $defs', () => {
    const schema = jsonSchemaOfType(testType('large'))
    assert.equal(schema.$schema, JSON_SCHEMA_DIALECT)
    assert.deepEqual(Object.keys(schema.$defs), ['bench.TreeNode'])
    assert.deepEqual(schema.properties.tree, { type: ['object', 'null'], $ref: '#/$defs/bench.TreeNode' })
    assert.deepEqual(schema.$defs['bench.TreeNode'].properties.child, schema.properties.tree)
    assert.equal(schema.properties.account.properties.addresses.items.properties.city.type.join(), 'string,null')
    assert.equal(jsonSchemaOfType(testType('small')).$defs, undefined)
    assert.deepEqual(jsonSchemaOfType(testType('person')).required, ['name', 'id'])
    assert.deepEqual(JSON.parse(JSON.stringify(schema)), schema, 'plain data')
  })

  it('refuses something that is not a protobufjs Type', () => {
    assert.throws(() => jsonSchemaOfType({}), TypeError)
  })
})
