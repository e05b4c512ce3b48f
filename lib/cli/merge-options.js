// The merge command's command line (bin/merge.js).
import { commandLine } from './parser.js'
import { programName } from './program.js'

/**
 * Parses `node bin/merge.js`'s command line.
 * @param {string[]} argv process.argv
 * @returns {Promise<{files: string[], json: boolean, out?: string, hdrOut?: string, html?: string, assert: string[]}>}
 */
export async function parseMergeArgs (argv) {
  const program = programName('node bin/merge.js')
  const args = await commandLine(argv, `Usage: ${program} <report.json>... [options]\n\n` +
    'Merges client reports (--json or --out files) of one format and test, from several processes or\n' +
    'machines, into one: counts summed, latency histograms added exactly.')
    .command('$0 <files..>', false)
    .positional('files', { describe: 'report files', type: 'string' })
    .options({
      json: { describe: 'print the merged report as JSON', type: 'boolean', default: false },
      out: { describe: 'also write the merged JSON report to this file', type: 'string' },
      'hdr-out': { describe: 'write the merged per-second histograms as an HdrHistogram interval log', type: 'string' },
      html: { describe: 'also write the merged report as an HTML page (seconds, stages, percentiles)', type: 'string' },
      assert: { describe: 'threshold on the merged report, repeatable (as for the clients)', type: 'array', string: true, default: [] }
    })
    .example(`${program} host-*.json --assert "p99<20ms"`, 'one report for a multi-host run, checked')
    .parseAsync()
  const { files, json, out, hdrOut, html, assert } = args
  return { files, json, out, hdrOut, html, assert }
}
