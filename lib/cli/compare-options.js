// `npm run compare`'s command line.
import { UsageError } from '../errors.js'
import { DEFAULT_BUDGET_MS, DEFAULT_FANOUT_RATE, DEFAULT_FORMATS, MAX_TRIALS } from '../defaults.js'
import { DEFAULT_EQUIVALENCE } from '../compare/statistics.js'
import { CALIBRATION_TESTS, DEFAULT_PLANTED_US, PLANTED_FORMAT, PLANTED_MODULE, PLANTED_SIDES } from '../compare/calibration.js'
import { DIRECTIONS } from '../protocol.js'
import { checkCarries, formatNames, loadFormat } from '../codecs/registry.js'
import { ALL_TESTS, resolveTest } from '../payloads/catalog.js'
import { resolveNetwork } from '../network/profiles.js'
import { CODEC_MODULE_OPTION, PAYLOAD_OPTIONS, codecModulesFor, commaList, commandLine, duration, payloadFiles, positiveNumber, wholeNumber } from './parser.js'
import { programName } from './program.js'
import { outOptions, parseOutputs } from './outputs.js'
import { REFERENCE_SERVERS, REFERENCE_SERVER_NAMES } from '../reference/servers.js'

/** What a difference must stay within to be called equivalent: compare's and capacity's. */
export const EQUIVALENCE_OPTION = {
  equivalence: { describe: 'equivalent: the whole interval within ± this percentage of 1', default: DEFAULT_EQUIVALENCE * 100, type: 'string', nargs: 1 }
}

/**
 * --equivalence as a fraction of 1.
 * @param {string|number} value a percentage, `%` allowed
 * @returns {number}
 */
export function equivalenceMargin (value) {
  const equivalence = Number(String(value).replace(/%$/, ''))
  if (!(equivalence > 0 && equivalence < 100)) throw new UsageError(`--equivalence must be a percentage above 0 and below 100, got '${value}'`)
  return equivalence / 100
}

/** The server the formats meet: compare's and capacity's. */
export const SERVER_OPTIONS = {
  server: { describe: `the server the formats are compared on: node (server.js), or a reference server of servers/ (built when its sources changed): ${REFERENCE_SERVERS.map((server) => `${server.name} (formats ${server.formats.join(', ')})`).join(', ')}`, choices: ['node', ...REFERENCE_SERVER_NAMES], default: 'node' },
  'server-command': { describe: 'any server that keeps docs/protocol.md: its program and arguments, space-separated, run as is (no shell: its CPU is read from the process started)', type: 'string' },
  'server-args': { describe: 'options for every --server process, space-separated, after an equals sign: --server-args=\'--json-library gson\' (servers/java/README.md)', type: 'string' }
}

/**
 * yargs would take `--server-args --json-library gson` for options of the command's own, and say
 * so unclearly: the server's options come after an equals sign.
 * @param {string[]} argv
 */
export function refuseSpacedServerArgs (argv) {
  if (argv.includes('--server-args')) throw new UsageError('--server-args takes the server\'s options after an equals sign, as one argument: --server-args=\'--json-library gson\'')
}

/** compare's options after --payload's and --formats, in the order --help lists them. */
/** Where the results go without a --out directory. */
const DEFAULT_DIRECTORY = 'compare-report'

const COMPARE_OPTIONS = {
  ...CODEC_MODULE_OPTION,
  tests: { describe: 'comma-separated tests, by number or name', default: ALL_TESTS.join(','), type: 'string' },
  ...SERVER_OPTIONS,
  throttle: { describe: 'comma-separated network profiles (none = no shaping)', default: 'none', type: 'string' },
  compress: { describe: 'permessage-deflate on server and clients', type: 'boolean', default: false },
  tls: { describe: 'wss://: servers with a throwaway certificate that the clients verify (TLS\'s cost in every figure, its records in the wire bytes)', type: 'boolean', default: false },
  repeat: { describe: 'send each test\'s one message over and over instead of its stream of varying messages (flatters compression)', type: 'boolean', default: false },
  direction: { describe: 'up: clients send the payload; down: the server sends it; echo: both; fanout: one publisher, --connections subscribers', choices: DIRECTIONS, default: 'up' },
  rate: { describe: `fanout: publishes per second [default: ${DEFAULT_FANOUT_RATE}]`, type: 'string' },
  trials: { alias: 't', describe: `a fixed number of generations (each: every test in lockstep batches, the processes swapping formats), 2 to ${MAX_TRIALS} [default: as many as fit --budget]` },
  calibrate: { describe: `[client|server][:µs]: plant a known cost (µs per message, default ${DEFAULT_PLANTED_US}) in the client's encode (default) or the server's decode of one of two otherwise identical JSON codecs, and report whether it was found where planted, about its size, and not called worse on the other side's CPU, and the smallest difference this machine tells in the budget: 20, server, server:30 [default tests: ${CALIBRATION_TESTS.join(',')}]`, type: 'string' },
  budget: { describe: `run generations while the next one fits in this much time from the start: 90s, 5m [default: ${DEFAULT_BUDGET_MS / 1000}s]`, type: 'string', nargs: 1 },
  ...EQUIVALENCE_OPTION,
  'start-warmup': { describe: 'how long each client sends each format before the warm-up generations (and until it has spent 0.3 s of its CPU on it, or this if less, for at most 3x this): 5s, 500ms [default: 2s, or a reference server\'s own (servers/NAME/server.json): the JVM compiles for longer]', type: 'string', nargs: 1 },
  pin: { describe: 'server and clients on CPUs of their own (taskset), so they never share a core: --no-pin to let them', type: 'boolean', default: true },
  messages: { alias: 'n', describe: 'messages per batch [default: about 25 ms of the slower format\'s traffic, at most 200]' },
  inflight: { alias: 'i', describe: 'messages outstanding per connection [default: 1]' },
  connections: { alias: 'c', describe: 'parallel connections per client (fanout: subscribers)', default: 1 },
  ...outOptions({
    report: `a directory (or json=DIR) gets results.json, results.md and report.html [default: ${DEFAULT_DIRECTORY}]`,
    when: 'once, at the end: each format, test and network (label network)',
    runId: 'a random id',
    interval: false,
    alias: 'o'
  }),
  json: { describe: 'print the results document as JSON instead of the table', type: 'boolean', default: false }
}

/**
 * Parses `npm run compare`'s command line. Messages per batch stay undefined unless given, so
 * each test gets batches that suit its speed (see planRow in lib/compare/row-plan.js).
 * @param {string[]} argv process.argv
 * @returns {Promise<{formats: string[], calibrate: {side: string, us: number}|null, tests: string[], custom: {payload: string, proto?: string, type?: string}|null, allowLossy: boolean,
 *   profiles: string[], compress: boolean, direction: string, trials?: number, budgetMs?: number, margin: number,
 *   pin: boolean, messages?: number, inflight: number, rate?: number, connections: number,
 *   repeat: boolean,
 *   json: boolean, out: string, outputs: import('./outputs.js').Outputs}>} out: the results directory;
 *   outputs: --out's streams
 */
export async function parseCompareArgs (argv) {
  const args = await compareCommandLine(argv)
  const given = (name) => argv.some((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`))
  const profiles = commaList(args.throttle)
  for (const profile of profiles) resolveNetwork({ profile })
  const custom = payloadFiles(args)
  if (custom && given('tests')) throw new UsageError('give either --tests or --payload, not both')
  if (custom && args.direction === 'down') throw new UsageError('--direction down needs built-in tests: the server cannot know your payload')
  const calibrate = args.calibrate === undefined ? null : plantOf(args.calibrate)
  if (calibrate !== null && (given('formats') || custom)) throw new UsageError('--calibrate compares JSON with itself plus a planted cost: it takes no --formats or --payload')
  if (calibrate !== null && args.direction !== 'up') throw new UsageError('--calibrate plants its cost in the client\'s encode or the server\'s decode of messages going up: it runs with --direction up')
  const tests = custom ? [] : calibrate !== null && !given('tests') ? CALIBRATION_TESTS : commaList(args.tests)
  for (const test of tests) resolveTest(test)
  const { formats, codecModules } = await formatsOf(args, calibrate, custom)
  const trials = trialsOf(args)
  const fanout = args.direction === 'fanout'
  if (fanout && args.inflight !== undefined) throw new UsageError('--inflight does not apply to fanout: the publisher follows --rate, subscribers only listen')
  if (!fanout && args.rate !== undefined) throw new UsageError('--rate goes with --direction fanout (the other directions run a closed loop)')
  const server = serverOf(args, given, { formats, calibrate, custom })
  return {
    formats,
    codecModules,
    calibrate,
    tests,
    custom,
    allowLossy: args.allowLossy,
    profiles,
    compress: args.compress,
    tls: args.tls,
    repeat: args.repeat,
    direction: args.direction,
    trials,
    budgetMs: args.budget === undefined ? undefined : duration('budget', args.budget),
    margin: equivalenceMargin(args.equivalence),
    pin: args.pin,
    server,
    warmup: args.startWarmup === undefined ? undefined : { startMs: duration('start-warmup', args.startWarmup) },
    messages: args.messages === undefined ? undefined : wholeNumber('messages', args.messages, 1),
    inflight: wholeNumber('inflight', args.inflight ?? 1, 1),
    rate: fanout ? positiveNumber('rate', args.rate ?? DEFAULT_FANOUT_RATE) : undefined,
    connections: wholeNumber('connections', args.connections, 1),
    ...outputsOf(args),
    json: args.json
  }
}

/** compare's command line as yargs reads it: options by type, with their defaults, not yet checked together. */
async function compareCommandLine (argv) {
  const program = programName('npm run compare --')
  refuseSpacedServerArgs(argv)
  // Names the formats known as the command line is read.
  const formats = { describe: `comma-separated formats, the first is the baseline of the ratios (one named twice: an A/A run): ${formatNames().join(', ')}, or one a --codec-module adds`, default: DEFAULT_FORMATS.join(','), type: 'string' }
  return commandLine(argv, `Usage: ${program} [options]\n\n` +
    'Starts a server, runs the JSON and the protobuf client (or the --formats chosen) on each test and\n' +
    'network profile, prints one side-by-side table and writes results.json, results.md and report.html.')
    .options({ ...PAYLOAD_OPTIONS, formats, ...COMPARE_OPTIONS })
    .example('npm run compare', 'every test, JSON vs protobuf, on loopback')
    .example(`${program} --tests 1,5 --inflight 100`, 'tests 1 and 5, 100 in flight')
    .example(`${program} --tests 4,5 --throttle none,3g`, 'tests 4 and 5 on loopback and on 3G')
    .example(`${program} --tests people --compress`, 'people, with permessage-deflate')
    .example(`${program} --tests 3,4 --tls`, 'over wss://: what TLS changes')
    .example(`${program} --tests people --direction down`, 'the server sends 50,000 persons, clients decode them')
    .example(`${program} --payload my.json`, 'your own document, schema inferred')
    .example(`${program} --formats json,protobuf,msgpack,cbor`, 'MessagePack and CBOR beside them')
    .example(`${program} --formats json,json`, 'an A/A run: the same format twice should call nothing')
    .example(`${program} --tests 3,4 --budget 5m --equivalence 2`, 'longer, to decide smaller differences')
    .example(`${program} --calibrate`, 'what this machine can tell: a planted 20 µs encode cost, found or not')
    .example(`${program} --calibrate server`, 'the same, planted in the server\'s decode')
    .example(`${program} --server go --tests 3,4`, 'the same question for a Go backend')
    .example(`${program} --server java --tests 3,4`, 'and for a Java one')
    .example(`${program} --server java --server-args='--json-library gson' --tests person --direction echo`, 'protobuf-java against Gson in place of Jackson')
    .example(`${program} --direction fanout --connections 200 --tests 3,4 --compress`, 'a broadcast to 200 subscribers')
    .parseAsync()
}

/**
 * The formats compared (--calibrate's: JSON and its planted twin) and the codec modules that add
 * them, each format checked to carry a user's payload.
 * @returns {Promise<{formats: string[], codecModules: string[]}>}
 */
async function formatsOf (args, calibrate, custom) {
  const formats = calibrate === null ? commaList(args.formats) : ['json', PLANTED_FORMAT]
  if (formats.length === 0) throw new UsageError(`--formats needs at least one of ${formatNames().join(', ')}`)
  const modules = calibrate === null ? args.codecModule : [...args.codecModule, PLANTED_MODULE]
  const codecModules = await codecModulesFor(modules, formats)
  if (custom) for (const format of formats) checkCarries(await loadFormat(format))
  return { formats, codecModules }
}

/** --trials, checked: a fixed number of generations, or none to run as many as --budget fits. */
/** --out: the results directory (the one value with no kind), and the metrics streams. */
function outputsOf (args) {
  const outputs = parseOutputs(args)
  return { out: outputs.file ?? DEFAULT_DIRECTORY, outputs }
}

function trialsOf (args) {
  const trials = args.trials === undefined ? undefined : wholeNumber('trials', args.trials, 2)
  if (trials > MAX_TRIALS) throw new UsageError(`--trials must be at most ${MAX_TRIALS}, got ${trials}`)
  if (trials !== undefined && args.budget !== undefined) throw new UsageError('give either --trials (a fixed number of generations) or --budget (as many as fit), not both')
  return trials
}

/**
 * --calibrate's value: where the cost is planted (client or server), its µs, or both as server:30;
 * each part left out takes its default (client, DEFAULT_PLANTED_US).
 * @param {string} value
 * @returns {{side: string, us: number}}
 */
function plantOf (value) {
  const [, side = 'client', given = ''] = /^(?:(client|server)(?::|$))?(.*)$/.exec(value)
  const us = given === '' ? DEFAULT_PLANTED_US : Number(given)
  if (!(us > 0 && Number.isFinite(us))) throw new UsageError(`--calibrate takes ${PLANTED_SIDES.join(' or ')}, µs above 0, or both as server:30; got '${value}'`)
  return { side, us }
}

/**
 * Which server the comparison runs on: node (server.js), a reference server of servers/ (go, java),
 * or a command of the user's. Only the node server takes --codec-module formats, and so
 * --calibrate's planted one; a reference server serves the formats its server.json names.
 * --server-args are options for the server's command line (a user's command holds its own).
 * @returns {{kind: string, args: string[]}|{kind: 'command', command: string[]}}
 */
export function serverOf (args, given, { formats, calibrate, custom }) {
  if (args.serverCommand !== undefined && given('server')) throw new UsageError('give either --server or --server-command, not both')
  if (args.serverCommand !== undefined && args.serverArgs !== undefined) throw new UsageError('--server-args go with --server: put the options in --server-command itself')
  const serverArgs = args.serverArgs?.trim().split(/\s+/).filter(Boolean) ?? []
  if (args.serverArgs !== undefined && serverArgs.length === 0) throw new UsageError('--server-args needs the server\'s options: --server-args=\'--json-library gson\'')
  const server = args.serverCommand === undefined ? { kind: args.server, args: serverArgs } : { kind: 'command', command: args.serverCommand.trim().split(/\s+/) }
  if (server.kind === 'command' && server.command[0] === '') throw new UsageError('--server-command needs a program to run')
  if (server.kind === 'node') return server
  if (calibrate !== null) throw new UsageError('--calibrate plants its cost in a JavaScript codec the server loads: it runs on --server node')
  if (args.codecModule.length > 0) throw new UsageError('--codec-module adds a format to the node server and clients: it runs on --server node')
  const reference = REFERENCE_SERVERS.find((candidate) => candidate.name === server.kind)
  if (reference) {
    const unserved = formats.filter((format) => !reference.formats.includes(format))
    if (unserved.length) throw new UsageError(`--server ${server.kind} serves ${reference.formats.join(' and ')}, not ${unserved.join(', ')}`)
    if (custom) throw new UsageError(`--server ${server.kind} serves the built-in tests only: --payload needs --server node`)
  }
  return server
}
