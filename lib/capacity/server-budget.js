// The server's fixed CPU budget (--server-cpus): whole CPUs of its own (taskset), the generators on
// the rest, and for a fraction of a core a CPU quota (a cgroup of its own) on the one CPU it runs
// on, so that a generator core can outrun it.
import fs from 'node:fs'
import path from 'node:path'
import { allowedCpus, hasTaskset } from '../processes.js'
import { UsageError } from '../errors.js'

/**
 * The kernel refuses a quota under 1 ms per period (v1's cfs_quota_us and v2's cpu.max alike), so
 * the period is the shortest that gives the fraction at least that: a throttled server then waits
 * at most period less quota (1 ms at 0.5 cores), where the default 100 ms period would stall it
 * for 50 ms, a p99 of its own.
 */
const MIN_QUOTA_US = 1000

/**
 * @typedef {object} ServerBudget
 * @property {number} cores the server's share of the machine, in cores (0.5, 1, 2)
 * @property {string} serverCpus taskset's list for the server
 * @property {string} generatorCpus taskset's list for the generators: every other allowed CPU
 * @property {{quotaUs: number, periodUs: number}|null} quota for a fraction of a core
 */

/**
 * Plans the server's budget on this machine's CPUs.
 * @param {number} cores --server-cpus, above 0
 * @param {number[]} [cpus] the CPUs this process may use
 * @returns {ServerBudget}
 * @throws {UsageError} when it leaves no CPU for the generators, or taskset is missing
 */
export function planServerBudget (cores, cpus = allowedCpus()) {
  const whole = Math.ceil(cores)
  if (whole >= cpus.length) {
    throw new UsageError(`--server-cpus ${cores} leaves no CPU for the generators: this machine lets us use ${cpus.length} (at most ${Math.max(0, cpus.length - 1)} for the server)`)
  }
  if (!hasTaskset()) throw new UsageError('--server-cpus pins the server and the generators with taskset (util-linux), which is not installed')
  const periodUs = Math.max(MIN_QUOTA_US, Math.ceil(MIN_QUOTA_US / cores))
  return {
    cores,
    serverCpus: cpus.slice(0, whole).join(','),
    generatorCpus: cpus.slice(whole).join(','),
    quota: Number.isInteger(cores) ? null : { quotaUs: Math.round(cores * periodUs), periodUs }
  }
}

/**
 * Holds a running process to a CPU quota: a cgroup of its own (v2's cpu.max, or v1's cpu
 * controller), removed by `remove()` once the process has exited.
 * @param {number} pid
 * @param {{quotaUs: number, periodUs: number}} quota
 * @param {string} [root] where cgroups are mounted
 * @returns {{dir: string, remove: () => void}} remove: once the process has exited (a cgroup with a process in it stays)
 * @throws {UsageError} when no cgroup can be made here (not root, no cpu controller)
 */
export function limitCpu (pid, { quotaUs, periodUs }, root = '/sys/fs/cgroup') {
  const unified = fs.existsSync(path.join(root, 'cgroup.controllers'))
  const dir = path.join(root, unified ? '' : 'cpu', `ws-bench-capacity-${process.pid}-${pid}`)
  try {
    if (unified && !fs.readFileSync(path.join(root, 'cgroup.subtree_control'), 'latin1').includes('cpu')) {
      fs.writeFileSync(path.join(root, 'cgroup.subtree_control'), '+cpu')
    }
    fs.mkdirSync(dir)
  } catch (err) {
    throw new UsageError(`a fraction of a core needs a cgroup with a CPU quota, and none could be made here (${err.code ?? err.message}): run as root, or give --server-cpus whole CPUs`)
  }
  try {
    if (unified) {
      fs.writeFileSync(path.join(dir, 'cpu.max'), `${quotaUs} ${periodUs}`)
    } else {
      // The period first: a quota is checked against the period in force.
      fs.writeFileSync(path.join(dir, 'cpu.cfs_period_us'), String(periodUs))
      fs.writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), String(quotaUs))
    }
    fs.writeFileSync(path.join(dir, 'cgroup.procs'), String(pid))
  } catch (err) {
    fs.rmdirSync(dir)
    throw new UsageError(`could not hold the server to ${quotaUs} µs of CPU per ${periodUs} µs: ${err.code ?? err.message}`)
  }
  return { dir, remove: () => fs.rmdirSync(dir) }
}
