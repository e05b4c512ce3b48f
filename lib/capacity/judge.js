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
 * The send lag a tick may add at the objective's percentile, as a share of its bound: precise
 * pacing sends the messages due at capacity's rates in groups a tick apart (lib/load/budget.js),
 * each up to a tick late, and the latency counts from the due time. At a millisecond's tick, an
 * objective of p50<1ms was half spent before the server saw a message: test 3's searches ended
 * at 17,800 JSON msgs/s with the server 0.43 busy (send lag p50 590 µs), where a 0.2 ms tick
 * found 53,700 with it busy 0.99 (send lag p50 190 µs).
 */
export const TICK_SHARE = 0.1
/** The shortest tick: the pacing thread's own wake-ups are about this late (p50 ~90 µs here). */
export const MIN_TICK_MS = 0.1

/**
 * The tick of an objective's generators: the lag it adds at the objective's percentile (about that
 * share of a tick) TICK_SHARE of the bound, within MIN_TICK_MS and Node's timers' millisecond.
 * p99<10ms keeps the millisecond, p99<5ms takes 0.5 ms, p50<1ms 0.2 ms.
 * @param {import('./slo.js').Slo} slo
 * @returns {number} ms
 */
export function pacingTickMs ({ percentile, boundUs }) {
  const ms = Math.floor(boundUs / 1000 * TICK_SHARE / (percentile / 100) * 100) / 100
  return Math.min(TICK_MS, Math.max(MIN_TICK_MS, ms))
}
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
 *   sending late, where a connection had room, by GENERATOR_LAG_SHARE of the bound past the tick's designed lag)
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
  // Past the lag the tick adds by design, both formats alike: counted in the share, it left a quarter
  // of a 10 ms bound a millisecond of room, and one stall of the generator's (a p99 of 2.5-3.2 ms
  // against 1.1-1.8) called it saturated, made capacities bounds, and an A/A run generator-bound.
  const lagLimitUs = slo.boundUs * GENERATOR_LAG_SHARE + pacingTickMs(slo) * 1000
  const generatorSaturated = loopBusy >= SATURATED_LOOP_BUSY || lag >= lagLimitUs
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
