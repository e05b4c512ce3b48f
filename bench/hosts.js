// npm run bench:hosts -- --hosts K --connections C [--rate R] [--duration D] [--server-processes P] [--json]
// The multi-host flow for real, on one machine: a server host and K client hosts as network
// namespaces on a bridge (lib/network/hosts.js), each client host with its own source address and
// its share of the connections and the rate, all measuring from one --start-at instant; their
// reports merged exactly. The server runs as many processes as its connections need (one process
// may hold only so many open files). Prints a table (or one JSON document) and writes
// docs/results/hosts.json.
import { commandLine, duration, positiveNumber, wholeNumber } from '../lib/cli/parser.js'
import { UsageError, runMain } from '../lib/errors.js'
import { createTestHosts, hostsUnavailableReason } from '../lib/network/hosts.js'
import { shares } from '../lib/load/workers.js'
import { mergeReports } from '../lib/report/merge.js'
import { openFileLimit, watchOutput } from '../lib/processes.js'
import { npmCommand, printTable, startResults } from './support/results.js'

const PORT = 7070

runMain(async () => {
  const args = await commandLine(process.argv, 'Usage: npm run bench:hosts -- --hosts K --connections C [--rate R] [--duration D] [--server-processes P] [--json]')
    .options({
      hosts: { describe: 'client hosts, each its own network namespace and address', default: 4 },
      connections: { describe: 'connections in all, shared between the hosts', default: 400 },
      rate: { describe: 'messages per second in all (open loop); without it, closed loop, one in flight per connection', type: 'string' },
      duration: { describe: 'measured phase', default: '10s', type: 'string' },
      format: { describe: 'json or protobuf', choices: ['json', 'protobuf'], default: 'protobuf' },
      test: { describe: 'test payload', default: '5', type: 'string' },
      'server-processes': { describe: 'server processes (node server.js --processes); default: enough that each holds at most half its open-file limit', type: 'string' },
      json: { describe: 'print one JSON document', type: 'boolean', default: false }
    }).parseAsync()
  const hostCount = wholeNumber('hosts', args.hosts, 1)
  const connections = wholeNumber('connections', args.connections, hostCount)
  const rate = args.rate === undefined ? undefined : positiveNumber('rate', args.rate)
  const durationMs = duration('duration', args.duration)
  // The kernel hands connections to the server's processes unevenly (57/43 seen with two), hence half.
  const perProcess = Math.floor(openFileLimit() / 2)
  const serverProcesses = args.serverProcesses === undefined
    ? Math.max(1, Math.ceil(connections / perProcess))
    : wholeNumber('server-processes', args.serverProcesses, 1)
  const unavailable = await hostsUnavailableReason()
  if (unavailable) throw new UsageError(`bench:hosts cannot run here: ${unavailable}`)

  const results = startResults('hosts', npmCommand('bench:hosts'))
  const net = await createTestHosts({ clients: hostCount })
  try {
    const server = net.node(net.server, 'server.js', ['--host', net.server.address, '--port', String(PORT),
      '--processes', String(serverProcesses), '--max-connections', String(connections + 100)])
    const serverOutput = watchOutput(server)
    await serverOutput.printed(/listening on ws:/)
    // Enough time for every host to open its connections and warm up before the common start.
    const startAt = Date.now() + 5000 + Math.ceil(connections / hostCount) * 3
    const perHost = shares(connections, hostCount)
    const clients = net.clients.map((host, i) => ({
      host,
      run: watchOutput(net.node(host, `client_${args.format}.js`, [
        // Warm-up: one message per connection, so every connection has carried a message first.
        args.test, '--connections', String(perHost[i]), '--duration', `${durationMs}ms`, '--warmup', String(perHost[i]),
        ...(rate ? ['--rate', String(rate / hostCount)] : []),
        '--timeout', '30000', '--start-at', String(startAt), '--url', `ws://${net.server.address}:${PORT}`, '--json'
      ])).exited
    }))
    const reports = []
    for (const { host, run } of clients) {
      const { code, stdout, stderr } = await run
      let report
      try {
        report = JSON.parse(stdout)
      } catch {
        throw new Error(`client on ${host.address} exited with ${code}: ${stderr.trim().split('\n').pop()}`)
      }
      reports.push({ ...report, host: host.name, sourceAddress: host.address })
    }
    server.kill('SIGTERM')
    const { stdout: serverLog } = await serverOutput.exited
    const serverPeakMb = Number(/peak (\d+) MB\)/.exec(serverLog.trim().split('\n').pop())?.[1]) || null
    const merged = { ...mergeReports(reports), connections }
    if (args.json) {
      const server = { address: net.server.address, processes: serverProcesses, peakRssMb: serverPeakMb }
      process.stdout.write(`${JSON.stringify({ hosts: reports, merged, server })}\n`)
    }
    const columns = ['host', 'source', 'connections', 'sent', 'acked', 'errors', 'lost', 'msgs/s', 'p50 ms', 'p99 ms', 'start vs --start-at ms', 'peak RSS MB']
    const row = (name, address, r) => [name, address, r.connections, r.messages.sent, r.messages.acked, r.messages.errors, r.messages.lost,
      Math.round(r.rate), r.latencyMs.p50.toFixed(3), r.latencyMs.p99.toFixed(3), r.startAt ? r.startedAt - r.startAt : '', r.peakRssMb ?? '']
    const rows = [
      ...reports.map((r) => row(r.host, r.sourceAddress, r)),
      row('merged', `${hostCount} addresses`, merged).map((cell, i) => i === 10 ? `spread ${merged.windows.startSpreadMs}` : i === 11 ? `server ${serverPeakMb}` : cell)
    ]
    if (!args.json) {
      printTable(columns, rows)
    }
    const accounted = merged.messages.sent === merged.messages.acked + merged.messages.errors + merged.messages.lost
    results.write({
      columns,
      rows,
      notes: [`${hostCount} client hosts and a server host, each a network namespace with its own address on one bridge; ` +
        `the server in ${serverProcesses === 1 ? 'one process' : `${serverProcesses} worker processes (--processes; its peak RSS is summed over them and their primary)`}; ` +
        `${args.format}, test ${args.test}, ${rate ? `${rate} msg/s in all (open loop)` : 'closed loop, one in flight per connection'}, ` +
        `${durationMs / 1000} s measured after a warm-up of one message per connection, from one --start-at instant; every message accounted: ${accounted ? 'yes' : 'NO'}; ` +
        `measured phases started within ${merged.windows.startSpreadMs} ms of each other and overlapped for ${merged.windows.overlapMs} ms`]
    })
    return merged.ok && accounted ? 0 : 1
  } finally {
    await net.close()
  }
})
