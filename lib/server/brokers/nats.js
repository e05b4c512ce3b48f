// The nats broker: one NATS connection per process that publishes and subscribes on one subject,
// with noEcho, so the server never sends a process its own frames.
import { connect as connectNats } from 'nats'
import { Envelopes, FANOUT_CHANNEL } from './envelope.js'
import { greetedSocket } from './greeting.js'

/** A NATS server greets every connection with its INFO line. */
const NATS_GREETING = { hello: '', answered: /^INFO .*\r\n/, refused: /^-ERR (.*)\r\n/m, defaultPort: 4222 }

/**
 * @param {string} url nats://HOST:PORT
 * @param {(why: string) => void} lost told once the established link drops (never retried)
 * @param {number} timeoutMs longest wait for the server
 * @returns {Promise<{publish: Function, onFrame: Function, close: () => Promise<void>}>}
 */
export async function connect (url, lost, timeoutMs) {
  const envelopes = new Envelopes()
  // The client leaves its socket open when a peer accepts and never greets it: that case is caught first.
  ;(await greetedSocket(new URL(url), NATS_GREETING, timeoutMs)).destroy()
  const connection = await connectNats({ servers: url, noEcho: true, reconnect: false, timeout: timeoutMs })
  let handler = () => {}
  // The client hands each message's data as a Uint8Array view into its read buffer: a Buffer over the same bytes.
  const receive = (err, message) => {
    if (err) return
    const { data } = message
    envelopes.unwrap(Buffer.from(data.buffer, data.byteOffset, data.byteLength), handler)
  }
  connection.subscribe(FANOUT_CHANNEL, { callback: receive })
  // The subscription is only sent: once the server has answered a ping behind it, frames other
  // processes publish from now on reach this one (a publish racing it was lost before).
  await connection.flush()
  connection.closed().then((err) => lost(`connection lost: ${err?.message ?? 'closed by the server'}`))
  // NATS refuses a message over the server's max_payload (1 MiB unless configured): the fan-out
  // cannot go on without it, so the link counts as lost rather than drop a frame unsaid.
  const maxPayload = connection.info?.max_payload ?? Infinity
  return {
    publish (topic, frame, isBinary) {
      const envelope = envelopes.wrap(topic, frame, isBinary)
      if (envelope.length > maxPayload) {
        lost(`refused a ${envelope.length}-byte frame: over its max_payload of ${maxPayload} bytes (raise it in nats-server's configuration)`)
        connection.close()
        return
      }
      try {
        connection.publish(FANOUT_CHANNEL, envelope)
      } catch {
        // Closed: closed() reports why.
      }
    },
    onFrame (newHandler) { handler = newHandler },
    async close () {
      await connection.close()
    }
  }
}
