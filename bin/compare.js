#!/usr/bin/env node
// The main job: JSON vs protobuf (or the --formats chosen) on an embedded server, side by side. Usage: npm run compare -- [options]
import { compareFormats, writeComparison } from '../lib/compare.js'
import { formatComparisonTable } from '../lib/comparison.js'
import { parseCompareArgs } from '../lib/options.js'
import { runMain } from '../lib/errors.js'

runMain(async () => {
  const options = await parseCompareArgs(process.argv)
  const results = await compareFormats({ ...options, progress: (line) => process.stderr.write(`${line}\n`) })
  const files = await writeComparison(options.out, results)
  process.stdout.write(options.json ? `${JSON.stringify(results)}\n` : formatComparisonTable(results.rows, results.formats))
  process.stderr.write(`wrote ${files.join(', ')}\n`)
  return results.reports.every((report) => report.ok) ? 0 : 1
})
