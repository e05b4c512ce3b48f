// npm run bench:out — what streaming a run's metrics (--out) costs the client that streams them.
// A client at 20,000 msgs/s (test 5, protobuf, 16 connections, 20 s; BENCH_RATE, BENCH_TEST,
// BENCH_SECONDS override) runs without --out, with --out prometheus-rw to a real Prometheus
// (Debian's, its remote-write receiver on) and, where PROMETHEUS_OTLP names a Prometheus 3
// (bash .ci/prometheus.sh), with --out otlp to its OTLP receiver; every --out-interval 5 s, its
// default. The client runs on a CPU of its own, the server and Prometheus on another; the kinds take
// turns in every round (BENCH_ROUNDS, 6), each round in another order.
// Two measures of the cost: streaming's own CPU, as each client counts it exactly (the report's
// outputsCpuUs: the pushing thread's CPU and the main thread's reading and encoding, over every push
// of the run), against the client's CPU over its measured phase: the budget is 1%. And the whole
// client's CPU with --out against without, round by round, with compare's interval and call: a
// check that nothing else moved, as precise as the machine's noise allows. What recording each
// latency into OpenTelemetry's own Histogram instrument would cost the send path is timed apart,
// in this process: the measure that chose the exporter fed at push time over the SDK's instruments.
import { performance } from 'node:perf_hooks'
import { AggregationType, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics'
import { simultaneousEstimates } from '../lib/compare/statistics.js'
import { cpuPinning, startServerProcess } from '../lib/processes.js'
import { runClientProcess } from './support/client-process.js'
import { startPrometheus } from './support/prometheus.js'
import { printTable, startResults } from './support/results.js'
import { median } from './support/statistics.js'

const RATE = Number(process.env.BENCH_RATE ?? 20000)
const TEST = process.env.BENCH_TEST ?? '5'
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6)
const FORMAT = 'protobuf'
/** What the budget allows: streaming may cost this share of the client's CPU. */
const BUDGET = 0.01

/** One client run, its CPU per second of the measured phase, and what its --out did. */
async function runClient (server, out, cpus) {
  const report = await runClientProcess(FORMAT, [TEST, '--rate', String(RATE), '--duration', `${SECONDS}s`, '--connections', '16',
    '--inflight', '64', '--url', server.url, ...(out ? ['--out', out, '--tag', 'testid=bench-out'] : [])], cpus)
  if (!report.ok) throw new Error(`the client failed: ${report.failure}`)
  const cpuUs = report.cpu.userUs + report.cpu.systemUs
  return {
    cores: cpuUs / (report.durationMs * 1000),
    perMessageUs: report.cpu.perMessageUs,
    // Every push's, those before and after the measured phase too: it can only overstate.
    streamingShare: out ? report.outputsCpuUs / cpuUs : null,
    pushes: report.outputs?.[0].pushes ?? 0,
    failed: report.outputs?.[0].failed ?? 0
  }
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
const recordNs = sdkRecordNs()
// Each kind against none, round by round: the ratio of the client's CPU, its interval and call.
const { estimates } = simultaneousEstimates(KINDS.slice(1).map(([kind]) => ({
  baseline: runs.get('none').map((run) => run.cores),
  candidate: runs.get(kind).map((run) => run.cores),
  better: 'lower'
})))
const against = new Map(KINDS.slice(1).map(([kind], index) => [kind, estimates[index]]))
const columns = ['--out', 'streaming\'s own CPU, of the client\'s', 'client CPU, cores', 'its runs, min-max', 'vs none, 95% interval', 'CPU per message, µs', 'pushes (failed)']
const spread = (kind) => {
  const all = runs.get(kind).map((run) => run.cores)
  return `${Math.min(...all).toFixed(3)}-${Math.max(...all).toFixed(3)}`
}
const percent = (value) => `${(value * 100).toFixed(2)}%`
const share = (kind) => median(runs.get(kind).map((run) => run.streamingShare))
const versus = ({ ratio, ci, call }) => `${percent(ratio - 1)} (${ci ? `${percent(ci[0] - 1)} to ${percent(ci[1] - 1)}` : 'one round'}), ${call}`
const rows = KINDS.map(([kind]) => [
  kind,
  kind === 'none' ? '' : percent(share(kind)),
  cores(kind).toFixed(3),
  spread(kind),
  kind === 'none' ? '' : versus(against.get(kind)),
  median(runs.get(kind).map((run) => run.perMessageUs)).toFixed(2),
  kind === 'none' ? '' : `${runs.get(kind).reduce((sum, run) => sum + run.pushes, 0)} (${runs.get(kind).reduce((sum, run) => sum + run.failed, 0)})`
])
printTable(columns, rows)
const sdkShare = recordNs * RATE / 1e9
const notes = [
  `test ${TEST}, ${FORMAT}, ${RATE} msgs/s for ${SECONDS} s over 16 connections (64 in flight), --out-interval 5s; ${ROUNDS} rounds, the kinds in turn; ` +
    `client on CPU ${pinning?.clients ?? 'any'}, server and Prometheus on CPU ${pinning?.server ?? 'any'}`,
  'streaming\'s own CPU: the report\'s outputsCpuUs (the pushing thread\'s CPU, and the main thread\'s reading and encoding of the figures, over every push ' +
    `of the run, the one before the measured phase and the last one after it included) over the client's CPU in its measured phase; median of the rounds; the budget: under ${BUDGET * 100}%`,
  'vs none: the whole client\'s CPU per second of its measured phase, each round\'s run against that round\'s run without --out, ' +
    'with compare\'s 95% interval and call (equivalent within ±5%): what the machine\'s noise lets a whole-process comparison see',
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
    streamingPercent: Object.fromEntries(KINDS.slice(1).map(([kind]) => [kind, share(kind) * 100])),
    overheadPercent: Object.fromEntries(KINDS.slice(1).map(([kind]) => [kind, (against.get(kind).ratio - 1) * 100])),
    sdkRecordNs: recordNs
  }
})
