import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mergeShapes, shapeOf } from '../../lib/codecs/shape.js'

test('shapeOf: each JSON kind, integers (number or BigInt) apart from other numbers', () => {
  assert.deepEqual(shapeOf(null), { kind: 'null', nullable: true })
  assert.deepEqual(shapeOf(true), { kind: 'boolean', nullable: false })
  assert.deepEqual(shapeOf(3), { kind: 'integer', nullable: false })
  assert.deepEqual(shapeOf(2n ** 64n), { kind: 'integer', nullable: false })
  assert.deepEqual(shapeOf(0.5), { kind: 'number', nullable: false })
  assert.deepEqual(shapeOf('s'), { kind: 'string', nullable: false })
  assert.deepEqual(shapeOf([]), { kind: 'array', nullable: false, items: undefined }, 'an empty array says nothing about its items')
})

test('shapeOf: objects keep their keys in first-seen order; array elements are merged', () => {
  const shape = shapeOf({ z: 1, a: [1, 2.5, null] })
  assert.deepEqual([...shape.fields.keys()], ['z', 'a'])
  assert.deepEqual(shape.fields.get('a'), { shape: { kind: 'array', nullable: false, items: { kind: 'number', nullable: true } }, optional: false })
})

test('mergeShapes: a key some objects lack is optional, in first-seen order across both', () => {
  const merged = shapeOf([{ a: 1, b: 'x' }, { b: 'y', c: true }]).items
  assert.deepEqual([...merged.fields].map(([key, { shape, optional }]) => [key, shape.kind, optional]), [
    ['a', 'integer', true],
    ['b', 'string', false],
    ['c', 'boolean', true]
  ])
  // Optional on either side stays optional.
  const once = mergeShapes(shapeOf({ a: 1 }), shapeOf({}))
  assert.equal(mergeShapes(once, shapeOf({ a: 2 })).fields.get('a').optional, true)
})

test('mergeShapes: null makes nullable, integer with number is number, other mixtures are mixed', () => {
  assert.deepEqual(mergeShapes(shapeOf(null), shapeOf('s')), { kind: 'string', nullable: true })
  assert.deepEqual(mergeShapes(shapeOf(1), shapeOf(null)), { kind: 'integer', nullable: true })
  assert.deepEqual(mergeShapes(shapeOf(1), shapeOf(0.5)), { kind: 'number', nullable: false })
  assert.deepEqual(mergeShapes(shapeOf(1), shapeOf('1')), { kind: 'mixed', nullable: false })
  assert.deepEqual(mergeShapes(shapeOf([1]), shapeOf({})), { kind: 'mixed', nullable: false })
  assert.equal(mergeShapes(mergeShapes(shapeOf(null), shapeOf(1)), shapeOf('x')).nullable, true, 'nullable survives a later mixture')
  assert.equal(mergeShapes(undefined, shapeOf(1)).kind, 'integer')
  assert.equal(mergeShapes(shapeOf(1), undefined).kind, 'integer')
  // Items from an empty array and a filled one: the filled one's.
  assert.deepEqual(mergeShapes(shapeOf([]), shapeOf(['a'])), { kind: 'array', nullable: false, items: { kind: 'string', nullable: false } })
})
