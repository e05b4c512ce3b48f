// Child processes of this project's own scripts: clients run this way in comparisons, servers in
// benchmarks and tests, each with its own event loop, as a user's would be.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** Absolute path of the project root, where the entry points live. */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url))

/**
 * Runs a Node script of this project in a child process to completion and collects its output.
 * Clients run this way in comparisons so that each measures from its own event loop, as a user's would.
 * @param {string} script path relative to the project root
 * @param {string[]} args
 * @param {{env?: object, root?: string}} [options] extra environment variables; root: another copy of the
 *   project to run the script from (a benchmark comparing two commits)
 * @returns {Promise<{code: number|null, signal: string|null, stdout: string, stderr: string}>}
 */
export function runNodeScript (script, args, { env = {}, root = PROJECT_ROOT } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
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
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })))
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
 * @param {{script?: string, env?: object, args?: string[], readyPattern?: RegExp, root?: string}} [options] args
 *   replace the default `--port 0`; readyPattern's first group is the address it prints once ready; root: another
 *   copy of the project to run it from
 * @returns {Promise<{url: string, child: import('node:child_process').ChildProcess, output: () => string, stop: (signal?: string) => Promise<number|null>}>}
 */
export function startServerProcess (args = [], {
  script = 'server.js', env = {}, args: scriptArgs = ['--port', '0'], readyPattern = /listening on (ws:\/\/\S+)/, root = PROJECT_ROOT
} = {}) {
  const child = spawn(process.execPath, [script, ...scriptArgs, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
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
    exited.then((code) => reject(new Error(`${script} exited with ${code} before listening: ${output}`)))
  })
}
