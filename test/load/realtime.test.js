// Real-time priority for realtime pacing's threads, set and read back through the kernel: where this
// process may, a thread goes to SCHED_FIFO and back; where it may not (an unprivileged user), the
// refusal is one line.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { currentThreadId, realtimeRefusal, scheduleThread } from '../../lib/load/realtime.js'
import { schedulingPolicy as policyOf } from '../helpers.js'

test('the calling thread\'s id is the kernel\'s: the process id on the main thread', () => {
  assert.equal(currentThreadId(), process.pid)
})

test('where permitted, a thread goes to real-time priority and back; where not, the refusal says why in one line', (t) => {
  const refusal = realtimeRefusal()
  if (refusal !== null) {
    assert.match(refusal, /^real-time priority \(SCHED_FIFO\) was refused \(.+\): it needs root or CAP_SYS_NICE, and chrt$/)
    return
  }
  const tid = currentThreadId()
  t.after(() => scheduleThread(tid, false))
  assert.equal(policyOf(tid), 0)
  scheduleThread(tid, true)
  assert.equal(policyOf(tid), 1)
  scheduleThread(tid, false)
  assert.equal(policyOf(tid), 0)
})

test('an unprivileged user is refused, in one line', (t) => {
  if (process.getuid() !== 0) return t.skip('needs root to become an unprivileged user (setpriv)')
  const module = fileURLToPath(new URL('../../lib/load/realtime.js', import.meta.url))
  const said = execFileSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '--input-type=module', '-e',
    `import { realtimeRefusal } from ${JSON.stringify(module)}; console.log(realtimeRefusal())`], { encoding: 'utf8' })
  assert.match(said, /^real-time priority \(SCHED_FIFO\) was refused \(chrt: failed to set pid 0's policy: Operation not permitted\): it needs root or CAP_SYS_NICE, and chrt\n$/)
})
