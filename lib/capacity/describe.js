// One paragraph on what a capacity run measured, for the console, the page and the docs.
import { int } from '../display.js'

/**
 * @param {{settings: object, machine: object}} results
 * @returns {string}
 */
export function describeCapacityRun ({ settings, machine }) {
  const { budget, server, connections, inflight, pacing, schedule, direction, tls, compress } = settings
  const quota = budget.quota ? ` (a CPU quota of ${int(budget.quota.quotaUs)} µs per ${int(budget.quota.periodUs)} µs)` : ''
  return `Capacity: the highest open-loop rate the ${server} server sustained on ${budget.cores} core${budget.cores === 1 ? '' : 's'} ` +
    `(CPU ${budget.serverCpus}${quota}) within each objective, every message acked and acked msgs/s within 1% of offered; ` +
    `generators on CPU ${budget.generatorCpus}, ${connections} connections each, up to ${inflight} in flight per connection, ` +
    `${pacing} pacing, direction ${direction}${tls ? ', over wss://' : ''}${compress ? ', permessage-deflate' : ''}, loopback (no shaping). ` +
    `Probes of ${schedule.stepMs} ms after a ${schedule.leadMs} ms lead-in, formats taking turns on one server; steps up from ` +
    `${int(schedule.startRate)}/s, bisects, then ${schedule.rounds} confirming rounds, whose spread gives each interval (95%). ` +
    `Machine: ${machine.cpu}, ${machine.cores} CPUs, Node ${machine.node}.`
}
