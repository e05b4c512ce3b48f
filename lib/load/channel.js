// One load connection: its socket, the send times of its outstanding messages, the bytes it
// carried. It reports what happens on it (a message sent, a reply, messages lost, the connection
// closed or back) to the run and its current phase, and keeps nothing else.
import { performance } from 'node:perf_hooks'
import WebSocket from 'ws'

/** How long to wait for the close handshake of each connection after the run. */
const CLOSE_GRACE_MS = 1000

/** An open-loop connection with this much unsent data takes no more messages until it drains. */
const MAX_BUFFERED_BYTES = 1024 * 1024

/** Between reconnection attempts while a server is away (--reconnect). */
const RECONNECT_BACKOFF_MS = 100

/** One WebSocket connection and the times of its outstanding messages, oldest first. */
export class Channel {
  /**
   * @param {WebSocket} ws an open connection
   * @param {import('node:net').Socket} socket its TCP socket, whose byte counters are read
   * @param {number} capacity messages it may have outstanding
   * @param {import('./engine.js').Run} run what to send, and where to report (run.phase)
   */
  constructor (ws, socket, capacity, run) {
    this.run = run
    this.capacity = capacity
    // Ring buffers of scheduled and actual send times: replies come back in order, so the head is
    // always the oldest. Closed loop: both are the same.
    this.scheduledTimes = new Float64Array(capacity)
    this.sentTimes = new Float64Array(capacity)
    this.head = 0
    this.outstanding = 0
    this.ws = null
    this.socket = null
    this.open = false
    this.reconnecting = false
    this.closing = false
    // Bytes of sockets this channel had before a reconnect, and where the current socket stood at the mark.
    this.carriedWritten = 0
    this.carriedRead = 0
    this.socketWrittenMark = 0
    this.socketReadMark = 0
    this.attach(ws, socket)
  }

  attach (ws, socket) {
    this.ws = ws
    this.socket = socket
    this.open = true
    this.reconnecting = false
    this.socketWrittenMark = socket.bytesWritten
    this.socketReadMark = socket.bytesRead
    ws.on('message', (data, isBinary) => this.onMessage(data, isBinary))
    ws.on('close', (code, reason) => this.onClose(code, reason))
    ws.on('error', () => {}) // the close event that follows carries what the run needs
  }

  /** Closed loop: sends until the in-flight cap or until the phase says stop. */
  fill (now) {
    const phase = this.run.phase
    while (this.open && this.outstanding < this.capacity && phase.canSend(now)) this.sendOne(now, now)
  }

  /** Open loop: whether it may take a scheduled message now (open, below its cap, socket draining). */
  hasRoom () {
    return this.open && this.outstanding < this.capacity && this.ws.bufferedAmount < MAX_BUFFERED_BYTES
  }

  /** Whether it is still part of the run: open, or coming back (--reconnect). */
  isLive () {
    return this.open || this.reconnecting
  }

  /** Sends one message, stamped with when it was due and when it went. Hot path. */
  sendOne (scheduledAt, now) {
    this.run.phase.onSent(now)
    const slot = (this.head + this.outstanding) % this.capacity
    this.scheduledTimes[slot] = scheduledAt
    this.sentTimes[slot] = now
    this.outstanding++
    this.ws.send(this.run.nextFrame(), this.run.sendOptions)
  }

  /** A reply settles the oldest outstanding message; the phase judges and records it. Hot path. */
  onMessage (data, isBinary) {
    if (this.outstanding === 0) return // a reply to a message already counted as lost
    const now = performance.now()
    const scheduledAt = this.scheduledTimes[this.head]
    const sentAt = this.sentTimes[this.head]
    this.head = (this.head + 1) % this.capacity
    this.outstanding--
    this.run.phase.onReply(this, data, isBinary, scheduledAt, sentAt, now)
  }

  /** Marks the connection gone, keeping the bytes it carried in the counts. */
  retire () {
    this.open = false
    this.carriedWritten += this.socket.bytesWritten - this.socketWrittenMark
    this.carriedRead += this.socket.bytesRead - this.socketReadMark
  }

  /** Takes the outstanding messages off the books: they will get no reply. */
  dropOutstanding () {
    const lost = this.outstanding
    this.outstanding = 0
    return lost
  }

  onClose (code, reason) {
    if (!this.open) return
    this.retire()
    if (this.closing) return
    this.run.phase.onClosed(this, code, reason, this.dropOutstanding())
  }

  /**
   * --reconnect: tries again every RECONNECT_BACKOFF_MS until the server is back, the phase stops
   * sending or --timeout passes, and tells the run how it went.
   */
  async reconnectLater () {
    const run = this.run
    this.reconnecting = true
    const downSince = performance.now()
    let timedOut = false
    while (run.isSending() && !this.closing) {
      try {
        const { ws, socket } = await run.openConnection()
        if (this.closing) return ws.terminate()
        this.attach(ws, socket)
        return run.onReconnected(this, performance.now() - downSince)
      } catch {
        timedOut = performance.now() - downSince > run.timeoutMs
        if (timedOut) break
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_BACKOFF_MS))
      }
    }
    this.reconnecting = false
    run.onReconnectAbandoned(timedOut)
  }

  /** Gives up on this connection: its outstanding messages are lost. */
  abandon () {
    const lost = this.dropOutstanding()
    if (this.open) this.retire()
    this.ws.terminate()
    this.run.phase.onLost(lost)
  }

  oldestSendTime () {
    return this.outstanding > 0 ? this.sentTimes[this.head] : Infinity
  }

  markBytes () {
    this.carriedWritten = this.carriedRead = 0
    this.socketWrittenMark = this.socket.bytesWritten
    this.socketReadMark = this.socket.bytesRead
  }

  bytesWrittenSinceMark () {
    return this.carriedWritten + (this.open ? this.socket.bytesWritten - this.socketWrittenMark : 0)
  }

  bytesReadSinceMark () {
    return this.carriedRead + (this.open ? this.socket.bytesRead - this.socketReadMark : 0)
  }

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
