// Progress on stderr while a run lasts: one line rewritten each second, only on a terminal, so logs
// and pipes stay clean. Never per message: the engine reports once a second.
import { int, ms } from '../display.js'

/**
 * A progress printer, or undefined when the stream is not a TTY.
 * @param {NodeJS.WriteStream} stream usually process.stderr
 * @returns {{update: (progress: {sent: number, acked: number, errors: number, lost: number, elapsedMs: number, p99: number}) => void, done: () => void}|undefined}
 */
export function createProgress (stream) {
  if (!stream.isTTY) return undefined
  let lastAcked = 0
  return {
    update ({ acked, errors, lost, elapsedMs, p99 }) {
      const rate = acked - lastAcked
      lastAcked = acked
      stream.write(`\r\x1b[K${(elapsedMs / 1000).toFixed(0)} s  ${int(acked)} acked  ${int(rate)} msg/s  p99 ${ms(p99)} ms  ${errors} errors  ${lost} lost`)
    },
    done () { stream.write('\r\x1b[K') }
  }
}
