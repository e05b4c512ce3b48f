// The capacity run as one self-contained HTML page: what was measured, the table and the verdicts,
// and per test and objective p50 and p99 against offered rate for each format, the objective drawn
// as a line and each format's capacity marked.
import { escapeHtml, rateChart } from '../report/svg-chart.js'
import { capacityNotes, capacityTableCells, capacityUnit, capacityVerdicts } from './results.js'
import { describeCapacityRun } from './describe.js'

/**
 * @param {object} results findCapacity's document
 * @returns {string} a complete HTML document
 */
export function renderCapacityHtml (results) {
  const { rows, searches, settings } = results
  const unit = capacityUnit(settings)
  const charts = rows.map((row) => {
    const mine = searches.filter((search) => search.row === row.test && search.slo === row.slo)
    const limit = settings.slos.indexOf(row.slo)
    const boundMs = mine[0]?.boundUs / 1000
    const series = mine.flatMap((search) => ['p50', 'p99'].map((name) => ({
      name: `${search.format} ${name}`,
      points: search.probes.filter((probe) => probe.latencyUs[name.slice(1)] !== null)
        .map((probe) => ({ rate: probe.rate, ms: probe.latencyUs[name.slice(1)] / 1000 }))
    })))
    const marks = row.figures.filter((figure) => figure.msgsPerS).map(unit.fanout
      // The chart's rate is the one offered: a fan-out's publishes, its capacity's deliveries in the label.
      ? (figure) => ({ rate: figure.publishesPerS, label: `${figure.format} ${figure.publishesPerS}/s (${figure.msgsPerS} deliveries/s)` })
      : (figure) => ({ rate: figure.msgsPerS, label: `${figure.format} ${figure.msgsPerS}/s` }))
    const chart = unit.fanout
      ? { title: `test ${row.test}: delivery latency against offered publishes/s`, rateLabel: 'offered rate (publishes/s), one dot per probe' }
      : { title: `test ${row.test}: latency against offered rate` }
    return `<figure data-test="${escapeHtml(row.test)}" data-slo="${escapeHtml(row.slo)}">` +
      rateChart({ ...chart, series, limit: { ms: boundMs, label: settings.slos[limit] }, marks }) +
      '</figure>'
  })
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Capacity: ${escapeHtml(settings.formats.join(' vs '))}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1200px; }
table { border-collapse: collapse; font-size: 12px; margin: 12px 0; }
th, td { border: 1px solid #ccc; padding: 3px 6px; text-align: right; white-space: nowrap; }
th:nth-child(-n+3), td:nth-child(-n+3) { text-align: left; }
figure { display: inline-block; margin: 8px; }
</style>
</head>
<body>
<h1>How many ${unit.name} one server core takes: ${escapeHtml(settings.formats.join(' vs '))}</h1>
<p>${escapeHtml(describeCapacityRun(results))}</p>
${table(capacityTableCells(results))}
<ul class="verdicts">${[...capacityVerdicts(results), ...capacityNotes(results)].map((line) => `<li>${escapeHtml(line)}</li>`).join('')}</ul>
<div class="charts">${charts.join('\n')}</div>
</body>
</html>
`
}

/** The table's cells as an HTML table. */
function table ({ header, body }) {
  const row = (cells, tag) => `<tr>${cells.map((cell) => `<${tag}>${escapeHtml(cell)}</${tag}>`).join('')}</tr>`
  return `<table class="capacity"><thead>${row(header, 'th')}</thead><tbody>${body.map((cells) => row(cells, 'td')).join('')}</tbody></table>`
}
