// Hand-written SVG charts for the HTML report: static markup, no script, no library, so the
// report opens offline and renders the same in any browser.

const WIDTH = 560
const HEIGHT = 300
const MARGIN = { top: 34, right: 16, bottom: 46, left: 64 }
const PLOT_WIDTH = WIDTH - MARGIN.left - MARGIN.right
const PLOT_HEIGHT = HEIGHT - MARGIN.top - MARGIN.bottom

/** One colour per series position, colour-blind safe (Okabe-Ito). */
const COLOURS = ['#0072b2', '#d55e00', '#009e73', '#cc79a7', '#e69f00', '#56b4e9', '#000000', '#f0e442']

const LEGEND_ITEM_WIDTH = 120
const LEGEND_PER_ROW = Math.floor((WIDTH - MARGIN.left - 10) / LEGEND_ITEM_WIDTH)
const LEGEND_ROW_HEIGHT = 16

/**
 * Escapes text for HTML and SVG content and attribute values.
 * @param {unknown} text
 * @returns {string}
 */
export function escapeHtml (text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/**
 * Where a percentile sits on HdrHistogram's log axis: 0 at 0%, 1 at 90%, 2 at 99%, 3 at 99.9%...
 * @param {number} percentile 0..100
 */
function nines (percentile) {
  return -Math.log10(Math.max(1 - percentile / 100, 1e-7))
}

/**
 * A latency-by-percentile line chart, HdrHistogram style: the percentile axis is log-scaled so the
 * tail (99%, 99.9%, ...) gets as much room as the median.
 * @param {object} chart
 * @param {string} chart.title
 * @param {Array<{name: string, points: Array<{percentile: number, ms: number}>}>} chart.series
 * @returns {string} an `<svg>` element
 */
export function percentileChart ({ title, series }) {
  const drawn = series.filter((s) => s.points.length > 0)
  // 100% is infinitely far right on this axis: the maximum gets its own place after the last
  // recorded percentile, marked `max`.
  const finiteNines = drawn.flatMap((s) => s.points.filter((p) => p.percentile < 100).map((p) => nines(p.percentile)))
  const lastTick = Math.max(2, Math.floor(Math.max(...finiteNines, 0)))
  const maxAt = Math.max(lastTick, ...finiteNines) + 0.5
  const topMs = niceCeiling(Math.max(...drawn.flatMap((s) => s.points.map((p) => p.ms)), 0))
  const x = (percentile) => MARGIN.left + (percentile >= 100 ? maxAt : nines(percentile)) / maxAt * PLOT_WIDTH
  const y = (ms) => MARGIN.top + PLOT_HEIGHT - ms / topMs * PLOT_HEIGHT
  const xTicks = Array.from({ length: lastTick + 1 }, (_, i) => {
    const percentile = 100 - 100 / 10 ** i
    return { at: x(percentile), label: `${formatNumber(percentile)}%` }
  })
  xTicks.push({ at: x(100), label: 'max' })
  const lines = drawn.map((s, index) => {
    const d = s.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.percentile).toFixed(1)},${y(p.ms).toFixed(1)}`).join(' ')
    return `<path class="series" data-series="${escapeHtml(s.name)}" d="${d}" fill="none" stroke="${COLOURS[index % COLOURS.length]}" stroke-width="2"/>`
  })
  return frame(title, 'percentile', 'latency (ms)', [
    ...axes(xTicks, yTicks(topMs, y)),
    ...lines,
    legend(drawn.map((s) => s.name))
  ])
}

/**
 * Lines over the seconds of a run (replies a second, latency a second), with dashed marks at given
 * seconds (where a ramp's stages change).
 * @param {object} chart
 * @param {string} chart.title
 * @param {string} chart.yLabel
 * @param {Array<{name: string, points: Array<{second: number, value: number}>}>} chart.series
 * @param {Array<{second: number, label: string}>} [chart.marks]
 * @returns {string} an `<svg>` element
 */
export function timeSeriesChart ({ title, yLabel, series, marks = [] }) {
  const drawn = series.filter((s) => s.points.length > 0)
  const seconds = [...drawn.flatMap((s) => s.points.map((p) => p.second)), ...marks.map((m) => m.second)]
  const lastSecond = Math.ceil(Math.max(1, ...seconds))
  const top = niceCeiling(Math.max(...drawn.flatMap((s) => s.points.map((p) => p.value)), 0))
  const x = (second) => MARGIN.left + second / lastSecond * PLOT_WIDTH
  const y = (value) => MARGIN.top + PLOT_HEIGHT - value / top * PLOT_HEIGHT
  const step = Math.max(1, Math.ceil(lastSecond / 10))
  const xTicks = Array.from({ length: Math.floor(lastSecond / step) + 1 }, (_, i) => ({ at: x(i * step), label: `${i * step} s` }))
  const lines = drawn.map((s, index) => {
    const d = s.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.second).toFixed(1)},${y(p.value).toFixed(1)}`).join(' ')
    return `<path class="series" data-series="${escapeHtml(s.name)}" d="${d}" fill="none" stroke="${COLOURS[index % COLOURS.length]}" stroke-width="2"/>`
  })
  const bottom = MARGIN.top + PLOT_HEIGHT
  const markLines = marks.map((m) => `<line class="mark" x1="${x(m.second).toFixed(1)}" y1="${MARGIN.top}" x2="${x(m.second).toFixed(1)}" y2="${bottom}" ` +
    `stroke="#888" stroke-dasharray="4 3"/><text x="${(x(m.second) + 3).toFixed(1)}" y="${bottom - 4}" font-size="10">${escapeHtml(m.label)}</text>`)
  return frame(title, 'seconds of the measured phase', yLabel, [
    ...axes(xTicks, yTicks(top, y)),
    ...markLines,
    ...lines,
    legend(drawn.map((s) => s.name))
  ])
}

/**
 * Latency against offered rate, a dot per probe for each series (a format's p50 or p99: probes near
 * the knee fall close together and scatter, which a line through them would turn into a zigzag),
 * the latency axis log-scaled (it grows by orders of magnitude past the knee), with a dashed
 * horizontal line (the objective) and dashed vertical marks (each format's capacity).
 * @param {object} chart
 * @param {string} chart.title
 * @param {Array<{name: string, points: Array<{rate: number, ms: number}>}>} chart.series
 * @param {{ms: number, label: string}} chart.limit
 * @param {Array<{rate: number, label: string}>} [chart.marks]
 * @param {string} [chart.rateLabel] the rate axis's title, when what is offered is not msgs/s
 * @returns {string} an `<svg>` element
 */
export function rateChart ({ title, series, limit, marks = [], rateLabel = 'offered rate (msgs/s), one dot per probe' }) {
  const drawn = series.filter((s) => s.points.length > 0)
  const values = [...drawn.flatMap((s) => s.points.map((p) => p.ms)), limit.ms].filter((ms) => ms > 0)
  const [low, high] = [Math.floor(Math.log10(Math.min(...values))), Math.ceil(Math.log10(Math.max(...values)))]
  const decades = Math.max(1, high - low)
  const rates = [...drawn.flatMap((s) => s.points.map((p) => p.rate)), ...marks.map((m) => m.rate)]
  const top = niceCeiling(Math.max(...rates, 1))
  const x = (rate) => MARGIN.left + rate / top * PLOT_WIDTH
  const y = (ms) => MARGIN.top + PLOT_HEIGHT - (Math.log10(Math.max(ms, 10 ** low)) - low) / decades * PLOT_HEIGHT
  const xTicks = Array.from({ length: 5 }, (_, i) => ({ at: x(top * i / 4), label: `${formatNumber(top * i / 4000)}k` }))
  const yTickList = Array.from({ length: decades + 1 }, (_, i) => 10 ** (low + i))
    .map((ms) => ({ at: y(ms), label: formatNumber(ms) }))
  const dots = drawn.map((s, index) => `<g class="series" data-series="${escapeHtml(s.name)}" fill="${COLOURS[index % COLOURS.length]}">` +
    s.points.map((p) => `<circle cx="${x(p.rate).toFixed(1)}" cy="${y(p.ms).toFixed(1)}" r="2.5"/>`).join('') + '</g>')
  const bottom = MARGIN.top + PLOT_HEIGHT
  const limitY = y(limit.ms).toFixed(1)
  const limitLine = `<line class="limit" x1="${MARGIN.left}" y1="${limitY}" x2="${MARGIN.left + PLOT_WIDTH}" y2="${limitY}" ` +
    `stroke="#c00" stroke-dasharray="6 3"/><text x="${MARGIN.left + 4}" y="${(y(limit.ms) - 4).toFixed(1)}" font-size="10" fill="#c00">${escapeHtml(limit.label)}</text>`
  const markLines = marks.map((m, i) => `<line class="mark" x1="${x(m.rate).toFixed(1)}" y1="${MARGIN.top}" x2="${x(m.rate).toFixed(1)}" y2="${bottom}" ` +
    `stroke="#888" stroke-dasharray="4 3"/><text x="${(x(m.rate) + 3).toFixed(1)}" y="${bottom - 4 - 12 * i}" font-size="10">${escapeHtml(m.label)}</text>`)
  return frame(title, rateLabel, 'latency (ms, log)', [
    ...axes(xTicks, yTickList), limitLine, ...markLines, ...dots, legend(drawn.map((s) => s.name))
  ])
}

/**
 * Grouped horizontal bars: one group per row, one bar per series, each group scaled to its own
 * largest value so tests of very different magnitudes stay readable; the numbers are printed.
 * @param {object} chart
 * @param {string} chart.title
 * @param {string[]} chart.seriesNames
 * @param {Array<{label: string, values: number[]}>} chart.rows values in seriesNames order
 * @param {(value: number) => string} chart.format how to print a value
 * @returns {string} an `<svg>` element
 */
export function groupedBarChart ({ title, seriesNames, rows, format }) {
  const barHeight = 14
  const groupHeight = seriesNames.length * barHeight + 12
  const legendRows = Math.ceil(seriesNames.length / LEGEND_PER_ROW)
  const height = MARGIN.top + rows.length * groupHeight + 24 + legendRows * LEGEND_ROW_HEIGHT
  const labelWidth = 130
  const barSpace = WIDTH - labelWidth - 90
  const groups = rows.map((row, r) => {
    const top = MARGIN.top + r * groupHeight
    const largest = Math.max(...row.values, 0)
    const bars = row.values.map((value, s) => {
      const width = largest > 0 ? Math.max(1, value / largest * barSpace) : 0
      const barTop = top + s * barHeight
      return `<rect class="bar" data-series="${escapeHtml(seriesNames[s])}" x="${labelWidth}" y="${barTop}" width="${width.toFixed(1)}" height="${barHeight - 2}" fill="${COLOURS[s % COLOURS.length]}"/>` +
        `<text x="${(labelWidth + width + 4).toFixed(1)}" y="${barTop + barHeight - 4}" font-size="11">${escapeHtml(format(value))}</text>`
    })
    return `<text x="${labelWidth - 6}" y="${top + groupHeight / 2}" font-size="12" text-anchor="end">${escapeHtml(row.label)}</text>${bars.join('')}`
  })
  return `<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img" aria-label="${escapeHtml(title)}">` +
    `<text x="${WIDTH / 2}" y="18" font-size="14" font-weight="bold" text-anchor="middle">${escapeHtml(title)}</text>` +
    groups.join('') + legend(seriesNames, height - legendRows * LEGEND_ROW_HEIGHT + 2) + '</svg>'
}

/** Colours of the calls in ratio charts: Okabe-Ito green, vermillion and blue, and grey for inconclusive. */
const CALL_COLOURS = { better: '#009e73', worse: '#d55e00', equivalent: '#0072b2', inconclusive: '#888888' }

/**
 * Ratios with their confidence intervals, one line per metric (a forest plot): a log axis centred
 * on 1, a dot at the ratio, a bar across the interval, coloured by the call.
 * @param {object} chart
 * @param {string} chart.title
 * @param {Array<{label: string, ratio: number, ci: [number, number]|null, call: string}>} chart.rows
 * @returns {string} an `<svg>` element
 */
export function ratioChart ({ title, rows }) {
  const rowHeight = 22
  const height = MARGIN.top + rows.length * rowHeight + 40
  const left = 150
  const width = WIDTH - left - MARGIN.right
  // Symmetric around 1 on the log axis: 0.5x sits as far left as 2x sits right.
  const distances = rows.flatMap(({ ratio, ci }) => [ratio, ...(ci ?? [])]).map((value) => Math.max(value, 1 / value))
  const extent = Math.max(2, ...distances)
  const span = Math.log(Math.min(extent * 1.1, 1000))
  const x = (value) => left + width / 2 + Math.max(-1, Math.min(1, Math.log(value) / span)) * width / 2
  // The round ticks first, then the axis ends; an end too close to a round tick (0.49x beside 0.5x) is left out.
  const round = ROUND_RATIOS.filter((value) => value >= 1 / extent && value <= extent)
  const ticks = spacedTicks([...round, 1 / extent, extent], x, tickLabel)
  const bottom = MARGIN.top + rows.length * rowHeight
  const marks = rows.map(({ label, ratio, ci, call }, i) => {
    const y = MARGIN.top + i * rowHeight + rowHeight / 2
    const colour = CALL_COLOURS[call] ?? CALL_COLOURS.inconclusive
    const bar = ci
      ? `<line class="interval" x1="${x(ci[0]).toFixed(1)}" y1="${y}" x2="${x(ci[1]).toFixed(1)}" y2="${y}" stroke="${colour}" stroke-width="3"/>`
      : ''
    return `<g class="ratio" data-metric="${escapeHtml(label)}" data-call="${escapeHtml(call)}">` +
      `<text x="${left - 8}" y="${y + 4}" font-size="12" text-anchor="end">${escapeHtml(label)}</text>${bar}` +
      `<circle cx="${x(ratio).toFixed(1)}" cy="${y}" r="4.5" fill="${colour}"/></g>`
  })
  const axis = ticks.map((value) => `<line x1="${x(value).toFixed(1)}" y1="${MARGIN.top}" x2="${x(value).toFixed(1)}" y2="${bottom}" ` +
    `stroke="${value === 1 ? '#444' : '#ddd'}"/><text x="${x(value).toFixed(1)}" y="${bottom + 16}" font-size="11" text-anchor="middle">${tickLabel(value)}</text>`)
  return `<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img" aria-label="${escapeHtml(title)}">` +
    `<text x="${WIDTH / 2}" y="18" font-size="14" font-weight="bold" text-anchor="middle">${escapeHtml(title)}</text>` +
    axis.join('') + marks.join('') +
    `<text x="${left + width / 2}" y="${height - 6}" font-size="11" text-anchor="middle">ratio to the baseline (log scale); bar: the interval behind the call</text></svg>`
}

/** Ratios worth a tick, most wanted first: no difference, twice and half, then decades. */
const ROUND_RATIOS = [1, 0.5, 2, 0.1, 10, 0.01, 100, 0.001, 1000]

/** A ratio tick's label: two significant digits, `0.49x`, `2x`. */
function tickLabel (value) {
  return `${formatNumber(Number(value.toPrecision(2)))}x`
}

/** Tick labels (11 px text, up to five characters) need this much room between their centres. */
const MIN_TICK_GAP = 40

/**
 * Keeps the candidate ticks, in the order given (most wanted first), that neither repeat a kept
 * label nor sit closer than MIN_TICK_GAP to a kept tick, so no two labels overlap.
 * @param {number[]} candidates
 * @param {(value: number) => number} x where a value sits
 * @param {(value: number) => string} label
 * @returns {number[]}
 */
function spacedTicks (candidates, x, label) {
  const kept = []
  for (const value of candidates) {
    const crowded = kept.some((other) => label(other) === label(value) || Math.abs(x(other) - x(value)) < MIN_TICK_GAP)
    if (!crowded) kept.push(value)
  }
  return kept
}

function frame (title, xLabel, yLabel, content) {
  return `<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" role="img" aria-label="${escapeHtml(title)}">` +
    `<text x="${WIDTH / 2}" y="18" font-size="14" font-weight="bold" text-anchor="middle">${escapeHtml(title)}</text>` +
    `<text x="${MARGIN.left + PLOT_WIDTH / 2}" y="${HEIGHT - 6}" font-size="12" text-anchor="middle">${escapeHtml(xLabel)}</text>` +
    `<text x="14" y="${MARGIN.top + PLOT_HEIGHT / 2}" font-size="12" text-anchor="middle" transform="rotate(-90 14 ${MARGIN.top + PLOT_HEIGHT / 2})">${escapeHtml(yLabel)}</text>` +
    content.join('') + '</svg>'
}

function axes (xTicks, yTickList) {
  const bottom = MARGIN.top + PLOT_HEIGHT
  const grid = (x1, y1, x2, y2) => `<line x1="${x1.toFixed(1)}" y1="${y1.toFixed(1)}" x2="${x2.toFixed(1)}" y2="${y2.toFixed(1)}" stroke="#ddd"/>`
  return [
    ...xTicks.map((t) => grid(t.at, MARGIN.top, t.at, bottom) +
      `<text x="${t.at.toFixed(1)}" y="${bottom + 16}" font-size="11" text-anchor="middle">${t.label}</text>`),
    ...yTickList.map((t) => grid(MARGIN.left, t.at, MARGIN.left + PLOT_WIDTH, t.at) +
      `<text x="${MARGIN.left - 6}" y="${(t.at + 4).toFixed(1)}" font-size="11" text-anchor="end">${t.label}</text>`),
    `<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${PLOT_WIDTH}" height="${PLOT_HEIGHT}" fill="none" stroke="#888"/>`
  ]
}

function yTicks (topMs, y) {
  return Array.from({ length: 5 }, (_, i) => {
    const ms = topMs * i / 4
    return { at: y(ms), label: formatNumber(ms) }
  })
}

/** Legend entries, wrapped onto further rows when there are more series than fit across. */
function legend (names, top = MARGIN.top + 8) {
  return names.map((name, i) => {
    const left = MARGIN.left + 10 + (i % LEGEND_PER_ROW) * LEGEND_ITEM_WIDTH
    const y = top + Math.floor(i / LEGEND_PER_ROW) * LEGEND_ROW_HEIGHT
    return `<g class="legend"><rect x="${left}" y="${y - 9}" width="12" height="12" fill="${COLOURS[i % COLOURS.length]}"/>` +
      `<text x="${left + 16}" y="${y + 1}" font-size="12">${escapeHtml(name)}</text></g>`
  }).join('')
}

/** The smallest 1, 2 or 5 times a power of ten at or above value, so axis ticks read well. */
function niceCeiling (value) {
  if (!(value > 0)) return 1
  const power = 10 ** Math.floor(Math.log10(value))
  return [1, 2, 5, 10].map((step) => step * power).find((candidate) => candidate >= value)
}

function formatNumber (value) {
  return Number(value.toPrecision(6)).toLocaleString('en-US', { maximumFractionDigits: 4 })
}
