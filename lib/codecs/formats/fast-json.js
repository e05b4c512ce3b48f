// "Typed JSON": fast-json-stringify, which compiles a serializer from a JSON Schema, to encode, and
// JSON.parse to decode. The same bytes as JSON, produced faster when the schema is known: the fair
// contender for protobuf's generated code. The schema is derived from the payload (shape.js).
import fastJson from 'fast-json-stringify'
import { mergeShapes, shapeOf } from '../shape.js'
import { codecFor as jsonCodecFor, jsonCodec } from './json.js'

export const format = 'fast-json'
export const binary = false

/**
 * A JSON Schema that describes a shape exactly: integer vs number, nullable types, every key.
 * @param {import('./shape.js').Shape|undefined} shape
 * @returns {object}
 */
export function jsonSchemaOf (shape) {
  if (!shape || shape.kind === 'mixed') return {} // any value: fast-json-stringify falls back to JSON.stringify
  const type = (kind) => shape.nullable && kind !== 'null' ? [kind, 'null'] : kind
  if (shape.kind === 'array') return { type: type('array'), items: jsonSchemaOf(shape.items) }
  if (shape.kind === 'object') {
    // fromEntries, not assignment: a "__proto__" key must stay a key.
    const properties = Object.fromEntries([...shape.fields].map(([key, field]) => [key, jsonSchemaOf(field.shape)]))
    return { type: type('object'), properties }
  }
  return { type: type(shape.kind) }
}

/**
 * The fast-json-stringify codec for a test. Encoding needs the messages' shape; decoding is
 * JSON.parse, which the server can do for a user's payload it has never seen.
 * @param {import('../registry.js').CodecTest} test
 * @returns {import('../registry.js').Codec}
 */
export function codecFor (test) {
  if (test.messages) return typedJsonCodec(test.messages, jsonCodecFor(test).decode)
  return Object.freeze({ ...jsonCodec, name: format })
}

/**
 * The fast-json-stringify codec for some payloads.
 * @param {object[]} payloads the test's plain payloads, to derive the one schema that fits them all from
 * @param {(frame: Buffer) => unknown} decode the JSON decoder the payload needs (exact for BigInts)
 * @returns {import('../registry.js').Codec}
 */
export function typedJsonCodec (payloads, decode) {
  const stringify = fastJson(jsonSchemaOf(payloads.map(shapeOf).reduce(mergeShapes)))
  return Object.freeze({
    name: format,
    binary,
    prepare: (plain) => plain,
    encode: stringify,
    decode,
    toPlain: (value) => value
  })
}
