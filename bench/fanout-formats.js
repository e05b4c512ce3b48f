// npm run bench:fanout-formats -- [--subscribers N] [--rate R] [--duration D] [--tests 3,4] [--json]
// The broadcast question: protobuf, or JSON with permessage-deflate? For each test, JSON and
// protobuf each with deflate off and on: one server process of its own (node server.js, --compress
// when on) and one fan-out client with N subscribers. Per delivery: the bytes a subscriber read, the
// server's CPU (its /metrics around the run) and the client's; the server's memory per subscriber
// (its peak RSS during the run over its RSS before anyone connected, from /proc). Single runs, in an
// order that alternates the formats: figures to read beside the verdicts of
// `npm run compare -- --direction fanout`, which repeats and calls them. Writes docs/results/fanout-formats.json.
import { commandLine, commaList, duration, positiveNumber, wholeNumber } from '../lib/cli/parser.js'
import { runMain } from '../lib/errors.js'
import { runNodeScript, startServerProcess } from '../lib/processes.js'
import { readMetrics } from '../lib/server/metrics-reader.js'
import { resolveTest } from '../lib/payloads/catalog.js'
import { testLabel } from '../lib/report/report.js'
import { npmCommand, printTable, processRssBytes, startResults } from './support/results.js'

const COLUMNS = ['test', 'format', 'deflate', 'wire B/delivery', 'server CPU µs/delivery', 'server KB/subscriber',
  'client CPU µs/delivery', 'p50 ms', 'p99 ms', 'delivered/expected']

/** The server's CPU seconds and its fan-out deliveries of one format and test so far, from its /metrics. */
async function serverCounts (url, format, test) {
  const metrics = await readMetrics(url)
  return {
    cpuSeconds: metrics.value('process_cpu_seconds_total'),
    deliveries: metrics.value('wsbench_fanout_deliveries_total', { format, test }) ?? 0
  }
}

/** One format, deflate on or off, one test: a server of its own and one fan-out client run. */
async function measureBroadcast ({ format, compress, test, subscribers, rate, durationMs }) {
  const server = await startServerProcess(compress ? ['--compress'] : [])
  try {
    const before = processRssBytes(server.child.pid)
    let peak = before
    const sampler = setInterval(() => { peak = Math.max(peak, processRssBytes(server.child.pid)) }, 100)
    const scraped = await serverCounts(server.url, format, test.name)
    const run = await runNodeScript(`client_${format}.js`, [test.name, '--direction', 'fanout', '--connections', String(subscribers),
      '--rate', String(rate), '--duration', `${durationMs}ms`, '--warmup', '1s', '--url', server.url, '--json',
      ...(compress ? ['--compress'] : [])])
    clearInterval(sampler)
    const after = await serverCounts(server.url, format, test.name)
    const report = JSON.parse(run.stdout)
    const f = report.fanout
    const serverCpu = (after.cpuSeconds - scraped.cpuSeconds) * 1e6 / (after.deliveries - scraped.deliveries)
    return [
      testLabel(test), format, compress ? 'on' : 'off', f.wire.perDelivery, serverCpu.toFixed(1),
      ((peak - before) / subscribers / 1024).toFixed(1), f.cpuPerDeliveryUs, report.latencyMs.p50, report.latencyMs.p99,
      `${f.delivered}/${f.expected}`
    ]
  } finally {
    await server.stop()
  }
}

/**
 * The question in one sentence for a test: JSON with deflate against protobuf without, on the
 * bytes, the server's CPU per delivery and its memory per subscriber; protobuf with deflate too.
 */
function answer (rows, label) {
  const row = (format, deflate) => rows.find((r) => r[0] === label && r[1] === format && r[2] === deflate)
  const [jsonDeflate, protobuf, protobufDeflate] = [row('json', 'on'), row('protobuf', 'off'), row('protobuf', 'on')]
  const figure = (r, column) => r[COLUMNS.indexOf(column)]
  return `${figure(jsonDeflate, 'wire B/delivery')} B per delivery for JSON with deflate against ${figure(protobuf, 'wire B/delivery')} B ` +
    `for protobuf without (${figure(protobufDeflate, 'wire B/delivery')} B with), at ${figure(jsonDeflate, 'server CPU µs/delivery')} ` +
    `against ${figure(protobuf, 'server CPU µs/delivery')} µs of server CPU and ${figure(jsonDeflate, 'server KB/subscriber')} ` +
    `against ${figure(protobuf, 'server KB/subscriber')} KB of server memory per subscriber`
}

runMain(async () => {
  const args = await commandLine(process.argv, 'Usage: npm run bench:fanout-formats -- [--subscribers N] [--rate R] [--duration D] [--tests 3,4] [--json]')
    .options({
      subscribers: { describe: 'subscribers of each run', default: 1000 },
      rate: { describe: 'publishes per second', default: '20', type: 'string' },
      duration: { describe: 'measured publishing of each run', default: '5s', type: 'string' },
      tests: { describe: 'comma-separated tests', default: '3,4', type: 'string' },
      json: { describe: 'print one JSON document', type: 'boolean', default: false }
    }).parseAsync()
  const subscribers = wholeNumber('subscribers', args.subscribers, 1)
  const rate = positiveNumber('rate', args.rate)
  const durationMs = duration('duration', args.duration)
  const tests = commaList(args.tests).map(resolveTest)
  const results = startResults('fanout-formats', npmCommand('bench:fanout-formats'))
  const rows = []
  for (const test of tests) {
    // Alternating which format goes first spreads the machine's drift over both.
    const order = rows.length % 2 ? ['protobuf', 'json'] : ['json', 'protobuf']
    for (const compress of [false, true]) {
      for (const format of order) {
        process.stderr.write(`test ${testLabel(test)}: ${format}, deflate ${compress ? 'on' : 'off'}\n`)
        rows.push(await measureBroadcast({ format, compress, test, subscribers, rate, durationMs }))
      }
    }
  }
  const table = {
    columns: COLUMNS,
    rows,
    figures: Object.fromEntries(tests.map((test) => [`answer-${test.id ?? test.name}`, answer(rows, testLabel(test))])),
    notes: [
      `${subscribers} subscribers and one publisher at ${rate}/s for ${durationMs / 1000} s after 1 s of warm-up, one client process; ` +
        'a server process of its own for each run (node server.js, --compress for deflate on); single runs, the formats alternating',
      'wire B/delivery: bytes a subscriber read on its socket per fan-out frame (the 24-byte header and WebSocket framing included); ' +
        'server CPU: its process CPU between /metrics reads around the client run, per delivery; server KB/subscriber: its peak RSS ' +
        'during the run less its RSS before anyone connected, per subscriber; client CPU: the client process (publisher and subscribers) per delivery'
    ]
  }
  results.write(table)
  if (args.json) {
    process.stdout.write(`${JSON.stringify(table)}\n`)
    return
  }
  printTable(COLUMNS, rows)
})
