// The shape of JSON: what was seen at each position of a document or a corpus (the root, a key of
// an object shape, or the elements of an array shape), over every value seen there. One learner
// serves every schema derived from payloads: infer.js reads integer ranges, presence counts and
// key sets to write a lossless .proto; the Avro and JSON Schema codecs read kindOf.

import { UsageError } from '../errors.js'
import { MAX_JSON_DEPTH, childPath, linkedPathText } from './json-exact.js'

/** The largest signed 64-bit integer: past it only uint64 holds an integer. */
export const INT64_MAX = 2n ** 63n - 1n

/**
 * @typedef {{parent: object|null, key: string|number}|null} Path a JSON path as json-exact.js links it
 */

/**
 * @typedef {object} Shape what was seen at one position
 * @property {boolean} null
 * @property {boolean} bool
 * @property {boolean} string
 * @property {boolean} double a number only a double holds: a fraction, -0, or a whole number past 2^53
 * @property {boolean} fraction a number with a fractional part: what no integer type holds
 * @property {number|bigint|null} intMin least exact integer (safe integer but -0, or BigInt); null: none seen
 * @property {number|bigint|null} intMax greatest exact integer
 * @property {Path} negativeAt where the first negative integer was (null: none, or the root)
 * @property {Path} beyondInt64At where the first integer past INT64_MAX was (null: none, or the root)
 * @property {{keys: Map<string, {shape: Shape, count: number}>, instances: number}|null} object
 *   keys in first-seen order, each with how many of the instances (objects seen) had it
 * @property {{element: Shape}|null} array every element of every array seen
 */

/**
 * What a caller refuses beyond JSON itself (infer.js: what protobuf cannot hold), asked of every
 * key and value as the walk reaches it. Each returns why it refuses, or undefined to take it.
 * A caller's, not the learner's: the Avro and JSON Schema codecs take any JSON.
 * @typedef {object} Refusals
 * @property {(value: unknown) => string|undefined} [value]
 * @property {(key: string) => string|undefined} [key]
 */

/**
 * A shape that has seen nothing yet.
 * @returns {Shape}
 */
export function newShape () {
  return {
    null: false,
    bool: false,
    string: false,
    double: false,
    fraction: false,
    intMin: null,
    intMax: null,
    negativeAt: null,
    beyondInt64At: null,
    object: null,
    array: null
  }
}

/**
 * The shape of some values all seen at one position: messages of a corpus, or one document.
 * @param {Iterable<unknown>} values
 * @param {Refusals} [refuse]
 * @returns {Shape}
 * @throws {UsageError} as observe
 */
export function learnShape (values, refuse) {
  const shape = newShape()
  for (const value of values) observe(shape, value, refuse)
  return shape
}

/**
 * Adds a value, and everything in it, to what a shape has seen.
 * @param {Shape} shape
 * @param {unknown} value a JSON value, as from parseJsonExact (BigInt for big integers) or JSON.parse
 * @param {Refusals} [refuse]
 * @throws {UsageError} naming the JSON path of a value that is not JSON (non-finite numbers,
 *   class instances, undefined, nesting deeper than MAX_JSON_DEPTH) or that `refuse` refuses
 */
export function observe (shape, value, refuse = {}) {
  walk(shape, value, null, 1, refuse)
}

function unrepresentable (path, why) {
  throw new UsageError(`${linkedPathText(path)}: ${why}`)
}

function walk (shape, value, path, depth, refuse) {
  if (depth > MAX_JSON_DEPTH) unrepresentable(path, `nesting deeper than ${MAX_JSON_DEPTH} levels`)
  const refusal = refuse.value?.(value)
  if (refusal) unrepresentable(path, refusal)
  if (value === null) {
    shape.null = true
    return
  }
  switch (typeof value) {
    case 'boolean':
      shape.bool = true
      return
    case 'string':
      shape.string = true
      return
    case 'number':
      if (!Number.isFinite(value)) unrepresentable(path, `${value} is not a JSON number`)
      if (isInteger(value)) observeInteger(shape, value, path)
      else shape.double = true
      shape.fraction ||= !Number.isInteger(value)
      return
    case 'bigint':
      observeInteger(shape, value, path)
      return
    case 'object': {
      const plain = [Object.prototype, null].includes(Object.getPrototypeOf(value))
      if (Array.isArray(value)) walkArray(shape, value, path, depth, refuse)
      else if (plain) walkObject(shape, value, path, depth, refuse)
      else unrepresentable(path, `${value.constructor?.name ?? 'object'} is not a JSON value`)
      return
    }
  }
  unrepresentable(path, `${typeof value} is not a JSON value`)
}

/** An integer for typing: safe integers (not -0, which only double keeps) and BigInts. */
function isInteger (value) {
  return typeof value === 'bigint' || (Number.isSafeInteger(value) && !Object.is(value, -0))
}

function observeInteger (shape, value, path) {
  // Number and BigInt compare exactly with < and >, so the bounds may mix both.
  if (shape.intMin === null || value < shape.intMin) shape.intMin = value
  if (shape.intMax === null || value > shape.intMax) shape.intMax = value
  if (value < 0) shape.negativeAt ??= path
  if (value > INT64_MAX) shape.beyondInt64At ??= path
}

function walkArray (shape, array, path, depth, refuse) {
  shape.array ??= { element: newShape() }
  for (let index = 0; index < array.length; index++) {
    walk(shape.array.element, array[index], childPath(path, index), depth + 1, refuse)
  }
}

function walkObject (shape, object, path, depth, refuse) {
  shape.object ??= { keys: new Map(), instances: 0 }
  shape.object.instances++
  for (const key of Object.keys(object)) {
    const keyPath = childPath(path, key)
    const refusal = refuse.key?.(key)
    if (refusal) unrepresentable(keyPath, refusal)
    let slot = shape.object.keys.get(key)
    if (!slot) shape.object.keys.set(key, slot = { shape: newShape(), count: 0 })
    slot.count++
    walk(slot.shape, object[key], keyPath, depth + 1, refuse)
  }
}

/**
 * Adds what `from` saw into `into`, as if `into` had seen those values too.
 * @param {Shape} into
 * @param {Shape} from
 */
export function mergeShape (into, from) {
  into.null ||= from.null
  into.bool ||= from.bool
  into.string ||= from.string
  into.double ||= from.double
  into.fraction ||= from.fraction
  if (from.intMin !== null && (into.intMin === null || from.intMin < into.intMin)) into.intMin = from.intMin
  if (from.intMax !== null && (into.intMax === null || from.intMax > into.intMax)) into.intMax = from.intMax
  into.negativeAt ??= from.negativeAt
  into.beyondInt64At ??= from.beyondInt64At
  if (from.object) {
    into.object ??= { keys: new Map(), instances: 0 }
    into.object.instances += from.object.instances
    for (const [key, slot] of from.object.keys) {
      if (!into.object.keys.has(key)) into.object.keys.set(key, { shape: newShape(), count: 0 })
      const target = into.object.keys.get(key)
      target.count += slot.count
      mergeShape(target.shape, slot.shape)
    }
  }
  if (from.array) {
    into.array ??= { element: newShape() }
    mergeShape(into.array.element, from.array.element)
  }
}

/**
 * The one kind of value a position holds, for schemas with one type per field (JSON Schema,
 * Avro): null aside (shape.null makes it nullable), integers with other numbers are 'number',
 * any other mixture is 'mixed' (no single type); undefined when nothing was seen there (the
 * elements of arrays that were always empty).
 * @param {Shape} shape
 * @returns {'null'|'boolean'|'integer'|'number'|'string'|'array'|'object'|'mixed'|undefined}
 */
export function kindOf (shape) {
  const kinds = []
  if (shape.bool) kinds.push('boolean')
  if (shape.intMin !== null || shape.double) kinds.push(shape.fraction ? 'number' : 'integer')
  if (shape.string) kinds.push('string')
  if (shape.array) kinds.push('array')
  if (shape.object) kinds.push('object')
  if (kinds.length > 1) return 'mixed'
  return kinds[0] ?? (shape.null ? 'null' : undefined)
}
