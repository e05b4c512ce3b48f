// Shared by tests and benchmarks: real processes, real sockets, no mocks.
import { spawn } from 'node:child_process'
import { PROJECT_ROOT as ROOT } from '../lib/child-process.js'

export { PROJECT_ROOT as ROOT, runNodeScript as runScript } from '../lib/child-process.js'

/**
 * Starts `node server.js` (or another script printing `listening on ws://...`) as a child process
 * on a free port and resolves once it accepts connections.
 * @param {string[]} [args] extra arguments
 * @param {{script?: string, env?: object, args?: string[], readyPattern?: RegExp}} [options] args replace the
 *   default `--port 0`; readyPattern's first group is the address it prints once ready
 * @returns {Promise<{url: string, child: import('node:child_process').ChildProcess, output: () => string, stop: (signal?: string) => Promise<number|null>}>}
 */
export function startServerProcess (args = [], { script = 'server.js', env = {}, args: scriptArgs = ['--port', '0'], readyPattern = /listening on (ws:\/\/\S+)/ } = {}) {
  const child = spawn(process.execPath, [script, ...scriptArgs, ...args], {
    cwd: ROOT,
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
