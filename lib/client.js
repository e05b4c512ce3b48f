import { runLoad } from './engine.js'
import { createCodec } from './codecs.js'
import { loadPayload, resolveTest } from './payloads.js'
import { parseClientArgs } from './options.js'
import { buildReport, formatReport } from './report.js'
import { startThrottle } from './throttle.js'

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
  const test = resolveTest(options.test)
  const codec = createCodec(format, test)
  const server = new URL(options.url)
  const shaping = options.network && await startThrottle(options.network, {
    backend: options.throttleBackend,
    target: { host: server.hostname, port: Number(server.port || (server.protocol === 'wss:' ? 443 : 80)) }
  })
  try {
    return await measure(format, test, codec, options, shaping)
  } finally {
    await shaping?.stop()
  }
}

async function measure (format, test, codec, options, shaping) {
  const result = await runLoad({
    connectUrl: shaping?.backend === 'proxy' ? `ws://${shaping.host}:${shaping.port}` : undefined,
    url: options.url,
    test,
    payload: loadPayload(test),
    codec,
    messages: options.messages,
    connections: options.connections,
    inflight: options.inflight,
    warmup: options.warmup,
    timeoutMs: options.timeout,
    compress: options.compress,
    direction: options.direction
  })
  const report = buildReport(result, {
    format,
    test,
    url: options.url,
    connections: options.connections,
    inflight: options.inflight,
    warmup: options.warmup,
    direction: options.direction,
    network: shaping ? { ...options.network, backend: shaping.backend, reason: shaping.reason } : null
  })
  process.stdout.write(options.json ? `${JSON.stringify(report)}\n` : formatReport(report, result.histogram))
  if (report.ok) return 0
  process.stderr.write(`error: ${report.failure}\n`)
  return 1
}
