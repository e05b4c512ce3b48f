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
  let total = 0
  try {
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      // The first field is the time on the CPU; a thread that ended between the two reads is skipped.
      try {
        total += Number(fs.readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'latin1').split(' ', 1)[0])
      } catch {}
    }
  } catch {
    return null
  }
  return total
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
