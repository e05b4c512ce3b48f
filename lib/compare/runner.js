import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { cpuPinning } from '../processes.js'
import { DEFAULT_BUDGET_MS, DEFAULT_FORMATS, DEFAULT_HEARTBEAT_MS } from '../defaults.js'
import { resolveTest } from '../payloads/catalog.js'
import { testLabel } from '../report/report.js'
import { COMPARE_METHOD, buildComparisonResults, formatComparisonMarkdown } from './results.js'
import { provenanceOf } from '../provenance.js'
import { DEFAULT_EQUIVALENCE } from './statistics.js'
import { OWN_SERVERS_BYTES, START_WARMUP_MS, runLockstep } from './lockstep.js'
import { calibrationLines, calibrationOf } from './calibration.js'
import { renderHtmlReport } from './html.js'
import { loadCustomTest } from '../payloads/custom.js'
import { lossyRefusal, prepareRun } from '../load/measure.js'
import { UsageError, oneLine } from '../errors.js'

/**
 * The rows of a comparison: each test (or the user's payload) on each network profile.
 * @param {string[]} tests built-in tests
 * @param {{payload: string, proto?: string, type?: string}|null} custom a user's payload instead
 * @param {string[]} profiles
 * @returns {Promise<Array<import('./lockstep.js').LockstepRow & {label: string, testName: string}>>}
 */
export async function rowsToRun (tests, custom, profiles) {
  // A user's payload is loaded here too, so a broken file or schema fails once, before any server starts.
  const chosen = custom
    ? [{ test: null, custom, info: await loadCustomTest(custom) }]
    : tests.map((name) => ({ test: resolveTest(name).name, custom: null, info: resolveTest(name) }))
  return chosen.flatMap(({ test, custom, info }) => profiles.map((profile) => ({
    key: `${info.name}\n${profile}`, label: testLabel(info), testName: info.name, test, custom, profile
  })))
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
 * Runs every selected test (or the user's payload) on every network profile in every format, in
 * lockstep generations (see lockstep.js): the formats take turns in short batches, on server and
 * client processes that live for the whole run and swap formats, as many generations as the budget fits
 * (or --trials). Assembles the results document: rows with every generation's figures, ratios,
 * simultaneous intervals and calls, every report with its histogram, and what the machine was doing.
 * @param {object} options
 * @param {string[]} [options.formats] in column order; ratios are against the first; one named twice is an A/A run
 * @param {string[]} options.tests test numbers or names
 * @param {{payload: string, proto?: string, type?: string}|null} [options.custom] a user's payload instead of tests
 * @param {boolean} [options.allowLossy] run a custom payload even if its schema changes values
 * @param {string[]} [options.codecModules] codec modules a user wrote, handed to the servers and every client
 * @param {{side: string, us: number}|null} [options.calibrate] µs per message planted in the second format's client
 *   encode or server decode (--calibrate)
 * @param {string[]} options.profiles network profiles ('none' for no shaping)
 * @param {boolean} options.compress permessage-deflate on both ends
 * @param {boolean} [options.tls] wss://: node and reference servers get a throwaway certificate, which the clients trust
 * @param {boolean} [options.repeat] send each test's one message over and over instead of its stream
 * @param {string} [options.direction] up (default), down, echo or fanout
 * @param {number} [options.trials] a fixed number of generations; without it, as many as fit the budget
 * @param {number} [options.budgetMs] no generation starts that would end later than this after the start
 * @param {number} [options.margin] the equivalence margin, a fraction of 1
 * @param {boolean} [options.pin] servers and clients on CPUs of their own, where the machine allows (taskset)
 * @param {{kind: string, args?: string[]}|{kind: 'command', command: string[]}} [options.server] which server the formats meet: node, a reference server's name (go, java),
 *   with options of its own (--server-args), or a command
 * @param {{startMs?: number, generations?: number}} [options.warmup] each client's warm-up in each format at the start, and the
 *   unrecorded generations after it, each given one in place of the server's own (its server.json), or compare's
 * @param {number} [options.messages] messages per batch; default: about BATCH_MS of the slower format's traffic
 * @param {number} options.inflight
 * @param {number} [options.rate] fan-out's publishes per second (only fan-out has one)
 * @param {number} options.connections per client; fan-out: subscribers
 * @param {(line: string) => void} options.progress told before each generation
 * @returns {Promise<import('./results.js').ComparisonResults>}
 */
export async function compareFormats (options) {
  const { formats = DEFAULT_FORMATS, tests, custom = null, allowLossy = false, calibrate = null, profiles } = options
  const { tls = false, repeat = false, server = { kind: 'node' } } = options
  const startedAt = performance.now()
  // The code as it was when the run began: what its processes loaded.
  const provenance = provenanceOf([COMPARE_METHOD])
  const rows = await rowsToRun(tests, custom, profiles)
  // Refused before any server starts, as the client refuses it: every format must carry the payload unchanged.
  if (custom && !allowLossy) await refuseLossyFormats(formats, custom, { repeat })
  const labels = formatLabels(formats)
  // The planted codec reads its cost and side from the environment every client and server inherits.
  if (calibrate !== null) {
    Object.assign(process.env, { WSBENCH_PLANTED_US: String(calibrate.us), WSBENCH_PLANTED_SIDE: calibrate.side })
  }
  // A user's server command serves its own certificate (clients trust it through NODE_EXTRA_CA_CERTS).
  const certificate = tls && server.kind !== 'command' ? await certificateFiles() : null
  const run = await runGenerations({ ...options, formats, server }, { labels, rows, certificate })
  const reports = run.generations.flatMap((generation) => generation.reports)
  const elapsedMs = Math.round(performance.now() - startedAt)
  const settings = comparisonSettings({ ...options, server }, { run, rows, reports, elapsedMs })
  const results = buildComparisonResults(reports, labels, describeMachine(), settings, provenance)
  if (calibrate !== null) {
    const calibration = calibrationOf(results.rows, labels, calibrate)
    results.calibration = { ...calibration, lines: calibrationLines(calibration) }
  }
  return results
}

/**
 * A user's payload that some format would change on the way is refused (--allow-lossy lets it).
 * @param {string[]} formats
 * @param {object} custom the payload (lib/payloads/custom.js)
 * @param {object} [load] the load settings that decide how it is sent (--repeat)
 * @throws {UsageError} naming the format and what it would change
 */
export async function refuseLossyFormats (formats, custom, load = {}) {
  for (const format of formats) {
    const run = await prepareRun(format, { test: null, custom, load })
    if (run.lossy) throw new UsageError(lossyRefusal(run))
  }
}

/**
 * The machine a run measured on, as results documents record it.
 * @returns {{cpu: string, cores: number, node: string, platform: string}}
 */
export function describeMachine () {
  return {
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown CPU',
    cores: os.availableParallelism(),
    node: process.versions.node,
    platform: `${os.type()} ${os.release()}`
  }
}

/** The lockstep generations on the chosen server, the throwaway certificate removed after them. */
async function runGenerations (options, { labels, rows, certificate }) {
  const { formats, codecModules = [], compress, server, trials, budgetMs, messages, progress, pin = true } = options
  const { warmupOf } = await import('../reference/servers.js')
  // What the user gave in place of what the server asks for (its server.json), and compare's start otherwise.
  const asked = { ...warmupOf(server.kind), ...options.warmup }
  const { startMs: startWarmupMs = START_WARMUP_MS, generations: warmupGenerations } = asked
  const cpus = pin ? cpuPinning() : null
  try {
    const run = await runLockstep({
      formats,
      labels,
      rows,
      codecModules,
      load: comparisonLoad(options, certificate),
      serverArgs: serverArgsOf({ compress, certificate, codecModules, server }),
      serverCommand: await serverCommand(server),
      startWarmupMs,
      warmupGenerations,
      tls: options.tls ?? false,
      cpus,
      generations: trials,
      budgetMs: budgetMs ?? DEFAULT_BUDGET_MS,
      batchMessages: messages,
      progress
    })
    return { ...run, cpus, startWarmupMs, warmupGenerations }
  } catch (err) {
    // A server that refuses its command line (--server-args) exits 2 before listening, having said why in one line.
    if (err.exitCode === 2) throw new UsageError(`the server refused to start: ${oneLine(err.output.trim())}`)
    throw err
  } finally {
    await certificate?.remove()
  }
}

/** What every client sends and how, from compare's options. */
function comparisonLoad ({ direction = 'up', inflight, connections, compress, repeat = false, allowLossy = false, rate }, certificate) {
  return {
    direction,
    inflight,
    connections,
    compress,
    repeat,
    allowLossy,
    ...(certificate && { ca: certificate.cert }),
    ...(direction === 'fanout' && { rate, decode: 'all', heartbeatMs: DEFAULT_HEARTBEAT_MS })
  }
}

/** The results document's settings: what ran, as the options and the run say. */
function comparisonSettings (options, { run, rows, reports, elapsedMs }) {
  const { profiles, compress, repeat = false, direction = 'up', inflight, rate, connections, margin = DEFAULT_EQUIVALENCE } = options
  const { messages, trials, budgetMs, pin = true, server, calibrate = null } = options
  const cpus = run.cpus
  return {
    profiles,
    compress,
    tls: reports.find((report) => report.tls)?.tls ?? null,
    repeat,
    direction,
    inflight,
    rate,
    connections,
    margin,
    messages: messages ?? null,
    trials: trials ?? null,
    budgetMs: run.budgetMs,
    budgetAsked: budgetMs ?? null,
    pinning: cpus ? `servers on CPU ${cpus.server}, clients on CPU ${cpus.clients}` : pin ? 'not possible here (fewer than 2 CPUs, or no taskset)' : 'off (--no-pin)',
    server: server.kind === 'command' ? server.command.join(' ') : server.kind,
    serverArgs: server.args ?? [],
    servers: run.servers,
    ownServers: run.ownServers,
    ownServersBytes: OWN_SERVERS_BYTES,
    startWarmupMs: run.startWarmupMs,
    warmupGenerations: run.warmupGenerations ?? null,
    batches: Object.fromEntries(rows.map((row) => [`${row.label}${row.profile === 'none' ? '' : ` on ${row.profile}`}`, run.plan[row.key]])),
    generations: run.generations.map(({ reports, ...generation }) => generation),
    elapsedMs,
    calibrate
  }
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

/**
 * A throwaway certificate for the comparison's servers, in files of its own until `remove()`.
 * @returns {Promise<{cert: string, certFile: string, keyFile: string, remove: () => Promise<void>}>}
 */
export async function certificateFiles () {
  const { throwawayCertificate } = await import('../server/tls.js')
  const { cert, key } = await throwawayCertificate()
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-bench-compare-tls-'))
  const [certFile, keyFile] = [path.join(directory, 'cert.pem'), path.join(directory, 'key.pem')]
  await fs.writeFile(certFile, cert)
  await fs.writeFile(keyFile, key, { mode: 0o600 })
  return { cert, certFile, keyFile, remove: () => fs.rm(directory, { recursive: true, force: true }) }
}

/**
 * The options every server process of a run gets: permessage-deflate, the throwaway certificate,
 * the codec modules, and the user's --server-args.
 * @param {{compress: boolean, certificate: {certFile: string, keyFile: string}|null, codecModules: string[], server: {args?: string[]}}} run
 * @returns {string[]}
 */
export function serverArgsOf ({ compress, certificate, codecModules, server }) {
  return [
    ...(compress ? ['--compress'] : []),
    ...(certificate ? ['--tls-cert', certificate.certFile, '--tls-key', certificate.keyFile] : []),
    ...codecModules.flatMap((file) => ['--codec-module', file]),
    ...(server.args ?? [])
  ]
}

/**
 * The program and arguments that start a server other than node's (null: `node server.js`): a
 * reference server's program, built first if its sources changed, or the user's command.
 * @param {{kind: string, command?: string[]}} server
 * @returns {Promise<string[]|null>}
 */
export async function serverCommand (server) {
  if (server.kind === 'command') return server.command
  if (server.kind === 'node') return null
  const { buildReferenceServer } = await import('../reference/servers.js')
  try {
    return [buildReferenceServer(server.kind)]
  } catch (err) {
    throw new UsageError(`--server ${server.kind}: ${err.message.split('\n')[0]}`)
  }
}
