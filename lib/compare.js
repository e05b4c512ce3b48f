import { runNodeScript } from './child-process.js'
import { startServer } from './server.js'
import { resolveTest } from './payloads.js'
import { formatSideBySide } from './report.js'

/** The two contenders, in the order reports show them (ratios are second / first). */
export const COMPARED_FORMATS = ['json', 'protobuf']

/**
 * Runs one load client as a child process, exactly as a user would, and returns its `--json`
 * report. A client that fails still prints its partial report; that report is returned as is.
 * @param {string} format 'json' or 'protobuf'
 * @param {string[]} args arguments after the script name (test, messages, options)
 * @returns {Promise<object>} the parsed report
 */
export async function runClientProcess (format, args) {
  const { code, stdout, stderr } = await runNodeScript(`client_${format}.js`, [...args, '--json'])
  try {
    return JSON.parse(stdout)
  } catch {
    throw new Error(`client_${format}.js exited with ${code}: ${stderr.trim() || 'no report'}`)
  }
}

/**
 * Runs every selected test on every network profile with both formats against an embedded server
 * and prints the reports side by side.
 * @param {object} options
 * @param {string[]} options.tests test numbers or names
 * @param {string[]} options.profiles network profiles ('none' for no shaping)
 * @param {boolean} options.compress permessage-deflate on both ends
 * @param {number} options.messages
 * @param {number} options.inflight
 * @param {number} options.connections
 * @param {number} options.warmup
 * @param {(text: string) => void} options.print
 * @returns {Promise<object[]>} every report, in run order
 */
export async function compareFormats ({ tests, profiles, compress, messages, inflight, connections, warmup, print }) {
  const server = await startServer({ port: 0, compress })
  const reports = []
  try {
    for (const name of tests) {
      const test = resolveTest(name)
      for (const profile of profiles) {
        const pair = []
        for (const format of COMPARED_FORMATS) {
          pair.push(await runClientProcess(format, [
            test.name, String(messages), '--url', server.url, '--throttle', profile,
            '--inflight', String(inflight), '--connections', String(connections), '--warmup', String(warmup),
            ...(compress ? ['--compress'] : [])
          ]))
        }
        print(formatSideBySide(pair))
        reports.push(...pair)
      }
    }
  } finally {
    await server.close()
  }
  return reports
}
