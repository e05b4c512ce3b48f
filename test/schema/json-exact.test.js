import assert from 'node:assert/strict'
import { readFileSync, readdirSync } from 'node:fs'
import { describe, it } from 'node:test'
import { UsageError } from '../../lib/errors.js'
import {
  MAX_JSON_DEPTH, childPath, formatJsonPath, linkedPathText, parseJsonExact, setOwn, stringifyJsonExact
} from '../../lib/schema/json-exact.js'

const FIXTURES = new URL('../fixtures/infer/', import.meta.url)
const readFixture = (name) => readFileSync(new URL(name, FIXTURES), 'utf8')
const fixtureNames = readdirSync(FIXTURES).filter((name) => name.endsWith('.json')).sort()

describe('parseJsonExact', () => {
  it('agrees with JSON.parse on every fixture, once big integers are rounded as JSON.parse does', () => {
    const rounded = (value) => JSON.parse(stringifyJsonExact(value))
    for (const name of fixtureNames) assert.deepStrictEqual(rounded(parseJsonExact(readFixture(name))), JSON.parse(readFixture(name)), name)
  })

  it('keeps integers past 2^53 exact as BigInt and everything else as numbers', () => {
    const value = parseJsonExact(readFixture('big-integers.json'))
    assert.equal(value.max_safe, 9007199254740991)
    assert.equal(value.past_2_53, 9007199254740993n)
    assert.equal(value.negative_past_2_53, -9007199254740993n)
    assert.equal(value.uint64_max, 18446744073709551615n)
    assert.deepStrictEqual(parseJsonExact('[1.0, -0, 1e21, 12345678901234567890.5]'), [1, -0, 1e21, 12345678901234567000])
    assert.equal(stringifyJsonExact(parseJsonExact('[-0,18446744073709551615,"a\\u0000"]')), '[-0,18446744073709551615,"a\\u0000"]')
  })

  it('makes __proto__ an own key, as JSON.parse does', () => {
    const value = parseJsonExact('{"__proto__": {"polluted": true}}')
    assert.equal(Object.getPrototypeOf(value), Object.prototype)
    assert.deepStrictEqual(Object.keys(value), ['__proto__'])
    assert.equal({}.polluted, undefined)
  })

  it('rejects invalid JSON with a UsageError giving line and column', () => {
    const cases = [
      ['{"a":1,}', /line 1, column 8: unexpected character "}"/],
      ['{\n  "a": tru\n}', /line 2, column 8/],
      ['', /line 1, column 1: unexpected end of input/],
      ['[1 2]', /column 4/],
      ['01', /unexpected "1" after the JSON value/],
      ['"a\u0001"', /control character in string/],
      ['"\\u12"', /invalid escape in string/],
      ['"open', /unterminated string/],
      ['{"a" 1}', /column 6/],
      ['NaN', /unexpected character "N"/],
      ['1 2', /after the JSON value/],
      // A binary file: the character is named, never written raw to the terminal.
      ['\u007fELF\u0002', /column 1: unexpected character U\+007F \(not a JSON text file\?\)$/],
      ['1\u0000', /unexpected U\+0000 \(not a JSON text file\?\) after the JSON value/]
    ]
    for (const [text, message] of cases) {
      assert.throws(() => parseJsonExact(text), (err) => err instanceof UsageError && message.test(err.message), text)
    }
  })

  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} levels instead of overflowing the stack`, () => {
    const text = '['.repeat(MAX_JSON_DEPTH + 1) + ']'.repeat(MAX_JSON_DEPTH + 1)
    assert.throws(() => parseJsonExact(text), (err) => err instanceof UsageError && /nesting deeper than/.test(err.message))
    assert.equal(parseJsonExact('['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH)).length, 1)
  })
})

describe('stringifyJsonExact', () => {
  it('writes BigInt as its digits and -0 as -0, compact, in key order', () => {
    assert.equal(stringifyJsonExact({ b: 18446744073709551615n, a: [-0, 0, 1.5, null, true, 'q"'] }), '{"b":18446744073709551615,"a":[-0,0,1.5,null,true,"q\\""]}')
    assert.equal(stringifyJsonExact(-12345678901234567890n), '-12345678901234567890')
    // Whatever JSON.stringify writes exactly, it writes the same.
    const plain = parseJsonExact(readFixture('geojson.json'))
    assert.equal(stringifyJsonExact(plain), JSON.stringify(plain))
  })

  it('refuses what JSON cannot express with a TypeError, also deep inside', () => {
    for (const value of [undefined, NaN, Infinity, -Infinity, () => 1, Symbol('s'), { a: [1, undefined] }]) {
      assert.throws(() => stringifyJsonExact(value), TypeError, String(value?.toString?.() ?? value))
    }
  })
})

describe('JSON paths', () => {
  it('formatJsonPath: dots for identifier keys, brackets for indexes and every other key', () => {
    assert.equal(formatJsonPath([]), '$')
    assert.equal(formatJsonPath(['features', 3, 'properties', 'with-dash']), '$.features[3].properties["with-dash"]')
    assert.equal(formatJsonPath(['$ref', '_x1', '1a', '', 'a b', '"']), '$.$ref._x1["1a"][""]["a b"]["\\""]')
    // A numeric-looking key is still a key, not an index.
    assert.equal(formatJsonPath(['0', 0]), '$["0"][0]')
  })

  it('childPath links to its parent without changing it; linkedPathText reads the chain root first', () => {
    assert.equal(linkedPathText(null), '$')
    const items = childPath(null, 'items')
    const second = childPath(items, 2)
    const sibling = childPath(items, 0)
    assert.deepEqual(items, { parent: null, key: 'items' })
    assert.equal(second.parent, items, 'shares the parent, no copy')
    assert.equal(linkedPathText(childPath(second, 'with-dash')), '$.items[2]["with-dash"]')
    assert.equal(linkedPathText(sibling), '$.items[0]')
    assert.equal(linkedPathText(items), '$.items', 'children leave the parent as it was')
  })
})

describe('setOwn', () => {
  it('makes __proto__ an own enumerable key and leaves the prototype alone', () => {
    const object = {}
    setOwn(object, '__proto__', { polluted: true })
    assert.equal(Object.getPrototypeOf(object), Object.prototype)
    assert.deepEqual(Object.keys(object), ['__proto__'])
    assert.deepEqual(Object.getOwnPropertyDescriptor(object, '__proto__'), { value: { polluted: true }, writable: true, enumerable: true, configurable: true })
    assert.equal({}.polluted, undefined)
    assert.equal(stringifyJsonExact(object), '{"__proto__":{"polluted":true}}')
    setOwn(object, '__proto__', 2)
    assert.equal(Object.getOwnPropertyDescriptor(object, '__proto__').value, 2, 'writable: set again')
  })

  it('assigns any other key plainly, last value wins', () => {
    const object = { a: 1 }
    setOwn(object, 'a', 2)
    setOwn(object, 'constructor', 'c')
    assert.deepEqual(Object.entries(object), [['a', 2], ['constructor', 'c']])
  })
})
