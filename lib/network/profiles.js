// Network profiles (the names @sitespeed.io/throttle uses) and the network a run asks for.
import { UsageError } from '../errors.js'

/** The network profiles of @sitespeed.io/throttle: kbit/s up and down, round trip in ms. */
export const PROFILES = Object.freeze({
  '3g': { up: 768, down: 1600, rtt: 150 },
  '3gfast': { up: 768, down: 1600, rtt: 75 },
  '3gslow': { up: 400, down: 400, rtt: 200 },
  '2g': { up: 256, down: 280, rtt: 400 },
  cable: { up: 1000, down: 5000, rtt: 14 },
  dsl: { up: 384, down: 1500, rtt: 25 },
  '3gem': { up: 400, down: 400, rtt: 200 },
  '4g': { up: 9000, down: 9000, rtt: 85 },
  lte: { up: 12000, down: 12000, rtt: 35 },
  edge: { up: 200, down: 240, rtt: 420 },
  dial: { up: 30, down: 49, rtt: 60 },
  fois: { up: 5000, down: 20000, rtt: 2 }
})

/** Backends a user may ask for. */
export const BACKENDS = Object.freeze(['auto', 'tc', 'proxy'])

/** Without a bandwidth limit the link is fast enough not to matter next to loopback. */
const UNLIMITED_KBITS = 10_000_000

/** What each network option accepts, for its error message. */
const VALID_VALUES = { up: 'a positive number of kbit/s', down: 'a positive number of kbit/s', rtt: 'a number of ms >= 0', loss: 'a percentage from 0 to 100' }

/**
 * Works out the network a run asked for: a profile, custom values, or a profile with overrides.
 * @param {{profile?: string, up?: number, down?: number, rtt?: number, loss?: number}} options profile: a name
 *   from PROFILES or 'none' (the --throttle option); up, down, rtt and loss override it
 * @returns {null | {profile: string, up: number, down: number, rtt: number, loss: number}} null: no shaping
 * @throws {UsageError} for an unknown profile or a value out of range
 */
export function resolveNetwork ({ profile: name, up, down, rtt, loss } = {}) {
  const custom = { up, down, rtt, loss }
  const asked = Object.entries(custom).filter(([, value]) => value !== undefined)
  if ((name === undefined || name === 'none') && asked.length === 0) return null
  let base = { up: UNLIMITED_KBITS, down: UNLIMITED_KBITS, rtt: 0 }
  if (name !== undefined && name !== 'none') {
    base = PROFILES[String(name).toLowerCase()]
    if (!base) throw new UsageError(`unknown --throttle '${name}': expected none or one of ${Object.keys(PROFILES).join(', ')}`)
  }
  for (const [option, value] of asked) {
    const number = Number(value)
    const valid = option === 'loss' ? number >= 0 && number <= 100 : option === 'rtt' ? number >= 0 : number > 0
    if (!Number.isFinite(number) || !valid) {
      throw new UsageError(`--${option} must be ${VALID_VALUES[option]}, got '${value}'`)
    }
  }
  const profile = name !== undefined && name !== 'none' && asked.length === 0 ? String(name).toLowerCase() : 'custom'
  return {
    profile,
    up: Number(up ?? base.up),
    down: Number(down ?? base.down),
    rtt: Number(rtt ?? base.rtt),
    loss: Number(loss ?? 0)
  }
}
