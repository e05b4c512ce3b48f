// `npm run capacity` end to end: the rows and the server chosen, the searches run (run.js), the
// results document built (results.js) and written with its page (html.js).
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { certificateFiles, formatLabels, rowsToRun, serverArgsOf, serverCommand } from '../compare/runner.js'
import { START_WARMUP_MS } from '../compare/lockstep.js'
import { lossyRefusal, prepareRun } from '../load/measure.js'
import { UsageError, oneLine } from '../errors.js'
import { measureCapacity } from './run.js'
import { CAPACITY_METHOD, capacityRows } from './results.js'
import { provenanceOf } from '../provenance.js'
import { calibrationOf } from './calibration.js'
import { renderCapacityHtml } from './html.js'

/**
 * Runs the capacity searches the command line asked for and builds the results document.
 * @param {object} options parseCapacityArgs's, with `progress(line)`
 * @returns {Promise<object>} the results document: settings, machine, rows (figures, ratios), family, searches
 */
export async function findCapacity (options) {
  const { formats, tests, custom, allowLossy, codecModules, calibrate, slos, budget, targetRate, server, tls } = options
  const { compress, direction } = options
  const startedAt = performance.now()
  // The code as it was when the run began: what its processes loaded.
  const provenance = provenanceOf([CAPACITY_METHOD])
  const rows = await rowsToRun(tests, custom, ['none'])
  if (custom && !allowLossy) {
    for (const format of formats) {
      const run = await prepareRun(format, { test: null, custom, load: {} })
      if (run.lossy) throw new UsageError(lossyRefusal(run))
    }
  }
  const labels = formatLabels(formats)
  if (calibrate) Object.assign(process.env, { WSBENCH_PLANTED_US: String(calibrate.us), WSBENCH_PLANTED_SIDE: 'server' })
  const certificate = tls && server.kind !== 'command' ? await certificateFiles() : null
  const { warmupOf } = await import('../reference/servers.js')
  const load = {
    direction,
    connections: options.connections,
    inflight: options.inflight,
    compress,
    allowLossy,
    pacing: options.pacing,
    // The generators send each test's frames encoded once, a turn's in one write per connection:
    // their CPU goes to sending and receiving, in as few syscalls as the schedule allows.
    preencode: true,
    cork: true,
    ...(certificate && { ca: certificate.cert })
  }
  let run
  try {
    run = await measureCapacity({
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
  const serverCores = budget.cores
  const { margin } = options
  const { rows: table, family } = capacityRows(run.searches, { labels, serverCores, targetRate, margin })
  const results = {
    kind: 'capacity',
    generatedAt: new Date().toISOString(),
    ...provenance,
    machine: {
      cpu: os.cpus()[0]?.model.trim() ?? 'unknown CPU',
      cores: os.availableParallelism(),
      node: process.versions.node,
      platform: `${os.type()} ${os.release()}`
    },
    settings: {
      formats: labels,
      slos: slos.map((slo) => slo.text),
      serverCores: budget.cores,
      budget,
      targetRate,
      server: server.kind === 'command' ? server.command.join(' ') : server.kind,
      serverArgs: server.args ?? [],
      tls,
      compress,
      direction,
      connections: options.connections,
      inflight: options.inflight,
      pacing: options.pacing,
      schedule: options.schedule,
      margin: options.margin,
      calibrate,
      elapsedMs: Math.round(performance.now() - startedAt)
    },
    rows: table,
    family,
    searches: run.searches
  }
  if (calibrate) results.calibration = calibrationOf(results.rows, calibrate)
  return results
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
