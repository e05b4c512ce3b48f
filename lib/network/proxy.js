import net from 'node:net'
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads'

/** Bytes queued in one direction before the proxy stops reading the sender (backpressure). */
export const MAX_QUEUED_BYTES = 1024 * 1024

/**
 * A TCP segment's payload on Ethernet with timestamps. A read can hold 64 KiB, several messages;
 * a link delivers it segment by segment, so the first message must not wait for the last.
 */
export const SEGMENT_BYTES = 1448

/**
 * One direction of a link: bytes are serialised at `kbits` kbit/s, then arrive `delayMs` later,
 * in order. Departure times are absolute, so timer jitter never accumulates into the rate.
 */
class Link {
  constructor (source, sink, kbits, delayMs) {
    this.source = source
    this.sink = sink
    this.msPerByte = 8 / kbits // kbit/s -> ms per byte: 8 bits / (kbits bits per ms)
    this.delayMs = delayMs
    this.freeAt = 0 // when the link finishes serialising what it already holds
    this.queue = [] // [arrivalTime, chunk], arrival order
    this.queuedBytes = 0
    this.timer = null
    source.on('data', (chunk) => this.push(chunk))
    source.on('end', () => { this.ended = true; this.flushEndWhenEmpty() })
  }

  push (chunk) {
    this.freeAt = Math.max(performance.now(), this.freeAt)
    for (let start = 0; start < chunk.length; start += SEGMENT_BYTES) {
      const segment = chunk.subarray(start, start + SEGMENT_BYTES)
      this.freeAt += segment.length * this.msPerByte
      this.queue.push([this.freeAt + this.delayMs, segment])
    }
    this.queuedBytes += chunk.length
    if (this.queuedBytes > MAX_QUEUED_BYTES) this.source.pause()
    this.schedule()
  }

  schedule () {
    if (this.timer || this.queue.length === 0) return
    this.timer = setTimeout(() => this.deliver(), Math.max(0, this.queue[0][0] - performance.now()))
  }

  deliver () {
    this.timer = null
    const now = performance.now()
    // The segments due together leave in one write, not one system call each.
    this.sink.cork()
    while (this.queue.length > 0 && this.queue[0][0] <= now + 0.5) {
      const [, segment] = this.queue.shift()
      this.queuedBytes -= segment.length
      if (!this.sink.destroyed) this.sink.write(segment)
    }
    this.sink.uncork()
    if (this.queuedBytes <= MAX_QUEUED_BYTES / 2) this.source.resume()
    this.schedule()
    this.flushEndWhenEmpty()
  }

  flushEndWhenEmpty () {
    if (this.ended && this.queue.length === 0 && !this.sink.destroyed) this.sink.end()
  }

  stop () {
    clearTimeout(this.timer)
    this.queue = []
  }
}

/**
 * Starts a userspace shaping TCP proxy in this thread: each direction is delayed by rtt/2 and
 * limited to its bandwidth (up: client to server, down: server to client).
 * @param {object} options
 * @param {string} [options.listenHost]
 * @param {number} [options.listenPort] 0 for a free port
 * @param {string} options.targetHost
 * @param {number} options.targetPort
 * @param {number} options.up kbit/s
 * @param {number} options.down kbit/s
 * @param {number} options.rtt ms
 * @returns {Promise<{host: string, port: number, close: () => Promise<void>}>}
 */
export async function startShapingProxy ({ listenHost = '127.0.0.1', listenPort = 0, targetHost, targetPort, up, down, rtt }) {
  const pairs = new Set()
  // Half-open sockets let a sender's FIN travel behind its queued bytes, as on a real link.
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    const upstream = net.connect({ port: targetPort, host: targetHost, allowHalfOpen: true })
    client.setNoDelay(true)
    upstream.setNoDelay(true)
    const links = [new Link(client, upstream, up, rtt / 2), new Link(upstream, client, down, rtt / 2)]
    const pair = { client, upstream, links }
    pairs.add(pair)
    const tearDown = () => {
      for (const link of links) link.stop()
      client.destroy()
      upstream.destroy()
      pairs.delete(pair)
    }
    for (const socket of [client, upstream]) {
      socket.on('error', tearDown)
      socket.on('close', () => { if (client.destroyed && upstream.destroyed) tearDown() })
    }
  })
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(listenPort, listenHost, resolve)
  })
  const { address, port } = server.address()
  return {
    host: address,
    port,
    close () {
      for (const { client, upstream, links } of pairs) {
        for (const link of links) link.stop()
        client.destroy()
        upstream.destroy()
      }
      return new Promise((resolve) => server.close(() => resolve()))
    }
  }
}

/**
 * Runs {@link startShapingProxy} in a worker thread, so the proxy's timers and copies never run on
 * the load client's event loop and cannot distort its measurements.
 * @param {Parameters<typeof startShapingProxy>[0]} options
 * @returns {Promise<{host: string, port: number, close: () => Promise<void>}>}
 */
export function startShapingProxyWorker (options) {
  const worker = new Worker(new URL(import.meta.url), { workerData: options })
  return new Promise((resolve, reject) => {
    worker.once('error', reject)
    worker.once('message', ({ host, port, error }) => {
      if (error) {
        reject(new Error(`shaping proxy: ${error}`))
        return
      }
      resolve({
        host,
        port,
        async close () {
          worker.postMessage('close')
          await new Promise((resolve) => worker.once('exit', resolve))
        }
      })
    })
  })
}

if (!isMainThread && workerData?.targetPort) {
  startShapingProxy(workerData).then((proxy) => {
    parentPort.postMessage({ host: proxy.host, port: proxy.port })
    parentPort.once('message', () => proxy.close().then(() => process.exit(0)))
  }, (err) => parentPort.postMessage({ error: err.message }))
}
