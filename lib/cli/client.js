// The load client's command: client_json.js, client_protobuf.js and client.js --format.
import { UsageError } from '../errors.js'
import { parseAssertions } from '../report/assertions.js'
import { printPrebuiltHelp } from './help.js'

/**
 * The whole load client behind client_json.js, client_protobuf.js and client.js: parse the command
 * line, run the load (in worker threads with --workers), print the report (human or `--json`) on
 * stdout, write --out and --hdr-out, and report failures and violated --assert thresholds as one
 * line each on stderr.
 * @param {string|null} fixedFormat codec name, e.g. 'json' or 'protobuf'; null: from `--format`
 * @param {string[]} argv process.argv
 * @returns {Promise<number>} exit code: 0 when every message was acknowledged and every threshold held, 1 otherwise
 */
export async function runClientCli (fixedFormat, argv) {
  if (printPrebuiltHelp(fixedFormat ? `client_${fixedFormat}` : 'client', argv)) return 0
  const { parseClientArgs } = await import('./client-options.js')
  const options = await parseClientArgs(argv, fixedFormat)
  const { format } = options
  parseAssertions(options.assert) // a typo fails here, before anything connects
  if (options.workers > options.load.connections) throw new UsageError(`--workers ${options.workers} needs at least as many --connections (each worker has its own)`)
  // Loaded once the command line is known to be good: --help and usage errors load the parser alone.
  const { measure, prepareRun } = await import('../load/measure.js')
  const { startShaping } = await import('../network/shaping.js')
  const { runInWorkers } = await import('../load/workers.js')
  const { mergeReports } = await import('../report/merge.js')
  const { deliver } = await import('./deliver.js')
  const { createProgress } = await import('./progress.js')
  const { openStream } = await import('./outputs.js')
  const prepared = await prepareRun(format, options)
  if (prepared.lossy) await refuseLossy(prepared, options.allowLossy)
  const server = new URL(options.load.url)
  // SIGINT stops the run, whatever stage it is in; shaping is undone in the finally below.
  const controller = new AbortController()
  const interrupt = () => controller.abort('interrupted by SIGINT')
  process.once('SIGINT', interrupt)
  const progress = createProgress(process.stderr)
  // --out's streams: the run's parts join `live`, whose figures a timer pushes.
  const { direction } = options.load
  const stream = await openStream(options.outputs, { format, test: prepared.test.name, direction })
  let shaping
  try {
    shaping = options.network && await startShaping(options.network, {
      backend: options.throttleBackend,
      target: { host: server.hostname, port: Number(server.port || (server.protocol === 'wss:' ? 443 : 80)) }
    })
    const context = {
      connectUrl: shaping?.backend === 'proxy' ? `ws://${shaping.host}:${shaping.port}` : undefined,
      network: shaping ? { ...options.network, backend: shaping.backend, reason: shaping.reason } : null,
      signal: controller.signal,
      onTick: progress?.update,
      live: stream.live
    }
    const report = options.workers > 1
      ? { ...mergeReports(await runInWorkers(options, options.workers, context)), workers: options.workers }
      : await measure(prepared, options.load, context)
    progress?.done()
    // The whole client process's peak memory (every worker thread's connections included).
    const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024)
    return await deliver(await stream.finish({ ...report, peakRssMb }), options)
  } finally {
    stream.stop()
    process.off('SIGINT', interrupt)
    await shaping?.stop()
  }
}

/**
 * A user's payload that the format changes: the differences listed on stderr, and without
 * --allow-lossy the run stops before anything connects.
 * @param {import('../load/measure.js').PreparedRun} prepared
 * @param {boolean} allowLossy
 */
async function refuseLossy ({ format, test, lossy: { differences, messages, examples } }, allowLossy) {
  const { formatDifference } = await import('../schema/fidelity.js')
  const { lossyRefusal } = await import('../load/measure.js')
  const lines = examples.map((difference) => `  ${formatDifference(difference)}`)
  process.stderr.write(`${format.format}: ${test.description} changes ${differences} value${differences === 1 ? '' : 's'}:\n${lines.join('\n')}\n`)
  if (!allowLossy) throw new UsageError(lossyRefusal({ format, test, lossy: { differences, messages } }))
}
