// npm run bench:backends -- [--servers node,go,java] [--tests 3,4,people] [--budget 45s] [--start-warmup MS] [--json]
// JSON against protobuf on each backend, one after the other in one run: for each server, an
// `npm run compare` of the tests (lockstep generations, 1 in flight, direction up), and one table
// with the servers side by side: bytes, p50, the server's CPU and codec time per message, and
// protobuf's server CPU against JSON's with its interval and call. Whether the warm-ups did their
// work is measured too: each server's first recorded generation against the median of the later
// ones (a JIT still compiling makes the first dearer). Writes docs/results/backends.json.
import { commandLine, commaList, duration, wholeNumber } from '../lib/cli/parser.js'
import { UsageError, runMain } from '../lib/errors.js'
import { compareFormats } from '../lib/compare/runner.js'
import { cellText } from '../lib/compare/results.js'
import { REFERENCE_SERVER_NAMES } from '../lib/reference/servers.js'
import { resolveTest } from '../lib/payloads/catalog.js'
import { npmCommand, printTable, startResults } from './support/results.js'
import { median } from './support/statistics.js'

const COLUMNS = ['test', 'server', 'B/msg json', 'B/msg protobuf', 'p50 ms json', 'p50 ms protobuf', 'server CPU µs/msg json',
  'server CPU µs/msg protobuf', 'server codec µs/msg json', 'server codec µs/msg protobuf', 'server CPU protobuf/json', 'server codec protobuf/json']

/** The first recorded generation's server CPU per message against the later ones' median, as a geometric mean over tests and formats. */
function firstGenerationRatio (reports) {
  const cells = new Map()
  for (const report of reports.filter((candidate) => candidate.server.perMessageUs > 0)) {
    const key = `${report.test} ${report.label}`
    cells.set(key, [...(cells.get(key) ?? []), report])
  }
  const logs = [...cells.values()].map((cell) => {
    const first = cell.find((report) => report.trial === 1)
    const later = cell.filter((report) => report.trial > 1).map((report) => report.server.perMessageUs)
    return Math.log(first.server.perMessageUs / median(later))
  })
  return Math.exp(logs.reduce((sum, value) => sum + value, 0) / logs.length)
}

runMain(async () => {
  const args = await commandLine(process.argv, 'Usage: npm run bench:backends -- [--servers node,go,java] [--tests 3,4,people] [--budget 45s] [--start-warmup MS] [--json]')
    .options({
      servers: { describe: 'comma-separated servers: node and the reference servers of servers/', default: ['node', ...REFERENCE_SERVER_NAMES].join(','), type: 'string' },
      tests: { describe: 'comma-separated tests', default: 'medium,large,people', type: 'string' },
      budget: { describe: 'each server\'s comparison: generations while the next fits in this long', default: '45s', type: 'string' },
      'start-warmup': { describe: 'ms each client warms each format up at the start [default: each server\'s own]', type: 'string' },
      json: { describe: 'print one JSON document', type: 'boolean', default: false }
    }).parseAsync()
  const servers = commaList(args.servers)
  for (const server of servers) {
    if (server !== 'node' && !REFERENCE_SERVER_NAMES.includes(server)) throw new UsageError(`--servers: unknown server '${server}': expected node or one of ${REFERENCE_SERVER_NAMES.join(', ')}`)
  }
  const tests = commaList(args.tests).map((test) => resolveTest(test).name)
  const budgetMs = duration('budget', args.budget)
  const startWarmupMs = args.startWarmup === undefined ? undefined : wholeNumber('start-warmup', args.startWarmup, 0)
  const results = startResults('backends', npmCommand('bench:backends'))
  const rows = []
  const figures = {}
  const warmups = []
  for (const server of servers) {
    const comparison = await compareFormats({
      tests,
      profiles: ['none'],
      compress: false,
      server: { kind: server },
      budgetMs,
      warmup: startWarmupMs === undefined ? undefined : { startMs: startWarmupMs },
      inflight: 1,
      connections: 1,
      progress: (line) => process.stderr.write(`${server}: ${line}\n`)
    })
    for (const row of comparison.rows) {
      const [json, protobuf] = [row.figures.json, row.figures.protobuf]
      const verdicts = row.verdicts.protobuf
      const ratio = (metric) => verdicts[metric] ? cellText(verdicts[metric]) : 'n/a'
      const fixed = (value, digits) => value === null || value === undefined ? 'n/a' : value.toFixed(digits)
      rows.push({
        testName: row.testName,
        cells: [row.test, server, json.payloadBytes, protobuf.payloadBytes, fixed(json.p50, 3), fixed(protobuf.p50, 3), fixed(json.serverCpu, 1),
          fixed(protobuf.serverCpu, 1), fixed(json.serverCodec, 2), fixed(protobuf.serverCodec, 2), ratio('serverCpu'), ratio('serverCodec')]
      })
      figures[`server-cpu-${row.testName}-${server}`] = ratio('serverCpu').replace(/, ±.*$/, '')
      figures[`server-codec-${row.testName}-${server}`] = ratio('serverCodec').replace(/, ±.*$/, '')
    }
    const first = firstGenerationRatio(comparison.reports)
    figures[`first-generation-${server}`] = `${first.toFixed(2)}x`
    const generations = Math.max(...comparison.rows.map((row) => row.generations))
    const { startWarmupMs: ms, warmupGenerations: extra } = comparison.settings
    warmups.push(`${server} ${generations} generations after ${(ms / 1000).toFixed(0)} s of warm-up per format${extra ? ` and ${extra} warm-up generations` : ''}, its first recorded generation's server CPU ${first.toFixed(2)}x the later ones' median`)
  }
  const table = {
    columns: COLUMNS,
    rows: tests.flatMap((test) => rows.filter((row) => row.testName === test).map((row) => row.cells)),
    figures,
    notes: [
      `each server in turn: npm run compare -- --server NAME --tests ${tests.join(',')} --budget ${args.budget}, two server processes and per-test clients ` +
        'that live for the whole run and swap formats (lockstep generations, 1 connection × 1 in flight, direction up, servers on CPU 0 and clients on CPU 1 where the machine allows)',
      'figures are medians over the generations; server CPU from the kernel around open-loop batches, server codec time from its /metrics (decode alone); ' +
        'the ratios are protobuf\'s against json\'s with their simultaneous 95% intervals and calls, as compare prints them',
      `warm-up: ${warmups.join('; ')}`
    ]
  }
  results.write(table)
  if (args.json) process.stdout.write(`${JSON.stringify(table)}\n`)
  else printTable(COLUMNS, table.rows)
})
