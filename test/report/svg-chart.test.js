import { test } from 'node:test'
import assert from 'node:assert/strict'
import { escapeHtml, groupedBarChart, percentileChart, ratioChart, timeSeriesChart } from '../../lib/report/svg-chart.js'

test('escapeHtml neutralises markup in names', () => {
  assert.equal(escapeHtml('<b a="1">&\''), '&#60;b a=&#34;1&#34;&#62;&#38;&#39;')
})

test('percentileChart: one path per series with data, x growing with the percentile, max last', () => {
  const svg = percentileChart({
    title: 'a <title>',
    series: [
      { name: 'json', points: [{ percentile: 0, ms: 1 }, { percentile: 50, ms: 2 }, { percentile: 99, ms: 5 }, { percentile: 100, ms: 9 }] },
      { name: 'empty', points: [] }
    ]
  })
  assert.match(svg, /aria-label="a &#60;title&#62;"/)
  const paths = [...svg.matchAll(/<path class="series" data-series="([^"]+)" d="([^"]+)"/g)]
  assert.deepEqual(paths.map((p) => p[1]), ['json'])
  const xs = [...paths[0][2].matchAll(/[ML]([\d.]+),/g)].map((m) => Number(m[1]))
  assert.equal(xs.length, 4)
  for (let i = 1; i < xs.length; i++) assert.ok(xs[i] > xs[i - 1], `x grows: ${xs}`)
  assert.match(svg, />max<\/text>/)
  assert.match(svg, />99%<\/text>/)
})

test('groupedBarChart: bars scaled within each group, values printed', () => {
  const svg = groupedBarChart({ title: 't', seriesNames: ['a', 'b'], rows: [{ label: 'x', values: [100, 25] }, { label: 'y', values: [0, 0] }], format: String })
  const widths = [...svg.matchAll(/class="bar" data-series="[ab]" x="\d+" y="[\d.]+" width="([\d.]+)"/g)].map((m) => Number(m[1]))
  assert.equal(widths.length, 4)
  assert.equal(widths[1] / widths[0], 0.25)
  assert.deepEqual(widths.slice(2), [0, 0])
  assert.match(svg, />25<\/text>/)
})

test('ratioChart: tick labels never overlap or repeat (0.49x beside 0.5x, 2x beside 2x), at any extent', () => {
  const ticksOf = (svg) => [...svg.matchAll(/<text x="([\d.]+)" y="\d+" font-size="11" text-anchor="middle">([^<]+x)<\/text>/g)]
    .map(([, at, label]) => ({ at: Number(at), label }))
  for (const ratio of [1.01, 1.5, 2, 2.02, 2.04, 2.2, 3, 8, 50, 0.49, 0.2, 2000]) {
    const ticks = ticksOf(ratioChart({ title: 't', rows: [{ label: 'p50', ratio, ci: [ratio * 0.98, ratio * 1.02], call: 'better' }] }))
    const labels = ticks.map(({ label }) => label)
    assert.equal(new Set(labels).size, labels.length, `${ratio}: ${labels}`)
    assert.ok(labels.includes('1x') && labels.length >= 3, `${ratio}: ${labels}`)
    const positions = ticks.map(({ at }) => at).sort((a, b) => a - b)
    for (let i = 1; i < positions.length; i++) assert.ok(positions[i] - positions[i - 1] >= 40, `${ratio}: ${labels} at ${positions}`)
  }
})

test('timeSeriesChart: one path per series with data, seconds growing to the right, dashed marks where given', () => {
  const svg = timeSeriesChart({
    title: 'replies <each> second',
    yLabel: 'replies',
    series: [{ name: 'acked', points: [{ second: 0.5, value: 10 }, { second: 1.5, value: 40 }, { second: 2.5, value: 20 }] }, { name: 'errors', points: [] }],
    marks: [{ second: 2, label: 'stage 2' }]
  })
  assert.match(svg, /aria-label="replies &#60;each&#62; second"/)
  const paths = [...svg.matchAll(/data-series="([^"]+)" d="([^"]+)"/g)]
  assert.deepEqual(paths.map(([, name]) => name), ['acked'], 'a series without points draws nothing')
  const xs = [...paths[0][2].matchAll(/[ML]([\d.]+),([\d.]+)/g)].map(([, x]) => Number(x))
  assert.ok(xs[0] < xs[1] && xs[1] < xs[2])
  const ys = [...paths[0][2].matchAll(/[ML]([\d.]+),([\d.]+)/g)].map(([, , y]) => Number(y))
  assert.ok(ys[1] < ys[2] && ys[2] < ys[0], 'more replies, higher up')
  assert.equal((svg.match(/class="mark"/g) ?? []).length, 1)
  assert.match(svg, />stage 2</)
  assert.match(svg, />3 s</, 'the axis reaches the end of the last second')
})
