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
// A row starts once the row before it has gone quiet (settle, machine-watch.js); its batches are
// sized in the warm-up (row-plan.js).
import { performance } from 'node:perf_hooks'
import { pinProcess, startServerProcess } from '../processes.js'
import { CpuClock } from '../cpu-time.js'
// As roundTo: `round` here is a rotation's count of generations so far.
import { round as roundTo } from '../display.js'
import { UsageError } from '../errors.js'
import { readMetrics } from '../server/metrics-reader.js'
import { trialOrder } from './statistics.js'
import { HEAP_FLAGS, openBatchClients } from './client-handle.js'
import { MachineWatch, settle } from './machine-watch.js'
import { batchOrders, planRow } from './row-plan.js'

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
    const [opened, shared] = await Promise.allSettled([openBatchClients(options), startPair()])
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
 * @param {import('./client-handle.js').BatchClient[][]} clients by row, one per format
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
      perMessageUs: messages > 0 ? roundTo(serverNs / 1000 / messages, 2) : null,
      codecUs: codecMessages > 0 ? roundTo((after.seconds - before.seconds) * 1e6 / codecMessages, 2) : null
    }
  })
}

/**
 * Warms each client up in every format, on the server it meets that format on, every row at once;
 * then moves them to the clients' CPU.
 * @param {object} options runLockstep's
 * @param {import('./client-handle.js').BatchClient[][]} clients by row
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

const longest = (generations) => Math.max(...generations.map(({ ms }) => ms))

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
    const metrics = await readMetrics(server.url, { ca })
    const value = (name) => metrics.value(name, { format, test }) ?? 0
    return { seconds: value('wsbench_codec_seconds_total'), messages: value('wsbench_messages_total') }
  } catch {
    return null
  }
}
