// npm run bench:fanout -- --hosts K --subscribers S --rate R --duration D [--cut H@AT+FOR] [--format F] [--test T]
//   [--replay N] [--decode all|one] [--heartbeat T] [--server-processes P] [--broker redis|nats|ipc] [--json]
// Fan-out across hosts, on one machine: a server host, a publisher host and K subscriber hosts as
// network namespaces on a bridge (lib/network/hosts.js). The server runs as many processes as the
// subscribers need (one process may hold only so many open files), with a broker between them;
// each subscriber host runs as many client processes as its share needs, and every client measures
// from one --start-at instant. --cut 1@3s+2s takes subscriber host 1 off the network 3 s into the
// measured phase for 2 s: its subscribers stall, reconnect and miss what was published meanwhile,
// and the others must not notice: only the cut host reconnects. Each host's row says what liveness
// cost (pings per delivery, how long judging waited on a late client process) and what it closed,
// by cause; a close by a late client process itself makes the run invalid. Prints a table (or one JSON document) and writes
// docs/results/fanout.json (fanout-cut.json with --cut).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { commandLine, duration, positiveNumber, wholeNumber } from '../lib/cli/parser.js'
import { UsageError, runMain } from '../lib/errors.js'
import { createTestHosts, hostsUnavailableReason } from '../lib/network/hosts.js'
import { shares } from '../lib/load/workers.js'
import { mergeReports } from '../lib/report/merge.js'
import { openFileLimit, watchOutput } from '../lib/processes.js'
import { npmCommand, printTable, startResults } from './support/results.js'

const PORT = 7070
/** Subscribers per client process: under its open-file limit (~20,000), with room for reconnects. */
const SUBSCRIBERS_PER_PROCESS = 15_000
/** Where each broker listens in the server host, and the line it prints once ready. */
const BROKERS = {
  redis: { port: 6379, program: 'redis-server', ready: /Ready to accept connections/ },
  nats: { port: 4222, program: 'nats-server', ready: /Server is ready/ }
}

runMain(async () => {
  const args = await commandLine(process.argv, 'Usage: npm run bench:fanout -- --hosts K --subscribers S --rate R --duration D ' +
    '[--cut H@AT+FOR] [--replay N] [--decode all|one] [--heartbeat T] [--format F] [--test T] [--server-processes P] [--broker redis|nats|ipc] [--json]')
    .options({
      hosts: { describe: 'subscriber hosts, each its own network namespace and address (the publisher has one more)', default: 2 },
      subscribers: { describe: 'subscribers in all, shared between the hosts', default: 1000 },
      rate: { describe: 'publishes per second; each goes to every subscriber', default: '1', type: 'string' },
      duration: { describe: 'measured phase', default: '10s', type: 'string' },
      cut: { describe: 'take subscriber host H off the network AT into the measured phase, for FOR: 1@3s+2s', type: 'string' },
      replay: { describe: 'the server\'s --replay: publishes it keeps per topic for subscribers that come back (a cut host\'s)', default: 0 },
      heartbeat: { describe: 'the clients\' --heartbeat: a subscriber whose next delivery is this late pings, and reconnects when its ping goes unanswered as long', default: '500ms', type: 'string' },
      decode: { describe: 'the clients\' --decode: every subscriber decodes (all), or one per process (one)', choices: ['all', 'one'], default: 'all' },
      format: { describe: 'json or protobuf', choices: ['json', 'protobuf'], default: 'json' },
      test: { describe: 'test payload', default: '3', type: 'string' },
      'server-processes': { describe: 'server processes (node server.js --processes); default: enough that each holds at most half its open-file limit', type: 'string' },
      broker: { describe: 'between the server processes (with more than one)', choices: ['ipc', 'redis', 'nats'], default: 'ipc' },
      json: { describe: 'print one JSON document', type: 'boolean', default: false }
    }).parseAsync()
  const hostCount = wholeNumber('hosts', args.hosts, 1)
  const subscribers = wholeNumber('subscribers', args.subscribers, hostCount)
  const rate = positiveNumber('rate', args.rate)
  const durationMs = duration('duration', args.duration)
  const heartbeatMs = duration('heartbeat', args.heartbeat)
  const replay = wholeNumber('replay', args.replay, 0)
  const cut = args.cut === undefined ? null : parseCut(args.cut, hostCount, durationMs)
  // The kernel hands connections to the server's processes unevenly (57/43 seen with two), hence half.
  const perProcess = Math.floor(openFileLimit() / 2)
  const serverProcesses = args.serverProcesses === undefined
    ? Math.ceil((subscribers + 1) / perProcess)
    : wholeNumber('server-processes', args.serverProcesses, 1)
  const unavailable = await hostsUnavailableReason()
  if (unavailable) throw new UsageError(`bench:fanout cannot run here: ${unavailable}`)

  const results = startResults(cut ? 'fanout-cut' : 'fanout', npmCommand('bench:fanout'))
  const net = await createTestHosts({ clients: hostCount + 1 })
  // Reports come back as files (--out): a child's 'exit' may come before the last of a big report on its stdout.
  const reportsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-fanout-'))
  const subscriberHosts = net.clients.slice(0, hostCount)
  const publisherHost = net.clients[hostCount]
  let cutting = null
  try {
    const broker = serverProcesses > 1 ? await startBroker(net, args.broker) : null
    const serverProcess = net.node(net.server, 'server.js', ['--host', net.server.address, '--port', String(PORT),
      '--processes', String(serverProcesses), ...(broker ? ['--broker', broker] : []), '--replay', String(replay),
      // A cut host's old connections linger on the server beside their replacements until TCP gives up.
      '--max-connections', String(2 * subscribers + 100)])
    const server = watchOutput(serverProcess)
    await server.printed(/listening on ws:/)
    // Time for every process to start and open its connections before the common start: about
    // 3,000 connections a second were seen here, on 2 cores.
    const startAt = Date.now() + 5000 + Math.ceil(subscribers * 0.5)
    const common = [args.test, '--direction', 'fanout', '--rate', String(rate), '--duration', `${durationMs}ms`, '--warmup', '1s',
      '--heartbeat', `${heartbeatMs}ms`, '--decode', args.decode, '--timeout', '30000',
      '--start-at', String(startAt), '--url', `ws://${net.server.address}:${PORT}`]
    let started = 0
    const run = (host, role, connections) => {
      const out = path.join(reportsDir, `${started++}.json`)
      return watchOutput(net.node(host, `client_${args.format}.js`, [...common, '--role', role, '--connections', String(connections), '--out', out]))
        .exited.then((exit) => ({ host, role, out, ...exit }))
    }
    const parts = shares(subscribers, hostCount).flatMap((share, i) =>
      shares(share, Math.ceil(share / SUBSCRIBERS_PER_PROCESS)).map((connections) => run(subscriberHosts[i], 'subscriber', connections)))
    const publisher = run(publisherHost, 'publisher', subscribers)
    cutting = cut && scheduleCut(net, subscriberHosts[cut.host - 1], startAt + cut.atMs, cut.forMs)
    const [exits, cutTimes] = await Promise.all([Promise.all([publisher, ...parts]), cutting?.done])
    const reports = exits.map(({ host, role, out, code, stderr }) => {
      try {
        return { ...JSON.parse(fs.readFileSync(out, 'utf8')), host: host.name, sourceAddress: host.address }
      } catch {
        throw new Error(`${role} on ${host.address} exited with ${code}: ${stderr.trim().split('\n').pop()}`)
      }
    })
    serverProcess.kill('SIGTERM')
    const serverMemory = serverFigures((await server.exited).stdout, subscribers)

    const hosts = subscriberHosts.map((host, i) => {
      const own = reports.filter((r) => r.host === host.name)
      return { host: `subscribers ${i + 1}`, sourceAddress: host.address, processes: own.length, cut: cut?.host === i + 1, ...summary(own) }
    })
    const merged = summary(reports)
    const published = merged.fanout.published
    // A cut host's reconnects are reported, not required: a heartbeat longer than the stall lets TCP ride it out.
    const checks = {
      accounted: hosts.every((h) => h.fanout.delivered + h.fanout.lost === h.fanout.expected),
      uncutLossless: hosts.every((h) => h.cut || h.fanout.lost === 0),
      uncutStayed: hosts.every((h) => h.cut || h.fanout.reconnects.count === 0),
      valid: merged.fanout.invalid === null,
      noDuplicates: merged.fanout.duplicates === 0,
      noErrors: merged.fanout.errors === 0
    }
    const serverSummary = { address: net.server.address, processes: serverProcesses, broker: broker ?? 'none', ...serverMemory }
    if (args.json) {
      process.stdout.write(`${JSON.stringify({ hosts, merged, server: serverSummary, published, cut: cut && { ...cut, ...cutTimes }, checks })}\n`)
    }
    const columns = ['host', 'source', 'processes', 'subscribers', 'expected', 'delivered', 'recovered', 'lost', 'duplicates', 'reconnects',
      'reconnect gap p50/p99/max ms', 'closed link/server/generator', 'pings/delivery', 'judging waited ms', 'loop busy',
      'client µs/delivery', 'deliveries/s', 'p50 ms', 'p99 ms', 'spread p99 ms', 'client KB/subscriber']
    const row = (h) => [h.host + (h.cut ? ' (cut)' : ''), h.sourceAddress, h.processes, h.fanout.subscribers, h.fanout.expected,
      h.fanout.delivered, h.fanout.recovered, h.fanout.lost, h.fanout.duplicates, h.fanout.reconnects.count,
      h.fanout.reconnects.count ? Object.values(h.fanout.reconnects.gapMs).map(Math.round).join('/') : '',
      Object.values(h.fanout.liveness.closes).join('/'), h.fanout.liveness.pingsPerDelivery, Math.round(h.fanout.liveness.suspendedMs),
      h.generator?.loopBusy ?? '', h.fanout.cpuPerDeliveryUs, Math.round(h.rate), h.latencyMs.p50.toFixed(1), h.latencyMs.p99.toFixed(1),
      h.fanout.spreadMs.p99.toFixed(1), h.clientKbPerSubscriber]
    const rows = [...hosts.map(row), row({ ...merged, host: 'all', sourceAddress: `${hostCount} addresses`, processes: reports.length - 1 })]
    const failed = Object.entries(checks).filter(([, ok]) => !ok).map(([name]) => name)
    const verdict = failed.length
      ? `FAILED ${failed.join(', ')}`
      : 'every delivery accounted, hosts not cut lost nothing and kept their connections, nothing duplicated, no client closed a subscriber for its own lateness'
    const where = serverProcesses === 1 ? 'one process' : `${serverProcesses} processes and a broker (${broker})`
    const serverLine = `server memory: ${serverMemory.rssMb} MB resident at most (${serverMemory.kbPerSubscriber} KB per subscriber, ` +
      `the processes' own memory included), peak ${serverMemory.peakRssMb} MB summed over its processes`
    if (!args.json) {
      printTable(columns, rows)
      console.log(`${serverLine}; checks: ${verdict}`)
    }
    results.write({
      columns,
      rows,
      notes: [`${hostCount} subscriber hosts, a publisher host and a server host, each a network namespace with its own address on one bridge; ` +
        `the server in ${where}; ${args.format}, test ${args.test}, a publish rate of ${rate}/s to ${subscribers} subscribers for ${durationMs / 1000} s ` +
        `after 1 s of warm-up, from one --start-at instant (${published} publishes measured)` +
        (args.decode === 'one' ? '; one subscriber per client process decodes (--decode one), the others read the header' : '') +
        (cut ? `; subscriber host ${cut.host} cut off ${cut.atMs / 1000} s into the measured phase for ${cut.forMs / 1000} s (its bridge port stops forwarding)` : '') +
        (replay ? `; the server keeps the last ${replay} publishes for subscribers that come back (--replay): recovered, delivered late` : '') +
        `; the clients' --heartbeat ${heartbeatMs} ms; ${serverLine}; checks: ${verdict}`],
      figures: {
        subscribers: subscribers.toLocaleString('en-US'),
        rate: String(rate),
        delivered: `${merged.fanout.delivered.toLocaleString('en-US')} of ${merged.fanout.expected?.toLocaleString('en-US')}`,
        p99: `${Math.round(merged.latencyMs.p99).toLocaleString('en-US')} ms`,
        'deliveries-per-s': Math.round(merged.rate).toLocaleString('en-US'),
        'server-kb': String(serverMemory.kbPerSubscriber),
        'client-kb': String(merged.clientKbPerSubscriber),
        reconnects: merged.fanout.reconnects.count.toLocaleString('en-US'),
        'pings-per-delivery': String(merged.fanout.liveness.pingsPerDelivery),
        'loop-busy': hosts.map((h) => h.generator?.loopBusy).join(', '),
        'client-us': String(merged.fanout.cpuPerDeliveryUs)
      }
    })
    return failed.length ? 1 : 0
  } finally {
    cutting?.cancel()
    await net.close()
    fs.rmSync(reportsDir, { recursive: true, force: true })
  }
})

/**
 * What the table and the JSON show of some processes' reports merged: no histograms, no per-publish
 * times; their peak memory summed, and per subscriber (the publisher's process left out of that).
 */
function summary (reports) {
  const report = mergeReports(reports)
  const { perPublish, reconnects: { histogram, ...reconnects }, ...fanout } = report.fanout
  const { p50, p99, max } = report.latencyMs
  const subscriberRssMb = reports.filter((r) => r.fanout.role === 'subscriber').reduce((total, r) => total + r.peakRssMb, 0)
  return {
    fanout: { ...fanout, reconnects },
    rate: report.rate,
    latencyMs: { p50, p99, max },
    peakRssMb: reports.reduce((total, r) => total + r.peakRssMb, 0),
    clientKbPerSubscriber: Math.round(subscriberRssMb * 1024 / fanout.subscribers),
    generator: report.generator,
    failure: report.failure
  }
}

/**
 * The server's memory from its summary lines: the largest resident size any line showed (the
 * processes at one moment), its peak (each process's own, summed) from the last line.
 * @returns {{rssMb: number|null, peakRssMb: number|null, kbPerSubscriber: number|null, deliveries: number, slowSubscribersDropped: number}}
 */
function serverFigures (log, subscribers) {
  const rss = [...log.matchAll(/rss (\d+) MB/g)].map((match) => Number(match[1]))
  const last = log.trim().split('\n').pop()
  const rssMb = rss.length ? Math.max(...rss) : null
  return {
    rssMb,
    peakRssMb: Number(/peak (\d+) MB\)/.exec(last)?.[1]) || null,
    kbPerSubscriber: rssMb && Math.round(rssMb * 1024 / subscribers),
    deliveries: Number(/([\d,]+) deliveries/.exec(last)?.[1].replaceAll(',', '')),
    slowSubscribersDropped: Number(/(\d+) slow subscribers dropped/.exec(last)?.[1])
  }
}

/**
 * A broker between the server's processes, in the server host: the --broker the server is given.
 * (lib/server/broker-process.js's startBrokerProcess starts one on this machine's loopback, which no host can reach.)
 * @returns {Promise<string>} ipc, or the broker's URL
 */
async function startBroker (net, kind) {
  if (kind === 'ipc') return kind
  const { port, program, ready } = BROKERS[kind]
  const address = net.server.address
  // Reached on the bridge, not on loopback: Redis would refuse that without a password unless told.
  const args = kind === 'redis'
    ? ['--port', String(port), '--bind', address, '--protected-mode', 'no', '--save', '', '--appendonly', 'no']
    : ['--addr', address, '--port', String(port)]
  // nats-server logs to stderr: both streams as one, where the ready line is looked for.
  await watchOutput(net.start(net.server, 'sh', ['-c', 'exec "$@" 2>&1', 'sh', program, ...args])).printed(ready)
  return `${kind}://${address}:${port}`
}

/**
 * Cuts a host off at an instant, for a while, then restores it (close() of the hosts restores
 * anything still cut).
 * @returns {{done: Promise<{cutAt: number, restoredAt: number}>, cancel: () => void}} cancel: not if not yet begun
 */
function scheduleCut (net, host, at, forMs) {
  let timer
  const done = new Promise((resolve, reject) => {
    timer = setTimeout(async () => {
      try {
        const restore = await net.cut(host)
        const cutAt = Date.now()
        timer = setTimeout(() => restore().then(() => resolve({ cutAt, restoredAt: Date.now() }), reject), forMs)
      } catch (err) {
        reject(err)
      }
    }, at - Date.now())
  })
  return { done, cancel: () => clearTimeout(timer) }
}

/**
 * --cut H@AT+FOR: subscriber host H (from 1), AT into the measured phase, for FOR.
 * @returns {{host: number, atMs: number, forMs: number}}
 */
function parseCut (text, hostCount, durationMs) {
  const match = /^(\d+)@([^+]+)\+(.+)$/.exec(text)
  if (!match) throw new UsageError(`--cut must be HOST@AT+FOR, e.g. 1@3s+2s, got '${text}'`)
  const host = Number(match[1])
  if (host < 1 || host > hostCount) throw new UsageError(`--cut ${text}: there is no subscriber host ${host} (hosts 1 to ${hostCount})`)
  const atMs = duration('cut', match[2])
  if (atMs >= durationMs) throw new UsageError(`--cut ${text}: ${atMs} ms is past the measured phase of ${durationMs} ms`)
  return { host, atMs, forMs: duration('cut', match[3]) }
}
