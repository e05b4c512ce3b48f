// The ipc broker: a worker of a --processes server sends its frames to the primary over
// node:cluster's IPC channel, and the primary sends them on to every other worker
// (relayFrames in cluster-ipc.js). No broker to run, but every frame crosses the primary.
import cluster from 'node:cluster'
import { UsageError } from '../../errors.js'
import { RELAY, TAG } from '../cluster-ipc.js'

const ignore = () => {}

/**
 * @param {string} url 'ipc'
 * @param {(why: string) => void} lost told once the primary is gone
 * @returns {Promise<{publish: Function, onFrame: Function, close: () => Promise<void>}>}
 * @throws {UsageError} outside a cluster worker: there is no primary to relay
 */
export async function connect (url, lost) {
  if (!cluster.isWorker) throw new UsageError('broker ipc relays between the worker processes of one server: it needs --processes 2 or more')
  // Flat [topic, frame, isBinary, ...]: frames published in one turn of the event loop cross in one
  // message, since each IPC message costs the primary far more than its bytes do.
  let batch = []
  let handler = ignore
  const send = () => {
    if (process.connected) process.send({ [TAG]: RELAY, frames: batch }, ignore)
    batch = []
  }
  const receive = (message) => {
    if (message?.[TAG] !== RELAY) return
    const { frames } = message
    for (let i = 0; i < frames.length; i += 3) handler(frames[i], frames[i + 1], frames[i + 2])
  }
  const disconnected = () => lost('connection lost: the primary process is gone')
  process.on('message', receive)
  process.once('disconnect', disconnected)
  return {
    publish (topic, frame, isBinary) {
      if (batch.push(topic, frame, isBinary) === 3) setImmediate(send)
    },
    onFrame (newHandler) { handler = newHandler },
    async close () {
      process.off('message', receive)
      process.off('disconnect', disconnected)
    }
  }
}
