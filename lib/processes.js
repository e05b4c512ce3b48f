// Child processes of this project's own scripts: clients run this way in comparisons, servers in
// benchmarks and tests, each with its own event loop, as a user's would be; and the brokers a
// fan-out across processes goes through (redis-server, nats-server), for tests and benchmarks.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** Absolute path of the project root, where the entry points live. */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url))

/**
 * Runs a Node script of this project in a child process to completion and collects its output.
 * Clients run this way in comparisons so that each measures from its own event loop, as a user's would.
 * @param {string} script path relative to the project root
 * @param {string[]} args
 * @param {{env?: object, cpus?: string, root?: string}} [options] extra environment variables; the CPUs to run on
 *   (see cpuPinning); root: another copy of the project to run the script from (a benchmark comparing two commits)
 * @returns {Promise<{code: number|null, signal: string|null, stdout: string, stderr: string}>}
 */
export function runNodeScript (script, args, { env = {}, cpus, root = PROJECT_ROOT } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(...nodeCommand([script, ...args], cpus), {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk) => { stdout += chunk })
    child.stderr.setEncoding('utf8').on('data', (chunk) => { stderr += chunk })
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
}

/**
 * Moves a running process, every thread of it, onto the given CPUs (taskset -a -p).
 * @param {number} pid
 * @param {string} cpus taskset's list, e.g. `1`
 * @returns {boolean} whether it moved
 */
export function pinProcess (pid, cpus) {
  // taskset answers 0 for a pid that does not exist (no threads to move): ask the kernel first.
  if (!fs.existsSync(`/proc/${pid}`)) return false
  return spawnSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' }).status === 0
}

/**
 * Starts a Node script of this project with an IPC channel (process.send on both sides), for a
 * child the parent drives step by step: compare's batch clients.
 * @param {string} script path relative to the project root
 * @param {{env?: object, cpus?: string, nodeFlags?: string[]}} [options] extra environment variables; the CPUs to
 *   run on; flags for node itself (V8's among them), before the script
 * @returns {import('node:child_process').ChildProcess} its stderr piped, for the parent to read
 */
export function forkNodeScript (script, { env = {}, cpus, nodeFlags = [] } = {}) {
  return spawn(...nodeCommand([...nodeFlags, script], cpus), {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc']
  })
}

/**
 * Watches a child's output, keeping its pipes drained and open (a closed pipe would kill a server
 * at its next line): `exited` resolves at exit with everything it printed; `printed(pattern)`
 * resolves with the match once stdout matches, and rejects if the child exits first.
 * @param {import('node:child_process').ChildProcess} child spawned with piped stdout and stderr
 * @returns {{exited: Promise<{code: number|null, stdout: string, stderr: string}>, printed: (pattern: RegExp) => Promise<RegExpMatchArray>}}
 */
export function watchOutput (child) {
  let stdout = ''
  let stderr = ''
  const waiting = new Set()
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    stdout += chunk
    for (const check of waiting) check()
  })
  child.stderr.setEncoding('utf8').on('data', (chunk) => { stderr += chunk })
  // 'close', not 'exit': a child may exit before the last of its output has been read.
  const exited = new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })))
  const printed = (pattern) => new Promise((resolve, reject) => {
    const check = () => {
      const match = stdout.match(pattern)
      if (!match) return
      waiting.delete(check)
      resolve(match)
    }
    waiting.add(check)
    check()
    exited.then(() => reject(new Error(`exited before printing ${pattern}: ${stdout}${stderr}`)))
  })
  return { exited, printed }
}

/**
 * Starts `node server.js` (or another script printing `listening on ws://...`) as a child process
 * on a free port and resolves once it accepts connections.
 * @param {string[]} [args] extra arguments
 * @param {{script?: string, command?: string, env?: object, args?: string[], readyPattern?: RegExp, cpus?: string, root?: string,
 *   nodeFlags?: string[]}} [options] args replace the default `--port 0`; command: a program to run in place of
 *   `node script` (a reference server's: lib/reference/servers.js); readyPattern's first group is the address it
 *   prints once ready; cpus: see cpuPinning; root: another copy of the project to run it from; nodeFlags: Node's
 *   and V8's flags for `node script` (not for a command)
 * @returns {Promise<{url: string, child: import('node:child_process').ChildProcess, output: () => string, stop: (signal?: string) => Promise<number|null>}>}
 *   rejected, where it exits first, with an error carrying its exitCode and output
 */
export function startServerProcess (args = [], {
  script = 'server.js', command, env = {}, args: scriptArgs = ['--port', '0'], readyPattern = /listening on (wss?:\/\/\S+)/, cpus, root = PROJECT_ROOT,
  nodeFlags = []
} = {}) {
  const argv = command === undefined
    ? nodeCommand([...nodeFlags, script, ...scriptArgs, ...args], cpus)
    : programCommand(command, [...scriptArgs, ...args], cpus)
  const child = spawn(...argv, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  own(child, 'SIGTERM')
  let output = ''
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk
      const match = output.match(readyPattern)
      if (!match) return
      resolve({
        url: match[1],
        child,
        output: () => output,
        async stop (signal = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal)
          return exited
        }
      })
    }
    child.stdout.setEncoding('utf8').on('data', onData)
    child.stderr.setEncoding('utf8').on('data', (chunk) => { output += chunk })
    exited.then((code) => reject(Object.assign(new Error(`${command ?? script} exited with ${code} before listening: ${output}`), { exitCode: code, output })))
  })
}

/** `node args`, or `taskset -c cpus node args` to keep the process on those CPUs. */
function nodeCommand (args, cpus) {
  return programCommand(process.execPath, args, cpus)
}

/** `program args`, or `taskset -c cpus program args`: taskset execs it, so the PID is the program's. */
function programCommand (program, args, cpus) {
  return cpus === undefined ? [program, args] : ['taskset', ['-c', cpus, program, ...args]]
}

/**
 * CPUs for a server and its clients that never share one: the first CPU this process may use for
 * the server, the next for the clients. On a 2-core machine the scheduler otherwise moves them
 * between sharing a core and not, and a trial's latency jumps with them (docs/method.md).
 * @param {string} [statusFile] the kernel's status of this process, for its allowed CPUs
 * @returns {{server: string, clients: string}|null} null with fewer than two CPUs, or no taskset (util-linux)
 */
export function cpuPinning (statusFile = '/proc/self/status') {
  const cpus = allowedCpus(statusFile)
  if (cpus.length < 2 || !hasTaskset()) return null
  return { server: String(cpus[0]), clients: String(cpus[1]) }
}

/**
 * The CPUs this process may run on (its affinity), from the kernel's status.
 * @param {string} [statusFile]
 * @returns {number[]} ascending; empty when the status cannot be read
 */
export function allowedCpus (statusFile = '/proc/self/status') {
  let list
  try {
    list = fs.readFileSync(statusFile, 'utf8').match(/^Cpus_allowed_list:\s*(\S+)/m)?.[1]
  } catch {
    return []
  }
  return (list ?? '').split(',').flatMap((part) => {
    const [first, last = first] = part.split('-').map(Number)
    return Array.from({ length: last - first + 1 }, (_, i) => first + i)
  }).filter(Number.isInteger)
}

/** @returns {boolean} whether taskset (util-linux) is here to pin processes with */
export function hasTaskset () {
  return spawnSync('taskset', ['-V']).status === 0
}

/** Each broker's server program and the Debian package that has it. */
const BROKER_PROGRAMS = { redis: 'redis-server', nats: 'nats-server' }
/** Where a broker's program may be beside PATH: Debian puts nats-server in /usr/sbin, off a user's PATH. */
const SYSTEM_DIRS = ['/usr/local/sbin', '/usr/sbin', '/sbin']
/** Longest wait for a broker to say it is ready. */
const BROKER_START_TIMEOUT_MS = 10_000

/**
 * Where a broker's server program is, or null when it is not installed.
 * @param {'redis'|'nats'} kind
 * @returns {string|null}
 */
export function brokerProgram (kind) {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), ...SYSTEM_DIRS]
  const found = dirs.map((dir) => path.join(dir, BROKER_PROGRAMS[kind])).find((file) => {
    try {
      fs.accessSync(file, fs.constants.X_OK)
      return true
    } catch {
      return false
    }
  })
  return found ?? null
}

/**
 * Starts a broker for the fan-out (redis-server or nats-server) on a free port, keeping nothing on
 * disk, and resolves once it is ready for clients. stop() ends it; so does the exit of this process.
 * @param {'redis'|'nats'} kind
 * @param {{host?: string}} [options]
 * @returns {Promise<{url: string, kind: string, process: import('node:child_process').ChildProcess, stop: () => Promise<void>}>}
 * @throws {Error} one line when the program is not installed, or when it exits or stays silent before it is ready
 */
export async function startBrokerProcess (kind, { host = '127.0.0.1' } = {}) {
  const program = brokerProgram(kind)
  if (!program) throw new Error(`${BROKER_PROGRAMS[kind]} not found: apt-get install ${BROKER_PROGRAMS[kind]}`)
  const port = await freePort(host)
  // nats-server's default max_payload, 1 MiB, is less than the large test payloads: raised to its
  // cap, 64 MiB, in a configuration file of its own, removed once it exits.
  const configDir = kind === 'nats' ? fs.mkdtempSync(path.join(os.tmpdir(), 'wsbench-nats-')) : null
  if (configDir) fs.writeFileSync(path.join(configDir, 'nats.conf'), 'max_payload: 64MB\n')
  const args = kind === 'redis'
    ? ['--port', String(port), '--bind', host, '--save', '', '--appendonly', 'no']
    : ['--addr', host, '--port', String(port), '--config', path.join(configDir, 'nats.conf')]
  const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  own(child, 'SIGKILL')
  const exited = new Promise((resolve) => {
    child.once('exit', resolve)
    child.once('error', () => resolve(null)) // could not be started after all
  })
  exited.then(() => {
    if (configDir) fs.rmSync(configDir, { recursive: true, force: true })
  })
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  }
  try {
    await brokerReady(child, kind, exited)
  } catch (err) {
    await stop()
    throw err
  }
  return { url: `${kind}://${host.includes(':') ? `[${host}]` : host}:${port}`, kind, process: child, stop }
}

/** Servers and brokers started here and still running, with the signal that ends each when this process does. */
const owned = new Map()

/**
 * Ends `child` with this process, however it exits: at exit, and on SIGINT or SIGTERM, which would
 * otherwise end it without its exit handlers (compare stopped with SIGTERM had left its servers
 * running). On those the children are ended at once; the process then exits unless something
 * else listens for the signal (network shaping and hosts tear down first, then raise it again).
 * @param {import('node:child_process').ChildProcess} child
 * @param {'SIGTERM'|'SIGKILL'} signal SIGTERM lets a server stop itself; brokers keep nothing, SIGKILL
 */
function own (child, signal) {
  for (const name of ['SIGINT', 'SIGTERM']) if (!process.listeners(name).includes(endOwned)) process.once(name, endOwned)
  owned.set(child, signal)
  child.once('exit', () => owned.delete(child))
}

/** On SIGINT or SIGTERM: ends the children, and this process unless another listener will. */
function endOwned (name) {
  for (const [child, signal] of owned) child.kill(signal)
  for (const other of ['SIGINT', 'SIGTERM']) process.off(other, endOwned)
  if (process.listenerCount(name) === 0) process.exit(128 + os.constants.signals[name])
}

process.on('exit', () => { for (const [child, signal] of owned) child.kill(signal) })

/** Resolves once the broker logs that it is ready; rejects with one line if it exits or stays silent first. */
function brokerReady (child, kind, exited) {
  const ready = kind === 'redis' ? /Ready to accept connections/ : /Server is ready/
  let output = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${BROKER_PROGRAMS[kind]} not ready within ${BROKER_START_TIMEOUT_MS / 1000} s`)), BROKER_START_TIMEOUT_MS)
    const onData = (chunk) => {
      output += chunk
      if (!ready.test(output)) return
      clearTimeout(timer)
      // Drained, not read: a full pipe would block the broker's logging.
      child.stdout.removeListener('data', onData).resume()
      child.stderr.removeListener('data', onData).resume()
      resolve()
    }
    child.stdout.setEncoding('utf8').on('data', onData)
    child.stderr.setEncoding('utf8').on('data', onData)
    exited.then((code) => {
      clearTimeout(timer)
      const last = output.trim().split('\n').pop() ?? ''
      reject(new Error(`${BROKER_PROGRAMS[kind]} exited with ${code} before it was ready${last ? `: ${last}` : ''}`))
    })
  })
}

/** A port free on `host` now (the kernel's pick for a listener that is then closed). */
function freePort (host) {
  return new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.once('error', reject)
    probe.listen(0, host, () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })
}

/**
 * This process's limit on open files (Node raises the soft limit to the hard one as it starts):
 * every connection holds one, so it caps the connections one process can serve or open.
 * @param {string} [limitsFile] the kernel's limits table, /proc/self/limits on Linux
 * @returns {number} the limit, or Infinity where it cannot be read (not Linux) or is unlimited
 */
export function openFileLimit (limitsFile = '/proc/self/limits') {
  let table
  try {
    table = fs.readFileSync(limitsFile, 'utf8')
  } catch {
    return Infinity
  }
  const line = table.split('\n').find((text) => text.startsWith('Max open files'))
  return Number(line?.split(/\s{2,}/)[1]) || Infinity
}
