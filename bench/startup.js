// npm run bench:startup — how long a command takes to print --help, and its peak memory: wall
// time from hyperfine (median of BENCH_RUNS whole-process runs) and peak RSS from /usr/bin/time
// (median of as many runs). BENCH_BEFORE=<git ref> measures that commit too, in the same run
// (a temporary git worktree sharing node_modules), so before and after meet the same noise.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PROJECT_ROOT } from '../lib/processes.js'
import { checkout } from './support/checkout.js'
import { printRow, startResults } from './support/results.js'
import { median } from './support/statistics.js'

const RUNS = Number(process.env.BENCH_RUNS ?? 20)
const BEFORE = process.env.BENCH_BEFORE
const COMMANDS = ['client_json.js --help', 'server.js --help', 'bin/compare.js --help']

for (const tool of ['hyperfine', '/usr/bin/time']) {
  if (spawnSync(tool, ['--version']).error) {
    process.stderr.write(`bench:startup needs ${tool} (apt-get install hyperfine time)\n`)
    process.exit(2)
  }
}

/** Median wall seconds of `node <command>` in cwd, by hyperfine. */
function wallSeconds (cwd, command) {
  const out = path.join(os.tmpdir(), `startup-${process.pid}.json`)
  execFileSync('hyperfine', ['--warmup', '3', '--runs', String(RUNS), '--export-json', out, '--style', 'none', `node ${command}`], { cwd, stdio: 'ignore' })
  const { results } = JSON.parse(fs.readFileSync(out, 'utf8'))
  fs.rmSync(out)
  return results[0].median
}

/** Median peak RSS in MB of `node <command>` in cwd, by /usr/bin/time. */
function peakMegabytes (cwd, command) {
  const peaks = Array.from({ length: RUNS }, () => {
    const run = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, ...command.split(' ')], { cwd, encoding: 'utf8' })
    return Number(run.stderr.trim().split('\n').pop()) / 1024
  })
  return median(peaks)
}

const results = startResults('startup', `${BEFORE ? `BENCH_BEFORE=${BEFORE} ` : ''}npm run bench:startup`)
const trees = [['this commit', PROJECT_ROOT]]
const before = BEFORE && checkout(BEFORE)
if (before) trees.unshift([`before (${BEFORE})`, before.dir])
const rows = []
try {
  // Two floors for the figures: node itself, and node importing yargs (the command-line parser) alone.
  const floors = { '-e 0': 'node alone', 'bench/support/yargs-alone.js': 'yargs alone' }
  for (const command of [...Object.keys(floors), ...COMMANDS]) {
    for (const [label, dir] of floors[command] ? [[floors[command], PROJECT_ROOT]] : trees) {
      rows.push([`node ${command}`, label, wallSeconds(dir, command).toFixed(3), peakMegabytes(dir, command).toFixed(1)])
    }
  }
} finally {
  before?.remove()
}
const columns = ['command', 'code', 'wall s (median)', 'peak RSS MB (median)']
console.log(`# bench:startup — median of ${RUNS} runs each`)
printRow(columns)
console.log('|---|---|---:|---:|')
for (const row of rows) printRow(row)
results.write({ columns, rows, notes: [`median of ${RUNS} whole-process runs each; wall time by hyperfine, peak RSS by /usr/bin/time -f %M`] })
