// What --calibrate proves: a known decode cost planted in the server's side of one of two
// otherwise identical JSON codecs must lower its capacity by what the extra CPU predicts, and the
// difference must be called. At the knee the server is as busy with either codec, so capacity
// goes as one over the server's CPU per message: planted/plain ≈ s / (s + planted µs), s the plain
// codec's CPU per message at its knee.

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
    const predicted = plain.serverUs ? plain.serverUs / (plain.serverUs + plant.us) : null
    const off = estimate && predicted ? estimate.ratio / predicted - 1 : null
    return {
      test: row.test,
      slo: row.slo,
      serverUs: plain.serverUs,
      predicted: predicted && Math.round(predicted * 1000) / 1000,
      found: estimate ? Math.round(estimate.ratio * 1000) / 1000 : null,
      call: estimate?.call ?? 'inconclusive',
      off: off === null ? null : Math.round(off * 1000) / 1000,
      ok: estimate?.call === 'worse' && off !== null && Math.abs(off) <= CALIBRATION_TOLERANCE
    }
  })
  const lines = checked.map((row) => `calibration: test ${row.test} at ${row.slo}: ${plant.us} µs planted on ${row.serverUs ?? '?'} µs/msg ` +
    `predicts ${row.predicted ?? '?'}x the capacity; found ${row.found ?? '?'}x, called ${row.call}` +
    `${row.off === null ? '' : `, ${Math.abs(row.off * 100).toFixed(1)}% ${row.off < 0 ? 'below' : 'above'} the prediction`}: ` +
    `${row.ok ? 'FOUND' : 'NOT FOUND'} (within ${CALIBRATION_TOLERANCE * 100}% and called worse)`)
  return { us: plant.us, rows: checked, found: checked.every((row) => row.ok), lines }
}
