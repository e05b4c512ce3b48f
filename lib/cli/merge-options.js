// The merge command's command line (bin/merge.js).
import { commandLine } from './parser.js'
import { programName } from './program.js'
import { outOptions, parseOutputs } from './outputs.js'

/**
 * Parses `node bin/merge.js`'s command line.
 * @param {string[]} argv process.argv
 * @returns {Promise<{files: string[], json: boolean, out?: string, outputs: import('./outputs.js').Outputs, hdrOut?: string,
 *   html?: string, assert: string[]}>} outputs: --out's streams, --tag (the run id is the parts')
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
      ...outOptions({ report: 'a file (or json=FILE) gets the merged JSON report', when: 'once', runId: 'the parts\'', interval: false }),
      'hdr-out': { describe: 'write the merged per-second histograms as an HdrHistogram interval log', type: 'string' },
      html: { describe: 'also write the merged report as an HTML page (seconds, stages, percentiles)', type: 'string' },
      assert: { describe: 'threshold on the merged report, repeatable (as for the clients)', type: 'array', string: true, default: [] }
    })
    .example(`${program} host-*.json --assert "p99<20ms"`, 'one report for a multi-host run, checked')
    .parseAsync()
  const { files, json, hdrOut, html, assert } = args
  const outputs = parseOutputs(args, { runId: false })
  return { files, json, out: outputs.file, outputs, hdrOut, html, assert }
}
