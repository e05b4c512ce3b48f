// The messages between a --processes server's primary and its workers (lib/server/cluster.js and
// cluster-worker.js): questions and their answers, tagged apart from cluster's own messages.

/** The worker's options travel in its environment, as JSON. */
export const OPTIONS_ENV = 'WSBENCH_SERVER_OPTIONS'
/** Marks this project's IPC messages (cluster uses the same channel for its own). */
export const TAG = 'wsbench'
/** Tags a worker's batch of fan-out frames, which the primary relays to every other worker (the ipc broker). */
export const RELAY = 'relay'
/** Longest wait for a process's answer: a worker that cannot answer in this time is stuck. */
const ANSWER_TIMEOUT_MS = 10_000

/** Questions sent over one IPC channel, each settled by the answer that carries its id. */
export class Questions {
  /** @param {{send: Function}} channel a cluster worker (from the primary) or process (from a worker) */
  constructor (channel) {
    this.channel = channel
    this.pending = new Map()
    this.nextId = 0
  }

  /**
   * @param {string} kind what is asked: snapshot, metrics, close or exposition
   * @returns {Promise<any>} the answer's value
   */
  ask (kind) {
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.settle({ id, error: `no answer to '${kind}' within ${ANSWER_TIMEOUT_MS} ms` }), ANSWER_TIMEOUT_MS)
      this.pending.set(id, { resolve, reject, timer })
      this.channel.send({ [TAG]: kind, id }, (err) => { if (err) this.settle({ id, error: err.message }) })
    })
  }

  /** Settles the question an answer (or a failure) is for. */
  settle ({ id, value, error }) {
    const question = this.pending.get(id)
    if (!question) return
    this.pending.delete(id)
    clearTimeout(question.timer)
    if (error === undefined) question.resolve(value)
    else question.reject(new Error(error))
  }
}

/**
 * Answers one question with what `work` gives, or with its error.
 * @param {{send: Function}} channel where the question came from
 * @param {{id: number}} question
 * @param {() => any} work
 * @returns {Promise<void>} once the answer is sent
 */
export async function answer (channel, { id }, work) {
  let reply
  try {
    reply = { [TAG]: 'answer', id, value: await work() }
  } catch (err) {
    reply = { [TAG]: 'answer', id, error: err.message }
  }
  // A peer that is gone needs no answer.
  if (!(channel.isConnected?.() ?? channel.connected)) return
  await new Promise((resolve) => channel.send(reply, resolve))
}

/**
 * The primary's half of the ipc broker (brokers/ipc.js): a worker's batch of frames goes on, as it
 * came and so in its order, to every other worker still connected; one send per worker per batch.
 * @param {import('node:cluster').Worker} from the worker that published them
 * @param {object} batch its message, sent on unchanged
 * @param {Iterable<import('node:cluster').Worker>} workers
 */
export function relayFrames (from, batch, workers) {
  for (const worker of workers) {
    // A worker that closes meanwhile misses frames it could not deliver anyway.
    if (worker !== from && worker.isConnected()) worker.send(batch, ignore)
  }
}

const ignore = () => {}
