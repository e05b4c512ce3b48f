// npm run capacity end to end: a real server held to half a core by a CPU quota, real generator
// processes, a search per format down to its confirming rounds; interrupted, nothing left behind;
// and bad input refused in one line.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs'
import path from 'node:path'
import readline from 'node:readline'
import { ROOT, runScript, temporaryDirectory } from '../helpers.js'
import { CAPACITY_METHOD } from '../../lib/capacity/results.js'
import { SCOUT_SHARE } from '../../lib/capacity/search.js'

test('capacity finds each format\'s rate at the objective on a half-core server, every message of every probe accounted for', async (t) => {
  const out = temporaryDirectory('capacity-')
  t.after(() => fs.rmSync(out, { recursive: true, force: true }))
  // Short probes: this checks the search and its accounts, not the figures (bench and docs hold those).
  const run = await runScript('bin/capacity.js', ['--tests', '5', '--server-cpus', '0.5', '--rounds', '3', '--step', '250ms', '--lead', '100ms',
    '--start-rate', '4000', '--slo', 'p99<20ms', '--target-rate', '100000', '--out', out, '--json'])
  assert.ok(run.code === 0 || run.code === 1, run.stderr)
  const results = JSON.parse(run.stdout)
  assert.equal(results.kind, 'capacity')
  assert.deepEqual(results.methods, { capacity: CAPACITY_METHOD.version }, 'the method it measured with')
  assert.deepEqual(results.settings.budget.quota, { quotaUs: 1000, periodUs: 2000 })
  assert.deepEqual(results.settings.formats, ['json', 'protobuf'])
  assert.equal(results.searches.length, 2)
  for (const search of results.searches) {
    assert.ok(search.probes.length >= 4, `${search.format}: ${search.probes.length} probes`)
    for (const probe of search.probes) {
      const { sent, acked, errors, lost } = probe.messages
      assert.equal(sent, acked + errors + lost, `${search.format} at ${probe.rate}/s`)
      // A scout (stepping up or down) measures a share of the step, the others all of it.
      const stepMs = probe.scout ? 250 * SCOUT_SHARE : 250
      assert.ok(sent >= Math.round(probe.rate * stepMs / 1000) - 1, `${sent} sent at ${probe.rate}/s for ${stepMs} ms`)
      // The quota holds: half a core, whatever the rate offered (a little over, read around the step).
      assert.ok(probe.server.cores <= 0.6, `server at ${probe.server.cores} cores`)
    }
    // The search stepped from the start rate by doubling (or, on a machine too busy for it, halving),
    // after probing it again for as long as the generator could not keep up (the suite runs beside it).
    const decided = search.probes.findIndex((probe) => probe.pass || !probe.generatorBound)
    assert.ok(search.probes.slice(0, decided < 0 ? undefined : decided + 1).every((probe) => probe.rate === 4000 && probe.scout))
    if (decided < 0) assert.equal(search.status, 'generator-bound')
    else {
      const { pass } = search.probes[decided]
      if (decided + 1 < search.probes.length) assert.equal(search.probes[decided + 1].rate, pass ? 8000 : 2000)
      const bracketed = search.probes.findIndex((probe, index) => index > decided && probe.pass !== pass && !probe.generatorBound)
      if (bracketed >= 0 && bracketed + 1 < search.probes.length) assert.equal(search.probes[bracketed + 1].scout, false, 'the bisection measures the whole step')
    }
    if (search.status === 'found') {
      // A round that brackets no knee in its probes gives none.
      assert.ok(search.estimates.length >= 1 && search.estimates.length <= 3, `${search.estimates.length} estimates`)
      const fails = search.probes.filter((probe) => !probe.pass).map((probe) => probe.rate)
      const passes = search.probes.filter((probe) => probe.pass).map((probe) => probe.rate)
      for (const estimate of search.estimates) assert.ok(estimate >= Math.min(...passes) && estimate <= Math.max(...fails))
    } else {
      // The suite runs beside it: a starved server or generator is said so, never a capacity (a
      // search stopped generator-bound in a later round keeps its earlier rounds' estimates on record).
      assert.ok(['generator-bound', 'below', 'unsettled'].includes(search.status), `${search.format}: ${search.status}`)
      const figure = results.rows[0].figures.find((each) => each.format === search.format)
      assert.deepEqual([figure.msgsPerS, figure.perCore, figure.ci], [null, null, null])
    }
  }
  // Every round after the first on fresh processes, which both formats' searches share.
  const probes = results.searches.flatMap((search) => search.probes)
  const generations = results.searches[0].generations
  assert.ok(generations >= 1 && results.searches.every((search) => search.generations === generations))
  for (let generation = 1; generation <= generations; generation++) {
    const servers = new Set(probes.filter((probe) => probe.generation === generation).map((probe) => probe.pids.server))
    assert.equal(servers.size, 1, `generation ${generation}: one server`)
  }
  assert.equal(new Set(probes.map((probe) => probe.pids.server)).size, generations, 'a server per generation')
  for (const search of results.searches) {
    assert.deepEqual(search.probes.map((probe) => probe.generation), search.probes.map((probe) => probe.generation).sort((a, b) => a - b))
    if (search.status === 'found') assert.ok(search.probes.at(-1).generation >= search.estimates.length, 'a round per generation')
    assert.equal(new Set(search.probes.map((probe) => probe.pids.generator)).size, new Set(search.probes.map((probe) => probe.generation)).size)
  }
  const [figures] = results.rows.map((row) => row.figures)
  for (const figure of figures.filter((each) => each.status === 'found')) {
    assert.ok(Math.abs(figure.perCore - figure.msgsPerS / 0.5) <= 1, `${figure.perCore} per core of ${figure.msgsPerS}`)
    assert.ok(figure.coresFor.cores > 0)
  }
  assert.ok(fs.readFileSync(path.join(out, 'results.json'), 'utf8').includes('"kind": "capacity"'))
  const html = fs.readFileSync(path.join(out, 'report.html'), 'utf8')
  assert.match(html, /<svg class="chart"[^]*latency against offered rate/)
  assert.match(html, /class="limit"/)
})

test('capacity runs over wss:// with the payload echoed back, one format, the generator verifying the server\'s certificate', async (t) => {
  const out = temporaryDirectory('capacity-tls-')
  t.after(() => fs.rmSync(out, { recursive: true, force: true }))
  // At p50<2ms, the generators group messages 0.4 ms apart, not a millisecond (lib/capacity/judge.js).
  const run = await runScript('bin/capacity.js', ['--tests', '1', '--formats', 'protobuf', '--tls', '--direction', 'echo', '--server-cpus', '0.5',
    '--rounds', '3', '--step', '200ms', '--lead', '50ms', '--start-rate', '2000', '--slo', 'p50<2ms', '--out', out, '--json'])
  assert.ok(run.code === 0 || run.code === 1, run.stderr)
  const { settings, searches } = JSON.parse(run.stdout)
  assert.deepEqual([settings.tls, settings.direction, settings.formats], [true, 'echo', ['protobuf']])
  // Whether a probe passes depends on how busy the machine is (the suite runs beside it); that every
  // echoed payload came back and decoded, over TLS, does not.
  const [search] = searches
  assert.ok(search.probes.length > 0)
  assert.deepEqual([settings.ticks, search.tickMs], [{ 'p50<2ms': 0.4 }, 0.4])
  for (const { rate, messages, pacing } of search.probes) {
    assert.equal(pacing, 'precise (0.4 ms tick)', `the generator paced with the objective's tick at ${rate}/s`)
    assert.equal(messages.errors, 0, `no error replies at ${rate}/s`)
    assert.equal(messages.sent, messages.acked + messages.lost, `every message echoed or lost at ${rate}/s`)
    assert.ok(messages.acked > 0, `echoes decoded at ${rate}/s`)
  }
})

test('fan-out capacity is in deliveries/s: the publishes/s found times the subscribers, every probe\'s deliveries accounted for', async (t) => {
  const out = temporaryDirectory('capacity-fanout-')
  t.after(() => fs.rmSync(out, { recursive: true, force: true }))
  const run = await runScript('bin/capacity.js', ['--direction', 'fanout', '--connections', '5', '--tests', '5', '--formats', 'protobuf',
    '--server-cpus', '0.5', '--rounds', '3', '--step', '300ms', '--lead', '100ms', '--start-rate', '500', '--slo', 'p99<20ms', '--out', out])
  // Whether the search settles depends on how busy the machine is (the suite runs beside it).
  assert.ok(run.code === 0 || run.code === 1, run.stderr)
  assert.match(run.stdout, /deliveries\/s per core \(0\.5 cores\)/)
  assert.match(run.stdout, /server µs\/delivery/)
  const { settings, rows, searches } = JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8'))
  assert.deepEqual([settings.direction, settings.connections], ['fanout', 5])
  const [search] = searches
  assert.ok(search.probes.length >= 4, `${search.probes.length} probes`)
  for (const { rate, messages, fanout } of search.probes) {
    assert.equal(messages.sent, messages.acked + messages.errors + messages.lost, `every publish accounted for at ${rate}/s`)
    assert.equal(fanout.subscribers, 5)
    assert.equal(fanout.published, messages.sent - messages.errors)
    assert.equal(fanout.expected, fanout.published * 5, `every publish expected at every subscriber at ${rate}/s`)
    assert.equal(fanout.expected, fanout.delivered + fanout.lost, `every delivery made or lost at ${rate}/s`)
  }
  const [figure] = rows[0].figures
  assert.deepEqual([figure.unit, figure.subscribers], ['deliveries/s', 5])
  if (figure.status === 'found') {
    assert.ok(Math.abs(figure.msgsPerS - figure.publishesPerS * 5) <= 5, `${figure.msgsPerS} deliveries/s of ${figure.publishesPerS} publishes/s`)
    assert.ok(Math.abs(figure.perCore - figure.msgsPerS / 0.5) <= 1)
  }
  assert.match(fs.readFileSync(path.join(out, 'report.html'), 'utf8'), /How many deliveries\/s one server core takes[^]*offered rate \(publishes\/s\)/)
})

test('bad input gets one line and exit 2, before anything starts', async () => {
  for (const [args, message] of [
    [['--slo', 'p99<'], /--slo takes objectives like p99<10ms/],
    [['--slo', 'latency<10ms'], /--slo takes objectives/],
    [['--server-cpus', '4096'], /--server-cpus 4096 leaves no CPU for the generators/],
    [['--server-cpus', '0'], /--server-cpus must be a number > 0/],
    [['--target-rate', '0'], /--target-rate must be a number > 0/],
    [['--rounds', '2'], /--rounds must be/],
    [['--direction', 'both'], /Invalid values/],
    [['--direction', 'fanout', '--connections', '0'], /--connections must be a whole number >= 1/],
    [['--formats', 'json,yaml'], /yaml/],
    [['--calibrate', '--formats', 'json'], /--calibrate compares JSON with itself/]
  ]) {
    const run = await runScript('bin/capacity.js', args)
    assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`)
    assert.match(run.stderr, message, args.join(' '))
    assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr)
  }
})

test('capacity of any server (--server-command) sending a test down: the server\'s CPU read from the process it started', async (t) => {
  const out = temporaryDirectory('capacity-command-')
  t.after(() => fs.rmSync(out, { recursive: true, force: true }))
  const run = await runScript('bin/capacity.js', ['--tests', '3', '--formats', 'json', '--direction', 'down',
    '--server-command', `${process.execPath} server.js`, '--server-cpus', '0.5', '--rounds', '3', '--step', '200ms', '--lead', '50ms',
    '--start-rate', '1000', '--slo', 'p99<25ms', '--out', out, '--json'])
  assert.ok(run.code === 0 || run.code === 1, run.stderr)
  const { settings, rows, searches } = JSON.parse(run.stdout)
  assert.deepEqual([settings.server, settings.direction], [`${process.execPath} server.js`, 'down'])
  assert.equal(rows[0].test, '3 medium')
  const [search] = searches
  assert.ok(search.probes.length > 0)
  for (const { rate, messages, server } of search.probes) {
    assert.equal(messages.errors, 0, `no error replies at ${rate}/s`)
    assert.equal(messages.sent, messages.acked + messages.lost, `every message sent down arrived or was lost at ${rate}/s`)
    assert.ok(server.cores > 0 && server.cores <= 0.6, `the server's own CPU, on its quota: ${server.cores} cores at ${rate}/s`)
  }
})

for (const signal of ['SIGINT', 'SIGTERM']) {
  test(`capacity stopped by ${signal} mid-search leaves no server and no cgroup behind`, async (t) => {
    const out = temporaryDirectory('capacity-signal-')
    t.after(() => fs.rmSync(out, { recursive: true, force: true }))
    const child = spawn(process.execPath, ['bin/capacity.js', '--tests', '5', '--server-cpus', '0.5', '--step', '250ms', '--lead', '100ms',
      '--out', out], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] })
    const exited = once(child, 'exit')
    // The first probe's line: the server is up, on its quota, and the search under way.
    for await (const line of readline.createInterface({ input: child.stderr })) {
      if (/\d\/s/.test(line)) break
    }
    const cgroups = () => ['/sys/fs/cgroup', '/sys/fs/cgroup/cpu'].filter((root) => fs.existsSync(root))
      .flatMap((root) => fs.readdirSync(root).filter((name) => name.startsWith(`ws-bench-capacity-${child.pid}-`)).map((name) => path.join(root, name)))
    const [cgroup] = cgroups()
    assert.ok(cgroup, 'the server\'s cgroup, while it runs')
    const server = Number(fs.readFileSync(path.join(cgroup, 'cgroup.procs'), 'latin1').trim().split('\n')[0])
    child.kill(signal)
    const [code, killedBy] = await exited
    assert.deepEqual([code, killedBy], [null, signal], 'the signal does what it would have done')
    assert.deepEqual(cgroups(), [])
    assert.throws(() => process.kill(server, 0), { code: 'ESRCH' }, 'the server is gone')
  })
}
