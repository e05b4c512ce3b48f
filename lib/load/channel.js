// One load connection: its socket, the send times of its outstanding messages, the bytes it
// carried. It sends the frames it is given and reports what comes back (a reply, the connection
// closed) to the one sink it is given; it decides nothing.
import WebSocket from 'ws'

/** How long to wait for the close handshake of each connection after the run. */
const CLOSE_GRACE_MS = 1000

/** An open-loop connection with this much unsent data takes no more messages until it drains. */
const MAX_BUFFERED_BYTES = 1024 * 1024

/**
 * @typedef {object} ChannelSink where a channel reports (the phase under way)
 * @property {(channel: Channel, data: Buffer, isBinary: boolean, scheduledAt: number, sentAt: number, now: number) => void} onReply
 *   the oldest outstanding message got its reply, due at scheduledAt and sent at sentAt
 * @property {(channel: Channel, code: number, reason: Buffer, lost: number) => void} onClosed
 *   the connection closed under the run, taking `lost` outstanding messages with it
 */

/**
 * @typedef {object} Connection an open connection, as connect() resolves
 * @property {WebSocket} ws
 * @property {import('node:net').Socket} socket its TCP socket, whose byte counters are read
 * @property {import('node:stream').Duplex} stream where its frames are written: the socket, or TLS over it
 */

/** One WebSocket connection and the times of its outstanding messages, oldest first. */
export class Channel {
  /**
   * @param {Connection} connection an open connection
   * @param {number} capacity messages it may have outstanding
   * @param {{binary: boolean, framed: boolean}} sendOptions how every frame is sent: framed, each is
   *   a whole WebSocket frame, written as it is (see wireFrame in messages.js)
   * @param {ChannelSink} sink where it reports until told otherwise (reportTo)
   */
  constructor (connection, capacity, sendOptions, sink) {
    this.capacity = capacity
    this.sendOptions = sendOptions
    this.sink = sink
    // Ring buffers of scheduled and actual send times: replies come back in order, so the head is
    // always the oldest. Closed loop: both are the same.
    this.scheduledTimes = new Float64Array(capacity)
    this.sentTimes = new Float64Array(capacity)
    this.head = 0
    this.outstanding = 0
    this.ws = null
    this.socket = null
    this.stream = null
    this.open = false
    /** Away, and being reconnected (--reconnect): still part of the run. */
    this.reconnecting = false
    this.closing = false
    /** Its socket holds this turn's frames, to write them at once (see cork). */
    this.corked = false
    this.bytes = new ByteCount()
    this.attach(connection)
  }

  /**
   * Takes a (new) connection: the first, or one opened again after --reconnect.
   * @param {Connection} connection
   */
  attach ({ ws, socket, stream }) {
    this.ws = ws
    this.socket = socket
    this.stream = stream
    this.open = true
    this.reconnecting = false
    this.bytes.follow(socket)
    ws.on('message', (data, isBinary) => this.onMessage(data, isBinary))
    ws.on('close', (code, reason) => this.onClose(code, reason))
    ws.on('error', () => {}) // the close event that follows carries what the run needs
  }

  /** --reconnect: it is away until attach() takes a new connection, or until `coming` is false. */
  setReconnecting (coming) {
    this.reconnecting = coming
  }

  /** @param {ChannelSink} sink where to report from now on */
  reportTo (sink) {
    this.sink = sink
  }

  /** Closed loop: whether it may take another message (open, below its cap). */
  belowCap () {
    return this.open && this.outstanding < this.capacity
  }

  /** Open loop: whether it may take a scheduled message now (below its cap, socket draining). */
  hasRoom () {
    return this.belowCap() && this.ws.bufferedAmount < MAX_BUFFERED_BYTES
  }

  /** Whether it is still part of the run: open, or coming back (--reconnect). */
  isLive () {
    return this.open || this.reconnecting
  }

  /** Sends one frame, stamped with when it was due and when it went. Hot path. */
  send (frame, scheduledAt, now) {
    const slot = (this.head + this.outstanding) % this.capacity
    this.scheduledTimes[slot] = scheduledAt
    this.sentTimes[slot] = now
    this.outstanding++
    if (!this.sendOptions.framed) this.ws.send(frame, this.sendOptions)
    else if (this.ws.readyState === WebSocket.OPEN) this.stream.write(frame) // past a close frame, as ws.send: nothing
  }

  /**
   * Holds the frames sent from now until uncork() in the socket, to go in one write: an open loop
   * sends every message due in a turn, several to a connection at high rates, and one write each
   * was the generator's largest cost. Hot path.
   * @returns {boolean} whether it was not corked already
   */
  cork () {
    if (this.corked || !this.open) return false
    this.corked = true
    this.socket.cork()
    return true
  }

  /** Writes what cork() held. */
  uncork () {
    if (!this.corked) return
    this.corked = false
    this.socket.uncork()
  }

  /** Sends a last text frame, expecting no reply (a fan-out publisher's END), if still open. */
  farewell (text) {
    if (this.open) this.ws.send(text)
  }

  /** A reply settles the oldest outstanding message; the sink judges and records it. Hot path. */
  onMessage (data, isBinary) {
    if (this.outstanding === 0) return // a reply to a message already counted as lost
    const now = performance.now()
    const scheduledAt = this.scheduledTimes[this.head]
    const sentAt = this.sentTimes[this.head]
    this.head = (this.head + 1) % this.capacity
    this.outstanding--
    this.sink.onReply(this, data, isBinary, scheduledAt, sentAt, now)
  }

  onClose (code, reason) {
    if (!this.open) return
    this.retire()
    if (this.closing) return
    this.sink.onClosed(this, code, reason, this.dropOutstanding())
  }

  /** Marks the connection gone, keeping the bytes it carried in the counts. */
  retire () {
    this.open = false
    this.bytes.carry(this.socket)
  }

  /** Takes the outstanding messages off the books: they will get no reply. */
  dropOutstanding () {
    const lost = this.outstanding
    this.outstanding = 0
    return lost
  }

  /**
   * Gives up on this connection (a timeout, a stop).
   * @returns {number} the outstanding messages, now lost
   */
  abandon () {
    const lost = this.dropOutstanding()
    if (this.open) this.retire()
    this.ws.terminate()
    return lost
  }

  oldestSendTime () {
    return this.outstanding > 0 ? this.sentTimes[this.head] : Infinity
  }

  /** Counts bytes from now on (a phase starts). */
  markBytes () {
    this.bytes.mark(this.socket)
  }

  /** @returns {{written: number, read: number}} bytes on its sockets since the mark */
  bytesSinceMark () {
    return this.bytes.since(this.open ? this.socket : null)
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

/** Bytes a connection's sockets carried since a mark, across reconnects (each socket counts its own). */
export class ByteCount {
  constructor () {
    // Bytes of sockets gone since the mark, and where the current socket stood at the mark.
    this.carriedWritten = 0
    this.carriedRead = 0
    this.writtenMark = 0
    this.readMark = 0
  }

  /** A new socket: counted from where it stands. */
  follow (socket) {
    this.writtenMark = socket.bytesWritten
    this.readMark = socket.bytesRead
  }

  mark (socket) {
    this.carriedWritten = this.carriedRead = 0
    this.follow(socket)
  }

  /** The socket goes: what it carried since the mark is kept. */
  carry (socket) {
    this.carriedWritten += socket.bytesWritten - this.writtenMark
    this.carriedRead += socket.bytesRead - this.readMark
  }

  /** @param {import('node:net').Socket|null} socket the current one, null when none is open */
  since (socket) {
    return {
      written: this.carriedWritten + (socket ? socket.bytesWritten - this.writtenMark : 0),
      read: this.carriedRead + (socket ? socket.bytesRead - this.readMark : 0)
    }
  }
}
