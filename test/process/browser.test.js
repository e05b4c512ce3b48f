// The browser client in headless Chromium against node server.js.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { browserUnavailable, openBrowserPage, startServerProcess } from '../helpers.js'

test('browser client in headless Chromium: both formats on a small test up, and people down; accounting matches', { skip: browserUnavailable(), timeout: 120_000 }, async () => {
  const server = await startServerProcess()
  const { browser, page, blocked } = await openBrowserPage()
  const errors = []
  page.on('pageerror', (err) => errors.push(err.message))
  const status = () => page.textContent('#status')
  const runAndWait = async () => {
    await page.click('#run')
    await page.waitForFunction(() => /^(done|error)/.test(document.getElementById('status').textContent), null, { timeout: 100_000 })
    return page.evaluate(() => globalThis.benchResults)
  }
  try {
    await page.goto(server.url.replace('ws:', 'http:') + '/')
    await page.waitForFunction(() => document.getElementById('status').textContent === 'ready')
    assert.equal(await page.evaluate(() => globalThis.crossOriginIsolated), true, 'fine-grained performance.now()')

    await page.selectOption('#test', 'small')
    await page.fill('#messages', '200')
    await page.fill('#inflight', '4')
    const small = await runAndWait()
    assert.equal(await status(), 'done')
    assert.deepEqual(small.map((r) => [r.format, r.test, r.direction, r.client]), [['json', 'small', 'up', 'browser'], ['protobuf', 'small', 'up', 'browser']])
    for (const report of small) {
      assert.deepEqual(report.messages, { sent: 200, acked: 200, errors: 0, lost: 0 })
      assert.equal(report.inflight, 4)
      assert.ok(report.latencyMs.p50 > 0 && report.latencyMs.p50 <= report.latencyMs.p99 && report.latencyMs.p99 <= report.latencyMs.max)
      assert.match(report.histogram, /^HISTF/, 'the CLI\'s compressed HdrHistogram')
    }
    assert.deepEqual(small.map((r) => r.bytes.payloadPerMessage), [22, 6])
    assert.deepEqual(small.map((r) => r.bytes.written), [22 * 200, 6 * 200])
    const cells = await page.$$eval('#report td[data-format]', (tds) => tds.slice(0, 2).map((td) => td.textContent))
    assert.deepEqual(cells, ['200 / 200 / 0 / 0', '200 / 200 / 0 / 0'])
    assert.deepEqual(await page.$$eval('svg.chart path.series', (paths) => paths.map((p) => p.dataset.series)), ['json', 'protobuf'])

    await page.selectOption('#test', 'people')
    await page.selectOption('#direction', 'down')
    await page.fill('#messages', '2')
    await page.fill('#inflight', '1')
    const people = await runAndWait()
    assert.equal(await status(), 'done')
    for (const report of people) {
      assert.equal(report.direction, 'down')
      assert.deepEqual(report.messages, { sent: 2, acked: 2, errors: 0, lost: 0 })
      assert.equal(report.bytes.read, 2 * report.bytes.payloadPerMessage, 'two decoded payloads received')
    }
    assert.deepEqual(people.map((r) => r.bytes.payloadPerMessage), [12_850_022, 8_539_206])

    const downloaded = await page.evaluate(async () => (await fetch(document.getElementById('download').href)).json())
    assert.deepEqual(downloaded, people, 'the download is the results, in the --json shape')
    assert.ok((await page.screenshot({ fullPage: true })).length > 10_000)
    assert.deepEqual(blocked, [], 'nothing but the server was asked for')
    assert.deepEqual(errors, [])
  } finally {
    await browser.close()
    await server.stop()
  }
  assert.match(server.output(), /stopped on SIGTERM .* 404 messages, 0 decode errors/)
})
