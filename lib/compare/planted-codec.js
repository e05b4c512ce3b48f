// The codec `npm run compare -- --calibrate` plants a cost in: JSON, exactly as the json format
// has it, except that every encode also spins for a known time (WSBENCH_PLANTED_US, µs). Its
// decode is JSON's own, so the cost lands on the side that encodes (the client, going up) and a
// server that only decodes should not look any dearer.
import { loadFormat, plainCodec } from '../codecs/registry.js'

export const format = 'json-planted'
export const binary = false

const json = await loadFormat('json')
const plantedMs = Number(process.env.WSBENCH_PLANTED_US ?? 0) / 1000

/**
 * JSON's codec for the test, its encode made dearer by the planted cost.
 * @param {import('../codecs/registry.js').CodecTest} test
 * @returns {import('../codecs/registry.js').Codec}
 */
export function codecFor (test) {
  const codec = json.codecFor(test)
  return plainCodec(format, binary, (value) => {
    // Busy, not asleep: the cost is CPU, as a slower encoder's would be.
    const until = performance.now() + plantedMs
    while (performance.now() < until);
    return codec.encode(value)
  }, (frame) => codec.decode(frame))
}
