// Fan-out across the processes of a server (--processes) or of several servers: a publish that
// arrives at one process reaches the subscribers of every other through a broker, Redis pub/sub,
// NATS, or the cluster's primary over node:cluster IPC (lib/server/brokers/). The client library
// of a broker loads only when that broker is named. Frames keep their publisher's order.
import { UsageError, oneLine } from '../errors.js'

/** The brokers, by the scheme of their URL ('ipc' is a URL of its own). */
export const BROKERS = Object.freeze(['redis', 'nats', 'ipc'])

/** How long a broker may take to answer before connectBroker gives up on it. */
export const BROKER_CONNECT_TIMEOUT_MS = 2000

const DEFAULT_PORTS = { redis: 6379, nats: 4222 }
const START_HINTS = { redis: (port) => `redis-server --port ${port}`, nats: (port) => `nats-server --port ${port}` }
const BACKENDS = { redis: () => import('./brokers/redis.js'), nats: () => import('./brokers/nats.js'), ipc: () => import('./brokers/ipc.js') }

/**
 * Which broker a URL names, checked without connecting (the command line does this first).
 * @param {string} url redis://HOST:PORT, nats://HOST:PORT or ipc
 * @returns {{kind: 'redis'|'nats'|'ipc', port?: number}} port: where the broker listens, its default if the URL has none
 * @throws {UsageError} one line for anything else
 */
export function parseBrokerUrl (url) {
  if (url === 'ipc') return { kind: 'ipc' }
  let parsed = null
  try {
    parsed = new URL(url)
  } catch {}
  const kind = parsed?.protocol.slice(0, -1)
  if (!DEFAULT_PORTS[kind] || !parsed.hostname || (parsed.pathname !== '' && parsed.pathname !== '/')) {
    throw new UsageError(`unknown broker '${url}': expected redis://HOST:PORT, nats://HOST:PORT or ipc`)
  }
  return { kind, port: Number(parsed.port || DEFAULT_PORTS[kind]) }
}

/**
 * @typedef {object} Broker one process's link to the other processes of a fan-out
 * @property {'redis'|'nats'|'ipc'} name
 * @property {(topic: string, frame: Buffer, isBinary: boolean) => void} publish sends the frame to every
 *   other process (never back to this one); nothing per message but the send
 * @property {(handler: (topic: string, frame: Buffer, isBinary: boolean) => void) => void} onFrame receives
 *   the frames other processes published, each publisher's in its order
 * @property {() => Promise<void>} close ends the link; onLost is not called for it
 */

/**
 * Connects this process to the broker.
 * @param {string} url redis://HOST:PORT, nats://HOST:PORT, or ipc (a cluster worker relays through its
 *   primary over node:cluster IPC)
 * @param {{onLost?: (reason: string) => void}} [options] onLost: called at most once, with one line,
 *   if the established link goes away (no retry: the fan-out cannot be trusted past it)
 * @returns {Promise<Broker>}
 * @throws {UsageError} one line when the URL names no broker or the broker cannot be reached within
 *   about BROKER_CONNECT_TIMEOUT_MS
 */
export async function connectBroker (url, { onLost = () => {} } = {}) {
  const { kind, port } = parseBrokerUrl(url)
  let open = false
  const lost = (why) => {
    if (!open) return
    open = false
    onLost(`broker ${url} ${why}`)
  }
  const { connect } = await BACKENDS[kind]()
  const connecting = connect(url, lost, BROKER_CONNECT_TIMEOUT_MS)
  const link = await withDeadline(connecting, (backend) => backend.close()).catch((err) => {
    if (err instanceof UsageError) throw err
    const hint = START_HINTS[kind] ? ` (start one: ${START_HINTS[kind](port)})` : ''
    throw new UsageError(`broker ${url} does not answer: ${err.code ?? oneLine(err)}${hint}`)
  })
  open = true
  return {
    name: kind,
    publish: link.publish,
    onFrame: link.onFrame,
    close () {
      open = false
      return link.close()
    }
  }
}

/**
 * The connection, or a timeout error once BROKER_CONNECT_TIMEOUT_MS and a second have passed (the
 * client libraries' own timeouts cover the TCP connect, not a peer that accepts and stays silent);
 * a connection made after that is closed.
 */
function withDeadline (connecting, discard) {
  let timer
  const deadline = new Promise((resolve, reject) => {
    timer = setTimeout(() => {
      reject(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' }))
      connecting.then(discard, () => {})
    }, BROKER_CONNECT_TIMEOUT_MS + 1000)
  })
  return Promise.race([connecting, deadline]).finally(() => clearTimeout(timer))
}
