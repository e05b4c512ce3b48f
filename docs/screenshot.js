#!/usr/bin/env node
// Renders a page (a report file or a URL) with headless Chromium into a PNG for the README.
// Usage: node docs/screenshot.js compare-report/report.html docs/compare-report.png
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { openBrowserPage } from '../test/helpers.js'

const [page, png] = process.argv.slice(2)
if (!page || !png) {
  process.stderr.write('usage: node docs/screenshot.js <page.html|url> <out.png>\n')
  process.exit(2)
}
const session = await openBrowserPage()
try {
  await session.page.goto(/^https?:/.test(page) ? page : pathToFileURL(path.resolve(page)).href)
  await session.page.screenshot({ path: png, fullPage: true })
} finally {
  await session.browser.close()
}
