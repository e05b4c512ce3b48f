// How a comparison measures: in generations. There are as many server processes as formats, and
// as many client processes per row (a test on a network), all alive for the whole run and warmed
// up before anything is recorded (a fresh process measures its own JIT). A client process sends one
// row's messages, as a real client sends its own kind: its code and its heap are that row's alone
// (the people test's 50 MB of messages would otherwise be marked by every other row's collector).
// A row of big messages has servers of its own too: the shared ones collected people's garbage in
// the next row's batches, and charged it to that row's format. (Servers of its own for every row
// would idle most of each generation, and their CPU per message swung twice as far.)
// Each generation gives every format, in each row, a server and a client process, and runs every
// row in short batches that take turns
// (A B, B A, ...) and never overlap, so both formats meet the same moment of the machine. Its
// figures are one value per format and row, and intervals are formed over generations (batches
// inside one share its processes and are not independent).
//
// Per row and generation (after warm-up batches, not recorded, in the generation's first row):
// closed-loop batches at the user's in-flight count for latency and msgs/s, then open-loop
// batches, every format on the same schedule, for CPU and codec time: a slow client cannot make
// its server look cheaper by sending less often. Server CPU is read from the kernel around each
// open-loop batch (lib/cpu-time.js).
// Servers and clients swap formats between generations, drawn at random, so a process's own quirks
// become spread between generations, which the intervals count, instead of a bias they cannot see;
// at random, not in turn, so that nothing a process does every other time can keep to one format.
// A row starts once the row before it has gone quiet (settle).
import { setTimeout } from 'node:timers/promises'
import http from 'node:http'
import https from 'node:https'
import tls from 'node:tls'
import { performance } from 'node:perf_hooks'
import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import { pinProcess, startServerProcess } from '../processes.js'
import { CpuClock, loadAverage, machineCpuNs } from '../cpu-time.js'
import { METRICS_PATH } from '../protocol.js'
import { UsageError } from '../errors.js'
import { trialOrder } from './statistics.js'
import { BatchClient, HEAP_FLAGS } from './client-handle.js'

/** A closed-loop batch lasts about this long for the slower format (at least one message). */
export const BATCH_MS = 25
/** Batches never hold more messages than this, however fast the row. */
export const MAX_BATCH_MESSAGES = 200
/** Open-loop batches run at this share of the slower format's closed-loop rate: both keep up. */
export const OPEN_LOOP_SHARE = 0.8
/**
 * Each row's share of a generation, ms over all formats (with two formats, five pairs of 25 ms
 * batches in closed loop and seven in open loop). Longer rows narrowed every interval more than
 * the generations they cost, up to here (docs/method.md).
 */
export const ROW_MS = 600
/**
 * The closed-loop batches' share of a row, the rest open loop. Within a generation the batches'
 * own noise makes nearly all of a ratio's spread, so each metric's interval narrows with the square
 * root of its share: with p99 pooled over generations, latency had the margin that CPU lacked.
 */
const CLOSED_SHARE = 0.4
/**
 * Unrecorded batches per format in each generation's first row, before its measured ones: this
 * long. Just after the generation's connections open, the first batch of that row took twice its
 * row's median round trip and 1.2x its server CPU; a later row's first batch ran like its others
 * (0.93-1.07x in one run without these batches), so only the first row pays for them.
 */
const WARMUP_MS = 50
/**
 * At the start, every client process sends its row in every format, all rows at once, unrecorded,
 * for this long: without it the p99 of the first three generations ran 3-10x the later ones'. A
 * server that needs longer says so (a reference server's server.json: the JVM's JIT).
 */
export const START_WARMUP_MS = 2000
/**
 * ... and until each client has spent this much of its own CPU on each format (START_WARMUP_MS if
 * less): with every row's clients warming at once on two cores, 2 s gave each an eighth of a core,
 * and their CPU per message ran 1.5-3x its later value for three to four generations.
 */
export const START_WARMUP_CPU_MS = 300
/**
 * ... but no longer than this many times START_WARMUP_MS: a throttled network's messages take
 * little CPU and long to come back (the default run's clients took 2.2-2.5x under their CPU floor).
 */
const START_WARMUP_LONGEST = 3
/**
 * A row whose messages average more than this many bytes has servers of its own: decoding one
 * outlasts young-generation collections, so its garbage reaches the old generation and is
 * collected later, in whatever row comes next.
 */
export const OWN_SERVERS_BYTES = 1_000_000
/** A row's processes are quiet when they use less than this share of one core over SETTLE_WINDOW_MS. */
const QUIET_SHARE = 0.05
const SETTLE_WINDOW_MS = 5
/** The longest a row waits for the one before it to go quiet. */
const MAX_SETTLE_MS = 1000
/** Past this share of one core over its batches, a process was the bottleneck of the row. */
const SATURATED_SHARE = 0.9

/**
 * @typedef {object} LockstepRow a row as the parent plans it
 * @property {string} key `test\nprofile`
 * @property {string|null} test a built-in test, null with a payload of one's own
 * @property {object|null} custom the user's payload files
 * @property {string} profile network profile
 * @property {string} label the test as tables name it
 * @property {string} testName the test as the server counts it (its codec time is read by it)
 */

/**
 * @typedef {object} Generation what one generation measured
 * @property {number} index from 1 (0 is the unrecorded warm-up)
 * @property {object[]} reports one per row and format: the client's report with `label`, `trial`
 *   (the generation), `client` (the client process it ran in), `server` (CPU per message, the
 *   server it ran on) and `codec` (client and server µs per message)
 * @property {number} ms how long it took
 * @property {number|null} loadAverage the one-minute load average at its end
 * @property {number|null} neighbourCores other processes' CPU over it, in cores on average
 * @property {number|null} stealCores the hypervisor's steal over it (other guests'), in cores on average
 * @property {string[]} saturated the processes that were a bottleneck: `server json 3 medium` ...
 */

/**
 * Runs a comparison in lockstep generations.
 * @param {object} options
 * @param {string[]} options.formats
 * @param {string[]} options.labels column labels, one per format
 * @param {LockstepRow[]} options.rows
 * @param {string[]} options.codecModules
 * @param {object} options.load what every client sends: direction, inflight, connections, compress, repeat;
 *   fan-out: rate, decode, heartbeatMs
 * @param {string[]} options.serverArgs
 * @param {string[]|null} [options.serverCommand] a program and its arguments in place of `node server.js`
 * @param {boolean} [options.tls] the servers must serve wss:// (the clients' `load.ca` trusts their certificate)
 * @param {{server: string, clients: string}|null} options.cpus
 * @param {number|undefined} options.generations a fixed number; else as many as fit the budget
 * @param {number} options.budgetMs
 * @param {number} [options.startWarmupMs] how long each client sends its row in each format before anything else
 * @param {number} [options.warmupGenerations] unrecorded generations after that [default: one per rotation, as many as formats]
 * @param {number|undefined} options.batchMessages messages per batch instead of about BATCH_MS worth
 * @param {(line: string) => void} options.progress
 * @returns {Promise<{generations: Generation[], plan: Record<string, object>, budgetMs: number|null, servers: number,
 *   ownServers: string[]}>} servers: how many the rows share (one per format); ownServers: the rows with their own
 */
export async function runLockstep (options) {
  const { formats, rows, progress, generations: fixed } = options
  const started = performance.now()
  const running = []
  let clients = []
  try {
    const startPair = async () => {
      const pair = await startServers(options)
      running.push(...pair)
      return pair
    }
    // The shared servers start while the clients make their rows ready (a second saved), all
    // settled, not raced, so that nothing still starting when another fails is left behind.
    const [opened, shared] = await Promise.allSettled([openClients(options), startPair()])
    clients = opened.value?.clients ?? []
    if (opened.status === 'rejected') throw opened.reason
    if (shared.status === 'rejected') throw shared.reason
    // Rows of big messages get servers of their own; the others share the first pair (with no
    // others, the first big row has it to itself).
    const big = opened.value.bytes.map((bytes) => bytes > OWN_SERVERS_BYTES)
    const first = big.includes(false) ? -1 : 0
    const pairs = await Promise.allSettled(big.map((own, r) => own && r !== first ? startPair() : shared.value))
    const failed = pairs.find((attempt) => attempt.status === 'rejected')
    if (failed) throw failed.reason
    const servers = pairs.map((attempt) => attempt.value)
    const plain = running.find((server) => !server.url.startsWith('wss:'))
    if (options.tls && plain) throw new UsageError(`--tls: the server listens on ${plain.url}, not wss:// (a --server-command must serve TLS itself)`)
    await warmClients(options, clients, servers)
    const plan = new Map()
    // Unrecorded warm-up generations, the whole schedule: each row's batch sizes and rates measured.
    // One per rotation, so every process has run the schedule in every format: with one, the first
    // two recorded generations were still warming (p99 38-41% off their row's mean, 9-14% after).
    const warmups = Math.max(1, options.warmupGenerations ?? formats.length)
    for (let shift = 0; shift < warmups; shift++) {
      progress(`warm-up ${shift + 1} of ${warmups}: every test in every format, not recorded`)
      await runGeneration(options, servers, clients, { shift: shift % formats.length, round: 0 }, plan, null)
    }
    const generations = []
    // Generations so far in each rotation.
    const rounds = formats.map(() => 0)
    const rotations = new Rotations(formats.length)
    // Without --trials: at least two, then as many as the budget fits, judged by the longest so far.
    const more = () => fixed === undefined
      ? generations.length < 2 || performance.now() - started + longest(generations) <= options.budgetMs
      : generations.length < fixed
    while (more()) {
      const index = generations.length + 1
      progress(`generation ${index}${fixed ? ` of ${fixed}` : ''}: ${formats.length} formats, ${options.rows.length} tests in lockstep`)
      const shift = rotations.next()
      generations.push(await runGeneration(options, servers, clients, { shift, round: rounds[shift]++ }, plan, index))
    }
    const budgetMs = fixed === undefined ? options.budgetMs : null
    const ownServers = rows.filter((_, r) => big[r]).map((row) => row.label)
    return { generations, plan: Object.fromEntries(plan), budgetMs, servers: formats.length, ownServers }
  } finally {
    await Promise.all(clients.flat().map((client) => client.close()))
    await Promise.all(running.map((server) => server.stop()))
  }
}

/**
 * Which rotation (the shift of formats onto processes) each generation runs, at random, not in
 * turn: a people server collected its garbage every other message, so taking turns gave one format
 * the cheap messages on both servers (an A/A run read 1.15x). But in blocks that hold every
 * rotation once, in random order: the estimate weighs rotations alike, so its variance grows with
 * the sum of 1/(generations in each), and independent draws had split 18 generations 15 and 3
 * (1.8x the variance of 9 and 9).
 */
export class Rotations {
  /** @param {number} count how many there are (one per format) */
  constructor (count) {
    this.count = count
    /** What is left of the current block. */
    this.block = []
  }

  /** @returns {number} the next generation's shift */
  next () {
    if (this.block.length === 0) {
      this.block = Array.from({ length: this.count }, (_, i) => i)
      // Fisher-Yates.
      for (let i = this.count - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1))
        ;[this.block[i], this.block[j]] = [this.block[j], this.block[i]]
      }
    }
    return this.block.pop()
  }
}

/**
 * Starts one server per format, each able to be any of them: they swap between generations. If one
 * cannot start, the others are stopped, not left behind.
 * @param {object} options runLockstep's
 * @returns {Promise<object[]>} each with its CPU clock
 */
async function startServers ({ formats, serverArgs, serverCommand, cpus }) {
  const [command, ...commandArgs] = serverCommand ?? []
  const start = () => startServerProcess(serverArgs, { cpus: cpus?.server, command, args: [...commandArgs, '--port', '0'], nodeFlags: HEAP_FLAGS })
  const attempts = await Promise.allSettled(formats.map(start))
  const started = attempts.filter((attempt) => attempt.status === 'fulfilled').map((attempt) => attempt.value)
  const failed = attempts.find((attempt) => attempt.status === 'rejected')
  if (failed) {
    await Promise.all(started.map((server) => server.stop()))
    throw failed.reason
  }
  for (const server of started) server.clock = new CpuClock(server.child.pid)
  return started
}

/**
 * One generation: each format given in each row a server and a client process, every row in lockstep batches.
 * @param {object} options runLockstep's
 * @param {object[][]} servers by row, one per format
 * @param {BatchClient[][]} clients by row, one per format
 * @param {{shift: number, round: number}} rotation shift: which server and client each format uses,
 *   (format + shift) mod their number; round: how many generations of that rotation came before
 * @param {Map<string, object>} plan each row's batch sizes and rate, made in the warm-up
 * @param {number|null} index the generation, null for the warm-up
 * @returns {Promise<Generation|null>}
 */
async function runGeneration (options, servers, clients, { shift, round }, plan, index) {
  const { formats, labels, rows, load, batchMessages } = options
  // By row, then format: the server and the client process each format runs in this generation.
  const pick = (row) => formats.map((_, i) => row[(i + shift) % row.length])
  const activeServers = servers.map(pick)
  const activeRows = clients.map(pick)
  const connect = (client, r, i) => client.connect(formats[i], activeServers[r][i].url)
  await Promise.all(activeRows.flatMap((active, r) => active.map((client, i) => connect(client, r, i))))
  const machine = new MachineWatch([...new Set(servers.flat()), ...clients.flat()].map((process) => process.clock))
  const saturated = []
  const costs = new Map()
  for (const [r, row] of rows.entries()) {
    const active = activeRows[r]
    const serverOf = (format) => activeServers[r][format]
    if (r > 0) await settle([...activeRows[r - 1], ...new Set(activeServers[r - 1])].map((process) => process.clock))
    // Planned in each warm-up, the last one's plan kept: by then every process's code is optimised.
    if (index === null) plan.set(row.key, await planRow(row, active, load, batchMessages))
    const sizes = plan.get(row.key)
    // The warm-up generation's rows need none: nothing of theirs is recorded.
    const warmupBatches = index !== null && r === 0 ? sizes.warmupBatches : 0
    for (let batch = 0; batch < warmupBatches; batch++) {
      for (const format of trialOrder(formats.length, batch)) {
        await active[format].batch(row.key, sizes.closedCount, sizes.timedRate, false)
      }
    }
    if (index === null) {
      // Warm-ups run the whole schedule, unrecorded: the optimising compiler's threads still run
      // through the first two passes (5-10 ms of a client's CPU in one batch), then fall quiet.
      await measureRow(row, sizes, active, serverOf, load, () => {}, 0)
      continue
    }
    const where = `${row.label}${row.profile === 'none' ? '' : ` on ${row.profile}`}`
    const onSaturated = (who, format) => saturated.push(`${who} ${where} (${labels[format]})`)
    costs.set(row.key, await measureRow(row, sizes, active, serverOf, load, onSaturated, round))
  }
  if (index === null) return null
  const reports = await Promise.all(activeRows.map((active) => Promise.all(active.map((client) => client.reports()))))
  return {
    index,
    ...machine.read(),
    saturated,
    reports: formats.flatMap((format, i) => rows.map((row, r) => {
      const report = reports[r][i][row.key]
      if (!report) return null
      const { codecUs, ...server } = costs.get(row.key)[i]
      return {
        ...report,
        label: labels[i],
        trial: index,
        client: { process: `client ${clients[r].indexOf(activeRows[r][i]) + 1}` },
        server: { ...server, process: `server ${servers[r].indexOf(activeServers[r][i]) + 1}` },
        codec: { clientUs: report.codec.clientUs, serverUs: codecUs }
      }
    }).filter(Boolean))
  }
}

/**
 * The measured part of one row in one generation: closed-loop pairs for latency and msgs/s (and
 * whose process was the bottleneck), then open-loop pairs, one schedule for every format, for CPU
 * and codec time, the server's read from the kernel and from its /metrics. Fan-out's timed
 * batches are already open loop, at its rate, and serve for both.
 * @param {number} round how many generations of the same rotation came before this one: the
 *   format that opens the row turns with it (see batchOrders)
 * @returns {Promise<Array<{cpuUs: number, messages: number, perMessageUs: number|null, codecUs: number|null}>>}
 *   the server's cost per format
 */
async function measureRow (row, sizes, clients, serverOf, load, onSaturated, round) {
  const fanout = load.direction === 'fanout'
  // Without open-loop pairs (fan-out, or a row of one message per batch) the timed batches are costed too.
  const costedTimed = sizes.openPairs === 0
  const formats = clients.map((client) => client.format)
  const scrapeCodec = () => Promise.all(formats.map((name, i) => serverCodec(serverOf(i), name, row.testName, load.ca)))
  let codecBefore = costedTimed ? await scrapeCodec() : null
  const pairs = (count) => batchOrders(formats.length, count, round)
  const timed = await runPairs(clients, serverOf, row.key, pairs(sizes.closedPairs), sizes.closedCount, sizes.timedRate)
  timed.forEach(({ serverNs, clientNs, ms }, format) => {
    if (serverNs / 1e6 / ms > SATURATED_SHARE) onSaturated('server', format)
    if (clientNs / 1e6 / ms > SATURATED_SHARE) onSaturated('client', format)
  })
  if (!costedTimed) codecBefore = await scrapeCodec()
  const costed = costedTimed
    ? timed
    : await runPairs(clients, serverOf, row.key, pairs(sizes.openPairs), sizes.openCount, sizes.openRate)
  const codecAfter = await scrapeCodec()
  return costed.map(({ serverNs, sent }, format) => {
    const messages = fanout ? sent * load.connections : sent
    const [before, after] = [codecBefore[format], codecAfter[format]]
    const codecMessages = before && after ? after.messages - before.messages : 0
    return {
      cpuUs: Math.round(serverNs / 1000),
      messages,
      perMessageUs: messages > 0 ? round2(serverNs / 1000 / messages) : null,
      codecUs: codecMessages > 0 ? round2((after.seconds - before.seconds) * 1e6 / codecMessages) : null
    }
  })
}

/**
 * Waits until the processes of the row just run have gone quiet: their CPU over the last
 * SETTLE_WINDOW_MS below QUIET_SHARE of a core and none of their threads waiting for a CPU, or
 * MAX_SETTLE_MS gone. After people, its processes went on collecting 13 MB messages' garbage into
 * the next row's first batch, whose p99 ran 3.7x that of the row's other batches.
 * @param {CpuClock[]} clocks
 */
export async function settle (clocks) {
  const busy = () => clocks.reduce((sum, clock) => sum + (clock.read() ?? 0), 0)
  const started = performance.now()
  let before = busy()
  while (performance.now() - started < MAX_SETTLE_MS) {
    await setTimeout(SETTLE_WINDOW_MS)
    const now = busy()
    if (now - before < QUIET_SHARE * SETTLE_WINDOW_MS * 1e6 && !clocks.some((clock) => clock.runnable())) break
    before = now
  }
}

/**
 * What the machine did over a generation besides our work: the load average at its end, the CPU
 * other processes took (the machine's busy time less the hypervisor's steal and less this
 * process's, the servers' and the clients'), and the steal: on a virtual machine, other guests.
 */
class MachineWatch {
  /** @param {CpuClock[]} clocks the servers' and clients' clocks, read already around their batches */
  constructor (clocks) {
    this.clocks = clocks
    this.started = performance.now()
    this.machine = machineCpuNs()
    this.own = process.cpuUsage()
    this.ns = clocks.map((clock) => clock.read())
  }

  /** @returns {{ms: number, loadAverage: number|null, neighbourCores: number|null, stealCores: number|null}} */
  read () {
    const ms = performance.now() - this.started
    const own = process.cpuUsage(this.own)
    const ourNs = (own.user + own.system) * 1000 +
      this.clocks.reduce((sum, clock, i) => sum + (clock.read() ?? 0) - (this.ns[i] ?? 0), 0)
    const machine = machineCpuNs()
    const known = machine !== null && this.machine !== null
    const stealNs = known ? machine.stealNs - this.machine.stealNs : null
    const cores = (ns) => known ? Math.max(0, round2(ns / 1e6 / ms)) : null
    return {
      ms: Math.round(ms),
      loadAverage: loadAverage(),
      neighbourCores: cores(known && machine.busyNs - this.machine.busyNs - stealNs - ourNs),
      stealCores: cores(stealNs)
    }
  }
}

/**
 * Starts the batch client processes: per row, one per format, each ready to be any of them. If one
 * cannot start, the others are closed, not left behind.
 * @param {object} options runLockstep's
 * @returns {Promise<{clients: BatchClient[][], bytes: number[]}>} clients by row, and each row's
 *   largest mean message, bytes, over its formats
 */
async function openClients ({ formats, codecModules, rows, load }) {
  // They start on every CPU, each making its row ready at once; then they move to the clients' CPU.
  const fork = (name) => new BatchClient(name)
  const clients = rows.map((row) => formats.map((_, i) => fork(`client ${i + 1} of ${row.label}`)))
  const opened = await Promise.allSettled(rows.flatMap(({ key, test, custom, profile }, r) => {
    const plan = { formats, codecModules, load, rows: [{ key, test, custom, profile }] }
    return clients[r].map((client) => client.ask({ type: 'open', plan }))
  }))
  const failed = opened.find((attempt) => attempt.status === 'rejected')
  if (failed) {
    await Promise.all(clients.flat().map((client) => client.close()))
    throw failed.reason
  }
  return { clients, bytes: rows.map((_, r) => opened[r * formats.length].value.bytes) }
}

/**
 * Warms each client up in every format, on the server it meets that format on, every row at once;
 * then moves them to the clients' CPU.
 * @param {object} options runLockstep's
 * @param {BatchClient[][]} clients by row
 * @param {object[][]} servers by row, one per format
 */
async function warmClients ({ formats, rows, cpus, startWarmupMs = START_WARMUP_MS }, clients, servers) {
  try {
    for (let shift = 0; shift < formats.length; shift++) {
      await Promise.all(rows.flatMap(({ key }, r) => clients[r].map(async (client, p) => {
        const format = (p + formats.length - shift) % formats.length
        await client.connect(formats[format], servers[r][p].url)
        const cpuMs = Math.min(startWarmupMs, START_WARMUP_CPU_MS)
        await client.ask({ type: 'warm', key, ms: startWarmupMs, cpuMs, maxMs: startWarmupMs * START_WARMUP_LONGEST })
      })))
    }
  } catch (err) {
    await Promise.all(clients.flat().map((client) => client.close()))
    throw err
  }
  if (cpus?.clients) for (const client of clients.flat()) pinProcess(client.pid, cpus.clients)
}

/**
 * The order of the formats in each pair of one phase of a row: balanced blocks (trialOrder), the
 * formats renamed by the round so that the one that opens the row takes turns from one generation
 * of a rotation to the next. The first batch of a row meets what the row before it left behind
 * (after people, the person row's first batch ran the p99 of json in an A/A run 1.5x that of
 * its twin, always the same format's); a row of one pair (people) would otherwise put the same
 * format first every time.
 * @param {number} count formats
 * @param {number} pairs in the phase
 * @param {number} round how many generations of the same rotation came before
 * @returns {number[][]} per pair, format indexes in the order they run
 */
export function batchOrders (count, pairs, round) {
  return Array.from({ length: pairs }, (_, pair) => trialOrder(count, pair).map((format) => (format + round) % count))
}

/**
 * Runs batch pairs of one row in turn, in the given orders, reading each batch's server and
 * client CPU from the kernel around it.
 * @returns {Promise<Array<{serverNs: number, clientNs: number, ms: number, sent: number}>>} per format
 */
async function runPairs (clients, serverOf, key, orders, count, rate) {
  const totals = clients.map(() => ({ serverNs: 0, clientNs: 0, ms: 0, sent: 0 }))
  for (const order of orders) {
    for (const format of order) {
      const server = serverOf(format).clock
      const before = server.read()
      const { sent, durationMs, cpuUs } = await clients[format].batch(key, count, rate, true)
      const total = totals[format]
      total.serverNs += server.read() - before
      total.clientNs += cpuUs * 1000
      total.ms += durationMs
      total.sent += sent
    }
  }
  return totals
}

/**
 * A row's batch sizes and rates, from short closed-loop probes of every format: batches of about
 * BATCH_MS for the slower one, and open-loop batches at OPEN_LOOP_SHARE of its rate.
 */
async function planRow (row, clients, load, batchMessages) {
  if (load.direction === 'fanout') {
    // Fan-out has its rate: batches of about ROW_MS/4 of publishes, every one timed and costed.
    const count = batchMessages ?? Math.max(1, Math.round(load.rate * ROW_MS / 4000))
    const timed = { closedCount: count, timedRate: load.rate, closedPairs: 2, warmupBatches: 1 }
    return { ...timed, openCount: 0, openRate: null, openPairs: 0 }
  }
  let slowest = Infinity
  for (const client of clients) {
    const probes = []
    for (let count = 1; count !== null; count = nextProbe(probes, batchMessages)) {
      const { sent, durationMs } = await client.batch(row.key, count, null, false)
      probes.push({ sent, durationMs })
    }
    slowest = Math.min(slowest, probedRate(probes))
  }
  return rowPlan(slowest, clients.length, load, batchMessages)
}

/** A row's closed-loop rate from its probes, messages per second: the fastest (a hiccup only slows a probe). */
const probedRate = (probes) => Math.max(...probes.map((probe) => probe.sent * 1000 / Math.max(probe.durationMs, 0.01)))

/**
 * The size of a row's next rate probe, or null once the probes time the row. They grow, each sized
 * to last BATCH_MS at the fastest rate so far (a single message times mostly wake-ups), two at
 * least and three at most; a probe that lasts a batch times the row (people's single message,
 * 0.3 s), but not the first alone: one message held up for 0.26 s by a busy machine had planned
 * a row at 3.8 messages a second, and its open-loop batches of 20 ran for 5 s each.
 * @param {Array<{sent: number, durationMs: number}>} probes so far, at least one
 * @param {number|undefined} batchMessages a fixed batch size (-n)
 * @returns {number|null}
 */
export function nextProbe (probes, batchMessages) {
  const last = probes[probes.length - 1]
  if (probes.length >= 3 || (probes.length >= 2 && last.durationMs >= BATCH_MS)) return null
  return batchMessages ?? clamp(Math.round(probedRate(probes) * BATCH_MS / 1000))
}

/**
 * A row's batches from the slower format's closed-loop rate: batches of about BATCH_MS (or
 * `batchMessages`), open-loop ones at OPEN_LOOP_SHARE of that rate, as many pairs of each as fit
 * their share of ROW_MS (CLOSED_SHARE).
 * @param {number} slowest messages per second, the slower format's
 * @param {number} formats how many take turns
 * @param {{inflight: number, connections: number}} load
 * @param {number|undefined} batchMessages a fixed batch size (-n)
 * @returns {{closedCount: number, timedRate: null, closedPairs: number, openCount: number,
 *   openRate: number|null, openPairs: number, warmupBatches: number}}
 */
export function rowPlan (slowest, formats, load, batchMessages) {
  const closedCount = batchMessages ?? clamp(Math.round(slowest * BATCH_MS / 1000))
  const openRate = slowest * OPEN_LOOP_SHARE
  const openCount = batchMessages ?? clamp(Math.round(openRate * BATCH_MS / 1000))
  const closedMs = closedCount * 1000 / slowest
  // Rows whose batches are long (big payloads, slow networks) get fewer, down to one pair of each kind.
  const pairs = (batchMs, share) => Math.max(1, Math.round(ROW_MS * share / (formats * batchMs)))
  // A batch of one message at a time is the same in closed and open loop (people's 13 MB): costing
  // the timed batches spares a second pair that would take as long.
  const single = closedCount === 1 && openCount === 1 && load.inflight === 1 && load.connections === 1
  return {
    closedCount,
    timedRate: null,
    closedPairs: pairs(closedMs, CLOSED_SHARE),
    openCount: single ? 0 : openCount,
    openRate: single ? null : Math.round(openRate * 10) / 10,
    openPairs: single ? 0 : pairs(openCount * 1000 / openRate, 1 - CLOSED_SHARE),
    // None where one batch outlasts it: warm clients need no single message of people's megabytes to lead in.
    warmupBatches: Math.round(WARMUP_MS / closedMs)
  }
}

const longest = (generations) => Math.max(...generations.map(({ ms }) => ms))
const clamp = (count) => Math.max(1, Math.min(MAX_BATCH_MESSAGES, count))
const round2 = (value) => Math.round(value * 100) / 100

/**
 * A server's codec seconds and messages for one format and test, from its /metrics.
 * @param {{url: string}} server
 * @param {string} format
 * @param {string} test
 * @param {string} [ca] the certificate a wss:// server is trusted with
 * @returns {Promise<{seconds: number, messages: number}|null>} null when it does not say
 */
async function serverCodec (server, format, test, ca) {
  try {
    const families = parsePrometheusTextFormat(await getText(`${server.url.replace(/^ws/, 'http')}${METRICS_PATH}`, ca))
    const value = (name) => {
      const metric = families.find((family) => family.name === name)?.metrics
        .find(({ labels }) => labels?.format === format && labels?.test === test)
      return metric ? Number(metric.value) : 0
    }
    return { seconds: value('wsbench_codec_seconds_total'), messages: value('wsbench_messages_total') }
  } catch {
    return null
  }
}

/** GET over http:// or https:// (trusting `ca` beside Node's roots): the body of a 200, else an error. */
function getText (url, ca) {
  const secure = url.startsWith('https:')
  return new Promise((resolve, reject) => {
    const options = secure && ca ? { ca: [...tls.rootCertificates, ca] } : {}
    const request = (secure ? https : http).get(url, options, (response) => {
      let body = ''
      response.setEncoding('utf8').on('data', (chunk) => { body += chunk })
      response.on('end', () => response.statusCode === 200 ? resolve(body) : reject(new Error(`${url} answered ${response.statusCode}`)))
    })
    request.on('error', reject)
  })
}
