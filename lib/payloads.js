import fs from 'node:fs'
import { UsageError } from './errors.js'

/**
 * @typedef {object} TestInfo
 * @property {number} id test number, as users type it
 * @property {string} name test name, also accepted wherever a number is
 * @property {string} description
 * @property {string} typeName protobuf message type, in proto/
 * @property {string} dataFile JSON payload, in data/
 */

/** The built-in tests, in order. Payloads come from data/generate.js; schemas from proto/. */
export const TESTS = Object.freeze([
  { id: 1, name: 'numbers', description: 'only numbers: ints and non-integers, one nested object', typeName: 'bench.Numbers', dataFile: '1-numbers.json' },
  { id: 2, name: 'strings', description: 'only strings, one nested object', typeName: 'bench.Strings', dataFile: '2-strings.json' },
  { id: 3, name: 'medium', description: 'a medium real-life payload: an order, ~45 fields of mixed types', typeName: 'bench.Medium', dataFile: '3-medium.json' },
  { id: 4, name: 'large', description: 'a large real-life payload, nested 8 levels deep, ~150 fields', typeName: 'bench.Large', dataFile: '4-large.json' },
  { id: 5, name: 'small', description: 'a small real-life payload: { id, status }', typeName: 'bench.Small', dataFile: '5-small.json' }
].map(Object.freeze))

/**
 * Finds a test by number or name (case-insensitive).
 * @param {string|number} idOrName
 * @returns {TestInfo}
 * @throws {UsageError} naming the known tests
 */
export function resolveTest (idOrName) {
  const key = String(idOrName).trim().toLowerCase()
  const test = TESTS.find((t) => String(t.id) === key || t.name === key)
  if (!test) throw new UsageError(`unknown test '${idOrName}': expected one of ${TESTS.map((t) => `${t.id} ${t.name}`).join(', ')}`)
  return test
}

const payloadCache = new Map()

/**
 * The test's payload as a plain JSON object, read once and cached.
 * @param {TestInfo} test
 * @returns {object}
 */
export function loadPayload (test) {
  if (!payloadCache.has(test.name)) {
    const file = new URL(`../data/${test.dataFile}`, import.meta.url)
    payloadCache.set(test.name, JSON.parse(fs.readFileSync(file, 'utf8')))
  }
  return payloadCache.get(test.name)
}
