// What one probe says: did the server sustain the rate within the objective, and if not, was it
// the server that failed or the generator that could not keep up.
import { SATURATED_LOOP_BUSY } from '../report/report.js'

/**
 * Sustained: acked msgs/s at least this share of the offered rate, over the step's window with its
 * last replies given the objective's bound to come back (a server that keeps up answers the last
 * message as late as any other; one that falls behind drains a queue for longer, and on a step as
 * short as capacity's, the plain span to the last reply failed servers that kept up).
 */
export const ACKED_SHARE = 0.99
/**
 * A failing probe whose generator was this late (send lag at the objective's percentile) for this
 * share of the bound was the generator's failure too: a quarter of the latency it may have went in
 * sending late, not in the server.
 */
export const GENERATOR_LAG_SHARE = 0.25
/**
 * A server this busy (a share of its budget) was at its limit: a failing probe is its failure even
 * when the generator was saturated too.
 */
export const SERVER_SATURATED = 0.9

/**
 * @typedef {object} ProbeVerdict
 * @property {boolean} pass
 * @property {number|null} excess the objective's percentile over its bound, null when no reply came
 * @property {boolean} generatorBound a fail the generator could not keep up with (its loop saturated, or
 *   sending late, where a connection had room, by GENERATOR_LAG_SHARE of the bound) while the server had room
 * @property {boolean} generatorSaturated the generator was at its limit, pass or fail
 * @property {string[]} reasons why it failed, each a short phrase; none for a pass
 */

/**
 * Judges one probe against one objective.
 * @param {object} probe the generator's answer (batch-client.js probe) with the server's CPU
 * @param {number} rate offered, msgs/s
 * @param {import('./slo.js').Slo} slo
 * @param {number} serverCores the server's budget
 * @returns {ProbeVerdict}
 */
export function judgeProbe (probe, rate, slo, serverCores) {
  const { messages, durationMs, latencyUs, sendLagUs, generator, server } = probe
  const windowMs = messages.sent * 1000 / rate
  const ackedRate = messages.acked * 1000 / Math.max(windowMs, durationMs - slo.boundUs / 1000)
  const latency = latencyUs[slo.percentile]
  const excess = latency === null || latency === undefined ? null : latency / slo.boundUs
  const reasons = []
  if (excess === null || excess >= 1) reasons.push(excess === null ? 'no replies' : `${slo.text.split('<')[0]} ${ms(latency)} ms`)
  if (messages.lost > 0) reasons.push(`${messages.lost} lost`)
  if (messages.errors > 0) reasons.push(`${messages.errors} error replies`)
  if (ackedRate < rate * ACKED_SHARE) reasons.push(`acked ${Math.round(ackedRate)}/s`)
  const lag = sendLagUs?.[slo.percentile] ?? 0
  // Not the send rate: it falls short too when every connection waits for replies (the server's doing).
  const loopBusy = generator?.loopBusy ?? 0
  const generatorSaturated = loopBusy >= SATURATED_LOOP_BUSY || lag >= slo.boundUs * GENERATOR_LAG_SHARE
  const serverRoom = server.cores < serverCores * SERVER_SATURATED
  const pass = reasons.length === 0
  const generatorBound = !pass && generatorSaturated && serverRoom
  return { pass, excess: pass || excess >= 1 ? excess : null, generatorBound, generatorSaturated, reasons }
}

const ms = (us) => (us / 1000).toFixed(us < 10_000 ? 2 : 1)
