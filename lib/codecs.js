import protobuf from 'protobufjs'
import { fileURLToPath } from 'node:url'
import generated from '../proto/generated.js'
import { UsageError } from './errors.js'
import { TESTS } from './payloads.js'

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

/** Formats a client may name on the wire. */
export const FORMATS = Object.freeze(['json', 'protobuf'])

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
 * The codec for a format and test: 'json', 'protobuf' (protobuf.js generated code) or
 * 'protobuf-dynamic' (protobuf.js reflection, for benchmarks).
 * @param {string} format
 * @param {import('./payloads.js').TestInfo} test
 * @returns {Codec}
 * @throws {UsageError} for an unknown format
 */
export function createCodec (format, test) {
  const key = `${format}:${test.name}`
  if (!codecCache.has(key)) codecCache.set(key, buildCodec(format, test))
  return codecCache.get(key)
}

function buildCodec (format, test) {
  switch (format) {
    case 'json': return jsonCodec
    case 'protobuf': return protobufCodec(format, staticType(test.typeName))
    case 'protobuf-dynamic': return protobufCodec(format, dynamicType(test.typeName))
    default: throw new UsageError(`unknown format '${format}': expected one of ${FORMATS.join(', ')}`)
  }
}
