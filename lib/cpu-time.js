// CPU time read from the kernel, for a comparison that times short batches: a process's run time
// in nanoseconds summed over its threads (/proc/PID/task/*/schedstat; /proc's tick counts are
// 10 ms coarse), and how busy the whole machine was, to tell our processes' load from neighbours'.
import fs from 'node:fs'
import os from 'node:os'

/**
 * The CPU time a process has run, all its threads together, in nanoseconds.
 * @param {number} pid
 * @returns {number|null} null where the kernel does not say (not Linux, or the process is gone)
 */
export function processCpuNs (pid) {
  return new CpuClock(pid).read()
}

/**
 * One process's CPU time, read again and again, that never goes back: a thread that has ended
 * since the last reading keeps the time it had then (the kernel forgets it with the thread). A
 * thread born and ended between two readings is not seen at all: read often, or around work
 * done by long-lived threads (a server's).
 */
export class CpuClock {
  /** @param {number} pid */
  constructor (pid) {
    this.pid = pid
    /** Each live thread's time at the last reading, by thread id. */
    this.threads = new Map()
    /** The time of threads that have ended, as last read. */
    this.ended = 0
  }

  /** @returns {number|null} nanoseconds on a CPU so far, null where the kernel does not say */
  read () {
    const tasks = threadsOf(this.pid)
    if (!tasks) return null
    const now = new Map()
    for (const task of tasks) {
      const ns = threadCpuNs(task, this.pid)
      if (ns !== null) now.set(task, ns) // else it ended between the listing and the read: counted below as ended
    }
    for (const [task, ns] of this.threads) if (!now.has(task)) this.ended += ns
    this.threads = now
    let total = this.ended
    for (const ns of now.values()) total += ns
    return total
  }

  /**
   * Whether any of the process's threads is running or waiting for a CPU (state R): a busy process
   * the scheduler has kept off the CPUs for a while is not idle, though its clock stands still.
   * @returns {boolean} false too where the kernel does not say (not Linux, or the process is gone)
   */
  runnable () {
    return (threadsOf(this.pid) ?? []).some((task) => {
      try {
        // The command may hold spaces and parentheses: the state follows its closing parenthesis.
        const stat = fs.readFileSync(`/proc/${this.pid}/task/${task}/stat`, 'latin1')
        return stat[stat.lastIndexOf(')') + 2] === 'R'
      } catch {
        return false // it ended between the listing and the read
      }
    })
  }
}

/**
 * The CPU time one thread has run, in nanoseconds.
 * @param {number|string} tid its thread id
 * @param {number|string} [pid] its process (this one by default)
 * @returns {number|null} null where the kernel does not say (not Linux, or the thread is gone)
 */
export function threadCpuNs (tid, pid = 'self') {
  try {
    // The first field is the time on a CPU.
    return Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'latin1').split(' ', 1)[0])
  } catch {
    return null
  }
}

/** A process's thread ids, or null where the kernel does not say (not Linux, or the process is gone). */
function threadsOf (pid) {
  try {
    return fs.readdirSync(`/proc/${pid}/task`)
  } catch {
    return null
  }
}

/**
 * CPU time the machine's processes have spent on its CPUs (user and system), and the time stolen:
 * time the hypervisor ran other guests while this one's CPUs had work (a virtual machine's
 * neighbours, which no process list or load average here shows), in nanoseconds. Interrupt time
 * is in neither: the kernel's network receive work runs there, charged to no process, and over
 * loopback that is the run's own traffic (0.3 cores of it beside a server on half a core).
 * @returns {{busyNs: number, stealNs: number}|null} null where /proc/stat cannot be read
 */
export function machineCpuNs () {
  try {
    const fields = fs.readFileSync('/proc/stat', 'latin1').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number)
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    const busy = fields[0] + fields[1] + fields[2] + fields[7]
    return { busyNs: busy * 1e9 / CLOCK_TICKS, stealNs: fields[7] * 1e9 / CLOCK_TICKS }
  } catch {
    return null
  }
}

/** The kernel's USER_HZ, 100 on every Linux Node supports. */
const CLOCK_TICKS = 100

/**
 * The one-minute load average, or null where the platform has none (Windows reports zeros).
 * @returns {number|null}
 */
export function loadAverage () {
  const [minute] = os.loadavg()
  return os.platform() === 'win32' ? null : Math.round(minute * 100) / 100
}
