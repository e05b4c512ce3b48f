import protobuf from 'protobufjs'
import { fileURLToPath } from 'node:url'
import generated from '../proto/generated.js'
import { UsageError } from './errors.js'
import { TESTS, loadPayload } from './payloads.js'
import { createAdapter } from './fidelity.js'
import { parseJsonExact, stringifyJsonExact } from './infer.js'
import { protobufEsCodec } from './codecs/protobuf-es.js'
import { googleProtobufCodec } from './codecs/google-protobuf.js'
import { cborCodec, msgpackCodec } from './codecs/self-describing.js'
import { typedJsonCodec } from './codecs/typed-json.js'
import { avroCodec } from './codecs/avro.js'

/**
 * @typedef {object} Codec one wire format, bound to one test's schema
 * @property {string} name format name as it appears in URLs and reports
 * @property {boolean} binary true: binary frames; false: text frames
 * @property {boolean} needsSchema
 * @property {(plain: object) => unknown} prepare once per run: the plain payload in the format's
 *   own in-memory form (for protobuf a message instance, as an application using it would hold)
 * @property {(native: unknown) => string|Uint8Array} encode hot path: one message's frame
 * @property {(frame: Buffer) => unknown} decode hot path; throws on input it cannot decode
 * @property {(native: unknown) => object} toPlain back to the plain JSON shape, for fidelity checks
 */

/**
 * Formats a client may name on the wire: JSON and protobuf (protobuf.js generated code) are the
 * question; the others are the alternatives users ask about, each a plug-in of the same interface.
 */
export const FORMATS = Object.freeze(['json', 'protobuf', 'protobuf-es', 'google-protobuf', 'fast-json', 'msgpack', 'cbor', 'avro'])

/** Formats that run a user's own payload (--payload): Avro would need the writer's schema on the server too. */
export const CUSTOM_FORMATS = Object.freeze(['json', 'protobuf', 'fast-json', 'msgpack', 'cbor'])

const PROTO_DIR = fileURLToPath(new URL('../proto/', import.meta.url))
// Every payload carries all of its fields, so restoring proto3 defaults (0, "", false) gives back
// exactly what was sent; 64-bit integers come back as numbers, as JSON has them.
const TO_OBJECT_OPTIONS = Object.freeze({ longs: Number, enums: String })

const jsonCodec = Object.freeze({
  name: 'json',
  binary: false,
  needsSchema: false,
  prepare: (plain) => plain,
  encode: (value) => JSON.stringify(value),
  decode: (frame) => JSON.parse(frame.toString('utf8')),
  toPlain: (value) => value
})

/**
 * JSON for documents JSON.stringify would change: integers past 2^53 (read as BigInt) and -0.
 * Slower than the built-ins, so only used where they are not exact.
 */
const exactJsonCodec = Object.freeze({
  ...jsonCodec,
  encode: stringifyJsonExact,
  decode: (frame) => parseJsonExact(frame.toString('utf8'))
})

function jsonCodecFor (test) {
  if (!test.payload) return jsonCodec
  let builtIn
  try {
    builtIn = JSON.stringify(test.payload)
  } catch {
    return exactJsonCodec // BigInt
  }
  return builtIn === stringifyJsonExact(test.payload) ? jsonCodec : exactJsonCodec
}

/**
 * protobuf.js codec over a user's schema (compiled or inferred): the adapter maps JSON keys,
 * presence, 64-bit integers and unions to and from the schema's fields.
 */
function customProtobufCodec (type) {
  const adapter = createAdapter(type)
  return Object.freeze({
    name: 'protobuf',
    binary: true,
    needsSchema: true,
    prepare: (plain) => adapter.toMessage(plain),
    encode: (message) => type.encode(message).finish(),
    decode: (frame) => type.decode(frame),
    toPlain: (message) => adapter.fromMessage(message)
  })
}

/** protobuf.js codec over a message type, static (generated code) or dynamic (reflection). */
function protobufCodec (name, type) {
  return Object.freeze({
    name,
    binary: true,
    needsSchema: true,
    prepare: (plain) => type.fromObject(plain),
    encode: (message) => type.encode(message).finish(),
    decode: (frame) => type.decode(frame),
    toPlain: (message) => type.toObject(message, TO_OBJECT_OPTIONS)
  })
}

let dynamicRoot
function dynamicType (typeName) {
  dynamicRoot ??= new protobuf.Root().loadSync(
    [...new Set(TESTS.map((test) => PROTO_DIR + test.protoFile))],
    { keepCase: true }
  )
  return dynamicRoot.lookupType(typeName)
}

function staticType (typeName) {
  return typeName.split('.').reduce((namespace, part) => namespace[part], generated)
}

const codecCache = new Map()

/**
 * The codec for a format and test: one of FORMATS, or 'protobuf-dynamic' (protobuf.js reflection,
 * for benchmarks). A custom test (a user's payload, or
 * a schema a client registered) brings its own protobuf.js type.
 * @param {string} format
 * @param {import('./payloads.js').TestInfo|import('./custom-payload.js').CustomTest|{custom: true, type: object}} test
 * @returns {Codec}
 * @throws {UsageError} for an unknown format
 */
export function createCodec (format, test) {
  if (test.custom) return customCodec(format, test)
  const key = `${format}:${test.name}`
  if (!codecCache.has(key)) codecCache.set(key, buildCodec(format, test))
  return codecCache.get(key)
}

/**
 * A user's payload: the client has it (and its protobuf type); the server has only what the
 * connection told it, so formats that need the payload's schema to decode (Avro) are refused.
 */
function customCodec (format, test) {
  switch (format) {
    case 'json': return jsonCodecFor(test)
    case 'protobuf': return customProtobufCodec(test.type)
    // Encoding needs the payload's shape; decoding is JSON.parse, which the server can do without it.
    case 'fast-json': return test.payload ? typedJsonCodec(test.payload, jsonCodecFor(test).decode) : Object.freeze({ ...jsonCodec, name: 'fast-json', needsSchema: true })
    case 'msgpack': return msgpackCodec
    case 'cbor': return cborCodec
    default: throw new UsageError(`format '${format}' does not support custom payloads: use ${CUSTOM_FORMATS.join(', ')}`)
  }
}

function buildCodec (format, test) {
  switch (format) {
    case 'json': return jsonCodec
    case 'protobuf': return protobufCodec(format, staticType(test.typeName))
    case 'protobuf-dynamic': return protobufCodec(format, dynamicType(test.typeName))
    case 'protobuf-es': return protobufEsCodec(test)
    case 'google-protobuf': return googleProtobufCodec(dynamicType(test.typeName))
    case 'fast-json': return typedJsonCodec(loadPayload(test), jsonCodec.decode)
    case 'msgpack': return msgpackCodec
    case 'cbor': return cborCodec
    case 'avro': return avroCodec(loadPayload(test))
    default: throw new UsageError(`unknown format '${format}': expected one of ${FORMATS.join(', ')}`)
  }
}
