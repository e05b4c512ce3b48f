// The main job (npm run compare): JSON vs protobuf (or the --formats chosen) on an embedded
// server, side by side, written as results.json, results.md and report.html.
import { printPrebuiltHelp } from './help.js'

/**
 * Runs the comparison, prints its table (or --json) on stdout and progress on stderr.
 * @param {string[]} argv process.argv
 * @returns {Promise<number>} exit code: 0 when every run succeeded
 */
export async function runCompareCli (argv) {
  if (printPrebuiltHelp('compare', argv)) return 0
  const { parseCompareArgs } = await import('./compare-options.js')
  const options = await parseCompareArgs(argv)
  const { compareFormats, writeComparison } = await import('../compare/runner.js')
  const { formatComparisonTable, inconclusiveSummary, machineNote, verdictLines, verdictMeaning } = await import('../compare/results.js')
  const results = await compareFormats({ ...options, progress: (line) => process.stderr.write(`${line}\n`) })
  if (options.outputs.streams.length) results.outputs = await (await import('./outputs.js')).pushComparison(options.outputs, results)
  const files = await writeComparison(options.out, results)
  if (options.json) {
    process.stdout.write(`${JSON.stringify(results)}\n`)
  } else {
    const verdicts = verdictLines(results.rows, results.formats)
    const open = inconclusiveSummary(results.rows, results.formats)
    process.stdout.write(`${formatComparisonTable(results.rows, results.formats)}\n` +
      `${verdicts.length ? `${verdicts.join('\n')}\n\n${open ? `${open}\n\n` : ''}${verdictMeaning(results.family, results.settings.margin)}\n` : ''}`)
  }
  if (results.calibration && !options.json) process.stdout.write(`\n${results.calibration.lines.join('\n')}\n`)
  const note = machineNote(results)
  if (note) process.stderr.write(`note: ${note}\n`)
  const generations = Math.max(0, ...results.rows.map((row) => row.generations))
  process.stderr.write(`wrote ${files.join(', ')}; ${generations} generations in ${(results.settings.elapsedMs / 1000).toFixed(1)} s\n`)
  return results.reports.every((report) => report.ok) ? 0 : 1
}
