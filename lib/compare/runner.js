import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import { cpuPinning, runNodeScript, startServerProcess } from '../processes.js'
import {
  DEFAULT_BUDGET_MS, DEFAULT_BYTES_PER_RUN, DEFAULT_FORMATS, DEFAULT_MESSAGES, DEFAULT_WARMUP, FANOUT_TRIAL_SECONDS,
  MAX_BYTES_PER_FORMAT
} from '../defaults.js'
import { UsageError } from '../errors.js'
import { METRICS_PATH } from '../protocol.js'
import { loadMessages, resolveTest } from '../payloads/catalog.js'
import { testLabel } from '../report/report.js'
import { buildComparisonResults, formatComparisonMarkdown, metricValues } from './results.js'
import { DEFAULT_EQUIVALENCE } from './statistics.js'
import { PLANNED_PAIRS, runSequential } from './sequential.js'
import { renderHtmlReport } from './html.js'
import { loadCustomTest } from '../payloads/custom.js'
import { stringifyJsonExact } from '../schema/json-exact.js'

/**
 * Runs one load client as a child process, exactly as a user would (client_json.js,
 * client_protobuf.js, or client.js --format for the others), and returns its `--json` report. A
 * client that fails still prints its partial report; that report is returned as is.
 * @param {string} format a format's name
 * @param {string[]} args arguments after the script name (test, messages, options)
 * @param {string} [cpus] the CPUs to run it on (taskset's list)
 * @returns {Promise<object>} the parsed report
 */
export async function runClientProcess (format, args, cpus) {
  const [script, ...formatArgs] = DEFAULT_FORMATS.includes(format) ? [`client_${format}.js`] : ['client.js', '--format', format]
  const { code, stdout, stderr } = await runNodeScript(script, [...formatArgs, ...args, '--json'], { cpus })
  try {
    return JSON.parse(stdout)
  } catch {
    throw new Error(`${[script, ...formatArgs].join(' ')} exited with ${code}: ${stderr.trim() || 'no report'}`)
  }
}

/**
 * Message and warmup counts for one payload: what the user asked for, or the defaults capped so a
 * run sends at most DEFAULT_BYTES_PER_RUN of JSON (at least 10 messages); for fan-out, publishes
 * over FANOUT_TRIAL_SECONDS at the rate.
 * @param {number} jsonBytes the payload's size as JSON
 * @param {{messages?: number, warmup?: number, rate?: number}} asked undefined where the user gave
 *   nothing; rate: fan-out's publishes per second
 * @returns {{messages: number, warmup: number}}
 */
export function runLength (jsonBytes, asked) {
  const fitting = Math.floor(DEFAULT_BYTES_PER_RUN / jsonBytes)
  const planned = asked.rate
    ? Math.ceil(asked.rate * FANOUT_TRIAL_SECONDS)
    : Math.max(10, Math.min(DEFAULT_MESSAGES, fitting))
  const messages = asked.messages ?? planned
  const warmup = asked.warmup ?? Math.min(DEFAULT_WARMUP, Math.ceil(messages / 10))
  return { messages, warmup }
}

/**
 * What one client run is given to name its payload, and how big it is as JSON.
 * @param {string[]} tests built-in tests
 * @param {{payload: string, proto?: string, type?: string}|null} custom a user's payload instead
 * @param {boolean} allowLossy
 * @param {boolean} repeat one message over and over instead of each test's stream
 * @returns {Promise<Array<{label: string, testName: string, args: string[], jsonBytes: number}>>}
 */
async function payloadsToRun (tests, custom, allowLossy, repeat) {
  if (custom) {
    // Loaded here too so a broken file or schema fails once, before the server starts.
    const test = await loadCustomTest(custom)
    const args = ['--payload', custom.payload, ...(custom.proto ? ['--proto', custom.proto, '--type', custom.type] : []), ...(allowLossy ? ['--allow-lossy'] : [])]
    // A corpus: its mean message size decides the run length, as one document's size does.
    const total = test.messages.reduce((sum, message) => sum + Buffer.byteLength(stringifyJsonExact(message)), 0)
    const jsonBytes = total / test.messages.length
    return [{ label: testLabel(test), testName: test.name, args, jsonBytes }]
  }
  return tests.map(resolveTest).map((test) => ({
    label: testLabel(test),
    testName: test.name,
    args: [test.name],
    jsonBytes: meanJsonBytes(loadMessages(test, { repeat }).messages)
  }))
}

/** The mean size of messages as JSON, which decides a run's length. */
function meanJsonBytes (messages) {
  return messages.reduce((sum, message) => sum + Buffer.byteLength(JSON.stringify(message)), 0) / messages.length
}

/**
 * Labels for the formats' columns: a format named twice (an A/A run) gets `#2` on its second column.
 * @param {string[]} formats
 * @returns {string[]}
 */
export function formatLabels (formats) {
  const seen = new Map()
  return formats.map((format) => {
    const count = (seen.get(format) ?? 0) + 1
    seen.set(format, count)
    return count === 1 ? format : `${format}#${count}`
  })
}

/**
 * Reads the server's CPU seconds, resident memory, and messages and fan-out deliveries from its
 * /metrics, for one format and test.
 * @param {string} url the server's /metrics URL
 * @param {string} format
 * @param {string} test
 * @returns {Promise<{cpuSeconds: number, rssBytes: number, messages: number, deliveries: number}>}
 * @throws {Error} with one line when the endpoint cannot be read or lacks the counters
 */
export async function scrapeServer (url, format, test) {
  const response = await fetch(url)
  if (!response.ok) throw new Error(`${url} answered ${response.status}`)
  const families = parsePrometheusTextFormat(await response.text())
  const sample = (name, labels = {}) => families.find((family) => family.name === name)?.metrics
    .find((metric) => Object.entries(labels).every(([key, value]) => metric.labels?.[key] === value))
  const cpu = sample('process_cpu_seconds_total')
  if (!cpu) throw new Error(`${url} has no process_cpu_seconds_total`)
  return {
    cpuSeconds: Number(cpu.value),
    rssBytes: Number(sample('process_resident_memory_bytes')?.value ?? 0),
    messages: Number(sample('wsbench_messages_total', { format, test })?.value ?? 0),
    deliveries: Number(sample('wsbench_fanout_deliveries_total', { format, test })?.value ?? 0)
  }
}

/**
 * Runs every selected test (or the user's payload) on every network profile in every format
 * against a server of its own (`node server.js`, so its CPU counts only the server's work),
 * reading the server's /metrics around each client run: per test and profile one unrecorded
 * warm-up run of each format, then trial pairs in balanced order, a fixed number (`trials`) or
 * adaptively until every cell is decided or the budget is spent (see runSequential). Assembles the
 * results document (rows with every trial, ratios, intervals and calls, and every report with its
 * histogram).
 * @param {object} options
 * @param {string[]} [options.formats] in column order; ratios are against the first; one named twice is an A/A run
 * @param {string[]} options.tests test numbers or names
 * @param {{payload: string, proto?: string, type?: string}|null} [options.custom] a user's payload instead of tests
 * @param {boolean} [options.allowLossy] run a custom payload even if its schema changes values
 * @param {string[]} [options.codecModules] codec modules a user wrote, handed to the server and every client
 * @param {string[]} options.profiles network profiles ('none' for no shaping)
 * @param {boolean} options.compress permessage-deflate on both ends
 * @param {boolean} [options.repeat] send each test's one message over and over instead of its stream
 * @param {string} [options.direction] up (default), down or echo
 * @param {number} [options.trials] a fixed number of trial pairs per test and profile; without it, adaptive
 * @param {number} [options.budgetMs] adaptive runs stop starting pairs that would end later than this after the start;
 *   when not given, DEFAULT_BUDGET_MS, stretched to two pairs of every test if it cannot fit them
 * @param {number} [options.margin] the equivalence margin, a fraction of 1
 * @param {boolean} [options.pin] server and clients on CPUs of their own, where the machine allows (taskset)
 * @param {number} [options.messages] per trial; default: see {@link runLength}
 * @param {number} [options.warmup] per trial; default: see {@link runLength}
 * @param {number} options.inflight
 * @param {number} [options.rate] fan-out's publishes per second (only fan-out has one)
 * @param {number} options.connections per client; fan-out: subscribers
 * @param {(line: string) => void} options.progress told before each run, and of anything left out
 * @returns {Promise<import('./results.js').ComparisonResults>}
 * @throws {UsageError} when the trials would send more JSON than makes sense (MAX_BYTES_PER_FORMAT), or the budget is too short
 */
export async function compareFormats ({
  formats = DEFAULT_FORMATS, tests, custom = null, allowLossy = false, codecModules = [], profiles, compress, repeat = false, direction = 'up',
  trials, budgetMs, margin = DEFAULT_EQUIVALENCE, pin = true,
  messages, warmup, inflight, rate, connections, progress
}) {
  const startedAt = performance.now()
  const payloads = await payloadsToRun(tests, custom, allowLossy, repeat)
  const most = trials ?? PLANNED_PAIRS
  for (const payload of payloads) {
    payload.length = runLength(payload.jsonBytes, { messages, warmup, rate })
    const bytes = (most + 1) * (payload.length.messages + payload.length.warmup) * payload.jsonBytes
    if (bytes > MAX_BYTES_PER_FORMAT) {
      throw new UsageError(`${trials ? `--trials ${trials}` : `${most} trial pairs`} would send ${(bytes / 1e9).toFixed(1)} GB of JSON per format for ${payload.label} ` +
        `(at most ${MAX_BYTES_PER_FORMAT / 2 ** 30} GiB): use fewer --trials or fewer messages (-n)`)
    }
  }
  const labels = formatLabels(formats)
  const cpus = pin ? cpuPinning() : null
  const modules = codecModules.flatMap((file) => ['--codec-module', file])
  const server = await startServerProcess([...(compress ? ['--compress'] : []), ...modules], { cpus: cpus?.server })
  const metricsUrl = `${server.url.replace(/^ws/, 'http')}${METRICS_PATH}`
  const reports = []
  const order = []
  let metricsProblem = null
  const scrape = async (format, test) => {
    if (metricsProblem) return null
    try {
      return await scrapeServer(metricsUrl, format, test)
    } catch (err) {
      metricsProblem = err.message.split('\n')[0]
      progress(`note: server CPU per message left out: ${metricsProblem}`)
      return null
    }
  }
  const rows = payloads.flatMap((payload) => profiles.map((profile) => ({ key: `${payload.testName}\n${profile}`, label: payload.label, payload, profile })))
  const runTrial = async ({ payload: { label, testName, args, length }, profile }, index, pair) => {
    const format = formats[index]
    progress(`test ${label}, network ${profile}, ${pair === null ? 'warm-up' : `pair ${pair}`}: ${labels[index]}, ${length.messages} messages`)
    const before = await scrape(format, testName)
    const report = await runClientProcess(format, [
      ...args, String(length.messages), '--url', server.url, '--throttle', profile,
      ...(direction === 'fanout' ? ['--rate', String(rate)] : ['--inflight', String(inflight)]),
      '--connections', String(connections), '--warmup', String(length.warmup), '--direction', direction,
      ...(compress ? ['--compress'] : []), ...(repeat ? ['--repeat'] : []), ...modules
    ], cpus?.clients)
    const after = before && await scrape(format, testName)
    const cost = after ? serverCost(before, after, direction === 'fanout' ? 'deliveries' : 'messages') : null
    const recorded = { ...report, label: labels[index], trial: pair, server: cost }
    if (pair !== null) {
      reports.push(recorded)
      order.push({ test: label, profile, format: labels[index], trial: pair })
    }
    return metricValues(recorded)
  }
  let sequence
  try {
    const now = () => performance.now()
    sequence = await runSequential({
      rows,
      formats: formats.length,
      trials,
      budgetMs: budgetMs ?? DEFAULT_BUDGET_MS,
      budgetGiven: budgetMs !== undefined,
      margin,
      runTrial,
      now
    })
    if (budgetMs === undefined && sequence.budgetMs > DEFAULT_BUDGET_MS) {
      progress(`note: the default budget (${DEFAULT_BUDGET_MS / 1000} s) fits fewer than two trial pairs of every test here; ` +
        `stretched to ${Math.round(sequence.budgetMs / 1000)} s (--budget sets it, --tests picks fewer)`)
    }
  } finally {
    await server.stop()
  }
  const machine = {
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown CPU',
    cores: os.availableParallelism(),
    node: process.versions.node,
    platform: `${os.type()} ${os.release()}`
  }
  return buildComparisonResults(reports, labels, machine, {
    profiles,
    compress,
    repeat,
    direction,
    inflight,
    rate,
    connections,
    trials: trials ?? null,
    budgetMs: sequence.budgetMs,
    budgetAsked: budgetMs ?? null,
    design: sequence.design,
    stops: sequence.stops,
    pinning: cpus ? `server on CPU ${cpus.server}, clients on CPU ${cpus.clients}` : pin ? 'not possible here (fewer than 2 CPUs, or no taskset)' : 'off (--no-pin)',
    order,
    elapsedMs: Math.round(performance.now() - startedAt),
    serverMetrics: metricsProblem ? `left out: ${metricsProblem}` : `read from ${METRICS_PATH} around each client run`,
    runs: Object.fromEntries(payloads.map(({ label, length }) => [label, length]))
  })
}

/**
 * The server's CPU per message (fan-out: per delivery) between two scrapes around one client run
 * (warm-up included, on both sides of the division), and its resident memory after it.
 * @param {object} before scrapeServer's
 * @param {object} after
 * @param {'messages'|'deliveries'} per what the CPU is divided by
 * @returns {{cpuUs: number, messages: number, perMessageUs: number|null, rssBytes: number}}
 */
function serverCost (before, after, per) {
  const cpuUs = Math.round((after.cpuSeconds - before.cpuSeconds) * 1e6)
  const messages = after[per] - before[per]
  const perMessageUs = messages > 0 ? Math.round(cpuUs / messages * 100) / 100 : null
  return { cpuUs, messages, perMessageUs, rssBytes: after.rssBytes }
}

/**
 * Writes the results as `results.json`, `results.md` and `report.html` into a directory.
 * @param {string} directory created if missing
 * @param {import('./results.js').ComparisonResults} results
 * @returns {Promise<string[]>} the paths written
 */
export async function writeComparison (directory, results) {
  await fs.mkdir(directory, { recursive: true })
  const files = [
    ['results.json', `${JSON.stringify(results, null, 2)}\n`],
    ['results.md', formatComparisonMarkdown(results)],
    ['report.html', renderHtmlReport(results)]
  ]
  return Promise.all(files.map(async ([name, text]) => {
    const file = path.join(directory, name)
    await fs.writeFile(file, text)
    return file
  }))
}
