// The wire protocol between the load clients (CLI and browser) and the server, spelled in one
// place. A connection names its test, format and direction in the upgrade URL's query; the server
// answers each message with ACK, the payload (down, echo) or an ERR line. A protobuf connection
// with a user's payload registers its schema first. No Node.js imports: the browser page uses it too.

/** Query parameters of the upgrade URL: `/?test=<number|name>&format=<name>[&direction=][&token=]`. */
export const QUERY = Object.freeze({
  test: 'test', format: 'format', direction: 'direction', role: 'role', payload: 'payload', token: 'token', from: 'from'
})

/**
 * What a built-in test sends (`&payload=`): its stream of varying messages (the default) or its one
 * message repeated. The server sends the same with direction down.
 */
export const PAYLOAD_KINDS = Object.freeze(['stream', 'repeated'])

/**
 * Which way the payload travels: up (client sends, server ACKs), down (client asks, server sends),
 * echo (both), fanout (a publisher sends, the server delivers each publish to every subscriber of
 * its topic, the format and test).
 */
export const DIRECTIONS = Object.freeze(['up', 'down', 'echo', 'fanout'])

/** What a fanout connection does (`&role=`): receives every publish of its topic (the default), or publishes. */
export const ROLES = Object.freeze(['subscriber', 'publisher'])

/**
 * Every fan-out frame starts with this many ASCII bytes, the same for every format (so a text
 * frame stays text): a kind (w: warm-up, m: measured, r: measured and replayed to a subscriber that
 * came back), the sequence number in 8 hex digits and the scheduled publish time in µs since the
 * epoch in 15 hex digits. The payload follows. A subscriber that reconnects asks with `&from=<seq>`
 * for the measured publishes from that one on that it missed; a server that keeps some (--replay)
 * sends them first, marked r.
 */
export const FANOUT_HEADER_BYTES = 24

/** Start of the text frame a publisher sends when it is done, `END <publishes measured>`, delivered like a publish. */
export const FANOUT_END = 'END '

/** Where the server serves its counters in the Prometheus text format (plain HTTP, same port). */
export const METRICS_PATH = '/metrics'

/** The server's reply to a message it decoded (up): a text frame. */
export const ACK = 'ACK'

/** What a `down` client sends for each message: the server answers any frame with the payload. */
export const DOWN_REQUEST = 'GET'

/** Start of a text frame reporting a failure; JSON text never starts so. */
export const ERROR_PREFIX = 'ERR '

/**
 * Close codes the server sends (RFC 6455, 7.4.1). ws sends two of them itself, on a protocol
 * violation: invalidUtf8 for a text frame that is not UTF-8, tooBig for a message over
 * --max-payload (other violations get 1002). A fan-out subscriber dropped as slow gets none: its
 * TCP connection is cut, and its client sees 1006.
 */
export const CLOSE_CODES = Object.freeze({
  shuttingDown: 1001, invalidUtf8: 1007, schemaRefused: 1008, tooBig: 1009, cannotPrepare: 1011
})

/** The test name a user's own payload uses on the wire and in reports. */
export const CUSTOM_TEST = 'custom'

/** First line of the registration frame: `SCHEMA <type>\n<.proto text>`. */
export const REGISTRATION_PREFIX = 'SCHEMA '

/** The server's answer to a registration it accepted. */
export const REGISTRATION_OK = 'SCHEMA OK'

/**
 * The upgrade URL for a connection: the server URL with the test, format and direction in its query,
 * `payload=repeated` when one message is sent over and over, and `from=` for a fan-out subscriber
 * that comes back wanting what it missed.
 * @param {string|URL} server ws:// or wss:// URL; a query it has already is kept
 * @param {{test: string, format: string, direction?: string, role?: string, repeat?: boolean, from?: number|null}} target
 * @returns {URL}
 */
export function connectionUrl (server, { test, format, direction = 'up', role, repeat = false, from = null }) {
  const url = new URL(server)
  url.searchParams.set(QUERY.test, test)
  url.searchParams.set(QUERY.format, format)
  if (direction !== 'up') url.searchParams.set(QUERY.direction, direction)
  if (role) url.searchParams.set(QUERY.role, role)
  if (repeat) url.searchParams.set(QUERY.payload, 'repeated')
  if (from !== null) url.searchParams.set(QUERY.from, String(from))
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

/**
 * The header of one fan-out publish (see FANOUT_HEADER_BYTES).
 * @param {boolean} measured whether it is a measured publish (else warm-up)
 * @param {number} seq its number among the publishes of its kind, from 0
 * @param {number} publishedAtUs its scheduled publish time, µs since the epoch
 * @returns {string} FANOUT_HEADER_BYTES ASCII characters
 */
export function fanoutHeader (measured, seq, publishedAtUs) {
  return `${measured ? 'm' : 'w'}${hex(seq, 8)}${hex(publishedAtUs, 15)}`
}

/** A fan-out frame's first byte: its kind (see FANOUT_HEADER_BYTES). */
export const FANOUT_KIND = Object.freeze({ measured: 0x6d, replayed: 0x72, warmup: 0x77 })

/**
 * Reads a fan-out frame's header into `header` (the caller's, reused: nothing is allocated per frame).
 * @param {Uint8Array} frame
 * @param {{measured: boolean, replayed: boolean, seq: number, publishedAtUs: number}} header filled in
 * @returns {boolean} false when the frame is too short or does not start with a header
 */
export function readFanoutHeader (frame, header) {
  const kind = frame[0]
  const known = kind === FANOUT_KIND.measured || kind === FANOUT_KIND.warmup || kind === FANOUT_KIND.replayed
  if (frame.length < FANOUT_HEADER_BYTES || !known) return false
  header.measured = kind !== FANOUT_KIND.warmup
  header.replayed = kind === FANOUT_KIND.replayed
  header.seq = hexValue(frame, 1, 9)
  header.publishedAtUs = hexValue(frame, 9, FANOUT_HEADER_BYTES)
  return header.seq >= 0 && header.publishedAtUs >= 0
}

function hex (value, digits) {
  return Math.trunc(value).toString(16).padStart(digits, '0')
}

/** The number the hex digits in frame[from, to) spell, or -1 when one is not a hex digit. */
function hexValue (frame, from, to) {
  let value = 0
  for (let i = from; i < to; i++) {
    const c = frame[i]
    const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1
    if (digit < 0) return -1
    value = value * 16 + digit
  }
  return value
}

/**
 * Whether a frame is a publisher's `END <count>` (see FANOUT_END).
 * @param {Uint8Array} frame
 * @returns {boolean}
 */
export function isFanoutEnd (frame) {
  return frame.length > 4 && frame[0] === 0x45 && frame[1] === 0x4e && frame[2] === 0x44 && frame[3] === 0x20
}
