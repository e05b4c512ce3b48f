// A fan-out run from one client process: its subscribers open first, then its publisher (an open
// loop on one connection, every frame numbered and stamped with its scheduled time) publishes; the
// run ends when the publisher's END has reached every subscriber. With --role, the publisher and
// the subscribers run in different processes or hosts, and their reports merge.
import { runLoad } from './engine.js'
import { Subscribers } from './subscribers.js'
import { createLatencyHistogram } from '../histogram.js'
import { FANOUT_END, FANOUT_HEADER_BYTES } from '../protocol.js'
import { mergeCompression, mergeConnectTimes } from '../report/merge.js'
import { addFigures, emptyFigures } from '../outputs/figures.js'

/**
 * Runs a fan-out: `connections` subscribers and (unless role is subscriber) one publisher at
 * `rate` publishes per second. Every measured publish is expected once at every subscriber.
 * @param {import('./engine.js').LoadOptions & {role?: string, decode?: 'all'|'one', heartbeatMs: number}} options
 * @returns {Promise<import('./engine.js').LoadResult & {fanout: object, publisher: object|null}>} the publisher's
 *   accounting in `messages` (zeros without one); latency is publish to delivery over every delivery; `fanout` has
 *   the subscribers' (see FanoutResult in subscribers.js), `published` the publisher's own count; `publisher`
 *   its send lag histogram and pacing CPU (µs), null without one
 */
export async function runFanout (options) {
  const { role = 'both', connections, signal } = options
  const subscribers = role === 'publisher' ? null : new Subscribers(options)
  // --out reads the publisher's messages and the subscribers' deliveries as one run's figures.
  let publisherRun = null
  options.live?.add({ figures: () => fanoutFigures(publisherRun, subscribers) })
  const stop = () => subscribers?.stop(typeof signal.reason === 'string' ? signal.reason : 'interrupted')
  signal?.addEventListener('abort', stop, { once: true })
  try {
    await subscribers?.open(connections)
    let publisher = null
    if (role !== 'subscriber' && !signal?.aborted) {
      publisher = await runLoad({
        ...options,
        connections: 1,
        role: 'publisher',
        live: { add: (run) => { publisherRun = run } },
        // Every publish that was not refused may have been delivered, acknowledged in time or not.
        farewell: ({ messages }) => `${FANOUT_END}${messages.sent - messages.errors}`
      })
      if (publisher.failure) subscribers?.stop(`the publisher failed: ${publisher.failure}`)
    }
    subscribers?.expectEndBy(performance.now() + endWithinMs(options, publisher !== null))
    const heard = subscribers ? await subscribers.finish() : null
    return combine(options, publisher, heard)
  } finally {
    signal?.removeEventListener('abort', stop)
    await subscribers?.close()
  }
}

/**
 * A fan-out's figures so far: the publisher's messages (its acknowledgements' latency left out: a
 * fan-out's latency is publish to delivery), the subscribers' deliveries.
 * @returns {import('../outputs/figures.js').Figures}
 */
function fanoutFigures (publisherRun, subscribers) {
  const published = publisherRun ? { ...publisherRun.figures(), latency: null } : emptyFigures()
  return subscribers ? addFigures([published, subscribers.figures()]) : published
}

/**
 * How long subscribers wait for the END from now: after this process's publisher finished, the
 * --timeout; otherwise the rest of the publisher's run (it starts at --start-at, or about now),
 * warm-up and measured phase, plus the --timeout.
 */
function endWithinMs ({ timeoutMs = 10000, startAt, warmup = {}, durationMs, messages, rate, stages }, published) {
  if (published) return timeoutMs
  // A ramp (--stages) warms up at the rate it starts from, and lasts as long as its stages.
  const warmupRate = rate || stages?.[0].target
  const warmupMs = warmup.durationMs ?? (warmup.messages ?? 0) * 1000 / warmupRate
  const stagesMs = stages?.reduce((sum, stage) => sum + stage.durationMs, 0)
  const measuredMs = durationMs ?? stagesMs ?? messages * 1000 / rate
  const startsIn = startAt ? Math.max(0, startAt - Date.now()) : warmupMs
  return startsIn + measuredMs + timeoutMs
}

/** One result from the publisher's and the subscribers' parts of the run. */
function combine (options, publisher, heard) {
  // The publisher measured them; subscribers alone measure them here.
  const sizes = publisher?.bytes.payloadSizes ?? options.prepared.sizes
  const base = heard ?? {
    ...publisher,
    histogram: createLatencyHistogram(), // a publisher alone times no delivery
    timeSeries: [],
    fanout: {
      frames: 0,
      subscribers: 0,
      decoders: 0,
      published: null,
      delivered: 0,
      duplicates: 0,
      reordered: 0,
      errors: 0,
      perPublish: { firstUs: [], lastUs: [] },
      reconnects: { count: 0, histogram: null },
      liveness: { pings: 0, suspendedMs: 0, closes: { link: 0, server: 0, generator: 0 } }
    }
  }
  const published = publisher ? publisher.messages.sent - publisher.messages.errors : base.fanout.published
  return {
    ...base,
    messages: publisher?.messages ?? { sent: 0, acked: 0, errors: 0, lost: 0 },
    uncorrectedHistogram: null,
    bytes: {
      payloadPerMessage: sizes.mean,
      payloadSizes: sizes,
      headerPerMessage: FANOUT_HEADER_BYTES,
      written: base.bytes.written + (heard && publisher ? publisher.bytes.written : 0),
      read: base.bytes.read + (heard && publisher ? publisher.bytes.read : 0)
    },
    target: publisher?.target ?? null,
    // A ramp's stages are the publisher's; its latency is the subscribers', not kept per stage.
    stageHistograms: null,
    reconnects: publisher?.reconnects ?? { count: 0, gapMs: 0 },
    compression: mergeCompression([publisher?.compression, heard?.compression]),
    tls: publisher?.tls ?? heard?.tls ?? null,
    connect: mergeConnectTimes([publisher?.connect, heard?.connect]),
    interrupted: Boolean(options.signal?.aborted),
    failure: publisher?.failure ?? heard?.failure ?? null,
    errorReplies: [...(publisher?.errorReplies ?? []), ...(heard?.errorReplies ?? [])],
    fanout: { ...base.fanout, published, subscriberBytesRead: heard?.bytes.read ?? 0 },
    // The publisher's own lateness and pacing: the latency above is the subscribers', and whether
    // the generator kept up (capacity's probes) needs the publisher's side too.
    publisher: publisher && { sendLagHistogram: publisher.sendLagHistogram, pacingUs: publisher.cpu?.pacingUs ?? 0 }
  }
}
