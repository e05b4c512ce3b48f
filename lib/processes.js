// Child processes of this project's own scripts: clients run this way in comparisons, servers in
// benchmarks and tests, each with its own event loop, as a user's would be.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
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
  endWithThisProcess(child, 'SIGTERM')
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

/** Children ended with this process (servers started here, brokers), still running, with the signal that ends each. */
const owned = new Map()

/**
 * Ends `child` with this process, however it exits: at exit, and on SIGINT or SIGTERM, which would
 * otherwise end it without its exit handlers (compare stopped with SIGTERM had left its servers
 * running). On those the children are ended at once; the process then exits unless something
 * else listens for the signal (network shaping and hosts tear down first, then raise it again).
 * @param {import('node:child_process').ChildProcess} child
 * @param {'SIGTERM'|'SIGKILL'} signal SIGTERM lets a server stop itself; brokers keep nothing, SIGKILL
 */
export function endWithThisProcess (child, signal) {
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

/**
 * Undoing that must happen even when this process is interrupted (a cgroup, network namespaces:
 * they outlive it): `undo` runs once, on the first call of the function returned or on SIGINT or
 * SIGTERM, after which the signal does what it would have done.
 * @param {() => Promise<void>} undo
 * @returns {() => Promise<void>} runs `undo` once and stops listening for the signals
 */
export function undoOnSignal (undo) {
  let undone = null
  const once = () => {
    undone ??= undo().finally(() => {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
    })
    return undone
  }
  const onSignal = (signal) => once().finally(() => process.kill(process.pid, signal))
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  return once
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
