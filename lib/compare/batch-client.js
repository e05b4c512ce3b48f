// A comparison's client process: one format, one generation. It makes every row (a test on a
// network) ready, opens each row's connections once, and runs the batches the parent
// (lockstep.js) asks for over IPC, one at a time, so formats take turns and never overlap. It
// keeps what its measured batches recorded and gives one report per row when asked.
//
// Latency and msgs/s come from the closed-loop batches; client CPU and codec time from the
// open-loop ones (fan-out has only open-loop batches, and takes all of them from those).
import { openRun } from '../load/engine.js'
import { loadOptions, prepareRun, reportOf } from '../load/measure.js'
import { addCodecModules } from '../codecs/registry.js'
import { resolveNetwork } from '../network/profiles.js'
import { mergeReports } from '../report/merge.js'
import { cpuPerMessage } from '../report/report.js'
import { oneLine } from '../errors.js'

/**
 * @typedef {object} ClientPlan what the parent sends first ({type: 'open', plan})
 * @property {string} format
 * @property {string[]} codecModules
 * @property {string} url the server's
 * @property {Array<{key: string, test: string|null, custom: object|null, profile: string}>} rows
 * @property {import('../load/engine.js').LoadSettings} load direction, inflight, connections, compress,
 *   repeat; fan-out: rate, decode, heartbeatMs
 */

/** One row's connections and what its measured batches recorded. */
class Row {
  /**
   * @param {import('../load/measure.js').PreparedRun} run
   * @param {import('../load/engine.js').LoadSettings} settings
   * @param {{connectUrl?: string, network: object|null, shaping: object|null}} where
   */
  constructor (run, settings, where) {
    this.run = run
    this.settings = settings
    this.where = where
    /** The engine's run holding the connections (null for fan-out, which connects per batch). */
    this.connections = null
    /** Time spent in the codec, ms, kept by the timed codec. */
    this.codecClock = { ms: 0 }
    /** Reports of the batches that measure latency and msgs/s. */
    this.timed = []
    /** Sums over the batches that measure CPU and codec time. */
    this.costs = { sent: 0, delivered: 0, userUs: 0, systemUs: 0, codecMs: 0, process: null }
    this.accounting = { sent: 0, acked: 0, errors: 0, lost: 0 }
  }
}

const rows = new Map()

process.on('message', (message) => {
  handle(message).then((reply) => process.send(reply), (err) => process.send({ type: 'error', message: oneLine(err) }))
})
process.on('disconnect', () => process.exit(0))

async function handle (message) {
  switch (message.type) {
    case 'open': return open(message.plan)
    case 'batch': return batch(message)
    case 'report': return { type: 'report', reports: Object.fromEntries([...rows].map(([key, row]) => [key, report(row)])) }
    case 'close':
      await close()
      return { type: 'closed' }
    default: throw new Error(`unknown request ${message.type}`)
  }
}

/** Prepares every row, with its network's shaping, and opens its connections. */
async function open ({ format, codecModules, url, rows: planned, load }) {
  await addCodecModules(codecModules)
  const { startShaping } = await import('../network/shaping.js')
  const server = new URL(url)
  for (const { key, test, custom, profile } of planned) {
    const run = await prepareRun(format, { test, custom, load })
    const network = profile === 'none' ? null : resolveNetwork({ profile })
    const shaping = network && await startShaping(network, { target: { host: server.hostname, port: Number(server.port) } })
    const where = {
      connectUrl: shaping?.backend === 'proxy' ? `ws://${shaping.host}:${shaping.port}` : undefined,
      network: shaping ? { ...network, backend: shaping.backend, reason: shaping.reason } : null,
      shaping
    }
    const row = new Row(run, { ...load, url }, where)
    row.run = { ...run, codec: timedCodec(run.codec, row.codecClock) }
    if (load.direction !== 'fanout') row.connections = await openRun(loadOptions(row.run, row.settings, where))
    rows.set(key, row)
  }
  return { type: 'ready', pid: process.pid }
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
 * ones for CPU and codec time.
 */
async function batch ({ key, count, rate, measured }) {
  const row = rows.get(key)
  const codecBefore = row.codecClock.ms
  const fanout = row.settings.direction === 'fanout'
  let result
  if (fanout) {
    const { runFanout } = await import('../load/fanout.js')
    result = await runFanout({ ...loadOptions(row.run, row.settings, row.where), messages: count, rate, warmup: {} })
  } else {
    const phase = await row.connections.runPhase({ count, rate: rate ?? 0, recording: measured })
    const { prepared: { sizes } } = row.run
    result = { ...phase, bytes: { payloadPerMessage: sizes.mean, payloadSizes: sizes, ...phase.bytes }, compression: row.connections.compression }
  }
  const { sent, acked, errors, lost } = result.messages
  if (measured) {
    for (const name of ['sent', 'acked', 'errors', 'lost']) row.accounting[name] += result.messages[name]
    const batchReport = reportOf(row.run, row.settings, row.where.network, result)
    if (rate === null || fanout) row.timed.push(batchReport)
    if (rate !== null) {
      const costs = row.costs
      costs.sent += sent
      costs.delivered += batchReport.fanout?.delivered ?? 0
      costs.userUs += result.cpu?.userUs ?? 0
      costs.systemUs += result.cpu?.systemUs ?? 0
      costs.process = result.cpu?.process ?? costs.process
      costs.codecMs += row.codecClock.ms - codecBefore
    }
  }
  return { type: 'batch', sent, acked, errors, lost, durationMs: result.durationMs, failure: result.failure ?? null }
}

/**
 * One report for a row over its measured batches: latency, msgs/s and bytes from the timed ones
 * (msgs/s over their summed time, not the span with the other format's turns in it), client CPU
 * and codec time per message from the open-loop ones, and every measured message accounted for.
 */
function report (row) {
  if (row.timed.length === 0) return null
  const merged = mergeReports(row.timed)
  const durationMs = row.timed.reduce((sum, part) => sum + part.durationMs, 0)
  const counted = row.timed.reduce((sum, part) => sum + (part.fanout?.subscribers > 0 ? part.fanout.delivered : part.messages.acked), 0)
  const { sent, delivered, userUs, systemUs, codecMs, process: where } = row.costs
  const per = merged.fanout ? delivered : sent
  const cpu = per > 0 ? cpuPerMessage({ userUs, systemUs, process: where }, per) : null
  const { windows, mergedFrom, timeSeries, ...rest } = merged
  return {
    ...rest,
    messages: { ...row.accounting },
    durationMs: Math.round(durationMs * 1000) / 1000,
    rate: durationMs > 0 ? Math.round(counted * 1e4 / durationMs) / 10 : 0,
    cpu,
    fanout: merged.fanout && { ...merged.fanout, cpuPerDeliveryUs: cpu?.perMessageUs ?? null },
    codec: { clientUs: sent > 0 ? Math.round(codecMs * 1e5 / sent) / 100 : null },
    batches: row.timed.length,
    ok: row.timed.every((part) => part.ok) && row.accounting.sent === row.accounting.acked
  }
}

async function close () {
  for (const row of rows.values()) {
    await row.connections?.close()
    await row.where.shaping?.stop()
  }
}
