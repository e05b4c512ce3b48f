// One load connection: its socket, the send times of its outstanding messages, the bytes it
// carried. It reports what happens on it to the run's current phase and keeps nothing else.
import { performance } from 'node:perf_hooks'
import WebSocket from 'ws'

/** How long to wait for the close handshake of each connection after the run. */
const CLOSE_GRACE_MS = 1000

/** Between reconnection attempts while a server is away (--reconnect). */
const RECONNECT_BACKOFF_MS = 100

/** One WebSocket connection and the times of its outstanding messages, oldest first. */
export class Channel {
  /**
   * @param {WebSocket} ws an open connection
   * @param {import('node:net').Socket} socket its TCP socket, whose byte counters are read
   * @param {number} capacity messages it may have outstanding
   * @param {import('./engine.js').Run} run what to send, and the phase to report to
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
    ws.on('message', (data, isBinary) => this.onReply(data, isBinary))
    ws.on('close', (code, reason) => this.onClose(code, reason))
    ws.on('error', () => {}) // the close event that follows carries what the run needs
  }

  /** Closed loop: sends until the in-flight cap or until the phase says stop. */
  fill (now) {
    const phase = this.run.phase
    while (this.open && this.outstanding < this.capacity && phase.canSend(now)) this.sendOne(now, now)
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

  /** A reply settles the oldest outstanding message. Hot path. */
  onReply (data, isBinary) {
    if (this.outstanding === 0) return // a reply to a message already counted as lost
    const now = performance.now()
    const scheduledAt = this.scheduledTimes[this.head]
    const sentAt = this.sentTimes[this.head]
    this.head = (this.head + 1) % this.capacity
    this.outstanding--
    this.run.phase.onReply(this, this.run.isSuccess(data, isBinary), now, scheduledAt, sentAt)
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

  /** --reconnect: tries again every RECONNECT_BACKOFF_MS until the server is back or --timeout passes. */
  async reconnectLater () {
    const run = this.run
    this.reconnecting = true
    const downSince = performance.now()
    while (!run.phase.stopped && !this.closing) {
      try {
        const { ws, socket } = await run.reconnect()
        if (this.closing) return ws.terminate()
        run.reconnects.count++
        run.reconnects.gapMs += Math.round(performance.now() - downSince)
        this.attach(ws, socket)
        return run.phase.onReopened(this)
      } catch {
        if (performance.now() - downSince > run.timeoutMs) {
          this.reconnecting = false
          run.fail(`the server did not come back within ${run.timeoutMs} ms (--reconnect, --timeout)`)
          return run.phase.checkDone()
        }
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_BACKOFF_MS))
      }
    }
    this.reconnecting = false
    run.phase.checkDone()
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
