// npm run bench:generator — what capacity's load generator costs, against a bare ws client.
// capacity's generator is the load engine in open loop sending pre-encoded, pre-framed frames (openRun and
// runPhase, preencode: true, as lib/compare/batch-client.js runs a probe); the bare client is
// bench/support/bare-open-loop.js, `ws` alone sending the same frames at the same rate. Each is a child
// process on CPU 1 against `node server.js` on CPU 0, 1 s of lead-in then 3 s measured, and reads
// its own CPU over the measured phase; the server's is read from /proc around it. For tests 5 and
// 3, both formats, 20,000 and 40,000 msgs/s, 16 connections, 64 in flight: generator CPU per
// message of each, the ratio bare/ours (1.0 or more: ours is at least as cheap per message), the
// send rates achieved and the server's CPU per message. Ours runs with precise and timer pacing;
// the three take turns in every round, each round in another order; medians over the rounds.
// BENCH_TESTS (5,3), BENCH_RATES (20000,40000), BENCH_ROUNDS (3) and BENCH_SECONDS (3) override.
import { openRun } from '../lib/load/engine.js'
import { loadOptions, prepareRun } from '../lib/load/measure.js'
import { CpuClock } from '../lib/cpu-time.js'
import { cpuPinning, forkNodeScript, startServerProcess } from '../lib/processes.js'
import { printRow, startResults } from './support/results.js'
import { median } from './support/statistics.js'

const TESTS = (process.env.BENCH_TESTS ?? '5,3').split(',')
const FORMATS = ['json', 'protobuf']
const RATES = (process.env.BENCH_RATES ?? '20000,40000').split(',').map(Number)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const MEASURE_MS = Number(process.env.BENCH_SECONDS ?? 3) * 1000
const LEAD_MS = 1000
const CONNECTIONS = 16
const INFLIGHT = 64
const PACINGS = ['precise', 'timer']
/** The generators of a round: the bare client, then ours with each pacing. */
const KINDS = ['bare', ...PACINGS]

/** The message the parent sends first: the run to make. */
const nextMessage = () => new Promise((resolve) => process.once('message', resolve))

/**
 * Capacity's generator in a child process (GENERATOR_ROLE=ours): the engine's run prepared and
 * opened as a probe's is, a lead-in at the rate, then the measured phase, recorded as a probe
 * records it, its CPU read by process.cpuUsage as the bare client reads its own.
 */
async function ours () {
  const { url, test, format, rate, pacing, connections, inflight, leadMs, measureMs } = await nextMessage()
  const run = await prepareRun(format, { test, custom: null, load: {} })
  const settings = { url, connections, inflight, pacing, preencode: true, cork: true, direction: 'up' }
  const engine = await openRun(loadOptions(run, settings, {}))
  await engine.runPhase({ count: Math.round(rate * leadMs / 1000), rate, recording: false, series: false })
  process.send({ type: 'measuring' })
  const before = process.cpuUsage()
  const result = await engine.runPhase({ count: Math.round(rate * measureMs / 1000), rate, recording: true, series: false })
  const cpu = process.cpuUsage(before)
  await engine.close()
  process.send({
    type: 'done',
    cpuUs: cpu.user + cpu.system,
    sent: result.messages.sent,
    sendRate: result.target.sendRate,
    pacingUs: result.cpu.pacingUs,
    failure: result.failure ?? (result.messages.acked < result.messages.sent ? `${result.messages.sent - result.messages.acked} messages not acked` : null)
  }, () => process.exit(0))
}

/**
 * Runs one generator to its end on the clients' CPU, the server's CPU read from when it says its
 * measured phase starts to when it is done (every reply in).
 * @param {'bare'|'precise'|'timer'} kind
 * @param {object} job url, test, format and rate
 * @param {{clock: CpuClock, clientCpus: string}} server the server's CPU clock, and the CPUs the generators run on
 * @returns {Promise<{us: number, pacingUs: number, sendRate: number, serverUs: number}>} per message, µs
 */
function generate (kind, job, server) {
  const bare = kind === 'bare'
  const child = forkNodeScript(bare ? 'bench/support/bare-open-loop.js' : 'bench/generator.js', {
    cpus: server.clientCpus, env: bare ? {} : { GENERATOR_ROLE: 'ours' }
  })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk) => { stderr += chunk })
  child.send({ ...job, pacing: kind, connections: CONNECTIONS, inflight: INFLIGHT, leadMs: LEAD_MS, measureMs: MEASURE_MS })
  return new Promise((resolve, reject) => {
    let serverBefore = null
    child.on('message', (message) => {
      if (message.type === 'measuring') serverBefore = server.clock.read()
      if (message.type !== 'done') return
      const serverNs = server.clock.read() - serverBefore
      if (message.failure) return reject(new Error(`${kind} at ${job.rate}/s: ${message.failure}`))
      resolve({
        us: message.cpuUs / message.sent,
        pacingUs: message.pacingUs / message.sent,
        sendRate: message.sendRate,
        serverUs: serverNs / 1000 / message.sent
      })
    })
    child.on('exit', (code) => reject(new Error(`${kind} generator exited with ${code} before it was done: ${stderr.trim()}`)))
  })
}

const us = (value) => value.toFixed(2)
const int = (value) => Math.round(value).toLocaleString('en-US')

/** One table row per pacing of ours, from a rate's rounds: medians, and the median of each round's ratio. */
function rowsOf (test, format, rate, runs) {
  return PACINGS.map((pacing) => {
    const pick = (kind, key) => median(runs[kind].map((run) => run[key]))
    const ratios = runs.bare.map((bare, round) => bare.us / runs[pacing][round].us)
    return [
      test, format, int(rate), pacing, us(pick('bare', 'us')), us(pick(pacing, 'us')), us(pick(pacing, 'pacingUs')),
      median(ratios).toFixed(2), int(pick('bare', 'sendRate')), int(pick(pacing, 'sendRate')),
      us(pick('bare', 'serverUs')), us(pick(pacing, 'serverUs'))
    ]
  })
}

async function main () {
  const pinning = cpuPinning()
  if (!pinning) throw new Error('bench:generator pins the server and the generators apart: it needs two CPUs and taskset (util-linux)')
  const results = startResults('generator', 'npm run bench:generator')
  const columns = ['test', 'format', 'rate/s', 'pacing', 'bare µs/msg', 'ours µs/msg', 'ours pacing µs/msg', 'bare/ours',
    'bare sent/s', 'ours sent/s', 'server µs/msg (bare)', 'server µs/msg (ours)']
  const rows = []
  console.log(`# bench:generator — ${CONNECTIONS} connections, ${INFLIGHT} in flight, ${LEAD_MS / 1000} s lead-in, ${MEASURE_MS / 1000} s measured, median of ${ROUNDS} rounds`)
  printRow(columns)
  printRow(columns.map(() => '---'))
  for (const test of TESTS) {
    for (const format of FORMATS) {
      // A server per test and format, on CPU 0 for every generator of theirs.
      const started = await startServerProcess([], { cpus: pinning.server })
      const server = { clock: new CpuClock(started.child.pid), clientCpus: pinning.clients }
      try {
        for (const rate of RATES) {
          const runs = Object.fromEntries(KINDS.map((kind) => [kind, []]))
          for (let round = 0; round < ROUNDS; round++) {
            // Each round in another order: whichever runs first or last in it does not always the same one.
            for (const kind of KINDS.map((_, i) => KINDS[(i + round) % KINDS.length])) {
              runs[kind].push(await generate(kind, { url: started.url, test, format, rate }, server))
            }
          }
          for (const row of rowsOf(test, format, rate, runs)) {
            rows.push(row)
            printRow(row)
          }
        }
      } finally {
        await started.stop()
      }
    }
  }
  const ratios = (pacing) => rows.filter((row) => row[3] === pacing).map((row) => Number(row[7]))
  const range = (values) => `${Math.min(...values).toFixed(2)} to ${Math.max(...values).toFixed(2)}`
  const oursShare = rows.filter((row) => row[3] === 'precise').map((row) => Number(row[5]) / Number(row[11]))
  results.write({
    columns,
    rows,
    figures: {
      'precise-ratios': range(ratios('precise')),
      'timer-ratios': range(ratios('timer')),
      'precise-vs-server': range(oursShare)
    },
    notes: [
      `${CONNECTIONS} connections, ${INFLIGHT} in flight per connection, each test's stream of messages encoded once and sent in turn; ` +
      `every generator a fresh child process on CPU ${pinning.clients} against node server.js on CPU ${pinning.server} (a server per test and format), ` +
      `${LEAD_MS / 1000} s at the rate unrecorded, then ${MEASURE_MS / 1000} s measured; ` +
      'ours: the load engine as capacity runs it (openRun, runPhase recording, preencode: true: each frame encoded, framed and masked once; one write per connection per turn), with precise or timer pacing; ' +
      'bare: bench/support/bare-open-loop.js, ws alone, every message due sent each turn with one ws.send, woken by setTimeout or setImmediate, ACKs counted, nothing recorded; ' +
      'µs/msg: the generator\'s CPU (process.cpuUsage, every thread, pacing included) over its measured phase per message sent; ours pacing: the part of it the pacer spent waiting; ' +
      'server µs/msg: the server\'s CPU (/proc) over the same phase per message',
      `bare and ours with both pacings take turns in each of ${ROUNDS} rounds, the order rotating; medians over the rounds, bare/ours the median of each round's ratio`
    ]
  })
}

if (process.env.GENERATOR_ROLE === 'ours') await ours()
else await main()
