// The parent's side of the batch clients (lib/compare/batch-client.js): each one child process, asked
// one request at a time over IPC. compare's generations and capacity's probes both drive them;
// compare opens one per row and format (openBatchClients).
import { once } from 'node:events'
import { forkNodeScript } from '../processes.js'
import { CpuClock } from '../cpu-time.js'
import { UsageError } from '../errors.js'

/**
 * V8's heap as a process under steady load has it, for the Node servers and the clients. The
 * schedule idles every process between its turns, and V8 sizes its young generation by the
 * allocation rate it sees: it shrank and grew it in the middle of runs, and one process's
 * scavenges per generation went from 1-3 to 7-24 for the same format (p99 moved with them). So the
 * young generation stays at V8's own maximum (16 MB semi-spaces on 64-bit). And the old generation
 * starts at 256 MB: the default limit was reached about 100 s into every run, so the servers' one
 * major collection fell in one of the last generations, in whichever format's batch it met, and
 * after it V8 shrank their young generation (three times the scavenges): that generation's p99
 * deviated 57% from the row's mean, against 26% in the others. A default run now makes no major
 * collection outside the people test's own; a longer one makes few (docs/method.md).
 */
export const HEAP_FLAGS = ['--min-semi-space-size=16', '--initial-old-space-size=256']
/**
 * Node's flags for the batch clients. A client idles through the other rows and formats' turns, as
 * no real client does, and V8's memory reducer takes idleness as the moment to shrink the heap: a
 * major collection whose marking threads (50 ms of them in a people client) ran on the clients'
 * core in another client's batch, holding each of its replies to the scheduler's 4 ms tick for a
 * whole generation's p99.
 */
const CLIENT_NODE_FLAGS = ['--no-memory-reducer', ...HEAP_FLAGS]

/** The parent's handle on one batch client process (lib/compare/batch-client.js). */
export class BatchClient {
  /** @param {string} name how errors name it */
  constructor (name) {
    const child = forkNodeScript('lib/compare/batch-client.js', { nodeFlags: CLIENT_NODE_FLAGS })
    this.child = child
    this.name = name
    /** The format it is in this generation. */
    this.format = null
    this.pid = child.pid
    this.clock = new CpuClock(child.pid)
    this.stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk) => { this.stderr += chunk })
    this.exited = once(child, 'exit')
  }

  /** Sends one request and waits for its answer; an error from the client fails the comparison. */
  async ask (request) {
    this.child.send(request)
    const answer = await Promise.race([
      once(this.child, 'message').then(([message]) => message),
      this.exited.then(([code]) => ({ type: 'error', message: `exited with ${code}: ${this.stderr.trim().split('\n').at(-1) ?? ''}` }))
    ])
    if (answer.type === 'error') throw new UsageError(`${this.name}${this.format ? ` (${this.format})` : ''} failed: ${answer.message}`)
    return answer
  }

  /** Makes it one format for a generation, loading the server at `url`. */
  async connect (format, url) {
    this.format = format
    await this.ask({ type: 'connect', format, url })
  }

  /** Runs one batch: closed loop with rate null. */
  batch (key, count, rate, measured) {
    return this.ask({ type: 'batch', key, count, rate, measured })
  }

  /**
   * Runs one of capacity's probes: `count` messages at `rate` per second (batch-client.js probe);
   * a fan-out's led in by `lead` publishes on its own connections.
   */
  probe (key, count, rate, percentiles, lead = 0) {
    return this.ask({ type: 'probe', key, count, rate, percentiles, lead })
  }

  /** @returns {Promise<Record<string, object|null>>} one report per row key */
  async reports () {
    return (await this.ask({ type: 'report' })).reports
  }

  /** Ends the process: it exits once its channel closes. */
  async close () {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return
    if (this.child.connected) this.child.disconnect()
    else this.child.kill()
    await this.exited
  }
}

/**
 * Starts the batch client processes: per row, one per format, each ready to be any of them. If one
 * cannot start, the others are closed, not left behind.
 * @param {object} options runLockstep's: formats, codecModules, rows (lockstep.js's LockstepRow), load
 * @returns {Promise<{clients: BatchClient[][], bytes: number[]}>} clients by row, and each row's
 *   largest mean message, bytes, over its formats
 */
export async function openBatchClients ({ formats, codecModules, rows, load }) {
  // They start on every CPU, each making its row ready at once; then they move to the clients' CPU.
  const fork = (name) => new BatchClient(name)
  const clients = rows.map((row) => formats.map((_, i) => fork(`client ${i + 1} of ${row.label}`)))
  const opened = await Promise.allSettled(rows.flatMap(({ key, test, custom, profile }, r) => {
    const plan = { formats, codecModules, load, rows: [{ key, test, custom, profile }] }
    return clients[r].map((client) => client.ask({ type: 'open', plan }))
  }))
  const failed = opened.find((attempt) => attempt.status === 'rejected')
  if (failed) {
    await Promise.all(clients.flat().map((client) => client.close()))
    throw failed.reason
  }
  return { clients, bytes: rows.map((_, r) => opened[r * formats.length].value.bytes) }
}
