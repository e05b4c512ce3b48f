import { performance } from 'node:perf_hooks'
import WebSocket from 'ws'
import { createLatencyHistogram, encodeHistogram, summarizeLatency } from '../histogram.js'
import { connect } from './connection.js'
import { ACK, DOWN_REQUEST, isErrorReply } from '../protocol.js'

/** How long to wait for the close handshake of each connection after the run. */
const CLOSE_GRACE_MS = 1000

/** What a `down` client sends for each message, as a frame ready to send. */
const DOWN_REQUEST_FRAME = Buffer.from(DOWN_REQUEST)

/** An open-loop connection with this much unsent data takes no more messages until it drains. */
const MAX_BUFFERED_BYTES = 1024 * 1024

/** After a stop (SIGINT), replies still in flight get at most this long to arrive. */
const STOP_GRACE_MS = 2000

/** Between reconnection attempts while a server is away (--reconnect). */
const RECONNECT_BACKOFF_MS = 100

/**
 * @typedef {object} LoadOptions
 * @property {string} url server URL (ws:// or wss://); test and format are added to its query
 * @property {import('../payloads/catalog.js').TestInfo} test
 * @property {object} payload the plain JSON payload sent in every message
 * @property {import('../codecs/registry.js').Codec} codec
 * @property {number} [messages] messages to send and record (or durationMs)
 * @property {number} [durationMs] send for this long instead of a count
 * @property {number} [rate] messages per second in total: open loop, latency from the schedule
 * @property {number} [connections] parallel WebSocket connections (default 1)
 * @property {number} [inflight] messages outstanding per connection; 1 is strict request/response.
 *   With a rate, the most a connection may have outstanding before sends wait (and latency grows)
 * @property {{messages?: number, durationMs?: number}} [warmup] sent first, not recorded
 * @property {number} [timeoutMs] a message with no reply after this long is lost
 * @property {boolean} [compress] offer permessage-deflate
 * @property {string} [connectUrl] where to open the TCP connection when it differs from url (a shaping proxy)
 * @property {{frame: string, expect: string}} [handshake] sent first on every connection; the run starts
 *   once the server answers `expect` (a custom schema registration), and none of it is measured
 * @property {'up'|'down'|'echo'} [direction] up: send the payload, expect ACK; down: send a small
 *   request, expect the payload and decode it; echo: send the payload, expect it back and decode it
 * @property {{any: boolean}|{text: string}} [ack] what counts as a reply when up: default the text `ACK`
 * @property {Record<string, string>} [headers] extra headers on the upgrade request
 * @property {string} [subprotocol] Sec-WebSocket-Protocol to ask for
 * @property {boolean} [insecure] accept any TLS certificate (self-signed test servers)
 * @property {boolean} [reconnect] when a connection drops, reconnect and go on (its in-flight messages are lost)
 * @property {AbortSignal} [signal] aborting stops sending; replies in flight get a moment, the rest is lost
 * @property {(progress: {sent: number, acked: number, errors: number, lost: number, elapsedMs: number, p99: number}) => void} [onTick]
 *   called once a second while measuring
 */

/**
 * @typedef {object} LoadResult
 * @property {{sent:number, acked:number, errors:number, lost:number}} messages measured phase only
 * @property {number} startedAt epoch ms when the measured phase began
 * @property {number} durationMs from the first measured send to the last reply
 * @property {import('hdr-histogram-js').Histogram} histogram latencies in µs: from the scheduled send
 *   with a rate (coordinated omission corrected), else from the send
 * @property {import('hdr-histogram-js').Histogram|null} uncorrectedHistogram with a rate: from the actual send
 * @property {{payloadPerMessage:number, written:number, read:number}} bytes written and read are
 *   counted on the TCP sockets during the measured phase: WebSocket frame headers and masks included
 * @property {Array<{t: number, acked: number, errors: number, p50: number, p99: number, histogram: string}>} timeSeries
 *   per second: t is the epoch second, latencies in ms
 * @property {{rate: number, sendRate: number}|null} target with a rate: asked and achieved send rate
 * @property {{count: number, gapMs: number}} reconnects
 * @property {boolean} interrupted stopped by the signal
 * @property {string[]} errorReplies the first few error replies from the server, verbatim
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
  const { codec, payload, connections = 1, inflight = 1, warmup = {}, signal } = options
  const native = codec.prepare(payload)
  const payloadPerMessage = byteLength(codec.encode(native))
  const run = new Run(options, native)
  const opened = await Promise.all(Array.from({ length: connections }, () => connect(options)))
  const channels = opened.map(({ ws, socket }) => new Channel(ws, socket, inflight, run))
  const stop = () => run.stop(typeof signal.reason === 'string' ? signal.reason : 'interrupted')
  if (signal?.aborted) run.fail(typeof signal.reason === 'string' ? signal.reason : 'interrupted') // before the first send
  signal?.addEventListener('abort', stop, { once: true })
  try {
    if ((warmup.messages > 0 || warmup.durationMs > 0) && !signal?.aborted) {
      await run.phase(channels, { count: warmup.messages, durationMs: warmup.durationMs, recording: false })
    }
    const measured = run.failure || signal?.aborted
      ? run.emptyResult()
      : await run.phase(channels, { count: options.messages, durationMs: options.durationMs, rate: options.rate, recording: true })
    return { ...measured, bytes: { payloadPerMessage, ...measured.bytes }, interrupted: Boolean(signal?.aborted) }
  } finally {
    signal?.removeEventListener('abort', stop)
    await Promise.all(channels.map((channel) => channel.close()))
  }
}

/** Shared state of one load run: the schedule, the counters and the histograms. */
class Run {
  constructor (options, native) {
    const { codec, timeoutMs = 10000, direction = 'up', ack, reconnect, onTick } = options
    this.codec = codec
    this.native = native
    this.request = direction === 'down' ? DOWN_REQUEST_FRAME : null
    this.expectsPayload = direction !== 'up'
    this.acceptsAny = Boolean(ack?.any)
    this.ackText = Buffer.from(ack?.text ?? ACK)
    this.sendOptions = { binary: direction === 'down' ? false : codec.binary }
    this.timeoutMs = timeoutMs
    this.reconnect = reconnect ? () => connect(options) : null
    this.onTick = onTick
    this.failure = null
    this.errorReplies = []
    this.reconnects = { count: 0, gapMs: 0 }
  }

  /**
   * Sends until `count` messages or `durationMs` (whichever is given; both: whichever comes first)
   * and resolves once each sent message got its reply or was lost.
   * @param {Channel[]} channels
   * @param {{count?: number, durationMs?: number, rate?: number, recording: boolean}} spec
   */
  phase (channels, { count, durationMs, rate = 0, recording }) {
    this.channels = channels
    this.recording = recording
    this.sent = this.acked = this.errors = this.lost = 0
    this.stopped = false
    this.histogram = createLatencyHistogram()
    this.uncorrected = rate > 0 ? createLatencyHistogram() : null
    this.perSecond = recording ? createLatencyHistogram() : null
    this.timeSeries = []
    this.startedAt = performance.now()
    this.startedAtEpoch = Date.now()
    this.lastReplyAt = this.lastSentAt = this.startedAt
    this.deadline = durationMs > 0 ? this.startedAt + durationMs : Infinity
    this.rate = rate
    this.intervalMs = rate > 0 ? 1000 / rate : 0
    this.planned = Math.min(count ?? Infinity, rate > 0 && durationMs > 0 ? Math.floor(rate * durationMs / 1000) : Infinity)
    return new Promise((resolve) => {
      this.finishPhase = resolve
      this.phaseActive = true
      for (const channel of channels) channel.markBytes()
      const watchdog = setInterval(() => this.expireStale(), Math.min(1000, Math.max(10, this.timeoutMs / 4)))
      const ticker = setInterval(() => this.tick(), 1000)
      this.stopTimers = () => {
        clearInterval(watchdog)
        clearInterval(ticker)
        clearTimeout(this.scheduleTimer)
        clearTimeout(this.stopTimer)
      }
      if (rate > 0) this.schedule()
      else for (const channel of channels) channel.fill(this.startedAt)
      this.checkDone()
    })
  }

  /** Whether another message may be sent now: closed loop asks on every reply. */
  canSend (now) {
    return !this.stopped && this.sent < this.planned && now < this.deadline
  }

  /**
   * Open loop: sends every message due by now, each stamped with its scheduled time, then sleeps
   * until the next one is due. When no connection has room (in-flight cap or unsent bytes), the
   * messages wait and their latency grows, as a real client's would.
   */
  schedule () {
    this.scheduleTimer = null
    const now = performance.now()
    const due = Math.min(this.planned, Math.floor((Math.min(now, this.deadline) - this.startedAt) / this.intervalMs) + 1)
    let blocked = false
    while (this.sent < due && !this.stopped) {
      const channel = this.channelWithRoom()
      if (!channel) {
        blocked = true
        break
      }
      channel.sendOne(this.startedAt + this.sent * this.intervalMs, now)
    }
    const nextDue = this.startedAt + this.sent * this.intervalMs
    this.blocked = blocked
    if (this.stopped || this.sent >= this.planned || nextDue >= this.deadline) return this.checkDone()
    // Blocked: the next reply makes room and reschedules at once; the short timer covers a
    // connection that is only waiting for its socket to drain.
    this.scheduleTimer = setTimeout(() => this.schedule(), blocked ? 1 : Math.max(0, nextDue - performance.now()))
  }

  channelWithRoom () {
    const channels = this.channels
    for (let tries = 0; tries < channels.length; tries++) {
      this.nextChannel = ((this.nextChannel ?? -1) + 1) % channels.length
      const channel = channels[this.nextChannel]
      if (channel.open && channel.outstanding < channel.capacity && channel.ws.bufferedAmount < MAX_BUFFERED_BYTES) return channel
    }
    return null
  }

  /** Records one reply's latency (µs) in the run, the per-second and the uncorrected histograms. */
  record (now, scheduledAt, sentAt) {
    const latency = Math.max(1, Math.round((now - scheduledAt) * 1000))
    this.histogram.recordValue(latency)
    this.perSecond.recordValue(latency)
    if (this.uncorrected) this.uncorrected.recordValue(Math.max(1, Math.round((now - sentAt) * 1000)))
  }

  /** Once a second: the time series, progress, and the end of a timed closed-loop phase. */
  tick () {
    if (this.recording) {
      const acked = this.acked - (this.ackedBefore ?? 0)
      const errors = this.errors - (this.errorsBefore ?? 0)
      this.ackedBefore = this.acked
      this.errorsBefore = this.errors
      const { p50, p99 } = summarizeLatency(this.perSecond)
      this.timeSeries.push({ t: Math.floor(this.startedAtEpoch / 1000) + this.timeSeries.length, acked, errors, p50, p99, histogram: encodeHistogram(this.perSecond) })
      this.perSecond.reset()
      this.onTick?.({ sent: this.sent, acked: this.acked, errors: this.errors, lost: this.lost, elapsedMs: performance.now() - this.startedAt, p99 })
    }
    this.checkDone()
  }

  /** Called after every reply or loss: ends the phase once nothing more will be sent and nothing is in flight. */
  checkDone () {
    if (!this.phaseActive) return
    if (this.sent !== this.acked + this.errors + this.lost) return
    const now = performance.now()
    const channelsLeft = this.channels.some((channel) => channel.open || channel.reconnecting)
    if (this.canSend(now) && channelsLeft) return
    this.phaseActive = false
    this.stopTimers()
    if (this.sent < this.planned && this.deadline === Infinity && !this.failure && !channelsLeft) this.failure = 'every connection closed before all messages were sent'
    if (this.recording && this.perSecond.totalCount > 0) this.tick()
    const channels = this.channels
    this.finishPhase({
      messages: { sent: this.sent, acked: this.acked, errors: this.errors, lost: this.lost },
      startedAt: this.startedAtEpoch,
      durationMs: this.lastReplyAt - this.startedAt,
      histogram: this.histogram,
      uncorrectedHistogram: this.uncorrected,
      bytes: {
        written: channels.reduce((sum, channel) => sum + channel.bytesWrittenSinceMark(), 0),
        read: channels.reduce((sum, channel) => sum + channel.bytesReadSinceMark(), 0)
      },
      timeSeries: this.timeSeries,
      target: this.rate > 0 ? { rate: this.rate, sendRate: this.sendRate() } : null,
      reconnects: { ...this.reconnects },
      errorReplies: this.errorReplies,
      failure: this.failure
    })
  }

  /** Messages sent per second over the schedule's span, to compare with the target rate. */
  sendRate () {
    const spanMs = this.lastSentAt - this.startedAt + this.intervalMs
    return spanMs > 0 ? Math.round(this.sent * 1000 / spanMs * 10) / 10 : 0
  }

  emptyResult () {
    return {
      messages: { sent: 0, acked: 0, errors: 0, lost: 0 },
      startedAt: Date.now(),
      durationMs: 0,
      histogram: createLatencyHistogram(),
      uncorrectedHistogram: null,
      bytes: { written: 0, read: 0 },
      timeSeries: [],
      target: null,
      reconnects: { ...this.reconnects },
      errorReplies: this.errorReplies,
      failure: this.failure
    }
  }

  /**
   * Whether a reply completes its message: `ACK` or the --ack text (up), anything (--ack any), or
   * a payload that decodes (down, echo; decoding is part of the round trip measured). Anything
   * else is kept as an error reply.
   */
  isSuccess (data, isBinary) {
    if (this.acceptsAny) return true
    if (!this.expectsPayload) {
      if (!isBinary && data.equals(this.ackText)) return true
    } else if (isBinary || !isErrorReply(data)) {
      try {
        this.codec.decode(data)
        return true
      } catch (err) {
        return this.keepErrorReply(`client decode failed: ${err.message}`)
      }
    }
    return this.keepErrorReply(data.toString('utf8', 0, 300))
  }

  keepErrorReply (text) {
    if (this.errorReplies.length < 5) this.errorReplies.push(text)
    return false
  }

  /** Stops new sends everywhere: after a failure the run drains what is in flight and ends. */
  fail (reason) {
    this.failure ??= reason
    this.stopped = true
  }

  /**
   * Stops sending (SIGINT): replies in flight get a short grace, then count as lost.
   * @param {string} reason
   */
  stop (reason) {
    if (!this.phaseActive) return
    this.fail(reason)
    clearTimeout(this.scheduleTimer)
    this.stopTimer = setTimeout(() => { for (const channel of this.channels) channel.abandon() }, Math.min(this.timeoutMs, STOP_GRACE_MS))
    this.checkDone()
  }

  expireStale () {
    const deadline = performance.now() - this.timeoutMs
    for (const channel of this.channels) {
      if (channel.oldestSendTime() < deadline) {
        this.fail(`no reply within ${this.timeoutMs} ms (--timeout)`)
        channel.abandon()
      }
    }
  }
}

/** One WebSocket connection and the times of its outstanding messages, oldest first. */
class Channel {
  constructor (ws, socket, capacity, run) {
    this.run = run
    this.capacity = capacity
    // Ring buffers of scheduled and actual send times: replies come back in order, so the head is
    // always the oldest. Closed loop: both are the same.
    this.scheduledTimes = new Float64Array(capacity)
    this.sentTimes = new Float64Array(capacity)
    this.head = 0
    this.outstanding = 0
    this.carriedWritten = 0
    this.carriedRead = 0
    this.attach(ws, socket)
  }

  attach (ws, socket) {
    this.ws = ws
    this.socket = socket
    this.open = true
    this.reconnecting = false
    this.socketWrittenMark = socket.bytesWritten
    this.socketReadMark = socket.bytesRead
    ws.on('message', (data, isBinary) => this.onReply(data, isBinary))
    ws.on('close', (code, reason) => this.onClose(code, reason))
    ws.on('error', () => {}) // the close event that follows carries what the run needs
  }

  fill (now) {
    while (this.open && this.outstanding < this.capacity && this.run.canSend(now)) this.sendOne(now, now)
  }

  sendOne (scheduledAt, now) {
    const run = this.run
    run.sent++
    run.lastSentAt = now
    const slot = (this.head + this.outstanding) % this.capacity
    this.scheduledTimes[slot] = scheduledAt
    this.sentTimes[slot] = now
    this.outstanding++
    this.ws.send(run.request ?? run.codec.encode(run.native), run.sendOptions)
  }

  onReply (data, isBinary) {
    const run = this.run
    if (this.outstanding === 0) return // a reply to a message already counted as lost
    const now = performance.now()
    const scheduledAt = this.scheduledTimes[this.head]
    const sentAt = this.sentTimes[this.head]
    this.head = (this.head + 1) % this.capacity
    this.outstanding--
    run.lastReplyAt = now
    if (run.isSuccess(data, isBinary)) {
      run.acked++
      if (run.recording) run.record(now, scheduledAt, sentAt)
    } else {
      run.errors++
    }
    if (run.intervalMs > 0) {
      if (run.blocked) {
        clearTimeout(run.scheduleTimer)
        run.schedule() // this reply made room for messages already due
      } else {
        run.checkDone()
      }
    } else if (run.canSend(now)) {
      this.sendOne(now, now)
    } else {
      run.checkDone()
    }
  }

  /** Marks the connection gone, keeping the bytes it carried in the counts. */
  retire () {
    this.open = false
    this.carriedWritten += this.socket.bytesWritten - this.socketWrittenMark
    this.carriedRead += this.socket.bytesRead - this.socketReadMark
  }

  onClose (code, reason) {
    if (!this.open) return
    this.retire()
    if (this.closing) return
    const run = this.run
    run.lost += this.outstanding
    this.outstanding = 0
    if (run.reconnect && run.phaseActive && !run.stopped) {
      this.reconnectLater()
    } else {
      const why = reason?.length ? `: ${reason}` : ''
      run.fail(`connection closed by the server (code ${code}${why})`)
    }
    run.checkDone()
  }

  /** --reconnect: tries again every RECONNECT_BACKOFF_MS until the server is back or --timeout passes. */
  async reconnectLater () {
    const run = this.run
    this.reconnecting = true
    const downSince = performance.now()
    while (!run.stopped && !this.closing) {
      try {
        const { ws, socket } = await run.reconnect()
        if (this.closing) return ws.terminate()
        run.reconnects.count++
        run.reconnects.gapMs += Math.round(performance.now() - downSince)
        this.attach(ws, socket)
        if (run.intervalMs > 0) run.schedule()
        else this.fill(performance.now())
        return
      } catch {
        if (performance.now() - downSince > run.timeoutMs) {
          this.reconnecting = false
          run.fail(`the server did not come back within ${run.timeoutMs} ms (--reconnect, --timeout)`)
          return run.checkDone()
        }
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_BACKOFF_MS))
      }
    }
    this.reconnecting = false
    run.checkDone()
  }

  /** Gives up on this connection: its outstanding messages are lost. */
  abandon () {
    this.run.lost += this.outstanding
    this.outstanding = 0
    if (this.open) this.retire()
    this.ws.terminate()
    this.run.checkDone()
  }

  oldestSendTime () {
    return this.outstanding > 0 ? this.sentTimes[this.head] : Infinity
  }

  markBytes () {
    this.carriedWritten = this.carriedRead = 0
    this.socketWrittenMark = this.socket.bytesWritten
    this.socketReadMark = this.socket.bytesRead
  }

  bytesWrittenSinceMark () { return this.carriedWritten + (this.open ? this.socket.bytesWritten - this.socketWrittenMark : 0) }
  bytesReadSinceMark () { return this.carriedRead + (this.open ? this.socket.bytesRead - this.socketReadMark : 0) }

  close () {
    this.closing = true
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve()
    return new Promise((resolve) => {
      this.ws.once('close', resolve)
      this.ws.close(1000)
      setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS).unref()
    })
  }
}

function byteLength (frame) {
  return typeof frame === 'string' ? Buffer.byteLength(frame) : frame.byteLength
}
