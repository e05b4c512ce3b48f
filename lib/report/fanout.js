// The fan-out part of a report: the accounting of every delivery (expected = published ×
// subscribers = delivered + lost), how far apart one publish's deliveries landed, the reconnects
// and what liveness cost and closed, and the bytes and CPU per delivery; and how the parts from
// several processes or hosts add up.
import { addHistograms, createLatencyHistogram, decodeHistogram, encodeHistogram, summarizeLatency } from '../histogram.js'
import { round } from '../display.js'
import { UsageError } from '../errors.js'

/**
 * The report's `fanout` from what a run measured.
 * @param {object} measured the run's fanout (see FanoutResult in lib/load/subscribers.js), with
 *   `published` (the publisher's count, or the END's) and `subscriberBytesRead` (their sockets' bytes read)
 * @param {{role: string, headerBytes: number, cpu: {userUs: number, systemUs: number, pacingUs?: number}|null}} context
 * @returns {object}
 */
export function describeFanout (measured, { role, headerBytes, cpu }) {
  const { subscribers, published, delivered, perPublish, reconnects } = measured
  const { pings, suspendedMs, closes } = measured.liveness ?? NO_LIVENESS
  const expected = published === null ? null : published * subscribers
  const reconnectGaps = reconnects.histogram ? decodeHistogram(reconnects.histogram) : createLatencyHistogram()
  const { p50, p99, max } = summarizeLatency(reconnectGaps)
  const read = measured.subscriberBytesRead
  const frames = measured.frames
  return {
    role,
    subscribers,
    decoders: measured.decoders,
    published,
    expected,
    delivered,
    // Delivered late, replayed by a server with --replay to a subscriber that came back (reports before it had none).
    recovered: measured.recovered ?? 0,
    lost: expected === null ? null : expected - delivered,
    duplicates: measured.duplicates,
    reordered: measured.reordered,
    errors: measured.errors,
    headerBytes,
    spreadMs: deliverySpread(perPublish),
    perPublish,
    reconnects: { count: reconnects.count, gapMs: { p50, p99, max }, histogram: reconnects.histogram },
    liveness: {
      pings, pingsPerDelivery: delivered > 0 ? round(pings / delivered, 4) : null, suspendedMs, closes: { ...closes }
    },
    // Subscribers its own late loop took for gone: their losses are the generator's, not the server's.
    invalid: closes.generator > 0
      ? `${closes.generator} subscriber connection(s) closed by their own client process while it ran late (its loop, not the ` +
        'server or the link): the losses are not the server\'s; fewer subscribers per process, or more hosts'
      : null,
    // Read by the subscribers on their sockets after the upgrade, per frame they got (warm-up and END
    // too): WebSocket framing, the fan-out header and any compression included.
    wire: { read, frames, perDelivery: frames > 0 ? round(read / frames, 1) : null },
    // Less a publisher's pacing: waiting for due times, not delivering.
    cpuPerDeliveryUs: cpu && delivered > 0
      ? round((cpu.userUs + cpu.systemUs - (cpu.pacingUs ?? 0)) / delivered, 2)
      : null
  }
}

/** What a part without subscribers (a publisher alone) or from before liveness was counted has. */
const NO_LIVENESS = { pings: 0, suspendedMs: 0, closes: { link: 0, server: 0, generator: 0 } }

/**
 * The spread of a fan-out's deliveries: for each publish, from its first delivery to its last,
 * over every publish delivered at least once.
 * @param {{firstUs: Array<number|null>, lastUs: Array<number|null>}} perPublish
 * @returns {{p50: number, p99: number, max: number}} ms
 */
export function deliverySpread ({ firstUs, lastUs }) {
  const spreads = createLatencyHistogram()
  firstUs.forEach((first, seq) => { if (first !== null) spreads.recordValue(Math.max(1, lastUs[seq] - first)) })
  const { p50, p99, max } = summarizeLatency(spreads)
  return { p50, p99, max }
}

/**
 * Several parts' fanout as the measured fanout of one run, exactly: counts added, the publish count
 * from the publisher (parts that heard an END agree with it), each publish's first and last delivery
 * over every part, the reconnect histograms added.
 * @param {object[]} parts the reports' `fanout`
 * @returns {object} for describeFanout
 * @throws {UsageError} when parts disagree on how many were published
 */
export function mergeFanout (parts) {
  const counts = parts.map((part) => part.published).filter((published) => published !== null)
  const distinct = [...new Set(counts)]
  if (distinct.length > 1) throw new UsageError(`cannot merge fan-out reports that disagree on how many were published: ${distinct.join(', ')}`)
  const sum = (pick) => parts.reduce((total, part) => total + pick(part), 0)
  const length = Math.max(...parts.map((part) => part.perPublish.firstUs.length))
  const extreme = (pick, side) => Array.from({ length }, (_, seq) => {
    const values = parts.map((part) => part.perPublish[side][seq] ?? null).filter((value) => value !== null)
    return values.length ? pick(...values) : null
  })
  const histograms = parts.map((part) => part.reconnects.histogram).filter(Boolean)
  const liveness = parts.map((part) => part.liveness ?? NO_LIVENESS)
  const closes = (cause) => liveness.reduce((total, { closes }) => total + closes[cause], 0)
  return {
    subscribers: sum((part) => part.subscribers),
    decoders: sum((part) => part.decoders),
    published: counts[0] ?? null,
    delivered: sum((part) => part.delivered),
    recovered: sum((part) => part.recovered ?? 0),
    duplicates: sum((part) => part.duplicates),
    reordered: sum((part) => part.reordered),
    errors: sum((part) => part.errors),
    perPublish: { firstUs: extreme(Math.min, 'firstUs'), lastUs: extreme(Math.max, 'lastUs') },
    reconnects: {
      count: sum((part) => part.reconnects.count),
      histogram: histograms.length ? encodeHistogram(addHistograms(histograms)) : null
    },
    liveness: {
      pings: liveness.reduce((total, { pings }) => total + pings, 0),
      // The parts ran at once: the longest wait is how long some subscribers went unjudged.
      suspendedMs: Math.max(0, ...liveness.map(({ suspendedMs }) => suspendedMs)),
      closes: { link: closes('link'), server: closes('server'), generator: closes('generator') }
    },
    frames: sum((part) => part.wire.frames),
    subscriberBytesRead: sum((part) => part.wire.read)
  }
}
