import yargs from 'yargs'
import { hideBin } from 'yargs/helpers'
import { UsageError } from './errors.js'
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_PAYLOAD, DIRECTIONS } from './server.js'
import { BACKENDS, PROFILES, resolveNetwork } from './throttle.js'
import { ALL_TESTS, DEFAULT_BYTES_PER_RUN, DEFAULT_FORMATS, DEFAULT_MESSAGES, DEFAULT_WARMUP } from './compare.js'
import { resolveTest } from './payloads.js'
import { MAX_SCHEMA_BYTES } from './fidelity.js'
import { CUSTOM_FORMATS, FORMATS } from './codecs.js'

/** Where clients connect and the server listens unless told otherwise. */
export const DEFAULT_PORT = 7070
export const DEFAULT_URL = `ws://127.0.0.1:${DEFAULT_PORT}`

/**
 * A yargs parser that reports mistakes as one UsageError line instead of printing usage and
 * exiting, so every entry point fails the same way.
 * @param {string[]} argv process.argv
 * @param {string} usage the usage line shown by --help
 */
function commandLine (argv, usage) {
  return yargs(hideBin(argv))
    .usage(usage)
    .strict()
    .wrap(Math.min(100, process.stdout.columns || 100))
    .fail((message, err) => {
      if (err instanceof UsageError) throw err
      // yargs spreads some messages (invalid choices) over several lines; errors here are one line.
      throw new UsageError(`${String(message ?? err?.message).replace(/:?\s*\n\s*/g, ': ')} (see --help)`)
    })
    .help()
    .alias('h', 'help')
    .version(false)
}

/**
 * Turns a yargs option value into a whole number within bounds, or a UsageError naming the option.
 * @param {string} name option name, for the message
 * @param {unknown} value
 * @param {number} min smallest allowed value
 */
export function wholeNumber (name, value, min) {
  const number = Number(value)
  if (!Number.isSafeInteger(number) || number < min) {
    throw new UsageError(`--${name} must be a whole number >= ${min}, got '${value}'`)
  }
  return number
}

/** Options that run a user's own JSON document instead of a built-in test (clients and compare). */
const PAYLOAD_OPTIONS = {
  payload: { describe: 'your own JSON document, in place of a test (schema inferred unless --proto)', type: 'string' },
  proto: { describe: 'your .proto for --payload (with --type)', type: 'string' },
  type: { describe: 'the message type in --proto, e.g. shop.Order', type: 'string' },
  'allow-lossy': { describe: 'run even if the schema changes values (the report says lossy)', type: 'boolean', default: false }
}

/**
 * The `--payload` options as given, or null when a built-in test runs.
 * @param {{payload?: string, proto?: string, type?: string}} args
 * @returns {{payload: string, proto?: string, type?: string}|null}
 */
function payloadFiles (args) {
  if (!args.payload) {
    if (args.proto || args.type) throw new UsageError('--proto and --type go with --payload <file.json>')
    return null
  }
  return { payload: args.payload, proto: args.proto, type: args.type }
}

/**
 * @typedef {object} ClientOptions a load client's command line, checked
 * @property {string|null} test built-in test, or null with --payload
 * @property {{payload: string, proto?: string, type?: string}|null} custom
 * @property {boolean} allowLossy
 * @property {number} [messages] undefined when only --duration limits the run
 * @property {number} [durationMs]
 * @property {number} [rate] open loop, messages per second in total
 * @property {{messages?: number, durationMs?: number}} warmup
 * @property {number} workers
 * @property {string} [out] JSON report file
 * @property {string} [hdrOut] HdrHistogram interval log file
 * @property {string[]} assert threshold expressions
 * @property {Record<string, string>} headers
 * @property {string} [subprotocol]
 * @property {boolean} insecure
 * @property {{any: boolean}|{text: string}} ack
 * @property {boolean} reconnect
 * @property {string} url
 * @property {number} connections
 * @property {number} inflight
 * @property {number} timeout ms
 * @property {boolean} compress
 * @property {string} direction
 * @property {boolean} json
 * @property {object|null} network
 * @property {string} throttleBackend
 */

/**
 * Parses a load client's command line. With `--payload`, the first positional is the message count.
 * @param {string[]} argv process.argv
 * @param {string|null} format the codec this client uses (client_json.js, client_protobuf.js), or
 *   null for the general client.js, which takes it from a required `--format`
 * @returns {Promise<ClientOptions & {format: string}>}
 */
export async function parseClientArgs (argv, format) {
  const script = format ? `client_${format}.js` : 'client.js --format <name>'
  const formatOption = format ? {} : { format: { alias: 'f', describe: 'wire format', choices: FORMATS, demandOption: true, type: 'string' } }
  const args = await commandLine(argv, `Usage: node ${script} <test> [messages] [options]\n` +
    `       node ${script} --payload <file.json> [messages] [--proto <file.proto> --type <Name>] [options]\n\n` +
    `Sends [messages] ${format ?? 'the --format\'s'} messages of <test> and reports latency, throughput and bytes.\n` +
    'Tests: 1 numbers, 2 strings, 3 medium, 4 large, 5 small (by number or name), people, person, counters.')
    .command('$0 [test] [messages]', false)
    .positional('test', { describe: 'test payload, by number or name', type: 'string' })
    .positional('messages', { describe: 'messages to send and record [default: 10000]' })
    .options({
      ...formatOption,
      ...PAYLOAD_OPTIONS,
      url: { describe: 'server URL (ws:// or wss://)', default: DEFAULT_URL, type: 'string' },
      connections: { alias: 'c', describe: 'parallel WebSocket connections', default: 1 },
      inflight: { alias: 'i', describe: 'messages outstanding per connection (1 = strict request/response) [default: 1, with --rate 1000]' },
      rate: { alias: 'r', describe: 'open loop: messages per second in total, latency from the schedule', type: 'number' },
      duration: { alias: 'd', describe: 'run for this long instead of a message count: 30s, 500ms, 2m', type: 'string' },
      warmup: { alias: 'w', describe: 'messages (or a time: 2s) sent first and not recorded', default: '0', type: 'string' },
      workers: { describe: 'worker threads, each with its share of connections, messages and rate', default: 1 },
      out: { describe: 'also write the JSON report to this file', type: 'string' },
      'hdr-out': { describe: 'write the latency histograms as an HdrHistogram interval log', type: 'string' },
      assert: { describe: 'threshold that fails the run (exit 1), repeatable: "p99<20ms", "errors==0", "rate>=5000"', type: 'array', string: true, default: [] },
      header: { alias: 'H', describe: 'extra upgrade header "Name: value", repeatable', type: 'array', string: true, default: [] },
      token: { describe: 'sent as Authorization: Bearer <token>; default from BENCH_TOKEN', type: 'string', default: process.env.BENCH_TOKEN },
      subprotocol: { describe: 'Sec-WebSocket-Protocol to ask for', type: 'string' },
      insecure: { describe: 'wss:// without verifying the certificate (self-signed servers)', type: 'boolean', default: false },
      ack: { describe: 'what counts as the reply (up): ACK, any, or text:<reply>', default: 'ACK', type: 'string' },
      reconnect: { describe: 'when a connection drops, reconnect (within --timeout) and go on', type: 'boolean', default: false },
      timeout: { describe: 'per-message timeout in ms; a message with no reply by then is lost', default: 10000 },
      compress: { describe: 'offer permessage-deflate', type: 'boolean', default: false },
      direction: { describe: 'up: send the payload, server ACKs; down: server sends it; echo: server sends it back', choices: DIRECTIONS, default: 'up' },
      json: { describe: 'print one JSON object instead of the human report', type: 'boolean', default: false },
      throttle: { describe: `network profile: none, ${Object.keys(PROFILES).join(', ')}`, type: 'string' },
      up: { describe: 'client-to-server bandwidth, kbit/s (overrides the profile)', type: 'number' },
      down: { describe: 'server-to-client bandwidth, kbit/s (overrides the profile)', type: 'number' },
      rtt: { describe: 'round-trip time to add, ms (overrides the profile)', type: 'number' },
      loss: { describe: 'packet loss %, kernel shaping (tc) only', type: 'number' },
      'throttle-backend': { describe: 'auto: tc when it can work here, else proxy', choices: BACKENDS, default: 'auto' }
    })
    .example(`node ${script} 4 100 --throttle 3g`, 'test 4 over a 3G profile')
    .example(`node ${script} 5 50 --rtt 100 --up 400 --down 400`, 'a custom network')
    .example(`node ${script} 3 100000`, 'test 3 (medium), 100,000 messages, one at a time')
    .example(`node ${script} small 100000 --inflight 100`, 'test 5 with 100 messages in flight')
    .example(`node ${script} 4 1000 --connections 4 --json`, 'four connections, JSON report on stdout')
    .example(`node ${script} --payload my.json 1000`, 'your own document, schema inferred')
    .example(`node ${script} --payload my.json 1000 --proto my.proto --type shop.Order`, 'your own document and schema')
    .parseAsync()
  const custom = payloadFiles(args)
  const durationMs = args.duration === undefined ? undefined : duration('duration', args.duration)
  let test = args.test
  let messages = args.messages
  if (custom) {
    if (messages !== undefined) throw new UsageError(`give either a test ('${test}') or --payload, not both`)
    messages = test
    test = null
    if (args.direction === 'down') throw new UsageError('--direction down needs a built-in test: the server cannot know your payload')
  } else if (test === undefined) {
    throw new UsageError('name a test (1-5, people, person, counters) or give --payload <file.json> (see --help)')
  }
  const rate = args.rate === undefined ? undefined : positiveNumber('rate', args.rate)
  return {
    format: format ?? args.format,
    test: test === null ? null : String(test),
    custom,
    allowLossy: args.allowLossy,
    messages: messages === undefined ? (durationMs === undefined ? 10000 : undefined) : wholeNumber('messages', messages, 1),
    durationMs,
    rate,
    warmup: /[a-z]$/i.test(args.warmup) ? { durationMs: duration('warmup', args.warmup) } : { messages: wholeNumber('warmup', args.warmup, 0) },
    workers: wholeNumber('workers', args.workers, 1),
    out: args.out,
    hdrOut: args.hdrOut,
    assert: args.assert,
    headers: upgradeHeaders(args.header, args.token),
    subprotocol: args.subprotocol,
    insecure: args.insecure,
    ack: ackRule(args.ack),
    reconnect: args.reconnect,
    url: parseWsUrl(args.url),
    connections: wholeNumber('connections', args.connections, 1),
    inflight: wholeNumber('inflight', args.inflight ?? (rate ? 1000 : 1), 1),
    timeout: wholeNumber('timeout', args.timeout, 1),
    compress: args.compress,
    direction: args.direction,
    json: args.json,
    network: resolveNetwork({ throttle: args.throttle, up: args.up, down: args.down, rtt: args.rtt, loss: args.loss }),
    throttleBackend: args.throttleBackend
  }
}

/**
 * Parses the server's command line; PORT in the environment sets the default port, BENCH_TOKEN
 * the token (an environment variable keeps it out of `ps` listings).
 * @param {string[]} argv process.argv
 * @param {NodeJS.ProcessEnv} env
 * @returns {Promise<{host: string, port: number, maxPayload: number, maxConnections: number, maxSchemaBytes: number,
 *   stall?: {ms: number, after: number}, compress: boolean, token?: string}>}
 */
export async function parseServerArgs (argv, env) {
  const args = await commandLine(argv, 'Usage: node server.js [options]\n\n' +
    'WebSocket server that decodes each message (JSON, protobuf, or another format) and replies ACK.\n' +
    `Clients connect to ws://HOST:PORT/?test=<number|name>&format=<${FORMATS.join('|')}>.`)
    .options({
      host: { describe: 'interface to listen on', default: '127.0.0.1', type: 'string' },
      port: { alias: 'p', describe: 'port (0 picks a free one); default from PORT', default: env.PORT ?? DEFAULT_PORT },
      'max-payload': { describe: 'largest accepted message in bytes (bigger ones close the connection with 1009)', default: DEFAULT_MAX_PAYLOAD },
      stall: { describe: 'test hook: once, after N messages, block for MS milliseconds: MS@N, e.g. 300@500', type: 'string' },
      'max-schema-bytes': { describe: 'largest .proto a client may register for its own payload (0: refuse registrations)', default: MAX_SCHEMA_BYTES },
      'max-connections': { describe: 'open connections beyond which upgrades are refused with 503', default: DEFAULT_MAX_CONNECTIONS },
      compress: { describe: 'accept permessage-deflate', type: 'boolean', default: false },
      token: { describe: 'require this token on upgrades (Authorization: Bearer, or ?token=); default from BENCH_TOKEN', type: 'string', default: env.BENCH_TOKEN }
    })
    .example('node server.js', `listen on 127.0.0.1:${DEFAULT_PORT}`)
    .example('BENCH_TOKEN=s3cret node server.js --host 0.0.0.0', 'reachable from other hosts, token required')
    .example('node server.js --port 0', 'listen on a free port (printed)')
    .parseAsync()
  const port = wholeNumber('port', args.port, 0)
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`)
  return {
    host: args.host,
    port,
    maxPayload: wholeNumber('max-payload', args.maxPayload, 1),
    maxConnections: wholeNumber('max-connections', args.maxConnections, 1),
    maxSchemaBytes: wholeNumber('max-schema-bytes', args.maxSchemaBytes, 0),
    stall: args.stall === undefined ? undefined : stallHook(args.stall),
    compress: args.compress,
    token: args.token || undefined
  }
}

const DURATION_UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

/**
 * Reads a duration such as `30s`, `500ms`, `2m` or `1h` (a bare number is seconds).
 * @param {string} name option name, for the message
 * @param {string|number} text
 * @returns {number} milliseconds, > 0
 */
export function duration (name, text) {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(String(text).trim())
  if (!match || Number(match[1]) <= 0) throw new UsageError(`--${name} must be a duration such as 30s, 500ms or 2m, got '${text}'`)
  return Math.round(Number(match[1]) * DURATION_UNITS[match[2] ?? 's'])
}

function positiveNumber (name, value) {
  const number = Number(value)
  if (!Number.isFinite(number) || number <= 0) throw new UsageError(`--${name} must be a number > 0, got '${value}'`)
  return number
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

function stallHook (text) {
  const match = /^(\d+)@(\d+)$/.exec(text)
  if (!match || Number(match[2]) < 1) throw new UsageError(`--stall must be MS@MESSAGES, e.g. 300@500, got '${text}'`)
  return { ms: Number(match[1]), after: Number(match[2]) }
}

function ackRule (text) {
  if (text === 'any') return { any: true }
  if (text === 'ACK') return { text: 'ACK' }
  if (text.startsWith('text:') && text.length > 5) return { text: text.slice(5) }
  throw new UsageError(`--ack must be ACK, any or text:<reply>, got '${text}'`)
}

function commaList (text) {
  return text.split(',').map((item) => item.trim()).filter(Boolean)
}

function parseWsUrl (text) {
  let url
  try {
    url = new URL(text)
  } catch {
    throw new UsageError(`--url '${text}' is not a URL (expected ws://host:port)`)
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') {
    throw new UsageError(`--url must start with ws:// or wss://, got '${text}'`)
  }
  return url.href.replace(/\/$/, '')
}

/**
 * Parses `npm run compare`'s command line. Messages and warmup stay undefined unless given, so
 * each test gets a length that suits its size (see runLength in lib/compare.js).
 * @param {string[]} argv process.argv
 * @returns {Promise<{formats: string[], tests: string[], custom: {payload: string, proto?: string, type?: string}|null, allowLossy: boolean,
 *   profiles: string[], compress: boolean, direction: string, messages?: number, warmup?: number,
 *   inflight: number, connections: number, json: boolean, out: string}>}
 */
export async function parseCompareArgs (argv) {
  const args = await commandLine(argv, 'Usage: npm run compare -- [options]\n\n' +
    'Starts a server, runs the JSON and the protobuf client (or the --formats chosen) on each test and\n' +
    'network profile, prints one side-by-side table and writes results.json, results.md and report.html.')
    .options({
      ...PAYLOAD_OPTIONS,
      formats: { describe: `comma-separated formats, the first is the baseline of the ratios: ${FORMATS.join(', ')}`, default: DEFAULT_FORMATS.join(','), type: 'string' },
      tests: { describe: 'comma-separated tests, by number or name', default: ALL_TESTS.join(','), type: 'string' },
      throttle: { describe: 'comma-separated network profiles (none = no shaping)', default: 'none', type: 'string' },
      compress: { describe: 'permessage-deflate on server and clients', type: 'boolean', default: false },
      direction: { describe: 'up: clients send the payload; down: the server sends it; echo: both', choices: DIRECTIONS, default: 'up' },
      messages: { alias: 'n', describe: `messages per client run [default: ${DEFAULT_MESSAGES}, fewer for big payloads: at most ${DEFAULT_BYTES_PER_RUN / 1024 / 1024} MiB of JSON per run]` },
      inflight: { alias: 'i', describe: 'messages outstanding per connection', default: 1 },
      connections: { alias: 'c', describe: 'parallel connections per client', default: 1 },
      warmup: { alias: 'w', describe: `messages sent first and not recorded [default: ${DEFAULT_WARMUP}, at most a tenth of the run]` },
      out: { alias: 'o', describe: 'directory for results.json, results.md and report.html', default: 'compare-report', type: 'string' },
      json: { describe: 'print the results document as JSON instead of the table', type: 'boolean', default: false }
    })
    .example('npm run compare', 'every test, JSON vs protobuf, on loopback')
    .example('npm run compare -- --tests 1,5 --inflight 100', 'tests 1 and 5, 100 in flight')
    .example('npm run compare -- --tests 4,5 --throttle none,3g -n 50', 'tests 4 and 5 on loopback and on 3G')
    .example('npm run compare -- --tests people --compress', 'the 12.9 MB payload with permessage-deflate')
    .example('npm run compare -- --tests people --direction down', 'the server sends 50,000 persons, clients decode them')
    .example('npm run compare -- --payload my.json', 'your own document, schema inferred')
    .example('npm run compare -- --formats json,protobuf,msgpack,cbor', 'MessagePack and CBOR beside them')
    .parseAsync()
  const profiles = commaList(args.throttle)
  for (const profile of profiles) resolveNetwork({ throttle: profile })
  const custom = payloadFiles(args)
  if (custom && argv.some((arg) => arg === '--tests' || arg.startsWith('--tests='))) throw new UsageError('give either --tests or --payload, not both')
  if (custom && args.direction === 'down') throw new UsageError('--direction down needs built-in tests: the server cannot know your payload')
  const tests = custom ? [] : commaList(args.tests)
  for (const test of tests) resolveTest(test)
  const formats = commaList(args.formats)
  if (formats.length === 0) throw new UsageError(`--formats needs at least one of ${FORMATS.join(', ')}`)
  for (const format of formats) {
    if (!FORMATS.includes(format)) throw new UsageError(`unknown format '${format}' in --formats: expected some of ${FORMATS.join(', ')}`)
    if (custom && !CUSTOM_FORMATS.includes(format)) throw new UsageError(`format '${format}' does not support custom payloads: use ${CUSTOM_FORMATS.join(', ')}`)
  }
  if (new Set(formats).size !== formats.length) throw new UsageError(`--formats names a format twice: ${args.formats}`)
  return {
    formats,
    tests,
    custom,
    allowLossy: args.allowLossy,
    profiles,
    compress: args.compress,
    direction: args.direction,
    messages: args.messages === undefined ? undefined : wholeNumber('messages', args.messages, 1),
    warmup: args.warmup === undefined ? undefined : wholeNumber('warmup', args.warmup, 0),
    inflight: wholeNumber('inflight', args.inflight, 1),
    connections: wholeNumber('connections', args.connections, 1),
    out: args.out,
    json: args.json
  }
}

/**
 * Parses `node bin/merge.js`'s command line.
 * @param {string[]} argv process.argv
 * @returns {Promise<{files: string[], json: boolean, out?: string, hdrOut?: string, assert: string[]}>}
 */
export async function parseMergeArgs (argv) {
  const args = await commandLine(argv, 'Usage: node bin/merge.js <report.json>... [options]\n\n' +
    'Merges client reports (--json or --out files) of one format and test, from several processes or\n' +
    'machines, into one: counts summed, latency histograms added exactly.')
    .command('$0 <files..>', false)
    .positional('files', { describe: 'report files', type: 'string' })
    .options({
      json: { describe: 'print the merged report as JSON', type: 'boolean', default: false },
      out: { describe: 'also write the merged JSON report to this file', type: 'string' },
      'hdr-out': { describe: 'write the merged per-second histograms as an HdrHistogram interval log', type: 'string' },
      assert: { describe: 'threshold on the merged report, repeatable (as for the clients)', type: 'array', string: true, default: [] }
    })
    .example('node bin/merge.js host-*.json --assert "p99<20ms"', 'one report for a multi-host run, checked')
    .parseAsync()
  return { files: args.files, json: args.json, out: args.out, hdrOut: args.hdrOut, assert: args.assert }
}

/**
 * Parses the standalone shaping proxy's command line.
 * @param {string[]} argv process.argv
 * @returns {Promise<{listenHost: string, listenPort: number, targetHost: string, targetPort: number, network: object}>}
 */
export async function parseProxyArgs (argv) {
  const args = await commandLine(argv, 'Usage: node bin/shaping-proxy.js --listen <port> --target <host:port> [--throttle <profile>] [--up --down --rtt]\n\n' +
    'A TCP proxy that delays each direction by rtt/2 and limits its bandwidth.')
    .options({
      listen: { describe: 'port (or host:port) to listen on', type: 'string', demandOption: true },
      target: { describe: 'host:port to forward to', type: 'string', demandOption: true },
      throttle: { describe: `profile: ${Object.keys(PROFILES).join(', ')}`, type: 'string' },
      up: { describe: 'client-to-server kbit/s', type: 'number' },
      down: { describe: 'server-to-client kbit/s', type: 'number' },
      rtt: { describe: 'round trip to add, ms', type: 'number' }
    })
    .example('node bin/shaping-proxy.js --listen 7071 --target 127.0.0.1:7070 --throttle 3g', 'then point a client at ws://127.0.0.1:7071')
    .parseAsync()
  const [listenHost, listenPort] = hostAndPort(args.listen, '127.0.0.1')
  const [targetHost, targetPort] = hostAndPort(args.target, '127.0.0.1')
  const network = resolveNetwork({ throttle: args.throttle, up: args.up, down: args.down, rtt: args.rtt })
  if (!network) throw new UsageError('give a --throttle profile or --up/--down/--rtt')
  return { listenHost, listenPort, targetHost, targetPort, network }
}

function hostAndPort (text, defaultHost) {
  const match = /^(?:(.+):)?(\d+)$/.exec(text)
  if (!match) throw new UsageError(`expected [host:]port, got '${text}'`)
  return [match[1] ?? defaultHost, wholeNumber('port', match[2], 0)]
}
