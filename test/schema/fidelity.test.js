import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, describe, it } from 'node:test'
import protobuf from 'protobufjs'
import { UsageError } from '../../lib/errors.js'
import { MAX_SCHEMA_BYTES } from '../../lib/defaults.js'
import { compileSchema } from '../../lib/schema/compile.js'
import { createAdapter } from '../../lib/schema/adapter.js'
import { checkFidelity } from '../../lib/schema/fidelity.js'
import { inferSchema } from '../../lib/schema/infer.js'
import { parseJsonExact } from '../../lib/schema/json-exact.js'
import { roundTrip } from '../fixtures/infer/support.js'

const fixturePath = (name) => fileURLToPath(new URL(`../fixtures/infer/${name}`, import.meta.url))
const readFixture = (name) => readFileSync(fixturePath(name), 'utf8')
const orderType = () => compileSchema(readFixture('user-order.proto'), 'shop.Order', { filename: 'user-order.proto' })
const order = () => parseJsonExact(readFixture('user-order.json'))
const FLOAT_OF_0_1 = Math.fround(0.1)
const scratch = mkdtempSync(join(tmpdir(), 'pbjson-fidelity-'))
after(() => rmSync(scratch, { recursive: true, force: true }))

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

  it('reports keys the schema has no field for and values a field cannot take, and toMessage refuses them by path', () => {
    const value = order()
    value.items[0].colour = 'red'
    value.status = 'LOST'
    assert.deepStrictEqual(checkFidelity(orderType(), value).examples, [
      { path: '$.status', expected: 'LOST', actual: 'STATUS_UNSPECIFIED' },
      { path: '$.items[0].colour', expected: 'red', actual: undefined },
      { path: '$.items[1].price', expected: 0.1, actual: FLOAT_OF_0_1 }
    ])
    const adapter = createAdapter(orderType())
    assert.throws(() => adapter.toMessage({ items: [{ sku: 'A', colour: 'red' }] }), (err) => err instanceof UsageError && err.message === '$.items[0].colour: shop.Item has no field for key "colour"')
    assert.throws(() => adapter.toMessage({ status: 'LOST' }), /^UsageError: \$\.status: enum Status has no value string "LOST"$/)
    assert.throws(() => adapter.toMessage({ customer: 5 }), /^UsageError: \$\.customer: string field cannot hold number 5$/)
  })

  it('compares numbers exactly: -0 differs from 0, a BigInt equals a number of the same value', () => {
    const { proto, typeName } = inferSchema({ a: 1 })
    const type = compileSchema(proto, typeName)
    assert.deepStrictEqual(checkFidelity(type, { a: -0 }).examples, [{ path: '$.a', expected: -0, actual: 0 }])
    assert.equal(checkFidelity(type, { a: 5n }).lossless, true)
  })
})

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
})

describe('compileSchema', () => {
  const failures = [
    ['a syntax error', 'syntax = "proto3";\nmessage A { int32 x = ; }', 'A', /^bad\.proto: illegal id ';' \(line 2\)$/],
    ['an unknown field type', 'syntax = "proto3";\nmessage A { Missing x = 1; }', 'A', /^bad\.proto: no such Type or Enum 'Missing' in Type \.A$/],
    ['an import of another file', 'syntax = "proto3";\nimport "other.proto";\nmessage A {}', 'A', /^bad\.proto: cannot import "other\.proto"/],
    ['an unknown message type', 'syntax = "proto3";\npackage p;\nmessage A {}', 'B', /^bad\.proto: no message type "B" \(it has p\.A\)$/],
    ['an enum named as the type', 'syntax = "proto3";\nenum E { X = 0; }', 'E', /^bad\.proto: no message type "E"/],
    ['text over the size limit', `syntax = "proto3";\n// ${'x'.repeat(MAX_SCHEMA_BYTES)}\nmessage A {}`, 'A', /more than the 1048576 allowed$/],
    ['something that is not text', Buffer.from('message A {}'), 'A', /schema must be text/]
  ]
  for (const [what, text, typeName, message] of failures) {
    it(`turns ${what} into a one-line UsageError`, () => {
      assert.throws(() => compileSchema(text, typeName, { filename: 'bad.proto' }), (err) => {
        assert.ok(err instanceof UsageError, `${err.name}: ${err.message}`)
        assert.match(err.message, message)
        assert.doesNotMatch(err.message, /\n/)
        return true
      })
    })
  }

  it('finds a type by its simple name and provides the well-known types', () => {
    assert.equal(compileSchema(readFixture('user-order.proto'), 'Order').fullName, '.shop.Order')
  })
})

describe('bin/pbjson.js', () => {
  const pbjson = (...args) => spawnSync(process.execPath, [fileURLToPath(new URL('../../bin/pbjson.js', import.meta.url)), ...args], { encoding: 'utf8' })
  const assertOneLineError = (result, pattern) => {
    assert.equal(result.status, 2, result.stderr)
    assert.match(result.stderr.trim(), pattern)
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
    assert.equal(result.stdout, '')
  }

  it('infer prints the inferred .proto on stdout', () => {
    const result = pbjson('infer', fixturePath('geojson.json'), '--type', 'Collection', '--package', 'geo')
    assert.equal(result.status, 0, result.stderr)
    assert.equal(result.stdout, inferSchema(parseJsonExact(readFixture('geojson.json')), { typeName: 'Collection', packageName: 'geo' }).proto)
    assert.equal(result.stderr, '')
  })

  it('check says lossless and exits 0 for the inferred schema', () => {
    const proto = join(scratch, 'api.proto')
    writeFileSync(proto, pbjson('infer', fixturePath('api-response.json')).stdout)
    const result = pbjson('check', fixturePath('api-response.json'), '--proto', proto, '--type', 'Payload')
    assert.equal(result.status, 0, result.stderr)
    assert.equal(result.stdout, 'lossless\n')
  })

  it('check prints the count and the first differences and exits 1 when lossy', () => {
    const result = pbjson('check', fixturePath('user-order.json'), '--proto', fixturePath('user-order.proto'), '--type', 'shop.Order')
    assert.equal(result.status, 1, result.stderr)
    assert.equal(result.stdout, `lossy: 1 difference\n  $.items[1].price: expected 0.1, actual ${FLOAT_OF_0_1}\n`)
  })

  it('exits 2 with one line on stderr for an unreadable file, invalid JSON, a bad .proto or bad arguments', () => {
    const invalidJson = join(scratch, 'invalid.json')
    writeFileSync(invalidJson, '{"a": [1, 2,]}')
    const badProto = join(scratch, 'bad.proto')
    writeFileSync(badProto, 'message {')
    assertOneLineError(pbjson('infer', join(scratch, 'missing.json')), /^cannot read .*missing\.json: ENOENT$/)
    assertOneLineError(pbjson('infer', invalidJson), /invalid\.json: invalid JSON at line 1, column 13: unexpected character "\]"/)
    assertOneLineError(pbjson('check', fixturePath('user-order.json'), '--proto', badProto), /bad\.proto: illegal/)
    assertOneLineError(pbjson('check', fixturePath('user-order.json')), /Missing required argument: proto/)
    assertOneLineError(pbjson('infer', fixturePath('user-order.json'), '--type', 'not valid'), /invalid message name "not valid"/)
    assertOneLineError(pbjson(), /name a command/)
  })

  it('--help shows the commands and examples', () => {
    const result = pbjson('--help')
    assert.equal(result.status, 0)
    assert.match(result.stdout, /pbjson infer <json>/)
    assert.match(result.stdout, /Examples:/)
  })
})
