// Result files: every benchmark writes what it measured to docs/results/<name>.json, with the
// command that made it and the machine it ran on; `npm run docs:results` renders them into the docs.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PROJECT_ROOT } from '../lib/processes.js'

/** Where result files live, one per benchmark. */
export const RESULTS_DIR = path.join(PROJECT_ROOT, 'docs/results')

/**
 * The machine a benchmark ran on, as the docs print it.
 * @returns {{cpus: number, model: string, memoryGiB: number, node: string, platform: string}}
 */
export function machine () {
  const cpus = os.cpus()
  return {
    cpus: cpus.length,
    model: cpus[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`
  }
}

/**
 * Starts timing a benchmark; `write` saves its table with the command, machine and duration.
 * @param {string} name file name without .json, e.g. 'engine'
 * @param {string} command the command that reproduces it, e.g. 'npm run bench:engine'
 * @returns {{write: (table: {columns: string[], rows: Array<Array<string|number>>, notes?: string[]}) => string}}
 *   write returns the file's path
 */
export function startResults (name, command) {
  const startedAt = new Date()
  return {
    write ({ columns, rows, notes = [] }) {
      const file = path.join(RESULTS_DIR, `${name}.json`)
      fs.mkdirSync(RESULTS_DIR, { recursive: true })
      const document = { name, command, machine: machine(), startedAt: startedAt.toISOString(), durationMs: Date.now() - startedAt.getTime(), columns, rows, notes }
      fs.writeFileSync(file, `${JSON.stringify(document, null, 2)}\n`)
      return file
    }
  }
}
