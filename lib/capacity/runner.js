// `npm run capacity` end to end: the rows and the server chosen, the searches run (run.js), the
// results document built (results.js) and written with its page (html.js).
import fs from 'node:fs/promises'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { certificateFiles, describeMachine, formatLabels, refuseLossyFormats, rowsToRun, serverArgsOf, serverCommand } from '../compare/runner.js'
import { START_WARMUP_MS } from '../compare/lockstep.js'
import { DEFAULT_HEARTBEAT_MS } from '../defaults.js'
import { UsageError, oneLine } from '../errors.js'
import { measureCapacity } from './run.js'
import { CAPACITY_METHOD, capacityRows, capacityUnit } from './results.js'
import { provenanceOf } from '../provenance.js'
import { calibrationOf } from './calibration.js'
import { pacingTickMs } from './judge.js'
import { renderCapacityHtml } from './html.js'

/**
 * Runs the capacity searches the command line asked for and builds the results document.
 * @param {object} options parseCapacityArgs's, with `progress(line)`
 * @returns {Promise<object>} the results document: settings, machine, rows (figures, ratios), family, searches
 */
export async function findCapacity (options) {
  const { formats, tests, custom, allowLossy, calibrate, budget, targetRate, margin, server, tls } = options
  const startedAt = performance.now()
  // The code as it was when the run began: what its processes loaded.
  const provenance = provenanceOf([CAPACITY_METHOD])
  const rows = await rowsToRun(tests, custom, ['none'])
  if (custom && !allowLossy) await refuseLossyFormats(formats, custom)
  const labels = formatLabels(formats)
  if (calibrate) Object.assign(process.env, { WSBENCH_PLANTED_US: String(calibrate.us), WSBENCH_PLANTED_SIDE: 'server' })
  const certificate = tls && server.kind !== 'command' ? await certificateFiles() : null
  const run = await runSearches(options, { labels, rows, certificate })
  const how = { labels, serverCores: budget.cores, targetRate, margin, unit: capacityUnit(options) }
  const { rows: table, family } = capacityRows(run.searches, how)
  const results = {
    kind: 'capacity',
    generatedAt: new Date().toISOString(),
    ...provenance,
    machine: describeMachine(),
    settings: capacitySettings(options, labels, Math.round(performance.now() - startedAt)),
    rows: table,
    family,
    searches: run.searches
  }
  if (calibrate) results.calibration = calibrationOf(results.rows, calibrate)
  return results
}

/**
 * The searches (run.js) on the chosen server, the throwaway certificate removed after them.
 * @returns {Promise<{searches: object[]}>}
 */
async function runSearches (options, { labels, rows, certificate }) {
  const { formats, slos, codecModules, budget, server, compress } = options
  const { warmupOf } = await import('../reference/servers.js')
  const load = generatorLoad(options, certificate)
  try {
    return await measureCapacity({
      formats,
      labels,
      rows,
      slos,
      codecModules,
      load,
      serverArgs: serverArgsOf({ compress, certificate, codecModules, server }),
      serverCommand: await serverCommand(server),
      budget,
      schedule: { ...options.schedule, startWarmupMs: warmupOf(server.kind).startMs ?? START_WARMUP_MS },
      progress: options.progress
    })
  } catch (err) {
    if (err.exitCode === 2) throw new UsageError(`the server refused to start: ${oneLine(err.output.trim())}`)
    throw err
  } finally {
    await certificate?.remove()
  }
}

/** How each generator loads the server: the command line's connections, window and pacing. */
function generatorLoad (options, certificate) {
  return {
    direction: options.direction,
    connections: options.connections,
    inflight: options.inflight,
    compress: options.compress,
    allowLossy: options.allowLossy,
    pacing: options.pacing,
    // The generators send each test's frames encoded, framed and masked once, a turn's in one write
    // per connection: their CPU goes to sending and receiving, in as few syscalls as the schedule allows.
    preencode: true,
    cork: true,
    ...(certificate && { ca: certificate.cert }),
    // A fan-out generator warms up publishing at the search's first rate. One subscriber decodes
    // (and so checks) every delivery, the others count theirs: decoding in all of them is the
    // clients' cost, not the server's, and made the generator the limit before the server was.
    ...(options.direction === 'fanout' && { rate: options.schedule.startRate, decode: 'one', heartbeatMs: DEFAULT_HEARTBEAT_MS })
  }
}

/** The results' settings: what the run was asked to do, and how long it took. */
function capacitySettings (options, labels, elapsedMs) {
  const { server } = options
  return {
    formats: labels,
    slos: options.slos.map((slo) => slo.text),
    serverCores: options.budget.cores,
    budget: options.budget,
    targetRate: options.targetRate,
    server: server.kind === 'command' ? server.command.join(' ') : server.kind,
    serverArgs: server.args ?? [],
    tls: options.tls,
    compress: options.compress,
    direction: options.direction,
    connections: options.connections,
    inflight: options.inflight,
    pacing: options.pacing,
    ticks: Object.fromEntries(options.slos.map((slo) => [slo.text, pacingTickMs(slo)])),
    schedule: options.schedule,
    margin: options.margin,
    calibrate: options.calibrate,
    elapsedMs
  }
}

/**
 * Writes `results.json` and `report.html` into a directory.
 * @param {string} directory created if missing
 * @param {object} results
 * @returns {Promise<string[]>} the paths written
 */
export async function writeCapacity (directory, results) {
  await fs.mkdir(directory, { recursive: true })
  const files = [['results.json', `${JSON.stringify(results, null, 2)}\n`], ['report.html', renderCapacityHtml(results)]]
  return Promise.all(files.map(async ([name, text]) => {
    const file = path.join(directory, name)
    await fs.writeFile(file, text)
    return file
  }))
}
