// The bare open-loop client bench:generator measures capacity's generator against: the least code
// that does the same job with `ws` alone. N connections, the test's frames encoded once, every
// message due sent each turn (one ws.send per message), woken by setTimeout or setImmediate, the
// ACK replies counted and nothing recorded.
// Started by bench/generator.js with an IPC channel, it is sent {url, test, format, rate,
// connections, inflight, leadMs, measureMs}, says `measuring` as its measured phase starts, then
// `done` with its own CPU over that phase (process.cpuUsage, as capacity's generator reads its own).
import { performance } from 'node:perf_hooks'
import WebSocket from 'ws'
import { prepareRun } from '../../lib/load/measure.js'
import { connectionUrl } from '../../lib/protocol.js'

const { url, test, format, rate, connections, inflight, leadMs, measureMs } = await new Promise((resolve) => process.once('message', resolve))
const { codec, prepared, test: info } = await prepareRun(format, { test, custom: null, load: {} })
// The same bytes capacity's generator sends: text frames as bytes too, so ws copies no string.
const frames = prepared.natives.map((native) => {
  const frame = codec.encode(native)
  return typeof frame === 'string' ? Buffer.from(frame) : frame
})
const sendOptions = { binary: codec.binary }
const target = connectionUrl(url, { test: info.name, format: codec.name })

let acked = 0
let cursor = 0
let next = 0
/** The phase under way: called on every reply, it resolves once its messages are all answered. */
let onReply = () => {}
/** A turn held back because every connection had `inflight` outstanding: the next reply resumes it. */
let held = null

const sockets = await Promise.all(Array.from({ length: connections }, () => new Promise((resolve, reject) => {
  const ws = new WebSocket(target, { perMessageDeflate: false })
  ws.outstanding = 0
  ws.on('message', () => {
    ws.outstanding--
    acked++
    onReply()
    if (held) {
      const turn = held
      held = null
      turn()
    }
  })
  ws.once('open', () => resolve(ws))
  ws.once('error', reject)
})))

/** The next connection with room, round robin; null when all are full. */
function connectionWithRoom () {
  for (let tries = 0; tries < sockets.length; tries++) {
    const ws = sockets[next]
    next = next + 1 === sockets.length ? 0 : next + 1
    if (ws.outstanding < inflight) return ws
  }
  return null
}

/** `count` messages at `rate`, message k due k / rate s after the start; resolves once all are answered. */
function phase (count) {
  return new Promise((resolve) => {
    const started = performance.now()
    const ackedBefore = acked
    let sent = 0
    let lastSentAt = started
    onReply = () => {
      if (acked - ackedBefore === count) resolve({ sent, spanMs: Math.max(count * 1000 / rate, lastSentAt - started) })
    }
    const turn = () => {
      const now = performance.now()
      const due = Math.min(count, Math.floor((now - started) * rate / 1000) + 1)
      if (sent < due) lastSentAt = now
      while (sent < due) {
        const ws = connectionWithRoom()
        if (!ws) {
          held = turn
          return
        }
        ws.outstanding++
        ws.send(frames[cursor], sendOptions)
        cursor = cursor + 1 === frames.length ? 0 : cursor + 1
        sent++
      }
      if (sent === count) return
      // The next message not due yet: sleep until it is (Node's timers wait 1 ms at least), not
      // spin on setImmediate, which would burn the core whatever the rate.
      const waitMs = sent * 1000 / rate - (performance.now() - started)
      if (waitMs > 0) setTimeout(turn, waitMs)
      else setImmediate(turn)
    }
    turn()
  })
}

await phase(Math.round(rate * leadMs / 1000))
process.send({ type: 'measuring' })
const before = process.cpuUsage()
const { sent, spanMs } = await phase(Math.round(rate * measureMs / 1000))
const cpu = process.cpuUsage(before)
for (const ws of sockets) ws.terminate()
process.send({ type: 'done', cpuUs: cpu.user + cpu.system, sent, sendRate: sent * 1000 / spanMs, pacingUs: 0, failure: null }, () => process.exit(0))
