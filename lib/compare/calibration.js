// --calibrate: what this machine can tell. A comparison of JSON with JSON whose encode spins for a
// known time per message (planted-codec.js): the planted cost should be found on the side that
// pays it (latency and client CPU), in about its size, and nowhere else (server CPU), and the
// intervals say the smallest difference the run could have told, in µs.
import { fileURLToPath } from 'node:url'

/** The planted format and the module that adds it. */
export const PLANTED_FORMAT = 'json-planted'
export const PLANTED_MODULE = fileURLToPath(new URL('./planted-codec.js', import.meta.url))

/** µs per message planted when --calibrate names no cost. */
export const DEFAULT_PLANTED_US = 20

/** The tests a calibration runs unless --tests says otherwise: mid-sized real-life payloads. */
export const CALIBRATION_TESTS = Object.freeze(['medium', 'large'])

/** Where the planted cost must show (found: called worse) and where it must not (called at all). */
const EXPECTED = { p50: 'found', clientCpu: 'found', serverCpu: 'absent' }

/**
 * What a calibration found, per row: each expected metric's difference in µs with its interval,
 * the smallest difference the run could have told (the interval's half-width, µs), and whether
 * the planted cost was found where it should be and nowhere it should not.
 * @param {import('./results.js').ComparisonRow[]} rows
 * @param {string[]} labels the baseline (json) and the planted format
 * @param {number} plantedUs
 * @returns {{plantedUs: number, rows: Array<{test: string, profile: string, metrics: object, found: boolean, falseCall: boolean}>}}
 */
export function calibrationOf (rows, [baseline, planted], plantedUs) {
  return {
    plantedUs,
    rows: rows.map((row) => {
      const metrics = {}
      for (const [name, expected] of Object.entries(EXPECTED)) {
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
          call: estimate.call
        }
      }
      const wanted = Object.values(metrics).filter(({ expected }) => expected === 'found')
      const found = wanted.length > 0 && wanted.every(({ call }) => call === 'worse')
      const falseCall = Object.values(metrics).some(({ expected, call }) => expected === 'absent' && (call === 'better' || call === 'worse'))
      return { test: row.test, profile: row.profile, metrics, found, falseCall }
    })
  }
}

const round1 = (value) => Math.round(value * 10) / 10

/**
 * The calibration in words, one line per row.
 * @param {ReturnType<typeof calibrationOf>} calibration
 * @returns {string[]}
 */
export function calibrationLines ({ plantedUs, rows }) {
  const names = { p50: 'p50', clientCpu: 'client CPU', serverCpu: 'server CPU' }
  return rows.map(({ test, profile, metrics, found, falseCall }) => {
    const parts = Object.entries(metrics).map(([name, { differenceUs, ci, smallestUs, call }]) =>
      `${names[name]} ${signed(differenceUs)} µs${ci ? ` (${signed(ci[0])} to ${signed(ci[1])})` : ''} ${call}` +
      `${smallestUs === null ? '' : `, tells ±${smallestUs} µs`}`)
    const verdict = falseCall
      ? 'a false call: the cost showed where it was not planted'
      : found ? 'found where planted, and nowhere else' : 'not found: this run could not tell it'
    return `${test}${profile === 'none' ? '' : ` on ${profile}`}: planted +${plantedUs} µs per encode: ${parts.join('; ')}: ${verdict}`
  })
}

const signed = (value) => `${value >= 0 ? '+' : ''}${value}`
