// npm run capacity: how many msgs/s one server core takes per format within a latency objective.
import { printPrebuiltHelp } from './help.js'

/**
 * Runs the capacity searches, prints the table (or --json) on stdout and each probe on stderr.
 * @param {string[]} argv process.argv
 * @returns {Promise<number>} exit code: 0 when every format has a capacity (and a calibration found its plant)
 */
export async function runCapacityCli (argv) {
  if (printPrebuiltHelp('capacity', argv)) return 0
  const { parseCapacityArgs } = await import('./capacity-options.js')
  const options = await parseCapacityArgs(argv)
  const { findCapacity, writeCapacity } = await import('../capacity/runner.js')
  const { capacityNotes, capacityVerdicts, formatCapacityTable } = await import('../capacity/results.js')
  const { describeCapacityRun } = await import('../capacity/describe.js')
  const results = await findCapacity({ ...options, progress: (line) => process.stderr.write(`${line}\n`) })
  const files = await writeCapacity(options.out, results)
  if (options.json) {
    process.stdout.write(`${JSON.stringify(results)}\n`)
  } else {
    process.stdout.write(`${describeCapacityRun(results)}\n\n${formatCapacityTable(results)}\n\n` +
      `${[...capacityVerdicts(results), ...capacityNotes(results), ...(results.calibration?.lines ?? [])].join('\n')}\n`)
  }
  process.stderr.write(`wrote ${files.join(', ')} in ${(results.settings.elapsedMs / 1000).toFixed(1)} s\n`)
  const found = results.rows.every((row) => row.figures.every((figure) => figure.status === 'found'))
  return found && (results.calibration?.found ?? true) ? 0 : 1
}
