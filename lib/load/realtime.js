// Real-time priority (SCHED_FIFO) for the threads realtime pacing wakes on time: the pacing thread,
// and the thread that sends. Asleep at normal priority on these virtual machines, a thread waking
// at its time waits for the task running on its CPU to finish its slice, now and then for a
// millisecond or more; at real-time priority it runs at once. Set through chrt (util-linux), which
// the kernel lets only root or CAP_SYS_NICE do.
import fs from 'node:fs'
import { execFileSync } from 'node:child_process'

/** The lowest real-time priority: above every normal thread, below the kernel's own. */
const PRIORITY = '1'

/**
 * Whether this process may raise threads to real-time priority.
 * @returns {string|null} why not, one line; null when it may
 */
export function realtimeRefusal () {
  try {
    execFileSync('chrt', ['-f', PRIORITY, 'true'], { stdio: 'pipe' })
    return null
  } catch (err) {
    const said = err.stderr?.toString().trim().split('\n').at(-1)
    return `real-time priority (SCHED_FIFO) was refused (${said || err.message}): it needs root or CAP_SYS_NICE, and chrt`
  }
}

/** @returns {number|null} the kernel's id of the calling thread (null where /proc does not say) */
export function currentThreadId () {
  try {
    return Number(fs.readlinkSync('/proc/thread-self').split('/').pop())
  } catch {
    return null
  }
}

/**
 * Sets a thread's scheduling: real-time (SCHED_FIFO at the lowest priority) or back to normal.
 * @param {number} tid
 * @param {boolean} realtime
 */
export function scheduleThread (tid, realtime) {
  execFileSync('chrt', realtime ? ['-f', '-p', PRIORITY, String(tid)] : ['-o', '-p', '0', String(tid)], { stdio: 'pipe' })
}
