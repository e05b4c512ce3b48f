// The benchmark server of one process: plain HTTP (the browser client, /metrics) and WebSocket
// upgrades on one port. Admission decides each upgrade (admission.js), the connection handler
// answers its messages (connection.js), ServerStats counts and prints the summary lines (stats.js).
import http from 'node:http'
import https from 'node:https'
import { WebSocketServer } from 'ws'
import { loadMessages, TESTS } from '../payloads/catalog.js'
import { addCodecModules, formatNames } from '../codecs/registry.js'
import { UsageError, oneLine } from '../errors.js'
import { createWebHandler } from './web.js'
import { createMetrics, METRICS_CONTENT_TYPE } from './metrics.js'
import { ServerStats, startSummaries } from './stats.js'
import { Admission, Refusal } from './admission.js'
import { openFileLimit } from '../processes.js'
import { serveConnection, stallOnce } from './connection.js'
import { Topics } from './fanout.js'
import { CLOSE_CODES, DIRECTIONS, METRICS_PATH, QUERY } from '../protocol.js'
import {
  DEFAULT_HANDSHAKE_TIMEOUT_MS, DEFAULT_MAX_BUFFERED, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_PAYLOAD, MAX_SCHEMA_BYTES
} from '../defaults.js'

/** What a plain HTTP request for neither the browser client nor /metrics is told, with this server's formats. */
const connectHint = (scheme) => `WebSocket clients connect to ${scheme}://HOST:PORT/?${QUERY.test}=<${TESTS.map((t) => t.name).join('|')}>` +
  `&${QUERY.format}=<${formatNames().join('|')}>&${QUERY.direction}=<${DIRECTIONS.join('|')}>; GET / is the browser client`

/** Node checks connections against the handshake timeout at least this often: one goes within this much past it. */
const MAX_TIMEOUT_CHECK_MS = 1000

/**
 * Starts the benchmark WebSocket server: every message is decoded with the connection's codec and
 * answered, in order, with `ACK`, or with `ERR <reason>` when it cannot be decoded.
 * @param {object} [options]
 * @param {string} [options.host] interface to bind (default 127.0.0.1)
 * @param {number} [options.port] port to bind, 0 for any free port (default 7070)
 * @param {number} [options.maxPayload] largest accepted message in bytes
 * @param {boolean} [options.compress] offer permessage-deflate
 * @param {number} [options.maxConnections] open connections beyond which upgrades get 503
 * @param {number} [options.maxSchemaBytes] largest .proto a client may register for a custom
 *   payload; 0 refuses registrations
 * @param {number} [options.handshakeTimeoutMs] a connection that has not finished its upgrade (or
 *   HTTP request) this long after it opened is closed and counted (default 10 s)
 * @param {{ms: number, after: number}} [options.stall] test hook: once, after that many messages,
 *   block the event loop for ms (a GC pause, a slow disk), to show what coordinated omission hides
 * @param {string} [options.token] when set, upgrades must carry it (`Authorization: Bearer <token>`
 *   or `?token=`); others get 401
 * @param {number} [options.maxBuffered] bytes a fan-out subscriber may have unsent before it is dropped
 * @param {number} [options.replay] measured publishes each fan-out topic keeps for subscribers that come back
 * @param {string} [options.broker] where publishes meet the other processes' subscribers (redis://,
 *   nats:// or ipc); losing it stops the server (see `lost`)
 * @param {boolean} [options.peers] other processes serve the same port (a --processes worker): without
 *   a broker, fan-out upgrades are refused, as their publishes could not reach every subscriber
 * @param {string[]} [options.codecModules] codec modules a user wrote (--codec-module): their
 *   formats are served beside the built-in ones
 * @param {{cert: string, key: string}} [options.tls] serve wss:// and https:// with this certificate and key (PEM)
 * @param {Record<string, string>} [options.tags] labels on every series of its /metrics (--tag: the run id, testid, that
 *   the clients' streamed series carry too)
 * @param {(line: string) => void} [options.log] receives the periodic summary lines
 * @param {() => Promise<string>} [options.exposition] the text GET /metrics answers; by default this
 *   process's own registry's (a worker of a --processes server asks its primary for all processes')
 * @returns {Promise<BenchServer>}
 */
export async function startServer ({
  host = '127.0.0.1',
  port = 7070,
  maxPayload = DEFAULT_MAX_PAYLOAD,
  compress = false,
  maxConnections = DEFAULT_MAX_CONNECTIONS,
  maxSchemaBytes = MAX_SCHEMA_BYTES,
  handshakeTimeoutMs = DEFAULT_HANDSHAKE_TIMEOUT_MS,
  stall,
  token,
  maxBuffered = DEFAULT_MAX_BUFFERED,
  replay = 0,
  broker: brokerUrl,
  peers = false,
  codecModules = [],
  tls,
  tags = {},
  log = () => {},
  exposition
} = {}) {
  await addCodecModules(codecModules)
  const stats = new ServerStats()
  const openConnections = () => stats.openConnections
  let reportLost
  const lost = new Promise((resolve) => { reportLost = resolve })
  const fanout = await startFanout({ stats, maxBuffered, replay, brokerUrl, peers, onLost: reportLost })
  const { topics, broker, fanoutRefusal } = fanout
  const admission = new Admission({ token, maxConnections, fileLimit: openFileLimit(), openConnections, fanoutRefusal })
  const registry = createMetrics(stats, tags)
  const metricsText = exposition ?? (() => registry.metrics())
  const httpServer = createHttpServer(admission, stats, handshakeTimeoutMs, metricsText, tls)
  const wss = new WebSocketServer({ noServer: true, maxPayload, perMessageDeflate: compress })
  const afterMessage = stall ? stallOnce(stall) : () => {}
  const context = { stats, maxSchemaBytes, schemaCache: new Map(), afterMessage, topics }
  const stopUpgrades = acceptUpgrades(httpServer, wss, admission, context)
  const address = await listen(httpServer, host, port, stats, tls ? 'wss' : 'ws').catch(async (err) => {
    await broker?.close()
    throw err
  })
  const stopSummaries = startSummaries(stats, log)
  return benchServer({
    address,
    stats,
    lost, // a broker that goes away; one process has no worker to lose
    metrics: () => registry.getMetricsAsJSON(),
    shutDown: async () => {
      stopUpgrades()
      stopSummaries()
      await shutDown(httpServer, wss)
      await broker?.close()
    }
  })
}

/**
 * Takes every upgrade through admission, then opens it and serves the connection, or refuses it
 * (counted, with its HTTP status) once the server is stopping.
 * @returns {() => void} stops: upgrades admitted from then on are refused 503
 */
function acceptUpgrades (httpServer, wss, admission, context) {
  let stopping = false
  httpServer.on('upgrade', (request, socket, head) => {
    socket.on('error', () => socket.destroy())
    const refuse = (refusal) => {
      context.stats.count(refusal.counter)
      refuseUpgrade(socket, refusal)
    }
    admission.admit(request, socket).then((admitted) => {
      // Checked in the turn that upgrades (handleUpgrade opens it there and then): a connection
      // either opens before shutDown closes the open ones, or is refused.
      if (stopping) return refuse(new Refusal(503, 'server shutting down'))
      wss.handleUpgrade(request, socket, head, (ws) => {
        admitted.opened()
        serveConnection(ws, socket, admitted, context)
      })
    }, refuse)
  })
  return () => { stopping = true }
}

/**
 * Fan-out's topics, joined to the other processes' through the broker when there is one; without
 * one, a process with peers refuses fan-out, as its publishes could not reach every subscriber.
 */
async function startFanout ({ stats, maxBuffered, replay, brokerUrl, peers, onLost }) {
  const broker = brokerUrl ? await (await import('./broker.js')).connectBroker(brokerUrl, { onLost }) : null
  const fanoutRefusal = peers && !broker
    ? 'fan-out across server processes needs a broker: start the server with --broker (redis://, nats:// or ipc)'
    : null
  return { topics: new Topics({ stats, maxBuffered, broker, replay }), broker, fanoutRefusal }
}

/**
 * @typedef {object} BenchServer what startServer and startCluster both return
 * @property {string} url ws://host:port (wss:// with TLS), without the query
 * @property {string} host
 * @property {number} port
 * @property {import('./stats.js').ServerStats} stats the counters: live for one process, a cluster's
 *   summed as of its last summary line (or its close)
 * @property {Promise<string>} lost resolves with a one-line reason if a process of the server exits
 *   while it runs (a cluster's worker) or its broker goes away
 * @property {() => Promise<object[]>} metrics the server's metrics as prom-client JSON (a cluster's summed)
 * @property {() => Promise<void>} close closes every connection with 1001 and stops listening; once
 */

/**
 * The one shape both kinds of server return.
 * @param {{address: {url: string, host: string, port: number}, stats: object, lost: Promise<string>,
 *   metrics: () => Promise<object[]>, shutDown: () => Promise<void>}} parts
 * @returns {BenchServer}
 */
export function benchServer ({ address, stats, lost, metrics, shutDown }) {
  let closing = null
  return {
    url: address.url,
    host: address.host,
    port: address.port,
    stats,
    lost,
    metrics,
    close () {
      closing ??= shutDown()
      return closing
    }
  }
}

/**
 * HTTP (HTTPS with a certificate) on the server's port: /metrics, else the browser client's files.
 * A connection that has not sent a whole request (an upgrade is one) within the handshake timeout,
 * its TLS handshake included, is closed and counted: Node's own header and request timeouts,
 * checked often enough to keep to it.
 */
function createHttpServer (admission, stats, handshakeTimeoutMs, metrics, tls) {
  const web = createWebHandler(loadMessages, connectHint(tls ? 'wss' : 'ws'))
  const timeouts = {
    headersTimeout: handshakeTimeoutMs,
    requestTimeout: handshakeTimeoutMs,
    connectionsCheckingInterval: Math.min(MAX_TIMEOUT_CHECK_MS, handshakeTimeoutMs / 4)
  }
  const httpServer = (tls ? https : http).createServer({
    ...timeouts,
    ...(tls && { cert: tls.cert, key: tls.key, handshakeTimeout: handshakeTimeoutMs })
  }, (request, response) => {
    if (new URL(request.url, 'http://placeholder').pathname !== METRICS_PATH) return web(request, response)
    serveMetrics(request, response, metrics, admission.isAuthorized)
  })
  // A burst of connections holds a file each before any upgrade request is read; past this many
  // sockets new ones are closed at once, so the reserve stays free.
  if (Number.isFinite(admission.socketLimit)) httpServer.maxConnections = admission.socketLimit
  httpServer.on('drop', () => stats.count('dropped'))
  httpServer.on('clientError', (err, socket) => {
    if (err.code !== 'ERR_HTTP_REQUEST_TIMEOUT') return socket.destroy(err) // a client that dropped mid-handshake
    stats.count('handshakeTimeouts')
    if (socket.writable) socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n')
    socket.destroy()
  })
  if (tls) httpServer.on('tlsClientError', (err, socket) => refusePlainRequest(err, socket, stats))
  return httpServer
}

/**
 * A TLS handshake that failed: one that timed out is counted with the other handshake timeouts;
 * plain HTTP (a ws:// client, http:// in a browser) is answered 400 in plain text, so that it
 * learns why, instead of a reset it cannot tell from a crash.
 */
function refusePlainRequest (err, socket, stats) {
  if (err.code === 'ERR_TLS_HANDSHAKE_TIMEOUT') stats.count('handshakeTimeouts')
  if (err.code !== 'ERR_SSL_HTTP_REQUEST') return
  // The TCP socket under the TLS one (Node's _parent): the request's bytes never became TLS.
  const tcp = socket._parent
  if (!tcp?.writable) return
  const body = 'this port speaks TLS: connect with wss:// (or https://)\n'
  tcp.end(`HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
}

/** Listens; resolves with where, or rejects with one line (a taken port). */
async function listen (httpServer, host, port, stats, scheme) {
  await new Promise((resolve, reject) => {
    httpServer.once('error', (err) => reject(new UsageError(`cannot listen on ${host}:${port}: ${err.code ?? err.message}`)))
    httpServer.listen(port, host, resolve)
  })
  // Past listening, an error is a connection this process could not accept (EMFILE): counted, never fatal.
  httpServer.on('error', () => stats.count('dropped'))
  const address = httpServer.address()
  const url = `${scheme}://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
  return { url, host: address.address, port: address.port }
}

/**
 * GET /metrics for Prometheus (and compare, which reads it around each run). With a token set,
 * it asks for the same token as the upgrades.
 */
async function serveMetrics (request, response, metrics, isAuthorized) {
  const refuse = (status, text, headers = {}) => {
    response.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...headers })
    response.end(`${text}\n`)
  }
  if (request.method !== 'GET' && request.method !== 'HEAD') return refuse(405, 'GET /metrics')
  if (!isAuthorized(request)) return refuse(401, 'missing or wrong token', { 'WWW-Authenticate': 'Bearer' })
  let body
  try {
    body = await metrics()
  } catch (err) {
    return refuse(503, `metrics unavailable: ${oneLine(err)}`)
  }
  response.writeHead(200, { 'Content-Type': METRICS_CONTENT_TYPE, 'Content-Length': Buffer.byteLength(body) })
  response.end(request.method === 'HEAD' ? undefined : body)
}

/** Answers a refused upgrade on the raw socket: its status, reason and any headers, then closes. */
function refuseUpgrade (socket, { status, message, headers }) {
  const body = `${message}\n`
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n${headers}` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  )
}

async function shutDown (httpServer, wss) {
  // No new connections from now on; its callback waits for the open ones to end.
  const stopped = new Promise((resolve) => httpServer.close(resolve))
  const closed = [...wss.clients].map((ws) => new Promise((resolve) => {
    ws.once('close', resolve)
    ws.close(CLOSE_CODES.shuttingDown, 'server shutting down')
    // A peer that never answers the close handshake must not hold the shutdown forever.
    setTimeout(() => ws.terminate(), 1000).unref()
  }))
  await Promise.all(closed)
  await new Promise((resolve) => wss.close(resolve))
  await stopped
}
