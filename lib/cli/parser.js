// What every command line shares: a yargs parser that fails with one line, and the readers of
// numbers, durations, lists and addresses that turn option values into checked settings.
import yargs from 'yargs'
import { hideBin } from 'yargs/helpers'
import { UsageError } from '../errors.js'
import { addCodecModules, codecModules, formatNames, unknownFormat } from '../codecs/registry.js'

/**
 * A yargs parser that reports mistakes as one UsageError line instead of printing usage and
 * exiting, so every entry point fails the same way.
 * @param {string[]} argv process.argv
 * @param {string} usage the usage line shown by --help
 */
export function commandLine (argv, usage) {
  const tokens = hideBin(argv)
  return yargs(tokens)
    .usage(usage)
    .strict()
    .wrap(Math.min(100, process.stdout.columns || 100))
    .fail((message, err) => {
      if (err instanceof UsageError) throw err
      // yargs spreads some messages (invalid choices) over several lines; errors here are one line.
      throw new UsageError(`${String(message ?? err?.message).replace(/:?\s*\n\s*/g, ': ')} (see --help)`)
    })
    .check(givenOnce(tokens))
    .help()
    .alias('h', 'help')
    .version(false)
}

/**
 * An option that takes one value, given twice, is a mistake to name rather than a list (yargs
 * collects both) or the last of them silently (most tools): `--direction fanout --direction up`.
 * Only flags count: a variadic positional (merge's files) is an array by design.
 * @param {string[]} tokens the command line's arguments
 */
function givenOnce (tokens) {
  const flat = (name) => name.replace(/-/g, '').toLowerCase()
  const flags = new Set(tokens.flatMap((token) => /^--?([^=-][^=]*)/.exec(token)?.[1] ?? []).map(flat))
  return (argv, options) => {
    for (const key of Object.keys(options.key)) {
      const names = [key, ...(options.alias[key] ?? [])].map(flat)
      if (Array.isArray(argv[key]) && !options.array.includes(key) && names.some((name) => flags.has(name))) {
        throw new UsageError(`--${key} given more than once (${argv[key].join(', ')}); give it once`)
      }
    }
    return true
  }
}

/**
 * Turns a yargs option value into a whole number within bounds, or a UsageError naming the option.
 * @param {string} name option name, for the message
 * @param {unknown} value
 * @param {number} min smallest allowed value
 */
export function wholeNumber (name, value, min) {
  const number = Number(value)
  if (!Number.isSafeInteger(number) || number < min) {
    throw new UsageError(`--${name} must be a whole number >= ${min}, got '${value}'`)
  }
  return number
}

const DURATION_UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

/**
 * Reads a duration such as `30s`, `500ms`, `2m` or `1h` (a bare number is seconds).
 * @param {string} name option name, for the message
 * @param {string|number} text
 * @returns {number} milliseconds, > 0
 */
export function duration (name, text) {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(String(text).trim())
  // Checked after rounding: under half a millisecond would be 0, which the engine reads as no deadline.
  const ms = match ? Math.round(Number(match[1]) * DURATION_UNITS[match[2] ?? 's']) : 0
  if (ms <= 0) throw new UsageError(`--${name} must be a duration such as 30s, 500ms or 2m, got '${text}'`)
  return ms
}

/**
 * Reads an instant to come: an ISO time (`2026-11-23T17:00:00Z`) or epoch milliseconds.
 * @param {string} name option name, for the message
 * @param {string} text
 * @param {number} [now] epoch ms, for the past check
 * @returns {number} epoch milliseconds, later than now
 */
export function futureInstant (name, text, now = Date.now()) {
  const value = /^\d+$/.test(String(text).trim()) ? Number(text) : Date.parse(text)
  if (!Number.isFinite(value) || !/\d/.test(String(text))) {
    throw new UsageError(`--${name} must be an ISO time such as 2026-11-23T17:00:00Z, or epoch milliseconds, got '${text}'`)
  }
  if (value <= now) throw new UsageError(`--${name} ${new Date(value).toISOString()} is in the past (now ${new Date(now).toISOString()})`)
  return value
}

/**
 * A number > 0, or a UsageError naming the option.
 * @param {string} name option name, for the message
 * @param {unknown} value
 * @returns {number}
 */
export function positiveNumber (name, value) {
  const number = Number(value)
  if (!Number.isFinite(number) || number <= 0) throw new UsageError(`--${name} must be a number > 0, got '${value}'`)
  return number
}

/**
 * Splits a comma-separated option into its trimmed, non-empty items.
 * @param {string} text
 * @returns {string[]}
 */
export function commaList (text) {
  return text.split(',').map((item) => item.trim()).filter(Boolean)
}

/**
 * Checks a --url: ws:// or wss://, returned without a trailing slash.
 * @param {string} text
 * @returns {string}
 */
export function parseWsUrl (text) {
  let url
  try {
    url = new URL(text)
  } catch {
    throw new UsageError(`--url '${text}' is not a URL (expected ws://host:port)`)
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') {
    throw new UsageError(`--url must start with ws:// or wss://, got '${text}'`)
  }
  return url.href.replace(/\/$/, '')
}

/**
 * Reads `[host:]port`.
 * @param {string} text
 * @param {string} defaultHost used when only a port is given
 * @returns {[string, number]}
 */
export function hostAndPort (text, defaultHost) {
  const match = /^(?:(.+):)?(\d+)$/.exec(text)
  if (!match) throw new UsageError(`expected [host:]port, got '${text}'`)
  const port = wholeNumber('port', match[2], 0)
  if (port > 65535) throw new UsageError(`a port is at most 65535, got ${port}`)
  // [::1]:7070 names an IPv6 host the way URLs do; the brackets are not part of the address.
  return [match[1]?.replace(/^\[(.*)\]$/, '$1') ?? defaultHost, port]
}

/** Options that run a user's own JSON document instead of a built-in test (clients and compare). */
export const PAYLOAD_OPTIONS = {
  payload: { describe: 'your own JSON document, in place of a test (schema inferred unless --proto)', type: 'string' },
  proto: { describe: 'your .proto for --payload (with --type)', type: 'string' },
  type: { describe: 'the message type in --proto, e.g. shop.Order', type: 'string' },
  'allow-lossy': { describe: 'run even if the schema changes values (the report says lossy)', type: 'boolean', default: false }
}

/** --codec-module, shared by every command that names a format. */
export const CODEC_MODULE_OPTION = {
  'codec-module': { describe: 'an ES module that adds a wire format (docs/codecs.md); repeatable', type: 'array', string: true, nargs: 1, default: [] }
}

/**
 * Adds the formats of --codec-module's files, then checks that each format named is known.
 * @param {string[]} files --codec-module, as given
 * @param {string[]} formats the formats the command line names
 * @returns {Promise<string[]>} the modules' absolute paths, for the threads and processes a run starts
 * @throws {UsageError} one line, for a bad module or an unknown format
 */
export async function codecModulesFor (files, formats) {
  await addCodecModules(files)
  const unknown = formats.find((format) => !formatNames().includes(format))
  if (unknown !== undefined) throw new UsageError(unknownFormat(unknown))
  return codecModules()
}

/**
 * The `--payload` options as given, or null when a built-in test runs.
 * @param {{payload?: string, proto?: string, type?: string}} args
 * @returns {{payload: string, proto?: string, type?: string}|null}
 */
export function payloadFiles (args) {
  if (!args.payload) {
    if (args.proto || args.type) throw new UsageError('--proto and --type go with --payload <file.json>')
    return null
  }
  return { payload: args.payload, proto: args.proto, type: args.type }
}
