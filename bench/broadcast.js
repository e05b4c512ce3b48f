// npm run bench:broadcast -- --subscribers N [--test 3] [--format json|protobuf] [--duration 5s] [--json]
// How close the fan-out mode comes to the bare ceiling, in one run: first a bare ws broadcast
// (bench/support/bare-broadcast.js: one process sends one pre-encoded frame to N clients in another, as fast
// as their sockets take it, and the clients only count), then node server.js and the fan-out client
// with N subscribers publishing at 0.8 of that ceiling. Like the bare clients, its subscribers leave
// the payloads alone (--decode one: one subscriber decodes, the others read each delivery's header,
// time it and account for it). The target: at 0.8 of the bare ceiling, every delivery made with a
// p99 from publish to delivery under 250 ms. Missed, the fan-out runs again at half the load, and
// again, down to a tenth. Then the same with every subscriber decoding (--decode all), down the same
// loads until it holds: what decoding costs a client process that plays N subscribers. Prints a
// table (or one JSON document) and writes docs/results/broadcast.json.
import { commandLine, duration, wholeNumber } from '../lib/cli/parser.js'
import { runMain } from '../lib/errors.js'
import { cpuPinning, runNodeScript, startServerProcess } from '../lib/processes.js'
import { npmCommand, printTable, processCpuUs, startResults } from './support/results.js'

/** The shares of the bare ceiling the fan-out mode is run at, in turn until it meets the target. */
const LOADS = [0.8, 0.4, 0.2, 0.1]
/** The p99 the fan-out mode must stay under at that load. */
const TARGET_P99_MS = 250
/** Before either mode measures: the connections settle and the JIT warms up. */
const WARMUP_MS = 1000
/** Which subscribers decode (--decode), in the order the fan-out runs go: the target's first. */
const DECODERS = ['one', 'all']
const DECODING = { one: 'one subscriber decoding', all: 'every subscriber decoding' }

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
  const settings = { test: args.test, format: args.format, subscribers, durationMs, cpus }
  const bare = await bareBroadcast(settings)
  const runs = []
  for (const decode of DECODERS) {
    for (const load of LOADS) {
      runs.push(await fanoutAt({ ...settings, load, decode, ceiling: bare.rate }))
      if (runs.at(-1).met) break
    }
  }
  const target = runs[0]
  const heldAt = (decode) => runs.find((run) => run.decode === decode && run.met)?.load ?? null
  const { columns, rows } = table(bare, runs, subscribers)
  if (args.json) {
    process.stdout.write(`${JSON.stringify({ bare, fanout: runs, target: { load: LOADS[0], p99Ms: TARGET_P99_MS, met: target.met, heldAt: heldAt('one') } })}\n`)
  } else {
    printTable(columns, rows)
  }
  const every = runs.find((run) => run.decode === 'all')
  results.write({
    columns,
    rows,
    // A run that failed (a payload too large for N subscribers to take in time, say) says why.
    notes: [notes(settings), ...runs.filter(({ report }) => report.failure).map(({ load, decode, report }) =>
      `fan-out at ${load} of the bare ceiling, ${DECODING[decode]}: ${report.failure}`)],
    figures: {
      ceiling: Math.round(bare.rate).toLocaleString('en-US'),
      'fanout-share': share(target.report.rate, bare.rate),
      'fanout-p99': `${target.report.latencyMs.p99.toFixed(1)} ms`,
      target: target.met ? 'met' : 'missed',
      'all-held-at': heldAt('all') === null ? `not even ${LOADS.at(-1)}` : String(heldAt('all')),
      'bare-us': perDelivery(bare.cpuShare * 1e6 / bare.rate),
      'fanout-us': perDelivery(target.report.fanout.cpuPerDeliveryUs),
      'all-us': perDelivery(every.report.fanout.cpuPerDeliveryUs),
      'sender-us': perDelivery(bare.senderUs),
      'server-us': perDelivery(target.serverUs)
    }
  })
  return target.met ? 0 : 1
})

/**
 * The ceiling: bench/support/bare-broadcast.js's sender and receivers, as fast as the sockets go.
 * @returns {Promise<{deliveries: number, seconds: number, rate: number, cpuShare: number, total: number, senderUs: number}>}
 *   senderUs: the sender's CPU per delivery over the receivers' whole run
 */
async function bareBroadcast ({ test, format, subscribers, durationMs, cpus }) {
  const sender = await startServerProcess([], { script: 'bench/support/bare-broadcast.js', args: ['sender', test, format, String(subscribers)], cpus: cpus?.server })
  try {
    const before = processCpuUs(sender.child.pid)
    const run = await runNodeScript('bench/support/bare-broadcast.js', ['receiver', sender.url, String(subscribers), String(WARMUP_MS), String(durationMs)], { cpus: cpus?.clients })
    if (run.code !== 0) throw new Error(`bare receiver exited with ${run.code}: ${run.stderr.trim()}`)
    const measured = JSON.parse(run.stdout)
    return { ...measured, senderUs: (processCpuUs(sender.child.pid) - before) / measured.total }
  } finally {
    await sender.stop()
  }
}

/**
 * One fan-out run at a share of the ceiling: node server.js, and one client process with the
 * publisher and every subscriber.
 * @returns {Promise<{load: number, decode: string, rate: number, met: boolean, serverUs: number|null, report: object}>}
 *   serverUs: the server's CPU per frame its subscribers got (warm-up included) over the client's whole run; met: the
 *   report ok (every delivery, no failure) and the p99 under the target
 */
async function fanoutAt ({ test, format, subscribers, durationMs, cpus, load, decode, ceiling }) {
  const rate = threeDigits(load * ceiling / subscribers)
  // Every subscriber and the publisher: past the server's default limit, the last would be refused.
  const server = await startServerProcess(['--max-connections', String(subscribers + 1)], { cpus: cpus?.server })
  try {
    const before = processCpuUs(server.child.pid)
    const run = await runNodeScript(`client_${format}.js`, [test, '--direction', 'fanout', '--connections', String(subscribers), '--decode', decode,
      '--rate', String(rate), '--duration', `${durationMs}ms`, '--warmup', `${WARMUP_MS}ms`, '--url', server.url, '--json'], { cpus: cpus?.clients })
    let report
    try {
      report = JSON.parse(run.stdout)
    } catch {
      throw new Error(`fan-out client exited with ${run.code}: ${run.stderr.trim().split('\n').pop()}`)
    }
    const { fanout, latencyMs } = report
    const serverUs = fanout.wire.frames > 0 ? (processCpuUs(server.child.pid) - before) / fanout.wire.frames : null
    const met = report.ok && fanout.lost === 0 && fanout.duplicates === 0 && latencyMs.p99 < TARGET_P99_MS
    return { load, decode, rate, met, serverUs, report }
  } finally {
    await server.stop()
  }
}

/** The table: the bare broadcast's row, then one per fan-out run. */
function table (bare, runs, subscribers) {
  const columns = ['mode', 'subscribers', 'publishes/s', 'deliveries/s', 'of the bare ceiling', 'delivered/expected', 'p50 ms', 'p99 ms',
    'receiver CPU', 'receiver µs/delivery', 'sender or server µs/delivery', 'target']
  const rows = [
    ['bare ws broadcast, as fast as it goes', subscribers, threeDigits(bare.rate / subscribers), Math.round(bare.rate), '1.00', '', '', '',
      `${Math.round(bare.cpuShare * 100)}%`, perDelivery(bare.cpuShare * 1e6 / bare.rate), perDelivery(bare.senderUs), ''],
    ...runs.map(({ load, decode, rate, met, serverUs, report: { fanout, latencyMs, generator, rate: deliveries } }) => [
      `fan-out at ${load} of the bare ceiling, ${DECODING[decode]}`, subscribers, rate, Math.round(deliveries), share(deliveries, bare.rate),
      `${fanout.delivered}/${fanout.expected ?? '?'}`, latencyMs.p50.toFixed(1), latencyMs.p99.toFixed(1), generator ? `${Math.round(generator.cpuShare * 100)}%` : 'n/a',
      perDelivery(fanout.cpuPerDeliveryUs), perDelivery(serverUs), met ? 'met' : 'missed'])
  ]
  return { columns, rows }
}

function notes ({ test, format, subscribers, durationMs, cpus }) {
  return `test ${test} in ${format}, ${subscribers} subscribers, ${durationMs / 1000} s measured per run after ${WARMUP_MS / 1000} s of warm-up; ` +
    'bare: bench/support/bare-broadcast.js, one frame (the fan-out header and the test\'s one message) sent round after round to every ' +
    'client while none has over 64 KiB unsent, counted by the receiving process; ' +
    'fan-out: node server.js and one client process (--direction fanout: the publisher and the subscribers) publishing the test\'s stream, ' +
    `at ${LOADS.join(', then ')} of the bare ceiling until the target is met, first with --decode one (one subscriber decodes, ` +
    'the others read the header, time and account for every delivery, as the bare receivers only count), then with --decode all; ' +
    `${cpus ? `sender or server on CPU ${cpus.server}, receivers on CPU ${cpus.clients}` : 'not pinned to CPUs'}; ` +
    'receiver CPU: the receiving process\'s CPU time per wall time, and per delivery; sender or server: its CPU time (/proc) over the ' +
    'receiving process\'s whole run, connections and warm-up included, per frame the receivers got; ' +
    `target: every delivery made with a p99 from publish to delivery under ${TARGET_P99_MS} ms`
}

/** Publishes a second to three significant digits: a large payload's ceiling can be a fraction of one. */
function threeDigits (value) {
  return Number(value.toPrecision(3))
}

function share (deliveries, ceiling) {
  return (deliveries / ceiling).toFixed(2)
}

function perDelivery (us) {
  return us === null ? 'n/a' : us.toFixed(1)
}
