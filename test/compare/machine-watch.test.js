// settle (lib/compare/machine-watch.js) against a real child process's CPU.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { settle } from '../../lib/compare/machine-watch.js'
import { CpuClock } from '../../lib/cpu-time.js'

const LINUX = process.platform === 'linux'

test('settle waits until a process that is still working has gone quiet', { skip: !LINUX && 'reads /proc' }, async () => {
  // A child that keeps a core busy for 300 ms once asked, then says so and idles.
  const code = 'process.on("message", () => { const end = Date.now() + 300; while (Date.now() < end); process.send("done") })'
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  try {
    const clock = new CpuClock(child.pid)
    await settle([clock]) // idle from the start: one window
    const done = once(child, 'message')
    let finished = false
    done.then(() => { finished = true })
    const before = clock.read()
    child.send('go')
    // Until the child has started, it is quiet: wait for its work to show on its clock.
    while (clock.read() - before < 5e6) await new Promise((resolve) => setImmediate(resolve))
    await settle([clock])
    await new Promise((resolve) => setImmediate(resolve))
    assert.ok(finished, 'settle returned while the child was still busy')
  } finally {
    child.kill()
  }
})
