// JSON: JSON.stringify and JSON.parse, as every WebSocket application has them; the exact
// variant only for documents those would change.
import { parseJsonExact, stringifyJsonExact } from '../../schema/json-exact.js'
import { plainCodec } from '../registry.js'

export const format = 'json'
export const binary = false

/** JSON through the built-ins: text frames. */
export const jsonCodec = plainCodec(format, binary,
  (value) => JSON.stringify(value),
  (frame) => JSON.parse(frame.toString('utf8')))

/**
 * JSON for documents JSON.stringify would change: integers past 2^53 (read as BigInt) and -0.
 * Slower than the built-ins, so only used where they are not exact.
 */
const exactJsonCodec = plainCodec(format, binary, stringifyJsonExact, (frame) => parseJsonExact(frame.toString('utf8')))

/**
 * The JSON codec for a test: the built-ins, unless one of a user's messages needs the exact
 * codec. A user's payload on the server (no messages there) decodes with the built-ins.
 * @param {import('../registry.js').CodecTest} test
 * @returns {import('../registry.js').Codec}
 */
export function codecFor (test) {
  return !test.custom || (test.messages ?? []).every(builtInsAreExact) ? jsonCodec : exactJsonCodec
}

function builtInsAreExact (payload) {
  try {
    return JSON.stringify(payload) === stringifyJsonExact(payload)
  } catch {
    return false // BigInt
  }
}
