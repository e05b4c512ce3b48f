// The wire protocol between the load clients (CLI and browser) and the server, spelled in one
// place. A connection names its test, format and direction in the upgrade URL's query; the server
// answers each message with ACK, the payload (down, echo) or an ERR line. A protobuf connection
// with a user's payload registers its schema first. No Node.js imports: the browser page uses it too.

/** Query parameters of the upgrade URL: `/?test=<number|name>&format=<name>[&direction=][&token=]`. */
export const QUERY = Object.freeze({ test: 'test', format: 'format', direction: 'direction', payload: 'payload', token: 'token' })

/**
 * What a built-in test sends (`&payload=`): its stream of varying messages (the default) or its one
 * message repeated. The server sends the same with direction down.
 */
export const PAYLOAD_KINDS = Object.freeze(['stream', 'repeated'])

/** Which way the payload travels: up (client sends, server ACKs), down (client asks, server sends), echo (both). */
export const DIRECTIONS = Object.freeze(['up', 'down', 'echo'])

/** Where the server serves its counters in the Prometheus text format (plain HTTP, same port). */
export const METRICS_PATH = '/metrics'

/** The server's reply to a message it decoded (up): a text frame. */
export const ACK = 'ACK'

/** What a `down` client sends for each message: the server answers any frame with the payload. */
export const DOWN_REQUEST = 'GET'

/** Start of a text frame reporting a failure; JSON text never starts so. */
export const ERROR_PREFIX = 'ERR '

/** The test name a user's own payload uses on the wire and in reports. */
export const CUSTOM_TEST = 'custom'

/** First line of the registration frame: `SCHEMA <type>\n<.proto text>`. */
export const REGISTRATION_PREFIX = 'SCHEMA '

/** The server's answer to a registration it accepted. */
export const REGISTRATION_OK = 'SCHEMA OK'

/**
 * The upgrade URL for a connection: the server URL with the test, format and direction in its query,
 * and `payload=repeated` when one message is sent over and over.
 * @param {string|URL} server ws:// or wss:// URL; a query it has already is kept
 * @param {{test: string, format: string, direction?: string, repeat?: boolean}} target
 * @returns {URL}
 */
export function connectionUrl (server, { test, format, direction = 'up', repeat = false }) {
  const url = new URL(server)
  url.searchParams.set(QUERY.test, test)
  url.searchParams.set(QUERY.format, format)
  if (direction !== 'up') url.searchParams.set(QUERY.direction, direction)
  if (repeat) url.searchParams.set(QUERY.payload, 'repeated')
  return url
}

/**
 * Whether a reply is an error line: a frame starting `ERR `.
 * @param {Uint8Array|string} data a received frame (Buffer in Node, string in the browser)
 * @returns {boolean}
 */
export function isErrorReply (data) {
  if (typeof data === 'string') return data.startsWith(ERROR_PREFIX)
  return data.length >= 4 && data[0] === 0x45 && data[1] === 0x52 && data[2] === 0x52 && data[3] === 0x20
}

/**
 * The text frame a protobuf client sends first on a custom connection.
 * @param {string} typeName the root message, e.g. `pbjson.Payload`
 * @param {string} protoText the whole .proto file
 * @returns {string}
 */
export function registrationFrame (typeName, protoText) {
  return `${REGISTRATION_PREFIX}${typeName}\n${protoText}`
}

/**
 * Splits a registration frame into its type name and schema text.
 * @param {string} text the frame as UTF-8 text
 * @returns {{typeName: string, protoText: string}|null} null when the frame is not a registration
 */
export function parseRegistration (text) {
  const newline = text.indexOf('\n')
  if (!text.startsWith(REGISTRATION_PREFIX) || newline < 0) return null
  return { typeName: text.slice(REGISTRATION_PREFIX.length, newline).trim(), protoText: text.slice(newline + 1) }
}
