// Opening one load connection: the URL naming test, format and direction, TLS and headers for
// servers that are not ours, a shaping proxy in between, and the schema handshake.
import net from 'node:net'
import WebSocket from 'ws'
import { connectionUrl } from '../protocol.js'

/**
 * Opens one connection for the run's test and format.
 * @param {import('./engine.js').LoadOptions & {connectTimeoutMs?: number, onMessage?: Function, from?: number|null}} options
 *   the run's; connectTimeoutMs bounds the attempt; onMessage listens from the start, frames that come with the upgrade
 *   included; from: a fan-out subscriber come back asks for the measured publishes from this one on
 * @returns {Promise<{ws: WebSocket, socket: import('node:net').Socket}>} resolves once open (and
 *   past the handshake, if any), with the TCP socket whose byte counters the run reads; rejects
 *   with a one-line reason
 */
export function connect ({
  url, connectUrl, test, codec, compress = false, direction = 'up', role, repeat, handshake, headers, subprotocol, insecure, connectTimeoutMs,
  onMessage, from = null
}) {
  const target = connectionUrl(url, { test: test.name, format: codec.name, direction, role, repeat, from })
  const dialed = connectUrl && new URL(connectUrl)
  const ws = new WebSocket(target, subprotocol, {
    perMessageDeflate: compress,
    headers,
    rejectUnauthorized: !insecure,
    // Unset, an unreachable server (a cut link) holds the attempt for as long as TCP retries its SYN.
    handshakeTimeout: connectTimeoutMs,
    // Through a shaping proxy: the TCP connection goes to the proxy, the request still names the server.
    ...(dialed && { createConnection: () => net.connect(Number(dialed.port), dialed.hostname) })
  })
  let socket
  ws.once('upgrade', (response) => { socket = response.socket })
  if (onMessage) ws.on('message', onMessage)
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      if (!handshake) return resolve({ ws, socket })
      ws.once('message', (data) => {
        const answer = data.toString('utf8', 0, 500)
        if (answer === handshake.expect) return resolve({ ws, socket })
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
    ws.once('error', (err) => reject(new Error(`cannot connect to ${url}: ${err.code ?? err.message}${err.code === 'ECONNREFUSED' ? REFUSED_HINT : ''}`)))
  })
}

/** The first thing a new user meets: a client started before any server. */
const REFUSED_HINT = ' (no server listening there: start one with node server.js)'

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
