// One server-side process of npm run bench:broker (a node:cluster worker of bench/broker.js): it
// connects to the broker named in BENCH_BROKER_URL as a server process would, then publishes or
// receives as its primary asks. Each frame is a test-3 message, JSON (text) and protobuf (binary)
// in turn, behind its sequence number and the monotonic clock's time it was due (one clock for
// every process of the machine), so receivers time each frame and check its order.
import { createCodec } from '../../lib/codecs/registry.js'
import { createLatencyHistogram, encodeHistogram } from '../../lib/histogram.js'
import { loadMessages, resolveTest } from '../../lib/payloads/catalog.js'
import { connectBroker } from '../../lib/server/broker.js'

/** Sequence number (4 bytes), then the time the frame was due, in ns of the monotonic clock (8 bytes). */
const STAMP_BYTES = 12
/** Frames published before the publisher lets its event loop send them, when it publishes flat out. */
const BURST = 64

const fail = (why) => {
  process.send({ bench: 'failed', reason: why }, () => process.exit(1))
}
let broker
try {
  broker = await connectBroker(process.env.BENCH_BROKER_URL, { onLost: fail })
} catch (err) {
  fail(err.message)
}
const payloads = await testPayloads()
let receiving = null
broker?.onFrame((topic, frame) => receiving?.(frame))

process.on('message', async (message) => {
  switch (message?.bench) {
    case 'expect': return expect(message)
    case 'burst': return reply('published', await publish(message.count, 0))
    case 'rate': return reply('published', await publish(message.count, message.rate))
    case 'close':
      await broker.close()
      process.disconnect()
  }
})
if (broker) process.send({ bench: 'ready' })

function reply (kind, body) {
  process.send({ bench: kind, ...body })
}

/** Test 3's stream as [topic, encoded message, isBinary], JSON and protobuf in turn. */
async function testPayloads () {
  const test = resolveTest(3)
  const { messages } = loadMessages(test)
  const codecs = await Promise.all(['json', 'protobuf'].map((format) => createCodec(format, test)))
  return messages.flatMap((message) => codecs.map((codec, i) => [`${['json', 'protobuf'][i]} 3`, Buffer.from(codec.encode(codec.prepare(message))), codec.binary]))
}

/**
 * Publishes `count` frames, flat out (rate 0: BURST per turn of the event loop) or open loop at
 * `rate` frames/s, each stamped with the time it was due.
 * @returns {Promise<{startedAt: string, cpuUs: number}>}
 */
function publish (count, rate) {
  const cpu = process.cpuUsage()
  const startedAt = process.hrtime.bigint()
  const interval = rate > 0 ? BigInt(Math.round(1e9 / rate)) : 0n
  let seq = 0
  return new Promise((resolve) => {
    const step = () => {
      const now = process.hrtime.bigint()
      const due = rate > 0 ? Math.min(count, Number((now - startedAt) / interval) + 1) : Math.min(count, seq + BURST)
      for (; seq < due; seq++) {
        const [topic, payload, isBinary] = payloads[seq % payloads.length]
        const frame = Buffer.allocUnsafe(STAMP_BYTES + payload.length)
        frame.writeUInt32BE(seq, 0)
        frame.writeBigUInt64BE(rate > 0 ? startedAt + BigInt(seq) * interval : now, 4)
        payload.copy(frame, STAMP_BYTES)
        broker.publish(topic, frame, isBinary)
      }
      if (seq < count) return rate > 0 ? setTimeout(step, 1) : setImmediate(step)
      const { user, system } = process.cpuUsage(cpu)
      resolve({ startedAt: String(startedAt), cpuUs: user + system })
    }
    step()
  })
}

/**
 * Receives the next `count` frames: their latency from the time each was due, and whether each came
 * in order; answers once all came, or after timeoutMs with those that did.
 */
function expect ({ count, timeoutMs }) {
  const cpu = process.cpuUsage()
  const histogram = createLatencyHistogram()
  let received = 0
  let outOfOrder = 0
  let next = 0
  let lastAt = 0n
  const done = () => {
    clearTimeout(timer)
    receiving = null
    const { user, system } = process.cpuUsage(cpu)
    reply('received', { received, outOfOrder, lastAt: String(lastAt), histogram: encodeHistogram(histogram), cpuUs: user + system })
  }
  const timer = setTimeout(done, timeoutMs)
  receiving = (frame) => {
    lastAt = process.hrtime.bigint()
    const seq = frame.readUInt32BE(0)
    if (seq !== next) outOfOrder++
    next = seq + 1
    histogram.recordValue(Math.max(1, Number(lastAt - frame.readBigUInt64BE(4)) / 1000))
    if (++received === count) done()
  }
  // Frames come by the broker, this message by IPC: the publisher starts only once every receiver is ready.
  reply('expecting')
}
