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
 * One process's CPU time, read again and again: its threads are listed once (a process's threads
 * hardly change), and again when one has gone or the count looks stale.
 */
export class CpuClock {
  /** @param {number} pid */
  constructor (pid) {
    this.pid = pid
    /** Paths of its threads' schedstat files; null until listed. */
    this.files = null
  }

  /** @returns {number|null} nanoseconds on a CPU so far, null where the kernel does not say */
  read () {
    for (let attempt = 0; attempt < 2; attempt++) {
      if (!this.files || attempt > 0) {
        try {
          this.files = fs.readdirSync(`/proc/${this.pid}/task`).map((task) => `/proc/${this.pid}/task/${task}/schedstat`)
        } catch {
          return null
        }
      }
      let total = 0
      try {
        // The first field is the time on a CPU.
        for (const file of this.files) total += Number(fs.readFileSync(file, 'latin1').split(' ', 1)[0])
        return total
      } catch {} // a thread ended: list them again
    }
    return null
  }
}

/**
 * CPU time the whole machine has spent busy (not idle or waiting on I/O), in nanoseconds.
 * @returns {number|null} null where /proc/stat cannot be read
 */
export function machineBusyNs () {
  try {
    const fields = fs.readFileSync('/proc/stat', 'latin1').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number)
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    const busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7]
    return busy * 1e9 / CLOCK_TICKS
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
