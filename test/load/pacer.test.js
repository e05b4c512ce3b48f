// The pacers' contract, on the real clock and the real pacing thread: a wake-up never comes before
// its time, each wakeAt replaces the last, cancel forgets it, one already due comes at once, and
// close ends the thread. How early or late they are is a benchmark (npm run bench:rate), not a test.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { performance } from 'node:perf_hooks'
import { PRECISE_WINDOW_US, ThreadPacer, TimerPacer, checkPacing, createPacer, defaultPacing, parsePacing } from '../../lib/load/pacer.js'
import { realtimeRefusal } from '../../lib/load/realtime.js'
import { UsageError } from '../../lib/errors.js'
import { schedulingPolicy } from '../helpers.js'

const LIMIT = { timeout: 10_000 }

/** Resolves with the time a wake-up came. */
function wake (pacer, at) {
  return new Promise((resolve) => pacer.wakeAt(at, () => resolve(performance.now())))
}

for (const [name, Pacer] of [['precise', ThreadPacer], ['spin', ThreadPacer], ['timer', TimerPacer]]) {
  describe(name, () => {
    test('wakes no earlier than asked, each time, however near or far the time', LIMIT, async (t) => {
      const pacer = new Pacer({ kind: name, windowUs: 100 })
      await pacer.start()
      t.after(() => pacer.close())
      for (const aheadMs of [5, 0.3, 0.05, 0, -1, 2]) {
        const at = performance.now() + aheadMs
        assert.ok(await wake(pacer, at) >= at, `${aheadMs} ms ahead`)
      }
    })

    test('a later wakeAt replaces the one before; cancel forgets it', LIMIT, async (t) => {
      const pacer = new Pacer({ kind: name, windowUs: 100 })
      await pacer.start()
      t.after(() => pacer.close())
      const calls = []
      pacer.wakeAt(performance.now() + 1, () => calls.push('replaced'))
      const last = wake(pacer, performance.now() + 3)
      await last
      pacer.wakeAt(performance.now() + 1, () => calls.push('cancelled'))
      pacer.cancel()
      pacer.wakeAt(performance.now() + 0.1, () => calls.push('immediate, then cancelled'))
      pacer.cancel()
      // Past the cancelled ones' times, a last wake-up comes alone.
      await wake(pacer, performance.now() + 5)
      assert.deepEqual(calls, [])
    })

    test('close ends it with a wake-up pending, which never comes', LIMIT, async () => {
      const pacer = new Pacer({ kind: name, windowUs: 100 })
      await pacer.start()
      let called = false
      const at = performance.now() + 20
      pacer.wakeAt(at, () => { called = true })
      await pacer.close()
      // Past its time, by another pacer's clock.
      const clock = new TimerPacer()
      await wake(clock, at + 10)
      assert.equal(called, false)
      assert.equal(pacer.worker ?? null, null)
    })
  })
}

test('parsePacing reads precise, precise:<µs>, spin and timer; anything else is none', () => {
  assert.deepEqual(parsePacing('precise'), { kind: 'precise', windowUs: PRECISE_WINDOW_US })
  assert.deepEqual(parsePacing('precise:250'), { kind: 'precise', windowUs: 250 })
  assert.deepEqual(parsePacing('precise:0'), { kind: 'precise', windowUs: 0 })
  assert.deepEqual(parsePacing('spin'), { kind: 'spin' })
  assert.deepEqual(parsePacing('timer'), { kind: 'timer' })
  for (const bad of ['sometimes', 'precise:', 'precise:-1', 'precise:2000', 'timer:5', 'PRECISE']) assert.equal(parsePacing(bad), null, bad)
  assert.equal(createPacer('precise:250').name, 'precise:250', 'the report names a window that is not the default')
  assert.equal(createPacer('precise:' + PRECISE_WINDOW_US).name, 'precise')
  assert.equal(createPacer('precise', null, 0.2).name, 'precise (0.2 ms tick)', 'and a tick that is not the millisecond')
  assert.equal(createPacer('timer', null, 0.2).name, 'timer', 'timers have no tick of pacing\'s')
  assert.deepEqual(parsePacing('realtime'), { kind: 'precise', windowUs: PRECISE_WINDOW_US, realtime: true })
  assert.equal(createPacer('realtime').name, 'realtime')
})

test('realtime pacing runs its thread and the sending thread at real-time priority, and the sender at normal again after; refused in one line where not permitted', async (t) => {
  const refusal = realtimeRefusal()
  if (refusal !== null) {
    assert.throws(() => checkPacing('realtime'), (err) => err instanceof UsageError && !err.message.includes('\n') && err.message.includes('CAP_SYS_NICE'))
    return
  }
  assert.equal(checkPacing('realtime'), 'realtime')
  const pacer = createPacer('realtime')
  t.after(() => pacer.close())
  await pacer.start()
  assert.deepEqual([schedulingPolicy(pacer.tid), schedulingPolicy(process.pid)], [1, 1], 'SCHED_FIFO, both')
  const at = performance.now() + 5
  assert.ok(await wake(pacer, at) >= at, 'and paces as precise does')
  await pacer.close()
  assert.equal(schedulingPolicy(process.pid), 0, 'the report and whatever follows run at normal priority')
})

test('defaultPacing: precise where CPU is to spare; timer under a quota below one core, or a sending thread for every core', () => {
  assert.deepEqual(defaultPacing(1, { cores: 2, quota: null }), { pacing: 'precise', reason: null })
  assert.deepEqual(defaultPacing(1, { cores: 1.5, quota: 1.5 }), { pacing: 'precise', reason: null })
  assert.deepEqual(defaultPacing(1, { cores: 0.5, quota: 0.5 }),
    { pacing: 'timer', reason: 'the default under a CPU quota of 0.5 cores, below one (cgroup)' })
  assert.deepEqual(defaultPacing(2, { cores: 2, quota: null }),
    { pacing: 'timer', reason: 'the default with --workers 2 on 2 core(s): none to spare for pacing threads' })
  assert.deepEqual(defaultPacing(1, { cores: 1, quota: null }),
    { pacing: 'timer', reason: 'the default with one sending thread on 1 core(s): none to spare for pacing threads' })
  assert.equal(defaultPacing(3, { cores: 8, quota: null }).pacing, 'precise')
})

test('usage: the waiting turns and the pacing thread\'s own CPU, counted as they come', LIMIT, async (t) => {
  const spin = new ThreadPacer({ kind: 'spin' })
  await spin.start()
  t.after(() => spin.close())
  const before = spin.usage()
  for (let i = 1; i <= 20; i++) await wake(spin, performance.now() + 2)
  const after = spin.usage()
  // Spin waits out its lead (0.1-1 ms) in turns before the due time, whenever the post comes in time.
  assert.ok(after.waitedMs > before.waitedMs, `waited ${after.waitedMs - before.waitedMs} ms`)
  if (before.threadMs === null) return t.diagnostic('no per-thread CPU from the kernel here')
  assert.ok(after.threadMs > before.threadMs, 'the thread woke 20 times: its CPU grew')
  assert.deepEqual(new TimerPacer().usage(), { waitedMs: 0, threadMs: 0 }, 'timers wait asleep')
})
