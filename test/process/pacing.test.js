// How a client paces its open loop and what it says of it, through real client processes: the
// pacing's CPU reported apart and left out of CPU per message, precise pacing held to its budget,
// and the cheap default where CPU is short (a cgroup's quota, as a pod's limit; a --workers thread
// for every core), with the reason in the report.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { ROOT, runScript, startServerProcess } from '../helpers.js'
import { PRECISE_BUDGET } from '../../lib/load/pacer.js'
import { realtimeRefusal } from '../../lib/load/realtime.js'

const report = ({ stdout }) => JSON.parse(stdout)
const round2 = (value) => Math.round(value * 100) / 100

describe('pacing', () => {
  let server
  before(async () => { server = await startServerProcess() })
  after(() => server.stop())

  test('spin pacing\'s waiting is reported apart (cpu.pacingUs) and left out of CPU per message', async () => {
    const run = await runScript('client_protobuf.js', ['5', '--rate', '500', '--duration', '1s', '--pacing', 'spin', '--url', server.url, '--json'])
    assert.equal(run.code, 0, run.stderr)
    const { cpu, messages, durationMs, target } = report(run)
    assert.equal(target.pacing, 'spin')
    // How much spin waits depends on how late the machine wakes its thread (on a busy one the posts
    // come after the due time and nothing is waited): that it is counted is what holds everywhere.
    assert.ok(cpu.pacingUs > 0, `pacing ${cpu.pacingUs} µs in ${durationMs} ms`)
    assert.ok(cpu.pacingUs <= cpu.userUs + cpu.systemUs, 'a part of the process\'s CPU')
    assert.equal(cpu.perMessageUs, round2((cpu.userUs + cpu.systemUs - cpu.pacingUs) / messages.sent))
    const text = await runScript('client_protobuf.js', ['5', '--rate', '500', '--duration', '300ms', '--pacing', 'spin', '--url', server.url])
    assert.match(text.stdout, /^cpu {7}[\d.]+ ms user {2}[\d.]+ ms system, of which pacing [\d.]+ ms {2}[\d.]+ µs\/msg \(this client process, measured phase, pacing left out\)$/m)
  })

  test('precise pacing (the default here) spends at most its budget of a core, whatever the rate', async () => {
    const run = await runScript('client_protobuf.js', ['5', '--rate', '5000', '--duration', '1s', '--url', server.url, '--json'])
    assert.equal(run.code, 0, run.stderr)
    const { cpu, durationMs, target, messages } = report(run)
    assert.equal(target.pacing, 'precise')
    assert.equal(target.pacingReason, null, 'no reason given when nothing was chosen for want of CPU')
    assert.deepEqual(messages, { sent: 5000, acked: 5000, errors: 0, lost: 0 })
    // The budget, plus what one measurement of a wake-up's cost may be off by (spin takes 0.5-1 core here).
    assert.ok(cpu.pacingUs <= 2 * PRECISE_BUDGET * durationMs * 1000, `pacing ${cpu.pacingUs} µs in ${durationMs} ms`)
    assert.ok(cpu.pacingUs > 0, 'its thread woke')
  })

  test('realtime pacing runs where real-time priority is permitted, and is refused in one line (exit 2) where it is not', async (t) => {
    const args = ['5', '--rate', '1000', '--duration', '500ms', '--pacing', 'realtime', '--url', server.url, '--json']
    if (realtimeRefusal() === null) {
      const run = await runScript('client_protobuf.js', args)
      assert.equal(run.code, 0, run.stderr)
      const { target, messages } = report(run)
      assert.equal(target.pacing, 'realtime')
      assert.deepEqual(messages, { sent: 500, acked: 500, errors: 0, lost: 0 })
    }
    if (process.getuid() !== 0) return t.skip('needs root to run the client as an unprivileged user (setpriv)')
    const refused = await new Promise((resolve) => execFile('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath,
      path.join(ROOT, 'client_protobuf.js'), ...args], { cwd: ROOT }, (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stderr })))
    assert.equal(refused.code, 2)
    assert.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr)
    assert.match(refused.stderr, /^--pacing realtime: real-time priority \(SCHED_FIFO\) was refused .* CAP_SYS_NICE/)
  })

  test('with a --workers thread for every core the default is timer pacing, and the report says why', async () => {
    const cores = os.availableParallelism()
    const run = await runScript('client_json.js', ['5', '--rate', String(100 * cores), '--duration', '300ms', '--workers', String(cores),
      '--url', server.url, '--json'])
    assert.equal(run.code, 0, run.stderr)
    const { target } = report(run)
    assert.equal(target.pacing, 'timer')
    assert.equal(target.pacingReason, `the default with --workers ${cores} on ${cores} core(s): none to spare for pacing threads`)
  })

  test('under a CPU quota below one core (a cgroup\'s, as a pod\'s limit) the default is timer pacing; --pacing still decides', async (t) => {
    const cgroup = makeCgroup(0.5)
    if (typeof cgroup === 'string') {
      // Root on Linux: CI has both, and must run it.
      if (process.env.CI) assert.fail(`cannot make a cgroup with a CPU quota: ${cgroup}`)
      return t.skip(cgroup)
    }
    t.after(() => cgroup.remove())
    const chosen = await cgroup.run(['client_protobuf.js', '5', '--rate', '200', '--duration', '300ms', '--url', server.url])
    assert.equal(chosen.code, 0, chosen.stderr)
    assert.match(chosen.stdout, /^target {4}200 msg\/s, sent at \d+ msg\/s: met \(timer pacing\)$/m)
    assert.match(chosen.stdout, /^pacing {4}timer: the default under a CPU quota of 0\.5 cores, below one \(cgroup\)$/m)
    const asked = await cgroup.run(['client_protobuf.js', '5', '--rate', '200', '--duration', '300ms', '--pacing', 'precise', '--url', server.url, '--json'])
    assert.equal(asked.code, 0, asked.stderr)
    assert.deepEqual([report(asked).target.pacing, report(asked).target.pacingReason], ['precise', null])
  })
})

/**
 * A cgroup of its own with a CPU quota (v2's cpu.max, or v1's cpu controller), to run processes in.
 * @param {number} cores
 * @returns {{run: (args: string[]) => Promise<{code: number, stdout: string, stderr: string}>, remove: () => void}|string}
 *   a string: why it cannot be made here
 */
function makeCgroup (cores) {
  const unified = fs.existsSync('/sys/fs/cgroup/cgroup.controllers')
  const dir = unified ? `/sys/fs/cgroup/ws-bench-test-${process.pid}` : `/sys/fs/cgroup/cpu/ws-bench-test-${process.pid}`
  try {
    if (unified && !fs.readFileSync('/sys/fs/cgroup/cgroup.subtree_control', 'latin1').includes('cpu')) {
      fs.writeFileSync('/sys/fs/cgroup/cgroup.subtree_control', '+cpu')
    }
    fs.mkdirSync(dir)
    if (unified) fs.writeFileSync(path.join(dir, 'cpu.max'), `${cores * 100_000} 100000`)
    else fs.writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), String(cores * Number(fs.readFileSync(path.join(dir, 'cpu.cfs_period_us'), 'latin1'))))
  } catch (error) {
    fs.rmSync(dir, { recursive: false, force: true })
    return error.message
  }
  return {
    // The shell joins the cgroup, then becomes node: the client starts inside it.
    run: (args) => new Promise((resolve, reject) => {
      const child = spawn('sh', ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', dir, process.execPath, ...args], { cwd: ROOT })
      let stdout = ''
      let stderr = ''
      child.stdout.setEncoding('utf8').on('data', (chunk) => { stdout += chunk })
      child.stderr.setEncoding('utf8').on('data', (chunk) => { stderr += chunk })
      child.on('error', reject)
      child.on('close', (code) => resolve({ code, stdout, stderr }))
    }),
    remove: () => fs.rmdirSync(dir)
  }
}
