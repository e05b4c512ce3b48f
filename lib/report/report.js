import { decodeHistogram, encodeHistogram, latencyBands, summarizeLatency } from '../histogram.js'
import { int, ms, round, size } from '../display.js'
import { describeFanout } from './fanout.js'

const BAR_WIDTH = 30

/**
 * @typedef {object} RunContext what was run, for the report to name it
 * @property {string} format codec name
 * @property {string|null} [codecModule] the file the format came from (--codec-module), null for a built-in one
 * @property {import('../payloads/catalog.js').TestInfo} test
 * @property {string} url
 * @property {number} connections
 * @property {number} inflight
 * @property {number} warmup
 * @property {string} [direction] up (default), down or echo
 * @property {object|null} [network] the network profile in force, null for none
 * @property {{differences: number, examples: object[]}|null} [lossy] for a user's payload whose schema changes values
 * @property {import('../payloads/catalog.js').PayloadKind|null} [payload] what was sent: a stream, one message repeated, a corpus
 * @property {string} [role] fan-out: both, publisher or subscriber
 */

/**
 * Builds the report object that `--json` prints and every other tool reads: what was measured,
 * under which network, with exact accounting and the full latency histogram.
 * @param {import('../load/engine.js').LoadResult} result
 * @param {RunContext} context
 * @returns {object}
 */
export function buildReport (result, context) {
  const { messages, durationMs, histogram, bytes } = result
  const fanout = result.fanout
    ? describeFanout(result.fanout, {
      role: context.role ?? 'both', headerBytes: bytes.headerPerMessage, cpu: result.cpu
    })
    : null
  const ok = !result.failure && !result.interrupted && messages.errors === 0 && messages.lost === 0 &&
    deliveredAll(fanout)
  // Fan-out's rate is deliveries per second, where there were subscribers to count them.
  const counted = fanout?.subscribers > 0 ? fanout.delivered : messages.acked
  const uncorrected = result.uncorrectedHistogram
  const sendLag = result.sendLagHistogram ?? null
  const sendLagMs = sendLag?.totalCount > 0 ? summarizeLatency(sendLag) : null
  return {
    ...describeRunContext(context),
    messages: { ...messages },
    startedAt: result.startedAt,
    durationMs: round(durationMs, 3),
    rate: durationMs > 0 ? round(counted * 1000 / durationMs, 1) : 0,
    target: result.target ? describeTarget(result.target) : null,
    // A ramp (--stages): each stage's span, rates and messages, with the latency of the messages due in it.
    stages: result.target?.stages ? describeStages(result.target.stages, result.stageHistograms) : null,
    // --arrivals: connections opened on a schedule, each sending its messages and closing.
    arrivals: result.arrivals ?? null,
    // With a target rate, latency counts from each message's scheduled send (coordinated omission
    // corrected); uncorrectedLatencyMs counts from the actual send, as a closed loop would.
    latencyMs: summarizeLatency(histogram),
    uncorrectedLatencyMs: uncorrected ? summarizeLatency(uncorrected) : null,
    // Open loop: from each message's due time to its send, the generator's own lateness (in latencyMs too).
    sendLagMs,
    bytes: { ...bytes },
    // The client process's CPU over the measured phase: what a message costs to encode, send and settle.
    cpu: result.cpu ? cpuPerMessage(result.cpu, messages.sent) : null,
    // Whether the load generator was the bottleneck: then the latencies are the client's, not the server's.
    generator: result.generator ? judgeGenerator(result.generator, durationMs, sendLagMs, result.target?.pacing) : null,
    reconnects: describeReconnects(result.reconnects),
    // With --compress: whether the server took permessage-deflate (if not, every frame went uncompressed).
    compression: result.compression ?? null,
    // Over wss://: what TLS the connections negotiated (their bytes are then the encrypted stream).
    tls: result.tls ?? null,
    // How long connections took to open, step by step (µs), and the attempts that failed, by cause.
    connect: result.connect ? describeConnect(result.connect) : null,
    interrupted: Boolean(result.interrupted),
    ok,
    failure: result.failure ?? (ok ? null : describeFailedMessages(messages, fanout, result.errorReplies)),
    fanout,
    errorReplies: result.errorReplies,
    timeSeries: result.timeSeries ?? [],
    histogram: encodeHistogram(histogram),
    uncorrectedHistogram: uncorrected ? encodeHistogram(uncorrected) : null,
    sendLagHistogram: sendLag ? encodeHistogram(sendLag) : null,
    ...(context.test.custom && describeCustomPayload(context))
  }
}

/** What was run, as the report's first fields name it: format, test, where, how many connections, which network. */
function describeRunContext (context) {
  return {
    format: context.format,
    codecModule: context.codecModule ?? null,
    test: context.test.name,
    testId: context.test.id,
    url: context.url,
    connections: context.connections,
    inflight: context.inflight,
    warmup: context.warmup,
    startAt: context.startAt ?? null,
    direction: context.direction ?? 'up',
    payload: context.payload ?? null,
    network: context.network ?? { profile: 'none' }
  }
}

/** A user's payload: which file (and how many messages), which schema, and whether it arrived unchanged. */
function describeCustomPayload ({ test, lossy }) {
  return {
    payloadFile: test.file,
    corpus: test.corpus ?? null,
    schema: test.inferred ? 'inferred' : test.typeName,
    lossy: lossy ?? null
  }
}

/** The encoded size: one figure, or for a corpus its mean and spread. */
function payloadSizeText ({ payloadPerMessage, payloadSizes: sizes }) {
  if (!sizes || sizes.messages === 1) return `${int(payloadPerMessage)} B/msg`
  return `${int(sizes.mean)} B/msg mean of ${int(sizes.messages)} messages (min ${int(sizes.min)}, p50 ${int(sizes.p50)}, ` +
    `p99 ${int(sizes.p99)}, max ${int(sizes.max)})`
}

/** Past this share of the measured phase spent busy, an event loop queues its own work: it is the bottleneck. */
export const SATURATED_LOOP_BUSY = 0.9
/** Timers this late mean the event loop was blocked long enough to delay replies by as much. */
export const SATURATED_LOOP_DELAY_MS = 50
/** A shorter measured phase has too few samples (one each 10 ms) and too much start-up work to judge. */
export const JUDGED_PHASE_MS = 1000
/**
 * An open loop that sent 1% of its messages this late behind their due time could not keep its
 * schedule: a pacing thread (precise or spin) keeps the p99 near 0.3 ms on an idle generator here
 * (a busy machine's scheduling adds a millisecond or two), timer pacing near 2 ms, its timers' own
 * lateness (docs/method.md).
 */
export const SATURATED_SEND_LAG_MS = { thread: 5, timer: 10 }

/**
 * The generator's figures with the call: saturated when its event loop was busy nearly all the
 * measured phase or ran its timers very late, or (open loop) it sent its messages late behind their
 * schedule, so latencies include the client's own queueing. Phases shorter than JUDGED_PHASE_MS
 * are not called saturated.
 * @param {{cpuShare: number, loopBusy: number, loopDelayMs: {p99: number, max: number}}} generator
 * @param {number} durationMs the measured phase
 * @param {{p99: number}|null} [sendLagMs] open loop: the send lag
 * @param {string} [pacing] open loop: how it was paced (--pacing: precise, precise:<µs>, spin or timer)
 * @returns {{cpuShare: number, loopBusy: number, loopDelayMs: {p99: number, max: number}, saturated: boolean}}
 */
export function judgeGenerator (generator, durationMs, sendLagMs = null, pacing = null) {
  const busy = generator.loopBusy >= SATURATED_LOOP_BUSY || generator.loopDelayMs.p99 >= SATURATED_LOOP_DELAY_MS ||
    (sendLagMs?.p99 ?? 0) >= SATURATED_SEND_LAG_MS[pacing === 'timer' ? 'timer' : 'thread']
  return { ...generator, saturated: busy && durationMs >= JUDGED_PHASE_MS }
}

function generatorLine ({ cpuShare, loopBusy, loopDelayMs, saturated }, durationMs, fanout) {
  const call = saturated ? 'SATURATED' : durationMs < JUDGED_PHASE_MS ? `not judged (phase under ${JUDGED_PHASE_MS} ms)` : 'ok'
  // Fan-out has no --workers: its subscribers split over processes by role.
  const more = fanout ? 'split the subscribers over processes or hosts (--role subscriber)' : 'add --workers or hosts'
  return `generator ${call}: event loop busy ${Math.round(loopBusy * 100)}% of the phase, timers late by ` +
    `p99 ${loopDelayMs.p99} ms (max ${loopDelayMs.max} ms), CPU ${cpuShare} core(s)` +
    `${saturated ? `: these latencies are the client's own queueing, not the server's; ${more}` : ''}`
}

function arrivalsLine ({ rate, perConnection, messageRate, planned, opened, failed, completed, dropped }) {
  const pace = messageRate ? ` at ${int(messageRate)}/s each` : ''
  return `arrivals  ${int(rate)}/s × ${int(perConnection)} messages${pace}: ${int(planned)} due, ${int(opened)} opened, ` +
    `${int(completed)} completed, ${int(failed)} could not connect, ${int(dropped)} closed by the server`
}

function reconnectLine ({ count, awayMs, allBackMs, lost, peakPer100ms, backoff, lateMs }) {
  const late = lateMs ? `; attempts late p50 ${ms(lateMs.p50)}  p99 ${ms(lateMs.p99)} against the backoff` : ''
  return `reconnect ${int(count)} back, away p50 ${ms(awayMs.p50)}  p99 ${ms(awayMs.p99)}  max ${ms(awayMs.max)}; all back ${int(allBackMs)} ms ` +
    `after the first drop; at most ${int(peakPer100ms)} in any 100 ms; ${int(lost)} messages lost at the drops ` +
    `(backoff: full jitter, base ${int(backoff.baseMs)} ms, cap ${int(backoff.capMs)} ms)${late}`
}

function connectLine ({ opened, failures, steps }) {
  const step = (name) => steps[name] ? `  ${name} p50 ${int(steps[name].p50)} p99 ${int(steps[name].p99)}` : ''
  const failed = Object.entries(failures).map(([cause, count]) => `${int(count)} ${cause}`).join(', ')
  return `connect   ${int(opened)} opened${step('tcp')}${step('tls')}${step('upgrade')}${step('total')} µs` +
    `${failed ? `; failed attempts: ${failed}` : ''}`
}

function stageLine ({ fromMs, toMs, fromRate, toRate, messages, replies, latencyMs: l }, i) {
  const rates = fromRate === toRate ? `${int(toRate)}/s` : `${int(fromRate)} -> ${int(toRate)}/s`
  const span = `stage ${i + 1}   ${(fromMs / 1000).toFixed(1)}-${(toMs / 1000).toFixed(1)} s  ${rates}  ${int(messages)} due`
  if (replies === null) return `${span}  (latency not kept per stage)`
  const latency = l ? `p50 ${ms(l.p50)}  p90 ${ms(l.p90)}  p99 ${ms(l.p99)}  max ${ms(l.max)}` : 'no replies'
  return `${span}, ${int(replies)} replies  ${latency}`
}

/** One --out stream: how many pushes, how many failed and why. */
function outputLine ({ kind, url, pushes, failed, error }) {
  return `out       ${kind} ${url}: ${int(pushes)} pushes, ${failed ? `${int(failed)} FAILED (${error})` : 'none failed'}`
}

/** What --out's pushes cost this process, all of them, against its CPU in the measured phase. */
function streamingLine (us, cpu) {
  const share = cpu ? ` (${(100 * us / (cpu.userUs + cpu.systemUs)).toFixed(2)}% of the cpu line's)` : ''
  return `out       every push together took ${(us / 1000).toFixed(1)} ms of CPU${share}, on a thread of its own and reading the figures`
}

function sendLagLine ({ p50, p99, max }) {
  return `send lag  p50 ${ms(p50)}  p99 ${ms(p99)}  max ${ms(max)}  (due time to send, where a connection had room: ` +
    'the generator\'s own lateness, counted in the latency above)'
}

function compressionLine ({ accepted }) {
  return accepted
    ? 'compress  permessage-deflate offered and taken on every connection'
    : 'compress  permessage-deflate offered, but REFUSED by the server: every frame went uncompressed'
}

function cpuLine ({ userUs, systemUs, pacingUs, perMessageUs }) {
  const pacing = pacingUs ? `, of which pacing ${(pacingUs / 1000).toFixed(1)} ms` : ''
  return `cpu       ${(userUs / 1000).toFixed(1)} ms user  ${(systemUs / 1000).toFixed(1)} ms system${pacing}  ` +
    `${perMessageUs ?? 'n/a'} µs/msg (this client process, measured phase${pacingUs ? ', pacing left out' : ''})`
}

/**
 * CPU time with its cost per sent message: sending and receiving, the pacer's waiting and its
 * thread left out (they are the open loop's clock, not the messages' cost).
 * @param {{userUs: number, systemUs: number, pacingUs?: number, process?: string}} cpu pacingUs: none in reports from before it
 * @param {number} sent
 * @returns {{userUs: number, systemUs: number, pacingUs: number, perMessageUs: number|null, process?: string}}
 */
export function cpuPerMessage ({ userUs, systemUs, pacingUs = 0, process }, sent) {
  const perMessageUs = sent > 0 ? round(Math.max(0, userUs + systemUs - pacingUs) / sent, 2) : null
  return { userUs, systemUs, pacingUs, perMessageUs, process }
}

/**
 * The target rate against what was sent: met within 1%, or missed by how much.
 * @param {{rate: number, sendRate: number, pacing?: string, pacingReason?: string|null}} target pacing: --pacing's,
 *   unknown in reports from before it was chosen; pacingReason: why, when the run chose it
 */
export function describeTarget ({ rate, sendRate, pacing = null, pacingReason = null }) {
  const missedByPercent = round(Math.max(0, (rate - sendRate) / rate * 100), 1)
  return { rate, sendRate, pacing, pacingReason, met: missedByPercent <= 1, missedByPercent }
}

/**
 * A ramp's stages with their latency: the messages due in each, summarized and encoded (a merge adds them).
 * @param {Array<{fromMs: number, toMs: number, fromRate: number, toRate: number, messages: number}>} stages
 * @param {import('hdr-histogram-js').Histogram[]|null} histograms one per stage, by due time; null: latency not kept
 *   per stage (fan-out), `replies` and `latencyMs` then null
 * @returns {object[]}
 */
export function describeStages (stages, histograms) {
  return stages.map((stage, i) => {
    const histogram = histograms?.[i]
    // Without histograms (fan-out: deliveries are timed by the subscribers), no figures per stage.
    const replies = histogram ? histogram.totalCount : null
    return {
      ...stage,
      replies,
      latencyMs: replies > 0 ? summarizeLatency(histogram) : null,
      histogram: histogram ? encodeHistogram(histogram) : null
    }
  })
}

/**
 * --reconnect in the report: how many came back, each one's time away (ms percentiles), the longest
 * outage until every connection was back, the messages lost at the drops, the most reopenings in
 * any 100 ms, sliding over 10 ms buckets (how hard the returning clients hit the server), the backoff that spread them,
 * and how late the attempts started against it (the client's own pace, when far beyond nothing).
 * @param {object|null|undefined} reconnects a run's (Reconnects#result), or a merged one
 * @returns {object}
 */
export function describeReconnects (reconnects) {
  if (!reconnects?.backoff) return { count: reconnects?.count ?? 0, gapMs: reconnects?.gapMs ?? 0 }
  return {
    count: reconnects.count,
    gapMs: reconnects.gapMs,
    backoff: reconnects.backoff,
    awayMs: msPercentiles(reconnects.histogram),
    allBackMs: reconnects.allBackMs,
    lost: reconnects.lost,
    peakPer100ms: busiestWindow(reconnects.buckets),
    lateMs: msPercentiles(reconnects.lateness),
    histogram: reconnects.histogram,
    buckets: reconnects.buckets,
    lateness: reconnects.lateness ?? null
  }
}

/** Reopenings are counted in buckets of the epoch this long; WINDOW_BUCKETS of them make the 100 ms window. */
export const BUCKET_MS = 10
export const WINDOW_BUCKETS = 100 / BUCKET_MS

/**
 * The most counted in any 100 ms: the largest sum of WINDOW_BUCKETS consecutive buckets, so a burst
 * straddling a bucket edge counts whole (fixed windows would split it).
 * @param {Record<string, number>} buckets bucket index of the epoch -> count (sparse)
 * @returns {number} 0 without any
 */
export function busiestWindow (buckets) {
  const sorted = Object.entries(buckets).map(([bucket, count]) => [Number(bucket), count]).sort((a, b) => a[0] - b[0])
  let peak = 0
  let inWindow = 0
  let oldest = 0
  for (const [bucket, count] of sorted) {
    inWindow += count
    while (sorted[oldest][0] <= bucket - WINDOW_BUCKETS) inWindow -= sorted[oldest++][1]
    peak = Math.max(peak, inWindow)
  }
  return peak
}

/** p50, p99 and max in ms of an encoded histogram of µs; null without one. */
function msPercentiles (encoded) {
  if (!encoded) return null
  const { p50, p99, max } = summarizeLatency(decodeHistogram(encoded))
  return { p50, p99, max }
}

/**
 * Connection times for the report: per step (tcp, tls, upgrade, total) the count and p50, p90, p99
 * and max in µs, with the histograms encoded for a merge; the failed attempts by cause.
 * @param {{histograms: Record<string, string|null>, failures: Record<string, number>}} connect
 * @returns {{opened: number, failures: Record<string, number>, steps: Record<string, object|null>, histograms: Record<string, string|null>}}
 */
export function describeConnect ({ histograms, failures }) {
  const steps = Object.fromEntries(Object.entries(histograms).map(([step, encoded]) => {
    if (!encoded) return [step, null]
    const histogram = decodeHistogram(encoded)
    const us = (percentile) => Math.min(histogram.maxValue, histogram.getValueAtPercentile(percentile))
    return [step, { count: histogram.totalCount, p50: us(50), p90: us(90), p99: us(99), max: histogram.maxValue }]
  }))
  return { opened: steps.total?.count ?? 0, failures: { ...failures }, steps, histograms: { ...histograms } }
}

/** How the load was sent, for the headline: connections and messages in flight, or fan-out's shape. */
function loadShape ({ connections, inflight, fanout, arrivals }) {
  if (arrivals) return `${int(arrivals.rate)} new connection(s)/s × ${int(arrivals.perConnection)} messages, ${inflight} in flight`
  if (!fanout) return `${connections} connection(s) × ${inflight} in flight`
  const publisher = fanout.role === 'subscriber' ? 'no publisher here' : 'one publisher'
  return `${int(fanout.subscribers)} subscriber(s), ${publisher}${fanout.role === 'both' ? '' : ` (role ${fanout.role})`}`
}

/** Whether a fan-out (if any) got every expected delivery once, intact, and is valid. */
function deliveredAll (fanout) {
  return !fanout || (fanout.lost === 0 && fanout.duplicates === 0 && fanout.errors === 0 && !fanout.invalid)
}

function describeFailedMessages ({ sent, errors, lost }, fanout, errorReplies) {
  const first = errorReplies[0] ? `; first error reply: ${errorReplies[0]}` : ''
  if (fanout?.invalid) return `invalid: ${fanout.invalid}`
  if (errors + lost === 0 && fanout) {
    // Lost while away is the usual loss; say what takes a subscriber away, the server's limit included.
    const away = fanout.lost > 0 && fanout.reconnects?.count > 0
      ? `; ${int(fanout.reconnects.count)} subscriber reconnects (a subscriber loses what comes while its link is down, ` +
        'or after the server drops it for falling behind past its --max-buffered)'
      : ''
    return `${fanout.lost} of ${fanout.expected} deliveries lost, ${fanout.duplicates} duplicated, ${fanout.errors} errors${away}${first}`
  }
  return `${errors + lost} of ${sent} messages failed (${errors} errors, ${lost} lost)${first}`
}

/** The fan-out lines of the human report: accounting, spread, bytes and CPU per delivery, reconnects. */
function fanoutLines (f) {
  const lines = [
    `fanout    ${int(f.subscribers)} subscribers  published ${f.published ?? '?'}  expected ${f.expected === null ? '?' : int(f.expected)}  ` +
      `delivered ${int(f.delivered)}  lost ${f.lost === null ? '?' : int(f.lost)}  duplicates ${int(f.duplicates)}  reordered ${int(f.reordered)}`
  ]
  if (f.subscribers === 0) return lines
  if (f.decoders < f.subscribers) {
    lines.push(`decoded   by ${int(f.decoders)} of the ${int(f.subscribers)} subscribers (--decode one); the others read the header only`)
  }
  lines.push(`spread    p50 ${ms(f.spreadMs.p50)}  p99 ${ms(f.spreadMs.p99)}  max ${ms(f.spreadMs.max)} (first to last delivery of one publish)`,
    `delivery  ${f.wire.perDelivery ?? 'n/a'} B read per delivery on the socket (the ${f.headerBytes} B header included), ` +
      `${f.cpuPerDeliveryUs ?? 'n/a'} µs CPU per delivery (this client process)`)
  const { pings, pingsPerDelivery, suspendedMs, closes } = f.liveness
  lines.push(`liveness  ${int(pings)} pings${pingsPerDelivery === null ? '' : ` (${pingsPerDelivery} per delivery)`}; ` +
    `judging waited ${ms(suspendedMs)} on this process's late loop; connections lost: link ${int(closes.link)}, ` +
    `server ${int(closes.server)}, this generator ${int(closes.generator)}${f.invalid ? ' (INVALID run)' : ''}`)
  if (f.reconnects.count > 0) {
    const { p50, p99, max } = f.reconnects.gapMs
    const recovered = f.recovered > 0 ? `; ${int(f.recovered)} deliveries recovered (replayed by the server on reconnect)` : ''
    lines.push(`reconnect ${int(f.reconnects.count)} subscriber reconnects; without a connection p50 ${ms(p50)}  p99 ${ms(p99)}  max ${ms(max)}${recovered}`)
  }
  return lines
}

/**
 * Renders a report for people: accounting, throughput, bytes on the socket, latency and a
 * compact text histogram.
 * @param {object} report from {@link buildReport}
 * @param {import('hdr-histogram-js').Histogram} histogram the same run's histogram, for the bands
 * @returns {string}
 */
export function formatReport (report, histogram) {
  const { messages: m, latencyMs: l, bytes: b } = report
  const target = report.target && (({ rate, sendRate, pacing, met, missedByPercent }) =>
    `target    ${int(rate)} msg/s, sent at ${int(sendRate)} msg/s: ${met ? 'met' : `MISSED by ${missedByPercent}%`}${pacing ? ` (${pacing} pacing)` : ''}`)(report.target)
  const lines = [
    `${report.format}${report.codecModule ? ` (${report.codecModule})` : ''} · test ${testLabel({ id: report.testId, name: report.test, file: report.payloadFile })} · ${report.direction} · ${loadShape(report)} · network: ${describeNetwork(report.network)}`,
    ...(report.network.reason ? [`shaping   ${report.network.reason}`] : []),
    `messages  sent ${int(m.sent)}  acked ${int(m.acked)}  errors ${int(m.errors)}  lost ${int(m.lost)}`,
    `elapsed   ${(report.durationMs / 1000).toFixed(2)} s  rate ${int(report.rate)} msg/s`,
    ...(target ? [target] : []),
    ...(report.target?.pacingReason ? [`pacing    ${report.target.pacing}: ${report.target.pacingReason}`] : []),
    `bytes     payload ${payloadSizeText(b)}${b.headerPerMessage ? ` + ${b.headerPerMessage} B fan-out header` : ''}  written ${size(b.written)}  read ${size(b.read)} (on the socket, frames included)`,
    ...(report.payload ? [`payload   ${describePayload(report.payload)}`] : []),
    ...(report.compression ? [compressionLine(report.compression)] : []),
    ...(report.tls ? [`tls       ${report.tls.version} ${report.tls.cipher} (bytes on the socket are the encrypted stream: TLS records included)`] : []),
    ...(report.arrivals ? [arrivalsLine(report.arrivals)] : []),
    ...(report.connect ? [connectLine(report.connect)] : []),
    ...(report.reconnects.count > 0 && report.reconnects.backoff ? [reconnectLine(report.reconnects)] : []),
    ...(report.fanout ? fanoutLines(report.fanout) : []),
    ...(report.cpu ? [cpuLine(report.cpu)] : []),
    ...(report.generator ? [generatorLine(report.generator, report.durationMs, report.fanout)] : []),
    ...(report.outputs ?? []).map(outputLine),
    ...(typeof report.outputsCpuUs === 'number' ? [streamingLine(report.outputsCpuUs, report.cpu)] : []),
    `${report.fanout ? 'latency   publish to delivery: ' : 'latency   '}min ${ms(l.min)}  mean ${ms(l.mean)}  stdev ${ms(l.stdev)}  p50 ${ms(l.p50)}  p90 ${ms(l.p90)}  p99 ${ms(l.p99)}  p99.9 ${ms(l.p999)}  max ${ms(l.max)}${report.target ? '  (from the schedule)' : ''}`,
    ...(report.sendLagMs ? [sendLagLine(report.sendLagMs)] : []),
    ...(report.stages ? report.stages.map(stageLine) : []),
    ...(report.uncorrectedLatencyMs ? [`uncorr.   p50 ${ms(report.uncorrectedLatencyMs.p50)}  p90 ${ms(report.uncorrectedLatencyMs.p90)}  p99 ${ms(report.uncorrectedLatencyMs.p99)}  p99.9 ${ms(report.uncorrectedLatencyMs.p999)}  max ${ms(report.uncorrectedLatencyMs.max)}  (from the actual send: hides stalls)`] : []),
    ...formatBands(latencyBands(histogram), histogram.totalCount)
  ]
  if (report.reconnects.count > 0) lines.push(`reconnect ${report.reconnects.count} time(s), ${report.reconnects.gapMs} ms without a connection`)
  if (report.lossy) lines.push(`LOSSY     the schema changed ${report.lossy.differences} value(s) of ${report.payloadFile}, first at ${report.lossy.examples[0]?.path}`)
  if (report.failure) lines.push(`FAILED    ${report.failure}`)
  return lines.join('\n') + '\n'
}

/**
 * What a run sent, in a few words: a stream of seeded messages, one message repeated (and why that
 * flatters), or a corpus.
 * @param {import('../payloads/catalog.js').PayloadKind} payload
 * @returns {string}
 */
export function describePayload ({ kind, messages, seed }) {
  if (kind === 'stream') return `stream of ${int(messages)} seeded messages (varying values, seed ${seed})`
  if (kind === 'corpus') return `corpus of ${int(messages)} messages, sent in turn`
  return 'one message repeated (flatters compression, caches and the JIT)'
}

/**
 * A network profile in a few words, e.g. `3g (up 768 kbit/s, down 1600 kbit/s, rtt 150 ms, proxy)`.
 * @param {object|null|undefined} network
 * @returns {string}
 */
export function describeNetwork (network) {
  if (!network || network.profile === 'none') return 'none (no shaping)'
  const backend = network.backend ? `, ${network.backend}` : ''
  return `${network.profile} (up ${network.up} kbit/s, down ${network.down} kbit/s, rtt ${network.rtt} ms${backend})`
}

function formatBands (bands, total) {
  if (bands.length === 0) return []
  const widest = Math.max(...bands.map((band) => band.count))
  return bands.map(({ fromUs, toUs, count }) => {
    const bar = '█'.repeat(Math.round(count / widest * BAR_WIDTH))
    const range = `${duration(fromUs)}–${duration(toUs)}`.padStart(17)
    return `${range} ${bar.padEnd(BAR_WIDTH)} ${(count / total * 100).toFixed(1).padStart(5)}%  ${int(count)}`
  })
}

function duration (us) {
  if (us < 1000) return `${us} µs`
  if (us < 1_000_000) return `${round(us / 1000, 3)} ms`
  return `${round(us / 1_000_000, 3)} s`
}

/**
 * How reports name a test: `3 medium`, just the name for tests without a number, and the file for
 * a user's payload: `custom (order.json)`.
 * @param {{id: number|null|undefined, name: string, file?: string}} test
 * @returns {string}
 */
export function testLabel ({ id, name, file }) {
  if (file) return `${name} (${file})`
  return id === null || id === undefined ? name : `${id} ${name}`
}
