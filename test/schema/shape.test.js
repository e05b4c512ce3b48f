import { test } from 'node:test'
import assert from 'node:assert/strict'
import { UsageError } from '../../lib/errors.js'
import { linkedPathText } from '../../lib/schema/json-exact.js'
import { INT64_MAX, kindOf, learnShape, mergeShape, newShape, observe } from '../../lib/schema/shape.js'

test('learnShape: each JSON kind; exact integers (safe, or BigInt) keep their range, other numbers are doubles', () => {
  const shape = learnShape([null, true, 'x', 3, -7n, 0.5, -0, 2 ** 60])
  const facts = ['null', 'bool', 'string', 'intMin', 'intMax', 'double', 'fraction', 'object', 'array']
  assert.deepEqual(Object.fromEntries(facts.map((fact) => [fact, shape[fact]])), {
    null: true,
    bool: true,
    string: true,
    intMin: -7n,
    intMax: 3,
    double: true, // 0.5, -0 and 2^60: a double holds them, no exact integer does
    fraction: true, // 0.5 alone
    object: null,
    array: null
  })
  assert.equal(learnShape([-0, 2 ** 60]).fraction, false, 'integral numbers, however typed, have no fraction')
  assert.deepEqual(learnShape([]), newShape(), 'nothing seen')
})

test('learnShape: where the first negative integer and the first one past INT64_MAX were', () => {
  const shape = learnShape([{ n: [1, -2, -3, INT64_MAX + 1n, INT64_MAX + 2n] }]).object.keys.get('n').shape.array.element
  assert.deepEqual([linkedPathText(shape.negativeAt), linkedPathText(shape.beyondInt64At)], ['$.n[1]', '$.n[3]'])
  assert.deepEqual([shape.intMin, shape.intMax], [-3, INT64_MAX + 2n])
})

test('learnShape: keys in first-seen order, each counted against the objects seen; array elements at one position', () => {
  const shape = learnShape([{ a: 1, b: 'x' }, { b: 'y', c: [true, null] }, 'not an object'])
  assert.equal(shape.object.instances, 2)
  assert.deepEqual([...shape.object.keys].map(([key, { count }]) => [key, count]), [['a', 1], ['b', 2], ['c', 1]])
  const element = shape.object.keys.get('c').shape.array.element
  assert.deepEqual([element.bool, element.null], [true, true])
  assert.deepEqual(learnShape([[]]).array.element, newShape(), 'an empty array says nothing about its elements')
})

test('observe refuses what is not JSON, and what the caller refuses, naming the path', () => {
  const refuses = (value, message, refuse) => assert.throws(() => observe(newShape(), value, refuse),
    (err) => err instanceof UsageError && err.message === message)
  refuses({ a: [1, Infinity] }, '$.a[1]: Infinity is not a JSON number')
  refuses({ when: new Date(0) }, '$.when: Date is not a JSON value')
  refuses([undefined], '$[0]: undefined is not a JSON value')
  let deep = 1
  for (let level = 0; level < 1000; level++) deep = [deep]
  assert.throws(() => observe(newShape(), deep), /: nesting deeper than 1000 levels$/)
  const noStrings = { value: (value) => typeof value === 'string' ? 'no strings' : undefined, key: (key) => key === 'k' ? 'no k' : undefined }
  refuses({ a: ['x'] }, '$.a[0]: no strings', noStrings)
  refuses({ a: { k: 1 } }, '$.a.k: no k', noStrings)
  // Without refusals, anything JSON is taken: strings protobuf cannot hold, integers past 64 bits.
  assert.equal(learnShape(['\ud800', 2n ** 70n]).intMax, 2n ** 70n)
})

test('mergeShape: the shape of both values, as if one shape had seen them all', () => {
  const values = [{ a: [1, 'x'], b: null }, { a: [-0.5], c: {} }]
  const into = learnShape([values[0]])
  mergeShape(into, learnShape([values[1]]))
  assert.deepEqual(into, learnShape(values))
})

test('kindOf: one kind per position; null makes nullable, integers with other numbers are numbers, other mixtures mixed', () => {
  const kind = (...values) => kindOf(learnShape(values))
  assert.deepEqual([kind(null), kind(true), kind(1), kind(2n ** 64n), kind(-0), kind(0.5), kind('s'), kind([]), kind({})],
    ['null', 'boolean', 'integer', 'integer', 'integer', 'number', 'string', 'array', 'object'])
  assert.equal(kind('s', null), 'string')
  assert.equal(learnShape(['s', null]).null, true, 'null beside a kind: nullable')
  assert.equal(kind(1, 0.5, null), 'number')
  assert.equal(kind(1, '1'), 'mixed')
  assert.equal(kind([1], {}), 'mixed')
  assert.equal(kind(), undefined, 'nothing seen')
  assert.equal(kindOf(learnShape([[]]).array.element), undefined, 'the elements of arrays that were always empty')
})
