// The pacers' contract, on the real clock and the real pacing thread: a wake-up never comes before
// its time, each wakeAt replaces the last, cancel forgets it, one already due comes at once, and
// close ends the thread. How early or late they are is a benchmark (npm run bench:rate), not a test.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { performance } from 'node:perf_hooks'
import { PrecisePacer, TimerPacer } from '../../lib/load/pacer.js'

const LIMIT = { timeout: 10_000 }

/** Resolves with the time a wake-up came. */
function wake (pacer, at) {
  return new Promise((resolve) => pacer.wakeAt(at, () => resolve(performance.now())))
}

for (const Pacer of [PrecisePacer, TimerPacer]) {
  describe(Pacer.name, () => {
    test('wakes no earlier than asked, each time, however near or far the time', LIMIT, async (t) => {
      const pacer = new Pacer()
      await pacer.start()
      t.after(() => pacer.close())
      for (const aheadMs of [5, 0.3, 0.05, 0, -1, 2]) {
        const at = performance.now() + aheadMs
        assert.ok(await wake(pacer, at) >= at, `${aheadMs} ms ahead`)
      }
    })

    test('a later wakeAt replaces the one before; cancel forgets it', LIMIT, async (t) => {
      const pacer = new Pacer()
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
      const pacer = new Pacer()
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
