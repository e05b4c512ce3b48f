// How much CPU this process may use: the cores it may run on, and the quota of its cgroup (a
// container's or a Kubernetes pod's CPU limit: cgroup v2's cpu.max, v1's cpu.cfs_quota_us), the
// tightest of the cgroup and its parents. A pacing thread that waits busily needs CPU to spare.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const CGROUP_ROOT = '/sys/fs/cgroup'

/**
 * The CPU this process may use, in cores: its CPU affinity's count, or its cgroup's quota when
 * tighter (which may be a fraction of one).
 * @returns {{cores: number, quota: number|null}} quota: cores a cgroup allows, null without a limit
 */
export function availableCpu () {
  const quota = cgroupQuota()
  const cores = os.availableParallelism()
  return { cores: quota === null ? cores : Math.min(cores, quota), quota }
}

/** The tightest CPU quota of this process's cgroup and its parents, in cores; null without one. */
function cgroupQuota () {
  let lines
  try {
    lines = fs.readFileSync('/proc/self/cgroup', 'latin1').trim().split('\n')
  } catch {
    return null // not Linux
  }
  let quota = null
  for (const line of lines) {
    const [, controllers, where] = /^\d+:([^:]*):(.*)$/.exec(line) ?? []
    // v2: one unified hierarchy ("0::/path"); v1: the hierarchy with the cpu controller.
    const files = controllers === '' ? v2Quota : controllers?.split(',').includes('cpu') ? v1Quota : null
    if (!files) continue
    const base = controllers === '' ? CGROUP_ROOT : path.join(CGROUP_ROOT, controllers)
    for (let dir = where; ; dir = path.dirname(dir)) {
      const cores = files(path.join(base, dir))
      if (cores !== null) quota = Math.min(quota ?? Infinity, cores)
      if (dir === '/' || dir === '.') break
    }
  }
  return quota
}

/** cgroup v2: "max 100000" or "<quota> <period>" in µs. */
function v2Quota (dir) {
  const [quota, period] = readWords(path.join(dir, 'cpu.max'))
  return quota === undefined || quota === 'max' ? null : Number(quota) / Number(period)
}

/** cgroup v1: cpu.cfs_quota_us (-1: none) over cpu.cfs_period_us. */
function v1Quota (dir) {
  const [quota] = readWords(path.join(dir, 'cpu.cfs_quota_us'))
  const [period] = readWords(path.join(dir, 'cpu.cfs_period_us'))
  return quota === undefined || Number(quota) < 0 || !period ? null : Number(quota) / Number(period)
}

function readWords (file) {
  try {
    return fs.readFileSync(file, 'latin1').trim().split(/\s+/)
  } catch {
    return []
  }
}
