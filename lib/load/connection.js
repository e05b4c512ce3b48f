// Opening one load connection: the URL naming test, format and direction, TLS and headers for
// servers that are not ours, a shaping proxy in between, and the schema handshake.
import net from 'node:net'
import tls from 'node:tls'
import WebSocket from 'ws'
import { connectionUrl } from '../protocol.js'

/**
 * Opens one connection for the run's test and format.
 * @param {import('./engine.js').LoadOptions & {connectTimeoutMs?: number, onMessage?: Function, from?: number|null}} options
 *   the run's; connectTimeoutMs bounds the attempt; onMessage listens from the start, frames that come with the upgrade
 *   included; from: a fan-out subscriber come back asks for the measured publishes from this one on
 * @returns {Promise<{ws: WebSocket, socket: import('node:net').Socket, tls: {version: string, cipher: string}|null}>}
 *   resolves once open (and past the handshake, if any), with the TCP socket whose byte counters
 *   the run reads (under TLS: the encrypted bytes, records and all) and what TLS it negotiated
 *   (null over ws://); rejects with a one-line reason
 */
export function connect ({
  url, connectUrl, test, codec, compress = false, direction = 'up', role, repeat, handshake, headers, subprotocol, insecure, ca,
  connectTimeoutMs, onMessage, from = null
}) {
  const target = connectionUrl(url, { test: test.name, format: codec.name, direction, role, repeat, from })
  const dialed = connectUrl && new URL(connectUrl)
  let socket
  let secure = null
  const ws = new WebSocket(target, subprotocol, {
    perMessageDeflate: compress,
    headers,
    rejectUnauthorized: !insecure,
    // --ca adds to Node's root certificates, as NODE_EXTRA_CA_CERTS does.
    ...(ca && { ca: [...tls.rootCertificates, ca] }),
    // Unset, an unreachable server (a cut link) holds the attempt for as long as TCP retries its SYN.
    handshakeTimeout: connectTimeoutMs,
    // The TCP connection made here, so that its counters are at hand (a TLS socket counts plain text);
    // through a shaping proxy it goes to the proxy, while the request (and TLS) still name the server.
    createConnection: (options) => {
      socket = dialed
        ? net.connect(Number(dialed.port), dialed.hostname)
        : net.connect({ ...options, path: options.socketPath })
      if (target.protocol !== 'wss:') return socket
      // As ws's own TLS connect: the server's name for SNI, none for an address.
      secure = tls.connect({ ...options, path: undefined, socket, servername: options.servername ?? (net.isIP(options.host) ? '' : options.host) })
      return secure
    }
  })
  const opened = () => ({
    ws,
    socket,
    tls: secure && { version: secure.getProtocol(), cipher: secure.getCipher().standardName }
  })
  if (onMessage) ws.on('message', onMessage)
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      if (!handshake) return resolve(opened())
      ws.once('message', (data) => {
        const answer = data.toString('utf8', 0, 500)
        if (answer === handshake.expect) return resolve(opened())
        reject(new Error(`server refused the handshake on ${target.href}: ${oneLine(answer)}`))
        ws.terminate()
      })
      ws.once('close', (code) => reject(new Error(`server closed the connection during the handshake on ${target.href} (code ${code})`)))
      ws.send(handshake.frame)
    })
    ws.once('unexpected-response', (request, response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk) => { body += chunk })
      response.on('end', () => {
        reject(new Error(`server refused ${target.href}: ${response.statusCode} ${oneLine(body)}`))
        ws.terminate()
      })
    })
    ws.once('error', (err) => reject(new Error(`cannot connect to ${url}: ${failure(err)}`)))
  })
}

/** Why a connection failed, on one line, with what to do about it where that is known. */
function failure (err) {
  // The first thing a new user meets: a client started before any server.
  if (err.code === 'ECONNREFUSED') return `${err.code} (no server listening there: start one with node server.js)`
  if (UNTRUSTED.test(err.code)) {
    return `the server's certificate is not trusted (${err.code}: ${err.message}): give its certificate or CA with --ca FILE, or skip the check with --insecure`
  }
  const plain = /wrong version number|packet length too long/i.exec(err.message)
  if (plain) return `no TLS there (${plain[0]}): a plain server is ws://, not wss://`
  return err.code ?? err.message
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
