// npm run bench:churn — does the server keep anything of connections that have gone? Rounds of
// BENCH_CHURN (5000) short connections (open, one message, its ACK, close; 200 at a time) against
// one server process; after each round, once the server counts no open connection: its open files
// (/proc/PID/fd), its V8 heap in use and its resident memory (its /metrics), beside the baseline.
// The heap is read after a full garbage collection: the server runs with --heapsnapshot-signal, and
// a heap snapshot collects garbage first (the snapshot itself is deleted), so what is left is what
// the server keeps.
import fs from 'node:fs'
import path from 'node:path'
import WebSocket from 'ws'
import { createCodec } from '../lib/codecs/registry.js'
import { loadPayload, resolveTest } from '../lib/payloads/catalog.js'
import { PROJECT_ROOT, startServerProcess } from '../lib/processes.js'
import { readMetrics } from '../lib/server/metrics-reader.js'
import { printRow, startResults } from './support/results.js'

const PER_ROUND = Number(process.env.BENCH_CHURN ?? 5000)
const ROUNDS = 3
const AT_ONCE = 200

const results = startResults('churn', 'npm run bench:churn')
const server = await startServerProcess([], { command: process.execPath, args: ['--heapsnapshot-signal=SIGUSR2', 'server.js', '--port', '0'], cpus: '0' })
const test = resolveTest(5)
const codec = await createCodec('protobuf', test)
const frame = codec.encode(codec.prepare(loadPayload(test)))

/** One short connection: open, one message, its ACK, close; resolves once closed. */
function short () {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${server.url}/?test=${test.name}&format=protobuf`)
    ws.once('open', () => ws.send(frame))
    ws.once('message', () => ws.close())
    ws.once('close', resolve)
    ws.once('error', reject)
  })
}

/** The server's open connections, heap in use and resident memory, from its /metrics. */
async function metrics () {
  const metrics = await readMetrics(server.url)
  return {
    open: metrics.value('wsbench_open_connections'),
    heap: metrics.value('nodejs_heap_size_used_bytes'),
    rss: metrics.value('process_resident_memory_bytes')
  }
}

/** Once the server has closed every connection and collected its garbage: its files, heap and memory. */
async function settled (connections) {
  let seen = await metrics()
  for (let tries = 0; seen.open > 0 && tries < 500; tries++) seen = await metrics()
  // The snapshot is written on the server's main thread: the next /metrics is answered after it.
  process.kill(server.child.pid, 'SIGUSR2')
  seen = await metrics()
  for (const file of fs.readdirSync(PROJECT_ROOT).filter((name) => name.startsWith('Heap.') && name.includes(`.${server.child.pid}.`))) {
    fs.rmSync(path.join(PROJECT_ROOT, file))
  }
  const mb = (bytes) => (bytes / 2 ** 20).toFixed(1)
  return [String(connections), String(fs.readdirSync(`/proc/${server.child.pid}/fd`).length), mb(seen.heap), mb(seen.rss)]
}

const columns = ['connections so far', 'server open files', 'server heap used MB', 'server RSS MB']
const rows = []
try {
  await short() // what the server keeps for good: the codec, the test's messages
  rows.push(await settled(1))
  for (let round = 1; round <= ROUNDS; round++) {
    for (let done = 0; done < PER_ROUND; done += AT_ONCE) await Promise.all(Array.from({ length: Math.min(AT_ONCE, PER_ROUND - done) }, short))
    rows.push(await settled(1 + round * PER_ROUND))
  }
} finally {
  await server.stop()
}
printRow(columns)
for (const row of rows) printRow(row)
results.write({
  columns,
  rows,
  notes: [`one server process (CPU 0); rounds of ${PER_ROUND} short connections (test 5 in protobuf: open, one message, its ACK, close), ${AT_ONCE} at a time; ` +
    'each row once the server counted no open connection, its heap read after a full garbage collection (a heap snapshot\'s, --heapsnapshot-signal)']
})
