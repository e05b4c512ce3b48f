// What --calibrate proves: a known decode cost planted in the server's side of one of two
// otherwise identical JSON codecs must lower its capacity by what the extra CPU predicts, and the
// difference must be called. At the knee the server is as busy with either codec, so capacity goes
// as one over the server's CPU per message: planted/plain ≈ s / s', s and s' each codec's CPU per
// message at its knee, as measured (the planted spin costs the server more than its nominal µs:
// the clock read in its loop, and the caches it leaves cold).

/** The found drop may miss the predicted one by this share and still count as found. */
export const CALIBRATION_TOLERANCE = 0.15

/**
 * @param {object[]} rows capacityRows's, formats [json, json-planted]
 * @param {{us: number}} plant
 * @returns {{us: number, rows: object[], found: boolean, lines: string[]}}
 */
export function calibrationOf (rows, plant) {
  const checked = rows.map((row) => {
    const [plain, planted] = row.figures
    const estimate = row.ratios[planted.format]
    const predicted = plain.serverUs && planted.serverUs ? plain.serverUs / planted.serverUs : null
    const off = estimate && predicted ? estimate.ratio / predicted - 1 : null
    return {
      test: row.test,
      slo: row.slo,
      serverUs: plain.serverUs,
      plantedServerUs: planted.serverUs,
      predicted: predicted && round3(predicted),
      found: estimate ? round3(estimate.ratio) : null,
      call: estimate?.call ?? 'inconclusive',
      off: off === null ? null : round3(off),
      ok: estimate?.call === 'worse' && off !== null && Math.abs(off) <= CALIBRATION_TOLERANCE
    }
  })
  const lines = checked.map((row) => `calibration: test ${row.test} at ${row.slo}: ${plant.us} µs planted took the server from ` +
    `${row.serverUs ?? '?'} to ${row.plantedServerUs ?? '?'} µs/msg at the knee, which predicts ${row.predicted ?? '?'}x the capacity; ` +
    `found ${row.found ?? '?'}x, called ${row.call}` +
    `${row.off === null ? '' : `, ${Math.abs(row.off * 100).toFixed(1)}% ${row.off < 0 ? 'below' : 'above'} the prediction`}: ` +
    `${row.ok ? 'FOUND' : 'NOT FOUND'} (within ${CALIBRATION_TOLERANCE * 100}% and called worse)`)
  return { us: plant.us, rows: checked, found: checked.every((row) => row.ok), lines }
}

const round3 = (value) => Math.round(value * 1000) / 1000
