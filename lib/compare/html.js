// The comparison as one self-contained HTML file: inline CSS and SVG, no script, no CDN, so it
// opens offline, can be mailed around and renders the same in a headless browser.
import { addHistograms, percentileCurve } from '../histogram.js'
import { describeRun, machineNote, ratioMeaning, tableCells, undecided, verdictLines, verdictMeaning } from './results.js'
import { METRICS } from './statistics.js'
import { escapeHtml, groupedBarChart, percentileChart, ratioChart } from '../report/svg-chart.js'
import { int, perSecond } from '../display.js'

/** A row as charts name it: its test, and its network unless there was none. */
const rowLabel = (row) => row.profile === 'none' ? row.test : `${row.test} · ${row.profile}`

/** Inline, so the file needs nothing else to render. */
const STYLE = `<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1200px; }
table { border-collapse: collapse; font-size: 12px; margin: 12px 0; }
th, td { border: 1px solid #ccc; padding: 3px 6px; text-align: right; white-space: nowrap; }
th:nth-child(-n+3), td:nth-child(-n+3) { text-align: left; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
.chart { border: 1px solid #eee; background: #fff; }
figure.verdict { margin: 0; }
figcaption { font-size: 12px; color: #555; }
</style>`

/**
 * Renders the results document as an HTML report: what was measured, the verdicts (each ratio
 * with its interval, and what could not be told apart), the table, latency percentile curves per
 * test and profile, and bars for size and throughput.
 * @param {import('./results.js').ComparisonResults} results
 * @returns {string} a complete HTML document
 */
export function renderHtmlReport (results) {
  const title = `${results.formats.join(' vs ')} over WebSocket`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
${STYLE}
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${verdictSection(results)}
${figuresSection(results)}
<h2>Size and throughput</h2>
<div class="charts">
${barCharts(results)}
</div>
<h2>Latency percentiles</h2>
<div class="charts">
${latencyCurves(results).join('\n')}
</div>
</body>
</html>
`
}

/** What was run, on which networks, the verdict lines and what they mean, and a ratio chart per verdict. */
function verdictSection (results) {
  const { formats, rows } = results
  const networks = [...new Map(rows.map((row) => [row.profile, row.network])).values()]
  return `<p>${escapeHtml(describeRun(results))}</p>
<p>Networks: ${networks.map(escapeHtml).join('; ')}.</p>
<h2>Verdict</h2>
<ul class="verdicts">
${verdictLines(rows, formats).map((line) => `<li>${escapeHtml(line)}</li>`).join('\n')}
</ul>
<p>${escapeHtml(verdictMeaning(results.family, results.settings.margin))}</p>
${machineNote(results) ? `<p class="saturation"><strong>Note:</strong> ${escapeHtml(machineNote(results))}.</p>` : ''}
${results.calibration ? `<h2>Calibration</h2><ul id="calibration">${results.calibration.lines.map((line) => `<li>${escapeHtml(line)}</li>`).join('')}</ul>` : ''}
<div class="charts">
${verdictFigures(rows, formats).join('\n')}
</div>`
}

/** Each format after the first against the first, per row: its ratios with their intervals, and what stayed open. */
function verdictFigures (rows, formats) {
  return rows.flatMap((row) => formats.slice(1).map((label) => {
    const estimates = row.verdicts[label] ?? {}
    const open = undecided(row, label)
    const chart = ratioChart({
      title: `${label} vs ${formats[0]}: ${rowLabel(row)} (${row.calls[label]})`,
      rows: Object.entries(estimates).map(([name, estimate]) => ({ label: METRICS[name].label, ...estimate }))
    })
    return `<figure class="verdict" data-test="${escapeHtml(row.testName)}" data-format="${escapeHtml(label)}" data-call="${escapeHtml(row.calls[label])}">${chart}` +
      `<figcaption>${open.length ? `Inconclusive: ${escapeHtml(open.join(', '))}.` : 'Every metric decided.'}</figcaption></figure>`
  }))
}

/** The table of figures, and how they were measured. */
function figuresSection ({ rows, formats }) {
  const { header, body } = tableCells(rows, formats)
  return `<h2>Figures</h2>
<table>
<thead><tr>${header.map((cell) => `<th>${escapeHtml(cell)}</th>`).join('')}</tr></thead>
<tbody>
${body.map((cells) => `<tr>${cells.map((cell) => `<td>${escapeHtml(cell)}</td>`).join('')}</tr>`).join('\n')}
</tbody>
</table>
<p>Latency is measured per message from send to ACK, in microseconds (HdrHistogram); bytes are counted on the socket.
Ratios are ${escapeHtml(ratioMeaning(formats))}.</p>`
}

/** Bars per row and format: encoded bytes, bytes on the wire, throughput. */
function barCharts ({ rows, formats }) {
  const bars = (chartTitle, figure, format) => groupedBarChart({
    title: chartTitle,
    seriesNames: formats,
    rows: rows.map((row) => ({ label: rowLabel(row), values: formats.map((f) => row.figures[f]?.[figure] ?? 0) })),
    format
  })
  return [
    bars('bytes per message (encoded)', 'payloadBytes', (v) => `${int(v)} B`),
    bars('bytes on the wire per message', 'wireBytes', (v) => `${int(v)} B`),
    bars('throughput (acknowledged msgs/s)', 'rate', (v) => `${perSecond(v)}/s`)
  ].join('\n')
}

/** A latency-by-percentile chart per row, a curve per format. */
function latencyCurves ({ rows, formats, reports }) {
  return rows.map((row) => percentileChart({
    title: `latency by percentile: test ${rowLabel(row)}`,
    // Every generation of a format, added up exactly: the curve of all its measured messages.
    series: formats.map((format) => {
      const runs = reports.filter((r) =>
        (r.label ?? r.format) === format && r.test === row.testName && r.network.profile === row.profile)
      return { name: format, points: runs.length ? percentileCurve(addHistograms(runs.map((r) => r.histogram))) : [] }
    })
  }))
}
