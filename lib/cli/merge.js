// The merge command (bin/merge.js): client reports from several processes or hosts, one report.
import { readFile } from 'node:fs/promises'
import { UsageError } from '../errors.js'
import { printPrebuiltHelp } from './help.js'

/**
 * Reads the report files, merges them exactly and delivers the result as a client would.
 * @param {string[]} argv process.argv
 * @returns {Promise<number>} exit code: 0 when every message was acknowledged and every threshold held
 */
export async function runMergeCli (argv) {
  if (printPrebuiltHelp('merge', argv)) return 0
  const { parseMergeArgs } = await import('./merge-options.js')
  const options = await parseMergeArgs(argv)
  const [{ mergeReports }, { deliver }] = await Promise.all([import('../report/merge.js'), import('./deliver.js')])
  const reports = await Promise.all(options.files.map(async (file) => {
    try {
      return JSON.parse(await readFile(file, 'utf8'))
    } catch (err) {
      throw new UsageError(`${file}: ${err.code ?? err.message}`)
    }
  }))
  const merged = mergeReports(reports)
  const { startSpreadMs, overlapMs, overlapping } = merged.windows
  if (merged.generator?.saturated) process.stderr.write('warning: a part\'s client was saturated (its event loop busy nearly all the time, or late): those latencies include its own queueing\n')
  // A merged figure only means "the load of all the parts together" if they measured together.
  if (!overlapping) process.stderr.write(`warning: the parts' measured phases do not overlap (starts ${startSpreadMs} ms apart): they did not load the server together; use --start-at\n`)
  else if (startSpreadMs > 0) process.stderr.write(`measured phases: starts ${startSpreadMs} ms apart, all measuring together for ${overlapMs} ms\n`)
  return deliver(await streamMerged(merged, options.outputs), options)
}

/**
 * --out's streams for a merged report: pushed once, labelled host and instance "merged" (no one process
 * measured it), with the parts' run id unless --tag gives one.
 */
async function streamMerged (merged, outputs) {
  const { defaultRunId, openStream } = await import('./outputs.js')
  const tags = { ...merged.tags, ...outputs.tags }
  tags.testid ??= defaultRunId(merged.startAt)
  const stream = await openStream({ ...outputs, tags }, merged, { host: 'merged', instance: 'merged' })
  return stream.finish(merged)
}
