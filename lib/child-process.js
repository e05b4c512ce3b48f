import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** Absolute path of the project root, where the entry points live. */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url))

/**
 * Runs a Node script of this project in a child process to completion and collects its output.
 * Clients run this way in comparisons so that each measures from its own event loop, as a user's would.
 * @param {string} script path relative to the project root
 * @param {string[]} args
 * @param {{env?: object}} [options] extra environment variables
 * @returns {Promise<{code: number|null, signal: string|null, stdout: string, stderr: string}>}
 */
export function runNodeScript (script, args, { env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: PROJECT_ROOT,
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
