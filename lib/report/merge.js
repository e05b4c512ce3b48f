// Combines reports of one test from several client processes, workers or machines into one:
// counts summed, HdrHistograms added exactly, the time span from the earliest start to the last reply.
import { UsageError } from '../errors.js'
import { addHistograms, encodeHistogram, summarizeLatency } from '../histogram.js'
import { buildReport } from './report.js'
import { mergeFanout } from './fanout.js'

/**
 * Merges reports (the `--json` shape) of the same format and test.
 * @param {object[]} reports at least one
 * @returns {object} one report, as if one client had done all the work; `mergedFrom` counts the parts
 * @throws {UsageError} when the reports measured different things
 */
export function mergeReports (reports) {
  checkMergeable(reports)
  const report = buildReport(mergeResults(reports), mergedContext(reports))
  return { ...report, mergedFrom: reports.length, windows: measuredWindows(reports), ...commonTags(reports) }
}

/** The parts' --tag labels (the run id among them) that every part has, with the same value. */
function commonTags (reports) {
  if (!reports.some((report) => report.tags)) return {}
  const [first, ...rest] = reports.map((report) => report.tags ?? {})
  const shared = Object.entries(first).filter(([key, value]) => rest.every((tags) => tags[key] === value))
  return { tags: Object.fromEntries(shared) }
}

/** Reports merge only when they measured the same thing: one format, test and direction, one kind of payload. */
function checkMergeable (reports) {
  if (reports.length === 0) throw new UsageError('nothing to merge')
  const [first] = reports
  for (const report of reports) {
    for (const key of ['format', 'test', 'direction']) {
      if (report[key] !== first[key]) throw new UsageError(`cannot merge a ${key} '${report[key]}' report with a '${first[key]}' one: merge runs of one format and test`)
    }
  }
  for (const report of reports) {
    if (report.payload?.kind !== first.payload?.kind) throw new UsageError(`cannot merge a run that sent a ${report.payload?.kind ?? 'unstated'} payload with one that sent a ${first.payload?.kind ?? 'unstated'} one`)
  }
}

const sumOf = (reports, pick) => reports.reduce((total, report) => total + pick(report), 0)

/**
 * The parts' measurements as one run's result (what buildReport reads): counts summed, histograms
 * added, the span from the earliest start to the last end.
 * @returns {import('../load/engine.js').LoadResult}
 */
function mergeResults (reports) {
  const [first] = reports
  const sum = (pick) => sumOf(reports, pick)
  const startedAt = Math.min(...reports.map((r) => r.startedAt))
  const endedAt = Math.max(...reports.map((r) => r.startedAt + r.durationMs))
  const stages = mergeStages(reports)
  return {
    messages: {
      sent: sum((r) => r.messages.sent),
      acked: sum((r) => r.messages.acked),
      errors: sum((r) => r.messages.errors),
      lost: sum((r) => r.messages.lost)
    },
    startedAt,
    durationMs: endedAt - startedAt,
    histogram: addHistograms(reports.map((r) => r.histogram)),
    uncorrectedHistogram: reports.every((r) => r.uncorrectedHistogram)
      ? addHistograms(reports.map((r) => r.uncorrectedHistogram))
      : null,
    sendLagHistogram: reports.every((r) => r.sendLagHistogram)
      ? addHistograms(reports.map((r) => r.sendLagHistogram))
      : null,
    bytes: {
      payloadPerMessage: first.bytes.payloadPerMessage,
      payloadSizes: first.bytes.payloadSizes,
      ...(first.bytes.headerPerMessage && { headerPerMessage: first.bytes.headerPerMessage }),
      written: sum((r) => r.bytes.written),
      read: sum((r) => r.bytes.read)
    },
    timeSeries: mergeTimeSeries(reports.flatMap((r) => r.timeSeries ?? [])),
    target: mergeTarget(reports, stages),
    stageHistograms: stages && reports.every((r) => r.stages.every((stage) => stage.histogram))
      ? first.stages.map((_, i) => addHistograms(reports.map((r) => r.stages[i].histogram)))
      : null,
    reconnects: mergeReconnects(reports.map((r) => r.reconnects)),
    compression: mergeCompression(reports.map((r) => r.compression)),
    tls: mergeTls(reports.map((r) => r.tls)),
    connect: mergeConnectTimes(reports.map((r) => r.connect)),
    arrivals: mergeArrivals(reports.map((r) => r.arrivals)),
    cpu: mergeCpu(reports),
    generator: mergeGenerator(reports),
    interrupted: reports.some((r) => r.interrupted),
    errorReplies: reports.flatMap((r) => r.errorReplies).slice(0, 5),
    // A part that failed for a reason of its own (not just failed messages) makes the whole fail for it.
    failure: reports.find((r) => r.failure && !/messages failed|deliveries lost/.test(r.failure))?.failure ?? null,
    fanout: first.fanout ? mergeFanout(reports.map((r) => r.fanout)) : undefined
  }
}

/**
 * The parts' open-loop targets as one: rates summed, with the ramp's stages when they ran one.
 * @param {{stages: object[]}|null} stages from mergeStages
 * @returns {object|null} null unless every part had a target rate
 */
function mergeTarget (reports, stages) {
  const targets = reports.map((r) => r.target).filter(Boolean)
  if (targets.length !== reports.length) return null
  const [first] = targets
  // A target's figure all parts share, else null (mixed pacings, or from before it was reported).
  const same = (pick) => targets.every((t) => pick(t) === pick(first)) ? pick(first) ?? null : null
  return {
    rate: sumOf(targets, (t) => t.rate),
    sendRate: Math.round(sumOf(targets, (t) => t.sendRate) * 10) / 10,
    pacing: same((t) => t.pacing),
    pacingReason: same((t) => t.pacingReason),
    ...stages
  }
}

/** What the parts ran, as one run: the first part's settings, with the connections of all of them. */
function mergedContext (reports) {
  const [first] = reports
  return {
    format: first.format,
    codecModule: first.codecModule ?? null,
    test: { name: first.test, id: first.testId, custom: first.payloadFile !== undefined, file: first.payloadFile, inferred: first.schema === 'inferred', typeName: first.schema },
    url: first.url,
    connections: first.fanout ? sumOf(reports, (r) => r.fanout.subscribers) : sumOf(reports, (r) => r.connections),
    inflight: first.inflight,
    warmup: first.warmup,
    direction: first.direction,
    network: first.network,
    lossy: first.lossy,
    payload: first.payload,
    role: first.fanout ? [...new Set(reports.map((r) => r.fanout.role))].join('+') : undefined
  }
}

/** Adds up per-second entries that share an epoch second, whichever part they came from. */
function mergeTimeSeries (entries) {
  const bySecond = new Map()
  for (const entry of entries) {
    if (!bySecond.has(entry.t)) bySecond.set(entry.t, { t: entry.t, acked: 0, errors: 0, parts: [] })
    const slot = bySecond.get(entry.t)
    slot.acked += entry.acked
    slot.errors += entry.errors
    slot.parts.push(entry.histogram)
  }
  return [...bySecond.values()].sort((a, b) => a.t - b.t).map(({ t, acked, errors, parts }) => {
    const histogram = addHistograms(parts)
    const { p50, p99 } = summarizeLatency(histogram)
    return { t, acked, errors, p50, p99, histogram: parts.length === 1 ? parts[0] : encodeHistogram(histogram) }
  })
}

/**
 * How the parts' measured phases line up: the spread of their starts and how long all of them
 * were measuring at once. Parts that never overlap did not load the server together.
 * @param {object[]} reports
 * @returns {{startSpreadMs: number, overlapMs: number, overlapping: boolean}}
 */
function measuredWindows (reports) {
  const starts = reports.map((r) => r.startedAt)
  const ends = reports.map((r) => r.startedAt + r.durationMs)
  const overlapMs = Math.round(Math.min(...ends) - Math.max(...starts))
  const startSpreadMs = Math.max(...starts) - Math.min(...starts)
  return { startSpreadMs, overlapMs: Math.max(0, overlapMs), overlapping: overlapMs > 0 }
}

/**
 * The parts' ramps as one, when every part ran the same stages (workers, hosts with one --stages):
 * their rates and messages summed, stage by stage.
 * @returns {{stages: object[]}|null} null when a part had none, or other stages
 */
function mergeStages (reports) {
  const [first] = reports
  const span = (stages) => stages?.map(({ fromMs, toMs }) => `${fromMs}-${toMs}`).join()
  if (!first.stages || reports.some((r) => span(r.stages) !== span(first.stages))) return null
  const sum = (i, key) => Math.round(reports.reduce((total, r) => total + r.stages[i][key], 0) * 10) / 10
  return {
    stages: first.stages.map(({ fromMs, toMs }, i) => ({
      fromMs, toMs, fromRate: sum(i, 'fromRate'), toRate: sum(i, 'toRate'), messages: sum(i, 'messages')
    }))
  }
}

/**
 * Several parts' arrivals as one (workers, hosts): their rates and counts summed.
 * @param {Array<object|null|undefined>} parts each report's `arrivals`
 * @returns {object|null} null unless every part ran arrivals
 */
export function mergeArrivals (parts) {
  if (!parts.every(Boolean)) return null
  const sum = (key) => parts.reduce((total, part) => total + part[key], 0)
  const counts = ['planned', 'launched', 'opened', 'failed', 'completed', 'dropped']
  return {
    rate: Math.round(sum('rate') * 10) / 10,
    perConnection: parts[0].perConnection,
    messageRate: parts[0].messageRate ?? null,
    ...Object.fromEntries(counts.map((key) => [key, sum(key)]))
  }
}

/**
 * Several parts' reconnects as one: counts, time away and losses summed, histograms (time away,
 * attempts' lateness) added, the reopenings per 10 ms bucket summed bucket by bucket (the parts'
 * clocks agreeing; the busiest 100 ms is then slid over the sums), the longest outage.
 * @param {Array<object|undefined>} parts each report's `reconnects`
 * @returns {object}
 */
export function mergeReconnects (parts) {
  const sum = (key) => parts.reduce((total, part) => total + (part?.[key] ?? 0), 0)
  const detailed = parts.filter((part) => part?.backoff)
  if (detailed.length === 0) return { count: sum('count'), gapMs: sum('gapMs') }
  // Reports written before reopenings were counted per 10 ms had them per fixed 100 ms (windows): those cannot slide.
  if (detailed.some((part) => !part.buckets)) throw new UsageError('cannot merge a report of --reconnect written by an older version (reopenings per fixed 100 ms): run its client again')
  const buckets = addCounts(detailed.map((part) => part.buckets))
  const added = (key) => {
    const histograms = detailed.map((part) => part[key]).filter(Boolean)
    return histograms.length ? encodeHistogram(addHistograms(histograms)) : null
  }
  return {
    count: sum('count'),
    gapMs: sum('gapMs'),
    backoff: detailed[0].backoff,
    allBackMs: Math.max(...detailed.map((part) => part.allBackMs)),
    lost: sum('lost'),
    histogram: added('histogram'),
    buckets,
    lateness: added('lateness')
  }
}

/**
 * Several parts' connection times as one: each step's histograms added, failures summed by cause.
 * @param {Array<{histograms: Record<string, string|null>, failures: Record<string, number>}|null|undefined>} parts
 *   each part's (a report's `connect`, or a run's result)
 * @returns {{histograms: Record<string, string|null>, failures: Record<string, number>}|null} null when no part has any
 */
export function mergeConnectTimes (parts) {
  const present = parts.filter(Boolean)
  if (present.length === 0) return null
  const steps = [...new Set(present.flatMap(({ histograms }) => Object.keys(histograms)))]
  return {
    histograms: Object.fromEntries(steps.map((step) => {
      const encoded = present.map(({ histograms }) => histograms[step]).filter(Boolean)
      return [step, encoded.length ? encodeHistogram(addHistograms(encoded)) : null]
    })),
    failures: addCounts(present.map((part) => part.failures))
  }
}

/** Counts by key, added key by key: {refused: 2} and {refused: 1, timeout: 1} make {refused: 3, timeout: 1}. */
function addCounts (parts) {
  const total = {}
  for (const part of parts) for (const [key, count] of Object.entries(part)) total[key] = (total[key] ?? 0) + count
  return total
}

/**
 * Several parts' TLS as one: what they all negotiated, `mixed` where they differ (plain parts included).
 * @param {Array<{version: string, cipher: string}|null|undefined>} parts
 * @returns {{version: string, cipher: string}|null} null when no part used TLS
 */
export function mergeTls (parts) {
  if (parts.every((part) => !part)) return null
  const same = (key) => parts.every((part) => part?.[key] === parts[0]?.[key]) ? parts[0][key] : 'mixed'
  return { version: same('version'), cipher: same('cipher') }
}

/**
 * Several parts' compression as one: permessage-deflate taken only if every part that offered it got it.
 * @param {Array<{accepted: boolean}|null|undefined>} parts each part's (null: not offered)
 * @returns {{accepted: boolean}|null}
 */
export function mergeCompression (parts) {
  const offered = parts.filter(Boolean)
  return offered.length ? { accepted: offered.every(({ accepted }) => accepted) } : null
}

/**
 * The parts' generators as one: the busiest figures of any part (each part's event loop is its own;
 * threads of one process share its CPU figure), so a saturated part marks the whole.
 * @returns {{cpuShare: number, loopBusy: number, loopDelayMs: {p99: number, max: number}}|null}
 */
function mergeGenerator (reports) {
  if (!reports.every((r) => r.generator)) return null
  return busiestGenerator(reports.map((r) => r.generator))
}

/**
 * Several generators' figures as one: the busiest of each (a saturated part marks the whole).
 * @param {Array<{cpuShare: number, loopBusy: number, loopDelayMs: {p99: number, max: number}}>} generators at least one
 * @returns {{cpuShare: number, loopBusy: number, loopDelayMs: {p99: number, max: number}}}
 */
export function busiestGenerator (generators) {
  const most = (figure) => Math.max(...generators.map(figure))
  return {
    cpuShare: most((g) => g.cpuShare),
    loopBusy: most((g) => g.loopBusy),
    loopDelayMs: { p99: most((g) => g.loopDelayMs.p99), max: most((g) => g.loopDelayMs.max) }
  }
}

/**
 * CPU of the parts: processes add up; threads of one process (--workers) each measured the whole
 * process over nearly the same span, so that process counts once, with its largest figures. Each
 * thread paced its own loop, so pacing adds up over the threads of a process too.
 * @param {object[]} reports
 * @returns {{userUs: number, systemUs: number, pacingUs: number, process: string}|null} null when a part has no CPU figure
 */
function mergeCpu (reports) {
  if (!reports.every((r) => r.cpu)) return null
  const byProcess = new Map()
  for (const { cpu } of reports) {
    const key = cpu.process ?? Symbol('a process without a name')
    const seen = byProcess.get(key)
    const pacingUs = (seen?.pacingUs ?? 0) + (cpu.pacingUs ?? 0)
    const largest = !seen || cpu.userUs + cpu.systemUs > seen.userUs + seen.systemUs ? cpu : seen
    byProcess.set(key, { ...largest, pacingUs })
  }
  const parts = [...byProcess.values()]
  const total = (figure) => parts.reduce((sum, cpu) => sum + cpu[figure], 0)
  return {
    userUs: total('userUs'),
    systemUs: total('systemUs'),
    pacingUs: total('pacingUs'),
    process: parts.length === 1 ? parts[0].process : `${parts.length} processes`
  }
}
