// How a row's batches are planned: their sizes and rates from short probes of every format, and
// the order the formats take turns in (lib/compare/lockstep.js runs them).
import { trialOrder } from './statistics.js'

/** A closed-loop batch lasts about this long for the slower format (at least one message). */
export const BATCH_MS = 25
/** Batches never hold more messages than this, however fast the row. */
export const MAX_BATCH_MESSAGES = 200
/** Open-loop batches run at this share of the slower format's closed-loop rate: both keep up. */
export const OPEN_LOOP_SHARE = 0.8
/**
 * Each row's share of a generation, ms over all formats (with two formats, five pairs of 25 ms
 * batches in closed loop and seven in open loop). Longer rows narrowed every interval more than
 * the generations they cost, up to here (docs/method.md).
 */
export const ROW_MS = 600
/**
 * The closed-loop batches' share of a row, the rest open loop. Within a generation the batches'
 * own noise makes nearly all of a ratio's spread, so each metric's interval narrows with the square
 * root of its share: with p99 pooled over generations, latency had the margin that CPU lacked.
 */
const CLOSED_SHARE = 0.4
/**
 * Unrecorded batches per format in each generation's first row, before its measured ones: this
 * long. Just after the generation's connections open, the first batch of that row took twice its
 * row's median round trip and 1.2x its server CPU; a later row's first batch ran like its others
 * (0.93-1.07x in one run without these batches), so only the first row pays for them.
 */
const WARMUP_MS = 50

/**
 * A row's batch sizes and rates, from short closed-loop probes of every format: batches of about
 * BATCH_MS for the slower one, and open-loop batches at OPEN_LOOP_SHARE of its rate.
 * @param {import('./lockstep.js').LockstepRow} row
 * @param {import('./client-handle.js').BatchClient[]} clients the row's, one per format, connected
 * @param {{direction: string, rate?: number, inflight: number, connections: number}} load
 * @param {number|undefined} batchMessages a fixed batch size (-n)
 * @returns {Promise<object>} as rowPlan's; fan-out's batches at its rate, every one timed and costed
 */
export async function planRow (row, clients, load, batchMessages) {
  if (load.direction === 'fanout') {
    // Fan-out has its rate: batches of about ROW_MS/4 of publishes, every one timed and costed.
    const count = batchMessages ?? Math.max(1, Math.round(load.rate * ROW_MS / 4000))
    const timed = { closedCount: count, timedRate: load.rate, closedPairs: 2, warmupBatches: 1 }
    return { ...timed, openCount: 0, openRate: null, openPairs: 0 }
  }
  let slowest = Infinity
  for (const client of clients) {
    const probes = []
    for (let count = 1; count !== null; count = nextProbe(probes, batchMessages)) {
      const { sent, durationMs } = await client.batch(row.key, count, null, false)
      probes.push({ sent, durationMs })
    }
    slowest = Math.min(slowest, probedRate(probes))
  }
  return rowPlan(slowest, clients.length, load, batchMessages)
}

/** A row's closed-loop rate from its probes, messages per second: the fastest (a hiccup only slows a probe). */
const probedRate = (probes) => Math.max(...probes.map((probe) => probe.sent * 1000 / Math.max(probe.durationMs, 0.01)))

/**
 * The size of a row's next rate probe, or null once the probes time the row. They grow, each sized
 * to last BATCH_MS at the fastest rate so far (a single message times mostly wake-ups), two at
 * least and three at most; a probe that lasts a batch times the row (people's single message,
 * 0.3 s), but not the first alone: one message held up for 0.26 s by a busy machine had planned
 * a row at 3.8 messages a second, and its open-loop batches of 20 ran for 5 s each.
 * @param {Array<{sent: number, durationMs: number}>} probes so far, at least one
 * @param {number|undefined} batchMessages a fixed batch size (-n)
 * @returns {number|null}
 */
export function nextProbe (probes, batchMessages) {
  const last = probes[probes.length - 1]
  if (probes.length >= 3 || (probes.length >= 2 && last.durationMs >= BATCH_MS)) return null
  return batchMessages ?? clamp(Math.round(probedRate(probes) * BATCH_MS / 1000))
}

/**
 * A row's batches from the slower format's closed-loop rate: batches of about BATCH_MS (or
 * `batchMessages`), open-loop ones at OPEN_LOOP_SHARE of that rate, as many pairs of each as fit
 * their share of ROW_MS (CLOSED_SHARE).
 * @param {number} slowest messages per second, the slower format's
 * @param {number} formats how many take turns
 * @param {{inflight: number, connections: number}} load
 * @param {number|undefined} batchMessages a fixed batch size (-n)
 * @returns {{closedCount: number, timedRate: null, closedPairs: number, openCount: number,
 *   openRate: number|null, openPairs: number, warmupBatches: number}}
 */
export function rowPlan (slowest, formats, load, batchMessages) {
  const closedCount = batchMessages ?? clamp(Math.round(slowest * BATCH_MS / 1000))
  const openRate = slowest * OPEN_LOOP_SHARE
  const openCount = batchMessages ?? clamp(Math.round(openRate * BATCH_MS / 1000))
  const closedMs = closedCount * 1000 / slowest
  // Rows whose batches are long (big payloads, slow networks) get fewer, down to one pair of each kind.
  const pairs = (batchMs, share) => Math.max(1, Math.round(ROW_MS * share / (formats * batchMs)))
  // A batch of one message at a time is the same in closed and open loop (people's 13 MB): costing
  // the timed batches spares a second pair that would take as long.
  const single = closedCount === 1 && openCount === 1 && load.inflight === 1 && load.connections === 1
  return {
    closedCount,
    timedRate: null,
    closedPairs: pairs(closedMs, CLOSED_SHARE),
    openCount: single ? 0 : openCount,
    openRate: single ? null : Math.round(openRate * 10) / 10,
    openPairs: single ? 0 : pairs(openCount * 1000 / openRate, 1 - CLOSED_SHARE),
    // None where one batch outlasts it: warm clients need no single message of people's megabytes to lead in.
    warmupBatches: Math.round(WARMUP_MS / closedMs)
  }
}

/**
 * The order of the formats in each pair of one phase of a row: balanced blocks (trialOrder), the
 * formats renamed by the round so that the one that opens the row takes turns from one generation
 * of a rotation to the next. The first batch of a row meets what the row before it left behind
 * (after people, the person row's first batch ran the p99 of json in an A/A run 1.5x that of
 * its twin, always the same format's); a row of one pair (people) would otherwise put the same
 * format first every time.
 * @param {number} count formats
 * @param {number} pairs in the phase
 * @param {number} round how many generations of the same rotation came before
 * @returns {number[][]} per pair, format indexes in the order they run
 */
export function batchOrders (count, pairs, round) {
  return Array.from({ length: pairs }, (_, pair) => trialOrder(count, pair).map((format) => (format + round) % count))
}

const clamp = (count) => Math.max(1, Math.min(MAX_BATCH_MESSAGES, count))
