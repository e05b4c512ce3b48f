import net from 'node:net'
import { performance } from 'node:perf_hooks'
import WebSocket from 'ws'
import { createLatencyHistogram } from './histogram.js'

/** How long to wait for the close handshake of each connection after the run. */
const CLOSE_GRACE_MS = 1000

/** What a `down` client sends for each message: the server answers any frame with the payload. */
const DOWN_REQUEST = Buffer.from('GET')

/**
 * @typedef {object} LoadOptions
 * @property {string} url server URL (ws:// or wss://); test and format are added to its query
 * @property {import('./payloads.js').TestInfo} test
 * @property {object} payload the plain JSON payload sent in every message
 * @property {import('./codecs.js').Codec} codec
 * @property {number} messages messages to send and record
 * @property {number} [connections] parallel WebSocket connections (default 1)
 * @property {number} [inflight] messages outstanding per connection; 1 is strict request/response
 * @property {number} [warmup] messages sent first and not recorded
 * @property {number} [timeoutMs] a message with no reply after this long is lost
 * @property {boolean} [compress] offer permessage-deflate
 * @property {string} [connectUrl] where to open the TCP connection when it differs from url (a shaping proxy)
 * @property {{frame: string, expect: string}} [handshake] sent first on every connection; the run starts
 *   once the server answers `expect` (a custom schema registration), and none of it is measured
 * @property {'up'|'down'|'echo'} [direction] up: send the payload, expect ACK; down: send a small
 *   request, expect the payload and decode it; echo: send the payload, expect it back and decode it
 */

/**
 * @typedef {object} LoadResult
 * @property {{sent:number, acked:number, errors:number, lost:number}} messages measured phase only
 * @property {number} durationMs from the first measured send to the last reply
 * @property {import('hdr-histogram-js').Histogram} histogram round trips of ACKed messages, in microseconds
 * @property {{payloadPerMessage:number, written:number, read:number}} bytes written and read are
 *   counted on the TCP sockets during the measured phase: WebSocket frame headers and masks included
 * @property {string[]} errorReplies the first few error replies from the server, verbatim
 * @property {string|null} failure why the run did not complete, or null
 */

/**
 * Sends `messages` encoded payloads over `connections` WebSocket connections, keeping `inflight`
 * outstanding on each, and records each message's round trip (send to its in-order reply).
 * Sends are driven only by replies, never by timers. Every sent message ends up acked, errored
 * (the server replied with an error) or lost (no reply: timeout or connection lost).
 * @param {LoadOptions} options
 * @returns {Promise<LoadResult>}
 */
export async function runLoad (options) {
  const { codec, payload, connections = 1, inflight = 1, warmup = 0, timeoutMs = 10000, direction = 'up' } = options
  const native = codec.prepare(payload)
  const payloadPerMessage = byteLength(codec.encode(native))
  const run = new Run({ codec, native, timeoutMs, direction })
  const opened = await Promise.all(Array.from({ length: connections }, () => connect(options)))
  const channels = opened.map(({ ws, socket }) => new Channel(ws, socket, inflight, run))
  try {
    if (warmup > 0 && !run.failure) await run.phase(channels, warmup, false)
    const result = run.failure ? run.emptyResult() : await run.phase(channels, options.messages, true)
    return { ...result, bytes: { payloadPerMessage, ...result.bytes } }
  } finally {
    await Promise.all(channels.map((channel) => channel.close()))
  }
}

/** Shared state of one load run: what is left to send, the counters and the histogram. */
class Run {
  constructor ({ codec, native, timeoutMs, direction }) {
    this.codec = codec
    this.native = native
    this.request = direction === 'down' ? DOWN_REQUEST : null
    this.expectsPayload = direction !== 'up'
    this.sendOptions = { binary: direction === 'down' ? false : codec.binary }
    this.timeoutMs = timeoutMs
    this.failure = null
    this.errorReplies = []
  }

  /**
   * Sends `count` messages across the channels and resolves once each got its reply or was lost.
   * @param {Channel[]} channels
   * @param {number} count
   * @param {boolean} recording whether this phase counts (false for warm-up)
   */
  phase (channels, count, recording) {
    this.recording = recording
    this.toSend = count
    this.sent = 0
    this.acked = 0
    this.errors = 0
    this.lost = 0
    this.histogram = createLatencyHistogram()
    this.channels = channels
    return new Promise((resolve) => {
      this.finishPhase = resolve
      this.phaseActive = true
      for (const channel of channels) channel.markBytes()
      this.startedAt = performance.now()
      this.lastReplyAt = this.startedAt
      const watchdog = setInterval(() => this.expireStale(), Math.min(1000, Math.max(10, this.timeoutMs / 4)))
      this.stopWatchdog = () => clearInterval(watchdog)
      for (const channel of channels) channel.fill()
      this.checkDone()
    })
  }

  /** Called after every reply or loss: ends the phase once nothing is left in flight. */
  checkDone () {
    if (!this.phaseActive) return
    if (this.sent !== this.acked + this.errors + this.lost) return
    if (this.toSend > 0 && this.channels.some((channel) => channel.open)) return
    this.phaseActive = false
    this.stopWatchdog()
    if (this.toSend > 0 && !this.failure) this.failure = 'every connection closed before all messages were sent'
    const channels = this.channels
    this.finishPhase({
      messages: { sent: this.sent, acked: this.acked, errors: this.errors, lost: this.lost },
      durationMs: this.lastReplyAt - this.startedAt,
      histogram: this.histogram,
      bytes: {
        written: channels.reduce((sum, channel) => sum + channel.bytesWrittenSinceMark(), 0),
        read: channels.reduce((sum, channel) => sum + channel.bytesReadSinceMark(), 0)
      },
      errorReplies: this.errorReplies,
      failure: this.failure
    })
  }

  emptyResult () {
    return {
      messages: { sent: 0, acked: 0, errors: 0, lost: 0 },
      durationMs: 0,
      histogram: createLatencyHistogram(),
      bytes: { written: 0, read: 0 },
      errorReplies: this.errorReplies,
      failure: this.failure
    }
  }

  /**
   * Whether a reply completes its message: `ACK` (up), or a payload that decodes (down, echo;
   * decoding is part of the round trip measured). Anything else is kept as an error reply.
   */
  isSuccess (data, isBinary) {
    if (!this.expectsPayload) {
      if (!isBinary && data.length === 3 && data[0] === 0x41 && data[1] === 0x43 && data[2] === 0x4b) return true
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
    this.toSend = 0
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

/** One WebSocket connection and the send times of its outstanding messages, oldest first. */
class Channel {
  constructor (ws, socket, inflight, run) {
    this.ws = ws
    this.socket = socket
    this.run = run
    this.inflight = inflight
    // A ring buffer of send times: replies come back in order, so the head is always the oldest.
    this.sendTimes = new Float64Array(inflight)
    this.head = 0
    this.outstanding = 0
    this.open = true
    ws.on('message', (data, isBinary) => this.onReply(data, isBinary))
    ws.on('close', (code, reason) => this.onClose(code, reason))
    ws.on('error', () => {}) // the close event that follows carries what the run needs
  }

  fill () {
    while (this.open && this.outstanding < this.inflight && this.run.toSend > 0) this.sendOne()
  }

  sendOne () {
    const run = this.run
    run.toSend--
    run.sent++
    this.sendTimes[(this.head + this.outstanding) % this.inflight] = performance.now()
    this.outstanding++
    this.ws.send(run.request ?? run.codec.encode(run.native), run.sendOptions)
  }

  onReply (data, isBinary) {
    const run = this.run
    if (this.outstanding === 0) return // a reply to a message already counted as lost
    const now = performance.now()
    const sentAt = this.sendTimes[this.head]
    this.head = (this.head + 1) % this.inflight
    this.outstanding--
    run.lastReplyAt = now
    if (run.isSuccess(data, isBinary)) {
      run.acked++
      if (run.recording) run.histogram.recordValue(Math.max(1, Math.round((now - sentAt) * 1000)))
    } else {
      run.errors++
    }
    if (run.toSend > 0) this.sendOne()
    else run.checkDone()
  }

  onClose (code, reason) {
    if (!this.open) return
    this.open = false
    if (this.closing) return
    const why = reason?.length ? `: ${reason}` : ''
    this.run.fail(`connection closed by the server (code ${code}${why})`)
    this.run.lost += this.outstanding
    this.outstanding = 0
    this.run.checkDone()
  }

  /** Gives up on this connection: its outstanding messages are lost. */
  abandon () {
    this.run.lost += this.outstanding
    this.outstanding = 0
    this.open = false
    this.ws.terminate()
    this.run.checkDone()
  }

  oldestSendTime () {
    return this.outstanding > 0 ? this.sendTimes[this.head] : Infinity
  }

  markBytes () {
    this.bytesWrittenMark = this.socket.bytesWritten
    this.bytesReadMark = this.socket.bytesRead
  }

  bytesWrittenSinceMark () { return this.socket.bytesWritten - this.bytesWrittenMark }
  bytesReadSinceMark () { return this.socket.bytesRead - this.bytesReadMark }

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

/**
 * Opens one connection for the run's test and format.
 * @param {LoadOptions} options
 * @returns {Promise<{ws: WebSocket, socket: import('node:net').Socket}>} resolves once open, with
 *   the TCP socket whose byte counters the run reads; rejects with a one-line reason
 */
function connect ({ url, connectUrl, test, codec, compress = false, direction = 'up', handshake }) {
  const target = new URL(url)
  target.searchParams.set('test', test.name)
  target.searchParams.set('format', codec.name)
  if (direction !== 'up') target.searchParams.set('direction', direction)
  const dialed = connectUrl && new URL(connectUrl)
  const ws = new WebSocket(target, {
    perMessageDeflate: compress,
    // Through a shaping proxy: the TCP connection goes to the proxy, the request still names the server.
    ...(dialed && { createConnection: () => net.connect(Number(dialed.port), dialed.hostname) })
  })
  let socket
  ws.once('upgrade', (response) => { socket = response.socket })
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      if (!handshake) return resolve({ ws, socket })
      ws.once('message', (data) => {
        const answer = data.toString('utf8', 0, 500)
        if (answer === handshake.expect) return resolve({ ws, socket })
        reject(new Error(`server refused the handshake on ${target.href}: ${answer}`))
        ws.terminate()
      })
      ws.once('close', (code) => reject(new Error(`server closed the connection during the handshake on ${target.href} (code ${code})`)))
      ws.send(handshake.frame)
    })
    ws.once('unexpected-response', (request, response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk) => { body += chunk })
      response.on('end', () => {
        reject(new Error(`server refused ${target.href}: ${response.statusCode} ${body.trim()}`))
        ws.terminate()
      })
    })
    ws.once('error', (err) => reject(new Error(`cannot connect to ${url}: ${err.code ?? err.message}`)))
  })
}

/** A text frame starting `ERR `: how the server reports a failure (JSON text never starts so). */
function isErrorReply (data) {
  return data.length >= 4 && data[0] === 0x45 && data[1] === 0x52 && data[2] === 0x52 && data[3] === 0x20
}

function byteLength (frame) {
  return typeof frame === 'string' ? Buffer.byteLength(frame) : frame.byteLength
}
