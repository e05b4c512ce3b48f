import http from 'node:http'
import { timingSafeEqual } from 'node:crypto'
import { WebSocketServer } from 'ws'
import { loadMessages, resolveTest, TESTS } from '../payloads/catalog.js'
import { CUSTOM_FORMATS, FORMATS, loadCodecs } from '../codecs/registry.js'
import { UsageError } from '../errors.js'
import { createWebHandler } from './web.js'
import { createMetrics, METRICS_CONTENT_TYPE } from './metrics.js'
import { ServerStats, SUMMARY_INTERVAL_MS } from './stats.js'
import { compileRegistration } from '../schema/custom.js'
import { ACK, CUSTOM_TEST, DIRECTIONS, ERROR_PREFIX, METRICS_PATH, PAYLOAD_KINDS, QUERY, REGISTRATION_OK } from '../protocol.js'
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_PAYLOAD, MAX_SCHEMA_BYTES } from '../defaults.js'
import { openFileLimit } from '../processes.js'

const ACK_FRAME = Buffer.from(ACK)
const TEXT_FRAME = { binary: false }
const MAX_REASON_LENGTH = 200
/**
 * Files never given to sockets: stdio, the listening socket, and the modules a codec loads on first
 * use (a failed import stays failed for the life of the process).
 */
const FILE_RESERVE = 64
/** Sockets past the connection limit that can still be told why they are refused (503) before new ones are dropped. */
const REFUSAL_ROOM = 64
const CONNECT_HINT = `WebSocket clients connect to ws://HOST:PORT/?${QUERY.test}=<${TESTS.map((t) => t.name).join('|')}>&${QUERY.format}=<${FORMATS.join('|')}>&${QUERY.direction}=<${DIRECTIONS.join('|')}>; GET / is the browser client`

/**
 * Works out which test, format and direction a connection asked for from its request URL,
 * `/?test=<number|name>&format=<name>[&direction=up|down|echo][&payload=stream|repeated]`.
 * @param {string} requestUrl the path and query of the upgrade request
 * @returns {{ test: import('../payloads/catalog.js').TestInfo, format: string, direction: string, repeat: boolean }}
 * @throws {UsageError} when either is missing or unknown; the message is sent back with the 400
 */
export function parseConnectionTarget (requestUrl) {
  const query = new URL(requestUrl, 'http://placeholder').searchParams
  const testParam = query.get(QUERY.test)
  const format = query.get(QUERY.format)
  if (!testParam) throw new UsageError(`missing ?test= (one of ${TESTS.map((t) => t.name).join(', ')})`)
  if (!format) throw new UsageError(`missing &format= (one of ${FORMATS.join(', ')})`)
  if (!FORMATS.includes(format)) {
    throw new UsageError(`unknown format '${format}': expected one of ${FORMATS.join(', ')}`)
  }
  const direction = query.get(QUERY.direction) ?? 'up'
  if (!DIRECTIONS.includes(direction)) {
    throw new UsageError(`unknown direction '${direction}': expected one of ${DIRECTIONS.join(', ')}`)
  }
  const payload = query.get(QUERY.payload) ?? 'stream'
  if (!PAYLOAD_KINDS.includes(payload)) {
    throw new UsageError(`unknown payload '${payload}': expected one of ${PAYLOAD_KINDS.join(', ')}`)
  }
  const repeat = payload === 'repeated'
  if (testParam === CUSTOM_TEST) {
    // A user's payload: the server has no copy of it, and learns a protobuf schema from the client.
    if (direction === 'down') throw new UsageError('direction down needs a built-in test: the server has no custom payload to send')
    if (!CUSTOM_FORMATS.includes(format)) throw new UsageError(`format '${format}' does not support custom payloads: use ${CUSTOM_FORMATS.join(', ')}`)
    return { test: { name: CUSTOM_TEST, custom: true }, format, direction, repeat }
  }
  return { test: resolveTest(testParam), format, direction, repeat }
}

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
 * @param {{ms: number, after: number}} [options.stall] test hook: once, after that many messages,
 *   block the event loop for ms (a GC pause, a slow disk), to show what coordinated omission hides
 * @param {string} [options.token] when set, upgrades must carry it (`Authorization: Bearer <token>`
 *   or `?token=`); others get 401
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
  stall,
  token,
  log = () => {},
  exposition
} = {}) {
  const stats = new ServerStats()
  // Refusing past the file limit with a reason beats running into it: at the limit a connection
  // cannot even be accepted, and a codec's first import fails.
  const fileLimit = openFileLimit()
  const socketLimit = fileLimit - FILE_RESERVE
  const connectionLimit = Math.min(maxConnections, socketLimit - REFUSAL_ROOM)
  const isAuthorized = token ? tokenCheck(token) : () => true
  const registry = createMetrics(stats)
  const metrics = exposition ?? (() => registry.metrics())
  const web = createWebHandler(loadMessages, CONNECT_HINT)
  const httpServer = http.createServer((request, response) => {
    if (new URL(request.url, 'http://placeholder').pathname !== METRICS_PATH) return web(request, response)
    serveMetrics(request, response, metrics, isAuthorized)
  })
  // A burst of connections holds a file each before any upgrade request is read; past this many
  // sockets new ones are closed at once, so the reserve stays free.
  if (Number.isFinite(socketLimit)) httpServer.maxConnections = socketLimit
  httpServer.on('drop', () => { stats.dropped++ })
  const wss = new WebSocketServer({ noServer: true, maxPayload, perMessageDeflate: compress })
  let upgrading = 0
  const schemaCache = new Map()
  const afterMessage = stall ? stallOnce(stall) : () => {}

  httpServer.on('upgrade', (request, socket, head) => {
    socket.on('error', () => socket.destroy())
    if (!isAuthorized(request)) {
      stats.unauthorized++
      refuseUpgrade(socket, 401, 'Unauthorized', 'missing or wrong token: send Authorization: Bearer <token> or ?token=<token>', 'WWW-Authenticate: Bearer\r\n')
      return
    }
    if (stats.openConnections + upgrading >= connectionLimit) {
      stats.refused++
      refuseUpgrade(socket, 503, 'Service Unavailable', connectionLimit < maxConnections
        ? `open-file limit reached: at most ${connectionLimit} connections with ${fileLimit} files per process; run more server processes (--processes)`
        : `connection limit reached (${maxConnections} open)`)
      return
    }
    let target
    try {
      target = parseConnectionTarget(request.url)
    } catch (err) {
      stats.refused++
      refuseUpgrade(socket, 400, 'Bad Request', err.message)
      return
    }
    // Handshakes in progress count towards the limit too; one that ws rejects (bad key, socket
    // closed) never calls back, so the socket's close settles it as well.
    let pending = true
    const settle = () => { if (pending) { pending = false; upgrading-- } }
    upgrading++
    socket.once('close', settle)
    // The format's codec loads before the upgrade completes, so no message can arrive before it.
    loadCodecs(target.format).then((codecOf) => {
      const registers = target.test.custom && target.format === 'protobuf'
      let codec
      try {
        codec = registers ? null : codecOf(target.test)
      } catch (err) {
        settle()
        stats.refused++
        return refuseUpgrade(socket, 400, 'Bad Request', oneLine(err))
      }
      wss.handleUpgrade(request, socket, head, (ws) => {
        settle()
        trackConnection(ws, stats)
        if (registers) awaitRegistration(ws, target, codecOf, stats, maxSchemaBytes, schemaCache, afterMessage)
        else serveConnection(ws, target, codec, stats, afterMessage)
      })
    }, (err) => {
      // A codec that cannot load (a broken install, or no file left to read it) refuses the connection, not the server.
      settle()
      stats.refused++
      refuseUpgrade(socket, 503, 'Service Unavailable', `cannot load the ${target.format} codec: ${oneLine(err)}`)
    })
  })
  // Clients that drop the TCP connection mid-handshake must not take the server down.
  httpServer.on('clientError', (err, socket) => socket.destroy(err))

  await new Promise((resolve, reject) => {
    httpServer.once('error', (err) => reject(new UsageError(`cannot listen on ${host}:${port}: ${err.code ?? err.message}`)))
    httpServer.listen(port, host, resolve)
  })
  // Past listening, an error is a connection this process could not accept (EMFILE): counted, never fatal.
  httpServer.on('error', () => { stats.dropped++ })
  const address = httpServer.address()
  const url = `ws://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`

  const summaryTimer = setInterval(() => {
    if (stats.hasActivitySinceLastSummary()) log(stats.summaryLine(SUMMARY_INTERVAL_MS))
  }, SUMMARY_INTERVAL_MS).unref()

  let closing
  /** @type {BenchServer} */
  return {
    url,
    host: address.address,
    port: address.port,
    stats,
    registry,
    close () {
      closing ??= shutDown(httpServer, wss, summaryTimer)
      return closing
    }
  }
}

/**
 * @typedef {object} BenchServer
 * @property {string} url ws://host:port, without the query
 * @property {string} host
 * @property {number} port
 * @property {ServerStats} stats live counters
 * @property {import('prom-client').Registry} registry this process's metrics
 * @property {() => Promise<void>} close closes every connection with 1001 and stops listening
 */

/**
 * A protobuf connection for a custom payload: its first message must register the schema. One
 * that cannot be compiled (too big, invalid, unknown type) is answered `ERR schema ...` and the
 * connection is closed with 1008; nothing from it is compiled without the size limit.
 */
function awaitRegistration (ws, target, codecOf, stats, maxSchemaBytes, cache, afterMessage) {
  ws.once('message', (data) => {
    let type
    try {
      if (maxSchemaBytes === 0) throw new UsageError('this server does not accept schema registrations (--max-schema-bytes 0)')
      type = compileRegistration(data, maxSchemaBytes, cache)
    } catch (err) {
      stats.refusedSchemas++
      ws.send(`${ERROR_PREFIX}schema refused: ${oneLine(err)}`)
      ws.close(1008, 'schema refused')
      return
    }
    ws.send(REGISTRATION_OK)
    const test = { ...target.test, type }
    serveConnection(ws, { ...target, test }, codecOf(test), stats, afterMessage)
  })
}

/** Answers every message of one connection, in order: ACK (up), the payload (down) or the message re-encoded (echo). */
function serveConnection (ws, { test, format, direction, repeat }, codec, stats, afterMessage) {
  const counters = stats.forTarget(format, test.name)
  const payloadFrame = { binary: codec.binary }
  // Each connection sends the test's messages in turn from the first, as a client does.
  const natives = direction === 'down' ? preparedMessages(codec, test, repeat) : null
  let next = 0
  ws.on('message', (data) => {
    let reply
    try {
      if (direction === 'down') {
        reply = codec.encode(natives[next])
        next = next + 1 === natives.length ? 0 : next + 1
      } else if (direction === 'echo') reply = codec.encode(codec.decode(data))
      else codec.decode(data)
    } catch (err) {
      counters.errors++
      ws.send(`${ERROR_PREFIX}${format} ${direction === 'down' ? 'encode' : 'decode'} failed for test ${test.name}: ${oneLine(err)}`)
      return
    }
    counters.messages++
    if (reply === undefined) ws.send(ACK_FRAME, TEXT_FRAME)
    else ws.send(reply, payloadFrame)
    afterMessage()
  })
}

const preparedCache = new WeakMap()

/**
 * A built-in test's messages in the codec's own form, prepared once per codec and kind and shared
 * by every connection, as a client prepares its payloads; encoded for every reply, the cost measured.
 * @param {import('../codecs/registry.js').Codec} codec the registry's codec for this test (one per format and test)
 * @param {import('../payloads/catalog.js').TestInfo} test
 * @param {boolean} repeat the one message instead of the stream
 * @returns {unknown[]}
 */
function preparedMessages (codec, test, repeat) {
  if (!preparedCache.has(codec)) preparedCache.set(codec, new Map())
  const byKind = preparedCache.get(codec)
  if (!byKind.has(repeat)) {
    byKind.set(repeat, loadMessages(test, { repeat }).messages.map((message) => codec.prepare(message)))
  }
  return byKind.get(repeat)
}

/** The --stall hook: blocks the whole process once, as a long GC pause would. */
function stallOnce ({ ms, after }) {
  let remaining = after
  return () => {
    if (--remaining !== 0) return
    const until = Date.now() + ms
    while (Date.now() < until); // deliberately blocking: nothing else may run
  }
}

/** Counts a connection while it is open, and its protocol errors. */
function trackConnection (ws, stats) {
  stats.openConnections++
  stats.totalConnections++
  // ws reports protocol violations (invalid UTF-8, oversized frames) here and then closes the
  // connection with the matching code (1007, 1009); count them, never let them escape.
  ws.on('error', () => { stats.protocolErrors++ })
  ws.on('close', () => { stats.openConnections-- })
}

function oneLine (err) {
  const text = String(err?.message ?? err).replace(/\s+/g, ' ')
  return text.length > MAX_REASON_LENGTH ? `${text.slice(0, MAX_REASON_LENGTH)}...` : text
}

/** Compares tokens in constant time, so response timing does not reveal how much of a guess was right. */
function tokenCheck (token) {
  const expected = Buffer.from(token)
  const matches = (candidate) => {
    const given = Buffer.from(candidate ?? '')
    return given.length === expected.length && timingSafeEqual(given, expected)
  }
  return (request) => {
    const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '')
    return matches(bearer?.[1]) || matches(new URL(request.url, 'http://placeholder').searchParams.get(QUERY.token))
  }
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

function refuseUpgrade (socket, status, statusText, reason, extraHeaders = '') {
  const body = `${reason}\n`
  socket.end(
    `HTTP/1.1 ${status} ${statusText}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n${extraHeaders}` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  )
}

async function shutDown (httpServer, wss, summaryTimer) {
  clearInterval(summaryTimer)
  const closed = [...wss.clients].map((ws) => new Promise((resolve) => {
    ws.once('close', resolve)
    ws.close(1001, 'server shutting down')
    // A peer that never answers the close handshake must not hold the shutdown forever.
    setTimeout(() => ws.terminate(), 1000).unref()
  }))
  await Promise.all(closed)
  await new Promise((resolve) => wss.close(resolve))
  await new Promise((resolve) => httpServer.close(resolve))
}
