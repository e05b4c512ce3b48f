// One paragraph on what a capacity run measured, for the console, the page and the docs.
import { int } from '../display.js'
import { SCOUT_SHARE } from './search.js'

/**
 * @param {{settings: object, machine: object}} results
 * @returns {string}
 */
export function describeCapacityRun ({ settings, machine }) {
  const { budget, server, connections, inflight, schedule, direction, tls, compress } = settings
  const pacing = pacingText(settings)
  const quota = budget.quota ? ` (a CPU quota of ${int(budget.quota.quotaUs)} µs per ${int(budget.quota.periodUs)} µs)` : ''
  const fanout = direction === 'fanout'
  // A fan-out's rate is publishes/s, its capacity deliveries/s: every publish once at every subscriber.
  const sustained = fanout
    ? 'every publish delivered to every subscriber and deliveries/s (publishes/s × subscribers) within 1% of offered, ' +
      'the objective on the publish-to-delivery latency'
    : 'every message acked and acked msgs/s within 1% of offered'
  const load = fanout
    ? `one publisher (up to ${inflight} publishes in flight) and ${connections} subscribers each, ${pacing}, direction fanout`
    : `${connections} connections each, up to ${inflight} in flight per connection, ${pacing}, direction ${direction}`
  return `Capacity: the highest open-loop rate the ${server} server sustained on ${budget.cores} core${budget.cores === 1 ? '' : 's'} ` +
    `(CPU ${budget.serverCpus}${quota}) within each objective, ${sustained}; ` +
    `generators on CPU ${budget.generatorCpus}, ${load}${tls ? ', over wss://' : ''}${compress ? ', permessage-deflate' : ''}, loopback (no shaping). ` +
    `Probes of ${schedule.stepMs} ms (${Math.round(schedule.stepMs * SCOUT_SHARE)} ms while stepping up or down) after a ${schedule.leadMs} ms lead-in, ` +
    'formats taking turns on one server; steps up from ' +
    `${int(schedule.startRate)}/s, bisects, then ${schedule.rounds} confirming rounds, each after the first on a fresh server and ` +
    'generators, whose spread gives each interval (95%). ' +
    `Machine: ${machine.cpu}, ${machine.cores} CPUs, Node ${machine.node}.`
}

/** The generators' pacing, and for precise pacing the tick its groups of messages go apart at, per objective. */
function pacingText ({ pacing, ticks }) {
  if (!pacing.startsWith('precise') || !ticks) return `${pacing} pacing`
  const apart = Object.entries(ticks).map(([slo, ms]) => `${ms} ms at ${slo}`).join(', ')
  return `${pacing} pacing (messages due together sent a tick apart: ${apart})`
}
