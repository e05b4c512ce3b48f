// Headless Chromium for the tools that render pages (tools/screenshot.js) and the tests that drive
// them: Debian's Chromium on a closed network, nothing downloaded.

/** Debian's Chromium: .ci/run installs it with apt-get; playwright-core never downloads a browser. */
export const CHROMIUM = '/usr/bin/chromium'

/**
 * Launches headless Chromium on a closed network: every request that is not to a file: URL or
 * loopback is aborted and recorded, so a test can assert a page needs nothing from outside.
 * @param {{executablePath?: string}} [options] another Chromium than Debian's (bench:browser's --chromium)
 * @returns {Promise<{browser: import('playwright-core').Browser, page: import('playwright-core').Page, blocked: string[]}>}
 */
export async function openBrowserPage ({ executablePath = CHROMIUM } = {}) {
  const { chromium } = await import('playwright-core')
  // Root cannot use Chromium's sandbox; these tests only load pages they generated themselves.
  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu'] })
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
