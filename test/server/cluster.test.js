// startCluster in this process (the test is the cluster's primary): real worker processes on one
// port, real connections, counters and metrics summed over IPC.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import cluster from 'node:cluster'
import net from 'node:net'
import { startCluster } from '../../lib/server/cluster.js'
import { readMetrics } from '../../lib/server/metrics-reader.js'
import { UsageError } from '../../lib/errors.js'
import { DEFAULT_MAX_CONNECTIONS } from '../../lib/defaults.js'
import { openConnection } from '../helpers.js'

const OPTIONS = { host: '127.0.0.1', port: 0, maxConnections: DEFAULT_MAX_CONNECTIONS }
const workerPids = () => Object.values(cluster.workers).map((worker) => worker.process.pid)

test('two worker processes on one port: every message answered, counters and /metrics summed, 1001 on close', async () => {
  const lines = []
  const server = await startCluster({ ...OPTIONS, processes: 2, log: (line) => lines.push(line) })
  const pids = workerPids()
  assert.equal(pids.length, 2)
  assert.match(server.url, /^ws:\/\/127\.0\.0\.1:\d+$/)
  const connections = await Promise.all(Array.from({ length: 8 }, () => openConnection(`${server.url}/?test=5&format=json`)))
  for (const { ws, nextReply } of connections) {
    ws.send('{"id":1,"status":"ok"}')
    assert.equal(await nextReply(), 'ACK')
  }
  const metrics = await readMetrics(server.url)
  assert.equal(metrics.value('wsbench_messages_total'), 8)
  assert.ok(metrics.value('wsbench_codec_seconds_total') > 0, 'the workers\' codec time, summed')
  assert.equal(metrics.value('wsbench_connections_total'), 8)
  assert.equal(metrics.value('wsbench_open_connections'), 8)
  assert.ok(metrics.value('process_cpu_seconds_total') > 0)

  const closed = connections.map(({ closed }) => closed)
  await server.close()
  assert.deepEqual(await Promise.all(closed), Array(8).fill(1001))
  assert.equal(server.stats.totalConnections, 8)
  assert.deepEqual(server.stats.totals(), { messages: 8, errors: 0, deliveries: 0 })
  assert.ok(server.stats.forTarget('json', 'small').codecMs > 0, 'codec time summed from the workers\' snapshots')
  assert.equal(server.stats.processes, 3, 'the workers and the primary')
  assert.match(server.stats.countsLine(), /summed over 3 processes$/)
  for (const pid of pids) assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `worker ${pid} is gone`)
  assert.deepEqual(lines, [], 'no summary line in a run shorter than one interval')
})

test('a worker that dies is reported through lost; the others still close', async () => {
  const server = await startCluster({ ...OPTIONS, processes: 2 })
  const [victim, survivor] = workerPids()
  process.kill(victim, 'SIGKILL')
  assert.equal(await server.lost, `server process ${victim} exited with SIGKILL`)
  await server.close()
  assert.throws(() => process.kill(survivor, 0), { code: 'ESRCH' })
})

test('a port that is taken: one UsageError, and no worker left behind', async () => {
  const taken = net.createServer()
  await new Promise((resolve) => taken.listen(0, '127.0.0.1', resolve))
  try {
    await assert.rejects(startCluster({ ...OPTIONS, port: taken.address().port, processes: 2 }),
      (err) => err instanceof UsageError && /^cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE$/.test(err.message))
    await Promise.all(Object.values(cluster.workers).map((worker) => new Promise((resolve) => worker.once('exit', resolve))))
    assert.deepEqual(workerPids(), [])
  } finally {
    taken.close()
  }
})
