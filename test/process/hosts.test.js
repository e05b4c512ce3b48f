// Many hosts for real: client hosts as network namespaces with their own addresses, a common
// --start-at, reports merged exactly, and nothing left behind; with --prometheus, streaming to a
// real Prometheus that ends up holding the merged report's counts. Skipped, with the reason, where
// namespaces cannot be made (not root, no ip netns) or there is no Prometheus; in CI that fails them.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { createTestHosts, leftovers } from '../../lib/network/hosts.js'
import { PROJECT_ROOT, watchOutput } from '../../lib/processes.js'
import { DEBIAN_PROMETHEUS } from '../../bench/support/prometheus.js'
import { assertStartedTogether, hostsUnavailable, runScript } from '../helpers.js'

const unavailable = await hostsUnavailable()
const noPrometheus = unavailable || (!fs.existsSync(DEBIAN_PROMETHEUS) && !process.env.CI && `no ${DEBIAN_PROMETHEUS} (apt-get install prometheus)`)

/** Prometheus's temporary directories (bench/support/prometheus.js) now on the machine (other tests' among them). */
const prometheusDirectories = () => fs.readdirSync(os.tmpdir()).filter((name) => name.startsWith('wsbench-prometheus-'))
/** The command lines of running processes that mention `text`. */
const processesMentioning = (text) => fs.readdirSync('/proc').filter((pid) => /^\d+$/.test(pid)).flatMap((pid) => {
  try {
    const line = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')
    return line.includes(text) ? [line] : []
  } catch {
    return [] // gone meanwhile
  }
})

test('two client hosts: their own source addresses, one start, merged counts equal the sums, nothing left behind', { skip: unavailable }, async () => {
  const before = new Set(await leftovers()) // another harness may be running beside this test
  const run = await runScript('bench/hosts.js', ['--hosts', '2', '--connections', '6', '--rate', '600', '--duration', '1s', '--json'],
    { env: { BENCH_RESULTS_DIR: '/tmp/bench-hosts-test' } })
  assert.equal(run.code, 0, run.stderr)
  const { hosts, merged, server } = JSON.parse(run.stdout)
  assert.equal(hosts.length, 2)
  assert.notEqual(hosts[0].sourceAddress, hosts[1].sourceAddress)
  assert.ok(hosts.every((h) => h.sourceAddress !== server.address && /^10\./.test(h.sourceAddress)))
  for (const key of ['sent', 'acked', 'errors', 'lost']) {
    assert.equal(merged.messages[key], hosts[0].messages[key] + hosts[1].messages[key], key)
  }
  assert.equal(merged.messages.sent, merged.messages.acked, 'every message acknowledged')
  assert.deepEqual(hosts.map((h) => h.connections), [3, 3])
  assert.equal(merged.connections, 6)
  // One --start-at for both, none measuring before it; how late a loaded machine starts them is
  // bench:hosts' figure, not a bound here.
  assert.ok(hosts[0].startAt > 0, 'a --start-at instant')
  assertStartedTogether(hosts, hosts[0].startAt, merged.windows)
  assert.ok(server.peakRssMb > 0 && hosts.every((h) => h.peakRssMb > 0), 'peak memory of the server and of each host')
  assert.deepEqual((await leftovers()).filter((name) => !before.has(name)), [], 'no namespace or link left behind')
})

test('--prometheus: the clients stream to a real Prometheus in the server host, which holds the merged report\'s counts; it and its directory are gone after', { skip: noPrometheus }, async () => {
  const before = new Set(await leftovers())
  const run = await runScript('bench/hosts.js', ['--hosts', '2', '--connections', '6', '--rate', '600', '--duration', '3s', '--prometheus', '--json'],
    { env: { BENCH_RESULTS_DIR: '/tmp/bench-hosts-test' } })
  assert.equal(run.code, 0, run.stderr)
  const { hosts, merged, server, prometheus } = JSON.parse(run.stdout)
  assert.equal(prometheus.equal, true, prometheus.line)
  for (const key of ['sent', 'acked', 'errors', 'lost']) assert.equal(prometheus.total[key], merged.messages[key], key)
  assert.equal(prometheus.total.sent, 1800)
  assert.deepEqual(prometheus.hosts.map((h) => h.host), hosts.map((h) => h.host))
  for (const host of prometheus.hosts) {
    assert.deepEqual(host.held, host.report, host.host)
    // The first push before the run, at least one at its end; none failed.
    assert.ok(host.pushes >= 2 && host.failed === 0 && host.error === null, JSON.stringify(host))
  }
  assert.deepEqual(hosts.map((h) => h.tags.client_host), ['client1', 'client2'])
  assert.equal(new Set(hosts.map((h) => h.tags.testid)).size, 1, 'one run id')
  assert.match(run.stderr, /^Prometheus holds sent 1800, acked 1800, errors 0, lost 0 \(summed over 2 hosts\); .*: equal; pushes per host/m)
  assert.equal(prometheus.url, `http://${server.address}:9090`, 'in the server host')
  assert.equal(fs.existsSync(prometheus.directory), false, 'its directory removed')
  assert.deepEqual(processesMentioning(prometheus.directory), [], 'Prometheus stopped')
  assert.deepEqual((await leftovers()).filter((name) => !before.has(name)), [], 'no namespace or link left behind')
})

test('--prometheus, interrupted mid-run: Prometheus, its directory, the hosts all gone', { skip: noPrometheus }, async () => {
  const before = new Set(await leftovers())
  const directories = new Set(prometheusDirectories())
  const child = spawn(process.execPath, ['bench/hosts.js', '--hosts', '1', '--connections', '2', '--rate', '100', '--duration', '60s', '--prometheus', '--json'],
    { cwd: PROJECT_ROOT, env: { ...process.env, BENCH_RESULTS_DIR: '/tmp/bench-hosts-test' }, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk) => { stderr += chunk })
  const exited = once(child, 'exit')
  // Interrupted once its Prometheus runs and the client streams to it.
  const deadline = Date.now() + 30_000
  let directory, address
  const waitFor = async (what, found) => {
    while (!found()) {
      assert.ok(Date.now() < deadline && child.exitCode === null, `no ${what} within 30 s: ${stderr}`)
      await delay(100)
    }
  }
  await waitFor('Prometheus', () => {
    directory = prometheusDirectories().find((name) => !directories.has(name))
    const [line] = directory ? processesMentioning(path.join(os.tmpdir(), directory)) : []
    address = /--web\.listen-address=(\S+)/.exec(line ?? '')?.[1]
    return address !== undefined
  })
  await waitFor('client streaming to it', () => processesMentioning(`prometheus-rw=http://${address}/`).some((line) => line.includes('client_protobuf.js')))
  child.kill('SIGINT')
  const [code, signal] = await exited
  assert.ok(signal === 'SIGINT' || code !== 0, `ended by the interrupt (${code}, ${signal})`)
  assert.deepEqual(processesMentioning(path.join(os.tmpdir(), directory)), [], 'Prometheus stopped')
  assert.equal(fs.existsSync(path.join(os.tmpdir(), directory)), false, 'its directory removed')
  assert.deepEqual((await leftovers()).filter((name) => !before.has(name)), [], 'no namespace or link left behind')
})

test('the harness tears everything down on close, and on SIGINT of the process that made it', { skip: unavailable }, async () => {
  const net = await createTestHosts({ clients: 1 })
  assert.equal((await leftovers(net.id)).length, 5, 'two namespaces, their two veth ends in the root namespace, the bridge')
  const sleeper = net.node(net.clients[0], '-e', ['setInterval(() => {}, 1000)'])
  await net.close()
  assert.ok(sleeper.exitCode !== null || sleeper.signalCode !== null, 'its processes are gone')
  assert.deepEqual(await leftovers(net.id), [])

  // A child that builds hosts, says where, and is interrupted.
  const script = `import { createTestHosts } from './lib/network/hosts.js'
const net = await createTestHosts({ clients: 2 })
console.log(net.id)
setInterval(() => {}, 1000)`
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
  const [id] = (await once(child.stdout.setEncoding('utf8'), 'data'))[0].trim().split('\n')
  assert.ok((await leftovers(id)).length > 0)
  child.kill('SIGINT')
  await once(child, 'exit')
  assert.deepEqual(await leftovers(id), [], 'torn down on SIGINT')
})

test('a cut host stalls silently (its interface stays up, no error) and its connection resumes once restored', { skip: unavailable, timeout: 30000 }, async () => {
  const net = await createTestHosts({ clients: 1 })
  try {
    const [host] = net.clients
    const server = watchOutput(net.node(net.server, '-e', [`require('node:net').createServer((s) => s.on('data', (d) => s.write(d)))
      .listen(9000, '${net.server.address}', () => console.log('listening'))`]))
    await server.printed(/listening/)
    // Writes every 20 ms; says when echoes flow, then exits at the first echo after a gap of 500 ms or more.
    const client = watchOutput(net.node(host, '-e', [`const socket = require('node:net').connect(9000, '${net.server.address}')
      let last = 0
      socket.on('data', () => {
        const now = Date.now()
        if (last === 0) console.log('flowing')
        if (last > 0 && now - last >= 500) { console.log('resumed after ' + (now - last) + ' ms'); process.exit(0) }
        last = now
      })
      socket.on('error', (err) => { console.log('error ' + err.code); process.exit(1) })
      setInterval(() => socket.write('x'), 20)`]))
    await client.printed(/flowing/)
    const restore = await net.cut(host)
    const cutAt = Date.now()
    const { stdout: link } = await net.exec(host, 'ip', ['link', 'show', host.device])
    assert.match(link, /LOWER_UP.*state UP/, 'the host\'s own interface stays up')
    await new Promise((resolve) => setTimeout(resolve, 1000)) // the cut itself lasts a second
    await restore()
    const restoredAt = Date.now()
    const [, gap] = await client.printed(/resumed after (\d+) ms/)
    // TCP's backoff (0.2, 0.6, 1.4, 3 s) decides when the stalled data goes out again.
    assert.ok(Number(gap) >= restoredAt - cutAt - 100 && Date.now() - restoredAt < 5000, `gap ${gap} ms for a cut of ${restoredAt - cutAt} ms`)
    assert.equal((await client.exited).code, 0)
  } finally {
    await net.close()
  }
  assert.deepEqual(await leftovers(net.id), [])
})

test('where hosts cannot be made, the reason is one line', () => {
  assert.ok(unavailable === false || (typeof unavailable === 'string' && !unavailable.includes('\n')))
})
