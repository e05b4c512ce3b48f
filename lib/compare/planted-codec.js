// The codec `npm run compare -- --calibrate` plants a cost in: JSON, exactly as the json format
// has it, except that one call spins for a known time per message (WSBENCH_PLANTED_US, µs): the
// encode, or the decode where WSBENCH_PLANTED_SIDE is server. Messages go up, so the client only
// encodes and the server only decodes: the cost lands on the side named, and the other side,
// which loads the same module, never spins.
import { loadFormat, plainCodec } from '../codecs/registry.js'

export const format = 'json-planted'
export const binary = false

const json = await loadFormat('json')
const plantedMs = Number(process.env.WSBENCH_PLANTED_US ?? 0) / 1000
const inServer = process.env.WSBENCH_PLANTED_SIDE === 'server'

/** A call made dearer by the planted cost: busy, not asleep, as a slower codec's would be. */
const planted = (call) => (input) => {
  const until = performance.now() + plantedMs
  while (performance.now() < until);
  return call(input)
}

/**
 * JSON's codec for the test, its encode (or decode) made dearer by the planted cost.
 * @param {import('../codecs/registry.js').CodecTest} test
 * @returns {import('../codecs/registry.js').Codec}
 */
export function codecFor (test) {
  const codec = json.codecFor(test)
  const encode = (value) => codec.encode(value)
  const decode = (frame) => codec.decode(frame)
  return plainCodec(format, binary, inServer ? encode : planted(encode), inServer ? planted(decode) : decode)
}
