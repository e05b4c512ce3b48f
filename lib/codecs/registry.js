// Wire formats by name. Each is one ES module of the same interface: the built-in ones in
// formats/ (the file is named after its format), and any a user adds with --codec-module. A
// module is imported when a run first names its format, so a command pays only for the codecs
// it uses; the list of formats is what is there, and nothing else in lib/ names one.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { UsageError } from '../errors.js'

/**
 * @typedef {object} Codec one wire format, bound to one test's schema
 * @property {string} name format name as it appears in URLs and reports
 * @property {boolean} binary true: binary frames; false: text frames
 * @property {(plain: object) => unknown} prepare once per run: the plain payload in the format's
 *   own in-memory form (for protobuf a message instance, as an application using it would hold)
 * @property {(native: unknown) => string|Uint8Array} encode hot path: one message's frame
 * @property {(frame: Buffer) => unknown} decode hot path; throws on input it cannot decode
 * @property {(native: unknown) => object} toPlain back to the plain JSON shape, for fidelity checks
 */

/**
 * @typedef {object} CodecTest what a codec module is told of the test it serves
 * @property {string} name the test's name (`custom` for a user's payload)
 * @property {boolean} custom a user's payload (--payload) rather than a built-in test
 * @property {string} [typeName] its protobuf message type, where it has one
 * @property {import('protobufjs').Type} [type] that type, by reflection: a built-in test's from
 *   proto/, a user's payload's from its schema (on a server, once the client registered it)
 * @property {object[]} [messages] every plain message the run may send; absent on a server for a
 *   user's payload, which only the client has
 */

/**
 * @typedef {object} Format a loaded codec module and what it declares of itself
 * @property {string} format its name on the wire
 * @property {boolean} binary
 * @property {boolean} customPayloads it can carry a user's own payload (--payload)
 * @property {boolean} registersSchema for a user's payload the client first registers the
 *   payload's protobuf schema, and the server makes its codec from that
 * @property {string|null} lossHint what to do when it changes a user's values (`fix the schema`)
 * @property {string|null} file the module a user added, or null for a built-in one
 * @property {(test: object) => Codec} codecFor the codec for a catalog test or a user's payload
 */

/** A format's name goes into URLs and file names as it is. */
const FORMAT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$/
const same = (value) => value

const BUILT_IN = new URL('./formats/', import.meta.url)
const builtIns = fs.readdirSync(BUILT_IN).filter((file) => file.endsWith('.js')).map((file) => file.slice(0, -3)).sort()
/** format -> absolute path of the module a user added */
const added = new Map()
/** format -> Promise<Format> */
const loaded = new Map()
// What a codec is told of a built-in test comes from these, imported with the first format:
// --help and a bad command line never load them.
let testSources = null
const loadTestSources = async () => {
  const [{ everyMessage }, { builtInType }] = await Promise.all([import('../payloads/catalog.js'), import('../schema/compile.js')])
  testSources = { everyMessage, builtInType }
}

/**
 * Every format this process knows: the built-in ones, then those added with --codec-module.
 * @returns {string[]}
 */
export function formatNames () {
  return [...builtIns, ...added.keys()]
}

/**
 * The modules added with --codec-module, as given to addCodecModules: what a worker thread, a
 * server process or a compare child must add too.
 * @returns {string[]}
 */
export function codecModules () {
  return [...added.values()]
}

/**
 * Imports codec modules a user wrote and adds their formats, checking each before anything runs.
 * A module already added (the same file) is skipped.
 * @param {string[]} files paths, relative to the working directory or absolute
 * @returns {Promise<string[]>} the formats they add, in order
 * @throws {UsageError} one line: a missing file, a module that fails to import (with where), one
 *   without `format` or `codecFor`, a format name that is taken or not URL-safe
 */
export async function addCodecModules (files = []) {
  const formats = []
  for (const given of files) {
    const file = path.resolve(given)
    const known = [...added].find(([, other]) => other === file)
    if (known) { formats.push(known[0]); continue }
    if (!fs.existsSync(file)) throw new UsageError(`--codec-module ${given}: no such file`)
    if (!testSources) await loadTestSources()
    let module
    try {
      module = await import(pathToFileURL(file).href)
    } catch (err) {
      throw new UsageError(`--codec-module ${given}: cannot import it: ${importFailure(err, file)}`)
    }
    // A CommonJS module (module.exports = {...}), or one whose exports are a default object, declares the same.
    const format = checkedFormat(typeof module.codecFor !== 'function' && module.default ? module.default : module, given)
    added.set(format.format, file)
    loaded.set(format.format, Promise.resolve(format))
    formats.push(format.format)
  }
  return formats
}

/**
 * Why an import failed; for a syntax error, where. Node's import() does not say where, so the
 * file is checked again by `node --check`, whose first line does (`[stdin]:12`).
 */
function importFailure (err, file) {
  const text = `${err?.name ?? 'Error'}: ${String(err?.message ?? err).split('\n')[0]}`
  if (!(err instanceof SyntaxError)) return text
  const check = spawnSync(process.execPath, ['--input-type=module', '--check'], { input: fs.readFileSync(file), encoding: 'utf8' })
  const line = /^\[stdin\]:(\d+)/.exec(check.stderr)?.[1]
  return line ? `${text} at ${file}:${line}` : text
}

/** A module's declarations, checked: what it must export, and capabilities defaulted. */
function checkedFormat (module, given) {
  const { format, binary, codecFor } = module
  const what = given ? `--codec-module ${given}` : 'codec module'
  if (typeof codecFor !== 'function') throw new UsageError(`${what}: exports no codecFor(test) function`)
  if (typeof format !== 'string') throw new UsageError(`${what}: exports no format name (export const format = 'my-format')`)
  if (!FORMAT_NAME.test(format)) throw new UsageError(`${what}: format '${format}' must be 1-40 of A-Z, a-z, 0-9, '.', '_', '-' (it goes into URLs)`)
  if (typeof binary !== 'boolean') throw new UsageError(`${what}: exports no binary flag (export const binary = true for binary frames, false for text)`)
  if (given && (builtIns.includes(format) || added.has(format))) {
    throw new UsageError(`${what}: format '${format}' is taken (${builtIns.includes(format) ? 'built in' : `by ${added.get(format)}`}); name yours otherwise`)
  }
  return Object.freeze({
    format,
    binary,
    customPayloads: module.customPayloads ?? true,
    registersSchema: module.registersSchema ?? false,
    lossHint: module.lossHint ?? null,
    file: given ? path.resolve(given) : null,
    codecFor: codecMaker(format, binary, codecFor)
  })
}

/**
 * A module's codecFor, given the CodecTest view of a test and its codec checked and named. A
 * catalog test's codec is made once per format and test; a user's payload brings its own.
 */
function codecMaker (format, binary, codecFor) {
  const cache = new Map()
  const make = (test) => {
    const codec = codecFor(viewOf(test))
    for (const method of ['encode', 'decode']) {
      if (typeof codec?.[method] !== 'function') throw new UsageError(`${format}: codecFor(${test.name}) returned no ${method}() function`)
    }
    const complete = typeof codec.prepare === 'function' && typeof codec.toPlain === 'function'
    if (complete && codec.name === format && codec.binary === binary) return codec
    // Its own methods stay as they are (a class's keep their `this`); name and binary are the
    // module's; a codec without prepare or toPlain holds messages as they are.
    const own = { name: { value: format }, binary: { value: binary } }
    for (const method of ['prepare', 'toPlain']) if (typeof codec[method] !== 'function') own[method] = { value: same }
    return Object.create(codec, own)
  }
  return (test) => {
    if (test.custom) return make(test)
    if (!cache.has(test.name)) cache.set(test.name, make(test))
    return cache.get(test.name)
  }
}

/**
 * What a codec module's codecFor is told of a test (for a module's own tests, and benchmarks).
 * @param {object} test a catalog test or a user's payload
 * @returns {Promise<CodecTest>}
 */
export async function codecTest (test) {
  if (!testSources) await loadTestSources()
  return viewOf(test)
}

/** A built-in test's schema by reflection and its messages, worked out only if a codec asks. */
function viewOf (test) {
  if (test.custom) return test
  let type, messages
  return {
    ...test,
    get type () { return (type ??= testSources.builtInType(test.typeName)) },
    get messages () { return (messages ??= testSources.everyMessage(test)) }
  }
}

/**
 * A codec whose messages stay plain JSON values in memory (prepare and toPlain change nothing):
 * for a format module that only encodes and decodes.
 * @param {string} format
 * @param {boolean} binary
 * @param {(value: unknown) => string|Uint8Array} encode
 * @param {(frame: Buffer) => unknown} decode
 * @returns {Codec}
 */
export function plainCodec (format, binary, encode, decode) {
  return Object.freeze({ name: format, binary, prepare: same, encode, decode, toPlain: same })
}

/**
 * A format's module, loaded (once) and checked.
 * @param {string} name
 * @returns {Promise<Format>}
 * @throws {UsageError} for a format this process does not know, saying which it knows and how to add one
 */
export function loadFormat (name) {
  if (!loaded.has(name)) {
    if (!builtIns.includes(name)) return Promise.reject(new UsageError(unknownFormat(name)))
    loaded.set(name, (testSources ? Promise.resolve() : loadTestSources())
      .then(() => import(new URL(`${name}.js`, BUILT_IN)))
      .then((module) => checkedFormat(module, null)))
  }
  return loaded.get(name)
}

/**
 * The one line for a format nobody added.
 * @param {string} name
 * @returns {string}
 */
export function unknownFormat (name) {
  return `unknown format '${name}': expected one of ${formatNames().join(', ')}, or add it with --codec-module <file.js>`
}

/**
 * The codec for a format and test, its module loaded on first use.
 * @param {string} name a format's name
 * @param {object} test a catalog test (lib/payloads/catalog.js) or a user's payload (lib/payloads/custom.js)
 * @returns {Promise<Codec>}
 * @throws {UsageError} for an unknown format, or one that cannot carry a user's payload
 */
export async function createCodec (name, test) {
  const format = await loadFormat(name)
  if (test.custom) checkCarries(format)
  return format.codecFor(test)
}

/**
 * Refuses a format that cannot carry a user's payload, naming those that can.
 * @param {Format} format
 * @throws {UsageError}
 */
export function checkCarries (format) {
  if (format.customPayloads) return
  throw new UsageError(`format '${format.format}' does not carry a payload of your own: it works from a built-in test's schema`)
}
