// The main job (npm run compare): JSON vs protobuf (or the --formats chosen) on an embedded
// server, side by side, written as results.json, results.md and report.html.
import { parseCompareArgs } from './compare-options.js'

/**
 * Runs the comparison, prints its table (or --json) on stdout and progress on stderr.
 * @param {string[]} argv process.argv
 * @returns {Promise<number>} exit code: 0 when every run succeeded
 */
export async function runCompareCli (argv) {
  const options = await parseCompareArgs(argv)
  const [{ compareFormats, writeComparison }, { formatComparisonTable }] = await Promise.all([import('../compare/runner.js'), import('../compare/results.js')])
  const results = await compareFormats({ ...options, progress: (line) => process.stderr.write(`${line}\n`) })
  const files = await writeComparison(options.out, results)
  process.stdout.write(options.json ? `${JSON.stringify(results)}\n` : formatComparisonTable(results.rows, results.formats))
  process.stderr.write(`wrote ${files.join(', ')}\n`)
  return results.reports.every((report) => report.ok) ? 0 : 1
}
