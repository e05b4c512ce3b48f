// The load engine's entry: runLoad opens the connections, runs the warm-up and the measured phase
// on them, and returns what was measured. Run owns the run's state (its connections, the phase
// under way, a failure, the error replies kept, the reconnects); the phases report to it only
// through the functions it gives them.
import { setTimeout as sleep } from 'node:timers/promises'
import { UsageError, oneLine } from '../errors.js'
import { createLatencyHistogram } from '../histogram.js'
import { Channel } from './channel.js'
import { compression, connect, negotiated } from './connection.js'
import { ConnectTimes } from './connect-times.js'
import { Reconnects } from './reconnects.js'
import { frameSource, replyJudge, sendOptions } from './messages.js'
import { createPacer } from './pacer.js'
import { Phase } from './phase.js'
import { Recorder } from './recorder.js'
import { emptyFigures } from '../outputs/figures.js'

/**
 * @typedef {object} LoadSettings what the user chose for a load run: the command line produces it,
 *   the engine runs it, and the report names it, each as it is
 * @property {string} url server URL (ws:// or wss://); test and format are added to its query
 * @property {number} [messages] messages to send and record (or durationMs)
 * @property {number} [durationMs] send for this long instead of a count
 * @property {number} [rate] messages per second in total: open loop, latency from the schedule
 * @property {import('./schedule.js').Stage[]} [stages] open loop on a ramp (--stages), from `rate` (or 0)
 *   through each stage's target; it sets the measured phase's duration
 * @property {number} [connections] parallel WebSocket connections (default 1)
 * @property {number} [inflight] messages outstanding per connection; 1 is strict request/response.
 *   With a rate, the most a connection may have outstanding before sends wait (and latency grows)
 * @property {{messages?: number, durationMs?: number}} [warmup] sent first, not recorded
 * @property {number} [startAt] epoch ms: after connecting and warming up, wait for this instant
 *   before the measured phase, so several hosts measure the same window (--start-at)
 * @property {number} [timeoutMs] a message with no reply after this long is lost (default 10 s)
 * @property {boolean} [compress] offer permessage-deflate
 * @property {boolean} [repeat] the payloads are one message repeated: the URL tells the server, which
 *   then sends its one message too (direction down)
 * @property {'up'|'down'|'echo'} [direction] up: send the payload, expect ACK; down: send a small
 *   request, expect the payload and decode it; echo: send the payload, expect it back and decode it
 * @property {{any: boolean}|{text: string}} [ack] what counts as a reply when up: default the text `ACK`
 * @property {Record<string, string>} [headers] extra headers on the upgrade request
 * @property {string} [subprotocol] Sec-WebSocket-Protocol to ask for
 * @property {boolean} [insecure] accept any TLS certificate (self-signed test servers)
 * @property {string} [ca] a certificate (PEM) to trust beside Node's roots: the server's own, or its CA
 * @property {boolean} [reconnect] when a connection drops, reconnect and go on (its in-flight messages are lost)
 * @property {{baseMs: number, capMs: number}} [backoff] --reconnect's waits: full jitter up to base x 2^attempt, at most cap
 * @property {string} [pacing] how an open loop is woken when a message is due (lib/load/pacer.js): precise
 *   (default; precise:<µs> sets its window), spin, or timer (Node's timers, late by up to a millisecond or
 *   more, but no CPU spent waiting: compare's batches, which measure CPU)
 * @property {string|null} [pacingReason] why that pacing, when the run chose it (lib/load/pacer.js defaultPacing)
 * @property {number} [tickMs] precise pacing's tick, how far apart the messages it groups go (lib/load/budget.js):
 *   a millisecond unless given (capacity's generators size it by the objective)
 * @property {boolean} [preencode] encode each payload once before the run and send those bytes in turn,
 *   so the client's CPU leaves encoding out (capacity's generators)
 * @property {boolean} [cork] open loop: the messages due in one turn go out in one write per connection,
 *   not one each (capacity's generators: their syscalls were their largest cost; a client standing for
 *   many devices sends each message on its own, as they would)
 */

/**
 * @typedef {LoadSettings & LoadMaterials} LoadOptions everything runLoad takes
 */

/**
 * @typedef {object} LoadMaterials what a run is made of besides the settings
 * @property {import('../payloads/catalog.js').TestInfo} test
 * @property {PreparedMessages} prepared the messages sent, in order, cycling when there are more
 *   messages to send than these (one: the same message every time)
 * @property {import('../codecs/registry.js').Codec} codec
 * @property {string} [connectUrl] where to open the TCP connection when it differs from url (a shaping proxy)
 * @property {{frame: string, expect: string}} [handshake] sent first on every connection; the run starts
 *   once the server answers `expect` (a custom schema registration), and none of it is measured
 * @property {AbortSignal} [signal] aborting stops sending; replies in flight get a moment, the rest is lost
 * @property {string} [role] a fan-out connection's role, in its URL
 * @property {(measured: object) => string} [farewell] a text frame each connection sends after the
 *   measured phase, made from its result (a fan-out publisher's END)
 * @property {(progress: {sent: number, acked: number, errors: number, lost: number, elapsedMs: number, p99: number}) => void} [onTick]
 *   called once a second while measuring
 * @property {{add: (source: {figures: () => object}) => void}} [live] --out: the run adds itself, so that a
 *   timer can read what it has measured so far (lib/outputs/figures.js LiveFigures)
 */

/**
 * @typedef {object} LoadResult
 * @property {{sent:number, acked:number, errors:number, lost:number}} messages measured phase only
 * @property {number} startedAt epoch ms when the measured phase began
 * @property {number} durationMs closed loop: from the first measured send to the last reply; open loop:
 *   the schedule's window (see OpenLoopSchedule#windowMs), or to the last reply if that came later
 * @property {import('hdr-histogram-js').Histogram} histogram latencies in µs: from the scheduled send
 *   with a rate (coordinated omission corrected), else from the send
 * @property {import('hdr-histogram-js').Histogram|null} uncorrectedHistogram with a rate: from the actual send
 * @property {{payloadPerMessage:number, written:number, read:number}} bytes written and read are
 *   counted on the TCP sockets during the measured phase: WebSocket frame headers and masks included
 * @property {{userUs: number, systemUs: number, process: string}|null} cpu this process's user and system CPU
 *   over the measured phase (all its threads), and which process that was (host:pid); null when it did not run
 * @property {{cpuShare: number, loopBusy: number, loopDelayMs: {p99: number, max: number}}|null} generator how
 *   busy the generator itself was over the measured phase: the process's CPU time per wall time (1 = one
 *   core), the share of the time this thread's event loop was busy, and how late its timers ran
 * @property {Array<{t: number, acked: number, errors: number, p50: number, p99: number, histogram: string}>} timeSeries
 *   per second: t is the epoch second, latencies in ms
 * @property {{rate: number, sendRate: number}|null} target with a rate: asked and achieved send rate
 * @property {ReturnType<import('./reconnects.js').Reconnects['result']>} reconnects
 * @property {{accepted: boolean}|null} compression with --compress: whether the server took permessage-deflate
 * @property {{version: string, cipher: string}|null} tls over wss://: the TLS version and cipher negotiated
 * @property {boolean} interrupted stopped by the signal
 * @property {string[]} errorReplies the first few error replies from the server: text as it came, binary
 *   or unprintable replies as their size and first bytes
 * @property {string|null} failure why the run did not complete, or null
 */

/**
 * Sends encoded payloads over `connections` WebSocket connections and records each message's round
 * trip (send to its in-order reply). Closed loop by default: each reply releases the next send,
 * `inflight` outstanding per connection. With `rate`, open loop: sends follow a schedule whether
 * or not replies came back, batched per scheduler turn (never one timer per message), and latency
 * counts from the scheduled time, so a stalled server shows up in the tail. Every sent message
 * ends up acked, errored (an error reply) or lost (no reply: timeout, stop or connection lost).
 * @param {LoadOptions} options
 * @returns {Promise<LoadResult>}
 */
export async function runLoad (options) {
  const { prepared: { sizes: payloadSizes }, warmup = {}, signal } = options
  const run = await openRun(options)
  const reason = () => typeof signal.reason === 'string' ? signal.reason : 'interrupted'
  const stop = () => run.stop(reason())
  if (signal?.aborted) run.fail(reason()) // before the first send
  signal?.addEventListener('abort', stop, { once: true })
  try {
    if ((warmup.messages > 0 || warmup.durationMs > 0) && !signal?.aborted) {
      // An open loop warms up at its rate: a closed-loop burst of --inflight would be another load.
      // A ramp warms up at the rate it starts from, or its first stage's target when that is 0.
      const rate = options.rate || options.stages?.[0].target
      await run.runPhase({ count: warmup.messages, durationMs: warmup.durationMs, rate })
    }
    if (options.startAt > Date.now() && !run.failure && !signal?.aborted) await waitUntil(options.startAt, signal)
    const { messages: count, durationMs, rate, stages } = options
    const measured = run.failure || signal?.aborted
      ? run.emptyResult()
      : await run.runPhase({ count, durationMs, rate, stages, recording: true })
    if (options.farewell && !signal?.aborted) {
      for (const channel of run.channels) channel.farewell(options.farewell(measured))
    }
    const bytes = { payloadPerMessage: payloadSizes.mean, payloadSizes, ...measured.bytes }
    const interrupted = Boolean(signal?.aborted)
    const connect = run.connectTimes.result()
    return { ...measured, bytes, compression: run.compression, tls: run.tls, connect, interrupted }
  } finally {
    signal?.removeEventListener('abort', stop)
    await run.close()
  }
}

/**
 * Opens a run's connections, for phases run one after another on them (runLoad's warm-up and
 * measured phase, or compare's batches); close() closes them. One connection that cannot open
 * fails it, and the ones that did open are closed, not left behind.
 * @param {LoadOptions} options
 * @returns {Promise<Run>}
 */
export async function openRun (options) {
  const { connections = 1, inflight = 1 } = options
  const run = new Run(options, options.prepared.natives)
  const attempts = await Promise.allSettled(Array.from({ length: connections }, () => connect(options)))
  const opened = attempts.filter((attempt) => attempt.status === 'fulfilled').map((attempt) => attempt.value)
  for (const { timing } of opened) run.connectTimes.record(timing)
  const refused = attempts.find((attempt) => attempt.status === 'rejected')
  if (refused) {
    for (const { ws } of opened) ws.terminate()
    throw refused.reason
  }
  run.channels.push(...opened.map((connection) => new Channel(connection, inflight, run.sendOptions, run.phase)))
  run.compression = compression(options.compress, opened)
  run.tls = negotiated(opened)
  options.live?.add(run)
  return run
}

/**
 * The state of one load run: its connections, the phase under way, a failure, the error replies
 * kept and the reconnects, which span the whole run. It gives each phase the channels and the
 * functions to judge, frame, fail and reconnect with (see Traffic in phase.js).
 */
export class Run {
  /**
   * @param {LoadOptions} options
   * @param {unknown[]} natives the payloads in the codec's own form, encoded in turn for every message
   */
  constructor (options, natives) {
    const { codec, timeoutMs = 10000, direction = 'up', reconnect, onTick } = options
    this.options = options
    this.timeoutMs = timeoutMs
    this.sendOptions = sendOptions(codec, direction, options)
    /** @type {import('./channel.js').Channel[]} */
    this.channels = []
    this.failure = null
    this.errorReplies = []
    this.reconnects = new Reconnects(options.backoff)
    /** With --compress: whether the server took permessage-deflate, once the connections are open. */
    this.compression = null
    /** Over wss://: the TLS version and cipher negotiated. */
    this.tls = null
    /** How long every connection (and reconnection) took to open, and why attempts failed. */
    this.connectTimes = new ConnectTimes()
    /** The recorders of its closed-loop and open-loop phases, made by the first of each. */
    this.recorders = [null, null]
    /** @type {import('./phase.js').Traffic} */
    this.traffic = {
      channels: this.channels,
      judge: replyJudge({ codec, direction, ack: options.ack }, this.errorReplies),
      nextFrame: frameSource(codec, natives, direction, options.preencode, this.sendOptions),
      cork: options.cork === true,
      timeoutMs,
      onFailure: (reason) => { this.failure ??= reason },
      reconnect: reconnect ? (channel, lost) => this.reconnect(channel, lost) : null,
      onTick,
      pacer: null,
      // One recorder per kind of phase, reused: see Recorder#start.
      recorder: (openLoop) => (this.recorders[Number(openLoop)] ??= new Recorder(openLoop, this.traffic.pacer))
    }
    // Before the first phase, an idle one: nothing may be sent, a closed connection fails the run.
    this.phase = new Phase(this.traffic, { count: 0 })
  }

  /**
   * Runs one phase to its end. A recorded phase's histograms are the run's, emptied by its next
   * recorded phase of the same loop: take what is needed of them before running another.
   * @param {import('./phase.js').PhaseSpec} spec
   * @returns {Promise<import('./phase.js').PhaseResult & {reconnects: object, errorReplies: string[], failure: string|null}>}
   */
  async runPhase (spec) {
    if ((spec.rate > 0 || spec.stages) && !this.traffic.pacer) {
      const pacer = createPacer(this.options.pacing, this.options.pacingReason, this.options.tickMs)
      await pacer.start()
      this.traffic.pacer = pacer
    }
    this.phase = new Phase(this.traffic, spec)
    const result = await this.phase.start()
    return { ...result, reconnects: this.reconnects.result(), errorReplies: this.errorReplies, failure: this.failure }
  }

  /** Closes every connection, and the pacer's thread. */
  async close () {
    await Promise.all([...this.channels.map((channel) => channel.close()), this.traffic.pacer?.close()])
  }

  /** The run fails: the first reason stands, and the phase under way stops sending. */
  fail (reason) {
    this.failure ??= reason
    this.phase.halt()
  }

  /**
   * Stops sending (SIGINT): replies in flight get a short grace, then count as lost.
   * @param {string} reason
   */
  stop (reason) {
    if (!this.phase.isActive()) return
    this.fail(reason)
    this.phase.stop()
  }

  /**
   * --reconnect: opens the channel's connection again, each attempt after a backoff with full
   * jitter and in its turn (Reconnects#wait), until the server is back (the channel then takes messages again in
   * the phase under way), the phase stops sending, or --timeout passes, which fails the run.
   * @param {import('./channel.js').Channel} channel
   * @param {number} lost the messages it had outstanding when it dropped
   */
  async reconnect (channel, lost) {
    channel.setReconnecting(true)
    const since = this.reconnects.dropped(lost)
    let timedOut = false
    for (let attempt = 0; this.phase.sending && !channel.closing; attempt++) {
      await this.reconnects.wait(attempt)
      if (!this.phase.sending || channel.closing) break
      try {
        const connection = await connect(this.options)
        this.connectTimes.record(connection.timing)
        if (channel.closing) {
          connection.ws.terminate()
          break
        }
        channel.attach(connection)
        this.reconnects.back(since)
        return this.phase.resume(channel)
      } catch (err) {
        this.connectTimes.fail(err.cause ?? 'other')
        timedOut = performance.now() - since > this.timeoutMs
        if (timedOut) break
      }
    }
    this.reconnects.gone()
    channel.setReconnecting(false)
    if (timedOut) this.fail(`the server did not come back within ${this.timeoutMs} ms (--reconnect, --timeout)`)
    this.phase.checkDone()
  }

  /**
   * What the run has measured so far (see Figures in lib/outputs/figures.js), for --out's timer:
   * the measured phase's figures once it has started, and every connection's opening.
   * @returns {import('../outputs/figures.js').Figures}
   */
  figures () {
    const phase = this.phase
    const measuring = phase.recorder !== null && phase.startedAt > 0
    return {
      ...emptyFigures(),
      ...(measuring && phase.figures()),
      connect: this.connectTimes.histograms.total,
      connectFailures: this.connectTimes.failedAttempts(),
      reconnects: this.reconnects.count
    }
  }

  /** The measured phase's result when it never ran (a failure or an interrupt came first). */
  emptyResult () {
    return {
      messages: { sent: 0, acked: 0, errors: 0, lost: 0 },
      startedAt: Date.now(),
      durationMs: 0,
      histogram: createLatencyHistogram(),
      uncorrectedHistogram: null,
      bytes: { written: 0, read: 0 },
      cpu: null,
      generator: null,
      timeSeries: [],
      target: null,
      reconnects: this.reconnects.result(),
      errorReplies: this.errorReplies,
      failure: this.failure
    }
  }
}

/** Sleeps until an epoch instant (a run's common start), or until the signal aborts. */
async function waitUntil (epochMs, signal) {
  try {
    await sleep(epochMs - Date.now(), undefined, { signal })
  } catch (err) {
    if (err.name !== 'AbortError') throw err
  }
}

/**
 * @typedef {object} PreparedMessages the messages a run sends, made ready once before it
 * @property {unknown[]} natives each in the codec's own form (for protobuf, message objects, as an
 *   application holds them): the hot path only encodes and sends
 * @property {{messages: number, mean: number, min: number, p50: number, p99: number, max: number}} sizes
 *   their encoded sizes: mean (rounded), min, p50, p99, max, and how many
 */

/**
 * Prepares and encodes each message once, before anything connects; a codec that cannot is
 * refused, naming the message and what it belongs to.
 * @param {import('../codecs/registry.js').Codec} codec
 * @param {object[]} payloads the plain JSON messages, in order
 * @param {string} what the test or file they come from, for the refusal (`test medium`, `feed.jsonl`)
 * @returns {PreparedMessages}
 * @throws {UsageError}
 */
export function prepareMessages (codec, payloads, what) {
  const natives = []
  const sizes = []
  payloads.forEach((payload, i) => {
    try {
      const native = codec.prepare(payload)
      sizes.push(byteLength(codec.encode(native)))
      natives.push(native)
    } catch (err) {
      const which = payloads.length > 1 ? `message ${i + 1} of ` : ''
      throw new UsageError(`format '${codec.name}' cannot encode ${which}${what}: ${oneLine(err)}`)
    }
  })
  return { natives, sizes: sizeSummary(sizes) }
}

function sizeSummary (sizes) {
  const sorted = sizes.sort((a, b) => a - b)
  const at = (percentile) => sorted[Math.min(sorted.length - 1, Math.ceil(percentile / 100 * sorted.length) - 1)]
  const mean = Math.round(sorted.reduce((sum, size) => sum + size, 0) / sorted.length)
  return { messages: sorted.length, mean, min: sorted[0], p50: at(50), p99: at(99), max: sorted[sorted.length - 1] }
}

function byteLength (frame) {
  return typeof frame === 'string' ? Buffer.byteLength(frame) : frame.byteLength
}
