// What CPU this process may use, read from the kernel: never more cores than it may run on, and a
// cgroup quota, where there is one, as the cap. A quota below one core is run for real, in a cgroup
// of its own, by test/process/pacing.test.js.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import os from 'node:os'
import { availableCpu } from '../../lib/load/cpu-quota.js'

test('availableCpu: the cores this process may run on, capped by its cgroup\'s quota where it has one', () => {
  const { cores, quota } = availableCpu()
  assert.ok(cores > 0 && cores <= os.availableParallelism(), `${cores} of ${os.availableParallelism()}`)
  if (quota === null) assert.equal(cores, os.availableParallelism())
  else assert.equal(cores, Math.min(quota, os.availableParallelism()))
})
