import { runLoad } from './engine.js'
import { createCodec } from './codecs.js'
import { loadPayload, resolveTest } from './payloads.js'
import { parseClientArgs } from './options.js'
import { buildReport, formatReport } from './report.js'
import { startThrottle } from './throttle.js'
import { REGISTRATION_OK, checkCustomFidelity, loadCustomTest, registrationFrame } from './custom-payload.js'
import { UsageError } from './errors.js'
import { stringifyJsonExact } from './infer.js'

/**
 * The whole load client behind client_json.js and client_protobuf.js: parse the command line,
 * run the load, print the report (human or `--json`) on stdout and any failure as one line on
 * stderr.
 * @param {string} format codec name, e.g. 'json' or 'protobuf'
 * @param {string[]} argv process.argv
 * @returns {Promise<number>} exit code: 0 when every message was acknowledged, 1 otherwise
 */
export async function runClientCli (format, argv) {
  const options = await parseClientArgs(argv, format)
  const test = options.custom ? await loadCustomTest(options.custom) : resolveTest(options.test)
  const codec = createCodec(format, test)
  const lossy = test.custom ? checkLossless(test, codec, options.allowLossy) : null
  const server = new URL(options.url)
  const shaping = options.network && await startThrottle(options.network, {
    backend: options.throttleBackend,
    target: { host: server.hostname, port: Number(server.port || (server.protocol === 'wss:' ? 443 : 80)) }
  })
  try {
    return await measure(format, test, codec, options, shaping, lossy)
  } finally {
    await shaping?.stop()
  }
}

/**
 * Checks a user's payload survives the format before anything connects. Differences are listed on
 * stderr; without --allow-lossy they stop the run.
 * @returns {{differences: number, examples: object[]}|null} what the report records, null when lossless
 */
function checkLossless (test, codec, allowLossy) {
  const { lossless, differences, examples } = checkCustomFidelity(test, codec)
  if (lossless) return null
  const shown = (value) => value === undefined ? '(absent)' : stringifyJsonExact(value).slice(0, 80)
  const lines = examples.map(({ path, expected, actual }) => `  ${path}: expected ${shown(expected)}, actual ${shown(actual)}`)
  process.stderr.write(`${codec.name}: ${test.description} changes ${differences} value${differences === 1 ? '' : 's'}:\n${lines.join('\n')}\n`)
  if (!allowLossy) throw new UsageError(`the schema is lossy for ${test.file} (${differences} values differ); fix the schema, or run anyway with --allow-lossy`)
  return { differences, examples }
}

async function measure (format, test, codec, options, shaping, lossy) {
  const result = await runLoad({
    connectUrl: shaping?.backend === 'proxy' ? `ws://${shaping.host}:${shaping.port}` : undefined,
    url: options.url,
    test,
    payload: test.custom ? test.payload : loadPayload(test),
    codec,
    messages: options.messages,
    connections: options.connections,
    inflight: options.inflight,
    warmup: options.warmup,
    timeoutMs: options.timeout,
    compress: options.compress,
    direction: options.direction,
    // The server learns a custom schema from the client; JSON needs none.
    handshake: test.custom && codec.needsSchema ? { frame: registrationFrame(test), expect: REGISTRATION_OK } : undefined
  })
  const report = buildReport(result, {
    format,
    test,
    url: options.url,
    connections: options.connections,
    inflight: options.inflight,
    warmup: options.warmup,
    direction: options.direction,
    network: shaping ? { ...options.network, backend: shaping.backend, reason: shaping.reason } : null,
    lossy
  })
  process.stdout.write(options.json ? `${JSON.stringify(report)}\n` : formatReport(report, result.histogram))
  if (report.ok) return 0
  process.stderr.write(`error: ${report.failure}\n`)
  return 1
}
