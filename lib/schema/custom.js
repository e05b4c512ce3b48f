// A user's own JSON document as a test: read exactly, given a schema (theirs or an inferred one),
// checked for fidelity, and registered with the server at connect.
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { UsageError } from '../errors.js'
import { CUSTOM_TEST, REGISTRATION_PREFIX, parseRegistration, registrationFrame as frameOf } from '../protocol.js'
import { compileSchema } from './compile.js'
import { checkCodecFidelity, checkFidelity } from './fidelity.js'
import { inferSchema } from './infer.js'
import { parseJsonExact } from './json-exact.js'

/** The root message of an inferred schema. */
const INFERRED_TYPE = 'pbjson.Payload'

/**
 * @typedef {object} CustomTest a user's payload, shaped like a catalog test
 * @property {null} id
 * @property {string} name always CUSTOM_TEST
 * @property {string} file the payload's file name, for reports
 * @property {string} description
 * @property {true} custom
 * @property {object} payload the document, BigInt past 2^53
 * @property {string} protoText the schema, the user's or inferred
 * @property {string} typeName its root message
 * @property {boolean} inferred whether the schema was inferred
 * @property {import('protobufjs').Type} type
 */

/**
 * Reads a user's payload and schema before any connection: `--payload` alone infers a lossless
 * schema; with `--proto` and `--type` the user's schema is used as given.
 * @param {{payload: string, proto?: string, type?: string}} files
 * @returns {Promise<CustomTest>}
 * @throws {UsageError} one line for an unreadable file, invalid JSON, a schema that does not compile
 */
export async function loadCustomTest ({ payload: payloadFile, proto: protoFile, type: typeName }) {
  if (protoFile && !typeName) throw new UsageError('--proto needs --type <message name>')
  if (typeName && !protoFile) throw new UsageError('--type needs --proto <file.proto>')
  const payload = parseJson(await readText(payloadFile), payloadFile)
  if (payload === null || typeof payload !== 'object') {
    throw new UsageError(`${payloadFile}: the payload must be a JSON object or array, not ${payload === null ? 'null' : typeof payload}`)
  }
  const inferred = !protoFile
  const protoText = inferred ? inferSchema(payload, { typeName: 'Payload', packageName: 'pbjson' }).proto : await readText(protoFile)
  const type = compileSchema(protoText, inferred ? INFERRED_TYPE : typeName, { filename: inferred ? 'the inferred schema' : protoFile })
  return {
    id: null,
    name: CUSTOM_TEST,
    file: path.basename(payloadFile),
    description: `${path.basename(payloadFile)} with ${inferred ? 'an inferred schema' : `${path.basename(protoFile)} (${typeName})`}`,
    custom: true,
    payload,
    protoText,
    typeName: type.fullName.slice(1),
    inferred,
    type
  }
}

async function readText (file) {
  try {
    return (await readFile(file, 'utf8')).replace(/^\uFEFF/, '') // editors write byte order marks
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${err.code ?? err.message}`)
  }
}

function parseJson (text, file) {
  try {
    return parseJsonExact(text)
  } catch (err) {
    throw new UsageError(`${file}: ${err.message}`)
  }
}

/**
 * Checks that the format carries the payload unchanged: decode(encode(x)), converted back with the
 * original keys, must deep-equal x.
 * @param {CustomTest} test
 * @param {import('../codecs/registry.js').Codec} codec
 * @returns {{lossless: boolean, differences: number, examples: Array<{path: string, expected: unknown, actual: unknown}>}}
 */
export function checkCustomFidelity (test, codec) {
  return codec.name === 'protobuf' ? checkFidelity(test.type, test.payload) : checkCodecFidelity(codec, test.payload)
}

/**
 * The text frame a protobuf client sends first on a custom connection: the type name, then the schema.
 * @param {CustomTest} test
 * @returns {string}
 */
export function registrationFrame (test) {
  return frameOf(test.typeName, test.protoText)
}

/**
 * Reads a registration frame on the server: compiles the schema under a size limit, through a
 * cache keyed by its hash so a thousand connections compile it once.
 * @param {Buffer} frame
 * @param {number} maxSchemaBytes
 * @param {Map<string, import('protobufjs').Type>} cache
 * @returns {import('protobufjs').Type}
 * @throws {UsageError} naming what is wrong, for the ERR reply
 */
export function compileRegistration (frame, maxSchemaBytes, cache) {
  if (frame.length > maxSchemaBytes + 1024) throw new UsageError(`schema registration is ${frame.length} bytes, more than the ${maxSchemaBytes} allowed (--max-schema-bytes)`)
  const text = frame.toString('utf8')
  const registration = parseRegistration(text)
  if (!registration) throw new UsageError(`expected a schema registration first: "${REGISTRATION_PREFIX}<type>\\n<.proto text>"`)
  const { typeName, protoText } = registration
  if (Buffer.byteLength(protoText) > maxSchemaBytes) throw new UsageError(`schema is ${Buffer.byteLength(protoText)} bytes, more than the ${maxSchemaBytes} allowed (--max-schema-bytes)`)
  const key = createHash('sha256').update(text).digest('hex')
  if (!cache.has(key)) {
    if (cache.size >= 100) cache.delete(cache.keys().next().value) // bounded: oldest out
    cache.set(key, compileSchema(protoText, typeName, { filename: 'registered schema' }))
  }
  return cache.get(key)
}
