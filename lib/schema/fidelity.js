// Whether a schema, or any codec, carries a JSON document through encode and decode unchanged,
// and where not: JSON paths with expected and actual values.
import { UsageError } from '../errors.js'
import { createAdapter } from './adapter.js'
import { formatJsonPath, stringifyJsonExact } from './json-exact.js'

const isPlainObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value)

/**
 * Encodes the JSON with the type, decodes it and converts back, then compares with the input.
 * Keys the schema has no field for, and values a field cannot take, are left out and so count
 * as differences; numbers compare exactly (-0 differs from 0; a BigInt equals a number of the
 * same value); key order is ignored.
 * @param {protobuf.Type} type message type
 * @param {*} json the document, ideally from parseJsonExact so big integers are exact
 * @param {object} [options]
 * @param {number} [options.maxExamples=5] how many differences to describe
 * @returns {{ lossless: boolean, differences: number, examples: Array<{ path: string, expected: *, actual: * }> }}
 *   `expected` / `actual` are undefined where the key or element is absent
 * @throws {UsageError} when protobufjs cannot encode or decode the message (e.g. nesting beyond its limit)
 */
export function checkFidelity (type, json, { maxExamples = 5 } = {}) {
  const adapter = createAdapter(type, { strict: false })
  let decoded
  try {
    decoded = type.decode(type.encode(adapter.toMessage(json)).finish())
  } catch (err) {
    throw new UsageError(`${type.fullName.slice(1)}: cannot encode or decode this document: ${err.message}`)
  }
  return jsonDifferences(json, adapter.fromMessage(decoded), { maxExamples })
}

/**
 * Where two JSON values differ: how many values, and the first few JSON paths with expected vs
 * actual (BigInt and number compare by value; -0 and 0 differ; absent shows as undefined).
 * @param {*} expected
 * @param {*} actual
 * @param {{maxExamples?: number}} [options]
 * @returns {{lossless: boolean, differences: number, examples: Array<{path: string, expected: *, actual: *}>}}
 */
export function jsonDifferences (expected, actual, { maxExamples = 5 } = {}) {
  const examples = []
  let differences = 0
  compareJson(expected, actual, [], (path, wanted, found) => {
    differences++
    if (examples.length < maxExamples) examples.push({ path: formatJsonPath(path), expected: wanted, actual: found })
  })
  return { lossless: differences === 0, differences, examples }
}

/**
 * Whether a codec carries a payload unchanged: decode(encode(x)), back in plain form, against x.
 * @param {{name: string, prepare: Function, encode: Function, decode: Function, toPlain: Function}} codec
 * @param {*} payload
 * @param {{maxExamples?: number}} [options]
 * @returns {ReturnType<typeof jsonDifferences>}
 */
export function checkCodecFidelity (codec, payload, options) {
  let back
  try {
    back = codec.toPlain(codec.decode(Buffer.from(codec.encode(codec.prepare(payload)))))
  } catch (err) {
    throw new UsageError(`${codec.name} cannot carry this document: ${err.message}`)
  }
  return jsonDifferences(payload, back, options)
}

function sameNumber (a, b) {
  if (typeof a === 'number' && typeof b === 'number') return Object.is(a, b)
  const [big, other] = typeof a === 'bigint' ? [a, b] : [b, a]
  return Number.isInteger(other) ? BigInt(other) === big : other === big
}

function compareJson (expected, actual, path, report) {
  const numeric = (value) => typeof value === 'number' || typeof value === 'bigint'
  if (numeric(expected) && numeric(actual)) {
    if (!sameNumber(expected, actual)) report(path, expected, actual)
  } else if (Array.isArray(expected) && Array.isArray(actual)) {
    for (let index = 0; index < Math.max(expected.length, actual.length); index++) {
      compareJson(expected[index], actual[index], [...path, index], report)
    }
  } else if (isPlainObject(expected) && isPlainObject(actual)) {
    for (const key of Object.keys(expected)) {
      if (Object.hasOwn(actual, key)) compareJson(expected[key], actual[key], [...path, key], report)
      else report([...path, key], expected[key], undefined)
    }
    for (const key of Object.keys(actual)) {
      if (!Object.hasOwn(expected, key)) report([...path, key], undefined, actual[key])
    }
  } else if (expected !== actual) {
    report(path, expected, actual)
  }
}

/**
 * Checks every message of a corpus with one check (a schema's or a codec's) and adds up the
 * differences; with more than one message, each example's path names its message (`line 12: $.a`).
 * @param {Array<{value: *, where: string}>} messages
 * @param {(value: *) => {lossless: boolean, differences: number, examples: object[]}} check
 * @param {{maxExamples?: number}} [options]
 * @returns {{lossless: boolean, differences: number, messages: number, examples: Array<{path: string, expected: *, actual: *}>}}
 *   messages: how many of them changed
 */
export function checkMessages (messages, check, { maxExamples = 5 } = {}) {
  const named = messages.length > 1
  let differences = 0
  let changed = 0
  const examples = []
  for (const { value, where } of messages) {
    let result
    try {
      result = check(value)
    } catch (err) {
      // A message the format cannot carry at all: which one, for a corpus.
      throw named && err instanceof UsageError ? new UsageError(`${where}: ${err.message}`) : err
    }
    if (result.lossless) continue
    differences += result.differences
    changed++
    for (const example of result.examples) {
      if (examples.length < maxExamples) examples.push(named ? { ...example, path: `${where}: ${example.path}` } : example)
    }
  }
  return { lossless: differences === 0, differences, messages: changed, examples }
}

/**
 * One difference as people read it: `$.a.b: expected 0.1, actual 0.10000000149011612`.
 * @param {{path: string, expected: *, actual: *}} difference
 * @returns {string}
 */
export function formatDifference ({ path, expected, actual }) {
  const shown = (value) => {
    if (value === undefined) return '(absent)'
    const text = stringifyJsonExact(value)
    return text.length > 80 ? `${text.slice(0, 77)}...` : text
  }
  return `${path}: expected ${shown(expected)}, actual ${shown(actual)}`
}
