// The end of a client or merge run: the files asked for, the report on stdout, and the exit code.
import fs from 'node:fs/promises'
import { UsageError } from '../errors.js'
import { decodeHistogram, formatIntervalLog } from '../histogram.js'
import { formatReport } from '../report/report.js'
import { parseAssertions, violatedAssertions } from '../report/assertions.js'

/**
 * Writes the files asked for (--out, --hdr-out, --html), prints the report (human or --json), and works
 * out the exit code from the run and the --assert thresholds; shared by the clients and merge.
 * @param {object} report
 * @param {{out?: string, hdrOut?: string, html?: string, json: boolean, assert: string[]}} options
 * @returns {Promise<number>} 0 when every message was acknowledged and every threshold held, else 1
 */
export async function deliver (report, options) {
  const thresholds = parseAssertions(options.assert)
  if (options.out) await writeFile(options.out, `${JSON.stringify(report, null, 2)}\n`)
  if (options.hdrOut) await writeFile(options.hdrOut, formatIntervalLog(report))
  if (options.html) await writeFile(options.html, (await import('../report/html.js')).renderRunHtml(report))
  process.stdout.write(options.json ? `${JSON.stringify(report)}\n` : formatReport(report, decodeHistogram(report.histogram)))
  const violations = violatedAssertions(thresholds, report)
  if (!report.ok) process.stderr.write(`error: ${report.failure}\n`)
  for (const line of violations) process.stderr.write(`${line}\n`)
  return report.ok && violations.length === 0 ? 0 : 1
}

async function writeFile (file, text) {
  try {
    await fs.writeFile(file, text)
  } catch (err) {
    throw new UsageError(`cannot write ${file}: ${err.code ?? err.message}`)
  }
}
