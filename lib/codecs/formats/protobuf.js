// protobuf.js: the code pbjs generates into proto/generated.js (what an application ships) for a
// built-in test, and a user's own schema (given or inferred) through the JSON adapter. Reflection
// over the same schema (dynamicCodec) is for benchmarks, beside the generated code.
import generated from '../../../proto/generated.js'
import { createAdapter } from '../../schema/adapter.js'

export const format = 'protobuf'
export const binary = true
/** The server learns a user's schema from the client (the registration frame) before its first message. */
export const registersSchema = true
export const lossHint = 'fix the schema'

// Every payload carries all of its fields, so restoring proto3 defaults (0, "", false) gives back
// exactly what was sent; 64-bit integers come back as numbers, as JSON has them.
const TO_OBJECT_OPTIONS = Object.freeze({ longs: Number, enums: String })

/**
 * protobuf.js codec over a message type: generated code or reflection.
 * @param {string} name
 * @param {object} type a generated class or a protobufjs Type (the same interface)
 * @returns {import('../registry.js').Codec}
 */
function typeCodec (name, type) {
  return Object.freeze({
    name,
    binary,
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
    name: format,
    binary,
    prepare: (plain) => adapter.toMessage(plain),
    encode: (message) => type.encode(message).finish(),
    decode: (frame) => type.decode(frame),
    toPlain: (message) => adapter.fromMessage(message)
  })
}

const generatedType = (typeName) => typeName.split('.').reduce((namespace, part) => namespace[part], generated)

/**
 * The protobuf.js codec for a test: generated code for a built-in test, the user's schema for a
 * payload of their own.
 * @param {import('../registry.js').CodecTest} test
 * @returns {import('../registry.js').Codec}
 */
export function codecFor (test) {
  return test.custom ? customCodec(test.type) : typeCodec(format, generatedType(test.typeName))
}

/**
 * protobuf.js by reflection over a message type (no generated code): for benchmarks.
 * @param {import('protobufjs').Type} type
 * @returns {import('../registry.js').Codec}
 */
export function dynamicCodec (type) {
  return typeCodec('protobuf-dynamic', type)
}
