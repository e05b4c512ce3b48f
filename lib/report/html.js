// One run's report as a self-contained HTML page (--html): what ran, its accounting, and charts of
// its seconds (replies and latency, a ramp's stages marked) and of its latency by percentile.
// Inline SVG, no script, so it opens offline.
import { decodeHistogram, percentileCurve } from '../histogram.js'
import { int, ms } from '../display.js'
import { escapeHtml, percentileChart, timeSeriesChart } from './svg-chart.js'
import { formatReport } from './report.js'

/**
 * Renders a client's (or a merged) report as an HTML page.
 * @param {object} report as buildReport makes it
 * @returns {string} a complete HTML document
 */
export function renderRunHtml (report) {
  const histogram = decodeHistogram(report.histogram)
  const first = report.timeSeries[0]?.t ?? 0
  // Each second's figures sit in its middle: the first second of the phase covers 0 to 1 s.
  const seconds = report.timeSeries.map((second) => ({ ...second, second: second.t - first + 0.5 }))
  const marks = (report.stages ?? []).slice(0, -1).map((stage, i) => ({ second: stage.toMs / 1000, label: `stage ${i + 2}` }))
  const title = `${report.format} · test ${report.test} · ${report.direction}`
  const charts = [
    timeSeriesChart({
      title: 'replies each second',
      yLabel: 'replies',
      series: [{ name: 'acked', points: seconds.map(({ second, acked }) => ({ second, value: acked })) },
        { name: 'errors', points: seconds.some(({ errors }) => errors > 0) ? seconds.map(({ second, errors }) => ({ second, value: errors })) : [] }],
      marks
    }),
    timeSeriesChart({
      title: 'latency each second',
      yLabel: 'latency (ms)',
      series: [{ name: 'p50', points: seconds.map(({ second, p50 }) => ({ second, value: p50 })) },
        { name: 'p99', points: seconds.map(({ second, p99 }) => ({ second, value: p99 })) }],
      marks
    }),
    percentileChart({ title: 'latency by percentile, the whole measured phase', series: [{ name: report.format, points: percentileCurve(histogram) }] })
  ]
  const stages = report.stages
    ? '<h2>Stages</h2><table><tr><th>stage</th><th>from</th><th>to</th><th>rate</th><th>due</th><th>replies</th><th>p50 ms</th><th>p99 ms</th></tr>' +
      report.stages.map((stage, i) => `<tr><td>${i + 1}</td><td>${stage.fromMs / 1000} s</td><td>${stage.toMs / 1000} s</td>` +
        `<td>${int(stage.fromRate)} → ${int(stage.toRate)}/s</td><td>${int(stage.messages)}</td><td>${stage.replies === null ? '' : int(stage.replies)}</td>` +
        `<td>${stage.latencyMs ? ms(stage.latencyMs.p50) : ''}</td><td>${stage.latencyMs ? ms(stage.latencyMs.p99) : ''}</td></tr>`).join('') + '</table>'
    : ''
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}pre{background:#f6f6f6;padding:1em;overflow-x:auto}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}.charts{display:flex;flex-wrap:wrap;gap:1em}</style></head>
<body><h1>${escapeHtml(title)}</h1>
<p>${report.ok ? 'Every message accounted for and acknowledged.' : `Not ok: ${escapeHtml(report.failure)}`}</p>
<div class="charts">${charts.join('\n')}</div>
${stages}
<h2>Report</h2><pre>${escapeHtml(formatReport(report, histogram))}</pre>
</body></html>
`
}
