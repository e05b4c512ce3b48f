// The redis broker: Redis pub/sub on one channel. A subscribed Redis connection can do nothing but
// receive, so each process publishes on a second one; Redis delivers a publish to every subscriber,
// its publisher's own process included, so each envelope names its origin and that process skips it.
// The subscriber is node-redis's. The publisher writes PUBLISH commands to its socket itself: through
// node-redis a publish cost 23 µs of CPU (a command object and a promise each), written directly about 1.
import { randomBytes } from 'node:crypto'
import { createClient } from '@redis/client'
import { Envelopes, FANOUT_CHANNEL } from './envelope.js'
import { greetedSocket } from './greeting.js'

const CRLF = Buffer.from('\r\n')
const PUBLISH_HEAD = `*3\r\n$7\r\nPUBLISH\r\n$${Buffer.byteLength(FANOUT_CHANNEL)}\r\n${FANOUT_CHANNEL}\r\n$`

/**
 * @param {string} url redis://HOST:PORT
 * @param {(why: string) => void} lost told once the established link drops (never retried)
 * @param {number} timeoutMs longest TCP connect
 * @returns {Promise<{publish: Function, onFrame: Function, close: () => Promise<void>}>}
 */
export async function connect (url, lost, timeoutMs) {
  const envelopes = new Envelopes(randomBytes(8))
  const subscriber = createClient({ url, socket: { connectTimeout: timeoutMs, reconnectStrategy: false } })
  // Before the link is up an error also rejects connect(), and lost() ignores it.
  subscriber.on('error', (err) => lost(`connection lost: ${err.message}`))
  let handler = () => {}
  let publisher
  try {
    publisher = await connectPublisher(new URL(url), lost, timeoutMs)
    await subscriber.connect()
    await subscriber.subscribe(FANOUT_CHANNEL, (envelope) => envelopes.unwrap(envelope, handler), true)
  } catch (err) {
    publisher?.destroy()
    subscriber.destroy()
    throw err
  }
  let corked = false
  const uncork = () => {
    corked = false
    publisher.uncork()
  }
  return {
    publish (topic, frame, isBinary) {
      // Every publish of this tick (all the frames of one read from a socket) leaves in one write.
      if (!corked) {
        corked = true
        publisher.cork()
        process.nextTick(uncork)
      }
      const envelope = envelopes.wrap(topic, frame, isBinary)
      publisher.write(`${PUBLISH_HEAD}${envelope.length}\r\n`)
      publisher.write(envelope)
      publisher.write(CRLF)
    },
    onFrame (newHandler) { handler = newHandler },
    async close () {
      const closed = publisher.closed ? null : new Promise((resolve) => publisher.once('close', resolve))
      publisher.end()
      await Promise.allSettled([subscriber.close(), closed])
    }
  }
}

/**
 * The publishing connection: a socket that has answered PING (after AUTH, when the URL has a
 * password). PUBLISH answers one line each, a subscriber count, read past; an error line ends the link.
 */
async function connectPublisher (url, lost, timeoutMs) {
  const { username, password } = url
  const auth = password ? `AUTH ${username ? `${decodeURIComponent(username)} ` : ''}${decodeURIComponent(password)}\r\n` : ''
  const exchange = { hello: `${auth}PING\r\n`, answered: /\+PONG\r\n$/, refused: /^-(.*)\r\n/m, defaultPort: 6379 }
  const socket = await greetedSocket(url, exchange, timeoutMs)
  let lineStart = true
  socket.on('data', (chunk) => {
    for (let i = 0; i < chunk.length; i++) {
      if (lineStart && chunk[i] === 0x2d) return lost(`refused a publish: ${chunk.toString('utf8', i + 1).split('\r\n')[0]}`) // '-'
      lineStart = chunk[i] === 0x0a
    }
  }).resume()
  socket.on('error', (err) => lost(`connection lost: ${err.code ?? err.message}`))
  socket.on('close', () => lost('connection lost: closed by the server'))
  return socket
}
