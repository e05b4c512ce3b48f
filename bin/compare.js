#!/usr/bin/env node
// The main job: JSON vs protobuf on an embedded server, side by side. Usage: npm run compare -- [options]
import { compareFormats } from '../lib/compare.js'
import { parseCompareArgs } from '../lib/options.js'
import { runMain } from '../lib/errors.js'

runMain(async () => {
  const options = await parseCompareArgs(process.argv)
  const print = options.json ? () => {} : (text) => process.stdout.write(`${text}\n`)
  const reports = await compareFormats({ ...options, print })
  if (options.json) process.stdout.write(`${JSON.stringify(reports)}\n`)
  return reports.every((report) => report.ok) ? 0 : 1
})
