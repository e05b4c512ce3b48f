// A load client run by a benchmark as a user runs one: its own process, its --json report read back.
import { DEFAULT_FORMATS } from '../../lib/defaults.js'
import { runNodeScript } from '../../lib/processes.js'

/**
 * Runs one load client as a child process, exactly as a user would (client_json.js,
 * client_protobuf.js, or client.js --format for the others), and returns its `--json` report. A
 * client that fails still prints its partial report; that report is returned as is.
 * @param {string} format a format's name
 * @param {string[]} args arguments after the script name (test, messages, options)
 * @param {string} [cpus] the CPUs to run it on (taskset's list)
 * @returns {Promise<object>} the parsed report
 */
export async function runClientProcess (format, args, cpus) {
  const [script, ...formatArgs] = DEFAULT_FORMATS.includes(format) ? [`client_${format}.js`] : ['client.js', '--format', format]
  const { code, stdout, stderr } = await runNodeScript(script, [...formatArgs, ...args, '--json'], { cpus })
  try {
    return JSON.parse(stdout)
  } catch {
    throw new Error(`${[script, ...formatArgs].join(' ')} exited with ${code}: ${stderr.trim() || 'no report'}`)
  }
}
