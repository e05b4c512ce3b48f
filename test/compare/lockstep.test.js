// Process-level: runLockstep (lib/compare/lockstep.js) as compareFormats calls it, with its real
// server processes and batch client processes on loopback. What each generation brings back, the
// exact accounting of its reports, servers and clients swapping formats, and that no process
// outlives it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Rotations, runLockstep } from '../../lib/compare/lockstep.js'
import { decodeHistogram } from '../../lib/histogram.js'
import { UsageError } from '../../lib/errors.js'
import { CUSTOM_TEST } from '../../lib/protocol.js'

const LINUX = process.platform === 'linux'
// --repeat: each client prepares one message, not the test's stream, so it starts sooner.
const LOAD = { direction: 'up', inflight: 1, connections: 1, compress: false, repeat: true, allowLossy: false }
const ROW = { key: 'small\nnone', label: '5 small', testName: 'small', test: 'small', custom: null, profile: 'none' }

/** This process's children now, by pid, with their command lines (from /proc). */
function children () {
  const found = new Map()
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      // The command may hold spaces and parentheses: the fields after its closing parenthesis are fixed.
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'latin1')
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (parent === process.pid) found.set(Number(entry), fs.readFileSync(`/proc/${entry}/cmdline`, 'latin1').split('\0').join(' ').trim())
    } catch {} // gone while listed
  }
  return found
}

const alive = (pid) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    assert.equal(err.code, 'ESRCH')
    return false
  }
}

const options = (extra) => ({
  formats: ['json', 'protobuf'],
  labels: ['json', 'protobuf'],
  rows: [ROW],
  codecModules: [],
  load: LOAD,
  serverArgs: [],
  cpus: null,
  generations: 2,
  budgetMs: 100_000,
  batchMessages: 20,
  // Each client's warm-up per format at the start: long enough to open its row, no longer.
  startWarmupMs: 100,
  progress: () => {},
  ...extra
})

test('two generations of json and protobuf on one row: a report per format each, server CPU and codec time, exact accounting, processes gone after', { skip: !LINUX && 'reads /proc' }, async () => {
  const progress = []
  const running = new Map()
  const run = await runLockstep(options({
    progress: (line) => {
      progress.push(line)
      // Between generations: the servers and the clients of the whole run, and no others.
      if (line.startsWith('generation 2')) for (const [pid, command] of children()) running.set(pid, command)
    }
  }))
  assert.deepEqual(progress, [
    'warm-up 1 of 2: every test in every format, not recorded',
    'warm-up 2 of 2: every test in every format, not recorded',
    'generation 1 of 2: 2 formats, 1 tests in lockstep',
    'generation 2 of 2: 2 formats, 1 tests in lockstep'
  ])
  assert.equal(run.servers, 2)
  assert.equal(run.budgetMs, null, 'a fixed number of generations has no budget')
  // The plan made in the warm-up: -n fixes both batch sizes; pairs and rate come from the rate its batches ran at.
  const plan = run.plan[ROW.key]
  assert.equal(plan.closedCount, 20)
  assert.equal(plan.openCount, 20)
  assert.equal(plan.timedRate, null)
  assert.ok(plan.openRate > 0 && plan.closedPairs >= 1 && plan.openPairs >= 1 && plan.warmupBatches >= 1, JSON.stringify(plan))

  assert.deepEqual(run.generations.map((generation) => generation.index), [1, 2])
  const serverOf = []
  const clientOf = []
  for (const generation of run.generations) {
    assert.ok(Number.isInteger(generation.ms) && generation.ms > 0)
    assert.ok(generation.loadAverage === null || generation.loadAverage >= 0)
    assert.ok(generation.neighbourCores === null || generation.neighbourCores >= 0)
    // Linux: /proc/stat is read, and the steal (other guests of a hypervisor) is some of the machine's cores.
    assert.ok(Number.isFinite(generation.stealCores) && generation.stealCores >= 0 && generation.stealCores <= os.availableParallelism(), String(generation.stealCores))
    assert.ok(Array.isArray(generation.saturated) && generation.saturated.every((where) => /^(server|client) 5 small \((json|protobuf)\)$/.test(where)), String(generation.saturated))
    assert.deepEqual(generation.reports.map((report) => [report.label, report.format, report.trial]),
      [['json', 'json', generation.index], ['protobuf', 'protobuf', generation.index]])
    for (const report of generation.reports) {
      const what = `${report.label} in generation ${generation.index}`
      // Every measured message: the closed-loop pairs' and the open-loop pairs'.
      const { sent, acked, errors, lost } = report.messages
      assert.equal(sent, acked + errors + lost, what)
      assert.deepEqual(report.messages, { sent: 20 * (plan.closedPairs + plan.openPairs), acked: sent, errors: 0, lost: 0 }, what)
      assert.equal(decodeHistogram(report.histogram).totalCount, 20 * plan.closedPairs, `${what}: latency from the closed-loop batches`)
      assert.equal(report.batches, plan.closedPairs)
      assert.equal(report.test, 'small')
      assert.deepEqual(report.payload, { kind: 'repeated', messages: 1, seed: null }, 'the load reached the clients')
      // The server's CPU from the kernel over the open-loop batches, per message they sent.
      assert.equal(report.server.messages, 20 * plan.openPairs, what)
      assert.ok(report.server.cpuUs > 0, `${what}: ${JSON.stringify(report.server)}`)
      assert.ok(report.server.perMessageUs > 0, what)
      assert.match(report.server.process, /^server [12]$/)
      assert.match(report.client.process, /^client [12]$/)
      // Codec time on both sides: the client's own clock, the server's from its /metrics.
      assert.ok(report.codec.clientUs > 0, `${what}: ${JSON.stringify(report.codec)}`)
      assert.ok(report.codec.serverUs > 0, `${what}: ${JSON.stringify(report.codec)}`)
      assert.ok(report.cpu.perMessageUs > 0, what)
    }
    serverOf.push(generation.reports.map((report) => report.server.process))
    clientOf.push(generation.reports.map((report) => report.client.process))
  }
  // Each generation puts the two formats on different servers and clients (which way round is drawn at random).
  for (const processes of [...serverOf, ...clientOf]) assert.notEqual(processes[0], processes[1])

  const servers = [...running].filter(([, command]) => / server\.js --port 0/.test(command))
  const clients = [...running].filter(([, command]) => / lib\/compare\/batch-client\.js$/.test(command))
  assert.equal(servers.length, 2, `two server processes: ${[...running.values()].join('; ')}`)
  assert.deepEqual(run.ownServers, [], 'a row of small messages shares the two')
  assert.equal(clients.length, 2, 'two client processes for the whole run')
  assert.equal(running.size, 4)
  for (const [pid] of running) assert.equal(alive(pid), false, `process ${pid} is gone`)
  assert.deepEqual([...children()], [], 'nothing left running')
})

// One run for the next two tests, each asserting its own on it: a row of messages over 1 MB and two
// of small ones, each row's batches sized to its own rate (batches of 20 big messages would last
// a third of a second each).
let bigAndSmall
/**
 * Runs fn with a row of a payload over 1 MB of its own: 12,000 items of ~100 bytes, 1.2 MB of
 * JSON, still 1 MB and more in protobuf.
 */
async function withBigRow (fn) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'big-payload-'))
  try {
    const items = Array.from({ length: 12_000 }, (_, i) => ({ name: `item ${i} ${'x'.repeat(70)}`, count: i }))
    fs.writeFileSync(path.join(dir, 'big.json'), JSON.stringify({ items }))
    return await fn({ ...ROW, key: 'big\nnone', label: 'big.json', testName: CUSTOM_TEST, test: null, custom: { payload: path.join(dir, 'big.json') } })
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** A lockstep run of the given rows, with each generation's processes as it starts. */
async function watchedRun (rows) {
  const seen = []
  const run = await runLockstep(options({
    rows,
    batchMessages: undefined,
    progress: (line) => { if (line.startsWith('generation')) seen.push([...children().values()]) }
  }))
  return { run, seen }
}

function bigAndSmallRun () {
  const NUMBERS = { ...ROW, key: 'numbers\nnone', label: '1 numbers', testName: 'numbers', test: 'numbers' }
  bigAndSmall ??= withBigRow((BIG) => watchedRun([BIG, ROW, NUMBERS]))
  return bigAndSmall
}

/** V8's heap as steady load has it: the young generation at its largest, the old one starting large. */
const HEAP = '--min-semi-space-size=16 --initial-old-space-size=256'

test('every row has client processes of its own, alive for the whole run, without the memory reducer, on a steady heap; each row\'s take formats as the servers do, each rotation once in two generations', { skip: !LINUX && 'reads /proc' }, async () => {
  const { run, seen } = await bigAndSmallRun()
  assert.equal(seen.length, 2)
  for (const commands of seen) {
    assert.equal(commands.filter((command) => command.endsWith(` --no-memory-reducer ${HEAP} lib/compare/batch-client.js`)).length, 6,
      'three rows, two formats, each client without V8\'s memory reducer, its heap sized as under steady load')
    assert.equal(commands.filter((command) => command.includes(` ${HEAP} server.js --port 0`)).length, 4, 'and the four servers, their heap sized too')
    assert.equal(commands.length, 10, 'and nothing else')
  }
  for (const { reports } of run.generations) {
    assert.deepEqual(reports.map((report) => `${report.test} ${report.format}`),
      ['custom json', 'small json', 'numbers json', 'custom protobuf', 'small protobuf', 'numbers protobuf'])
    // One rotation a generation, for every row: a format's client and server are the same-numbered
    // ones (client k of a row always meets server k), and the formats of a row are in different ones.
    const processes = reports.map((report) => [report.client.process.split(' ')[1], report.server.process.split(' ')[1]])
    for (const [client, server] of processes) assert.equal(client, server)
    const [json, protobuf] = [processes.slice(0, 3), processes.slice(3)].map((format) => format.map(([client]) => client))
    assert.deepEqual([json, protobuf], [[json[0], json[0], json[0]], [protobuf[0], protobuf[0], protobuf[0]]], 'every row in the same rotation')
    assert.notEqual(json[0], protobuf[0], 'json and protobuf in different processes')
  }
  const jsonClient = (generation) => generation.reports.find((report) => report.format === 'json').client.process
  assert.notEqual(jsonClient(run.generations[0]), jsonClient(run.generations[1]), 'two generations, two rotations: a block holds each once')
  assert.deepEqual([...children()], [], 'nothing left running')
})

test('a test of messages over 1 MB has servers of its own; the others share theirs', { skip: !LINUX && 'reads /proc' }, async () => {
  const { run, seen } = await bigAndSmallRun()
  assert.deepEqual(run.ownServers, ['big.json'])
  for (const commands of seen) {
    assert.equal(commands.filter((command) => / server\.js --port 0/.test(command)).length, 4, 'two shared by the rows of small messages, two of the big test\'s own')
  }
  // Each row's reports name the two servers it swapped between, and every message is accounted for.
  for (const generation of run.generations) {
    for (const report of generation.reports) {
      assert.match(report.server.process, /^server [12]$/)
      assert.equal(report.messages.sent, report.messages.acked)
    }
  }
  assert.deepEqual([...children()], [], 'nothing left running')
})

test('a test of messages over 1 MB alone has the first two servers to itself: no others are started', { skip: !LINUX && 'reads /proc' }, async () => {
  const { run, seen } = await withBigRow((BIG) => watchedRun([BIG]))
  assert.deepEqual(run.ownServers, ['big.json'])
  for (const commands of seen) {
    assert.equal(commands.filter((command) => / server\.js --port 0/.test(command)).length, 2, String(commands))
  }
  assert.deepEqual([...children()], [], 'nothing left running')
})

test('a client that cannot open a format fails the run with one line naming it; the servers and the other client are stopped', { skip: !LINUX && 'reads /proc' }, async () => {
  await assert.rejects(runLockstep(options({ formats: ['json', 'no-such-format'], labels: ['json', 'no-such-format'] })), (err) => {
    assert.ok(err instanceof UsageError, String(err))
    assert.match(err.message, /^client [12] of 5 small failed: unknown format 'no-such-format': expected one of /)
    assert.doesNotMatch(err.message, /\n/)
    return true
  })
  assert.deepEqual([...children()], [], 'nothing left running')
})

test('Rotations: every block of as many generations as formats holds each rotation once, in an order that varies', () => {
  for (const count of [2, 3]) {
    const rotations = new Rotations(count)
    const orders = new Set()
    for (let block = 0; block < 200; block++) {
      const order = Array.from({ length: count }, () => rotations.next())
      assert.deepEqual([...order].sort(), Array.from({ length: count }, (_, i) => i), `block ${block}: ${order}`)
      orders.add(order.join())
    }
    // 200 blocks miss one of two orders with chance 2^-199, one of six with about 6 (5/6)^200.
    assert.equal(orders.size, count === 2 ? 2 : 6, [...orders].join(' '))
  }
})

test('--tls with a server that listens on plain ws:// (a --server-command of the user\'s): one line, every process stopped', { skip: !LINUX && 'reads /proc' }, async () => {
  await assert.rejects(runLockstep(options({ tls: true })), (err) => err instanceof UsageError &&
    /^--tls: the server listens on ws:\/\/127\.0\.0\.1:\d+, not wss:\/\/ \(a --server-command must serve TLS itself\)$/.test(err.message))
  assert.deepEqual([...children()], [], 'nothing left running')
})
