// Which upgrades the server takes: every refusal and its reason in one place (a wrong token, the
// connection or open-file limit, a URL naming no valid test, format or direction, a codec that
// cannot load or serve the test), and the files the limits guard.
import { timingSafeEqual } from 'node:crypto'
import { resolveTest, TESTS } from '../payloads/catalog.js'
import { checkCarries, formatNames, loadFormat, unknownFormat } from '../codecs/registry.js'
import { UsageError, oneLine } from '../errors.js'
import { CUSTOM_TEST, DIRECTIONS, PAYLOAD_KINDS, QUERY, ROLES } from '../protocol.js'

/**
 * Files never given to sockets: stdio, the listening socket, and the modules a codec loads on first
 * use (a failed import stays failed for the life of the process).
 */
const FILE_RESERVE = 64
/** Sockets past the connection limit that can still be told why they are refused (503) before new ones are dropped. */
const REFUSAL_ROOM = 64

/**
 * An upgrade the server will not take: the HTTP answer, and the ServerStats counter it adds to.
 */
export class Refusal extends Error {
  /**
   * @param {number} status 400, 401 or 503
   * @param {string} reason one line, sent as the body
   * @param {{counter?: 'refused'|'unauthorized', headers?: string}} [more] extra header lines, CRLF-terminated
   */
  constructor (status, reason, { counter = 'refused', headers = '' } = {}) {
    super(reason)
    this.status = status
    this.counter = counter
    this.headers = headers
  }
}

/**
 * Decides each upgrade request. Upgrades in progress count towards the limit until their socket
 * opens as a connection or closes.
 */
export class Admission {
  /**
   * @param {object} limits
   * @param {string} [limits.token] upgrades must carry it (`Authorization: Bearer` or `?token=`)
   * @param {number} limits.maxConnections open connections beyond which upgrades are refused
   * @param {number} limits.fileLimit this process's open-file limit (Infinity when unknown)
   * @param {() => number} limits.openConnections how many are open now
   * @param {string|null} [limits.fanoutRefusal] why this server cannot serve fan-out, or null when it can
   */
  constructor ({ token, maxConnections, fileLimit, openConnections, fanoutRefusal = null }) {
    this.isAuthorized = token ? tokenCheck(token) : () => true
    this.maxConnections = maxConnections
    this.fileLimit = fileLimit
    // Refusing past the file limit with a reason beats running into it: at the limit a connection
    // cannot even be accepted, and a codec's first import fails.
    this.socketLimit = fileLimit - FILE_RESERVE
    this.connectionLimit = Math.min(maxConnections, this.socketLimit - REFUSAL_ROOM)
    this.openConnections = openConnections
    this.fanoutRefusal = fanoutRefusal
    this.upgrading = 0
  }

  /**
   * Admits an upgrade, or refuses it with its reason. The format's codec loads before the upgrade
   * completes, so no message can arrive before it.
   * @param {import('node:http').IncomingMessage} request
   * @param {import('node:net').Socket} socket held against the limit until `opened` is called or it closes
   * @returns {Promise<{target: ConnectionTarget, codecOf: Function, codec: object|null, opened: () => void}>}
   *   codec is null for a user's payload in a format that decodes by its schema, which the client registers first
   * @throws {Refusal}
   */
  async admit (request, socket) {
    if (!this.isAuthorized(request)) {
      throw new Refusal(401, 'missing or wrong token: send Authorization: Bearer <token> or ?token=<token>',
        { counter: 'unauthorized', headers: 'WWW-Authenticate: Bearer\r\n' })
    }
    if (this.openConnections() + this.upgrading >= this.connectionLimit) {
      throw new Refusal(503, this.connectionLimit < this.maxConnections
        ? `open-file limit reached: at most ${this.connectionLimit} connections with ${this.fileLimit} files per process; run more server processes (--processes)`
        : `connection limit reached (${this.maxConnections} open)`)
    }
    let target
    try {
      target = parseConnectionTarget(request.url)
    } catch (err) {
      throw new Refusal(400, err.message)
    }
    if (target.direction === 'fanout' && this.fanoutRefusal) throw new Refusal(503, this.fanoutRefusal)
    // A handshake that ws rejects (bad key, socket closed) never calls back, so the socket's close settles it as well.
    let pending = true
    const opened = () => { if (pending) { pending = false; this.upgrading-- } }
    this.upgrading++
    socket.once('close', opened)
    try {
      return { target, ...await codecFor(target), opened }
    } catch (err) {
      opened()
      throw err
    }
  }
}

/**
 * The codec a target is served with; a codec that cannot load (a broken install, no file left)
 * refuses the connection, not the server.
 */
async function codecFor (target) {
  let format
  try {
    format = await loadFormat(target.format)
  } catch (err) {
    throw new Refusal(503, `cannot load the ${target.format} codec: ${oneLine(err)}`)
  }
  const codecOf = format.codecFor
  try {
    if (target.test.custom) checkCarries(format)
    // Its codec is made once the client has registered the payload's schema.
    if (target.test.custom && format.registersSchema) return { codecOf, codec: null }
    return { codecOf, codec: codecOf(target.test) }
  } catch (err) {
    throw new Refusal(400, oneLine(err))
  }
}

/**
 * @typedef {object} ConnectionTarget what a connection asked for in its upgrade URL
 * @property {import('../payloads/catalog.js').TestInfo|{name: string, custom: true}} test
 * @property {string} format
 * @property {string} direction
 * @property {'subscriber'|'publisher'|null} role what a fanout connection does; null for the other directions
 * @property {boolean} repeat the one message instead of the stream (`&payload=repeated`): what the server sends down
 * @property {number|null} from a fan-out subscriber come back: the first measured publish it wants replayed (`&from=`)
 */

/**
 * Works out which test, format and direction a connection asked for from its request URL,
 * `/?test=<number|name>&format=<name>[&direction=up|down|echo|fanout][&role=subscriber|publisher]`
 * `[&payload=stream|repeated][&from=<seq>]`.
 * @param {string} requestUrl the path and query of the upgrade request
 * @returns {ConnectionTarget}
 * @throws {UsageError} when either is missing or unknown; the message is sent back with the 400
 */
export function parseConnectionTarget (requestUrl) {
  const query = new URL(requestUrl, 'http://placeholder').searchParams
  const testParam = query.get(QUERY.test)
  const format = query.get(QUERY.format)
  if (!testParam) throw new UsageError(`missing ?test= (one of ${TESTS.map((t) => t.name).join(', ')})`)
  if (!format) throw new UsageError(`missing &format= (one of ${formatNames().join(', ')})`)
  if (!formatNames().includes(format)) throw new UsageError(unknownFormat(format))
  const direction = query.get(QUERY.direction) ?? 'up'
  if (!DIRECTIONS.includes(direction)) {
    throw new UsageError(`unknown direction '${direction}': expected one of ${DIRECTIONS.join(', ')}`)
  }
  const payload = query.get(QUERY.payload) ?? 'stream'
  if (!PAYLOAD_KINDS.includes(payload)) {
    throw new UsageError(`unknown payload '${payload}': expected one of ${PAYLOAD_KINDS.join(', ')}`)
  }
  const repeat = payload === 'repeated'
  const role = fanoutRole(direction, query.get(QUERY.role))
  const from = replayFrom(role, query.get(QUERY.from))
  if (testParam === CUSTOM_TEST) {
    // A user's payload: the server has no copy of it, and learns its schema from the client where the format needs it.
    if (direction === 'down') throw new UsageError('direction down needs a built-in test: the server has no custom payload to send')
    return { test: { name: CUSTOM_TEST, custom: true }, format, direction, role, repeat, from }
  }
  return { test: resolveTest(testParam), format, direction, role, repeat, from }
}

/** A fanout connection's role (subscriber unless it says publisher); the other directions have none. */
function fanoutRole (direction, role) {
  if (direction !== 'fanout') {
    if (role !== null) throw new UsageError(`&${QUERY.role}= goes with direction fanout, not ${direction}`)
    return null
  }
  if (role !== null && !ROLES.includes(role)) throw new UsageError(`unknown role '${role}': expected one of ${ROLES.join(', ')}`)
  return role ?? 'subscriber'
}

/** A returning subscriber's `&from=`: the sequence number of the first publish it wants again. */
function replayFrom (role, from) {
  if (from === null) return null
  if (role !== 'subscriber') throw new UsageError(`&${QUERY.from}= goes with a fan-out subscriber`)
  if (!/^\d{1,10}$/.test(from)) throw new UsageError(`&${QUERY.from}= must be a publish's sequence number, got '${from}'`)
  return Number(from)
}

/**
 * Compares tokens in constant time, so response timing does not reveal how much of a guess was right.
 * @param {string} token
 * @returns {(request: import('node:http').IncomingMessage) => boolean}
 */
export function tokenCheck (token) {
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
