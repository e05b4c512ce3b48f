// npm run bench:capacity [-- capacity's options]: runs `npm run capacity` with those options (default
// --tests 3,4) and records its table as docs/results/capacity.json (BENCH_RESULTS_NAME for another
// run: capacity-aa, capacity-calibrate), with the figures the docs quote: each test's capacity per
// server core by format, its interval, and each ratio with its call.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { runNodeScript } from '../lib/processes.js'
import { describeCapacityRun } from '../lib/capacity/describe.js'
import { capacityNotes, capacityTableCells, capacityText, capacityVerdicts, ratioText } from '../lib/capacity/results.js'
import { npmCommand, printTable, startResults } from './support/results.js'

const DEFAULT_ARGS = ['--tests', '3,4']

const args = process.argv.slice(2)
const results = startResults('capacity', npmCommand('bench:capacity'))
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-capacity-'))
try {
  const run = await runNodeScript('bin/capacity.js', [...(args.length ? args : DEFAULT_ARGS), '--out', out, '--json'])
  if (run.code === 2) {
    process.stderr.write(run.stderr)
    process.exit(2)
  }
  const capacity = JSON.parse(run.stdout)
  const { header, body } = capacityTableCells(capacity)
  printTable(header, body)
  results.write({
    columns: header,
    rows: body,
    notes: [describeCapacityRun(capacity), ...capacityVerdicts(capacity), ...capacityNotes(capacity), ...(capacity.calibration?.lines ?? [])],
    figures: figuresOf(capacity)
  })
  process.exitCode = run.code
} finally {
  fs.rmSync(out, { recursive: true, force: true })
}

/**
 * The figures a sentence quotes, by test (its name: medium) and format, with the objective added
 * to the key when the run had several: medium-json (msgs/s per core), medium-json-interval (its
 * half-width), medium-protobuf-ratio (against the first format, with its call); and the run's length.
 */
function figuresOf ({ rows, settings, calibration }) {
  const figures = { elapsed: `${Math.round(settings.elapsedMs / 1000)} s` }
  for (const row of rows) {
    const test = row.test.split(' ').at(-1)
    const key = settings.slos.length > 1 ? `${test}-${row.slo.replace(/[^\w.]/g, '')}` : test
    for (const figure of row.figures) {
      const name = `${key}-${figure.format.replace(/#/g, '')}`
      figures[name] = capacityText(figure)
      if (figure.halfWidth !== null) figures[`${name}-interval`] = `±${(figure.halfWidth * 100).toFixed(1)}%`
      if (row.ratios[figure.format] !== undefined) figures[`${name}-ratio`] = row.ratios[figure.format] ? ratioText(row.ratios[figure.format]) : 'no ratio'
    }
  }
  if (calibration) figures.calibration = calibration.found ? 'found' : 'not found'
  return figures
}
