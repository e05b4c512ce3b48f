// Shared by tests and benchmarks: real processes, real sockets, no mocks.
import fs from 'node:fs'
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

/** Debian's Chromium: .ci/run installs it with apt-get; playwright-core never downloads a browser. */
export const CHROMIUM = '/usr/bin/chromium'

/**
 * Why browser tests cannot run here, or false when they can. Outside CI a missing Chromium skips
 * them; in CI it fails them, so a broken install is never mistaken for a pass.
 * @returns {string|false}
 */
export function browserUnavailable () {
  if (fs.existsSync(CHROMIUM) || process.env.CI) return false
  return `no Chromium at ${CHROMIUM} (apt-get install chromium)`
}

/**
 * Launches headless Chromium on a closed network: every request that is not to a file: URL or
 * loopback is aborted and recorded, so a test can assert a page needs nothing from outside.
 * @returns {Promise<{browser: import('playwright-core').Browser, page: import('playwright-core').Page, blocked: string[]}>}
 */
export async function openBrowserPage () {
  const { chromium } = await import('playwright-core')
  // Root cannot use Chromium's sandbox; these tests only load pages they generated themselves.
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] })
  const page = await browser.newPage({ viewport: { width: 1240, height: 900 } })
  const blocked = []
  await page.route('**/*', (route) => {
    const url = new URL(route.request().url())
    if (url.protocol === 'file:' || url.hostname === '127.0.0.1' || url.hostname === 'localhost') return route.continue()
    blocked.push(url.href)
    return route.abort()
  })
  return { browser, page, blocked }
}
