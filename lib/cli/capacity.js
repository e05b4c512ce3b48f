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
  const { capacityVerdicts, formatCapacityTable } = await import('../capacity/results.js')
  const { describeCapacityRun } = await import('../capacity/describe.js')
  const results = await findCapacity({ ...options, progress: (line) => process.stderr.write(`${line}\n`) })
  const files = await writeCapacity(options.out, results)
  if (options.json) {
    process.stdout.write(`${JSON.stringify(results)}\n`)
  } else {
    const notes = results.rows.flatMap((row) => row.figures.filter((figure) => figure.status === 'generator-bound').map((figure) =>
      `${figure.format} on test ${row.test}: the generator could not keep up at ${figure.limitRate}/s before the server failed; ` +
      'this is not the server\'s capacity. Give the generator more room: a smaller --server-cpus (0.5), or a machine with more cores'))
    process.stdout.write(`${describeCapacityRun(results)}\n\n${formatCapacityTable(results)}\n\n` +
      `${[...capacityVerdicts(results), ...notes, ...(results.calibration?.lines ?? [])].join('\n')}\n`)
  }
  process.stderr.write(`wrote ${files.join(', ')} in ${(results.settings.elapsedMs / 1000).toFixed(1)} s\n`)
  const found = results.rows.every((row) => row.figures.every((figure) => figure.status === 'found'))
  return found && (results.calibration?.found ?? true) ? 0 : 1
}
