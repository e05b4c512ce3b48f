// Connections that come and go (--arrivals R --per-connection K): R new connections a second, on
// the open loop's schedule (a ramp with --stages), each opening, sending K messages request by
// request (--inflight at a time), and closing cleanly once every one is answered. Real clients
// connect, talk a little and leave; here the handshake's cost is in every report (connect time),
// and every message of every arrival is accounted for.
import { performance } from 'node:perf_hooks'
import { Channel } from './channel.js'
import { compression, connect, negotiated } from './connection.js'
import { ConnectTimes } from './connect-times.js'
import { frameSource, replyJudge } from './messages.js'
import { PrecisePacer, TimerPacer } from './pacer.js'
import { Recorder } from './recorder.js'
import { OpenLoopSchedule, StagedSchedule } from './schedule.js'
import { Timers } from './timers.js'

/**
 * Runs arrivals until the schedule is done and every connection has finished (or given up).
 * @param {import('./engine.js').LoadOptions & {arrivals: number, perConnection: number}} options
 *   arrivals: new connections a second (with stages, where the ramp starts); perConnection: messages each sends
 * @returns {Promise<import('./engine.js').LoadResult & {arrivals: object}>}
 */
export async function runArrivals (options) {
  const pacer = options.pacing === 'timer' ? new TimerPacer() : new PrecisePacer()
  await pacer.start()
  const run = new Arrivals(options, pacer)
  const stop = () => run.stop()
  options.signal?.addEventListener('abort', stop, { once: true })
  try {
    return await run.start()
  } finally {
    options.signal?.removeEventListener('abort', stop)
    await pacer.close()
  }
}

/** The arrivals of one run: the schedule they open on, the connections under way, the accounting. */
class Arrivals {
  constructor (options, pacer) {
    const { arrivals, stages, durationMs, codec, direction = 'up', timeoutMs = 10000 } = options
    this.options = options
    this.pacer = pacer
    this.schedule = stages
      ? new StagedSchedule(stages, { startRate: arrivals })
      : new OpenLoopSchedule(arrivals, { durationMs })
    const errorReplies = []
    /** What every connection shares: how replies are judged, frames made and sent, the timeout. */
    this.traffic = {
      errorReplies,
      judge: replyJudge({ codec, direction, ack: options.ack }, errorReplies),
      nextFrame: frameSource(codec, options.prepared.natives, direction),
      sendOptions: { binary: direction === 'down' ? false : codec.binary },
      timeoutMs
    }
    this.recorder = new Recorder(false)
    this.connectTimes = new ConnectTimes()
    /** Connections open now, each with the messages it has still to send. */
    this.live = new Map()
    /** Arrivals due so far (launched), connecting now, opened, refused, done, dropped by the server. */
    this.counts = { launched: 0, connecting: 0, opened: 0, failed: 0, completed: 0, dropped: 0 }
    this.messages = { sent: 0, acked: 0, errors: 0, lost: 0 }
    this.bytes = { written: 0, read: 0 }
    this.firstOpened = null
    this.failure = null
    this.sending = true
    this.startedAt = 0
    this.lastReplyAt = 0
    this.timers = new Timers()
    this.onDue = () => this.arrive()
    this.finish = null
  }

  /** @returns {Promise<object>} the result once every arrival is accounted for */
  start () {
    return new Promise((resolve) => {
      this.finish = resolve
      this.startedAt = this.lastReplyAt = performance.now()
      this.recorder.start()
      this.timers.every('ticker', 1000, () => this.tick())
      this.timers.every('watchdog', Math.min(1000, Math.max(10, this.traffic.timeoutMs / 4)), () => this.expireStale())
      this.arrive()
    })
  }

  /** Opens every connection due by now, then sleeps until the next is due. */
  arrive () {
    if (!this.sending) return this.checkDone()
    const due = this.schedule.dueBy(performance.now() - this.startedAt)
    while (this.counts.launched < due) this.launch()
    if (this.counts.launched < this.schedule.planned) {
      this.pacer.wakeAt(this.startedAt + this.schedule.dueAt(this.counts.launched), this.onDue)
    } else this.checkDone()
  }

  /** One arrival: connect, then its messages; a failed attempt is counted by its cause. */
  launch () {
    this.counts.launched++
    this.counts.connecting++
    connect(this.options).then((opened) => {
      this.counts.connecting--
      this.connectTimes.record(opened.timing)
      if (!this.sending) {
        opened.ws.terminate()
        return this.checkDone()
      }
      this.counts.opened++
      this.firstOpened ??= opened
      const channel = new Channel(opened.ws, opened.socket, this.options.inflight ?? 1, this.traffic.sendOptions, this)
      this.live.set(channel, this.options.perConnection)
      this.fill(channel)
    }, (err) => {
      this.counts.connecting--
      this.counts.failed++
      this.connectTimes.fail(err.cause ?? 'other')
      this.checkDone()
    })
  }

  /** Sends what the connection may: up to its in-flight cap, until its K are out. */
  fill (channel) {
    const now = performance.now()
    let left = this.live.get(channel)
    while (left > 0 && this.sending && channel.belowCap()) {
      left--
      this.messages.sent++
      channel.send(this.traffic.nextFrame(now, true), now, now)
    }
    this.live.set(channel, left)
  }

  /** A reply: judged, counted, recorded; the connection sends its next message, or leaves. Hot path. */
  onReply (channel, data, isBinary, scheduledAt, sentAt, now) {
    if (this.traffic.judge(data, isBinary)) this.messages.acked++
    else this.messages.errors++
    this.lastReplyAt = now
    this.recorder.record(now, scheduledAt, sentAt)
    if (this.live.get(channel) > 0 && this.sending) return this.fill(channel)
    if (channel.outstanding === 0) this.leave(channel, 'completed')
  }

  /** The server closed a connection before its messages were done: they are lost, the run fails. */
  onClosed (channel, code, reason, lost) {
    this.messages.lost += lost
    this.leave(channel, 'dropped')
  }

  /** A connection is done (its K answered) or gone: its bytes kept, closed cleanly. */
  leave (channel, how) {
    if (!this.live.delete(channel)) return
    this.counts[how]++
    const { written, read } = channel.bytesSinceMark()
    this.bytes.written += written
    this.bytes.read += read
    channel.close().then(() => this.checkDone())
  }

  /** --timeout: a connection whose oldest message waited longer gives up, its messages lost. */
  expireStale () {
    const { timeoutMs } = this.traffic
    const sentBefore = performance.now() - timeoutMs
    for (const channel of this.live.keys()) {
      if (channel.oldestSendTime() >= sentBefore) continue
      this.failure ??= `no reply within ${timeoutMs} ms (--timeout)`
      this.messages.lost += channel.abandon()
      this.leave(channel, 'dropped')
    }
  }

  tick () {
    const { acked, errors } = this.messages
    const p99 = this.recorder.closeSecond({ acked, errors })
    this.options.onTick?.({ ...this.messages, elapsedMs: performance.now() - this.startedAt, p99 })
  }

  /** SIGINT: no new arrivals, no new messages; what is in flight gets the timeout's grace. */
  stop () {
    this.sending = false
    this.pacer.cancel()
    this.checkDone()
  }

  checkDone () {
    const { launched, connecting } = this.counts
    const scheduled = launched >= this.schedule.planned || !this.sending
    if (!this.finish || !scheduled || connecting > 0 || this.live.size > 0) return
    const finish = this.finish
    this.finish = null
    this.timers.clearAll()
    this.pacer.cancel()
    if (this.recorder.hasOpenSecond()) this.tick()
    finish(this.result())
  }

  result () {
    const { connecting, ...counts } = this.counts
    const { failed, dropped } = counts
    const { sizes } = this.options.prepared
    const ended = failed + dropped > 0
      ? `${failed} of ${this.counts.launched} arrivals could not connect, ${dropped} were closed by the server`
      : null
    const durationMs = Math.max(this.schedule.windowMs(this.counts.launched), this.lastReplyAt - this.startedAt)
    return {
      messages: { ...this.messages },
      durationMs,
      bytes: { payloadPerMessage: sizes.mean, payloadSizes: sizes, ...this.bytes },
      target: null,
      ...this.recorder.result(),
      uncorrectedHistogram: null,
      sendLagHistogram: null,
      arrivals: {
        rate: Math.round(this.schedule.rate * 10) / 10,
        perConnection: this.options.perConnection,
        planned: this.schedule.planned,
        ...counts,
        ...this.schedule.stages?.()
      },
      reconnects: { count: 0, gapMs: 0 },
      compression: compression(this.options.compress, this.firstOpened ? [this.firstOpened] : []),
      tls: negotiated(this.firstOpened ? [this.firstOpened] : []),
      connect: this.connectTimes.result(),
      errorReplies: this.traffic.errorReplies,
      failure: this.failure ?? ended,
      interrupted: Boolean(this.options.signal?.aborted)
    }
  }
}
