// `npm run capacity`'s command line.
import { UsageError } from '../errors.js'
import { DEFAULT_FORMATS } from '../defaults.js'
import { DEFAULT_PLANTED_US, PLANTED_FORMAT, PLANTED_MODULE } from '../compare/calibration.js'
import { checkCarries, formatNames, loadFormat } from '../codecs/registry.js'
import { resolveTest } from '../payloads/catalog.js'
import { checkPacing } from '../load/pacer.js'
import { DEFAULT_SLO, parseSlo } from '../capacity/slo.js'
import { planServerBudget } from '../capacity/server-budget.js'
import { CODEC_MODULE_OPTION, PAYLOAD_OPTIONS, codecModulesFor, commaList, commandLine, duration, payloadFiles, positiveNumber, wholeNumber } from './parser.js'
import { EQUIVALENCE_OPTION, SERVER_OPTIONS, equivalenceMargin, refuseSpacedServerArgs, serverOf } from './compare-options.js'
import { programName } from './program.js'

/**
 * The directions a capacity probe runs in: a message and its reply on one connection, or a fan-out
 * (one publisher, --connections subscribers), whose capacity is in deliveries/s.
 */
const CAPACITY_DIRECTIONS = ['up', 'echo', 'down', 'fanout']
/** Connections per generator: a message and its reply's, and a fan-out's subscribers. */
const DEFAULT_CONNECTIONS = { message: 16, fanout: 100 }
/** Where the search starts, in deliveries/s: msgs/s, or a fan-out's publishes/s times its subscribers. */
const START_DELIVERIES = 4000
/** The fewest confirming rounds that give an interval worth the name. */
const MIN_ROUNDS = 3

/**
 * Parses `npm run capacity`'s command line.
 * @param {string[]} argv process.argv
 * @returns {Promise<object>} the run's options (see lib/capacity/runner.js findCapacity)
 */
export async function parseCapacityArgs (argv) {
  const program = programName('npm run capacity --')
  refuseSpacedServerArgs(argv)
  const args = await commandLine(argv, `Usage: ${program} [options]\n\n` +
    'Finds, per test and format, the highest open-loop rate one server sustains within a latency objective\n' +
    '(every message acked, acked rate within 1% of offered), on a fixed server CPU budget; prints capacity per\n' +
    'server core with its interval and each format\'s ratio to the first, and writes results.json and report.html.')
    .options({
      ...PAYLOAD_OPTIONS,
      formats: { describe: `comma-separated formats, the first is the baseline of the ratios (one named twice: an A/A run): ${formatNames().join(', ')}, or one a --codec-module adds`, default: DEFAULT_FORMATS.join(','), type: 'string' },
      ...CODEC_MODULE_OPTION,
      tests: { describe: 'comma-separated tests, by number or name', default: '3', type: 'string' },
      slo: {
        describe: 'the latency objective(s), from the due time: p99<10ms; several, comma-separated, give a curve: p99<5ms,p99<25ms,p50<1ms ' +
          '(quote them: < is the shell\'s); a tight one paces the generators a shorter tick apart',
        default: DEFAULT_SLO,
        type: 'string'
      },
      'server-cpus': { describe: 'the server\'s CPU budget in cores, pinned apart from the generators; a fraction (0.5) is a CPU quota on one core', default: 1, type: 'string' },
      'target-rate': { describe: 'msgs/s (fanout: deliveries/s) to size for: the server cores each format needs', type: 'string' },
      ...SERVER_OPTIONS,
      tls: { describe: 'wss://: the server with a throwaway certificate that the generators verify', type: 'boolean', default: false },
      compress: { describe: 'permessage-deflate on server and generators', type: 'boolean', default: false },
      direction: { describe: 'up: generators send the payload; echo: it comes back; down: the server sends it; fanout: one publisher, --connections subscribers, each publish delivered to every one (the rate searched is publishes/s, the capacity deliveries/s, the objective on the delivery latency)', choices: CAPACITY_DIRECTIONS, default: 'up' },
      connections: { alias: 'c', describe: `connections per generator (fanout: subscribers) [default: ${DEFAULT_CONNECTIONS.message}; fanout: ${DEFAULT_CONNECTIONS.fanout}]` },
      inflight: { alias: 'i', describe: 'messages a connection (fanout: the publisher) may have outstanding before sends wait (their latency still counts from the due time)', default: 64 },
      rounds: { describe: `confirming rounds after the first bisection, each after the first on a fresh server and generators: the capacity's interval comes from their spread, at least ${MIN_ROUNDS}`, default: 7 },
      step: { describe: 'how long each probe measures', default: '1500ms', type: 'string' },
      lead: { describe: 'each probe\'s unrecorded lead-in at its rate', default: '300ms', type: 'string' },
      'start-rate': { describe: `the search's first rate, msgs/s (fanout: publishes/s); it doubles until a probe fails [default: ${START_DELIVERIES}; fanout: ${START_DELIVERIES} deliveries/s' worth]` },
      pacing: { describe: 'how the generators wake for due messages: precise, precise:<µs>, realtime, spin or timer (see the client\'s --pacing)', default: 'precise', type: 'string' },
      calibrate: { describe: `[µs]: plant a known decode cost (µs per message, default ${DEFAULT_PLANTED_US}) in the server's side of one of two otherwise identical JSON codecs, and report whether capacity dropped by what the extra CPU predicts`, type: 'string' },
      ...EQUIVALENCE_OPTION,
      out: { alias: 'o', describe: 'directory for results.json and report.html', default: 'capacity-report', type: 'string' },
      json: { describe: 'print the results document as JSON instead of the table', type: 'boolean', default: false }
    })
    .example('npm run capacity', 'test 3, JSON vs protobuf, one server core, p99 under 10 ms')
    .example(`${program} --tests 3,4 --target-rate 200000`, 'and the server cores 200,000 msgs/s need')
    .example(`${program} --slo 'p99<5ms,p99<25ms'`, 'a curve: capacity at two objectives')
    .example(`${program} --server-cpus 0.5`, 'half a core (a CPU quota), so one generator core outruns it')
    .example(`${program} --formats json,json`, 'an A/A run: should call equivalent')
    .example(`${program} --calibrate`, 'a planted 20 µs decode cost: found, and about the predicted drop?')
    .example(`${program} --server go --tests 3,4`, 'the Go reference server')
    .example(`${program} --direction fanout -c 100`, 'deliveries/s to 100 subscribers, delivery p99 under 10 ms')
    .parseAsync()
  return checkCapacityArgs(args, argv)
}

/** The parsed options checked against each other, with every default filled in. */
async function checkCapacityArgs (args, argv) {
  const given = (name) => argv.some((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`))
  const custom = payloadFiles(args)
  if (custom && given('tests')) throw new UsageError('give either --tests or --payload, not both')
  if (custom && args.direction === 'down') throw new UsageError('--direction down needs built-in tests: the server cannot know your payload')
  const calibrate = args.calibrate === undefined ? null : { side: 'server', us: plantedUs(args.calibrate) }
  if (calibrate && (given('formats') || custom)) throw new UsageError('--calibrate compares JSON with itself plus a planted cost: it takes no --formats or --payload')
  if (calibrate && args.direction !== 'up') throw new UsageError('--calibrate plants its cost in the server\'s decode of messages going up: it runs with --direction up')
  const tests = custom ? [] : commaList(args.tests)
  for (const test of tests) resolveTest(test)
  const formats = calibrate ? ['json', PLANTED_FORMAT] : commaList(args.formats)
  if (formats.length === 0) throw new UsageError(`--formats needs at least one of ${formatNames().join(', ')}`)
  const modules = calibrate ? [...args.codecModule, PLANTED_MODULE] : args.codecModule
  const codecModules = await codecModulesFor(modules, formats)
  if (custom) for (const format of formats) checkCarries(await loadFormat(format))
  const serverCores = positiveNumber('server-cpus', args.serverCpus)
  const targetRate = args.targetRate === undefined ? null : positiveNumber('target-rate', args.targetRate)
  const rounds = wholeNumber('rounds', args.rounds, MIN_ROUNDS)
  const connections = wholeNumber('connections', args.connections ?? DEFAULT_CONNECTIONS[args.direction === 'fanout' ? 'fanout' : 'message'], 1)
  const subscribers = args.direction === 'fanout' ? connections : 1
  checkPacing(args.pacing)
  return {
    slos: parseSlo(args.slo),
    budget: planServerBudget(serverCores),
    targetRate,
    tests,
    formats,
    codecModules,
    calibrate,
    custom,
    allowLossy: args.allowLossy,
    server: serverOf(args, given, { formats, calibrate, custom }),
    tls: args.tls,
    compress: args.compress,
    direction: args.direction,
    connections,
    inflight: wholeNumber('inflight', args.inflight, 1),
    schedule: {
      rounds,
      stepMs: duration('step', args.step),
      leadMs: duration('lead', args.lead),
      // A fan-out's rate is publishes/s, each a delivery to every subscriber: it starts at as many deliveries.
      startRate: args.startRate === undefined ? Math.max(1, Math.round(START_DELIVERIES / subscribers)) : positiveNumber('start-rate', args.startRate)
    },
    pacing: args.pacing,
    margin: equivalenceMargin(args.equivalence),
    out: args.out,
    json: args.json
  }
}

/** --calibrate's µs: its value, or the default when given bare. */
function plantedUs (value) {
  const us = value === '' ? DEFAULT_PLANTED_US : Number(value)
  if (!(us > 0 && Number.isFinite(us))) throw new UsageError(`--calibrate takes the planted decode cost in µs, above 0; got '${value}'`)
  return us
}
