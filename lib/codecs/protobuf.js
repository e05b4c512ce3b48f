// protobuf.js: static (the code pbjs generates into proto/generated.js, what an application ships),
// dynamic (reflection over proto/, for benchmarks) and a user's own schema through the JSON adapter.
import { fileURLToPath } from 'node:url'
import protobuf from 'protobufjs'
import generated from '../../proto/generated.js'
import { TESTS } from '../payloads/catalog.js'
import { createAdapter } from '../schema/adapter.js'

const PROTO_DIR = fileURLToPath(new URL('../../proto/', import.meta.url))
// Every payload carries all of its fields, so restoring proto3 defaults (0, "", false) gives back
// exactly what was sent; 64-bit integers come back as numbers, as JSON has them.
const TO_OBJECT_OPTIONS = Object.freeze({ longs: Number, enums: String })

/** protobuf.js codec over a message type, static (generated code) or dynamic (reflection). */
function typeCodec (name, type) {
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

/**
 * protobuf.js codec over a user's schema (compiled or inferred): the adapter maps JSON keys,
 * presence, 64-bit integers and unions to and from the schema's fields.
 */
function customCodec (type) {
  // Lenient: what the schema cannot hold is left out. The fidelity check has already said what
  // that is, and a run only goes on with it under --allow-lossy.
  const adapter = createAdapter(type, { strict: false })
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

let dynamicRoot
/**
 * A built-in test's message type by reflection over proto/ (loaded once).
 * @param {string} typeName e.g. `bench.Medium`
 * @returns {protobuf.Type}
 */
export function dynamicType (typeName) {
  dynamicRoot ??= new protobuf.Root().loadSync(
    [...new Set(TESTS.map((test) => PROTO_DIR + test.protoFile))],
    { keepCase: true }
  )
  return dynamicRoot.lookupType(typeName)
}

function staticType (typeName) {
  return typeName.split('.').reduce((namespace, part) => namespace[part], generated)
}

/**
 * The protobuf.js codec for a test: `protobuf` (generated code) or `protobuf-dynamic`
 * (reflection); a custom test brings its own type.
 * @param {object} test a catalog test, or a custom one with `type`
 * @param {'protobuf'|'protobuf-dynamic'} format
 * @returns {import('./registry.js').Codec}
 */
export function codecFor (test, format) {
  if (test.custom) return customCodec(test.type)
  return typeCodec(format, format === 'protobuf' ? staticType(test.typeName) : dynamicType(test.typeName))
}
