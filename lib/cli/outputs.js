// --out, --out-interval, --out-histograms and --tag: where a run's report and its live metrics go
// (a file; Prometheus remote write; OTLP), shared by the clients, merge and compare, and the
// streaming they start (lib/outputs).
import os from 'node:os'
import { randomBytes } from 'node:crypto'
import { UsageError } from '../errors.js'
import { duration } from './parser.js'
import { RUN_LABELS } from '../outputs/metrics.js'

/** The kinds --out takes as KIND=TARGET: the report's file (as a value with no kind), or a stream of metrics. */
const FILE_KIND = 'json'
const STREAM_KINDS = ['prometheus-rw', 'otlp']

/**
 * The options, as yargs takes them.
 * @param {{report: string, when: string, runId: string, interval?: boolean, alias?: string}} command where its
 *   report goes, when its streams push, where its run id comes from, whether it streams as it goes
 *   (--out-interval), --out's short name
 * @returns {object}
 */
export function outOptions ({ report, when, runId, interval = true, alias }) {
  return {
    out: {
      ...(alias && { alias }),
      describe: `where the results go, repeatable: ${report}; prometheus-rw=URL streams the ` +
        'metrics by Prometheus remote write (e.g. http://prometheus:9090/api/v1/write), otlp=URL by OTLP over HTTP ' +
        `(e.g. http://collector:4318/v1/metrics), ${when}; BENCH_OUT adds its values, space-separated`,
      type: 'array',
      string: true,
      default: []
    },
    ...(interval && { 'out-interval': { describe: 'how often --out streams the metrics', default: '5s', type: 'string' } }),
    'out-histograms': {
      describe: 'how --out streams latency: buckets (classic, fixed bounds: any Prometheus), or native (Prometheus native ' +
        'histograms, OTLP exponential ones: a Prometheus started with native histograms on)',
      choices: ['buckets', 'native'],
      default: 'buckets'
    },
    tag: { describe: `label every streamed series key=value, repeatable; testid=<id> is the run id (default: ${runId})`, type: 'array', string: true, default: [] }
  }
}

/**
 * @typedef {object} Outputs what --out and its companions ask for, checked
 * @property {string|undefined} file where the JSON report goes
 * @property {import('../outputs/stream.js').StreamTarget[]} streams
 * @property {number|undefined} intervalMs undefined where the streams push once, at the end (merge)
 * @property {boolean} native
 * @property {Record<string, string>} tags the run id (testid) among them
 */

/**
 * --out, --out-interval, --out-histograms and --tag, checked: one line for a kind not known, a URL
 * that does not parse, a tag that is not key=value.
 * @param {{out: string[], outInterval: string, outHistograms: string, tag: string[]}} args as yargs read them
 * @param {{startAt?: number, runId?: boolean}} [run] --start-at, whose instant is the default run id; runId:
 *   false where the run id comes from elsewhere (merge: the parts')
 * @returns {Outputs}
 */
export function parseOutputs (args, { startAt, runId = true } = {}) {
  const files = []
  const streams = []
  // BENCH_OUT: what a manifest adds where it has a value (deploy/kubernetes: an optional remote-write URL).
  for (const value of [...args.out, ...(process.env.BENCH_OUT ?? '').split(/\s+/).filter(Boolean)]) {
    const kind = /^([a-z][a-z0-9-]*)=/.exec(value)?.[1]
    if (kind === undefined) files.push(value)
    else if (kind === FILE_KIND) files.push(value.slice(kind.length + 1))
    else if (STREAM_KINDS.includes(kind)) streams.push({ kind, url: streamUrl(kind, value.slice(kind.length + 1)) })
    else throw new UsageError(`--out ${value}: no output kind '${kind}'; give a file (or json=FILE), ${STREAM_KINDS.map((k) => `${k}=URL`).join(' or ')}`)
  }
  if (files.length > 1) throw new UsageError(`--out: one report file, not ${files.length} (${files.join(', ')})`)
  // merge pushes once, at the end: it has no --out-interval.
  const intervalMs = args.outInterval === undefined ? undefined : duration('out-interval', args.outInterval)
  if (intervalMs < 100) throw new UsageError(`--out-interval ${args.outInterval}: at least 100ms`)
  const tags = parseTags(args.tag)
  if (runId) tags.testid ??= defaultRunId(startAt)
  return { file: files[0], streams, intervalMs, native: args.outHistograms === 'native', tags }
}

function streamUrl (kind, text) {
  let url
  try {
    url = new URL(text)
  } catch {
    throw new UsageError(`--out ${kind}=${text}: not a URL; give http://host:port/path`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--out ${kind}=${text}: give an http:// or https:// URL`)
  return url
}

/**
 * --tag key=value, each key a Prometheus label name that --out does not set itself.
 * @param {string[]} tags
 * @returns {Record<string, string>}
 */
export function parseTags (tags) {
  const parsed = {}
  for (const tag of tags) {
    const match = /^([a-zA-Z_][a-zA-Z0-9_]*)=(.+)$/.exec(tag)
    if (!match) throw new UsageError(`--tag ${tag}: give key=value, the key letters, digits and _ (not first a digit)`)
    const [, key, value] = match
    if (key.startsWith('__') || RUN_LABELS.includes(key)) throw new UsageError(`--tag ${tag}: '${key}' is a label of its own (${RUN_LABELS.join(', ')}; none may start with __)`)
    if (key in parsed) throw new UsageError(`--tag ${key} given twice ('${parsed[key]}', '${value}')`)
    parsed[key] = value
  }
  return parsed
}

/**
 * The run id (testid) where --tag gives none: --start-at's instant, which every host of a run has, or else a random id.
 * @param {number} [startAt] epoch ms
 * @returns {string}
 */
export function defaultRunId (startAt) {
  return startAt ? new Date(startAt).toISOString() : randomBytes(4).toString('hex')
}

/**
 * compare's --out streams: its results pushed once, at the end, one run for each format, test and
 * network (its trials added up: their counts, histograms and CPU), labelled with the network's
 * profile and this process.
 * @param {Outputs} outputs
 * @param {{reports: object[]}} results compare's
 * @returns {Promise<import('../outputs/stream.js').OutputSummary[]>}
 */
export async function pushComparison (outputs, { reports }) {
  const [{ addFigures, figuresOfReport }, { MetricStream }, { runLabels }] = await Promise.all([
    import('../outputs/figures.js'), import('../outputs/stream.js'), import('../outputs/metrics.js')
  ])
  const trials = new Map()
  for (const report of reports) {
    const key = `${report.label} ${report.test} ${report.network.profile}`
    trials.set(key, [...(trials.get(key) ?? []), report])
  }
  const host = os.hostname()
  const where = { host, instance: `${host}:${process.pid}` }
  const runs = [...trials.values()].map((parts) => {
    const [{ label, test, direction, network }] = parts
    const figures = addFigures(parts.map(figuresOfReport))
    // Trials ran one after another: their CPU adds up (addFigures takes one process's at once).
    figures.cpuUs = parts.reduce((sum, { cpu }) => sum + (cpu ? cpu.userUs + cpu.systemUs : 0), 0)
    const tags = { network: network.profile, ...outputs.tags }
    return { labels: runLabels({ format: label, test, direction }, tags, where), figures }
  })
  const stream = new MetricStream(outputs.streams, { native: outputs.native, warn: (line) => process.stderr.write(`${line}\n`) })
  return stream.finish(runs)
}

/**
 * Starts streaming a run's metrics when --out asks for it: the run's parts join `live`, a timer
 * pushes what they have measured so far; finish() makes the last push, from the report.
 * @param {Outputs} outputs
 * @param {{format: string, test: string, direction?: string}} run what the series' labels name
 * @param {{host: string, instance: string}|null} [merged] a merge's report, which no one process measured: pushed
 *   once, at the end, under these labels; null: this process's run, streamed as it goes
 * @returns {Promise<{live: import('../outputs/figures.js').LiveFigures|undefined, finish: (report: object) => Promise<object>, stop: () => void}>}
 *   finish resolves to the report with `tags` and, when streaming, `outputs` (each backend's pushes and failures)
 *   and `outputsCpuUs` (what every push cost this process, all told; null where the kernel does not say)
 */
export async function openStream (outputs, run, merged = null) {
  const tagged = (report) => ({ ...report, tags: outputs.tags })
  if (outputs.streams.length === 0) return { live: undefined, finish: async (report) => tagged(report), stop () {} }
  const [{ LiveFigures, figuresOfReport }, { MetricStream }, { runLabels }] = await Promise.all([
    import('../outputs/figures.js'), import('../outputs/stream.js'), import('../outputs/metrics.js')
  ])
  const live = new LiveFigures()
  const host = os.hostname()
  const stream = new MetricStream(outputs.streams, {
    intervalMs: outputs.intervalMs,
    labels: runLabels(run, outputs.tags, merged ?? { host, instance: `${host}:${process.pid}` }),
    native: outputs.native,
    warn: (line) => process.stderr.write(`${line}\n`)
  })
  if (!merged) {
    await stream.open()
    stream.start(() => live.read())
    // The first push (nothing measured yet) done before the run: its one-time costs (fetch's first
    // request, the encoders' first pass) stay out of the measured phase, a backend that is not there
    // is said before it starts.
    await stream.pushing
  }
  return {
    live,
    finish: async (report) => {
      const summaries = await stream.finish(figuresOfReport(report))
      const outputsCpuUs = stream.cpuUs === null ? null : Math.round(stream.cpuUs)
      return { ...tagged(report), outputs: summaries, outputsCpuUs }
    },
    stop: () => stream.stop()
  }
}
