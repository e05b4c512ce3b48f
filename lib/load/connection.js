// Opening one load connection: the URL naming test, format and direction, TLS and headers for
// servers that are not ours, a shaping proxy in between, and the schema handshake.
import net from 'node:net'
import { performance } from 'node:perf_hooks'
import tls from 'node:tls'
import WebSocket from 'ws'
import { connectionUrl } from '../protocol.js'

/**
 * Opens one connection for the run's test and format.
 * @param {import('./engine.js').LoadOptions & {connectTimeoutMs?: number, onMessage?: Function, from?: number|null}} options
 *   the run's; connectTimeoutMs bounds the attempt; onMessage listens from the start, frames that come with the upgrade
 *   included; from: a fan-out subscriber come back asks for the measured publishes from this one on
 * @returns {Promise<{ws: WebSocket, socket: import('node:net').Socket, stream: import('node:stream').Duplex,
 *   tls: {version: string, cipher: string}|null, timing: import('./connect-times.js').ConnectTiming}>} resolves once
 *   open (and past the handshake, if any), with the TCP socket whose byte counters the run reads
 *   (under TLS: the encrypted bytes, records and all), the stream frames are written to (the
 *   socket, or TLS over it), what TLS it negotiated (null over ws://) and how long each step of opening took; rejects
 *   with a one-line reason, its `cause` the word failures are counted by (refused, timeout, tls,
 *   `status 503`, handshake ...)
 */
export function connect ({
  url, connectUrl, test, codec, compress = false, direction = 'up', role, repeat, handshake, headers, subprotocol, insecure, ca,
  connectTimeoutMs, onMessage, from = null
}) {
  const target = connectionUrl(url, { test: test.name, format: codec.name, direction, role, repeat, from })
  const dial = new Dial(target, connectUrl)
  const ws = new WebSocket(target, subprotocol, {
    perMessageDeflate: compress,
    headers,
    rejectUnauthorized: !insecure,
    // --ca adds to Node's root certificates, as NODE_EXTRA_CA_CERTS does.
    ...(ca && { ca: [...tls.rootCertificates, ca] }),
    // Unset, an unreachable server (a cut link) holds the attempt for as long as TCP retries its SYN.
    handshakeTimeout: connectTimeoutMs,
    createConnection: (options) => dial.open(options)
  })
  ws.once('upgrade', () => dial.upgraded())
  const opened = () => ({
    ws, socket: dial.socket, stream: dial.secure ?? dial.socket, tls: dial.negotiated(), timing: dial.timing()
  })
  if (onMessage) ws.on('message', onMessage)
  return new Promise((resolve, reject) => {
    const fail = (message, cause) => reject(new Error(message, { cause }))
    ws.once('open', () => {
      if (!handshake) return resolve(opened())
      ws.once('message', (data) => {
        const answer = data.toString('utf8', 0, 500)
        if (answer === handshake.expect) return resolve(opened())
        fail(`server refused the handshake on ${target.href}: ${oneLine(answer)}`, 'handshake')
        ws.terminate()
      })
      ws.once('close', (code) => fail(`server closed the connection during the handshake on ${target.href} (code ${code})`, 'handshake'))
      ws.send(handshake.frame)
    })
    ws.once('unexpected-response', (request, response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk) => { body += chunk })
      response.on('end', () => {
        fail(`server refused ${target.href}: ${response.statusCode} ${oneLine(body)}`, `status ${response.statusCode}`)
        ws.terminate()
      })
    })
    ws.once('error', (err) => {
      const { cause, text } = failure(err)
      fail(`cannot connect to ${url}: ${text}`, cause)
    })
  })
}

/**
 * One connection's way in: the TCP connection made here, so that its counters are at hand (a TLS
 * socket counts plain text), TLS over it for wss://, and when each step was done. Through a shaping
 * proxy the TCP connection goes to the proxy, while the request (and TLS) still name the server.
 */
class Dial {
  /**
   * @param {URL} target the server's URL
   * @param {string} [connectUrl] where to open the TCP connection instead (a shaping proxy)
   */
  constructor (target, connectUrl) {
    this.target = target
    this.dialed = connectUrl ? new URL(connectUrl) : null
    this.socket = null
    this.secure = null
    this.startedAt = performance.now()
    this.connectedAt = 0
    this.securedAt = 0
    this.upgradedAt = 0
  }

  /** ws's createConnection: the TCP socket, and TLS over it for wss:// as ws's own would (SNI by name, none for an address). */
  open (options) {
    this.socket = this.dialed
      ? net.connect(Number(this.dialed.port), this.dialed.hostname)
      : net.connect({ ...options, path: options.socketPath })
    this.socket.once('connect', () => { this.connectedAt = performance.now() })
    if (this.target.protocol !== 'wss:') return this.socket
    const servername = options.servername ?? (net.isIP(options.host) ? '' : options.host)
    this.secure = tls.connect({ ...options, path: undefined, socket: this.socket, servername })
    this.secure.once('secureConnect', () => { this.securedAt = performance.now() })
    return this.secure
  }

  /** The server's 101 came. */
  upgraded () {
    this.upgradedAt = performance.now()
  }

  /** @returns {{version: string, cipher: string}|null} the TLS negotiated, null over ws:// */
  negotiated () {
    return this.secure && { version: this.secure.getProtocol(), cipher: this.secure.getCipher().standardName }
  }

  /** @returns {import('./connect-times.js').ConnectTiming} how long each step took, µs */
  timing () {
    const us = (from, to) => Math.round((to - from) * 1000)
    const ready = this.secure ? this.securedAt : this.connectedAt
    return {
      tcpUs: us(this.startedAt, this.connectedAt),
      tlsUs: this.secure ? us(this.connectedAt, this.securedAt) : null,
      upgradeUs: us(ready, this.upgradedAt)
    }
  }
}

/**
 * Why an attempt failed: the word failures are counted by (refused, timeout, tls, or the error's
 * code), and one line saying it, with what to do about it where that is known.
 * @returns {{cause: string, text: string}}
 */
function failure (err) {
  // The first thing a new user meets: a client started before any server.
  if (err.code === 'ECONNREFUSED') return { cause: 'refused', text: `${err.code} (no server listening there: start one with node server.js)` }
  if (UNTRUSTED.test(err.code)) {
    const text = `the server's certificate is not trusted (${err.code}: ${err.message}): give its certificate or CA with --ca FILE, or skip the check with --insecure`
    return { cause: 'tls', text }
  }
  const plain = /wrong version number|packet length too long/i.exec(err.message)
  if (plain) return { cause: 'tls', text: `no TLS there (${plain[0]}): a plain server is ws://, not wss://` }
  const cause = /timed out/i.test(err.message) || err.code === 'ETIMEDOUT' ? 'timeout' : err.code ?? 'other'
  return { cause, text: err.code ?? err.message }
}

/** OpenSSL's and Node's codes for a certificate that does not verify. */
const UNTRUSTED = /CERT|SIGNATURE|ALTNAME|ISSUER/

/**
 * What TLS the connections negotiated, for the report.
 * @param {Array<{tls: {version: string, cipher: string}|null}>} connections as they opened
 * @returns {{version: string, cipher: string}|null} null over plain ws://
 */
export function negotiated (connections) {
  return connections.find((connection) => connection?.tls)?.tls ?? null
}

/** What a server said, on one line: an HTML error page or a multi-line answer reads as one. */
function oneLine (text) {
  return text.trim().replace(/\s*\n\s*/g, ' ')
}

/**
 * Whether permessage-deflate, when offered (--compress), was what the connections got: a server
 * may refuse it, and then every frame went uncompressed, which the report must say.
 * @param {boolean|undefined} offered
 * @param {Array<{ws: import('ws').WebSocket}>} connections as they opened
 * @returns {{accepted: boolean}|null} null when it was not offered
 */
export function compression (offered, connections) {
  if (!offered) return null
  return { accepted: connections.length > 0 && connections.every(({ ws }) => ws?.extensions.includes('permessage-deflate')) }
}
