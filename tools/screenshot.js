#!/usr/bin/env node
// Renders a page (a report file or a URL) with headless Chromium into a PNG for the README.
// Usage: node tools/screenshot.js compare-report/report.html docs/compare-report.png
//        node tools/screenshot.js 'http://127.0.0.1:7070/' docs/browser-client.png --run medium
//        (--run: pick that test on the browser client, press Run, wait for the results)
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { openBrowserPage } from './headless-browser.js'

const [page, png, flag, test] = process.argv.slice(2)
if (!page || !png || (flag && (flag !== '--run' || !test))) {
  process.stderr.write('usage: node tools/screenshot.js <page.html|url> <out.png> [--run <test>]\n')
  process.exit(2)
}
const session = await openBrowserPage()
try {
  await session.page.goto(/^https?:/.test(page) ? page : pathToFileURL(path.resolve(page)).href)
  if (flag) {
    await session.page.waitForFunction(() => document.getElementById('status').textContent === 'ready')
    await session.page.selectOption('#test', test)
    await session.page.click('#run')
    await session.page.waitForFunction(() => /^(done|error)/.test(document.getElementById('status').textContent), null, { timeout: 600_000 })
  }
  await session.page.screenshot({ path: png, fullPage: true })
} finally {
  await session.browser.close()
}
