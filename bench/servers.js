// npm run bench:servers -- [--servers node,go,java] [--tests 3,4] [--messages N] [--inflight N] [--rounds N] [--start-warmup D] [--json]
// Node's server against the reference servers (servers/*: go, java) in one run: for each test, format
// and server, a server process of its own, a warm-up client run as long as the server needs (its
// server.json's warm-up: the JVM compiles for longer), then the measured client run (closed loop,
// --inflight in flight, direction up). msgs/s from the client's report; server CPU per message from
// the kernel (the server process's threads, lib/cpu-time.js) around the measured run. Rounds take the servers in turn (node,
// go, java, then java, go, node) and the table gives each figure's median. Writes docs/results/servers.json.
import { commandLine, commaList, duration, wholeNumber } from '../lib/cli/parser.js'
import { UsageError, runMain } from '../lib/errors.js'
import { cpuPinning, runNodeScript, startServerProcess } from '../lib/processes.js'
import { CpuClock } from '../lib/cpu-time.js'
import { REFERENCE_SERVER_NAMES, buildReferenceServer, warmupOf } from '../lib/reference/servers.js'
import { START_WARMUP_MS } from '../lib/compare/lockstep.js'
import { resolveTest } from '../lib/payloads/catalog.js'
import { testLabel } from '../lib/report/report.js'
import { npmCommand, printTable, startResults } from './support/results.js'
import { median } from './support/statistics.js'

const COLUMNS = ['test', 'format', 'server', 'msgs/s', 'server CPU µs/msg', 'client p50 ms', 'rounds']
const FORMATS = ['json', 'protobuf']

/**
 * How long a fresh server of this kind is warmed up before it is measured: the time given, else
 * its server.json's (the JVM's JIT), or compare's.
 */
const warmupMs = (kind, given) => given ?? warmupOf(kind).startMs ?? START_WARMUP_MS

/**
 * A warm-up client run, then the measured one, against a server process of its own: msgs/s and
 * the server's CPU per message over the measured run alone.
 */
async function measure ({ server: kind, format, test, messages, inflight, cpus, startWarmupMs }) {
  const command = kind === 'node' ? undefined : buildReferenceServer(kind)
  const server = await startServerProcess([], { command, cpus: cpus?.server })
  const client = async (args) => {
    const run = await runNodeScript(`client_${format}.js`, [test.name, ...args, '--url', server.url, '-i', String(inflight), '--json'], { cpus: cpus?.clients })
    if (run.code !== 0) throw new Error(`client_${format}.js against the ${kind} server exited with ${run.code}: ${run.stderr.trim().split('\n').pop()}`)
    return JSON.parse(run.stdout)
  }
  try {
    await client(['--duration', `${warmupMs(kind, startWarmupMs)}ms`])
    const clock = new CpuClock(server.child.pid)
    const before = clock.read()
    const report = await client([String(messages)])
    const cpuNs = clock.read() - before
    return { rate: report.rate, cpuUs: cpuNs / 1000 / report.messages.acked, p50: report.latencyMs.p50 }
  } finally {
    await server.stop()
  }
}

runMain(async () => {
  const args = await commandLine(process.argv, 'Usage: npm run bench:servers -- [--servers node,go,java] [--tests 3,4] [--messages N] [--inflight N] [--rounds N] [--start-warmup D] [--json]')
    .options({
      servers: { describe: 'comma-separated servers: node and the reference servers of servers/', default: ['node', ...REFERENCE_SERVER_NAMES].join(','), type: 'string' },
      tests: { describe: 'comma-separated tests', default: '3,4', type: 'string' },
      messages: { describe: 'measured messages of each client run', default: 20000 },
      inflight: { describe: 'messages in flight', default: 64 },
      rounds: { describe: 'runs of each server, format and test, in turn', default: 2 },
      'start-warmup': { describe: 'the warm-up client run before each measured one: 5s, 500ms [default: each server\'s own]', type: 'string' },
      json: { describe: 'print one JSON document', type: 'boolean', default: false }
    }).parseAsync()
  const tests = commaList(args.tests).map(resolveTest)
  const messages = wholeNumber('messages', args.messages, 100)
  const inflight = wholeNumber('inflight', args.inflight, 1)
  const rounds = wholeNumber('rounds', args.rounds, 1)
  const startWarmupMs = args.startWarmup === undefined ? undefined : duration('start-warmup', args.startWarmup)
  const servers = commaList(args.servers)
  for (const server of servers) {
    if (server !== 'node' && !REFERENCE_SERVER_NAMES.includes(server)) throw new UsageError(`--servers: unknown server '${server}': expected node or one of ${REFERENCE_SERVER_NAMES.join(', ')}`)
    if (server !== 'node') buildReferenceServer(server)
  }
  const cpus = cpuPinning()
  const results = startResults('servers', npmCommand('bench:servers'))
  const rows = []
  for (const test of tests) {
    for (const format of FORMATS) {
      const runs = Object.fromEntries(servers.map((server) => [server, []]))
      for (let round = 0; round < rounds; round++) {
        for (const server of round % 2 ? [...servers].reverse() : servers) {
          process.stderr.write(`test ${testLabel(test)}, ${format}, ${server} server, round ${round + 1} of ${rounds}\n`)
          runs[server].push(await measure({ server, format, test, messages, inflight, cpus, startWarmupMs }))
        }
      }
      for (const server of servers) {
        const of = (name) => median(runs[server].map((run) => run[name]))
        rows.push([testLabel(test), format, server, Math.round(of('rate')), of('cpuUs').toFixed(1), of('p50').toFixed(3), rounds])
      }
    }
  }
  const cell = (test, format, server, column) => rows.find((r) => r[0] === testLabel(test) && r[1] === format && r[2] === server)[COLUMNS.indexOf(column)]
  const table = {
    columns: COLUMNS,
    rows,
    figures: Object.fromEntries(tests.flatMap((test) => servers.map((server) => [`cpu-ratio-${test.id}-${server}`,
      `${(cell(test, 'protobuf', server, 'server CPU µs/msg') / cell(test, 'json', server, 'server CPU µs/msg')).toFixed(2)}x`]))),
    notes: [
      `each run: a server process of its own (${servers.join(', ')}: node server.js, or the program of servers/NAME), one client (client_json.js or client_protobuf.js) ` +
        `sending ${messages} messages, ${inflight} in flight, direction up, after a warm-up client run of ${servers.map((server) => `${warmupMs(server, startWarmupMs) / 1000} s for ${server}`).join(', ')} (the JVM compiles for longer)` +
        `${cpus ? `; server on CPU ${cpus.server}, client on CPU ${cpus.clients}` : ''}; medians of ${rounds} rounds, the servers in turn`,
      'server CPU: the server process\'s threads (/proc/PID/task/*/schedstat) around the measured client run, per message it answered'
    ]
  }
  results.write(table)
  if (args.json) process.stdout.write(`${JSON.stringify(table)}\n`)
  else printTable(COLUMNS, rows)
})
