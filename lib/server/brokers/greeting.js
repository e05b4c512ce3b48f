// A broker's first answer, read before anything is built on its connection: a peer that accepts
// and stays silent (not a broker, or a stuck one) is then a timeout, its socket closed.
import net from 'node:net'

/**
 * Connects, sends `hello` and resolves with the socket once what the peer sent passes `answered`.
 * @param {URL} url the broker's URL (host and port; the port defaults to defaultPort)
 * @param {{hello: string, answered: RegExp, refused: RegExp, defaultPort: number}} exchange refused's first
 *   group is the reason a peer gives for refusing
 * @param {number} timeoutMs
 * @returns {Promise<net.Socket>} paused, nothing else read from it
 * @throws {Error} the socket's error (code ECONNREFUSED...), ETIMEDOUT, or the peer's refusal
 */
export function greetedSocket ({ hostname, port }, { hello, answered, refused, defaultPort }, timeoutMs) {
  const socket = net.connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || defaultPort), noDelay: true })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => socket.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })), timeoutMs)
    let text = ''
    const read = (chunk) => {
      text += chunk
      const refusal = refused.exec(text)
      if (refusal) return socket.destroy(new Error(refusal[1].trim()))
      if (!answered.test(text)) return
      clearTimeout(timer)
      socket.off('data', read).off('error', fail).pause()
      resolve(socket)
    }
    const fail = (err) => {
      clearTimeout(timer)
      reject(err)
    }
    socket.on('data', read).once('error', fail)
    if (hello) socket.write(hello)
  })
}
