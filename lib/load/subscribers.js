// The subscribers of a fan-out run: connections that only listen. Each delivery's header says which
// publish it is and when it was due, so every delivery is timed from its scheduled publish (no
// coordinated omission) and accounted for: delivered once, duplicated, out of order, or lost. A
// subscriber taken for gone (lib/load/liveness.js) or closed reconnects, asking for what it
// missed meanwhile: what a server with --replay sends it is recovered, late; the rest is lost.
import { setTimeout as sleep } from 'node:timers/promises'
import { compression, connect, negotiated } from './connection.js'
import { ConnectTimes } from './connect-times.js'
import { ByteCount } from './channel.js'
import { Recorder } from './recorder.js'
import { Timers } from './timers.js'
import { Liveness } from './liveness.js'
import { FANOUT_END, FANOUT_HEADER_BYTES, isErrorReply, isFanoutEnd, readFanoutHeader } from '../protocol.js'
import { createLatencyHistogram, encodeHistogram } from '../histogram.js'
import { printable } from '../display.js'
import { emptyFigures, spreadOf } from '../outputs/figures.js'

/** Connection attempts in flight while opening: a burst of thousands overflows the server's accept queue. */
const OPENING_AT_ONCE = 200
/** Between reconnection attempts, times one to two (spread, so a cut host's subscribers do not storm back in step). */
const RECONNECT_BACKOFF_MS = 100
/** Error texts kept for the report: the first few say what went wrong. */
const KEPT_ERRORS = 5
/** One subscriber connection and what it received. */
class Subscriber {
  /** @param {boolean} decodes whether it decodes what it gets (every subscriber, or one per process) */
  constructor (decodes) {
    this.decodes = decodes
    this.ws = null
    this.socket = null
    this.open = false
    /** Which measured publishes it got: one bit each, grown as they come. */
    this.seen = new Uint8Array(16)
    this.highest = -1
    /** It got the publisher's END: nothing more is coming. */
    this.ended = false
    this.lastHeardAt = 0
    /** The scheduled time of the newest publish it got, µs since the epoch (before any: an interval before opening). */
    this.latestDueUs = 0
    /** When it was pinged for being overdue or silent, 0 when it is not waiting for a pong. */
    this.pingedAt = 0
    /** Why this process closed it ('link', 'generator'), null when it did not. */
    this.closedBy = null
    this.bytes = new ByteCount()
    /** Over wss://: the TLS version and cipher its connection negotiated. */
    this.tls = null
  }

  /** Marks a publish as received; false when it already was (a duplicate). Hot path. */
  take (seq) {
    const byte = seq >> 3
    if (byte >= this.seen.length) {
      const grown = new Uint8Array(Math.max(byte + 1, this.seen.length * 2))
      grown.set(this.seen)
      this.seen = grown
    }
    const bit = 1 << (seq & 7)
    if (this.seen[byte] & bit) return false
    this.seen[byte] |= bit
    return true
  }
}

/**
 * @typedef {object} FanoutResult what the subscribers of one process measured (see `fanout` in the report)
 * @property {number} frames fan-out frames received: warm-up and measured deliveries, duplicates, END
 * @property {number} subscribers
 * @property {number} decoders the subscribers that decoded every delivery they got (all, or one: --decode)
 * @property {number|null} published measured publishes, as the publisher's END said; null when no END came
 * @property {number} delivered measured publishes received, each once per subscriber
 * @property {number} recovered of those, the ones a server replayed to a subscriber that came back (--replay)
 * @property {number} duplicates publishes a subscriber received again
 * @property {number} reordered publishes that came after a later one
 * @property {number} errors deliveries that did not decode, and frames that were not deliveries
 * @property {{firstUs: Array<number|null>, lastUs: Array<number|null>}} perPublish per measured publish,
 *   its first and last delivery here as µs after its scheduled time (null: none here)
 * @property {{count: number, histogram: string}} reconnects with the time each subscriber went without
 *   a connection, µs, from the last thing it heard to its new connection
 * @property {{pings: number, suspendedMs: number, closes: {link: number, server: number, generator: number}}} liveness
 *   pings sent; how long judgments waited on this process's own late loop; connections lost, by cause
 */

/** Every subscriber connection of one client process, and their accounting. */
export class Subscribers {
  /**
   * @param {import('./engine.js').LoadOptions & {decode?: 'all'|'one', heartbeatMs: number}} options the run's
   */
  constructor (options) {
    this.options = options
    // Long enough for a busy server to answer, short enough to retry soon after a cut link is back.
    const connectTimeoutMs = Math.max(3000, 4 * options.heartbeatMs)
    this.connectOptions = { ...options, role: 'subscriber', handshake: undefined, connectTimeoutMs }
    /** @type {Subscriber[]} */
    this.subscribers = []
    this.header = { measured: false, replayed: false, seq: 0, publishedAtUs: 0 }
    this.recorder = new Recorder(false)
    this.recording = false
    /** Whether a publish of this run came (warm-up or measured): an END before one is another run's. */
    this.heardPublish = false
    this.liveness = new Liveness(options)
    /** Subscribers that have the END, fan-out frames received (warm-up and END too), the deliveries (some replayed). */
    this.counts = { ended: 0, frames: 0, delivered: 0, recovered: 0, duplicates: 0, reordered: 0, errors: 0 }
    this.errorTexts = []
    this.published = null
    /** Per measured publish: its first and last delivery here, µs after it was due. */
    this.perPublish = { firstUs: [], lastUs: [] }
    /** The deliveries' span: the earliest publish's due time (epoch µs), the last delivery (performance ms). */
    this.span = { firstPublishUs: Infinity, lastDeliveryAt: 0 }
    this.reconnects = createLatencyHistogram()
    /** How long every connection and reconnection took to open, and why attempts failed. */
    this.connectTimes = new ConnectTimes()
    this.failure = null
    this.finished = false
    this.timers = new Timers()
    /** Resolves finish()'s promise once every subscriber has the END, or the deadline passed. */
    this.settle = null
    this.done = new Promise((resolve) => { this.settle = resolve })
  }

  /**
   * Opens `count` subscribers, a few hundred attempts at a time. One that cannot open fails the
   * run, and the others are closed.
   * @param {number} count
   */
  async open (count) {
    const all = this.options.decode !== 'one'
    this.subscribers = Array.from({ length: count }, (_, index) => new Subscriber(all || index === 0))
    let next = 0
    const opener = async () => {
      while (next < count) {
        const subscriber = this.subscribers[next++]
        const { ws, socket, tls, timing } = await this.connect(subscriber)
        this.connectTimes.record(timing)
        // A connection that opened after another failed the run is not kept (it would hold the process open).
        if (this.finished) return ws.terminate()
        this.attach(subscriber, ws, socket, tls)
      }
    }
    try {
      await Promise.all(Array.from({ length: Math.min(OPENING_AT_ONCE, count) }, opener))
    } catch (err) {
      next = count
      this.finished = true
      for (const { ws } of this.subscribers) ws?.terminate()
      throw err
    }
    // Judged from now: opening thousands takes a while, and the first opened have heard nothing meanwhile.
    this.liveness.start(this.subscribers, performance.now())
    this.timers.every('heartbeat', this.liveness.sweepMs, () => this.liveness.sweep(this.subscribers, performance.now()))
  }

  /**
   * Opens a connection for a subscriber, listening from the start: a frame that comes with the
   * upgrade's answer (the END for a latecomer, publishes replayed) must not be missed.
   * @param {Subscriber} subscriber
   * @param {number|null} [from] coming back: the first measured publish it has not had since its highest
   */
  connect (subscriber, from = null) {
    const onMessage = (data, isBinary) => this.onMessage(subscriber, data, isBinary)
    return connect({ ...this.connectOptions, onMessage, from })
  }

  /** Takes a (new) connection for a subscriber. */
  attach (subscriber, ws, socket, tls) {
    subscriber.ws = ws
    subscriber.socket = socket
    subscriber.tls = tls
    subscriber.open = true
    subscriber.pingedAt = 0
    subscriber.closedBy = null
    subscriber.lastHeardAt = performance.now()
    subscriber.bytes.follow(socket)
    ws.on('pong', () => { subscriber.lastHeardAt = performance.now() })
    ws.on('close', (code) => this.onClose(subscriber, code))
    ws.on('error', () => {}) // the close that follows is what counts
  }

  /**
   * One frame for a subscriber: a delivery is timed and accounted for, and decoded (the cost measured)
   * if this subscriber decodes. Hot path.
   */
  onMessage (subscriber, data, isBinary) {
    const now = performance.now()
    subscriber.lastHeardAt = now
    const header = this.header
    if (!readFanoutHeader(data, header)) return this.onOther(subscriber, data, isBinary)
    this.heardPublish = true
    this.counts.frames++
    const latencyUs = Math.max(1, Math.round((performance.timeOrigin + now) * 1000 - header.publishedAtUs))
    this.liveness.delivered(latencyUs)
    if (header.publishedAtUs > subscriber.latestDueUs) subscriber.latestDueUs = header.publishedAtUs
    if (subscriber.decodes) {
      try {
        this.options.codec.decode(data.subarray(FANOUT_HEADER_BYTES))
      } catch (err) {
        this.keepError(`client decode failed: ${err.message}`)
      }
    }
    if (!header.measured) return
    if (!this.recording) {
      this.liveness.measured(header.seq, header.publishedAtUs)
      this.startRecording()
    }
    this.timers.reached(now)
    const seq = header.seq
    const counts = this.counts
    if (!subscriber.take(seq)) {
      counts.duplicates++
      return
    }
    counts.delivered++
    if (header.replayed) counts.recovered++
    if (seq < subscriber.highest) counts.reordered++
    else subscriber.highest = seq
    this.recorder.recordUs(latencyUs)
    const { firstUs, lastUs } = this.perPublish
    if (!(firstUs[seq] <= latencyUs)) firstUs[seq] = latencyUs
    if (!(lastUs[seq] >= latencyUs)) lastUs[seq] = latencyUs
    const span = this.span
    if (header.publishedAtUs < span.firstPublishUs) span.firstPublishUs = header.publishedAtUs
    span.lastDeliveryAt = now
  }

  /** A frame that is not a delivery: the publisher's END, an error line, or something else (an error). */
  onOther (subscriber, data, isBinary) {
    if (!isBinary && isFanoutEnd(data)) {
      // Before any publish of this run, an END is the last run's, kept by the server for latecomers.
      if (!this.heardPublish) return
      this.counts.frames++
      const published = Number(data.toString('latin1', FANOUT_END.length))
      this.published = Math.max(this.published ?? 0, published)
      if (!subscriber.ended) {
        subscriber.ended = true
        if (++this.counts.ended === this.subscribers.length) this.stopWaiting()
      }
      return
    }
    this.keepError(isErrorReply(data) ? data.toString('utf8') : `not a fan-out delivery: ${printable(data)}`)
  }

  keepError (text) {
    this.counts.errors++
    if (this.errorTexts.length < KEPT_ERRORS) this.errorTexts.push(text)
  }

  /** The first measured delivery: from here the CPU and the time series count. */
  startRecording () {
    this.recording = true
    this.recorder.start()
    this.timers.countSeconds(performance.now(), () => this.closeSecond())
  }

  /** One second of the time series: deliveries as its `acked`. */
  closeSecond () {
    this.recorder.closeSecond({ acked: this.counts.delivered, errors: this.counts.errors })
  }

  /** A subscriber's connection closed: by this process (its cause), by the server (a close frame) or by the link. */
  onClose (subscriber, code) {
    if (!subscriber.open) return
    subscriber.open = false
    subscriber.bytes.carry(subscriber.socket)
    if (this.finished || subscriber.ended) return
    this.liveness.closed(subscriber, code)
    this.reconnect(subscriber)
  }

  /** Opens a subscriber's connection again until it is back or the run is over. */
  async reconnect (subscriber) {
    const downSince = subscriber.lastHeardAt
    while (!this.finished) {
      try {
        // Asks for what it missed after the highest it had (a server with --replay sends those it kept).
        const from = this.heardPublish ? subscriber.highest + 1 : null
        const { ws, socket, tls, timing } = await this.connect(subscriber, from)
        this.connectTimes.record(timing)
        if (this.finished) return ws.terminate()
        this.attach(subscriber, ws, socket, tls)
        this.reconnects.recordValue(Math.max(1, Math.round((performance.now() - downSince) * 1000)))
        return
      } catch (err) {
        this.connectTimes.fail(err.cause ?? 'other')
        await sleep(RECONNECT_BACKOFF_MS * (1 + Math.random()))
      }
    }
  }

  /**
   * The END must come by then: past it, the subscribers still waiting fail the run.
   * @param {number} deadline performance.now() ms
   */
  expectEndBy (deadline) {
    if (this.finished) return // every END came already
    this.timers.after('deadline', Math.max(0, deadline - performance.now()), () => {
      const waiting = this.subscribers.length - this.counts.ended
      this.failure ??= `${waiting} of ${this.subscribers.length} subscribers had no END from the publisher by the deadline (--timeout)`
      this.stopWaiting()
    })
  }

  /** Stops waiting (SIGINT, or the publisher failed): what arrived counts. */
  stop (reason) {
    this.failure ??= reason
    this.stopWaiting()
  }

  stopWaiting () {
    if (this.finished) return
    this.finished = true
    this.timers.clearAll()
    this.settle()
  }

  /**
   * Resolves once every subscriber has the END, or the deadline or a stop came first.
   * @returns {Promise<object>} what runLoad's result has (see LoadResult), with `fanout`: see FanoutResult
   */
  async finish () {
    await this.done
    const measured = this.recording
    if (!measured) this.recorder.start() // nothing measured came: an empty phase, whose CPU and loop say nothing
    if (this.recorder.hasOpenSecond()) this.closeSecond()
    const recorded = { ...this.recorder.result(), ...(!measured && { cpu: null, generator: null }) }
    const bytes = this.subscribers.map(({ bytes, open, socket }) => bytes.since(open ? socket : null))
    const { firstPublishUs, lastDeliveryAt } = this.span
    const startedAt = Number.isFinite(firstPublishUs) ? firstPublishUs / 1000 : recorded.startedAt
    return {
      ...recorded,
      startedAt,
      durationMs: lastDeliveryAt > 0 ? performance.timeOrigin + lastDeliveryAt - startedAt : 0,
      bytes: {
        written: bytes.reduce((sum, { written }) => sum + written, 0),
        read: bytes.reduce((sum, { read }) => sum + read, 0)
      },
      failure: this.failure,
      errorReplies: this.errorTexts,
      compression: compression(this.options.compress, this.subscribers),
      tls: negotiated(this.subscribers),
      connect: this.connectTimes.result(),
      fanout: {
        frames: this.counts.frames,
        subscribers: this.subscribers.length,
        decoders: this.subscribers.filter((subscriber) => subscriber.decodes).length,
        published: this.published,
        delivered: this.counts.delivered,
        recovered: this.counts.recovered,
        duplicates: this.counts.duplicates,
        reordered: this.counts.reordered,
        errors: this.counts.errors,
        perPublish: {
          firstUs: Array.from(this.perPublish.firstUs, orNull),
          lastUs: Array.from(this.perPublish.lastUs, orNull)
        },
        reconnects: { count: this.reconnects.totalCount, histogram: encodeHistogram(this.reconnects) },
        liveness: this.liveness.result(performance.now())
      }
    }
  }

  /**
   * What the subscribers have measured so far (see Figures in lib/outputs/figures.js), for --out's
   * timer: the deliveries' latency and accounting, their sockets' bytes, their connections.
   * @returns {import('../outputs/figures.js').Figures}
   */
  figures () {
    const { recorder, published, counts } = this
    let written = 0
    let read = 0
    for (const { bytes, open, socket } of this.subscribers) {
      const since = bytes.since(open ? socket : null)
      written += since.written
      read += since.read
    }
    return {
      ...emptyFigures(),
      ...(this.recording && {
        startedAt: recorder.startedAt, latency: recorder.histogram, cpuUs: recorder.cpuUsSinceStart()
      }),
      bytes: { written, read },
      connect: this.connectTimes.histograms.total,
      connectFailures: this.connectTimes.failedAttempts(),
      reconnects: this.reconnects.totalCount,
      fanout: {
        delivered: counts.delivered,
        lost: published === null ? null : published * this.subscribers.length - counts.delivered,
        spread: spreadOf(this.perPublish)
      }
    }
  }

  /** Closes every subscriber connection (after the run, or on a failure). */
  async close () {
    this.stopWaiting()
    const open = this.subscribers.filter((subscriber) => subscriber.open)
    await Promise.all(open.map(({ ws }) => new Promise((resolve) => {
      ws.once('close', resolve)
      ws.close(1000)
      setTimeout(() => ws.terminate(), 1000).unref()
    })))
  }
}

function orNull (value) {
  return value ?? null
}
