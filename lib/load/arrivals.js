// Connections that come and go (--arrivals R --per-connection K): R new connections a second, on
// the open loop's schedule (a ramp with --stages), each opening, sending K messages request by
// request (--inflight at a time) or, with --rate, on its own open loop of that many a second from
// its opening, and closing cleanly once every one is answered. Real clients
// connect, talk a little and leave; here the handshake's cost is in every report (connect time),
// and every message of every arrival is accounted for.
import { performance } from 'node:perf_hooks'
import { Channel } from './channel.js'
import { compression, connect, negotiated } from './connection.js'
import { ConnectTimes } from './connect-times.js'
import { frameSource, replyJudge, sendOptions } from './messages.js'
import { createPacer } from './pacer.js'
import { Recorder } from './recorder.js'
import { OpenLoopSchedule, StagedSchedule } from './schedule.js'
import { Timers } from './timers.js'
import { emptyFigures } from '../outputs/figures.js'

/**
 * Runs arrivals until the schedule is done and every connection has finished (or given up).
 * @param {import('./engine.js').LoadOptions & {arrivals: number, perConnection: number}} options
 *   arrivals: new connections a second (with stages, where the ramp starts); perConnection: messages each
 *   sends; rate: each connection's messages a second (its open loop), else request by request
 * @returns {Promise<import('./engine.js').LoadResult & {arrivals: object}>}
 */
export async function runArrivals (options) {
  const pacer = createPacer(options.pacing, options.pacingReason, options.tickMs)
  await pacer.start()
  const run = new Arrivals(options, pacer)
  options.live?.add(run)
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
      sendOptions: sendOptions(codec, direction),
      timeoutMs
    }
    // With --rate each connection runs an open loop: its messages' due times, earliest first.
    this.dueQueue = options.rate > 0 ? new DueQueue(1000 / options.rate) : null
    this.recorder = new Recorder(this.dueQueue !== null, pacer)
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
    this.onDue = () => this.wake()
    this.finish = null
  }

  /** @returns {Promise<object>} the result once every arrival is accounted for */
  start () {
    return new Promise((resolve) => {
      this.finish = resolve
      this.startedAt = this.lastReplyAt = performance.now()
      this.recorder.start()
      this.timers.countSeconds(this.startedAt, () => this.tick())
      this.timers.every('watchdog', Math.min(1000, Math.max(10, this.traffic.timeoutMs / 4)), () => this.expireStale())
      this.wake()
    })
  }

  /** Opens every connection due by now and sends every message due by now, then sleeps until the next is due. */
  wake () {
    if (!this.sending) return this.checkDone()
    const now = performance.now()
    const due = this.schedule.dueBy(now - this.startedAt)
    while (this.counts.launched < due) this.launch()
    this.sendDue(now)
    const { launched } = this.counts
    const arrival = launched < this.schedule.planned ? this.startedAt + this.schedule.dueAt(launched) : Infinity
    const next = Math.min(arrival, this.dueQueue?.nextAt() ?? Infinity)
    if (next < Infinity) this.pacer.wakeAt(next, this.onDue)
    else this.checkDone()
  }

  /** --rate: each connection's messages due by now, stamped with their due times. */
  sendDue (now) {
    const queue = this.dueQueue
    if (!queue) return
    for (let at = queue.nextAt(); at <= now; at = queue.nextAt()) {
      const channel = queue.take()
      if (!this.live.has(channel)) continue
      // No room (its --inflight all outstanding): the message waits for a reply, its lateness in its latency.
      if (!channel.belowCap()) {
        queue.hold(channel, at)
        continue
      }
      this.sendScheduled(channel, at, now)
    }
  }

  /** Sends a connection's message due at `at` and queues its next one. Hot path. */
  sendScheduled (channel, at, now) {
    const left = this.live.get(channel) - 1
    this.live.set(channel, left)
    this.messages.sent++
    channel.send(this.traffic.nextFrame(at, true), at, now)
    if (left > 0) this.dueQueue.add(at + this.dueQueue.intervalMs, channel)
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
      const channel = new Channel(opened, this.options.inflight ?? 1, this.traffic.sendOptions, this)
      this.live.set(channel, this.options.perConnection)
      if (!this.dueQueue) return this.fill(channel)
      // Its open loop starts as it opens: the first message now, the next an interval later.
      this.dueQueue.add(performance.now(), channel)
      this.wake()
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
    this.timers.reached(now)
    if (this.traffic.judge(data, isBinary)) this.messages.acked++
    else this.messages.errors++
    this.lastReplyAt = now
    this.recorder.record(now, scheduledAt, sentAt)
    const held = this.dueQueue?.release(channel)
    if (held !== undefined && this.sending) {
      this.sendScheduled(channel, held, now)
      return this.wake() // its next message is queued: the pacer may have nothing else to wake for
    }
    if (this.live.get(channel) > 0 && this.sending) return this.dueQueue ? undefined : this.fill(channel)
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
    this.dueQueue?.release(channel)
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

  /**
   * What the arrivals have measured so far (see Figures in lib/outputs/figures.js), for --out's
   * timer: their counts and latency, the bytes of the connections gone and of those open, their openings.
   * @returns {import('../outputs/figures.js').Figures}
   */
  figures () {
    const { recorder } = this
    const bytes = { ...this.bytes }
    for (const channel of this.live.keys()) {
      const since = channel.bytesSinceMark()
      bytes.written += since.written
      bytes.read += since.read
    }
    return {
      ...emptyFigures(),
      ...(this.startedAt > 0 && {
        startedAt: recorder.startedAt,
        messages: { ...this.messages },
        latency: recorder.histogram,
        bytes,
        cpuUs: recorder.cpuUsSinceStart(),
        stage: this.schedule.stageAt?.(performance.now() - this.startedAt) ?? null
      }),
      connect: this.connectTimes.histograms.total,
      connectFailures: this.connectTimes.failedAttempts()
    }
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
      // Open loops (--rate) keep the actual sends' latency too; send lag is the pacer's, not kept here.
      ...this.recorder.result(),
      sendLagHistogram: null,
      arrivals: {
        rate: Math.round(this.schedule.rate * 10) / 10,
        perConnection: this.options.perConnection,
        // --rate: each connection's own open loop, messages a second; null: request by request.
        messageRate: this.options.rate ?? null,
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

/**
 * The due times of the connections' next messages (--arrivals with --rate), earliest first: a
 * binary heap in two parallel arrays, so queueing a message allocates nothing; and the messages
 * held because their connection had no room, until its next reply.
 */
class DueQueue {
  /** @param {number} intervalMs between one connection's messages */
  constructor (intervalMs) {
    this.intervalMs = intervalMs
    this.times = []
    this.channels = []
    this.held = new Map()
  }

  /** @returns {number} the earliest due time queued, Infinity when none */
  nextAt () {
    return this.times.length > 0 ? this.times[0] : Infinity
  }

  add (at, channel) {
    const { times, channels } = this
    let i = times.length
    times.push(at)
    channels.push(channel)
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (times[parent] <= at) break
      times[i] = times[parent]
      channels[i] = channels[parent]
      i = parent
    }
    times[i] = at
    channels[i] = channel
  }

  /** Removes and returns the channel whose message is due first. */
  take () {
    const { times, channels } = this
    const top = channels[0]
    const lastAt = times.pop()
    const last = channels.pop()
    if (times.length === 0) return top
    let i = 0
    for (;;) {
      const left = 2 * i + 1
      if (left >= times.length) break
      const child = left + 1 < times.length && times[left + 1] < times[left] ? left + 1 : left
      if (times[child] >= lastAt) break
      times[i] = times[child]
      channels[i] = channels[child]
      i = child
    }
    times[i] = lastAt
    channels[i] = last
    return top
  }

  /** A connection's message due at `at` waits for room. */
  hold (channel, at) {
    this.held.set(channel, at)
  }

  /** @returns {number|undefined} the due time of the message the connection held, now released */
  release (channel) {
    const at = this.held.get(channel)
    if (at !== undefined) this.held.delete(channel)
    return at
  }
}
