// What one probe says: did the server sustain the rate within the objective, and if not, was it
// the server that failed or the generator that could not keep up.
import { SATURATED_LOOP_BUSY } from '../report/report.js'
import { TICK_MS } from '../load/budget.js'

/**
 * Sustained: acked msgs/s (a fan-out's deliveries/s) at least this share of the offered rate, over
 * the step's window with its last replies given the objective's bound to come back (a server that
 * keeps up answers the last message as late as any other; one that falls behind drains a queue for
 * longer, and on a step as short as capacity's, the plain span to the last reply failed servers
 * that kept up).
 */
export const ACKED_SHARE = 0.99
/**
 * A failing probe whose generator was this late (send lag at the objective's percentile) for this
 * share of the bound was the generator's failure too: a quarter of the latency it may have went in
 * sending late, not in the server.
 */
export const GENERATOR_LAG_SHARE = 0.25
/**
 * Send lag every probe has by design, µs, on top of that share: at capacity's rates precise pacing
 * sends the messages due in groups a tick apart (lib/load/budget.js), each message up to a tick
 * late, both formats alike. Counted in the share, it left a quarter of a 10 ms bound a millisecond
 * of room: one stall of the generator's (a p99 of 2.5-3.2 ms against 1.1-1.8) called it
 * saturated, made capacities bounds, and thrice at one rate, an A/A run's both searches
 * generator-bound at their knees.
 */
export const PACING_LAG_US = TICK_MS * 1000
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
 *   sending late, where a connection had room, by GENERATOR_LAG_SHARE of the bound past PACING_LAG_US)
 *   while the server had room
 * @property {boolean} generatorSaturated the generator was at its limit, pass or fail
 * @property {string[]} reasons why it failed, each a short phrase; none for a pass
 */

/**
 * Judges one probe against one objective. A fan-out's (`probe.fanout`) is judged on its deliveries:
 * the objective is the delivery latency's, every delivery must be made, and deliveries/s must keep
 * up with the offered rate times the subscribers.
 * @param {object} probe the generator's answer (batch-client.js probe) with the server's CPU
 * @param {number} rate offered, msgs/s (fan-out: publishes/s)
 * @param {import('./slo.js').Slo} slo
 * @param {number} serverCores the server's budget
 * @returns {ProbeVerdict}
 */
export function judgeProbe (probe, rate, slo, serverCores) {
  const { latencyUs, sendLagUs, generator, server } = probe
  const latency = latencyUs[slo.percentile]
  const excess = latency === null || latency === undefined ? null : latency / slo.boundUs
  const reasons = []
  if (excess === null || excess >= 1) reasons.push(excess === null ? 'no replies' : `${slo.text.split('<')[0]} ${ms(latency)} ms`)
  reasons.push(...shortfalls(probe, rate, slo))
  const lag = sendLagUs?.[slo.percentile] ?? 0
  // Not the send rate: it falls short too when every connection waits for replies (the server's doing).
  const loopBusy = generator?.loopBusy ?? 0
  const generatorSaturated = loopBusy >= SATURATED_LOOP_BUSY || lag >= slo.boundUs * GENERATOR_LAG_SHARE + PACING_LAG_US
  const serverRoom = server.cores < serverCores * SERVER_SATURATED
  const pass = reasons.length === 0
  const generatorBound = !pass && generatorSaturated && serverRoom
  return { pass, excess: pass || excess >= 1 ? excess : null, generatorBound, generatorSaturated, reasons }
}

/**
 * What a probe fell short by besides its latency: messages lost or refused, a fan-out's deliveries
 * not made, and the rate of replies (deliveries) under ACKED_SHARE of the offered rate.
 * @returns {string[]}
 */
function shortfalls ({ messages, durationMs, fanout }, rate, slo) {
  const reasons = []
  const sent = fanout ? 'publishes ' : ''
  if (messages.lost > 0) reasons.push(`${messages.lost} ${sent}lost`)
  if (messages.errors > 0) reasons.push(`${messages.errors} error replies`)
  if (fanout) {
    if (fanout.lost !== 0) reasons.push(fanout.lost === null ? 'no END: deliveries not counted' : `${fanout.lost} deliveries lost`)
    if (fanout.errors > 0) reasons.push(`${fanout.errors} delivery errors`)
    if (fanout.duplicates > 0) reasons.push(`${fanout.duplicates} duplicates`)
  }
  const windowMs = messages.sent * 1000 / rate
  const spanMs = Math.max(windowMs, durationMs - slo.boundUs / 1000)
  const [made, offered, what] = fanout ? [fanout.delivered, rate * fanout.subscribers, 'delivered'] : [messages.acked, rate, 'acked']
  const madeRate = made * 1000 / spanMs
  if (madeRate < offered * ACKED_SHARE) reasons.push(`${what} ${Math.round(madeRate)}/s`)
  return reasons
}

const ms = (us) => (us / 1000).toFixed(us < 10_000 ? 2 : 1)
