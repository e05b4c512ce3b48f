// --calibrate: what this machine can tell. A comparison of JSON with JSON that spins for a known
// time per message (planted-codec.js), in the client's encode or in the server's decode: the
// planted cost should be found on the side that pays it (latency and that side's CPU), its
// interval covering the size planted, and not be called worse on the other side's CPU; the
// intervals say the smallest difference the run could have told, in µs.
import { fileURLToPath } from 'node:url'

/** The planted format and the module that adds it. */
export const PLANTED_FORMAT = 'json-planted'
export const PLANTED_MODULE = fileURLToPath(new URL('./planted-codec.js', import.meta.url))

/** µs per message planted when --calibrate names no cost. */
export const DEFAULT_PLANTED_US = 20

/** Where a cost can be planted: the client's encode (the default) or the server's decode. */
export const PLANTED_SIDES = Object.freeze(['client', 'server'])

/** The tests a calibration runs unless --tests says otherwise: mid-sized real-life payloads. */
export const CALIBRATION_TESTS = Object.freeze(['medium', 'large'])

/**
 * Per side planted: where the cost must be found (called worse, the interval covering its size) and
 * where it must not show (not called worse). Not "not called at all": the cost is the side's own
 * work, and only worse would be it showing; a call either way there is said, as a false call or a
 * knock-on (the plant also moves when the other side's messages come, and so its wake-ups).
 */
const EXPECTED = {
  client: { p50: 'found', clientCpu: 'found', serverCpu: 'absent' },
  server: { p50: 'found', serverCpu: 'found', clientCpu: 'absent' }
}

const NAMES = { p50: 'p50', clientCpu: 'client CPU', serverCpu: 'server CPU' }
const CALLS = { client: "the client's encode", server: "the server's decode" }

/**
 * --calibrate's value as given on the command line: the size alone for the default side.
 * @param {{side: string, us: number}} plant
 * @returns {string} e.g. '20' or 'server:30'
 */
export function plantArgument ({ side, us }) {
  return side === 'client' ? String(us) : `${side}:${us}`
}

/**
 * What a calibration found, per row: each expected metric's difference in µs with its interval,
 * the smallest difference the run could have told (the interval's half-width, µs), whether the
 * planted cost was found where it should be (and its intervals cover the size planted) and
 * whether it was called worse where it was not planted.
 * @param {import('./results.js').ComparisonRow[]} rows
 * @param {string[]} labels the baseline (json) and the planted format
 * @param {{side: string, us: number}} plant where the cost was planted and its µs per message
 * @returns {{side: string, plantedUs: number, rows: Array<{test: string, profile: string, metrics: object,
 *   found: boolean, sized: boolean, falseCall: boolean}>}}
 */
export function calibrationOf (rows, [baseline, planted], { side, us: plantedUs }) {
  return {
    side,
    plantedUs,
    rows: rows.map((row) => {
      const metrics = {}
      for (const [name, expected] of Object.entries(EXPECTED[side])) {
        const estimate = row.verdicts[planted]?.[name]
        const base = row.figures[baseline]?.[name]
        if (!estimate || !(base > 0)) continue
        // Latency figures are ms, CPU µs: differences in µs either way.
        const us = name === 'p50' ? base * 1000 : base
        const ci = estimate.ci && estimate.ci.map((bound) => round1((bound - 1) * us))
        metrics[name] = {
          expected,
          differenceUs: round1((estimate.ratio - 1) * us),
          ci,
          smallestUs: estimate.resolution === null ? null : round1(estimate.resolution * us),
          call: estimate.call,
          ...(expected === 'found' && { covers: ci ? ci[0] <= plantedUs && plantedUs <= ci[1] : false })
        }
      }
      const wanted = Object.values(metrics).filter(({ expected }) => expected === 'found')
      return {
        test: row.test,
        profile: row.profile,
        metrics,
        found: wanted.length > 0 && wanted.every(({ call }) => call === 'worse'),
        sized: wanted.length > 0 && wanted.every(({ covers }) => covers),
        falseCall: Object.values(metrics).some(({ expected, call }) => expected === 'absent' && call === 'worse')
      }
    })
  }
}

const round1 = (value) => Math.round(value * 10) / 10

/**
 * The calibration in words, per row: each metric's difference, interval and call, and the verdict.
 * @param {ReturnType<typeof calibrationOf>} calibration
 * @returns {Array<{test: string, profile: string, metrics: Record<string, string>, verdict: string}>}
 */
export function calibrationWords ({ side, rows }) {
  const elsewhere = NAMES[Object.keys(EXPECTED[side]).find((name) => EXPECTED[side][name] === 'absent')]
  return rows.map(({ test, profile, metrics, found, sized, falseCall }) => {
    const said = ({ differenceUs, ci, smallestUs, call }) =>
      `${signed(differenceUs)} µs${ci ? ` (${signed(ci[0])} to ${signed(ci[1])})` : ''} ${call}` +
      `${smallestUs === null ? '' : `, tells ±${smallestUs} µs`}`
    const words = Object.fromEntries(Object.entries(metrics).map(([name, metric]) => [name, said(metric)]))
    // Found means called worse, so every metric found has its interval.
    const missed = () => Object.entries(metrics).filter(([, { covers }]) => covers === false)
      .map(([name, { differenceUs, ci }]) => `${NAMES[name]} ${signed(differenceUs)} µs, interval ${signed(ci[0])} to ${signed(ci[1])}`)
    const better = Object.entries(metrics).filter(([, { expected, call }]) => expected === 'absent' && call === 'better')
      .map(([name]) => `; ${NAMES[name]} called better: a false call, or a knock-on of the cost`)
    const verdict = falseCall
      ? `called worse on ${elsewhere}, where it was not planted: a false call, or a knock-on of the cost`
      : !found
          ? 'not found: this run could not tell it'
          : `found where planted, ${sized ? 'about its size' : `but not its size (${missed().join('; ')})`}, and not called worse on ${elsewhere}${better.join('')}`
    return { test, profile, metrics: words, verdict }
  })
}

/**
 * The calibration in words, one line per row.
 * @param {ReturnType<typeof calibrationOf>} calibration
 * @returns {string[]}
 */
export function calibrationLines (calibration) {
  const { side, plantedUs } = calibration
  return calibrationWords(calibration).map(({ test, profile, metrics, verdict }) =>
    `${test}${profile === 'none' ? '' : ` on ${profile}`}: planted +${plantedUs} µs in ${CALLS[side]}: ` +
    `${Object.entries(metrics).map(([name, words]) => `${NAMES[name]} ${words}`).join('; ')}: ${verdict}`)
}

const signed = (value) => `${value >= 0 ? '+' : ''}${value}`
