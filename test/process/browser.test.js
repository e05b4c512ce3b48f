// The browser client in headless Chromium against node server.js.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { browserUnavailable, openBrowserPage, startServerProcess } from '../helpers.js'
import { createCodec } from '../../lib/codecs/registry.js'
import { loadMessages, resolveTest } from '../../lib/payloads/catalog.js'

/** The bytes of a test's stream messages [from, to) in a format: what the page sends in turn. */
async function streamBytes (format, testName, from, to) {
  const codec = await createCodec(format, resolveTest(testName))
  return loadMessages(resolveTest(testName)).messages.slice(from, to).reduce((sum, message) => sum + Buffer.byteLength(codec.encode(codec.prepare(message))), 0)
}

test('browser client in headless Chromium: both formats in alternating trials with a warm-up, verdicts as compare makes them; people down; accounting matches', { skip: browserUnavailable(), timeout: 120_000 }, async () => {
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
    assert.deepEqual(await page.$$eval('input[name=format]', (boxes) => boxes.map((box) => box.value)), ['json', 'protobuf'])
    assert.match(await page.textContent('#formats-note'), /two built-in formats, JSON and protobuf, only:[^]*--codec-module run from the command-line\s+clients/)

    await page.selectOption('#test', 'small')
    await page.fill('#messages', '200')
    await page.fill('#inflight', '4')
    assert.equal(await page.inputValue('#warmup'), '100', 'a warm-up by default')
    assert.equal(await page.inputValue('#trials'), '4')
    await page.fill('#trials', '3')
    const small = await runAndWait()
    assert.equal(await status(), 'done')
    // After an unrecorded warm-up run of each format, pairs in balanced order: A B, B A, B A.
    assert.deepEqual(small.map((r) => [r.format, r.trial]), [['json', 1], ['protobuf', 1], ['protobuf', 2], ['json', 2], ['protobuf', 3], ['json', 3]])
    for (const report of small) assert.deepEqual([report.test, report.direction, report.client, report.warmup], ['small', 'up', 'browser', 100])
    for (const report of small) {
      assert.deepEqual(report.messages, { sent: 200, acked: 200, errors: 0, lost: 0 })
      assert.equal(report.inflight, 4)
      assert.ok(report.latencyMs.p50 > 0 && report.latencyMs.p50 <= report.latencyMs.p99 && report.latencyMs.p99 <= report.latencyMs.max)
      assert.match(report.histogram, /^HISTF/, 'the CLI\'s compressed HdrHistogram')
    }
    // The stream's mean size; written: its messages 100 to 299, after the 100 of warm-up.
    assert.deepEqual(small.map((r) => r.bytes.payloadPerMessage), [24, 7, 7, 24, 7, 24])
    for (const report of small) assert.deepEqual(report.payload, loadMessages(resolveTest('small')).payload)
    const [json, protobuf] = [await streamBytes('json', 'small', 100, 300), await streamBytes('protobuf', 'small', 100, 300)]
    assert.deepEqual(small.map((r) => r.bytes.written), [json, protobuf, protobuf, json, protobuf, json])
    // Compare's wire bytes are whole bytes per message; the verdict is their ratio.
    const wireRatio = (Math.round(protobuf / 200) / Math.round(json / 200)).toFixed(2).replace('.', '\\.')
    const cells = await page.$$eval('#report td[data-format]', (tds) => tds.slice(0, 4).map((td) => td.textContent))
    assert.deepEqual(cells, ['3', '3', '600 / 600 / 0 / 0', '600 / 600 / 0 / 0'])
    assert.deepEqual(await page.$$eval('svg.chart path.series', (paths) => paths.map((p) => p.dataset.series)), ['json', 'protobuf'])
    const verdicts = await page.$$eval('#verdicts li', (items) => items.map((li) => li.textContent))
    assert.equal(verdicts.length, 1)
    assert.match(verdicts[0], new RegExp('^5 small, loopback: protobuf vs json: p50 [\\d.]+x \\([\\d.]+-[\\d.>]+\\) (better|worse|equivalent|inconclusive, ±[\\d.>]+%), p99 .*, ' +
      `wire bytes ${wireRatio}x \\(${wireRatio}-${wireRatio}\\) better: (better|mixed .*)$`))
    assert.match(await page.textContent('#results'), /single-step max-T, .*the chance of any false call anywhere in the table is at most 5%/)
    assert.deepEqual(await page.$$eval('svg.chart g.ratio', (groups) => groups.map((g) => g.dataset.metric)), ['p50', 'p99', 'msgs/s', 'wire bytes'])

    await page.selectOption('#test', 'people')
    await page.selectOption('#direction', 'down')
    await page.fill('#messages', '2')
    await page.fill('#inflight', '1')
    await page.fill('#warmup', '0')
    await page.fill('#trials', '1')
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
  // Small: (3 trials + the warm-up run) x 2 formats x (200 + 100 warm-up); people: (1 + 1) x 2 formats x 2.
  assert.match(server.output(), /stopped on SIGTERM .* 2,408 messages, 0 decode errors/)
})
