// Fan-out on the server: topics (a format and test) and their subscribers. Each publish is
// delivered to every subscriber of its topic as the very frame the publisher sent (encoded once,
// never per subscriber; framed once, too, for the subscribers without permessage-deflate), and
// handed to the broker for the subscribers of the other processes. A subscriber whose unsent data
// passes --max-buffered is dropped and counted: the server never buffers without bound for a
// reader that cannot keep up. With --replay, each topic keeps its last measured publishes, and a
// subscriber that comes back (&from=) gets those it missed before anything new.
import { Sender, WebSocket } from 'ws'
import { FANOUT_KIND, isFanoutEnd, readFanoutHeader } from '../protocol.js'

const TEXT = { binary: false }
const BINARY = { binary: true }

/** Every topic of one server process and where its publishes go. */
export class Topics {
  /**
   * @param {object} options
   * @param {import('./stats.js').ServerStats} options.stats counts deliveries and dropped subscribers
   * @param {number} options.maxBuffered bytes a subscriber may have unsent before it is dropped
   * @param {import('./broker.js').Broker|null} [options.broker] carries publishes to the other processes
   * @param {number} [options.replay] measured publishes each topic keeps for subscribers that come back (0: none)
   */
  constructor ({ stats, maxBuffered, broker = null, replay = 0 }) {
    this.stats = stats
    this.maxBuffered = maxBuffered
    this.broker = broker
    this.replay = replay
    /**
     * `${format} ${test}` (the stats key) -> {subscribers: Map<ws, {ws, socket: null with deflate}>,
     * end, counters, history: null without --replay}
     */
    this.byKey = new Map()
    /** The header of the publish being kept, read into one object. */
    this.header = { measured: false, replayed: false, seq: 0, publishedAtUs: 0 }
    broker?.onFrame((key, frame, isBinary) => this.deliver(key, frame, isBinary))
  }

  /** The topic of a key, made on first use. */
  topic (key) {
    let topic = this.byKey.get(key)
    if (!topic) {
      const space = key.indexOf(' ')
      const counters = this.stats.forTarget(key.slice(0, space), key.slice(space + 1))
      const history = this.replay > 0 ? new History(this.replay) : null
      topic = { subscribers: new Map(), end: null, counters, history }
      this.byKey.set(key, topic)
    }
    return topic
  }

  /**
   * A subscriber joins its topic until it closes. One that joins after the publisher said END
   * (it was away, reconnecting, perhaps after every other subscriber left) gets the END at once, so
   * it can tell how many it missed; the next publish forgets it. A subscriber of the next run that
   * gets it on joining, before any publish of its own run, knows it is not its run's.
   * @param {string} key
   * @param {import('ws').WebSocket} ws
   * @param {import('node:net').Socket} socket its connection's: without permessage-deflate, each
   *   publish is written to it as a whole frame, made once for every such subscriber
   * @param {number|null} [from] a subscriber come back: the first measured publish it missed. It gets
   *   those the topic kept, marked replayed, before anything new (and before the END).
   */
  subscribe (key, ws, socket, from = null) {
    const topic = this.topic(key)
    if (from !== null && topic.history) this.replayTo(ws, topic, from)
    // Compressed, each connection's frames are its own (its deflate context): ws makes them.
    topic.subscribers.set(ws, { ws, socket: ws.extensions === '' ? socket : null })
    this.stats.subscribers++
    ws.once('close', () => {
      if (topic.subscribers.delete(ws)) this.stats.subscribers--
    })
    if (topic.end) ws.send(topic.end, TEXT)
  }

  /**
   * A publish from a publisher of this process: to this process's subscribers and, through the
   * broker, to every other process's.
   * @param {string} key
   * @param {Buffer} frame as it came, header and payload (or END)
   * @param {boolean} isBinary
   */
  publish (key, frame, isBinary) {
    this.broker?.publish(key, frame, isBinary)
    this.deliver(key, frame, isBinary)
  }

  /**
   * Sends one frame to every subscriber of the topic here. Hot path: one write per subscriber, of
   * the WebSocket frame made once (ws frames it per send otherwise: a header each time, and two writes).
   * @returns {number} subscribers it was sent to
   */
  deliver (key, frame, isBinary) {
    const topic = this.topic(key)
    const end = isFanoutEnd(frame)
    // A new round of publishes (a warm-up, the next run) forgets the last END.
    topic.end = end ? frame : null
    if (topic.history && !end) this.keep(topic.history, frame, isBinary)
    const options = isBinary ? BINARY : TEXT
    let whole = null
    let sent = 0
    // Over the values: an entry ([ws, subscriber]) would be an array made per subscriber and publish.
    for (const { ws, socket } of topic.subscribers.values()) {
      if (ws.bufferedAmount > this.maxBuffered) {
        topic.subscribers.delete(ws)
        this.stats.subscribers--
        this.stats.count('slowSubscribers')
        ws.terminate()
        continue
      }
      // Closing: no more frames (its close takes it off the topic).
      if (ws.readyState !== WebSocket.OPEN) continue
      // Whole frames only, and ws writes its own (pongs, the close) whole too: they never interleave.
      if (socket) socket.write(whole ??= wholeFrame(frame, isBinary))
      else ws.send(frame, options)
      sent++
    }
    if (!end) topic.counters.deliveries += sent
    return sent
  }

  /** Keeps a measured publish for replay; a warm-up, or a run starting again from 0, forgets the last run's. */
  keep (history, frame, isBinary) {
    const header = this.header
    if (!readFanoutHeader(frame, header) || !header.measured) return history.clear()
    if (header.seq <= history.lastSeq) history.clear()
    // A copy once per publish, marked as it will be replayed: the frame as it came may share the
    // memory of a whole socket read, and the same copy goes to every subscriber that asks.
    const replayed = Buffer.from(frame)
    replayed[0] = FANOUT_KIND.replayed
    history.push(header.seq, replayed, isBinary)
  }

  /**
   * Sends a subscriber come back the kept publishes from `from` on, marked replayed, up to
   * --max-buffered bytes of them: more would have it dropped as slow at the next publish, to come
   * back for the same again.
   */
  replayTo (ws, topic, from) {
    let replayed = 0
    let bytes = 0
    for (const { seq, frame, isBinary } of topic.history.entries()) {
      if (seq < from) continue
      bytes += frame.length
      if (bytes > this.maxBuffered) break
      ws.send(frame, isBinary ? BINARY : TEXT)
      replayed++
    }
    topic.counters.deliveries += replayed
    this.stats.replayed += replayed
  }
}

/** The last `size` measured publishes of a topic, oldest first, in a ring. */
class History {
  /** @param {number} size publishes kept */
  constructor (size) {
    this.slots = new Array(size)
    this.start = 0
    this.length = 0
    this.lastSeq = -1
  }

  push (seq, frame, isBinary) {
    const slots = this.slots
    const end = (this.start + this.length) % slots.length
    slots[end] = { seq, frame, isBinary }
    if (this.length < slots.length) this.length++
    else this.start = (this.start + 1) % slots.length
    this.lastSeq = seq
  }

  clear () {
    // Every warm-up publish clears: only the first after a measured run has anything to let go.
    if (this.length === 0) return
    this.slots.fill(undefined)
    this.start = 0
    this.length = 0
    this.lastSeq = -1
  }

  /** @returns {Array<{seq: number, frame: Buffer, isBinary: boolean}>} oldest first */
  entries () {
    return Array.from({ length: this.length }, (_, i) => this.slots[(this.start + i) % this.slots.length])
  }
}

/** A server's unmasked, unfragmented WebSocket frame of `data`, header and payload in one buffer. */
function wholeFrame (data, isBinary) {
  const options = { fin: true, rsv1: false, opcode: isBinary ? 2 : 1, mask: false, readOnly: false }
  return Buffer.concat(Sender.frame(data, options))
}
