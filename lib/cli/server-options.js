// The server's command line (server.js).
import { UsageError } from '../errors.js'
import { DEFAULT_HANDSHAKE_TIMEOUT_MS, DEFAULT_MAX_BUFFERED, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_PAYLOAD, DEFAULT_PORT, MAX_SCHEMA_BYTES } from '../defaults.js'
import { formatNames } from '../codecs/registry.js'
import { parseBrokerUrl } from '../server/broker.js'
import { CODEC_MODULE_OPTION, codecModulesFor, commandLine, duration, wholeNumber } from './parser.js'
import { programName } from './program.js'
import { parseTags } from './outputs.js'

/** More worker processes than this is a typo, not a server: each costs about 50 MB before its first connection. */
const MAX_PROCESSES = 256

/**
 * Parses the server's command line; PORT in the environment sets the default port, BENCH_TOKEN
 * the token (an environment variable keeps it out of `ps` listings).
 * @param {string[]} argv process.argv
 * @param {NodeJS.ProcessEnv} env
 * @returns {Promise<{host: string, port: number, maxPayload: number, maxConnections: number, maxSchemaBytes: number,
 *   handshakeTimeoutMs: number, stall?: {ms: number, after: number}, compress: boolean, maxBuffered: number,
 *   replay: number, processes: number, token?: string, broker?: string, tags: Record<string, string>,
 *   tls?: import('../server/tls.js').Certificate, codecModules: string[]}>}
 */
export async function parseServerArgs (argv, env) {
  const program = programName('node server.js')
  const args = await commandLine(argv, `Usage: ${program} [options]\n\n` +
    'WebSocket server that decodes each message (JSON, protobuf, or another format) and replies ACK.\n' +
    `Clients connect to ws://HOST:PORT/?test=<number|name>&format=<${formatNames().join('|')}>, or a format a --codec-module adds.`)
    .options({
      host: { describe: 'interface to listen on', default: '127.0.0.1', type: 'string' },
      port: { alias: 'p', describe: 'port (0 picks a free one); default from PORT', default: env.PORT ?? DEFAULT_PORT },
      'max-payload': { describe: 'largest accepted message in bytes (bigger ones close the connection with 1009)', default: DEFAULT_MAX_PAYLOAD },
      stall: { describe: 'test hook: once, after N messages, block for MS milliseconds: MS@N, e.g. 300@500', type: 'string' },
      'max-schema-bytes': { describe: 'largest .proto a client may register for its own payload (0: refuse registrations)', default: MAX_SCHEMA_BYTES },
      'max-connections': { describe: 'open connections per process beyond which upgrades are refused with 503', default: DEFAULT_MAX_CONNECTIONS },
      'handshake-timeout': { describe: 'close connections that have not finished their upgrade (or request) within this time: 10s, 500ms', default: `${DEFAULT_HANDSHAKE_TIMEOUT_MS / 1000}s`, type: 'string' },
      compress: { describe: 'accept permessage-deflate', type: 'boolean', default: false },
      'max-buffered': { describe: 'fan-out: drop a subscriber with more than this many bytes unsent (it cannot keep up)', default: DEFAULT_MAX_BUFFERED },
      replay: { describe: 'fan-out: keep the last N measured publishes of each topic, for subscribers that come back asking for what they missed (0: none)', default: 0 },
      processes: { describe: 'worker processes sharing the port, each with its own event loop and open-file limit (summary lines and /metrics sum them)', default: 1 },
      token: { describe: 'require this token on upgrades (Authorization: Bearer, or ?token=); default from BENCH_TOKEN', type: 'string', default: env.BENCH_TOKEN },
      'tls-cert': { describe: 'serve wss:// and https:// with this certificate (PEM, the chain if any); needs --tls-key', type: 'string' },
      'tls-key': { describe: 'the private key (PEM) of --tls-cert', type: 'string' },
      tls: { describe: 'serve wss:// with a throwaway self-signed certificate, for a quick run (its SHA-256 and file are printed: clients take it with --ca, or --insecure)', type: 'boolean', default: false },
      broker: { describe: 'fan-out across processes or servers through redis://HOST:PORT, nats://HOST:PORT, or ipc (the primary relays between --processes)', type: 'string' },
      tag: { describe: 'label every series of /metrics key=value, repeatable: --tag testid=<id>, the clients\' run id, joins them with what the clients stream (--out)', type: 'array', string: true, default: [] },
      ...CODEC_MODULE_OPTION
    })
    .example(`${program}`, `listen on 127.0.0.1:${DEFAULT_PORT}`)
    .example(`BENCH_TOKEN=s3cret ${program} --host 0.0.0.0`, 'reachable from other hosts, token required')
    .example(`${program} --port 0`, 'listen on a free port (printed)')
    .example(`BENCH_TOKEN=s3cret ${program} --host 0.0.0.0 --tls-cert cert.pem --tls-key key.pem`, 'wss:// from other hosts: the token never crosses in clear')
    .example(`${program} --tls`, 'wss:// on a throwaway certificate')
    .example(`${program} --processes 2`, 'two processes: more connections than one process may hold')
    .example(`${program} --processes 2 --broker redis://127.0.0.1:6379`, 'two processes, fan-out between them through Redis')
    .example(`${program} --replay 100`, 'fan-out: a subscriber that reconnects gets up to 100 publishes it missed')
    .example(`${program} --codec-module ./my-format.js`, 'also serve the format that module adds (docs/codecs.md)')
    .parseAsync()
  const port = wholeNumber('port', args.port, 0)
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`)
  const processes = wholeNumber('processes', args.processes, 1)
  if (processes > MAX_PROCESSES) throw new UsageError(`--processes must be at most ${MAX_PROCESSES}, got ${processes}`)
  const broker = args.broker === undefined ? undefined : checkedBroker(args.broker, processes)
  return {
    host: args.host,
    port,
    maxPayload: wholeNumber('max-payload', args.maxPayload, 1),
    maxConnections: wholeNumber('max-connections', args.maxConnections, 1),
    maxSchemaBytes: wholeNumber('max-schema-bytes', args.maxSchemaBytes, 0),
    handshakeTimeoutMs: duration('handshake-timeout', args.handshakeTimeout),
    stall: args.stall === undefined ? undefined : stallHook(args.stall),
    compress: args.compress,
    maxBuffered: wholeNumber('max-buffered', args.maxBuffered, 1),
    replay: wholeNumber('replay', args.replay, 0),
    processes,
    token: args.token || undefined,
    broker,
    tags: parseTags(args.tag),
    tls: await certificate(args),
    // Checked here, before any port is bound: every --processes worker adds them again.
    codecModules: await codecModulesFor(args.codecModule, [])
  }
}

/**
 * The certificate to serve TLS with: the user's, read and checked before any port is bound, or a
 * throwaway one made once here, so that every --processes worker serves the same.
 * @returns {Promise<import('../server/tls.js').Certificate|undefined>} undefined: plain ws://
 */
async function certificate ({ tls, tlsCert, tlsKey, host }) {
  if (tls && (tlsCert !== undefined || tlsKey !== undefined)) throw new UsageError('--tls makes a throwaway certificate: give it, or --tls-cert and --tls-key, not both')
  if ((tlsCert === undefined) !== (tlsKey === undefined)) throw new UsageError('--tls-cert and --tls-key go together: the certificate and its private key')
  if (!tls && tlsCert === undefined) return undefined
  const { readCertificate, throwawayCertificate } = await import('../server/tls.js')
  return tls ? throwawayCertificate([host]) : readCertificate(tlsCert, tlsKey)
}

/** The --broker URL, known to name a broker; ipc relays through a cluster's primary, so it needs one. */
function checkedBroker (url, processes) {
  try {
    parseBrokerUrl(url)
  } catch (err) {
    throw new UsageError(`--broker: ${err.message}`)
  }
  if (url === 'ipc' && processes < 2) throw new UsageError('--broker ipc relays between worker processes: it needs --processes 2 or more')
  return url
}

function stallHook (text) {
  const match = /^(\d+)@(\d+)$/.exec(text)
  if (!match || Number(match[2]) < 1) throw new UsageError(`--stall must be MS@MESSAGES, e.g. 300@500, got '${text}'`)
  return { ms: Number(match[1]), after: Number(match[2]) }
}
