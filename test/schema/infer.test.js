import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { UsageError } from '../../lib/errors.js'
import { compileSchema } from '../../lib/schema/compile.js'
import { checkFidelity } from '../../lib/schema/fidelity.js'
import { MAX_MESSAGE_DEPTH, inferSchema } from '../../lib/schema/infer.js'
import { parseJsonExact, stringifyJsonExact } from '../../lib/schema/json-exact.js'
import { deepDocuments, fiveMegabyteDocument, roundTrip } from '../fixtures/infer/support.js'

const FIXTURES = new URL('../fixtures/infer/', import.meta.url)
const readFixture = (name) => readFileSync(new URL(name, FIXTURES), 'utf8')
const fixtureNames = readdirSync(FIXTURES).filter((name) => name.endsWith('.json')).sort()

// CI installs protoc: there, its absence fails the checks rather than skipping them.
const protocAvailable = Boolean(process.env.CI) || !spawnSync('protoc', ['--version']).error
const scratch = mkdtempSync(join(tmpdir(), 'pbjson-test-'))
after(() => rmSync(scratch, { recursive: true, force: true }))

/** Runs protoc on the schema text; returns its stderr, or null when it accepted the file. */
function protocErrors (proto, name) {
  const file = join(scratch, `${name}.proto`)
  writeFileSync(file, proto)
  const result = spawnSync('protoc', [`--proto_path=${scratch}`, `--descriptor_set_out=${join(scratch, `${name}.pb`)}`, file], { encoding: 'utf8' })
  return result.status === 0 ? null : result.stderr
}

/** Every check a document must pass: compiles (protobufjs, protoc), deterministic, exact round trip. */
function assertLossless (t, value, name) {
  const inferred = inferSchema(value)
  assert.equal(inferSchema(value).proto, inferred.proto, 'same input, same schema')
  assert.equal(inferSchema(parseJsonExact(stringifyJsonExact(value))).proto, inferred.proto, 'same after a text round trip')
  const type = compileSchema(inferred.proto, inferred.typeName)
  assert.deepEqual(checkFidelity(type, value), { lossless: true, differences: 0, examples: [] })
  assert.deepStrictEqual(roundTrip(type, value), value)
  if (!protocAvailable) t.diagnostic('protoc not on PATH: skipped the protoc check')
  else assert.equal(protocErrors(inferred.proto, name), null)
  return { ...inferred, type }
}

/** Field of a compiled message by its JSON key. */
const fieldByKey = (type, key) => type.fieldsArray.find((field) => (field.options?.json_name ?? field.name) === key)

describe('inferSchema fixtures round-trip exactly, deterministically, and compile with protobufjs and protoc', () => {
  if (!protocAvailable) it('protoc is not on PATH: the protoc checks are skipped', (t) => t.skip('install protobuf-compiler to run them'))
  for (const name of fixtureNames) {
    it(name, (t) => { assertLossless(t, parseJsonExact(readFixture(name)), name.replace('.json', '')) })
  }

  for (const name of ['api-response', 'geojson']) {
    it(`${name}.json gives the reviewed schema ${name}.proto`, () => {
      const { proto } = inferSchema(parseJsonExact(readFixture(`${name}.json`)))
      assert.equal(proto, readFixture(`${name}.proto`), `regenerate with: node bin/pbjson.js infer test/fixtures/infer/${name}.json > test/fixtures/infer/${name}.proto`)
    })
  }
})

describe('inferSchema types', () => {
  it('picks integer types from the range of all values seen', () => {
    const { proto, typeName } = inferSchema(parseJsonExact(readFixture('big-integers.json')))
    const type = compileSchema(proto, typeName)
    const expected = {
      small: 'int32',
      int32_max: 'int32',
      int32_min: 'sint32',
      beyond_int32: 'int64',
      past_2_53: 'int64',
      negative_past_2_53: 'sint64',
      int64_min: 'sint64',
      uint64_max: 'uint64',
      ids: 'uint64',
      signed_ids: 'sint64'
    }
    for (const [key, fieldType] of Object.entries(expected)) assert.equal(fieldByKey(type, key).type, fieldType, key)
  })

  it('carries integers past 2^53 through protobufjs unchanged', () => {
    const { proto, typeName } = inferSchema(parseJsonExact(readFixture('big-integers.json')))
    const value = parseJsonExact('{"past_2_53": 9007199254740993, "negative_past_2_53": -9223372036854775807, "uint64_max": 18446744073709551615, "ids": [18446744073709551614], "signed_ids": [-9223372036854775808], "big_and_fraction": [-1234567890123456789, 0.5]}')
    assert.deepStrictEqual(roundTrip(compileSchema(proto, typeName), value), value)
  })

  it('makes any non-integer a double and keeps -0', () => {
    const type = compileSchema(...Object.values(inferSchema(parseJsonExact(readFixture('numbers.json')))))
    for (const key of ['fraction', 'integral_float_text', 'negative_zero', 'tiny', 'ints_then_floats', 'zeros']) {
      assert.equal(fieldByKey(type, key).type, key === 'integral_float_text' ? 'int32' : 'double', key)
    }
    assert.ok(Object.is(roundTrip(type, { negative_zero: -0 }).negative_zero, -0))
  })

  it('keeps 0, "", false, null and absent apart', (t) => {
    const { type } = assertLossless(t, parseJsonExact(readFixture('nulls-and-presence.json')), 'presence')
    const rows = parseJsonExact(readFixture('nulls-and-presence.json')).rows
    assert.deepStrictEqual(roundTrip(type, { rows }).rows, rows)
    assert.deepStrictEqual(Object.keys(roundTrip(type, { rows: [{}] }).rows[0]), [])
  })

  it('unions the keys of array elements in first-seen order and unifies each field', () => {
    const { proto } = inferSchema(parseJsonExact(readFixture('key-union.json')))
    const item = proto.slice(proto.indexOf('message PayloadItem {'))
    assert.match(item, /message PayloadItem \{\n {2}optional double id = 1;\n {2}StringOrNull name = 2;\n {2}StringList tags = 3;\n {2}optional string email = 4;\n {2}ExtraOrNull extra = 5;\n\}/)
  })

  it('names fields safely, keeps the original key in json_name, and never repeats a name', () => {
    const { proto, typeName } = inferSchema(parseJsonExact(readFixture('odd-keys.json')))
    for (const [key, field] of [['with-dash', 'with_dash'], ['has space', 'has_space'], ['123abc', 'field_123abc'], ['constructor', 'constructor_']]) {
      assert.match(proto, new RegExp(` ${field} = \\d+ \\[json_name = ${JSON.stringify(key).replace(/[$]/g, '\\$&')}\\];`), key)
    }
    const type = compileSchema(proto, typeName)
    const normalized = type.fieldsArray.map((field) => field.name.replace(/_/g, '').toLowerCase())
    assert.equal(new Set(normalized).size, normalized.length, 'unique ignoring case and underscores, as protoc requires')
    const messages = [...proto.matchAll(/^message (\w+)/gm)].map(([, name]) => name)
    assert.equal(new Set(messages).size, messages.length)
  })

  it('renames keywords and keeps the root name for the root', () => {
    const { proto, typeName } = inferSchema(parseJsonExact(readFixture('keywords.json')))
    assert.equal(typeName, 'pbjson.Payload')
    for (const keyword of ['message', 'package', 'syntax', 'option', 'string', 'int32', 'true']) assert.match(proto, new RegExp(` ${keyword}_ = \\d+ \\[json_name = "${keyword}"\\];`))
    assert.match(proto, /^message Payload2 \{/m)
  })

  it('writes unicode keys (astral, NUL) so that protoc and protobufjs both read them back', () => {
    const { proto, typeName } = inferSchema(parseJsonExact(readFixture('unicode.json')))
    const keys = compileSchema(proto, typeName).fieldsArray.map((field) => field.options?.json_name ?? field.name)
    assert.deepStrictEqual(keys, Object.keys(parseJsonExact(readFixture('unicode.json'))))
  })

  it('uses a value message for a key or array holding several JSON kinds', () => {
    const { proto } = inferSchema(parseJsonExact('{"a": [1, "x"], "b": 1}'))
    assert.match(proto, /repeated Int32OrString a = 1;/)
    assert.match(proto, /message Int32OrString \{\n {2}oneof kind \{\n {4}int32 integer_value = 1;\n {4}string string_value = 2;\n {2}\}\n\}/)
  })

  it('is deterministic and follows first-seen key order', () => {
    const { proto } = inferSchema(parseJsonExact('{"zeta": 1, "alpha": 2, "mid": {"b": true, "a": false}}'))
    assert.match(proto, /optional int32 zeta = 1;\n {2}optional int32 alpha = 2;\n {2}Mid mid = 3;/)
    assert.match(proto, /message Mid \{\n {2}optional bool b = 1;\n {2}optional bool a = 2;\n\}/)
  })

  it('takes the type and package names from the options and rejects invalid ones', () => {
    const { proto, typeName } = inferSchema({ a: 1 }, { typeName: 'Order', packageName: 'shop.v1' })
    assert.equal(typeName, 'shop.v1.Order')
    assert.match(proto, /^package shop\.v1;$/m)
    assert.throws(() => inferSchema({}, { typeName: 'has space' }), UsageError)
    assert.throws(() => inferSchema({}, { packageName: '1x' }), UsageError)
  })
})

describe('inferSchema refuses what no protobuf type holds exactly, naming the JSON path', () => {
  const cases = [
    ['an integer beyond 64 bits', '{"a": {"b": [1, 123456789012345678901234567890]}}', '$.a.b[1]', /does not fit in 64 bits/],
    ['a negative one below -2^63', '{"x": -9223372036854775809}', '$.x', /does not fit in 64 bits/],
    ['negatives mixed with integers above int64', '{"ids": [-1, 18446744073709551615]}', '$.ids[1]', /\$\.ids\[0\] is negative/],
    ['a number JSON cannot write (1e400 parses as Infinity)', '{"big": [1e400]}', '$.big[0]', /not a JSON number/],
    ['a string with an unpaired surrogate', '{"s": ["ok", "\\ud800"]}', '$.s[1]', /unpaired UTF-16 surrogate/],
    ['a key with an unpaired surrogate', '{"o": {"\\udc00x": 1}}', '$.o["\\udc00x"]', /unpaired UTF-16 surrogate/]
  ]
  for (const [what, text, path, reason] of cases) {
    it(what, () => {
      assert.throws(() => inferSchema(parseJsonExact(text)), (err) => err instanceof UsageError && err.message.startsWith(`${path}: `) && reason.test(err.message))
    })
  }

  it('values that are not JSON', () => {
    assert.throws(() => inferSchema({ when: new Date(0) }), /^UsageError: \$\.when: Date is not a JSON value$/)
    assert.throws(() => inferSchema({ a: [undefined] }), /\$\.a\[0\]: undefined is not a JSON value/)
  })
})

describe('large and deep documents', () => {
  it('200 levels of nesting round-trip: levels past protobuf\'s depth limit travel as exact JSON text', (t) => {
    const { objects, arrays } = deepDocuments()
    for (const [name, value] of [['deep-objects', objects], ['deep-arrays', arrays]]) {
      const { proto } = assertLossless(t, value, name)
      assert.match(proto, /^message JsonText \{/m, name)
      assert.ok([...proto.matchAll(/^message /gm)].length <= MAX_MESSAGE_DEPTH + 1, name)
    }
  })

  it('a 5 MB document parses like JSON.parse and round-trips', (t) => {
    const text = fiveMegabyteDocument()
    assert.ok(text.length >= 5_000_000, `document is ${text.length} characters`)
    const value = parseJsonExact(text)
    assert.deepStrictEqual(value, JSON.parse(text))
    assertLossless(t, value, 'five-megabytes')
  })
})
