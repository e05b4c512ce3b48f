import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { browserUnavailable, openBrowserPage, runScript, temporaryDirectory } from '../helpers.js'

test('the HTML report of a real comparison renders offline in Chromium with every chart drawn, every format in each', { skip: browserUnavailable() }, async () => {
  const out = temporaryDirectory('report')
  const run = await runScript('bin/compare.js', ['--tests', '1,5', '--formats', 'json,protobuf,msgpack', '-n', '20', '--trials', '2', '--repeat', '--start-warmup', '200ms', '--out', out])
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
        legend: [...svg.querySelectorAll('.legend text')].map((t) => t.textContent),
        ratios: [...svg.querySelectorAll('g.ratio')].map((g) => ({
          metric: g.dataset.metric,
          call: g.dataset.call,
          dot: Boolean(g.querySelector('circle')),
          interval: g.querySelector('line.interval')?.getBBox().width ?? 0
        }))
      }
    }))
    // The verdict first: one ratio chart per test and format after the first, each ratio with its interval.
    const verdicts = charts.filter((c) => c.title.includes(' vs json: '))
    assert.deepEqual(verdicts.map((c) => c.title.replace(/ \((better|worse|mixed|equivalent|inconclusive)\)$/, '')), [
      'protobuf vs json: 1 numbers', 'msgpack vs json: 1 numbers', 'protobuf vs json: 5 small', 'msgpack vs json: 5 small'
    ])
    // An interval is drawn wherever the results have a wide one; an exact ratio (bytes, or two
    // generations that happened to agree) has none to draw.
    const results = JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8'))
    for (const chart of verdicts) {
      assert.deepEqual(chart.ratios.map((r) => r.metric), ['p50', 'p99', 'msgs/s', 'wire bytes', 'client CPU', 'server CPU', 'client codec', 'server codec'])
      const [, label, test] = /^(\S+) vs json: (.+) \(\w+\)$/.exec(chart.title)
      const estimates = Object.entries(results.rows.find((row) => row.test === test).verdicts[label])
      assert.equal(estimates.length, chart.ratios.length)
      chart.ratios.forEach((ratio, i) => {
        const [metric, { ci, call }] = estimates[i]
        assert.ok(ratio.dot, `${chart.title}: ${ratio.metric} has its dot`)
        assert.equal(ratio.call, call, `${chart.title}: ${ratio.metric}`)
        // (Coordinates are drawn to 0.1 px: an interval much narrower than 5% may round to a point.)
        if (ci[1] / ci[0] > 1.05) assert.ok(ratio.interval > 0, `${chart.title}: ${ratio.metric} (${metric}) has its interval drawn, ${ci}`)
        if (ci[0] === ci[1]) assert.equal(ratio.interval, 0, `${chart.title}: ${ratio.metric} (${metric}) is exact, ${ci}`)
      })
      assert.equal(chart.ratios.find((r) => r.metric === 'wire bytes').interval, 0, 'bytes are exact')
    }
    const bytes = verdicts[0].ratios.find((r) => r.metric === 'wire bytes')
    assert.equal(bytes.call, 'better', 'protobuf puts fewer bytes on the wire, every generation')
    const lines = await page.$$eval('ul.verdicts li', (items) => items.map((li) => li.textContent))
    assert.equal(lines.length, 4)
    assert.match(lines[0], /^1 numbers, loopback: protobuf vs json: p50 [\d.]+x \(/)
    const captions = await page.$$eval('figure.verdict figcaption', (items) => items.map((c) => c.textContent))
    for (const caption of captions) assert.match(caption, /^(Inconclusive: .+|Every metric decided)\.$/)
    assert.deepEqual(charts.slice(verdicts.length).map((c) => c.title), [
      'bytes per message (encoded)', 'bytes on the wire per message', 'throughput (acknowledged msgs/s)',
      'latency by percentile: test 1 numbers', 'latency by percentile: test 5 small'
    ])
    const figures = charts.slice(verdicts.length)
    for (const chart of figures) {
      assert.ok(chart.width > 100 && chart.height > 100, `${chart.title} has a size`)
      assert.deepEqual(chart.legend, ['json', 'protobuf', 'msgpack'])
    }
    for (const chart of figures.slice(0, 3)) {
      assert.deepEqual(chart.bars.map((b) => b.series), ['json', 'protobuf', 'msgpack', 'json', 'protobuf', 'msgpack'])
      for (const bar of chart.bars) assert.ok(bar.width >= 1, `${chart.title}: every bar drawn`)
    }
    for (const chart of figures.slice(3)) {
      assert.deepEqual(chart.lines.map((l) => l.series), ['json', 'protobuf', 'msgpack'])
      for (const line of chart.lines) assert.ok(line.length > 50, `${chart.title}: ${line.series} curve drawn`)
    }
    const cells = await page.$$eval('tbody tr', (rows) => rows.map((row) => [...row.cells].slice(0, 4).map((c) => c.textContent)))
    // B/msg: each test's one message (--repeat).
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
