// Result files: every benchmark writes what it measured to docs/results/<name>.json, with the
// command that made it, its method and commit (lib/provenance.js) and the machine it ran on;
// `npm run docs:results` renders them into the docs.
// Under `node --test` (the benchmarks' own tests) nothing is written unless BENCH_RESULTS_DIR names
// a directory: a test run must not replace the published figures.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PROJECT_ROOT } from '../../lib/processes.js'
import { provenanceOf } from '../../lib/provenance.js'
import { methodsOf } from './methods.js'

/** Where result files live, one per benchmark (BENCH_RESULTS_DIR overrides). */
export const RESULTS_DIR = process.env.BENCH_RESULTS_DIR ? path.resolve(process.env.BENCH_RESULTS_DIR) : path.join(PROJECT_ROOT, 'docs/results')

/**
 * The machine a benchmark ran on, as the docs print it; the load average says how busy it was.
 * @returns {{cpus: number, model: string, memoryGiB: number, node: string, platform: string, loadAverage: number}}
 */
export function machine () {
  const cpus = os.cpus()
  return {
    cpus: cpus.length,
    model: cpus[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    loadAverage: Math.round(os.loadavg()[0] * 100) / 100
  }
}

/**
 * The command as run: BENCH_* variables set in the environment (other than BENCH_RESULTS_DIR) are
 * put in front, so that rerunning the recorded command measures the same thing.
 * @param {string} command
 * @returns {string}
 */
function withEnvironment (command) {
  const settings = Object.entries(process.env)
    .filter(([key]) => key.startsWith('BENCH_') && key !== 'BENCH_RESULTS_DIR' && !command.includes(`${key}=`))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => `${key}=${/^[\w.,:/@%+-]*$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`}`)
  return [...settings, command].join(' ')
}

/**
 * Writes one result document to <directory>/<name>.json.
 * @param {{name: string, command: string, methods?: Record<string, number>, commit?: string|null,
 *   machine: object, startedAt: string, durationMs: number,
 *   columns: string[], rows: Array<Array<string|number|null>>, notes: string[]}} document
 * @param {string} [directory] RESULTS_DIR unless given
 * @returns {string} the file's path
 */
export function writeResultFile (document, directory = RESULTS_DIR) {
  const file = path.join(directory, `${document.name}.json`)
  fs.mkdirSync(directory, { recursive: true })
  fs.writeFileSync(file, `${JSON.stringify(document, null, 2)}\n`)
  return file
}

/**
 * Prints one row of a markdown table on stdout, as the benchmarks show their tables while they run.
 * @param {Array<string|number>} cells
 */
export function printRow (cells) {
  console.log(`| ${cells.join(' | ')} |`)
}

/**
 * Prints a markdown table on stdout: its header, the separator and each row.
 * @param {string[]} columns
 * @param {Array<Array<string|number>>} rows
 */
export function printTable (columns, rows) {
  printRow(columns)
  printRow(columns.map(() => '---'))
  for (const cells of rows) printRow(cells)
}

/** Clock ticks per second of /proc/<pid>/stat's CPU times (USER_HZ, 100 on Linux). */
const CLOCK_TICKS = 100

/**
 * A process's CPU time so far (user and system), from /proc: for processes that are not ours to
 * ask (a broker's server), or that must be measured alike whatever they run (a bare sender, a server).
 * @param {number} pid
 * @returns {number} µs, in steps of 10 ms
 */
export function processCpuUs (pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 1e6 / CLOCK_TICKS
}

/**
 * A process's resident memory now, from /proc (Linux).
 * @param {number} pid
 * @returns {number} bytes, 0 when /proc does not say
 */
export function processRssBytes (pid) {
  const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) * 1024 : 0
}

/**
 * The command that reproduces this run: `npm run <script>`, and ` -- <arguments>` when it was given any.
 * @param {string} script the npm script, e.g. 'bench:hosts'
 * @returns {string}
 */
export function npmCommand (script) {
  const args = process.argv.slice(2).map(shellWord)
  return [`npm run ${script}`, ...(args.length ? ['--', ...args] : [])].join(' ')
}

/** An argument as a shell takes it back: quoted when it holds anything the shell reads (`p99<5ms`). */
const shellWord = (arg) => /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`

/**
 * Starts timing a benchmark; `write` saves its table with the command, machine and duration.
 * The machine (and its load average) is taken at the start, before the benchmark loads it.
 * @param {string} name file name without .json, e.g. 'engine'; BENCH_RESULTS_NAME overrides it, to keep
 *   a run with other settings beside the default one (e.g. size-codecs for bench:size over every codec)
 * @param {string} command the command that reproduces it, e.g. 'npm run bench:engine'
 * @returns {{write: (table: {columns: string[], rows: Array<Array<string|number>>, notes?: string[],
 *   figures?: Record<string, string>}) => string|null}} write returns the file's path, or null under node --test;
 *   figures are single values the docs quote in a sentence (<!-- figure:NAME.KEY -->), formatted as shown
 */
export function startResults (name, command) {
  name = process.env.BENCH_RESULTS_NAME || name
  const startedAt = new Date()
  const where = machine()
  const recorded = withEnvironment(command)
  const provenance = provenanceOf(methodsOf(command))
  return {
    write ({ columns, rows, notes = [], figures }) {
      if (process.env.NODE_TEST_CONTEXT && !process.env.BENCH_RESULTS_DIR) return null
      const document = {
        name,
        command: recorded,
        ...provenance,
        machine: where,
        startedAt: startedAt.toISOString(),
        durationMs: Date.now() - startedAt.getTime(),
        columns,
        rows,
        notes,
        figures
      }
      const file = writeResultFile(document)
      const relative = path.relative(process.cwd(), file)
      process.stderr.write(`wrote ${relative.startsWith('..') ? file : relative}\n`)
      return file
    }
  }
}
