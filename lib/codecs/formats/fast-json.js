// "Typed JSON": fast-json-stringify, which compiles a serializer from a JSON Schema, to encode, and
// JSON.parse to decode. The same bytes as JSON, produced faster when the schema is known: the fair
// contender for protobuf's generated code. The schema is derived from the payload (lib/schema/shape.js).
import fastJson from 'fast-json-stringify'
import { kindOf, learnShape } from '../../schema/shape.js'
import { codecFor as jsonCodecFor, jsonCodec } from './json.js'
import { plainCodec } from '../registry.js'

export const format = 'fast-json'
export const binary = false

/**
 * A JSON Schema that describes a shape exactly: integer vs number, nullable types, every key.
 * @param {import('../../schema/shape.js').Shape} shape
 * @returns {object}
 */
export function jsonSchemaOf (shape) {
  const kind = kindOf(shape)
  if (!kind || kind === 'mixed') return {} // any value: fast-json-stringify falls back to JSON.stringify
  const type = shape.null && kind !== 'null' ? [kind, 'null'] : kind
  if (kind === 'array') return { type, items: jsonSchemaOf(shape.array.element) }
  if (kind === 'object') {
    // fromEntries, not assignment: a "__proto__" key must stay a key.
    const properties = Object.fromEntries([...shape.object.keys].map(([key, slot]) => [key, jsonSchemaOf(slot.shape)]))
    return { type, properties }
  }
  return { type }
}

/**
 * The fast-json-stringify codec for a test. Encoding needs the messages' shape; decoding is
 * JSON.parse, which the server can do for a user's payload it has never seen.
 * @param {import('../registry.js').CodecTest} test
 * @returns {import('../registry.js').Codec}
 */
export function codecFor (test) {
  if (test.messages) return typedJsonCodec(test.messages, jsonCodecFor(test).decode)
  return plainCodec(format, binary, jsonCodec.encode, jsonCodec.decode)
}

/**
 * The fast-json-stringify codec for some payloads.
 * @param {object[]} payloads the test's plain payloads, to derive the one schema that fits them all from
 * @param {(frame: Buffer) => unknown} decode the JSON decoder the payload needs (exact for BigInts)
 * @returns {import('../registry.js').Codec}
 */
export function typedJsonCodec (payloads, decode) {
  return plainCodec(format, binary, fastJson(jsonSchemaOf(learnShape(payloads))), decode)
}
