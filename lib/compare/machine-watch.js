// What the machine does around a comparison's batches: whether the processes of the row just run
// have gone quiet (settle), and the CPU that others took over a generation (MachineWatch).
import { setTimeout } from 'node:timers/promises'
import { performance } from 'node:perf_hooks'
import { loadAverage, machineCpuNs } from '../cpu-time.js'
import { round } from '../display.js'

/** A row's processes are quiet when they use less than this share of one core over SETTLE_WINDOW_MS. */
const QUIET_SHARE = 0.05
const SETTLE_WINDOW_MS = 5
/** The longest a row waits for the one before it to go quiet. */
const MAX_SETTLE_MS = 1000

/**
 * Waits until the processes of the row just run have gone quiet: their CPU over the last
 * SETTLE_WINDOW_MS below QUIET_SHARE of a core and none of their threads waiting for a CPU, or
 * MAX_SETTLE_MS gone. After people, its processes went on collecting 13 MB messages' garbage into
 * the next row's first batch, whose p99 ran 3.7x that of the row's other batches.
 * @param {import('../cpu-time.js').CpuClock[]} clocks
 */
export async function settle (clocks) {
  const busy = () => clocks.reduce((sum, clock) => sum + (clock.read() ?? 0), 0)
  const started = performance.now()
  let before = busy()
  while (performance.now() - started < MAX_SETTLE_MS) {
    await setTimeout(SETTLE_WINDOW_MS)
    const now = busy()
    if (now - before < QUIET_SHARE * SETTLE_WINDOW_MS * 1e6 && !clocks.some((clock) => clock.runnable())) break
    before = now
  }
}

/**
 * What the machine did over a generation besides our work: the load average at its end, the CPU
 * other processes took (the time the machine's processes ran, less the hypervisor's steal and less this
 * process's, the servers' and the clients'), and the steal: on a virtual machine, other guests.
 */
export class MachineWatch {
  /**
   * @param {import('../cpu-time.js').CpuClock[]} clocks the servers' and clients' clocks, read already around their batches
   */
  constructor (clocks) {
    this.clocks = clocks
    this.started = performance.now()
    this.machine = machineCpuNs()
    this.own = process.cpuUsage()
    this.ns = clocks.map((clock) => clock.read())
  }

  /** @returns {{ms: number, loadAverage: number|null, neighbourCores: number|null, stealCores: number|null}} */
  read () {
    const ms = performance.now() - this.started
    const own = process.cpuUsage(this.own)
    const ourNs = (own.user + own.system) * 1000 +
      this.clocks.reduce((sum, clock, i) => sum + (clock.read() ?? 0) - (this.ns[i] ?? 0), 0)
    const machine = machineCpuNs()
    const known = machine !== null && this.machine !== null
    const stealNs = known ? machine.stealNs - this.machine.stealNs : null
    const cores = (ns) => known ? Math.max(0, round(ns / 1e6 / ms, 2)) : null
    return {
      ms: Math.round(ms),
      loadAverage: loadAverage(),
      neighbourCores: cores(known && machine.busyNs - this.machine.busyNs - stealNs - ourNs),
      stealCores: cores(stealNs)
    }
  }
}
