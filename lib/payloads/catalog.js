import fs from 'node:fs'
import { UsageError } from '../errors.js'
import { buildPeople } from './people.js'
import { STREAM_JSON_BYTES, STREAM_SEED, buildStream, hasStream } from './streams.js'

/**
 * @typedef {object} TestInfo
 * @property {number|null} id test number, as users type it (null: by name only)
 * @property {string} name test name, also accepted wherever a number is
 * @property {string} description
 * @property {string} typeName protobuf message type, in proto/
 * @property {string} protoFile schema file, in proto/
 * @property {string} [dataFile] JSON payload, in data/; absent for payloads built in memory
 */

/**
 * The built-in tests, in order. Each one's message comes from data/generate.js, its stream of varying
 * messages from streams.js (see loadMessages); schemas from proto/.
 */
export const TESTS = Object.freeze([
  { id: 1, name: 'numbers', description: 'only numbers: ints and non-integers, one nested object', typeName: 'bench.Numbers', protoFile: 'numbers.proto', dataFile: '1-numbers.json' },
  { id: 2, name: 'strings', description: 'only strings, one nested object', typeName: 'bench.Strings', protoFile: 'strings.proto', dataFile: '2-strings.json' },
  { id: 3, name: 'medium', description: 'a medium real-life payload: an order, ~45 fields of mixed types', typeName: 'bench.Medium', protoFile: 'medium.proto', dataFile: '3-medium.json' },
  { id: 4, name: 'large', description: 'a large real-life payload, nested 8 levels deep, ~150 fields', typeName: 'bench.Large', protoFile: 'large.proto', dataFile: '4-large.json' },
  { id: 5, name: 'small', description: 'a small real-life payload: { id, status }', typeName: 'bench.Small', protoFile: 'small.proto', dataFile: '5-small.json' },
  { id: null, name: 'people', description: '50,000 persons in one message (~12.9 MB of JSON)', typeName: 'people.People', protoFile: 'people.proto' },
  { id: null, name: 'person', description: 'proto2 Person with phone numbers and an enum (by name in JSON)', typeName: 'person.Person', protoFile: 'person.proto', dataFile: 'person.json' },
  { id: null, name: 'counters', description: 'proto2: 100 x { counter, num } in one message', typeName: 'counters.Counters', protoFile: 'counters.proto', dataFile: 'counters.json' }
].map(Object.freeze))

/** Every built-in test's name, in order: compare's default selection. */
export const ALL_TESTS = Object.freeze(TESTS.map((test) => test.name))

/**
 * Finds a test by number or name (case-insensitive).
 * @param {string|number} idOrName
 * @returns {TestInfo}
 * @throws {UsageError} naming the known tests
 */
export function resolveTest (idOrName) {
  const key = String(idOrName).trim().toLowerCase()
  const test = TESTS.find((t) => (t.id !== null && String(t.id) === key) || t.name === key)
  if (!test) throw new UsageError(`unknown test '${idOrName}': expected one of ${TESTS.map((t) => t.id === null ? t.name : `${t.id} ${t.name}`).join(', ')}`)
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
    payloadCache.set(test.name, test.dataFile
      ? JSON.parse(fs.readFileSync(new URL(`../../data/${test.dataFile}`, import.meta.url), 'utf8'))
      : buildPeople())
  }
  return payloadCache.get(test.name)
}

/**
 * @typedef {object} PayloadKind what a run sends, as reports state it
 * @property {'stream'|'repeated'|'corpus'} kind stream: a built-in test's seeded messages, varying as
 *   real ones do; repeated: one message over and over; corpus: a user's file of many messages
 * @property {number} messages how many distinct messages, sent in turn and cycling
 * @property {number|null} seed the stream's seed, null when nothing was generated
 */

const streamCache = new Map()

/**
 * The messages a run of a built-in test sends, in order (cycling when a run sends more), and what
 * reports say about them. By default the test's stream: enough seeded messages that one cycle holds
 * many times deflate's window. `people` has none: its one message already holds 50,000 varied persons.
 * @param {TestInfo} test
 * @param {{repeat?: boolean}} [options] repeat: the test's one committed message, over and over
 *   (flatters compression, caches and the JIT)
 * @returns {{messages: object[], payload: PayloadKind}} the messages are shared: do not change them
 */
export function loadMessages (test, { repeat = false } = {}) {
  if (repeat || !hasStream(test)) return { messages: [loadPayload(test)], payload: { kind: 'repeated', messages: 1, seed: null } }
  if (!streamCache.has(test.name)) {
    const count = Math.ceil(STREAM_JSON_BYTES / Buffer.byteLength(JSON.stringify(loadPayload(test))))
    streamCache.set(test.name, buildStream(test, count))
  }
  const messages = streamCache.get(test.name)
  return { messages, payload: { kind: 'stream', messages: messages.length, seed: STREAM_SEED } }
}

/**
 * Every message a built-in test may send, repeated or streamed: what codecs that derive a schema
 * from the payload (Avro, typed JSON) derive it from, so it fits whichever a run sends.
 * @param {TestInfo} test
 * @returns {object[]}
 */
export function everyMessage (test) {
  const { messages } = loadMessages(test)
  return messages.length === 1 ? messages : [loadPayload(test), ...messages]
}
