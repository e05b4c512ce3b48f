// The browser client: the same measurement as the CLI engine (reply-driven, N in flight, round
// trip per message into an HdrHistogram in microseconds, exact accounting), with the browser's own
// WebSocket, JSON and protobuf.js. Reports use lib/report/report.js, so they have the CLI's --json shape.
import { buildReport, testLabel } from '/lib/report/report.js'
import { createLatencyHistogram, percentileCurve, decodeHistogram } from '/lib/histogram.js'
import { escapeHtml, percentileChart } from '/lib/report/svg-chart.js'
import { int, ms, perSecond } from '/lib/numbers.js'
import { ACK, DOWN_REQUEST, QUERY, connectionUrl, isErrorReply } from '/lib/protocol.js'

const $ = (id) => document.getElementById(id)
const protobuf = globalThis.protobuf

/** A codec for the page: the same contract as lib/codecs/, over what a browser has. */
async function createCodec (format, test) {
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
  const payload = await (await fetch(`/api/payload/${test.name}.json`)).json()
  const prepared = codec.prepare(payload)
  const outgoing = direction === 'down' ? DOWN_REQUEST : codec.encode(prepared)
  const url = connectionUrl(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/`, { test: test.name, format, direction })
  const token = new URLSearchParams(location.search).get(QUERY.token)
  if (token) url.searchParams.set(QUERY.token, token)
  const ws = await openSocket(url)
  try {
    if (warmup > 0) await phase(ws, codec, direction, outgoing, warmup, inflight)
    const result = await phase(ws, codec, direction, outgoing, messages, inflight)
    result.bytes.payloadPerMessage = frameSize(direction === 'down' ? codec.encode(prepared) : outgoing)
    const report = buildReport(result, { format, test, url: url.href.replace(/([?&]token=)[^&]*/, '$1***'), connections: 1, inflight, warmup, network: null })
    return { ...report, client: 'browser', direction, bytesCounted: 'WebSocket message payloads (a browser cannot see socket bytes)' }
  } finally {
    ws.close()
  }
}

/** Sends `count` messages keeping `inflight` outstanding; each reply settles the oldest. */
function phase (ws, codec, direction, outgoing, count, inflight) {
  const histogram = createLatencyHistogram()
  const sendTimes = new Float64Array(inflight)
  const counts = { sent: 0, acked: 0, errors: 0, lost: 0 }
  const bytes = { written: 0, read: 0 }
  const errorReplies = []
  const outgoingSize = frameSize(outgoing)
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
      bytes.written += outgoingSize
      ws.send(outgoing)
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

function renderResults (reports) {
  const rows = [
    ['sent / acked / errors / lost', (r) => `${r.messages.sent} / ${r.messages.acked} / ${r.messages.errors} / ${r.messages.lost}`],
    ['msgs/s', (r) => perSecond(r.rate)],
    ['bytes per message', (r) => int(r.bytes.payloadPerMessage)],
    ['bytes sent', (r) => int(r.bytes.written)],
    ['bytes received', (r) => int(r.bytes.read)],
    ['p50 ms', (r) => ms(r.latencyMs.p50)],
    ['p90 ms', (r) => ms(r.latencyMs.p90)],
    ['p99 ms', (r) => ms(r.latencyMs.p99)],
    ['max ms', (r) => ms(r.latencyMs.max)]
  ]
  const first = reports[0]
  const table = `<table id="report"><thead><tr><th>test ${escapeHtml(testLabel({ id: first.testId, name: first.test }))}, ${escapeHtml(first.direction)}</th>` +
    reports.map((r) => `<th>${escapeHtml(r.format)}</th>`).join('') + '</tr></thead><tbody>' +
    rows.map(([label, show]) => `<tr><th>${label}</th>${reports.map((r) => `<td data-format="${escapeHtml(r.format)}">${escapeHtml(show(r))}</td>`).join('')}</tr>`).join('') +
    '</tbody></table>'
  const chart = percentileChart({
    title: `latency by percentile: test ${testLabel({ id: first.testId, name: first.test })}, ${first.direction}`,
    series: reports.map((r) => ({ name: r.format, points: percentileCurve(decodeHistogram(r.histogram)) }))
  })
  const failures = reports.filter((r) => r.failure).map((r) => `<p>${escapeHtml(r.format)}: ${escapeHtml(r.failure)}</p>`).join('')
  $('results').innerHTML = table + failures + chart
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
    $('run').disabled = true
    try {
      const reports = []
      for (const format of formats) {
        $('status').textContent = `running ${format}…`
        reports.push(await runFormat({ ...options, format }))
      }
      globalThis.benchResults = reports
      renderResults(reports)
      $('status').textContent = reports.every((r) => r.ok) ? 'done' : 'done with failures'
    } catch (err) {
      $('status').textContent = `error: ${err.message}`
    } finally {
      $('run').disabled = false
    }
  })
}

main().catch((err) => { $('status').textContent = `error: ${err.message}` })
