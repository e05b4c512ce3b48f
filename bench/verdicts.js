#!/usr/bin/env node
// npm run bench:verdicts — do a comparison's calls hold? Runs A/A comparisons (`npm run compare --
// --formats json,json`: the same format twice, where every better or worse is a false call) with
// each design and counts their false calls among the latency, throughput and CPU cells, beside
// the smallest difference each could tell. Designs: this commit's default, with BENCH_NO_PIN=1
// also this commit with --no-pin, and with BENCH_BEFORE=<git ref> the code of that commit (in a
// temporary worktree sharing node_modules), all in one run, interleaved, so they meet the same machine.
// BENCH_RUNS (default 3) A/A runs of each; BENCH_ARGS adds compare options to every run
// (e.g. "--tests 3,5"); the result file is docs/results/verdicts.json.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PROJECT_ROOT, runNodeScript } from '../lib/processes.js'
import { checkout } from './support/checkout.js'
import { startResults } from './support/results.js'
import { median } from './support/statistics.js'

const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const BEFORE = process.env.BENCH_BEFORE
const EXTRA = (process.env.BENCH_ARGS ?? '').split(' ').filter(Boolean)
/** The cells whose calls can be false in an A/A run: bytes do not vary by chance. */
const TIMED = ['p50', 'p99', 'rate', 'clientCpu', 'serverCpu', 'clientCodec', 'serverCodec']

const results = startResults('verdicts', 'npm run bench:verdicts')
const before = BEFORE && checkout(BEFORE)
const designs = [
  ...(before ? [{ name: `before (${BEFORE})`, dir: before.dir, args: [] }] : []),
  ...(process.env.BENCH_NO_PIN ? [{ name: 'this commit, --no-pin', dir: PROJECT_ROOT, args: ['--no-pin'] }] : []),
  { name: 'this commit', dir: PROJECT_ROOT, args: [] }
]
const outcomes = new Map(designs.map((design) => [design, []]))
try {
  for (let run = 1; run <= RUNS; run++) {
    for (const design of designs) {
      process.stderr.write(`A/A run ${run}/${RUNS}: ${design.name}\n`)
      outcomes.get(design).push(await aaRun(design))
    }
  }
} finally {
  before?.remove()
}

const percent = (fraction) => fraction === null ? 'n/a' : `±${Math.round(fraction * 100)}%`
const rows = designs.map((design) => {
  const runs = outcomes.get(design)
  const cells = runs.flatMap((outcome) => outcome.cells)
  const falseCalls = cells.filter((cell) => cell.call === 'better' || cell.call === 'worse')
  const generations = runs.flatMap((outcome) => outcome.generations)
  const loads = runs.flatMap((outcome) => outcome.loads)
  return [
    design.name,
    runs.length,
    cells.length,
    falseCalls.length,
    runs.filter((outcome) => outcome.cells.some((cell) => cell.call === 'better' || cell.call === 'worse')).length,
    falseCalls.map((cell) => `${cell.test} ${cell.metric} ${cell.call}`).join('; ') || 'none',
    percent(median(cells.filter((cell) => cell.metric === 'p50').map((cell) => cell.resolution))),
    percent(median(cells.map((cell) => cell.resolution).filter((value) => value !== null))),
    `${Math.min(...generations)}-${Math.max(...generations)}`,
    Math.round(Math.max(...runs.map((outcome) => outcome.seconds))),
    loads.length ? `${Math.min(...loads)}-${Math.max(...loads)}` : 'n/a'
  ]
})
const table = {
  columns: ['design', 'A/A runs', 'timed cells', 'false calls', 'runs with a false call', 'which', 'median p50 resolution', 'median resolution', 'generations (or pairs) per test', 'longest run s', 'load average'],
  rows,
  notes: [
    `Each A/A run is \`npm run compare -- --formats json,json${EXTRA.length ? ` ${EXTRA.join(' ')}` : ''}\` with the design's code and options; ` +
      'timed cells are p50, p99, msgs/s, client and server CPU, and client and server codec time of every test (where a design has them); a false call is one called better or worse.',
    'Resolution: the half-width of the interval behind each call, as a fraction of 1 (a difference smaller than it could not be told from none).',
    ...(before ? [`${BEFORE}: ${execFileSync('git', ['log', '-1', '--format=%s', BEFORE], { cwd: PROJECT_ROOT, encoding: 'utf8' }).trim().slice(0, 100)}`] : [])
  ]
}
process.stdout.write(`${[table.columns, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n')}\n`)
results.write(table)

/** One A/A comparison with a design: its timed cells (test, metric, call, resolution), pairs per test and duration. */
async function aaRun ({ dir, args }) {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'verdicts-'))
  const started = Date.now()
  const script = path.join(dir, 'bin/compare.js')
  const { code, stderr } = await runNodeScript(script, ['--formats', 'json,json', ...args, ...EXTRA, '--out', out])
  if (code !== 0) throw new Error(`compare exited with ${code}: ${stderr.trim().split('\n').pop()}`)
  const comparison = JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8'))
  fs.rmSync(out, { recursive: true })
  const cells = comparison.rows.flatMap((row) => TIMED.filter((metric) => row.verdicts['json#2']?.[metric]).map((metric) => {
    const estimate = row.verdicts['json#2'][metric]
    // Older results carry no resolution: the interval's half-width on the log scale gives it.
    const resolution = estimate.resolution ?? (estimate.ci ? Math.sqrt(estimate.ci[1] / estimate.ci[0]) - 1 : null)
    return { test: row.test, metric, call: estimate.call, resolution }
  }))
  const generations = comparison.rows.map((row) => row.generations ?? row.pairs ?? comparison.settings.trials)
  const loads = (comparison.settings.generations ?? []).map((generation) => generation.loadAverage).filter((value) => value !== null)
  return { cells, generations, loads, seconds: (Date.now() - started) / 1000 }
}
