// A comparison's client process, alive for the whole run. It makes every row (a test on a
// network) ready in every format once; each generation it is told which format to be and which
// server to load, opens that format's connections, and runs the batches the parent (lockstep.js)
// asks for over IPC, one at a time, so formats take turns and never overlap. It keeps what its
// measured batches recorded and gives one report per row when asked.
//
// It lives as long as the run because a fresh process measures its own JIT: the first thousands of
// messages of a new process carry millisecond optimisation pauses that move p99 and CPU more than
// the formats do. The processes swap formats between generations, as the servers do, so a
// process's own quirks are spread over the generations, not a bias one format carries.
//
// Latency and msgs/s come from the closed-loop batches; client CPU and codec time from the
// open-loop ones (fan-out has only open-loop batches, and takes all of them from those).
import { openRun } from '../load/engine.js'
import { loadOptions, prepareRun, reportOf } from '../load/measure.js'
import { addCodecModules } from '../codecs/registry.js'
import { resolveNetwork } from '../network/profiles.js'
import { busiestGenerator, mergeReports } from '../report/merge.js'
import { createLatencyHistogram } from '../histogram.js'
import { cpuPerMessage } from '../report/report.js'
import { oneLine } from '../errors.js'

/**
 * @typedef {object} ClientPlan what the parent sends first ({type: 'open', plan})
 * @property {string[]} formats every format this process may be asked to be
 * @property {string[]} codecModules
 * @property {Array<{key: string, test: string|null, custom: object|null, profile: string}>} rows
 * @property {import('../load/engine.js').LoadSettings} load direction, inflight, connections, compress,
 *   repeat; fan-out: rate, decode, heartbeatMs
 */

/** A row made ready in one format, once: its messages and its codec, timed. */
class Prepared {
  /** @param {import('../load/measure.js').PreparedRun} run */
  constructor (run) {
    /** Time spent in the codec, ms, kept by the timed codec. */
    this.codecClock = { ms: 0 }
    this.run = { ...run, codec: timedCodec(run.codec, this.codecClock) }
  }
}

/** One row's connections in one generation and what its measured batches recorded. */
class Row {
  /**
   * @param {Prepared} prepared
   * @param {import('../load/engine.js').LoadSettings} settings
   * @param {{connectUrl?: string, network: object|null, shaping: object|null}} where
   */
  constructor (prepared, settings, where) {
    this.codecClock = prepared.codecClock
    this.run = prepared.run
    this.settings = settings
    this.where = where
    /** The engine's run holding the connections (null for fan-out, which connects per batch). */
    this.connections = null
    /** The batches that measure latency and msgs/s, added up (fan-out: their reports, merged at the end). */
    this.timed = { histogram: createLatencyHistogram(), durationMs: 0, acked: 0, generator: null, batches: 0 }
    this.fanoutReports = []
    /** Sums over the batches that measure CPU and codec time. */
    this.costs = { sent: 0, delivered: 0, userUs: 0, systemUs: 0, codecMs: 0, process: null }
    /** Every measured message, closed and open loop, and the bytes they took on the sockets. */
    this.messages = { sent: 0, acked: 0, errors: 0, lost: 0 }
    this.bytes = { written: 0, read: 0 }
    this.errorReplies = []
    this.failure = null
  }
}

/** Warm-up batches grow to at most this many messages. */
const WARM_BATCH_MESSAGES = 256
/** At most this many messages lead each measured closed-loop batch in, unrecorded. */
const LEAD_IN = 5

/** Every row in every format: format -> row key -> Prepared. */
const prepared = new Map()
/** The rows of the format this process is now, with their connections: row key -> Row. */
const rows = new Map()
let settings = null

process.on('message', (message) => {
  handle(message).then((reply) => process.send(reply), (err) => process.send({ type: 'error', message: oneLine(err) }))
})
process.on('disconnect', () => process.exit(0))

async function handle (message) {
  switch (message.type) {
    case 'open': return open(message.plan)
    case 'connect': return connect(message)
    case 'warm': return warm(message)
    case 'batch': return batch(message)
    case 'probe': return probe(message)
    case 'report': return { type: 'report', reports: Object.fromEntries([...rows].map(([key, row]) => [key, report(row)])) }
    case 'close':
      await disconnect()
      return { type: 'closed' }
    default: throw new Error(`unknown request ${message.type}`)
  }
}

/** Prepares every row in every format; answers with the largest mean message, bytes, of any. */
async function open ({ formats, codecModules, rows: planned, load }) {
  await addCodecModules(codecModules)
  for (const format of formats) {
    if (prepared.has(format)) continue
    const runs = new Map()
    for (const { key, test, custom } of planned) {
      runs.set(key, new Prepared(await prepareRun(format, { test, custom, load })))
    }
    prepared.set(format, runs)
  }
  settings = { load, planned }
  const means = [...prepared.values()].flatMap((runs) => [...runs.values()].map(({ run }) => run.prepared.sizes.mean))
  return { type: 'ready', pid: process.pid, bytes: Math.max(...means) }
}

/**
 * Becomes one format for a generation: the last one's connections and shaping closed, every
 * row's opened to the server at `url` (through its network's shaping), nothing recorded yet.
 */
async function connect ({ format, url }) {
  const runs = prepared.get(format)
  if (!runs) throw new Error(`format ${format} was not opened`)
  await disconnect()
  const { startShaping } = await import('../network/shaping.js')
  const { load, planned } = settings
  const server = new URL(url)
  for (const { key, profile } of planned) {
    const network = profile === 'none' ? null : resolveNetwork({ profile })
    const target = { host: server.hostname, port: Number(server.port) }
    const shaping = network && await startShaping(network, { target })
    const where = {
      connectUrl: shaping?.backend === 'proxy' ? `ws://${shaping.host}:${shaping.port}` : undefined,
      network: shaping ? { ...network, backend: shaping.backend, reason: shaping.reason } : null,
      shaping
    }
    // compare's batches: timer pacing, as a pacing thread's waiting would be client CPU, the same
    // for every format. capacity's probes name theirs: their latency counts from the due time.
    const row = new Row(runs.get(key), { ...load, url, pacing: load.pacing ?? 'timer' }, where)
    rows.set(key, row)
    if (load.direction !== 'fanout') row.connections = await openRun(loadOptions(row.run, row.settings, where))
  }
  return { type: 'connected', format }
}

/** The row of this key, connected in this generation's format. */
function connectedRow (key) {
  const row = rows.get(key)
  if (!row) throw new Error(`no row ${JSON.stringify(key)} is connected`)
  return row
}

/**
 * Sends a row's messages closed loop, unrecorded, in batches of growing size, for at least `ms`
 * and until this process has spent `cpuMs` of its CPU on them, or `maxMs` have passed (a throttled
 * network's messages take little CPU and long to come back): a new process's first thousands of
 * messages run code still being optimised, and with every row's clients warming at once on two
 * cores, 2 s of wall time gave each an eighth of a core, and its CPU per message then ran 1.5-3x
 * its later value for three to four generations. Each batch is sized to what is left: a row of slow
 * messages (people's 13 MB) ends once the next message would take longer than the time left,
 * instead of overrunning it by doubling. Fan-out, open loop at its own rate: one batch of `ms`.
 */
async function warm ({ key, ms, cpuMs, maxMs }) {
  const row = connectedRow(key)
  if (row.settings.direction === 'fanout') {
    const { rate } = row.settings
    await fanoutBatch(row, Math.max(1, Math.round(rate * ms / 1000)), rate, false, row.codecClock.ms)
    return { type: 'warmed' }
  }
  const begun = performance.now()
  const cpuBefore = process.cpuUsage()
  for (let count = 1; ;) {
    const started = performance.now()
    const cpuStarted = process.cpuUsage()
    await row.connections.runPhase({ count })
    const now = performance.now()
    const messageMs = (now - started) / count
    const messageCpuMs = cpuMsSince(cpuStarted) / count
    // Messages still owed to the time and to the CPU floor (this one only until maxMs): batches
    // grow, but never past the larger.
    const byTime = (begun + ms - now) / messageMs
    const byCpu = Math.min((cpuMs - cpuMsSince(cpuBefore)) / messageCpuMs, (begun + maxMs - now) / messageMs)
    const left = Math.max(byTime, byCpu)
    if (left < 1) return { type: 'warmed' }
    count = Math.max(1, Math.min(count * 2, WARM_BATCH_MESSAGES, Math.floor(left)))
  }
}

/** This process's CPU time since `before` (a process.cpuUsage()), ms. */
const cpuMsSince = (before) => {
  const { user, system } = process.cpuUsage(before)
  return (user + system) / 1000
}

/**
 * The codec, timed around every encode and decode: the codec's own share of the client's work.
 * @param {import('../codecs/registry.js').Codec} codec
 * @param {{ms: number}} clock
 */
function timedCodec (codec, clock) {
  const timed = (call) => (value) => {
    const started = performance.now()
    const result = call(value)
    clock.ms += performance.now() - started
    return result
  }
  // Defined, not assigned: codecs are frozen, and their own encode and decode are read-only.
  return Object.create(codec, {
    encode: { value: timed((native) => codec.encode(native)) },
    decode: { value: timed((data) => codec.decode(data)) }
  })
}

/**
 * Runs one batch on a row: `count` messages, closed loop (rate null) or at `rate` per second.
 * Measured batches are kept: closed-loop (and fan-out) ones for latency and msgs/s, open-loop
 * ones for CPU and codec time. Answers with what the parent needs between batches, no more.
 */
async function batch ({ key, count, rate, measured }) {
  const row = connectedRow(key)
  const codecBefore = row.codecClock.ms
  if (row.settings.direction === 'fanout') return fanoutBatch(row, count, rate, measured, codecBefore)
  // A closed-loop batch starts after an idle moment (the other format's turn): its first replies
  // wait on wake-ups, not on the format, so they lead in unrecorded.
  const lead = Math.min(LEAD_IN, Math.floor(count / 10))
  if (measured && rate === null && lead > 0) await row.connections.runPhase({ count: lead })
  const before = row.connections.errorReplies.length
  const result = await row.connections.runPhase({ count, rate: rate ?? 0, recording: measured, series: false })
  if (measured) {
    keep(row, result, result.errorReplies.slice(before))
    if (rate === null) {
      const timed = row.timed
      timed.histogram.add(result.histogram)
      timed.durationMs += result.durationMs
      timed.acked += result.messages.acked
      timed.batches++
      timed.generator = timed.generator ? busiestGenerator([timed.generator, result.generator]) : result.generator
    } else {
      cost(row, result, result.messages.sent, 0, codecBefore)
    }
  }
  return { type: 'batch', sent: result.messages.sent, durationMs: result.durationMs, cpuUs: cpuUsOf(result) }
}

/**
 * One of capacity's probes: `count` messages at `rate` per second, recorded apart from everything
 * else (the row's report is compare's). Answers with what the search judges the step by: every
 * message accounted for, the time to the last reply, the latency percentiles asked for (µs, from
 * the due time), the send rate achieved, and how hard the generator worked (send lag, loop, CPU).
 * A fan-out row's probe leads in with `lead` publishes itself (see fanoutProbe).
 * @param {{key: string, count: number, rate: number, percentiles: number[], lead?: number}} request
 */
async function probe ({ key, count, rate, percentiles, lead = 0 }) {
  const row = connectedRow(key)
  if (row.settings.direction === 'fanout') return fanoutProbe(row, { count, rate, percentiles, lead })
  const before = row.connections.errorReplies.length
  const result = await row.connections.runPhase({ count, rate, recording: true, series: false })
  const sender = { sendLag: result.sendLagHistogram, pacingUs: result.cpu?.pacingUs ?? 0 }
  return probeAnswer(result, sender, percentiles, before)
}

/**
 * A fan-out probe: `lead` publishes unrecorded, then `count` at `rate` per second, to the row's
 * subscribers on one set of connections (the lead-in is runFanout's warm-up: a batch of its own would
 * connect other subscribers). Answers as probe does, the latency publish to delivery, the send lag
 * and pacing the publisher's, with `fanout`: the deliveries expected (every publish at every
 * subscriber) and made, and their rate over the span to the last one.
 */
async function fanoutProbe (row, { count, rate, percentiles, lead }) {
  const { runFanout } = await import('../load/fanout.js')
  const options = loadOptions(row.run, row.settings, row.where)
  const result = await runFanout({ ...options, messages: count, rate, warmup: { messages: lead } })
  const { subscribers, published, delivered, duplicates, errors } = result.fanout
  const expected = published === null ? null : published * subscribers
  const publisher = { sendLag: result.publisher?.sendLagHistogram ?? null, pacingUs: result.publisher?.pacingUs ?? 0 }
  return {
    ...probeAnswer(result, publisher, percentiles, 0),
    fanout: {
      subscribers,
      published,
      expected,
      delivered,
      lost: expected === null ? null : expected - delivered,
      duplicates,
      errors,
      deliveryRate: result.durationMs > 0 ? Math.round(delivered * 1e4 / result.durationMs) / 10 : 0
    }
  }
}

/**
 * What a probe answers from its phase's result: its messages, time, pacing, latency and send lag at the
 * percentiles, the generator's loop and CPU (less its pacing), its first new error reply and failure.
 * @param {object} result the phase's (or fan-out's) result
 * @param {{sendLag: object|null, pacingUs: number}} sender the sending side's lateness and pacing CPU
 * @param {number[]} percentiles
 * @param {number} before error replies the result held before this probe
 */
function probeAnswer (result, { sendLag, pacingUs }, percentiles, before) {
  const { histogram, generator, cpu, durationMs, messages, target } = result
  return {
    type: 'probe',
    messages: { ...messages },
    durationMs,
    sendRate: target?.sendRate ?? null,
    pacing: target?.pacing ?? null,
    latencyUs: atPercentiles(histogram, percentiles),
    sendLagUs: sendLag && atPercentiles(sendLag, percentiles),
    generator: generator && { cpuShare: generator.cpuShare, loopBusy: generator.loopBusy },
    cpuUs: cpu ? cpu.userUs + cpu.systemUs : 0,
    pacingUs,
    errorReply: result.errorReplies[before] ?? null,
    failure: result.failure
  }
}

/** A histogram's values at each percentile (µs), by percentile; null where it holds none. */
const atPercentiles = (histogram, percentiles) =>
  Object.fromEntries(percentiles.map((p) => [p, histogram.totalCount > 0 ? histogram.getValueAtPercentile(p) : null]))

/** A fan-out batch: subscribers and publisher connect, publish `count` at `rate`, and close. */
async function fanoutBatch (row, count, rate, measured, codecBefore) {
  const { runFanout } = await import('../load/fanout.js')
  const options = loadOptions(row.run, row.settings, row.where)
  const result = await runFanout({ ...options, messages: count, rate, warmup: {} })
  if (measured) {
    keep(row, result, result.errorReplies)
    const report = reportOf(row.run, row.settings, row.where.network, result)
    row.fanoutReports.push(report)
    cost(row, result, result.messages.sent, report.fanout.delivered, codecBefore)
  }
  return { type: 'batch', sent: result.messages.sent, durationMs: result.durationMs, cpuUs: cpuUsOf(result) }
}

/** This process's CPU over a recorded batch, µs (0 when not recorded). */
const cpuUsOf = ({ cpu }) => cpu ? cpu.userUs + cpu.systemUs : 0

/**
 * Accounts for a measured batch's messages, and keeps its failure and its own error replies (the
 * first few of the row's): a row's connections keep one list over all their batches, so only
 * what came during this batch is new.
 */
function keep (row, result, newReplies) {
  for (const name of ['sent', 'acked', 'errors', 'lost']) row.messages[name] += result.messages[name]
  row.bytes.written += result.bytes.written
  row.bytes.read += result.bytes.read
  row.failure ??= result.failure ?? null
  row.errorReplies.push(...newReplies.slice(0, Math.max(0, 5 - row.errorReplies.length)))
}

/** Adds a costed batch's client CPU and codec time. */
function cost (row, result, sent, delivered, codecBefore) {
  const costs = row.costs
  costs.sent += sent
  costs.delivered += delivered
  costs.userUs += result.cpu?.userUs ?? 0
  costs.systemUs += result.cpu?.systemUs ?? 0
  costs.process = result.cpu?.process ?? costs.process
  costs.codecMs += row.codecClock.ms - codecBefore
}

/**
 * One report for a row over its measured batches: latency, msgs/s and bytes from the timed ones
 * (msgs/s over their summed time, not the span with the other format's turns in it), client CPU
 * and codec time per message from the costed ones, and every measured message accounted for.
 */
function report (row) {
  const { sent, delivered, userUs, systemUs, codecMs, process: where } = row.costs
  const fanout = row.settings.direction === 'fanout'
  const per = fanout ? delivered : sent
  const cpu = per > 0 ? cpuPerMessage({ userUs, systemUs, process: where }, per) : null
  const codec = { clientUs: sent > 0 ? Math.round(codecMs * 1e5 / sent) / 100 : null }
  if (fanout) {
    if (row.fanoutReports.length === 0) return null
    const { windows, mergedFrom, timeSeries, ...merged } = mergeReports(row.fanoutReports)
    const durationMs = row.fanoutReports.reduce((sum, part) => sum + part.durationMs, 0)
    return {
      ...merged,
      messages: { ...row.messages },
      durationMs,
      rate: durationMs > 0 ? Math.round(merged.fanout.delivered * 1e4 / durationMs) / 10 : 0,
      cpu,
      fanout: { ...merged.fanout, cpuPerDeliveryUs: cpu?.perMessageUs ?? null },
      codec,
      batches: row.fanoutReports.length
    }
  }
  const timed = row.timed
  if (timed.batches === 0) return null
  const { prepared: { sizes } } = row.run
  const result = {
    messages: { ...row.messages },
    startedAt: Date.now(),
    durationMs: timed.durationMs,
    histogram: timed.histogram,
    uncorrectedHistogram: null,
    bytes: { payloadPerMessage: sizes.mean, payloadSizes: sizes, ...row.bytes },
    cpu: null,
    generator: timed.generator,
    target: null,
    reconnects: { count: 0, gapMs: 0 },
    compression: row.connections.compression,
    tls: row.connections.tls,
    connect: row.connections.connectTimes.result(),
    interrupted: false,
    errorReplies: row.errorReplies,
    failure: row.failure
  }
  return {
    ...reportOf(row.run, row.settings, row.where.network, result),
    rate: timed.durationMs > 0 ? Math.round(timed.acked * 1e4 / timed.durationMs) / 10 : 0,
    cpu,
    codec,
    batches: timed.batches
  }
}

/** Closes the rows' connections and shaping. */
async function disconnect () {
  for (const row of rows.values()) {
    await row.connections?.close()
    await row.where.shaping?.stop()
  }
  rows.clear()
}
