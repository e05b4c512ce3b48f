// The browser client: the same measurement as the CLI engine (reply-driven, N in flight, round
// trip per message into an HdrHistogram in microseconds, exact accounting), with the browser's own
// WebSocket, JSON and protobuf.js. Reports use lib/report/report.js, so they have the CLI's --json shape.
import { buildReport, testLabel } from '/lib/report/report.js'
import { addHistograms, createLatencyHistogram, percentileCurve, summarizeLatency } from '/lib/histogram.js'
import { escapeHtml, percentileChart, ratioChart } from '/lib/report/svg-chart.js'
import { comparisonRows, verdictLines, verdictMeaning } from '/lib/compare/results.js'
import { METRICS, trialOrder } from '/lib/compare/statistics.js'
import { int, ms, perSecond } from '/lib/display.js'
import { ACK, DOWN_REQUEST, QUERY, connectionUrl, isErrorReply } from '/lib/protocol.js'

const $ = (id) => document.getElementById(id)
const protobuf = globalThis.protobuf

/** A codec for the page: the same contract as lib/codecs/, over what a browser has (bench:browser times its decode). */
export async function createCodec (format, test) {
  if (format === 'json') {
    return { name: 'json', prepare: (payload) => payload, encode: (value) => JSON.stringify(value), decode: (data) => JSON.parse(data) }
  }
  const root = await protobuf.load(`/proto/${test.protoFile}`)
  const type = root.lookupType(test.typeName)
  return {
    name: 'protobuf',
    prepare: (payload) => type.fromObject(payload),
    encode: (message) => type.encode(message).finish(),
    decode: (data) => type.decode(new Uint8Array(data))
  }
}

function frameSize (data) {
  return typeof data === 'string' ? new TextEncoder().encode(data).length : data.byteLength
}

function openSocket (url) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url)
    ws.binaryType = 'arraybuffer'
    ws.onopen = () => resolve(ws)
    ws.onerror = () => reject(new Error(`cannot connect to ${url}`))
  })
}

/**
 * Runs one format: warmup, then `messages` measured round trips with `inflight` outstanding.
 * @returns {Promise<object>} a report in the CLI's --json shape
 */
async function runFormat ({ format, test, direction, messages, inflight, warmup }) {
  const codec = await createCodec(format, test)
  // The test's stream of varying messages, as the CLI clients send it; encoded before the run.
  const { messages: plain, payload } = await (await fetch(`/api/payload/${test.name}.json`)).json()
  const encoded = plain.map((message) => codec.encode(codec.prepare(message)))
  const send = sender(direction === 'down' ? [DOWN_REQUEST] : encoded)
  const url = connectionUrl(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/`, { test: test.name, format, direction })
  const token = new URLSearchParams(location.search).get(QUERY.token)
  if (token) url.searchParams.set(QUERY.token, token)
  const ws = await openSocket(url)
  try {
    if (warmup > 0) await phase(ws, codec, direction, send, warmup, inflight)
    const result = await phase(ws, codec, direction, send, messages, inflight)
    result.bytes.payloadPerMessage = Math.round(encoded.reduce((total, frame) => total + frameSize(frame), 0) / encoded.length)
    const report = buildReport(result, { format, test, url: url.href.replace(/([?&]token=)[^&]*/, '$1***'), connections: 1, inflight, warmup, network: null, payload })
    return { ...report, client: 'browser', direction, bytesCounted: 'WebSocket message payloads (a browser cannot see socket bytes)' }
  } finally {
    ws.close()
  }
}

/**
 * Sends frames in turn, cycling, from one phase to the next; each send returns its frame's size.
 * @param {Array<string|Uint8Array>} frames
 * @returns {(ws: WebSocket) => number}
 */
function sender (frames) {
  const sizes = frames.map(frameSize)
  let next = 0
  return (ws) => {
    const index = next
    next = next + 1 === frames.length ? 0 : next + 1
    ws.send(frames[index])
    return sizes[index]
  }
}

/** Sends `count` messages keeping `inflight` outstanding; each reply settles the oldest. */
function phase (ws, codec, direction, send, count, inflight) {
  const histogram = createLatencyHistogram()
  const sendTimes = new Float64Array(inflight)
  const counts = { sent: 0, acked: 0, errors: 0, lost: 0 }
  const bytes = { written: 0, read: 0 }
  const errorReplies = []
  let head = 0
  let outstanding = 0
  let startedAt = 0
  let lastReplyAt = 0
  const startedAtEpoch = Date.now()
  return new Promise((resolve) => {
    const finish = (failure) => {
      ws.onmessage = ws.onclose = null
      counts.lost += outstanding
      resolve({ messages: counts, startedAt: startedAtEpoch, durationMs: lastReplyAt - startedAt, histogram, bytes, errorReplies, failure })
    }
    const sendOne = () => {
      sendTimes[(head + outstanding) % inflight] = performance.now()
      outstanding++
      counts.sent++
      bytes.written += send(ws)
    }
    ws.onmessage = ({ data }) => {
      const now = performance.now()
      const sentAt = sendTimes[head]
      head = (head + 1) % inflight
      outstanding--
      lastReplyAt = now
      bytes.read += frameSize(data)
      if (isSuccess(codec, direction, data, errorReplies)) {
        counts.acked++
        histogram.recordValue(Math.max(1, Math.round((now - sentAt) * 1000)))
      } else {
        counts.errors++
      }
      if (counts.sent < count) sendOne()
      else if (outstanding === 0) finish(null)
    }
    ws.onclose = (event) => finish(`connection closed by the server (code ${event.code})`)
    startedAt = lastReplyAt = performance.now()
    // eslint-disable-next-line no-unmodified-loop-condition -- sendOne() raises outstanding and counts.sent
    while (outstanding < inflight && counts.sent < count) sendOne()
  })
}

/** An ACK (up) or a payload that decodes (down, echo) is a success; an `ERR ...` text is not. */
function isSuccess (codec, direction, data, errorReplies) {
  if (typeof data === 'string' && isErrorReply(data)) {
    if (errorReplies.length < 5) errorReplies.push(data.slice(0, 300))
    return false
  }
  if (direction === 'up') return data === ACK
  try {
    codec.decode(data)
    return true
  } catch (err) {
    if (errorReplies.length < 5) errorReplies.push(`client decode failed: ${err.message}`)
    return false
  }
}

/** Each format's trials in one table (counts summed, msgs/s the median, latency over every trial), then the verdict. */
function renderResults (reports, formats) {
  const trialsOf = formats.map((format) => reports.filter((r) => r.format === format))
  const sum = (runs, pick) => runs.reduce((total, r) => total + pick(r), 0)
  const median = (values) => values.slice().sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]
  const merged = trialsOf.map((runs) => ({
    format: runs[0].format,
    trials: runs.length,
    messages: ['sent', 'acked', 'errors', 'lost'].map((name) => sum(runs, (r) => r.messages[name])),
    rate: median(runs.map((r) => r.rate)),
    payloadPerMessage: runs[0].bytes.payloadPerMessage,
    written: sum(runs, (r) => r.bytes.written),
    read: sum(runs, (r) => r.bytes.read),
    histogram: addHistograms(runs.map((r) => r.histogram))
  })).map((m) => ({ ...m, latency: summarizeLatency(m.histogram) }))
  const rows = [
    ['trials', (m) => String(m.trials)],
    ['sent / acked / errors / lost', (m) => m.messages.join(' / ')],
    ['msgs/s (median)', (m) => perSecond(m.rate)],
    ['bytes per message', (m) => int(m.payloadPerMessage)],
    ['bytes sent', (m) => int(m.written)],
    ['bytes received', (m) => int(m.read)],
    ['p50 ms', (m) => ms(m.latency.p50)],
    ['p90 ms', (m) => ms(m.latency.p90)],
    ['p99 ms', (m) => ms(m.latency.p99)],
    ['max ms', (m) => ms(m.latency.max)]
  ]
  const first = reports[0]
  const name = testLabel({ id: first.testId, name: first.test })
  const table = `<table id="report"><thead><tr><th>test ${escapeHtml(name)}, ${escapeHtml(first.direction)}</th>` +
    merged.map((m) => `<th>${escapeHtml(m.format)}</th>`).join('') + '</tr></thead><tbody>' +
    rows.map(([label, show]) => `<tr><th>${label}</th>${merged.map((m) => `<td data-format="${escapeHtml(m.format)}">${escapeHtml(show(m))}</td>`).join('')}</tr>`).join('') +
    '</tbody></table>'
  // The same calls as npm run compare, from the same code: each trial a generation, one look after the last.
  const { rows: [row], family } = comparisonRows(reports.map((r) => ({ ...r, label: r.format, network: { profile: 'none' } })), formats)
  const verdicts = formats.length > 1
    ? `<h2>Verdict</h2><ul id="verdicts">${verdictLines([row], formats).map((line) => `<li>${escapeHtml(line)}</li>`).join('')}</ul>` +
      `<p>${escapeHtml(verdictMeaning(family))}</p>` +
      formats.slice(1).map((label) => ratioChart({
        title: `${label} vs ${formats[0]}: ${name} (${row.calls[label]})`,
        rows: Object.entries(row.verdicts[label]).map(([metric, estimate]) => ({ label: METRICS[metric].label, ...estimate }))
      })).join('')
    : ''
  const chart = percentileChart({
    title: `latency by percentile: test ${name}, ${first.direction}, every trial`,
    series: merged.map((m) => ({ name: m.format, points: percentileCurve(m.histogram) }))
  })
  const failures = reports.filter((r) => r.failure).map((r) => `<p>${escapeHtml(r.format)}, trial ${r.trial}: ${escapeHtml(r.failure)}</p>`).join('')
  $('results').innerHTML = verdicts + table + failures + chart
  const link = $('download')
  URL.revokeObjectURL(link.href)
  link.href = URL.createObjectURL(new Blob([JSON.stringify(reports, null, 2)], { type: 'application/json' }))
  link.hidden = false
}

async function main () {
  const tests = await (await fetch('/api/tests')).json()
  $('test').innerHTML = tests.map((t) => `<option value="${escapeHtml(t.name)}">${escapeHtml(testLabel(t))}: ${escapeHtml(t.description)}</option>`).join('')
  $('test').value = 'medium'
  $('status').textContent = 'ready'
  $('setup').addEventListener('submit', async (event) => {
    event.preventDefault()
    const form = new FormData($('setup'))
    const options = {
      test: tests.find((t) => t.name === form.get('test')),
      direction: form.get('direction'),
      messages: Number(form.get('messages')),
      inflight: Number(form.get('inflight')),
      warmup: Number(form.get('warmup'))
    }
    const formats = form.getAll('format')
    const trials = Number(form.get('trials'))
    $('run').disabled = true
    try {
      const reports = []
      // One unrecorded run of each format first, so no format's first trial runs on a cold page.
      for (const format of formats) {
        $('status').textContent = `warm-up: running ${format}…`
        await runFormat({ ...options, format })
      }
      // Formats in balanced order (A B, B A, B A, A B, ...): neither always runs first.
      for (let trial = 1; trial <= trials; trial++) {
        for (const index of trialOrder(formats.length, trial - 1)) {
          $('status').textContent = `trial ${trial}/${trials}: running ${formats[index]}…`
          reports.push({ ...await runFormat({ ...options, format: formats[index] }), trial })
        }
      }
      globalThis.benchResults = reports
      renderResults(reports, formats)
      $('status').textContent = reports.every((r) => r.ok) ? 'done' : 'done with failures'
    } catch (err) {
      $('status').textContent = `error: ${err.message}`
    } finally {
      $('run').disabled = false
    }
  })
}

main().catch((err) => { $('status').textContent = `error: ${err.message}` })
