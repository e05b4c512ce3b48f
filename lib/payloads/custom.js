// A user's own payload as a test (--payload, with --proto and --type or a schema inferred): read,
// given its schema, checked against a format, and the registration frame that sends the schema.
import path from 'node:path'
import { readCorpus, readText } from '../schema/corpus.js'
import { UsageError } from '../errors.js'
import { CUSTOM_TEST, registrationFrame as frameOf } from '../protocol.js'
import { compileSchema } from '../schema/compile.js'
import { checkCodecFidelity, checkMessages } from '../schema/fidelity.js'
import { inferCorpusSchema, inferSchema } from '../schema/infer.js'

/** The root message of an inferred schema. */
const INFERRED_TYPE = 'pbjson.Payload'

/**
 * @typedef {object} CustomTest a user's payload, shaped like a catalog test
 * @property {null} id
 * @property {string} name always CUSTOM_TEST
 * @property {string} file the payload's file name, for reports
 * @property {string} description
 * @property {true} custom
 * @property {object[]} messages the messages, in order (one for a single document), BigInt past 2^53
 * @property {string[]} wheres where each message came from (`line 12`, a file name), for fidelity reports
 * @property {{kind: 'document'|'lines'|'directory', messages: number}} corpus
 * @property {string} protoText the schema, the user's or inferred
 * @property {string} typeName its root message
 * @property {boolean} inferred whether the schema was inferred
 * @property {import('protobufjs').Type} type
 */

/**
 * Reads a user's payload (a document or a corpus, see readCorpus) and schema before any
 * connection: `--payload` alone infers one lossless schema for every message; with `--proto` and
 * `--type` the user's schema is used as given.
 * @param {{payload: string, proto?: string, type?: string}} files
 * @returns {Promise<CustomTest>}
 * @throws {UsageError} one line for an unreadable file, invalid JSON, a schema that does not compile
 */
export async function loadCustomTest ({ payload: payloadFile, proto: protoFile, type: typeName }) {
  if (protoFile && !typeName) throw new UsageError('--proto needs --type <message name>')
  if (typeName && !protoFile) throw new UsageError('--type needs --proto <file.proto>')
  const corpus = await readCorpus(payloadFile)
  const inferred = !protoFile
  const names = { typeName: 'Payload', packageName: 'pbjson' }
  const protoText = !inferred
    ? await readText(protoFile)
    : corpus.kind === 'document' ? inferSchema(corpus.messages[0].value, names).proto : inferCorpusSchema(corpus.messages, names).proto
  const type = compileSchema(protoText, inferred ? INFERRED_TYPE : typeName, { filename: inferred ? 'the inferred schema' : protoFile })
  const count = corpus.messages.length
  const what = corpus.kind === 'document' ? corpus.file : `${corpus.file} (${count} message${count === 1 ? '' : 's'})`
  return {
    id: null,
    name: CUSTOM_TEST,
    file: corpus.file,
    description: `${what} with ${inferred ? 'an inferred schema' : `${path.basename(protoFile)} (${typeName})`}`,
    custom: true,
    messages: corpus.messages.map((message) => message.value),
    wheres: corpus.messages.map((message) => message.where),
    corpus: { kind: corpus.kind, messages: count },
    protoText,
    typeName: type.fullName.slice(1),
    inferred,
    type
  }
}

/**
 * Checks that a codec carries every message unchanged: decode(encode(x)), back in plain form, must
 * deep-equal x. For a corpus, each example's path names its message.
 * @param {CustomTest} test
 * @param {{name: string, prepare: Function, encode: Function, decode: Function, toPlain: Function}} codec
 * @returns {{lossless: boolean, differences: number, messages: number,
 *   examples: Array<{path: string, expected: unknown, actual: unknown}>}} messages: how many changed
 */
export function checkCustomFidelity (test, codec) {
  const messages = test.messages.map((value, i) => ({ value, where: test.wheres[i] }))
  return checkMessages(messages, (value) => checkCodecFidelity(codec, value))
}

/**
 * The text frame a client sends first on a connection for a user's payload whose format has the
 * server make its codec from the payload's schema: the type name, then the schema.
 * @param {CustomTest} test
 * @returns {string}
 */
export function registrationFrame (test) {
  return frameOf(test.typeName, test.protoText)
}
