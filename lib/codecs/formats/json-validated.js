// json-validated: JSON as a production JSON service reads it, JSON.parse and then a validator
// compiled from the test's schema (lib/schema/json-schema.js), so that a wrongly typed message
// ({"orderId":5} for test 3) is refused as protobuf decoding, or a typed decoder, refuses it.
//
// The validator is @exodus/schemasafe, chosen by `npm run bench:validators` (docs/results/
// validators.json, the table in docs/codecs.md): the fastest on every test, and the one compiled
// validator right on every schema. ajv refuses `{}` under inferred schemas whose keys
// Object.prototype also has (it reads an inherited `constructor`) and, even with ownProperties
// (slower), does not check a `__proto__` key; is-my-json-valid refuses `{}` too;
// @cfworker/json-schema is right but interprets, hundreds of times slower. Validation adds a few
// percent to JSON.parse, which itself costs several times protobuf decode.
import { validator } from '@exodus/schemasafe'
import { parseJsonExact } from '../../schema/json-exact.js'
import { jsonSchemaOfType, schemaViolation } from '../../schema/json-schema.js'
import { codecFor as jsonCodecFor, jsonCodec } from './json.js'
import { plainCodec } from '../registry.js'

export const format = 'json-validated'
export const binary = false
// For a user's payload the client registers the test's protobuf schema first: the server derives
// the same JSON Schema from it.
export const registersSchema = true

// isJSON: the input comes from JSON.parse, so there is no undefined or function to look for.
// unmodifiedPrototypes: a key is checked for being an own property only where Object.prototype
// has it too (constructor, __proto__: inferred schemas can have such keys).
const VALIDATOR_OPTIONS = Object.freeze({ isJSON: true, unmodifiedPrototypes: true })
const validators = new WeakMap()

/** A type's schema and its compiled validator, made on first use and kept as long as the type is. */
function validatorOf (type) {
  let compiled = validators.get(type)
  if (!compiled) {
    const schema = jsonSchemaOfType(type)
    compiled = { schema, validate: validator(schema, VALIDATOR_OPTIONS) }
    validators.set(type, compiled)
  }
  return compiled
}

/** The error for a refused value: its first failing JSON path and why, on one line. */
function refusal (schema, value) {
  // schemaViolation reads the schema itself: schemasafe's own error locations run some segments
  // together (an index and the key after it) and leave `/` in keys unescaped.
  const violation = schemaViolation(schema, value)
  return new Error(violation ? `${violation.path}: ${violation.reason}` : 'does not match the test\'s JSON Schema')
}

/**
 * The json-validated codec for a test: text frames of JSON; decode parses, validates against
 * the JSON Schema of `test.type` and throws an Error naming the first failing JSON path.
 *
 * Integers past 2^53: when one of a user's messages holds one (read as BigInt), the json
 * format's exact parser and writer are used, as its codecFor picks them, and decode validates
 * JSON.parse's reading of the frame (where such an integer is a rounded but still integral
 * number, so every check gives the verdict it would give the exact value: validators know no
 * BigInt) before it returns the exact reading. A server has no messages for a user's payload:
 * like json's, its decode reads with JSON.parse alone, and validates the same.
 * @param {import('../registry.js').CodecTest} test its `type` gives the schema
 * @returns {import('../registry.js').Codec}
 */
export function codecFor (test) {
  const { schema, validate } = validatorOf(test.type)
  const json = jsonCodecFor(test)
  const check = (value) => {
    if (!validate(value)) throw refusal(schema, value)
    return value
  }
  const decode = json === jsonCodec
    ? (frame) => check(JSON.parse(frame.toString('utf8')))
    : (frame) => {
        const text = frame.toString('utf8')
        check(JSON.parse(text))
        return parseJsonExact(text)
      }
  return plainCodec(format, binary, json.encode, decode)
}
