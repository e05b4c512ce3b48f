// The codecs a benchmark measures: BENCH_FORMATS=json,protobuf,msgpack picks them by the names the
// clients and `npm run compare -- --formats` use, plus protobuf-dynamic (protobuf.js reflection).
import { createCodec as registryCodec, formatNames } from '../../lib/codecs/registry.js'
import { dynamicCodec } from '../../lib/codecs/formats/protobuf.js'
import { loadMessages, loadPayload, resolveTest } from '../../lib/payloads/catalog.js'
import { builtInType } from '../../lib/schema/compile.js'

/** Every name BENCH_FORMATS accepts. */
export const BENCH_FORMATS = Object.freeze(['json', 'protobuf', 'protobuf-dynamic', ...formatNames().filter((f) => !['json', 'protobuf'].includes(f))])

/**
 * A format's codec for a test, protobuf-dynamic (protobuf.js reflection, no format on the wire) included.
 * @param {string} format one of BENCH_FORMATS
 * @param {import('../../lib/payloads/catalog.js').TestInfo} test
 * @returns {Promise<import('../../lib/codecs/registry.js').Codec>}
 */
export const createCodec = async (format, test) => format === 'protobuf-dynamic' ? dynamicCodec(builtInType(test.typeName)) : registryCodec(format, test)

/**
 * The formats named in BENCH_FORMATS, or the defaults; an unknown name ends the process with one
 * line on stderr.
 * @param {string[]} defaults
 * @returns {string[]}
 */
export function selectedFormats (defaults) {
  const names = process.env.BENCH_FORMATS ? process.env.BENCH_FORMATS.split(',').map((name) => name.trim()).filter(Boolean) : defaults
  const unknown = names.filter((name) => !BENCH_FORMATS.includes(name))
  if (unknown.length > 0 || names.length === 0) {
    process.stderr.write(`BENCH_FORMATS: unknown format '${unknown[0] ?? ''}': expected some of ${BENCH_FORMATS.join(', ')}\n`)
    process.exit(2)
  }
  return names
}

/**
 * The tests named in BENCH_TESTS (numbers or names: 1,people), or the defaults.
 * @param {object[]} defaults
 * @returns {object[]}
 */
export function selectedTests (defaults) {
  return process.env.BENCH_TESTS ? process.env.BENCH_TESTS.split(',').map(resolveTest) : defaults
}

/**
 * A test's payload in one format, as the load client holds and sends it.
 * @param {string} format
 * @param {import('../../lib/payloads/catalog.js').TestInfo} test
 * @returns {Promise<{codec: import('../../lib/codecs/registry.js').Codec, message: unknown, frame: Buffer}>}
 */
export async function encodedPayload (format, test) {
  const codec = await createCodec(format, test)
  const message = codec.prepare(loadPayload(test))
  return { codec, message, frame: Buffer.from(codec.encode(message)) }
}

/**
 * A test's messages in one format, encoded as the load client sends them: its stream (what runs
 * send by default) and its one message (--repeat).
 * @param {string} format
 * @param {import('../../lib/payloads/catalog.js').TestInfo} test
 * @returns {Promise<{stream: Buffer[], repeated: Buffer}>}
 */
export async function encodedMessages (format, test) {
  const codec = await createCodec(format, test)
  const encode = (message) => Buffer.from(codec.encode(codec.prepare(message)))
  const stream = loadMessages(test).messages.map(encode)
  const { messages: [one] } = loadMessages(test, { repeat: true })
  return { stream, repeated: stream.length === 1 && one === loadMessages(test).messages[0] ? stream[0] : encode(one) }
}
