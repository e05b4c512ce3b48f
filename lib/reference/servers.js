// The reference servers in other languages (servers/<name>/, docs/protocol.md): each folder holds a
// server.json saying how to check its toolchain, how to build it (rebuilt only when a source is
// newer than its output), what to run and which formats it serves. Nothing else names a language:
// a new one is a new folder. The program run is the server itself or a script that execs it, never
// a wrapper holding it as a child, so that the process a starter holds is the server (docs/protocol.md, "CPU").
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { PROJECT_ROOT } from '../processes.js'

export const SERVERS_DIR = path.join(PROJECT_ROOT, 'servers')

/**
 * @typedef {object} ReferenceServer
 * @property {string} name the folder's name, as --server and WSBENCH_SERVER take it
 * @property {string} dir
 * @property {string} description
 * @property {string[]} formats the formats it serves
 * @property {{commands: string[][], missing: string}} toolchain the commands that must run for a build, and what to install when one cannot
 * @property {{command: string[], output: string, sources: string[], match: string}} build paths from dir
 * @property {string} run the program to run, from dir
 */

/** @returns {ReferenceServer|null} the server of a folder, or null when it has no server.json */
function readManifest (name) {
  const dir = path.join(SERVERS_DIR, name)
  const file = path.join(dir, 'server.json')
  if (!fs.existsSync(file)) return null
  return { name, dir, ...JSON.parse(fs.readFileSync(file, 'utf8')) }
}

/** Every reference server, by name: the folders of servers/ with a server.json. */
export const REFERENCE_SERVERS = fs.existsSync(SERVERS_DIR)
  ? fs.readdirSync(SERVERS_DIR).sort().map(readManifest).filter(Boolean)
  : []

/** The names of the reference servers (go, java, ...). */
export const REFERENCE_SERVER_NAMES = REFERENCE_SERVERS.map((server) => server.name)

/**
 * A reference server by name.
 * @param {string} name
 * @returns {ReferenceServer}
 * @throws {Error} naming the servers there are
 */
export function referenceServer (name) {
  const server = REFERENCE_SERVERS.find((candidate) => candidate.name === name)
  if (!server) throw new Error(`no reference server '${name}' in servers/: expected one of ${REFERENCE_SERVER_NAMES.join(', ')}`)
  return server
}

/**
 * How a server asks to be warmed up before it is measured: a reference server's server.json
 * `warmup` (the JVM compiles for longer than V8 or Go need), nothing for node or an unknown name.
 * @param {string} name
 * @returns {{startMs?: number, generations?: number}}
 */
export function warmupOf (name) {
  return REFERENCE_SERVERS.find((server) => server.name === name)?.warmup ?? {}
}

/**
 * Whether the server's toolchain runs here: every command of its server.json's toolchain.
 * @param {string} name
 * @returns {boolean}
 */
export function toolchainAvailable (name) {
  return referenceServer(name).toolchain.commands.every(([program, ...args]) => spawnSync(program, args, { stdio: 'ignore' }).status === 0)
}

/** The newest modification time among the sources (files whose names match), the output's own folder aside. */
function newestSource (server) {
  const match = new RegExp(server.build.match)
  const outputDir = path.dirname(path.join(server.dir, server.build.output))
  const newest = (file) => {
    const stat = fs.statSync(file, { throwIfNoEntry: false })
    if (!stat) return 0
    if (!stat.isDirectory()) return match.test(path.basename(file)) ? stat.mtimeMs : 0
    if (file === outputDir && file !== server.dir) return 0
    return Math.max(0, ...fs.readdirSync(file).map((entry) => newest(path.join(file, entry))))
  }
  return Math.max(...server.build.sources.map((source) => newest(path.join(server.dir, source))))
}

/**
 * Builds a reference server unless its output is newer than every source, and returns the program
 * that runs it (its arguments follow).
 * @param {string} name
 * @param {{force?: boolean, output?: 'stderr'|'pipe'}} [options] output: where the build's own output goes: this
 *   process's stderr (never its stdout: `npm run server:NAME` takes that for the program's path), or kept for the error
 * @returns {string}
 * @throws {Error} when the toolchain is missing (one line naming what to install) or the build fails, with the build's output
 */
export function buildReferenceServer (name, { force = false, output = 'pipe' } = {}) {
  const server = referenceServer(name)
  const built = path.join(server.dir, server.build.output)
  const upToDate = fs.existsSync(built) && fs.statSync(built).mtimeMs >= newestSource(server)
  const program = path.join(server.dir, server.run)
  if (!force && upToDate) return program
  const what = `the ${name} server`
  // Checked first: a build tool that starts without its compiler fails many lines later, and unclearly.
  if (!toolchainAvailable(name)) throw new Error(`cannot build ${what}: ${server.toolchain.missing}`)
  const [command, ...args] = server.build.command
  const stream = output === 'stderr' ? 2 : 'pipe'
  const run = spawnSync(command, args, { cwd: server.dir, encoding: 'utf8', stdio: ['ignore', stream, stream] })
  if (run.error) throw new Error(`cannot build ${what}: ${run.error.message}`)
  if (run.status !== 0) {
    const said = `${run.stdout ?? ''}${run.stderr ?? ''}`.trim()
    throw new Error(`cannot build ${what} (${command} exited with ${run.status})${said ? `:\n${said}` : ''}`)
  }
  // A build that found nothing to do may leave its output's time as it was: it is up to date now.
  const now = new Date()
  fs.utimesSync(built, now, now)
  return program
}
