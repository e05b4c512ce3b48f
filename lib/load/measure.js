// One client run in this thread: the test (built-in or the user's payload) and its codec made
// ready, the fidelity of a user's payload checked, the load run, and its report built. The CLI
// and each --workers thread call it.
import { runLoad } from './engine.js'
import { createCodec } from '../codecs/registry.js'
import { loadMessages, resolveTest } from '../payloads/catalog.js'
import { buildReport } from '../report/report.js'
import { checkCustomFidelity, loadCustomTest, registrationFrame } from '../schema/custom.js'
import { formatDifference } from '../schema/fidelity.js'
import { REGISTRATION_OK } from '../protocol.js'
import { UsageError } from '../errors.js'

/**
 * Everything a run needs before connecting: the test (built-in or the user's payload), its codec,
 * and for a user's payload the fidelity check.
 * @param {string} format
 * @param {import('../cli/client-options.js').ClientOptions} options
 * @param {{quiet?: boolean}} [how] quiet: do not list differences again (workers)
 * @returns {Promise<{format: string, test: object, codec: import('../codecs/registry.js').Codec, lossy: object|null}>}
 */
export async function prepareRun (format, options, { quiet = false } = {}) {
  const test = options.custom ? await loadCustomTest(options.custom) : resolveTest(options.test)
  const codec = await createCodec(format, test)
  const lossy = test.custom ? checkLossless(test, codec, options.allowLossy, quiet) : null
  return { format, test, codec, lossy }
}

/**
 * Checks a user's payload survives the format before anything connects. Differences are listed on
 * stderr; without --allow-lossy they stop the run.
 * @returns {{differences: number, examples: object[]}|null} what the report records, null when lossless
 */
function checkLossless (test, codec, allowLossy, quiet) {
  const { lossless, differences, messages, examples } = checkCustomFidelity(test, codec)
  if (lossless) return null
  if (!quiet) {
    const lines = examples.map((difference) => `  ${formatDifference(difference)}`)
    process.stderr.write(`${codec.name}: ${test.description} changes ${differences} value${differences === 1 ? '' : 's'}:\n${lines.join('\n')}\n`)
  }
  const what = codec.name === 'protobuf' ? 'the schema' : `the ${codec.name} encoding`
  const fix = codec.name === 'protobuf' ? 'fix the schema, or ' : ''
  const where = test.payloads.length > 1 ? ` in ${messages} of ${test.payloads.length} messages` : ''
  if (!allowLossy) throw new UsageError(`${what} is lossy for ${test.file} (${differences} values differ${where}); ${fix}run anyway with --allow-lossy`)
  return { differences, messages, examples }
}

/**
 * Runs the load in this thread and builds its report.
 * @param {Awaited<ReturnType<typeof prepareRun>>} prepared
 * @param {import('../cli/client-options.js').ClientOptions} options this thread's share of the work
 * @param {{connectUrl?: string, network: object|null, signal?: AbortSignal, onTick?: Function}} context
 * @returns {Promise<object>} the report
 */
export async function measure ({ format, test, codec, lossy }, options, { connectUrl, network, signal, onTick }) {
  const { messages: payloads, payload } = messagesToSend(test, options.repeat)
  const result = await runLoad({
    connectUrl,
    url: options.url,
    test,
    payloads,
    codec,
    messages: options.messages,
    durationMs: options.durationMs,
    rate: options.rate,
    connections: options.connections,
    inflight: options.inflight,
    warmup: options.warmup,
    startAt: options.startAt,
    timeoutMs: options.timeout,
    compress: options.compress,
    repeat: payload.kind === 'repeated',
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
    startAt: options.startAt,
    direction: options.direction,
    network,
    lossy,
    payload
  })
}

/**
 * The messages a run sends, and what its report says about them: a built-in test's stream (its one
 * message with --repeat), or a user's file (its first message with --repeat).
 * @param {object} test a catalog test or a custom one
 * @param {boolean} [repeat]
 * @returns {{messages: object[], payload: import('../payloads/catalog.js').PayloadKind}}
 */
function messagesToSend (test, repeat) {
  if (!test.custom) return loadMessages(test, { repeat })
  const messages = repeat ? test.payloads.slice(0, 1) : test.payloads
  return { messages, payload: { kind: messages.length > 1 ? 'corpus' : 'repeated', messages: messages.length, seed: null } }
}
