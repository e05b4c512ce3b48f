// lib/cpu-time.js read from a real kernel: a child process that burns a known amount of CPU (by its
// own account, process.cpuUsage) between two readings, told when to start and saying when it is done,
// so nothing waits on a clock.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { CpuClock, loadAverage, machineCpuNs, processCpuNs } from '../lib/cpu-time.js'

const LINUX = process.platform === 'linux'

/**
 * A child that prints `ready`, then on each `go <ms>` line burns that much CPU on its main thread and
 * prints `burned <µs>` (its own CPU over the burn); `worker <ms>` does the same in a worker thread
 * that then exits. It ends when its stdin closes.
 */
function burner () {
  const child = spawn(process.execPath, ['-e', `
    const { Worker } = require('node:worker_threads')
    const burn = (ms) => { const start = process.cpuUsage(); let used = 0; while (used < ms * 1000) { const d = process.cpuUsage(start); used = d.user + d.system } return used }
    const readline = require('node:readline').createInterface({ input: process.stdin })
    readline.on('line', (line) => {
      const [what, ms] = line.split(' ')
      if (what === 'go') return console.log('burned ' + burn(Number(ms)))
      const start = process.cpuUsage()
      const worker = new Worker('const s = process.cpuUsage(); let u = 0; while (u < ' + Number(ms) * 1000 + ') { const d = process.cpuUsage(s); u = d.user + d.system }', { eval: true })
      worker.on('exit', () => { const d = process.cpuUsage(start); console.log('burned ' + (d.user + d.system)) })
    })
    console.log('ready')
  `], { stdio: ['pipe', 'pipe', 'inherit'] })
  const lines = []
  const waiting = []
  let buffered = ''
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    buffered += chunk
    const complete = buffered.split('\n')
    buffered = complete.pop()
    for (const line of complete) (waiting.shift() ?? ((text) => lines.push(text)))(line)
  })
  const nextLine = () => lines.length ? Promise.resolve(lines.shift()) : new Promise((resolve) => waiting.push(resolve))
  const exited = once(child, 'exit')
  return {
    child,
    nextLine,
    /** Burns `ms` of CPU in the child (in a worker thread that then exits, with `worker`); resolves with the µs it burned. */
    async burn (ms, how = 'go') {
      child.stdin.write(`${how} ${ms}\n`)
      const line = await nextLine()
      assert.match(line, /^burned \d+$/)
      return Number(line.split(' ')[1])
    },
    async stop () {
      child.stdin.end()
      await exited
    }
  }
}

test('processCpuNs and CpuClock grow by what a child burns between two readings; both agree', { skip: !LINUX && 'reads /proc' }, async () => {
  const child = burner()
  try {
    assert.equal(await child.nextLine(), 'ready')
    const clock = new CpuClock(child.child.pid)
    const before = clock.read()
    const beforeOnce = processCpuNs(child.child.pid)
    assert.ok(Number.isInteger(before) && before > 0, `a started node process has run: ${before}`)
    assert.ok(beforeOnce >= before, 'a fresh reading is no smaller')
    const burnedUs = await child.burn(100)
    const after = clock.read()
    const afterOnce = processCpuNs(child.child.pid)
    // The child's own account and the kernel's schedstat count the same time, at different grain.
    assert.ok(after - before >= burnedUs * 1000 * 0.5, `grew ${after - before} ns while the child burned ${burnedUs} µs`)
    assert.ok(afterOnce >= after, 'processCpuNs reads the same clock')
    assert.ok(clock.read() >= after, 'and it never goes back while the threads stay')
  } finally {
    await child.stop()
  }
})

test('runnable: true while a process burns CPU, false once it sleeps and once it has gone', { skip: !LINUX && 'reads /proc' }, async () => {
  const child = burner()
  assert.equal(await child.nextLine(), 'ready')
  const clock = new CpuClock(child.child.pid)
  // Asleep on its stdin, once it has finished starting: no thread running or waiting for a CPU.
  const started = Date.now()
  while (clock.runnable() && Date.now() - started < 5000) await new Promise((resolve) => setImmediate(resolve))
  assert.equal(clock.runnable(), false, 'idle on its stdin')
  assert.equal(new CpuClock(process.pid).runnable(), true, 'this process, reading: running')
  const burning = child.burn(300)
  const start = clock.read()
  let seen = false
  // While the burn lasts (its CPU short of 300 ms), the child's main thread is running or waiting for a CPU.
  while (!seen && clock.read() - start < 200e6) seen = clock.runnable()
  assert.ok(seen, 'runnable at some reading during a 300 ms burn')
  await burning
  await child.stop()
  assert.equal(clock.runnable(), false, 'gone')
})

test('a process that does not exist (or has exited): null, not 0 and not a throw', { skip: !LINUX && 'reads /proc' }, async () => {
  const child = burner()
  assert.equal(await child.nextLine(), 'ready')
  const clock = new CpuClock(child.child.pid)
  assert.ok(clock.read() > 0)
  await child.stop()
  assert.equal(clock.read(), null, 'a clock whose process has gone')
  assert.equal(processCpuNs(child.child.pid), null)
  // Above the kernel's pid_max (at most 2^22): never a process.
  assert.equal(processCpuNs(2 ** 22 + 1), null)
  assert.equal(new CpuClock(2 ** 22 + 1).read(), null)
})

test('CpuClock never goes back when threads of the process come and go between readings', {
  skip: !LINUX && 'reads /proc'
}, async () => {
  const child = burner()
  try {
    assert.equal(await child.nextLine(), 'ready')
    const clock = new CpuClock(child.child.pid)
    const before = clock.read()
    await child.burn(100, 'worker')
    const between = clock.read()
    await child.burn(50)
    const after = clock.read()
    assert.ok(between !== null && after !== null, 'a thread that has gone is listed again, not a failed reading')
    // A thread born and ended between two readings is not seen (the kernel forgets it); the rest still counts.
    assert.ok(between >= before, `${before} -> ${between}`)
    assert.ok(after - between >= 50_000 * 1000 * 0.5, `grew ${after - between} ns while the main thread burned 50 ms`)
  } finally {
    await child.stop()
  }
})

test('machineCpuNs: the machine\'s busy time, a number that grows while a child burns, and the steal within it', { skip: !LINUX && 'reads /proc/stat' }, async () => {
  const child = burner()
  try {
    assert.equal(await child.nextLine(), 'ready')
    const before = machineCpuNs()
    assert.ok(Number.isFinite(before.busyNs) && before.busyNs > 0)
    // Steal is 0 on bare metal and grows only while a hypervisor runs other guests: a count, never more than busy.
    assert.ok(Number.isFinite(before.stealNs) && before.stealNs >= 0 && before.stealNs <= before.busyNs, JSON.stringify(before))
    await child.burn(100)
    const after = machineCpuNs()
    // /proc/stat counts in ticks of 10 ms: 100 ms of one child is at least several of them.
    assert.ok(after.busyNs > before.busyNs, `${before.busyNs} -> ${after.busyNs}`)
    assert.ok(after.stealNs >= before.stealNs)
  } finally {
    await child.stop()
  }
})

test('loadAverage: the one-minute load average, rounded to hundredths', () => {
  const load = loadAverage()
  if (process.platform === 'win32') return assert.equal(load, null)
  assert.equal(typeof load, 'number')
  assert.ok(load >= 0 && Number.isFinite(load))
  assert.equal(Math.round(load * 100) / 100, load)
})
