import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { browserUnavailable, openBrowserPage, runScript } from '../helpers.js'

test('the HTML report of a real comparison renders offline in Chromium with every chart drawn, every format in each', { skip: browserUnavailable() }, async () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'report-'))
  const run = await runScript('bin/compare.js', ['--tests', '1,5', '--formats', 'json,protobuf,msgpack', '-n', '200', '-w', '0', '--out', out])
  assert.equal(run.code, 0, run.stderr)

  const { browser, page, blocked } = await openBrowserPage()
  try {
    await page.goto(pathToFileURL(path.join(out, 'report.html')).href)
    assert.equal(await page.title(), 'json vs protobuf vs msgpack over WebSocket')
    const charts = await page.$$eval('svg.chart', (svgs) => svgs.map((svg) => {
      const box = svg.getBoundingClientRect()
      return {
        title: svg.getAttribute('aria-label'),
        width: box.width,
        height: box.height,
        lines: [...svg.querySelectorAll('path.series')].map((p) => ({ series: p.dataset.series, length: p.getTotalLength() })),
        bars: [...svg.querySelectorAll('rect.bar')].map((r) => ({ series: r.dataset.series, width: r.getBBox().width })),
        legend: [...svg.querySelectorAll('.legend text')].map((t) => t.textContent)
      }
    }))
    assert.deepEqual(charts.map((c) => c.title), [
      'bytes per message (encoded)', 'bytes on the wire per message', 'throughput (acknowledged msgs/s)',
      'latency by percentile: test 1 numbers', 'latency by percentile: test 5 small'
    ])
    for (const chart of charts) {
      assert.ok(chart.width > 100 && chart.height > 100, `${chart.title} has a size`)
      assert.deepEqual(chart.legend, ['json', 'protobuf', 'msgpack'])
    }
    for (const chart of charts.slice(0, 3)) {
      assert.deepEqual(chart.bars.map((b) => b.series), ['json', 'protobuf', 'msgpack', 'json', 'protobuf', 'msgpack'])
      for (const bar of chart.bars) assert.ok(bar.width >= 1, `${chart.title}: every bar drawn`)
    }
    for (const chart of charts.slice(3)) {
      assert.deepEqual(chart.lines.map((l) => l.series), ['json', 'protobuf', 'msgpack'])
      for (const line of chart.lines) assert.ok(line.length > 50, `${chart.title}: ${line.series} curve drawn`)
    }
    const cells = await page.$$eval('tbody tr', (rows) => rows.map((row) => [...row.cells].slice(0, 4).map((c) => c.textContent)))
    assert.deepEqual(cells[0], ['1 numbers', 'none', 'json', '292'])
    assert.deepEqual(cells.slice(1, 5).map((c) => c[2]), ['protobuf', 'msgpack', 'protobuf/json', 'msgpack/json'])
    assert.deepEqual(cells[5], ['5 small', 'none', 'json', '22'])
    assert.deepEqual(cells[6], ['', '', 'protobuf', '6'])
    assert.deepEqual(blocked, [], 'the report needs nothing from the network')
    const shot = await page.screenshot({ fullPage: true })
    assert.ok(shot.length > 10_000, 'a real screenshot')
  } finally {
    await browser.close()
  }
})
