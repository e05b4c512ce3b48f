import fs from 'node:fs/promises'
import path from 'node:path'
import { runNodeScript } from './child-process.js'
import { startServer } from './server.js'
import { TESTS, loadPayload, resolveTest, testLabel } from './payloads.js'
import { buildComparisonResults, formatComparisonMarkdown } from './comparison.js'
import { renderHtmlReport } from './html-report.js'
import { loadCustomTest } from './custom-payload.js'
import { stringifyJsonExact } from './infer.js'

/** The question the tool settles; `--formats` adds (or swaps in) the others. Ratios are against the first. */
export const DEFAULT_FORMATS = ['json', 'protobuf']

/** Every built-in test, the default selection. */
export const ALL_TESTS = TESTS.map((test) => test.name)

/** Defaults per run, unless the command line says otherwise. */
export const DEFAULT_MESSAGES = 5000
export const DEFAULT_WARMUP = 500

/** Default runs stop at this much JSON per run, so the 12.9 MB `people` test takes seconds, not hours. */
export const DEFAULT_BYTES_PER_RUN = 256 * 1024 * 1024

/**
 * Runs one load client as a child process, exactly as a user would (client_json.js,
 * client_protobuf.js, or client.js --format for the others), and returns its `--json` report. A
 * client that fails still prints its partial report; that report is returned as is.
 * @param {string} format one of FORMATS
 * @param {string[]} args arguments after the script name (test, messages, options)
 * @returns {Promise<object>} the parsed report
 */
export async function runClientProcess (format, args) {
  const [script, ...formatArgs] = DEFAULT_FORMATS.includes(format) ? [`client_${format}.js`] : ['client.js', '--format', format]
  const { code, stdout, stderr } = await runNodeScript(script, [...formatArgs, ...args, '--json'])
  try {
    return JSON.parse(stdout)
  } catch {
    throw new Error(`${[script, ...formatArgs].join(' ')} exited with ${code}: ${stderr.trim() || 'no report'}`)
  }
}

/**
 * Message and warmup counts for one payload: what the user asked for, or the defaults capped so a
 * run sends at most DEFAULT_BYTES_PER_RUN of JSON (at least 10 messages).
 * @param {number} jsonBytes the payload's size as JSON
 * @param {{messages?: number, warmup?: number}} asked undefined where the user gave nothing
 * @returns {{messages: number, warmup: number}}
 */
export function runLength (jsonBytes, asked) {
  const messages = asked.messages ?? Math.max(10, Math.min(DEFAULT_MESSAGES, Math.floor(DEFAULT_BYTES_PER_RUN / jsonBytes)))
  const warmup = asked.warmup ?? Math.min(DEFAULT_WARMUP, Math.ceil(messages / 10))
  return { messages, warmup }
}

/**
 * What one client run is given to name its payload, and how big it is as JSON.
 * @param {string[]} tests built-in tests
 * @param {{payload: string, proto?: string, type?: string}|null} custom a user's payload instead
 * @param {boolean} allowLossy
 * @returns {Promise<Array<{label: string, args: string[], jsonBytes: number}>>}
 */
async function payloadsToRun (tests, custom, allowLossy) {
  if (custom) {
    // Loaded here too so a broken file or schema fails once, before the server starts.
    const test = await loadCustomTest(custom)
    const args = ['--payload', custom.payload, ...(custom.proto ? ['--proto', custom.proto, '--type', custom.type] : []), ...(allowLossy ? ['--allow-lossy'] : [])]
    return [{ label: testLabel(test), args, jsonBytes: Buffer.byteLength(stringifyJsonExact(test.payload)) }]
  }
  return tests.map(resolveTest).map((test) => ({ label: testLabel(test), args: [test.name], jsonBytes: Buffer.byteLength(JSON.stringify(loadPayload(test))) }))
}

/**
 * Runs every selected test (or the user's payload) on every network profile in every format
 * against an embedded server and assembles the results document (rows, ratios and every report
 * with its histogram).
 * @param {object} options
 * @param {string[]} [options.formats] in column order; ratios are against the first
 * @param {string[]} options.tests test numbers or names
 * @param {{payload: string, proto?: string, type?: string}|null} [options.custom] a user's payload instead of tests
 * @param {boolean} [options.allowLossy] run a custom payload even if its schema changes values
 * @param {string[]} options.profiles network profiles ('none' for no shaping)
 * @param {boolean} options.compress permessage-deflate on both ends
 * @param {string} [options.direction] up (default), down or echo
 * @param {number} [options.messages] per run; default: see {@link runLength}
 * @param {number} [options.warmup] per run; default: see {@link runLength}
 * @param {number} options.inflight
 * @param {number} options.connections
 * @param {(line: string) => void} options.progress told before each run
 * @returns {Promise<import('./comparison.js').ComparisonResults>}
 */
export async function compareFormats ({ formats = DEFAULT_FORMATS, tests, custom = null, allowLossy = false, profiles, compress, direction = 'up', messages, warmup, inflight, connections, progress }) {
  const payloads = await payloadsToRun(tests, custom, allowLossy)
  for (const payload of payloads) payload.length = runLength(payload.jsonBytes, { messages, warmup })
  const server = await startServer({ port: 0, compress })
  const reports = []
  try {
    for (const { label, args, length } of payloads) {
      for (const profile of profiles) {
        for (const format of formats) {
          progress(`test ${label}, network ${profile}: ${format}, ${length.messages} messages`)
          reports.push(await runClientProcess(format, [
            ...args, String(length.messages), '--url', server.url, '--throttle', profile,
            '--inflight', String(inflight), '--connections', String(connections), '--warmup', String(length.warmup), '--direction', direction,
            ...(compress ? ['--compress'] : [])
          ]))
        }
      }
    }
  } finally {
    await server.close()
  }
  return buildComparisonResults(reports, formats, {
    profiles,
    compress,
    direction,
    inflight,
    connections,
    runs: Object.fromEntries(payloads.map(({ label, length }) => [label, length]))
  })
}

/**
 * Writes the results as `results.json`, `results.md` and `report.html` into a directory.
 * @param {string} directory created if missing
 * @param {import('./comparison.js').ComparisonResults} results
 * @returns {Promise<string[]>} the paths written
 */
export async function writeComparison (directory, results) {
  await fs.mkdir(directory, { recursive: true })
  const files = [
    ['results.json', `${JSON.stringify(results, null, 2)}\n`],
    ['results.md', formatComparisonMarkdown(results)],
    ['report.html', renderHtmlReport(results)]
  ]
  return Promise.all(files.map(async ([name, text]) => {
    const file = path.join(directory, name)
    await fs.writeFile(file, text)
    return file
  }))
}
