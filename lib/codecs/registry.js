// The codec registry: every wire format by name, each a module of its own loaded only when a run
// names it, so a command pays for the codecs it uses and nothing else.
import { UsageError } from '../errors.js'

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

// Each module exports codecFor(test, format). 'protobuf-dynamic' (protobuf.js reflection) is for
// benchmarks only: it is not a format a client names on the wire.
const MODULES = {
  json: () => import('./json.js'),
  protobuf: () => import('./protobuf.js'),
  'protobuf-dynamic': () => import('./protobuf.js'),
  'protobuf-es': () => import('./protobuf-es.js'),
  'google-protobuf': () => import('./google-protobuf.js'),
  'fast-json': () => import('./typed-json.js'),
  msgpack: () => import('./self-describing.js'),
  cbor: () => import('./self-describing.js'),
  avro: () => import('./avro.js')
}

const codecCache = new Map()

/**
 * The codec for a format and test, its module loaded on first use. A custom test (a user's
 * payload, or a schema a client registered) brings its own protobuf.js type and is not cached.
 * @param {string} format one of FORMATS, or 'protobuf-dynamic'
 * @param {import('../payloads/catalog.js').TestInfo|import('../payloads/custom.js').CustomTest|{custom: true, type?: object}} test
 * @returns {Promise<Codec>}
 * @throws {UsageError} for an unknown format, or one that cannot carry a custom payload
 */
export async function createCodec (format, test) {
  return (await loadCodecs(format))(test)
}

/**
 * Loads a format's module and returns a synchronous codec maker for it: for the server, which
 * loads a connection's format before the upgrade completes and makes the codec once it has a test.
 * @param {string} format one of FORMATS, or 'protobuf-dynamic'
 * @returns {Promise<(test: object) => Codec>} throws UsageError for a custom test the format cannot carry
 * @throws {UsageError} for an unknown format
 */
export async function loadCodecs (format) {
  if (!Object.hasOwn(MODULES, format)) throw new UsageError(`unknown format '${format}': expected one of ${FORMATS.join(', ')}`)
  const { codecFor } = await MODULES[format]()
  return (test) => {
    if (test.custom) {
      if (!CUSTOM_FORMATS.includes(format)) throw new UsageError(`format '${format}' does not support custom payloads: use ${CUSTOM_FORMATS.join(', ')}`)
      return codecFor(test, format)
    }
    const key = `${format}:${test.name}`
    if (!codecCache.has(key)) codecCache.set(key, codecFor(test, format))
    return codecCache.get(key)
  }
}
