#!/usr/bin/env node
// Merges client reports from several processes or machines into one. Usage: node bin/merge.js a.json b.json [--json]
import { readFile } from 'node:fs/promises'
import { mergeReports } from '../lib/merge.js'
import { parseMergeArgs } from '../lib/options.js'
import { deliver } from '../lib/client.js'
import { UsageError, runMain } from '../lib/errors.js'

runMain(async () => {
  const options = await parseMergeArgs(process.argv)
  const reports = await Promise.all(options.files.map(async (file) => {
    try {
      return JSON.parse(await readFile(file, 'utf8'))
    } catch (err) {
      throw new UsageError(`${file}: ${err.code ?? err.message}`)
    }
  }))
  return deliver(mergeReports(reports), options)
})
