// npm run bench:broadcast -- --subscribers N [--test 3] [--format json|protobuf] [--duration 5s] [--json]
// How close the fan-out mode comes to the bare ceiling, in one run: first a bare ws broadcast
// (bench/bare-broadcast.js: one process sends one pre-encoded frame to N clients in another, as fast
// as their sockets take it), then node server.js and the fan-out client with N subscribers at a
// publish rate of 0.8 of that ceiling. The target: at 0.8 of the bare ceiling, every delivery made
// with a p99 from publish to delivery under 250 ms. Missed, the fan-out runs again at half the load,
// and again, down to a tenth, to find where it holds. Prints a table (or one JSON document) and
// writes docs/results/broadcast.json.
import { commandLine, duration, wholeNumber } from '../lib/cli/parser.js'
import { runMain } from '../lib/errors.js'
import { cpuPinning, runNodeScript, startServerProcess } from '../lib/processes.js'
import { npmCommand, printRow, startResults } from './results.js'

/** The shares of the bare ceiling the fan-out mode is run at, in turn until it meets the target. */
const LOADS = [0.8, 0.4, 0.2, 0.1]
/** The p99 the fan-out mode must stay under at that load. */
const TARGET_P99_MS = 250
/** Before either mode measures: the connections settle and the JIT warms up. */
const WARMUP_MS = 1000

runMain(async () => {
  const args = await commandLine(process.argv, 'Usage: npm run bench:broadcast -- --subscribers N [--test T] [--format json|protobuf] [--duration D] [--json]')
    .options({
      subscribers: { describe: 'clients every frame goes to', default: 1000 },
      test: { describe: 'test payload', default: '3', type: 'string' },
      format: { describe: 'json or protobuf', choices: ['json', 'protobuf'], default: 'json' },
      duration: { describe: 'measured phase of each run', default: '5s', type: 'string' },
      json: { describe: 'print one JSON document', type: 'boolean', default: false }
    }).parseAsync()
  const subscribers = wholeNumber('subscribers', args.subscribers, 1)
  const durationMs = duration('duration', args.duration)
  const results = startResults('broadcast', npmCommand('bench:broadcast'))
  // Sender or server on one CPU, receivers on the other, in both modes alike.
  const cpus = cpuPinning()

  const sender = await startServerProcess([], { script: 'bench/bare-broadcast.js', args: ['sender', args.test, args.format, String(subscribers)], cpus: cpus?.server })
  let bare
  try {
    const run = await runNodeScript('bench/bare-broadcast.js', ['receiver', sender.url, String(subscribers), String(WARMUP_MS), String(durationMs)], { cpus: cpus?.clients })
    if (run.code !== 0) throw new Error(`bare receiver exited with ${run.code}: ${run.stderr.trim()}`)
    bare = JSON.parse(run.stdout)
  } finally {
    await sender.stop()
  }

  const fanoutAt = async (load) => {
    const rate = Math.round(load * bare.rate / subscribers * 100) / 100
    const server = await startServerProcess([], { cpus: cpus?.server })
    try {
      const run = await runNodeScript(`client_${args.format}.js`, [args.test, '--direction', 'fanout', '--connections', String(subscribers),
        '--rate', String(rate), '--duration', `${durationMs}ms`, '--warmup', `${WARMUP_MS}ms`, '--url', server.url, '--json'], { cpus: cpus?.clients })
      let report
      try {
        report = JSON.parse(run.stdout)
      } catch {
        throw new Error(`fan-out client exited with ${run.code}: ${run.stderr.trim().split('\n').pop()}`)
      }
      const { fanout, latencyMs } = report
      return { load, rate, met: fanout.lost === 0 && fanout.duplicates === 0 && latencyMs.p99 < TARGET_P99_MS, report }
    } finally {
      await server.stop()
    }
  }
  const runs = []
  for (const load of LOADS) {
    runs.push(await fanoutAt(load))
    if (runs.at(-1).met) break
  }
  const bareUs = bare.cpuShare * 1e6 / bare.rate

  const columns = ['mode', 'subscribers', 'publishes/s', 'deliveries/s', 'of the bare ceiling', 'delivered/expected', 'p50 ms', 'p99 ms',
    'receiver CPU', 'receiver µs/delivery', 'target']
  const rows = [
    ['bare ws broadcast, as fast as it goes', subscribers, Math.round(bare.rate / subscribers), Math.round(bare.rate), '1.00', '', '', '',
      `${Math.round(bare.cpuShare * 100)}%`, bareUs.toFixed(1), ''],
    ...runs.map(({ load, rate, met, report: { fanout, latencyMs, generator, rate: deliveries } }) => [
      `fan-out at ${load} of the bare ceiling`, subscribers, rate, Math.round(deliveries), (deliveries / bare.rate).toFixed(2),
      `${fanout.delivered}/${fanout.expected}`, latencyMs.p50.toFixed(1), latencyMs.p99.toFixed(1), `${Math.round(generator.cpuShare * 100)}%`,
      fanout.cpuPerDeliveryUs.toFixed(1), met ? 'met' : 'missed'])
  ]
  const heldAt = runs.find((run) => run.met)?.load ?? null
  if (args.json) {
    process.stdout.write(`${JSON.stringify({ bare, fanout: runs, target: { load: LOADS[0], p99Ms: TARGET_P99_MS, met: runs[0].met, heldAt } })}\n`)
  } else {
    printRow(columns)
    console.log(`|${columns.map(() => '---').join('|')}|`)
    for (const cells of rows) printRow(cells)
  }
  results.write({
    columns,
    rows,
    notes: [`test ${args.test} in ${args.format}, ${subscribers} subscribers, ${durationMs / 1000} s measured per run after ${WARMUP_MS / 1000} s of warm-up; ` +
      'bare: bench/bare-broadcast.js, one frame (the fan-out header and the test\'s one message) sent round after round to every ' +
      'client while none has over 64 KiB unsent, counted by the receiving process; ' +
      'fan-out: node server.js and one client process (--direction fanout: the publisher and the subscribers) publishing the test\'s stream, ' +
      `at ${LOADS.join(', then ')} of the bare ceiling until the target is met; ` +
      `${cpus ? `sender or server on CPU ${cpus.server}, receivers on CPU ${cpus.clients}` : 'not pinned to CPUs'}; ` +
      'receiver CPU: the receiving process\'s CPU time per wall time, and per delivery; ' +
      `target: every delivery made with a p99 from publish to delivery under ${TARGET_P99_MS} ms`],
    figures: {
      ceiling: Math.round(bare.rate).toLocaleString('en-US'),
      'fanout-share': rows[1][4],
      'fanout-p99': `${rows[1][7]} ms`,
      target: rows[1][10],
      'held-at': heldAt === null ? `not even ${LOADS.at(-1)}` : String(heldAt),
      'bare-us': bareUs.toFixed(1),
      'fanout-us': rows[1][9]
    }
  })
  return runs[0].met ? 0 : 1
})
