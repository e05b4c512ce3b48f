import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { startServer } from '../lib/server/server.js'
import { TESTS, loadPayload, resolveTest } from '../lib/payloads/catalog.js'
import { browserUnavailable, openBrowserPage, startServerProcess } from './helpers.js'

describe('the browser client files (plain HTTP on the server port)', () => {
  let server, base
  before(async () => {
    server = await startServer({ port: 0 })
    base = server.url.replace('ws:', 'http:')
  })
  after(() => server.close())

  test('serves the page, its script, shared lib modules, vendored libraries, schemas and the catalog', async () => {
    for (const [path, type, body] of [
      ['/', 'text/html', /<title>JSON or Protobuf over WebSocket: browser client<\/title>/],
      ['/app.js', 'text/javascript', /import \{ buildReport, testLabel \} from '\/lib\/report\/report\.js'/],
      ['/lib/report/report.js', 'text/javascript', /export function buildReport/],
      ['/vendor/protobuf.min.js', 'text/javascript', /protobuf/],
      ['/vendor/hdrhistogram.umd.js', 'text/javascript', /encodeIntoCompressedBase64/],
      ['/proto/medium.proto', 'text/plain', /message Medium/]
    ]) {
      const response = await fetch(base + path)
      assert.equal(response.status, 200, path)
      assert.match(response.headers.get('content-type'), new RegExp(type))
      assert.match(await response.text(), body, path)
    }
    assert.deepEqual((await (await fetch(`${base}/api/tests`)).json()).map((t) => t.name), TESTS.map((t) => t.name))
    assert.deepEqual(await (await fetch(`${base}/api/payload/small.json`)).json(), loadPayload(resolveTest('small')))
  })

  test('nothing outside the allowlist: 404 with how to connect, 405 for other methods', async () => {
    for (const path of ['/proto/../package.json', '/lib/server/server.js', '/api/payload/nope.json', '/%2e%2e/package.json', '/node_modules/ws/package.json']) {
      const response = await fetch(base + path)
      assert.equal(response.status, 404, path)
      assert.match(await response.text(), /WebSocket clients connect to ws:\/\/HOST:PORT\/\?test=/)
    }
    assert.equal((await fetch(base + '/', { method: 'POST', body: 'x' })).status, 405)
  })
})

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
