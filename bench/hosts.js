// npm run bench:hosts -- --hosts K --connections C [--rate R] [--duration D] [--server-processes P] [--prometheus] [--json]
// The multi-host flow for real, on one machine: a server host and K client hosts as network
// namespaces on a bridge (lib/network/hosts.js), each client host with its own source address and
// its share of the connections and the rate, all measuring from one --start-at instant; their
// reports merged exactly. The server runs as many processes as its connections need (one process
// may hold only so many open files). Prints a table (or one JSON document) and writes
// docs/results/hosts.json.
// --prometheus: a real Prometheus (Debian's, its remote-write receiver on) runs in the server host's
// namespace; every client streams to it (--out prometheus-rw, one run id, every 5 s and once at its
// end), and once they are done the counts it holds, summed over the hosts, must equal the merged
// report's (and each host's its report's): a row of the table, a note of the results, exit 1 if not.
import fs from 'node:fs'
import { commandLine, duration, positiveNumber, wholeNumber } from '../lib/cli/parser.js'
import { UsageError, runMain } from '../lib/errors.js'
import { createTestHosts, hostsUnavailableReason } from '../lib/network/hosts.js'
import { shares } from '../lib/load/workers.js'
import { mergeReports } from '../lib/report/merge.js'
import { openFileLimit, watchOutput } from '../lib/processes.js'
import { DEBIAN_PROMETHEUS, startPrometheus } from './support/prometheus.js'
import { npmCommand, printTable, startResults } from './support/results.js'

const PORT = 7070
/** Prometheus's port on the server host's address (--prometheus): the namespace is new, the port free. */
const PROMETHEUS_PORT = 9090
/** How often the clients push (--out-interval), as k6 does. */
const PUSH_INTERVAL = '5s'
/** The report's counts and the series that carry them (docs/cli.md). */
const COUNTERS = {
  sent: 'k6_ws_msgs_sent_total',
  acked: 'wsbench_client_messages_acked_total',
  errors: 'wsbench_client_message_errors_total',
  lost: 'wsbench_client_messages_lost_total'
}
/**
 * The tag naming a client host in its series: `ip netns exec` keeps the machine's hostname, so the
 * `host` label is the same on every client host (their `instance`, host:pid, differs).
 */
const HOST_TAG = 'client_host'

runMain(async () => {
  const args = await commandLine(process.argv, 'Usage: npm run bench:hosts -- --hosts K --connections C [--rate R] [--duration D] [--server-processes P] [--prometheus] [--json]')
    .options({
      hosts: { describe: 'client hosts, each its own network namespace and address', default: 4 },
      connections: { describe: 'connections in all, shared between the hosts', default: 400 },
      rate: { describe: 'messages per second in all (open loop); without it, closed loop, one in flight per connection', type: 'string' },
      duration: { describe: 'measured phase', default: '10s', type: 'string' },
      format: { describe: 'json or protobuf', choices: ['json', 'protobuf'], default: 'protobuf' },
      test: { describe: 'test payload', default: '5', type: 'string' },
      'server-processes': { describe: 'server processes (node server.js --processes); default: enough that each holds at most half its open-file limit', type: 'string' },
      prometheus: {
        describe: `the clients stream to a real Prometheus (${DEBIAN_PROMETHEUS}) in the server host (--out prometheus-rw every ${PUSH_INTERVAL}); ` +
          'the counts it holds at the end must equal the merged report\'s',
        type: 'boolean',
        default: false
      },
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
  if (args.prometheus && !fs.existsSync(DEBIAN_PROMETHEUS)) throw new UsageError(`--prometheus: no ${DEBIAN_PROMETHEUS} (apt-get install prometheus)`)

  const results = startResults('hosts', npmCommand('bench:hosts'))
  const net = await createTestHosts({ clients: hostCount })
  let prometheus = null
  try {
    if (args.prometheus) {
      // In the server host: every client host reaches it on the bridge; its queries go from there too.
      // The hosts' teardown (on an error, on SIGINT) kills it and awaits its end, its directory removed first.
      prometheus = await startPrometheus({
        listen: `${net.server.address}:${PROMETHEUS_PORT}`,
        start: (program, list) => net.start(net.server, program, list),
        request: async (url) => JSON.parse((await net.exec(net.server, process.execPath,
          ['-e', 'fetch(process.argv[1]).then((r) => r.text()).then((t) => process.stdout.write(t))', url])).stdout)
      })
    }
    const server = net.node(net.server, 'server.js', ['--host', net.server.address, '--port', String(PORT),
      '--processes', String(serverProcesses), '--max-connections', String(connections + 100)])
    const serverOutput = watchOutput(server)
    await serverOutput.printed(/listening on ws:/)
    // Enough time for every host to open its connections and warm up before the common start.
    const startAt = Date.now() + 5000 + Math.ceil(connections / hostCount) * 3
    const perHost = shares(connections, hostCount)
    const runId = `bench-hosts-${new Date(startAt).toISOString()}`
    const streaming = (host) => prometheus
      ? ['--out', `prometheus-rw=${prometheus.writeUrl}`, '--out-interval', PUSH_INTERVAL, '--tag', `testid=${runId}`, '--tag', `${HOST_TAG}=${host.name}`]
      : []
    const clients = net.clients.map((host, i) => ({
      host,
      run: watchOutput(net.node(host, `client_${args.format}.js`, [
        // Warm-up: one message per connection, so every connection has carried a message first.
        args.test, '--connections', String(perHost[i]), '--duration', `${durationMs}ms`, '--warmup', String(perHost[i]),
        ...(rate ? ['--rate', String(rate / hostCount)] : []),
        '--timeout', '30000', '--start-at', String(startAt), '--url', `ws://${net.server.address}:${PORT}`, '--json',
        ...streaming(host)
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
    // Every client made its last push before it printed its report: Prometheus holds the run's end.
    const held = prometheus ? await heldByPrometheus(prometheus, runId, reports, merged) : null
    if (args.json) {
      const server = { address: net.server.address, processes: serverProcesses, peakRssMb: serverPeakMb }
      process.stdout.write(`${JSON.stringify({ hosts: reports, merged, server, ...(held && { prometheus: held }) })}\n`)
    }
    const columns = ['host', 'source', 'connections', 'sent', 'acked', 'errors', 'lost', 'msgs/s', 'p50 ms', 'p99 ms', 'start vs --start-at ms', 'peak RSS MB']
    const row = (name, address, r) => [name, address, r.connections, r.messages.sent, r.messages.acked, r.messages.errors, r.messages.lost,
      Math.round(r.rate), r.latencyMs.p50.toFixed(3), r.latencyMs.p99.toFixed(3), r.startAt ? r.startedAt - r.startAt : '', r.peakRssMb ?? '']
    const rows = [
      ...reports.map((r) => row(r.host, r.sourceAddress, r)),
      row('merged', `${hostCount} addresses`, merged).map((cell, i) => i === 10 ? `spread ${merged.windows.startSpreadMs}` : i === 11 ? `server ${serverPeakMb}` : cell),
      ...(held ? [['Prometheus, summed over the hosts', `testid ${runId}`, '', ...Object.keys(COUNTERS).map((key) => held.total[key] ?? 'none'), '', '', '', '', '']] : [])
    ]
    if (!args.json) {
      printTable(columns, rows)
    }
    if (held) process[args.json ? 'stderr' : 'stdout'].write(`${held.line}\n`)
    const accounted = merged.messages.sent === merged.messages.acked + merged.messages.errors + merged.messages.lost
    const prometheusNote = held && `--prometheus: each client streamed to a Prometheus (${DEBIAN_PROMETHEUS}, remote write) in the server host, ` +
      `every ${PUSH_INTERVAL} and once at its end, labelled testid ${runId} and ${HOST_TAG} <host>; ${held.line}`
    results.write({
      columns,
      rows,
      notes: [`${hostCount} client hosts and a server host, each a network namespace with its own address on one bridge; ` +
        `the server in ${serverProcesses === 1 ? 'one process' : `${serverProcesses} worker processes (--processes; its peak RSS is summed over them and their primary)`}; ` +
        `${args.format}, test ${args.test}, ${rate ? `${rate} msg/s in all (open loop)` : 'closed loop, one in flight per connection'}, ` +
        `${durationMs / 1000} s measured after a warm-up of one message per connection, from one --start-at instant; every message accounted: ${accounted ? 'yes' : 'NO'}; ` +
        `measured phases started within ${merged.windows.startSpreadMs} ms of each other and overlapped for ${merged.windows.overlapMs} ms`,
      ...(held ? [prometheusNote] : [])]
    })
    return merged.ok && accounted && (!held || held.equal) ? 0 : 1
  } finally {
    await prometheus?.stop()
    await net.close()
  }
})

/**
 * What Prometheus holds for the run against the reports: each counter summed by host, then over the
 * hosts, against each host's report and the merged one; each host's pushes and failed pushes.
 * @param {{url: string, directory: string, query: (promql: string) => Promise<object[]>}} prometheus
 * @param {string} runId the run's testid
 * @param {object[]} reports the hosts' (each its `host` and `outputs`)
 * @param {object} merged
 * @returns {Promise<{url: string, directory: string, equal: boolean, total: Record<string, number>, hosts: object[], line: string}>}
 */
async function heldByPrometheus (prometheus, runId, reports, merged) {
  const byHost = new Map(reports.map((r) => [r.host, {}]))
  const total = {}
  for (const [key, name] of Object.entries(COUNTERS)) {
    for (const { metric, value } of await prometheus.query(`sum by (${HOST_TAG}) (${name}{testid="${runId}"})`)) {
      if (!byHost.has(metric[HOST_TAG])) byHost.set(metric[HOST_TAG], {})
      byHost.get(metric[HOST_TAG])[key] = Number(value[1])
      total[key] = (total[key] ?? 0) + Number(value[1])
    }
  }
  const keys = Object.keys(COUNTERS)
  const hosts = [...byHost].map(([host, held]) => {
    const report = reports.find((r) => r.host === host)
    const [output] = report?.outputs ?? []
    return {
      host,
      held,
      report: report?.messages ?? null,
      equal: report !== undefined && keys.every((key) => held[key] === report.messages[key]),
      pushes: output?.pushes ?? 0,
      failed: output?.failed ?? 0,
      error: output?.error ?? null
    }
  })
  const equal = keys.every((key) => total[key] === merged.messages[key]) && hosts.every((h) => h.equal)
  const counts = (values) => keys.map((key) => `${key} ${values[key] ?? 'none'}`).join(', ')
  const unequal = hosts.filter((h) => !h.equal).map((h) => `; ${h.host}: Prometheus ${counts(h.held)}, its report ${counts(h.report ?? {})}`)
  const line = `Prometheus holds ${counts(total)} (summed over ${hosts.length} hosts); the merged report ${counts(merged.messages)}: ` +
    `${equal ? 'equal' : `NOT EQUAL${unequal.join('')}`}; pushes per host (failed): ${hosts.map((h) => `${h.host} ${h.pushes} (${h.failed})`).join(', ')}`
  return { url: prometheus.url, directory: prometheus.directory, equal, total, hosts, line }
}
