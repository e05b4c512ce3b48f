// The load clients' command line (client_json.js, client_protobuf.js, client.js --format).
import fs from 'node:fs'
import { UsageError } from '../errors.js'
import { DEFAULT_CLIENT_MESSAGES, DEFAULT_HEARTBEAT_MS, DEFAULT_URL, FANOUT_DECODERS, FANOUT_ROLES } from '../defaults.js'
import { ACK, DIRECTIONS } from '../protocol.js'
import { openFileLimit } from '../processes.js'
import { formatNames } from '../codecs/registry.js'
import { BACKENDS, PROFILES, resolveNetwork } from '../network/profiles.js'
import { CODEC_MODULE_OPTION, PAYLOAD_OPTIONS, codecModulesFor, commandLine, duration, futureInstant, parseWsUrl, payloadFiles, positiveNumber, wholeNumber } from './parser.js'
import { programName } from './program.js'
import { outOptions, parseOutputs } from './outputs.js'
import { ATTEMPTS_PER_TURN, DEFAULT_BACKOFF } from '../load/reconnects.js'
import { StagedSchedule } from '../load/schedule.js'
import { PRECISE_BUDGET, PRECISE_WINDOW_US, checkPacing, defaultPacing } from '../load/pacer.js'

/**
 * @typedef {object} ClientCommand what the command line adds to the run it measures
 * @property {string[]} codecModules --codec-module's files, absolute: every worker thread adds them too
 * @property {boolean} allowLossy
 * @property {number} workers
 * @property {string} [out] JSON report file
 * @property {import('./outputs.js').Outputs} outputs --out's streams, --out-interval, --out-histograms, --tag
 * @property {string} [hdrOut] HdrHistogram interval log file
 * @property {string} [html] HTML page of the report
 * @property {string[]} assert threshold expressions
 * @property {boolean} json
 * @property {object|null} network
 * @property {string} throttleBackend
 */

/**
 * @typedef {import('../load/measure.js').ClientRun & ClientCommand} ClientOptions a load client's
 *   command line, checked: the run (its `load` is the engine's LoadSettings, with every default
 *   filled in) and what the command does around it
 */

/** The load client's options, but --format (only client.js takes it), in the order --help lists them. */
const CLIENT_OPTIONS = {
  ...CODEC_MODULE_OPTION,
  ...PAYLOAD_OPTIONS,
  url: { describe: 'server URL (ws:// or wss://)', default: DEFAULT_URL, type: 'string' },
  connections: { alias: 'c', describe: 'parallel WebSocket connections [default: 1, or one per worker]' },
  inflight: { alias: 'i', describe: 'messages outstanding per connection (1 = strict request/response) [default: 1, with --rate 1000]' },
  rate: { alias: 'r', describe: 'open loop: messages per second in total, latency from the schedule (with --arrivals: per connection)', type: 'string' },
  arrivals: { describe: 'connections that come and go: this many new connections a second (with --stages, where the ramp starts), each sending --per-connection messages and closing', type: 'string' },
  'per-connection': { describe: '--arrivals: messages each connection sends, --inflight at a time, before it closes', type: 'string' },
  stages: { describe: 'open loop on a ramp: DURATION:RATE,... the rate moving linearly to each target over its duration, from --rate (or 0): 10s:1000,30s:1000,10s:0 (sets the duration)', type: 'string' },
  pacing: { describe: `how --rate wakes for each message: precise (a pacing thread, then the event loop waits the last ${PRECISE_WINDOW_US} µs, within ${PRECISE_BUDGET * 100}% of a core, past which messages go in groups a millisecond apart; precise:<µs> sets that window), realtime (precise, with its thread and the sending thread at real-time priority: on time where a sleeping thread wakes late, needs root or CAP_SYS_NICE), spin (waits busily as long as the thread runs late: a few µs, at a core), or timer (Node's timers: a millisecond or more late, no CPU between sends). Default: precise, or timer under a CPU quota below one core or with a --workers thread for every core`, type: 'string' },
  duration: { alias: 'd', describe: 'run for this long instead of a message count: 30s, 500ms, 2m', type: 'string' },
  warmup: { alias: 'w', describe: 'messages (or a time: 2s) sent first and not recorded', default: '0', type: 'string' },
  'start-at': { describe: 'connect and warm up, then start measuring at this instant (ISO time or epoch ms): hosts measure together', type: 'string' },
  workers: { describe: 'worker threads, each with its share of connections, messages and rate', default: 1 },
  ...outOptions({ report: 'a file (or json=FILE) gets the JSON report', when: 'every --out-interval and once more at the end', runId: '--start-at, else a random id' }),
  'hdr-out': { describe: 'write the latency histograms as an HdrHistogram interval log', type: 'string' },
  html: { describe: 'also write the report as an HTML page: replies and latency second by second (a ramp\'s stages marked), latency by percentile', type: 'string' },
  assert: { describe: 'threshold that fails the run (exit 1), repeatable: "p99<20ms", "errors==0", "rate>=5000"', type: 'array', string: true, default: [] },
  header: { alias: 'H', describe: 'extra upgrade header "Name: value", repeatable', type: 'array', string: true, default: [] },
  // Its default, BENCH_TOKEN, is read on each parse (clientCommandLine).
  token: { describe: 'sent as Authorization: Bearer <token>; default from BENCH_TOKEN', type: 'string' },
  subprotocol: { describe: 'Sec-WebSocket-Protocol to ask for', type: 'string' },
  insecure: { describe: 'wss:// without verifying the certificate (self-signed servers)', type: 'boolean', default: false },
  ca: { describe: 'wss://: also trust this certificate (PEM): the server\'s own or its CA\'s (NODE_EXTRA_CA_CERTS works too)', type: 'string' },
  ack: { describe: 'what counts as the reply (up): ACK, any, or text:<reply>', default: 'ACK', type: 'string' },
  reconnect: { describe: `when a connection drops, reconnect (within --timeout) and go on; each attempt after a random wait up to --reconnect-base x 2^attempt (full jitter), at most --reconnect-cap, and at most ${ATTEMPTS_PER_TURN} attempts starting in one turn of the event loop`, type: 'boolean', default: false },
  'reconnect-base': { describe: '--reconnect: the first attempt\'s longest wait', default: `${DEFAULT_BACKOFF.baseMs}ms`, type: 'string' },
  'reconnect-cap': { describe: '--reconnect: no wait longer than this', default: `${DEFAULT_BACKOFF.capMs / 1000}s`, type: 'string' },
  timeout: { describe: 'per-message timeout in ms; a message with no reply by then is lost', default: 10000 },
  compress: { describe: 'offer permessage-deflate', type: 'boolean', default: false },
  repeat: { describe: 'send one message over and over instead of the test\'s stream of varying messages (flatters compression, caches and the JIT)', type: 'boolean', default: false },
  direction: {
    describe: 'up: send the payload, server ACKs; down: server sends it; echo: server sends it back; ' +
      'fanout: one publisher at --rate, --connections subscribers each get every publish',
    choices: DIRECTIONS,
    default: 'up'
  },
  role: { describe: 'fanout: both in this process, or only the publisher or only the subscribers (split across hosts)', choices: FANOUT_ROLES, default: 'both' },
  heartbeat: { describe: 'fanout: a subscriber whose next delivery is this late (beyond how late they run) pings; its ping unanswered as long again, it reconnects', default: `${DEFAULT_HEARTBEAT_MS}ms`, type: 'string' },
  decode: {
    describe: 'fanout: which subscribers decode every delivery: all (the client CPU a subscriber pays, times subscribers) ' +
      'or one (the others read the header and account: a generator that keeps up with thousands)',
    choices: FANOUT_DECODERS,
    default: 'all'
  },
  json: { describe: 'print one JSON object instead of the human report', type: 'boolean', default: false },
  throttle: { describe: `network profile: none, ${Object.keys(PROFILES).join(', ')}`, type: 'string' },
  up: { describe: 'client-to-server bandwidth, kbit/s (overrides the profile)', type: 'string' },
  down: { describe: 'server-to-client bandwidth, kbit/s (overrides the profile)', type: 'string' },
  rtt: { describe: 'round-trip time to add, ms (overrides the profile)', type: 'string' },
  loss: { describe: 'packet loss %, kernel shaping (tc) only', type: 'string' },
  'throttle-backend': { describe: 'auto: tc when it can work here, else proxy', choices: BACKENDS, default: 'auto' }
}

/**
 * Parses a load client's command line. With `--payload`, the first positional is the message count.
 * @param {string[]} argv process.argv
 * @param {string|null} format the codec this client uses (client_json.js, client_protobuf.js), or
 *   null for the general client.js, which takes it from a required `--format`
 * @returns {Promise<ClientOptions>}
 */
export async function parseClientArgs (argv, format) {
  const args = await clientCommandLine(argv, format)
  const custom = payloadFiles(args)
  const durationMs = args.duration === undefined ? undefined : duration('duration', args.duration)
  const { test, messages } = testAndMessages(args, custom)
  const rate = args.rate === undefined ? undefined : positiveNumber('rate', args.rate)
  const arrivals = args.arrivals === undefined ? undefined : arrivalsOf(args, messages)
  const stages = args.stages === undefined ? undefined : parseStages(args.stages, arrivals?.arrivals ?? rate ?? 0)
  if (stages && durationMs !== undefined) throw new UsageError('--stages sets the duration (the sum of its stages): drop --duration')
  if (stages && messages !== undefined) throw new UsageError(`--stages sends what its ramp calls for: drop the message count (${messages})`)
  if (arrivals && !stages && durationMs === undefined) throw new UsageError('--arrivals runs for a time: give --duration (or --stages, for arrivals that ramp)')
  const workers = wholeNumber('workers', args.workers, 1)
  if (args.direction === 'fanout') checkFanout(args, rate ?? stages, workers)
  else if (args.role !== 'both') throw new UsageError(`--role goes with --direction fanout, not ${args.direction}`)
  else if (args.decode !== 'all') throw new UsageError(`--decode goes with --direction fanout, not ${args.direction}`)
  const codecModules = await codecModulesFor(args.codecModule, [format ?? args.format])
  const load = loadSettings(args, { messages, durationMs, rate, stages, arrivals, workers })
  const outputs = parseOutputs(args, load)
  return {
    format: format ?? args.format,
    codecModules,
    test: test === null ? null : String(test),
    custom,
    load,
    allowLossy: args.allowLossy,
    workers,
    out: outputs.file,
    outputs,
    hdrOut: args.hdrOut,
    html: args.html,
    assert: args.assert,
    json: args.json,
    // Strings from the command line, so a typo is quoted as typed: --rate abc, not NaN.
    network: resolveNetwork({ profile: args.throttle, up: args.up, down: args.down, rtt: args.rtt, loss: args.loss }),
    throttleBackend: args.throttleBackend
  }
}

/** The client's command line as yargs reads it: options by type, with their defaults, not yet checked together. */
async function clientCommandLine (argv, format) {
  const program = programName(format ? `node client_${format}.js` : 'node client.js --format <name>')
  const formatOption = format ? {} : { format: { alias: 'f', describe: `wire format: ${formatNames().join(', ')}, or one a --codec-module adds`, demandOption: true, type: 'string' } }
  // Setting a key the table has keeps its place in --help.
  const token = { ...CLIENT_OPTIONS.token, default: process.env.BENCH_TOKEN }
  return commandLine(argv, `Usage: ${program} <test> [messages] [options]\n` +
    `       ${program} --payload <file.json> [messages] [--proto <file.proto> --type <Name>] [options]\n\n` +
    `Sends [messages] ${format ?? 'the --format\'s'} messages of <test> and reports latency, throughput and bytes.\n` +
    'Tests: 1 numbers, 2 strings, 3 medium, 4 large, 5 small (by number or name), people, person, counters.')
    .command('$0 [test] [messages]', false)
    .positional('test', { describe: 'test payload, by number or name', type: 'string' })
    .positional('messages', { describe: 'messages to send and record [default: 10000]' })
    .options({ ...formatOption, ...CLIENT_OPTIONS, token })
    .example(`${program} 4 100 --throttle 3g`, 'test 4 over a 3G profile')
    .example(`${program} 5 50 --rtt 100 --up 400 --down 400`, 'a custom network')
    .example(`${program} 3 100000`, 'test 3 (medium), 100,000 messages, one at a time')
    .example(`${program} small 100000 --inflight 100`, 'test 5 with 100 messages in flight')
    .example(`${program} 4 1000 --connections 4 --json`, 'four connections, JSON report on stdout')
    .example(`${program} 3 --rate 2000 --duration 60s --start-at 2026-11-23T17:00:00Z`, 'on every host: measure the same minute')
    .example(`${program} 3 --stages 10s:1000,30s:1000,10s:0`, 'ramp up to 1000/s, hold, ramp down: where latency bends')
    .example(`${program} 3 --arrivals 500 --per-connection 5 --duration 10s`, '500 new connections a second, 5 messages each, then gone')
    .example(`${program} 3 --direction fanout --connections 1000 --rate 20 --duration 10s`, 'one publisher, 1000 subscribers')
    .example(`${program} --payload my.json 1000`, 'your own document, schema inferred')
    .example(`${program} --payload my.json 1000 --proto my.proto --type shop.Order`, 'your own document and schema')
    .parseAsync()
}

/** The test and the message count: with --payload there is no test, and the first positional is the count. */
function testAndMessages (args, custom) {
  if (!custom) {
    if (args.test === undefined) throw new UsageError('name a test (1-5, people, person, counters) or give --payload <file.json> (see --help)')
    return { test: args.test, messages: args.messages }
  }
  if (args.messages !== undefined) throw new UsageError(`give either a test ('${args.test}') or --payload, not both`)
  if (args.direction === 'down') throw new UsageError('--direction down needs a built-in test: the server cannot know your payload')
  return { test: null, messages: args.test }
}

/**
 * The engine's settings, every default filled in, each option checked in the order it is listed.
 * @returns {import('../load/engine.js').LoadSettings}
 */
function loadSettings (args, { messages, durationMs, rate, stages, arrivals, workers }) {
  return {
    url: parseWsUrl(args.url),
    messages: messages === undefined ? (durationMs === undefined && !stages ? DEFAULT_CLIENT_MESSAGES : undefined) : wholeNumber('messages', messages, 1),
    durationMs,
    rate,
    stages,
    ...arrivals,
    ...pacingOf(args.pacing, workers),
    connections: wholeNumber('connections', args.connections ?? workers, 1),
    inflight: wholeNumber('inflight', args.inflight ?? inflightDefault(rate, stages, arrivals), 1),
    warmup: /[a-z]$/i.test(args.warmup) ? { durationMs: duration('warmup', args.warmup) } : { messages: wholeNumber('warmup', args.warmup, 0) },
    startAt: args.startAt === undefined ? undefined : futureInstant('start-at', args.startAt),
    timeoutMs: wholeNumber('timeout', args.timeout, 1),
    compress: args.compress,
    repeat: args.repeat,
    direction: args.direction,
    ack: ackRule(args.ack),
    headers: upgradeHeaders(args.header, args.token),
    subprotocol: args.subprotocol,
    insecure: args.insecure,
    ca: args.ca === undefined ? undefined : trustedCertificate(args.ca, args.url),
    reconnect: args.reconnect,
    backoff: { baseMs: duration('reconnect-base', args.reconnectBase), capMs: duration('reconnect-cap', args.reconnectCap) },
    ...(args.direction === 'fanout' && { role: args.role, decode: args.decode, heartbeatMs: duration('heartbeat', args.heartbeat) })
  }
}

/**
 * --pacing as given, checked, or the default this process can afford (lib/load/pacer.js).
 * @returns {{pacing: string, pacingReason: string|null}}
 */
function pacingOf (pacing, workers) {
  if (pacing === undefined) {
    const chosen = defaultPacing(workers)
    return { pacing: chosen.pacing, pacingReason: chosen.reason }
  }
  return { pacing: checkPacing(pacing), pacingReason: null }
}

/** Files a client holds besides its connections: stdio, modules loading, a report file. */
const FILES_BESIDES_CONNECTIONS = 64

/** Fan-out's own rules: an open loop of publishes, one publisher, subscribers a process can hold. */
function checkFanout (args, pace, workers) {
  if (pace === undefined) throw new UsageError('--direction fanout needs --rate (publishes per second) or --stages')
  if (args.inflight !== undefined) throw new UsageError('--inflight does not apply to fanout: the publisher follows --rate, subscribers only listen')
  if (workers > 1) throw new UsageError('--workers does not apply to fanout: run more processes with --role subscriber (and one --role publisher)')
  const subscribers = args.connections === undefined ? 1 : wholeNumber('connections', args.connections, 1)
  // Each subscriber holds a file; past the limit the last ones could not even connect.
  const limit = openFileLimit() - FILES_BESIDES_CONNECTIONS
  if (args.role !== 'publisher' && subscribers > limit) {
    throw new UsageError(`--connections ${subscribers}: this process may open at most ${limit} connections ` +
      `(open-file limit ${openFileLimit()}); raise it (ulimit -n, as root) or split the subscribers over processes with --role subscriber`)
  }
}

/**
 * Messages outstanding per connection unless --inflight says: 1 closed loop; an open loop 1000, so
 * that it keeps its schedule; an arrival on its own open loop (--rate) all of its K.
 */
function inflightDefault (rate, stages, arrivals) {
  if (arrivals) return rate ? arrivals.perConnection : 1
  return rate || stages ? 1000 : 1
}

/**
 * --arrivals R --per-connection K: new connections a second, each sending K messages request by
 * request (or, with --rate, on each connection's own open loop); their own shape, so not with
 * --connections, a message count or fan-out.
 * @returns {{arrivals: number, perConnection: number}}
 */
function arrivalsOf (args, messages) {
  const arrivals = positiveNumber('arrivals', args.arrivals)
  if (args.perConnection === undefined) throw new UsageError('--arrivals needs --per-connection K: the messages each new connection sends before it closes')
  const perConnection = wholeNumber('per-connection', args.perConnection, 1)
  for (const [given, option] of [[args.connections, '--connections'], [messages, 'a message count']]) {
    if (given !== undefined) throw new UsageError(`--arrivals opens its own connections at its rate, each sending --per-connection messages: drop ${option}`)
  }
  if (args.direction === 'fanout') throw new UsageError('--arrivals does not apply to fanout: its subscribers stay connected')
  return { arrivals, perConnection }
}

/**
 * --stages: `DURATION:RATE` steps, each duration with its unit (10s, 500ms, 2m), each rate 0 or more.
 * @param {string} text
 * @param {number} startRate where the ramp starts (--rate, or 0)
 * @returns {import('../load/schedule.js').Stage[]}
 */
export function parseStages (text, startRate) {
  const example = 'e.g. 10s:1000,30s:1000,10s:0'
  const steps = String(text).split(',').map((step) => step.trim())
  const stages = steps.map((step) => {
    const match = /^(\d+(?:\.\d+)?(?:ms|s|m))\s*:\s*(\d+(?:\.\d+)?)$/.exec(step)
    if (!match) throw new UsageError(`--stages takes DURATION:RATE steps, the duration with its unit (ms, s, m) and the rate 0 or more, ${example}; got '${step}'`)
    return { durationMs: duration('stages', match[1]), target: Number(match[2]) }
  })
  // A stage with no messages at all is a pause; a ramp of only those sends nothing.
  if (new StagedSchedule(stages, { startRate }).planned < 1) throw new UsageError(`--stages '${text}' calls for no message: give a stage a rate above 0 (${example})`)
  return stages
}

/** The --ca file's PEM text, read once here (worker threads get the text), for a wss:// URL only. */
function trustedCertificate (file, url) {
  if (!String(url).startsWith('wss:')) throw new UsageError(`--ca is for wss:// servers; --url is ${url}`)
  let text
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    throw new UsageError(`--ca ${file}: cannot read it (${err.code ?? err.message})`)
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) throw new UsageError(`--ca ${file}: not a PEM certificate`)
  return text
}

function upgradeHeaders (lines, token) {
  const headers = {}
  for (const line of lines) {
    const match = /^([!#$%&'*+.^\w`|~-]+):\s*(.*)$/.exec(line)
    if (!match) throw new UsageError(`--header must look like "Name: value", got '${line}'`)
    headers[match[1]] = match[2]
  }
  if (token) headers.Authorization = `Bearer ${token}`
  return headers
}

function ackRule (text) {
  if (text === 'any') return { any: true }
  if (text === ACK) return { text: ACK }
  if (text.startsWith('text:') && text.length > 5) return { text: text.slice(5) }
  throw new UsageError(`--ack must be ACK, any or text:<reply>, got '${text}'`)
}
