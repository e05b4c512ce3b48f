// One client run in this thread: the test (built-in or the user's payload) and its codec made
// ready, the load run, and its report built. The CLI and each --workers thread call it; what to
// tell the user (a lossy payload, progress) is the caller's.
import { prepareMessages, runLoad } from './engine.js'
import { checkCarries, loadFormat } from '../codecs/registry.js'
import { loadMessages, resolveTest } from '../payloads/catalog.js'
import { UsageError, oneLine } from '../errors.js'
import { buildReport } from '../report/report.js'
import { checkCustomFidelity, loadCustomTest, registrationFrame } from '../payloads/custom.js'
import { REGISTRATION_OK } from '../protocol.js'

/**
 * @typedef {object} ClientRun what one client run measures: the command line produces it
 * @property {string} format the format's name
 * @property {string|null} test built-in test by number or name, or null with a payload of one's own
 * @property {{payload: string, proto?: string, type?: string}|null} custom the user's payload files (--payload)
 * @property {import('./engine.js').LoadSettings} load how the load is sent, handed to the engine and the report as is
 */

/**
 * @typedef {object} PreparedRun a run made ready before anything connects
 * @property {import('../codecs/registry.js').Format} format
 * @property {object} test the catalog test, or the user's (see CustomTest in lib/payloads/custom.js)
 * @property {import('../codecs/registry.js').Codec} codec
 * @property {import('./engine.js').PreparedMessages} prepared the messages the run sends, in the codec's form
 * @property {import('../payloads/catalog.js').PayloadKind} payload what they are, as reports state it
 * @property {{differences: number, messages: number, examples: object[]}|null} lossy a user's payload
 *   whose values the format changes; null when it survives
 */

/**
 * Everything a run needs before connecting: the test (built-in or the user's payload), its codec,
 * checked to encode every message the run sends, and for a user's payload whether it survives.
 * @param {string} name the format's
 * @param {{test: string|null, custom: object|null, load: {repeat?: boolean}}} choice which test and
 *   messages (see ClientRun)
 * @returns {Promise<PreparedRun>}
 * @throws {UsageError} for a format that cannot carry the test, or whose codec cannot make or encode its messages
 */
export async function prepareRun (name, { test: testName, custom, load }) {
  const format = await loadFormat(name)
  const test = custom ? await loadCustomTest(custom) : resolveTest(testName)
  if (test.custom) checkCarries(format)
  const codec = codecOf(format, test)
  const { messages, payload } = messagesToSend(test, load.repeat)
  const prepared = prepareMessages(codec, messages, testNamed(test))
  return { format, test, codec, prepared, payload, lossy: test.custom ? lossOf(test, codec) : null }
}

/** A built-in test by name, a user's payload by its file. */
const testNamed = (test) => test.custom ? test.file : `test ${test.name}`

/** A codec that cannot be made for the test is refused before the run, naming the test. */
function codecOf (format, test) {
  try {
    return format.codecFor(test)
  } catch (err) {
    throw new UsageError(`format '${format.format}' cannot serve ${testNamed(test)}: ${oneLine(err)}`)
  }
}

/**
 * Why a run of a user's payload that the format changes does not start without --allow-lossy, in one line.
 * @param {PreparedRun} run one whose `lossy` is set
 * @returns {string}
 */
export function lossyRefusal ({ format, test, lossy: { differences, messages } }) {
  const fix = format.lossHint ? `${format.lossHint}, or ` : ''
  const where = test.messages.length > 1 ? ` in ${messages} of ${test.messages.length} messages` : ''
  return `the ${format.format} encoding is lossy for ${test.file} (${differences} values differ${where}); ${fix}run anyway with --allow-lossy`
}

/** The values a format changes in a user's payload, or null when it keeps them all. */
function lossOf (test, codec) {
  const { lossless, differences, messages, examples } = checkCustomFidelity(test, codec)
  return lossless ? null : { differences, messages, examples }
}

/**
 * Runs the load in this thread and builds its report.
 * @param {PreparedRun} run
 * @param {import('./engine.js').LoadSettings} settings this thread's share of the work
 * @param {{connectUrl?: string, network: object|null, signal?: AbortSignal, onTick?: Function, live?: object}} context
 *   live: --out's LiveFigures (lib/outputs/figures.js), which the run joins
 * @returns {Promise<object>} the report
 */
export async function measure (run, settings, context) {
  const load = settings.direction === 'fanout'
    ? (await import('./fanout.js')).runFanout
    : settings.arrivals ? (await import('./arrivals.js')).runArrivals : runLoad
  return reportOf(run, settings, context.network, await load(loadOptions(run, settings, context)))
}

/**
 * What the engine is given for a prepared run: the settings, the test, its messages and codec, and
 * for a format that decodes by the payload's schema, the handshake that has the server learn it first.
 * @param {PreparedRun} run
 * @param {import('./engine.js').LoadSettings} settings
 * @param {{connectUrl?: string, signal?: AbortSignal, onTick?: Function, live?: object}} context
 * @returns {import('./engine.js').LoadOptions}
 */
export function loadOptions ({ format, test, codec, prepared, payload }, settings, context) {
  const { connectUrl, signal, onTick, live } = context
  return {
    ...settings,
    connectUrl,
    test,
    prepared,
    codec,
    repeat: payload.kind === 'repeated',
    signal,
    onTick,
    live,
    handshake: test.custom && format.registersSchema
      ? { frame: registrationFrame(test), expect: REGISTRATION_OK }
      : undefined
  }
}

/**
 * The report of a prepared run's result, naming what it measured.
 * @param {PreparedRun} run
 * @param {import('./engine.js').LoadSettings} settings
 * @param {object|null} network the network profile in force
 * @param {import('./engine.js').LoadResult} result
 * @returns {object}
 */
export function reportOf ({ format, test, lossy, payload }, settings, network, result) {
  return buildReport(result, {
    ...settings, format: format.format, codecModule: format.file, test, network, lossy, payload
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
  const messages = repeat ? test.messages.slice(0, 1) : test.messages
  return { messages, payload: { kind: messages.length > 1 ? 'corpus' : 'repeated', messages: messages.length, seed: null } }
}
