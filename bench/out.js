// npm run bench:out — what streaming a run's metrics (--out) costs the client that streams them.
// A client at 20,000 msgs/s (test 5, protobuf, 16 connections, 10 s; BENCH_RATE, BENCH_TEST,
// BENCH_SECONDS override) runs without --out, with --out prometheus-rw to a real Prometheus
// (Debian's, its remote-write receiver on) and, where PROMETHEUS_OTLP names a Prometheus 3
// (bash .ci/prometheus.sh), with --out otlp to its OTLP receiver; every --out-interval 5 s, its
// default. The client runs on a CPU of its own, the server and Prometheus on another; the three take
// turns in every round (BENCH_ROUNDS, 5), each round in another order; medians. Its CPU over the
// measured phase is the report's (user and system, the whole process), per second of the phase.
// What one push costs the thread that makes it (the figures turned into series and encoded, a 10 s
// run's histograms) is timed apart, in this process, as is what recording each latency into
// OpenTelemetry's own Histogram instrument would cost the send path: the measure that chose the
// exporter fed at push time over the SDK's instruments.
import { performance } from 'node:perf_hooks'
import { AggregationType, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics'
import { createLatencyHistogram } from '../lib/histogram.js'
import { emptyFigures } from '../lib/outputs/figures.js'
import { pointsOf } from '../lib/outputs/metrics.js'
import { encodeWriteRequest, writeRequest } from '../lib/outputs/remote-write.js'
import { cpuPinning, startServerProcess } from '../lib/processes.js'
import { runClientProcess } from './support/client-process.js'
import { startPrometheus } from './support/prometheus.js'
import { printTable, startResults } from './support/results.js'
import { median } from './support/statistics.js'

const RATE = Number(process.env.BENCH_RATE ?? 20000)
const TEST = process.env.BENCH_TEST ?? '5'
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const FORMAT = 'protobuf'
/** What the budget allows: streaming may cost the client this share of the CPU it spends without it. */
const BUDGET = 0.01

/** One client run, its CPU per second of the measured phase, and what its --out did. */
async function runClient (server, out, cpus) {
  const report = await runClientProcess(FORMAT, [TEST, '--rate', String(RATE), '--duration', `${SECONDS}s`, '--connections', '16',
    '--inflight', '64', '--url', server.url, ...(out ? ['--out', out, '--tag', 'testid=bench-out'] : [])], cpus)
  if (!report.ok) throw new Error(`the client failed: ${report.failure}`)
  return {
    cores: (report.cpu.userUs + report.cpu.systemUs) / (report.durationMs * 1000),
    perMessageUs: report.cpu.perMessageUs,
    pushes: report.outputs?.[0].pushes ?? 0,
    failed: report.outputs?.[0].failed ?? 0
  }
}

/** A measured phase's figures as a push reads them: RATE msgs/s for SECONDS, latencies spread 0.2-20 ms. */
function runFigures () {
  const latency = createLatencyHistogram()
  const sendLag = createLatencyHistogram()
  const connect = createLatencyHistogram()
  for (let i = 0; i < RATE * SECONDS; i++) {
    latency.recordValue(200 + (i * 7919) % 20_000)
    sendLag.recordValue(1 + (i * 104_729) % 500)
  }
  for (let i = 0; i < 16; i++) connect.recordValue(900 + i)
  const sent = RATE * SECONDS
  return { ...emptyFigures(), startedAt: Date.now(), messages: { sent, acked: sent, errors: 0, lost: 0 }, latency, sendLag, connect, cpuUs: 1e6 }
}

/** CPU one push costs its thread: the figures turned into series and a WriteRequest, encoded (ms, median of 50). */
function pushCostMs () {
  const figures = runFigures()
  const labels = { test: 'small', format: FORMAT, direction: 'up', host: 'h', instance: 'h:1', testid: 'bench-out' }
  const times = []
  for (let i = 0; i < 50; i++) {
    const before = process.cpuUsage()
    encodeWriteRequest(writeRequest([{ labels, points: pointsOf(figures) }], Date.now(), false))
    const cpu = process.cpuUsage(before)
    times.push((cpu.user + cpu.system) / 1000)
  }
  return median(times)
}

/** A reader that only collects: the SDK's instruments aggregate, nothing is exported. */
class CollectingReader extends MetricReader {
  async onForceFlush () {}
  async onShutdown () {}
}

/**
 * What recording every latency into the SDK's own Histogram instrument costs the thread that
 * records it, ns per value (median of 5 passes of 200,000): an exponential histogram, the run's labels.
 */
function sdkRecordNs () {
  const provider = new MeterProvider({
    readers: [new CollectingReader({ aggregationSelector: () => ({ type: AggregationType.EXPONENTIAL_HISTOGRAM }) })]
  })
  const histogram = provider.getMeter('bench').createHistogram('wsbench_client_latency', { unit: 's' })
  const attributes = { test: 'small', format: FORMAT, direction: 'up', host: 'h', testid: 'bench-out' }
  const passes = []
  for (let pass = 0; pass < 5; pass++) {
    const started = performance.now()
    for (let i = 0; i < 200_000; i++) histogram.record((200 + (i * 7919) % 20_000) / 1e6, attributes)
    passes.push((performance.now() - started) * 1e6 / 200_000)
  }
  return median(passes)
}

const pinning = cpuPinning()
const server = await startServerProcess([], { cpus: pinning?.server })
const prometheus = await startPrometheus({ cpus: pinning?.server })
const otlp = process.env.PROMETHEUS_OTLP ? await startPrometheus({ program: process.env.PROMETHEUS_OTLP, otlp: true, cpus: pinning?.server }) : null
const results = startResults('out', 'npm run bench:out')
const KINDS = [
  ['none', null],
  ['prometheus-rw', `prometheus-rw=${prometheus.writeUrl}`],
  ...(otlp ? [['otlp', `otlp=${otlp.otlpUrl}`]] : [])
]
const runs = new Map(KINDS.map(([kind]) => [kind, []]))
try {
  for (let round = 0; round < ROUNDS; round++) {
    // Each round starts with another kind, so that none always runs first (or last) in it.
    const order = KINDS.map((_, i) => KINDS[(i + round) % KINDS.length])
    for (const [kind, out] of order) runs.get(kind).push(await runClient(server, out, pinning?.clients))
    process.stderr.write(`round ${round + 1} of ${ROUNDS}\n`)
  }
} finally {
  await Promise.all([server.stop(), prometheus.stop(), otlp?.stop()])
}

const cores = (kind) => median(runs.get(kind).map((run) => run.cores))
const base = cores('none')
const pushMs = pushCostMs()
const recordNs = sdkRecordNs()
const columns = ['--out', 'client CPU, cores', 'its runs, min-max', 'vs none', 'CPU per message, µs', 'pushes (failed)']
const spread = (kind) => {
  const all = runs.get(kind).map((run) => run.cores)
  return `${Math.min(...all).toFixed(3)}-${Math.max(...all).toFixed(3)}`
}
const rows = KINDS.map(([kind]) => [
  kind,
  cores(kind).toFixed(3),
  spread(kind),
  kind === 'none' ? '' : `${((cores(kind) / base - 1) * 100).toFixed(2)}%`,
  median(runs.get(kind).map((run) => run.perMessageUs)).toFixed(2),
  kind === 'none' ? '' : `${runs.get(kind).reduce((sum, run) => sum + run.pushes, 0)} (${runs.get(kind).reduce((sum, run) => sum + run.failed, 0)})`
])
printTable(columns, rows)
const perPushShare = pushMs / 5000
const sdkShare = recordNs * RATE / 1e9
const notes = [
  `test ${TEST}, ${FORMAT}, ${RATE} msgs/s for ${SECONDS} s over 16 connections (64 in flight), --out-interval 5s; ${ROUNDS} rounds, medians; ` +
    `client on CPU ${pinning?.clients ?? 'any'}, server and Prometheus on CPU ${pinning?.server ?? 'any'}; the budget: under ${BUDGET * 100}% more client CPU than none`,
  `one push's own CPU, the ${SECONDS} s run's figures made into series and encoded (remote write, classic buckets): ${pushMs.toFixed(2)} ms, ` +
    `${(perPushShare * 100).toFixed(3)}% of a core at one push per 5 s, ${(perPushShare / base * 100).toFixed(3)}% of the client's CPU without --out`,
  `recording each latency into OpenTelemetry's own Histogram instrument instead (exponential, the run's labels): ${recordNs.toFixed(0)} ns a value, ` +
    `${(sdkShare * 100).toFixed(2)}% of a core at ${RATE} msgs/s, ${(sdkShare / base * 100).toFixed(1)}% of the client's CPU: on the send path, ` +
    'so --out otlp gives the exporter data points made from the run\'s own histograms at push time',
  ...(otlp ? [] : ['no otlp row: PROMETHEUS_OTLP unset (bash .ci/prometheus.sh builds Prometheus 3)'])
]
for (const note of notes) console.log(note)
results.write({
  columns,
  rows,
  notes,
  figures: {
    baseCores: base,
    overheadPercent: Object.fromEntries(KINDS.slice(1).map(([kind]) => [kind, (cores(kind) / base - 1) * 100])),
    pushMs,
    sdkRecordNs: recordNs
  }
})
