// Shared by the tests: real processes, real sockets, real browsers, no mocks.
import fs from 'node:fs'

export { PROJECT_ROOT as ROOT, runNodeScript as runScript, startServerProcess } from '../lib/processes.js'

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
