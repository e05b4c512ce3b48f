import fs from 'node:fs/promises'
import path from 'node:path'
import { runNodeScript } from '../processes.js'
import { DEFAULT_BYTES_PER_RUN, DEFAULT_FORMATS, DEFAULT_MESSAGES, DEFAULT_WARMUP } from '../defaults.js'
import { startServer } from '../server/server.js'
import { loadPayload, resolveTest } from '../payloads/catalog.js'
import { testLabel } from '../report/report.js'
import { buildComparisonResults, formatComparisonMarkdown } from './results.js'
import { renderHtmlReport } from './html.js'
import { loadCustomTest } from '../schema/custom.js'
import { stringifyJsonExact } from '../schema/json-exact.js'

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
  const fitting = Math.floor(DEFAULT_BYTES_PER_RUN / jsonBytes)
  const messages = asked.messages ?? Math.max(10, Math.min(DEFAULT_MESSAGES, fitting))
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
  return tests.map(resolveTest).map((test) => ({
    label: testLabel(test),
    args: [test.name],
    jsonBytes: Buffer.byteLength(JSON.stringify(loadPayload(test)))
  }))
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
 * @returns {Promise<import('./results.js').ComparisonResults>}
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
 * @param {import('./results.js').ComparisonResults} results
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
