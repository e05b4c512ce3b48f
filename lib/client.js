import fs from 'node:fs/promises'
import { runLoad } from './engine.js'
import { createCodec } from './codecs.js'
import { loadPayload, resolveTest } from './payloads.js'
import { parseClientArgs } from './options.js'
import { buildReport, formatReport } from './report.js'
import { startThrottle } from './throttle.js'
import { REGISTRATION_OK, checkCustomFidelity, loadCustomTest, registrationFrame } from './custom-payload.js'
import { UsageError } from './errors.js'
import { stringifyJsonExact } from './infer.js'
import { decodeHistogram, formatIntervalLog } from './histogram.js'
import { parseAssertions, violatedAssertions } from './assertions.js'
import { mergeReports } from './merge.js'
import { runInWorkers } from './workers.js'
import { createProgress } from './progress.js'

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
  const options = await parseClientArgs(argv, fixedFormat)
  const { format } = options
  parseAssertions(options.assert) // a typo fails here, before anything connects
  if (options.workers > options.connections) throw new UsageError(`--workers ${options.workers} needs at least as many --connections (each worker has its own)`)
  const prepared = await prepareRun(format, options)
  const server = new URL(options.url)
  // SIGINT stops the run, whatever stage it is in; shaping is undone in the finally below.
  const controller = new AbortController()
  const interrupt = () => controller.abort('interrupted by SIGINT')
  process.once('SIGINT', interrupt)
  const progress = createProgress(process.stderr)
  let shaping
  try {
    shaping = options.network && await startThrottle(options.network, {
      backend: options.throttleBackend,
      target: { host: server.hostname, port: Number(server.port || (server.protocol === 'wss:' ? 443 : 80)) }
    })
    const context = {
      connectUrl: shaping?.backend === 'proxy' ? `ws://${shaping.host}:${shaping.port}` : undefined,
      network: shaping ? { ...options.network, backend: shaping.backend, reason: shaping.reason } : null,
      signal: controller.signal,
      onTick: progress?.update
    }
    const report = options.workers > 1
      ? { ...mergeReports(await runInWorkers(format, options, context)), workers: options.workers }
      : await measure(prepared, options, context)
    progress?.done()
    return await deliver(report, options)
  } finally {
    process.off('SIGINT', interrupt)
    await shaping?.stop()
  }
}

/**
 * Everything a run needs before connecting: the test (built-in or the user's payload), its codec,
 * and for a user's payload the fidelity check.
 * @param {string} format
 * @param {import('./options.js').ClientOptions} options
 * @param {{quiet?: boolean}} [how] quiet: do not list differences again (workers)
 * @returns {Promise<{format: string, test: object, codec: import('./codecs.js').Codec, lossy: object|null}>}
 */
export async function prepareRun (format, options, { quiet = false } = {}) {
  const test = options.custom ? await loadCustomTest(options.custom) : resolveTest(options.test)
  const codec = createCodec(format, test)
  const lossy = test.custom ? checkLossless(test, codec, options.allowLossy, quiet) : null
  return { format, test, codec, lossy }
}

/**
 * Checks a user's payload survives the format before anything connects. Differences are listed on
 * stderr; without --allow-lossy they stop the run.
 * @returns {{differences: number, examples: object[]}|null} what the report records, null when lossless
 */
function checkLossless (test, codec, allowLossy, quiet) {
  const { lossless, differences, examples } = checkCustomFidelity(test, codec)
  if (lossless) return null
  if (!quiet) {
    const shown = (value) => value === undefined ? '(absent)' : stringifyJsonExact(value).slice(0, 80)
    const lines = examples.map(({ path, expected, actual }) => `  ${path}: expected ${shown(expected)}, actual ${shown(actual)}`)
    process.stderr.write(`${codec.name}: ${test.description} changes ${differences} value${differences === 1 ? '' : 's'}:\n${lines.join('\n')}\n`)
  }
  const what = codec.name === 'protobuf' ? 'the schema' : `the ${codec.name} encoding`
  const fix = codec.name === 'protobuf' ? 'fix the schema, or ' : ''
  if (!allowLossy) throw new UsageError(`${what} is lossy for ${test.file} (${differences} values differ); ${fix}run anyway with --allow-lossy`)
  return { differences, examples }
}

/**
 * Runs the load in this thread and builds its report.
 * @param {Awaited<ReturnType<typeof prepareRun>>} prepared
 * @param {import('./options.js').ClientOptions} options this thread's share of the work
 * @param {{connectUrl?: string, network: object|null, signal?: AbortSignal, onTick?: Function}} context
 * @returns {Promise<object>} the report
 */
export async function measure ({ format, test, codec, lossy }, options, { connectUrl, network, signal, onTick }) {
  const result = await runLoad({
    connectUrl,
    url: options.url,
    test,
    payload: test.custom ? test.payload : loadPayload(test),
    codec,
    messages: options.messages,
    durationMs: options.durationMs,
    rate: options.rate,
    connections: options.connections,
    inflight: options.inflight,
    warmup: options.warmup,
    timeoutMs: options.timeout,
    compress: options.compress,
    direction: options.direction,
    headers: options.headers,
    subprotocol: options.subprotocol,
    insecure: options.insecure,
    ack: options.ack,
    reconnect: options.reconnect,
    signal,
    onTick,
    // The server learns a custom protobuf schema from the client; the other formats decode without one.
    handshake: test.custom && format === 'protobuf' ? { frame: registrationFrame(test), expect: REGISTRATION_OK } : undefined
  })
  return buildReport(result, {
    format,
    test,
    url: options.url,
    connections: options.connections,
    inflight: options.inflight,
    warmup: options.warmup,
    direction: options.direction,
    network,
    lossy
  })
}

/**
 * Writes the files asked for (--out, --hdr-out), prints the report (human or --json), and works
 * out the exit code from the run and the --assert thresholds; shared by the clients and merge.
 * @param {object} report
 * @param {{out?: string, hdrOut?: string, json: boolean, assert: string[]}} options
 * @returns {Promise<number>} 0 when every message was acknowledged and every threshold held, else 1
 */
export async function deliver (report, options) {
  const thresholds = parseAssertions(options.assert)
  if (options.out) await writeFile(options.out, `${JSON.stringify(report, null, 2)}\n`)
  if (options.hdrOut) await writeFile(options.hdrOut, formatIntervalLog(report))
  process.stdout.write(options.json ? `${JSON.stringify(report)}\n` : formatReport(report, decodeHistogram(report.histogram)))
  const violations = violatedAssertions(thresholds, report)
  if (!report.ok) process.stderr.write(`error: ${report.failure}\n`)
  for (const line of violations) process.stderr.write(`${line}\n`)
  return report.ok && violations.length === 0 ? 0 : 1
}

async function writeFile (file, text) {
  try {
    await fs.writeFile(file, text)
  } catch (err) {
    throw new UsageError(`cannot write ${file}: ${err.code ?? err.message}`)
  }
}
